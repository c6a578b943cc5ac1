/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ktrace: names and print formats of the groups and events.
 *
 * Not a header of its own: a table for tools to include after defining
 *
 *	KTRACE_GROUP(group)
 *	KTRACE_EVENT(group, name, nr_cont, format)
 *
 * The codes are KTRACE_GRP_<group> and KTRACE_<group>_<name> from
 * <linux/ktrace.h>, so an entry without a code does not compile.
 * @nr_cont is how many continuation records follow the event.  @format
 * prints the arguments in order (arg1, arg2, then two per continuation
 * record) with %u, %d and %x for one argument and %llx and %llu for two,
 * low word first, and with conversions that decode what the number means:
 *
 *   %S  x86_64 system call number: its name, "getppid" (%u if unknown)
 *   %E  system call return value: -4095..-1 as the errno name, "-ENOENT"
 *       (the number if it has none), anything else as %d
 *   %G  signal number: "SIGKILL" (1-31; %u otherwise)
 *   %Q  softirq vector: "TIMER", as ftrace names them (%u if unknown)
 *   %F  page fault flags, KTRACE_FAULT_*: "user|write", "kernel|read"
 *       (read: not a write); unknown bits follow as "|0x4"
 *   %W  a task's state as the kernel's sched_switch tracepoint reports it:
 *       "R" (0), the TASK_REPORT bits as "S", "D", "T", "t", "X", "Z",
 *       "P", "I" joined by "|", "R+" for TASK_REPORT_MAX (preempted);
 *       unknown bits follow as "|0x200"
 *   %I  irq number, with the names of its handlers where the trace has
 *       BASE.irqs (/proc/interrupts): "24 (virtio0-input.0)"
 *   %K  kernel code address, two arguments: "tick_sched_timer+0x0" where
 *       the trace has BASE.kallsyms (/proc/kallsyms), else as %llx
 *   %T  thread id: "comm-tid" with the name the task had then, from the
 *       trace's thread:name events ("<...>-tid" if it has none)
 *   %s  the remaining arguments as a NUL-padded string, four bytes an
 *       argument, little-endian (as an x86 kernel copies a char array)
 *
 * The names of %S, %E, %G and %Q come from the kernel source
 * (scripts/gen-names.py).  Printed raw (dtrace --raw), each decoding
 * conversion prints its number as the one in parentheses: %S %G %Q %I %T
 * as %u, %E as %d, %F %W as %x, %K as %llx.  A format has at most one %I or %K.
 */
KTRACE_GROUP(sched)
KTRACE_GROUP(thread)
KTRACE_GROUP(fault)
KTRACE_GROUP(irq)
KTRACE_GROUP(softirq)
KTRACE_GROUP(syscall)
KTRACE_GROUP(net)
KTRACE_GROUP(block)
KTRACE_GROUP(fs)
KTRACE_GROUP(signal)
KTRACE_GROUP(timer)
KTRACE_GROUP(user)
KTRACE_GROUP(func)
KTRACE_GROUP(mm)
KTRACE_GROUP(ipc)
KTRACE_GROUP(lock)
KTRACE_GROUP(power)
KTRACE_GROUP(workqueue)
KTRACE_GROUP(probe)

KTRACE_EVENT(sched,   switch,   1,
	     "context switch from task %T to task %T, prev state %W, next prio %d")
KTRACE_EVENT(sched,   wakeup,   0, "wakeup of task %T on cpu %u")
KTRACE_EVENT(sched,   migrate,  0, "migrate task %T to cpu %u")
KTRACE_EVENT(thread,  fork,     0, "fork: task %T created task %u")
KTRACE_EVENT(thread,  exec,     0, "exec by task %T (old tid %u)")
KTRACE_EVENT(thread,  exit,     0, "exit of task %T, code %d")
KTRACE_EVENT(thread,  name,     2, "task %u of process %u is named %s")
KTRACE_EVENT(fault,   page,     1, "page fault by task %T, flags %F at %llx")
KTRACE_EVENT(fault,   trap,     0, "trap %u, error code %x")
KTRACE_EVENT(irq,     entry,    0, "irq %I entry, vector %u")
KTRACE_EVENT(irq,     exit,     0, "irq %I exit, vector %u")
KTRACE_EVENT(irq,     nmi,      1, "nmi on cpu %u, back-to-back %u, at %K")
KTRACE_EVENT(softirq, entry,    0, "softirq %Q entry")
KTRACE_EVENT(softirq, exit,     0, "softirq %Q exit")
KTRACE_EVENT(softirq, raise,    0, "softirq %Q raised")
KTRACE_EVENT(syscall, entry,    0, "syscall %S entry, arg0 %x")
KTRACE_EVENT(syscall, exit,     0, "syscall %S exit, return %E")
KTRACE_EVENT(net,     xmit,     0, "transmit %u bytes on ifindex %u")
KTRACE_EVENT(net,     recv,     0, "receive %u bytes on ifindex %u")
KTRACE_EVENT(block,   issue,    1, "block issue dev %x, %u bytes at sector %llu")
KTRACE_EVENT(block,   complete, 1, "block complete dev %x, %u bytes at sector %llu")
KTRACE_EVENT(signal,  deliver,  0, "signal %G delivered to task %T")
KTRACE_EVENT(timer,   expire,   1, "timer expired, flags %x, cpu %u, function %K")
KTRACE_EVENT(user,    mark,     0, "user mark %u %u")
KTRACE_EVENT(func,    entry,    1, "enter %llx from %llx")
KTRACE_EVENT(func,    exit,     0, "exit %llx")
KTRACE_EVENT(func,    enter,    1, "enter fn_lo %x hi %x site_lo %x sp %x")
KTRACE_EVENT(func,    leave,    0, "leave fn_lo %x sp %x")
