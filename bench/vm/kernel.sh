#!/bin/sh
# In the VM (bench/kernel.sh boots it): the cost of one TRACE() as the
# kernel measures it (/sys/kernel/debug/ktrace/benchmark) with tracing off,
# with the group filtered out and recording; ftrace's tracepoint benchmark
# (CONFIG_TRACEPOINT_BENCHMARK) as the peer; recording in overwrite mode
# (the flight recorder); and a getppid() loop with tracing off and on.  Medians of RUNS runs.  Prints BENCH lines.
RUNS=5
LOOPS=200000
B=/sys/kernel/debug/ktrace/benchmark
T=/sys/kernel/tracing

median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

# ns per TRACE() in the state ktrace was left in: median of RUNS runs
trace_ns() {
	i=0
	while [ $i -lt $RUNS ]; do
		echo $LOOPS >$B
		sed 's/.*ns_per_event //' $B
		i=$((i + 1))
	done | median
}

if [ -w $B ]; then
	ktrace -q -e 0
	ktrace -q -b 1048576
	echo "BENCH kernel_trace_off $(trace_ns) ns"
	ktrace -q -e sched
	echo "BENCH kernel_trace_filtered $(trace_ns) ns"
	ktrace -q -e user
	echo "BENCH kernel_trace_on $(trace_ns) ns"
	ktrace -q -e 0
	# overwrite mode (ktrace --flight), a ring that wraps three times a
	# run: each TRACE() also frees the oldest event's room
	ktrace -q -b 65536
	ktrace -q --flight -e user -o /tmp/flight &
	sleep 1
	echo "BENCH kernel_trace_overwrite $(trace_ns) ns"
	kill -INT $!
	wait
	ktrace -q -e 0
fi

if [ -d $T/events/benchmark ]; then
	echo > $T/trace
	echo 1 > $T/events/benchmark/benchmark_event/enable
	sleep 4
	echo 0 > $T/events/benchmark/benchmark_event/enable
	# the benchmark's own running statistics: avg= in ns, last line wins
	avg=$(grep -o 'avg=[0-9]*' $T/trace | tail -n 1 | cut -d= -f2)
	echo "BENCH ftrace_tracepoint_benchmark ${avg:-0} ns"
fi

if [ -w $B ]; then
	ktrace -q -e 0
	syscall-bench syscall_ktrace_off
	# recording for real: ktrace drains every CPU meanwhile
	ktrace -q -e syscall -c all -o /tmp/syscalls &
	sleep 1
	syscall-bench syscall_ktrace_on
	kill -INT $!
	wait
	ktrace -q -e 0
else
	syscall-bench syscall_no_ktrace
fi
