#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
# The test VM itself: 4 CPUs online, the /proc files the count tests read,
# and ftrace's sched_switch event for the cross-checks.
. "$(dirname "$0")/lib/tap.sh"
check "/proc/stat has ctxt and processes" "grep -q '^ctxt ' /proc/stat && grep -q '^processes ' /proc/stat"
check "/proc/vmstat has pgfault" "grep -q '^pgfault ' /proc/vmstat"
check "/proc/interrupts and /proc/softirqs exist" "grep -q CPU0 /proc/interrupts && grep -q CPU0 /proc/softirqs"
check "4 CPUs online" "[ \"\$(cat /sys/devices/system/cpu/online)\" = 0-3 ]"
check "tracefs has events/sched/sched_switch" "[ -d /sys/kernel/tracing/events/sched/sched_switch ]"
check "tracepoint benchmark event exists" "[ -d /sys/kernel/tracing/events/benchmark ]"
check "loopback is up" "ip link show lo | grep -q UP"
check "running as root" "[ \"\$(id -u)\" = 0 ]"
done_testing
