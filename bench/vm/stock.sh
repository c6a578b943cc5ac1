#!/bin/sh
# SPDX-License-Identifier: GPL-2.0
#
# bench/vm/stock.sh: bench/stock.sh's part inside the VM (kt_run=), on a
# stock kernel with ktrace.ko, ftrace (trace-cmd), perf and, when present,
# LTTng-modules.  The same tracepoints for every tracer: sched_switch,
# sched_wakeup, sched_migrate_task, and system call entry and exit; every
# tracer records to files in /tmp (tmpfs).  Prints lines the host parses:
#   RAW ROUND TRACER WORKLOAD NS BASE_NS [RECORDS]
#        (BASE_NS: the untraced run just before; RECORDS: ktrace's count)
#   LOST TRACER N KIB                        (fixed-rate flood, KIB a CPU)
W=/bench/stock-work
R=${bench_rounds:-3}
PART=${bench_part:-cost lost}		# bench/stock.sh boots once for each
SYSCALLS=${bench_syscalls:-100000}
PINGPONG=${bench_pingpong:-5000}
FLOOD=${bench_flood:-100000}
LOST_KB=${bench_lost_kb:-384 96}	# KiB a CPU for each lost-event test
# Buffer memory a CPU: KIB for ktrace and ftrace, the next power of two
# for perf and LTTng (they need one).
set_memory() {
	local p2=4
	while [ $p2 -lt $1 ]; do p2=$((p2 * 2)); done
	KT_RECS=$(($1 * 1024 / 24)) FT_KB=$1
	PERF_PAGES=$((p2 / 4)) LT_SUBBUF=$((p2 / 4))k LT_NSUB=4
}
set_memory 384				# the cost runs
T=/tmp/bench
mkdir -p $T
export PATH=/bench/bin:$PATH LD_LIBRARY_PATH=/bench/lib
insmod /bench/ktrace.ko || echo "bench: insmod ktrace.ko failed"
# ktrace_whole: ktrace with a buffer that holds the whole run (24 MiB a
# CPU), read after it: what writing the records costs, without reading
# them out (the cost runs only)
TRACERS="none ktrace ktrace_whole ftrace perf"
if [ -d /lib/modules/$(uname -r)/extra ] && command -v lttng-sessiond >/dev/null; then
	mkdir -p /var/run /var/lib /root /dev/shm
	# LTTng's shared memory objects (shm_open) live in /dev/shm
	mountpoint -q /dev/shm || mount -t tmpfs -o mode=1777 shm /dev/shm
	# lttng-sessiond waits for the kernel's random pool, which a VM with
	# no entropy source fills only when asked: a read of /dev/random does.
	head -c 1 /dev/random >/dev/null
	lt_ok=false
	# -b: a daemon that keeps writing to the log
	if lttng-sessiond -b -vv --kmod-probes=sched >$T/sessiond.log 2>&1; then
		for i in 1 2 3 4 5 6 7 8 9 10; do
			sleep 1
			lttng list -k >$T/list.log 2>&1 && { lt_ok=true; break; }
		done
	fi
	if $lt_ok; then
		TRACERS="$TRACERS lttng"
	else
		echo "bench: LTTng-modules not usable; lttng-sessiond said:"
		grep -vE 'DBG[0-9]' $T/sessiond.log | sed 's/^/# lttng-sessiond: /' | head -n 40
		grep -iE 'signal|quit|kernel tracer|kernel consumer|error' $T/sessiond.log | head -n 20 | sed 's/^/# lttng-sessiond: /'
		sed 's/^/# lttng list -k: /' $T/list.log
		lsmod | grep lttng | sed 's/^/# lsmod: /'
		dmesg | grep -i lttng | tail -n 10 | sed 's/^/# dmesg: /'
	fi
fi
echo "bench: tracers $TRACERS on $(uname -r)"

ftrace_ev="-e sched:sched_switch -e sched:sched_wakeup -e sched:sched_migrate_task -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit"
perf_ev="-e sched:sched_switch -e sched:sched_wakeup -e sched:sched_migrate_task -e raw_syscalls:sys_enter -e raw_syscalls:sys_exit"

# "EVENTS LOST": records ktrace.ko wrote plus those it dropped, and dropped
kt_written() { ktrace -s | awk '$2 == "online" || $2 == "offline" { w += $5; l += $6 } END { print w + l, l + 0 }'; }

# run TRACER WORKLOAD N: the workload's ns on stdout (last line)
run() {
	rm -rf $T/out*; sync
	case $1 in
	none)	$W $2 $3 ;;
	ktrace_whole)
		ktrace -q -b 1048576 >/dev/null
		ktrace -q -w 1000000 -e sched,syscall -c all -o $T/out -- $W $2 $3 ;;
	ktrace)	ktrace -q -b $KT_RECS >/dev/null
		ktrace -q -e sched,syscall -c all -o $T/out -- $W $2 $3 ;;
	ftrace)	trace-cmd record -b $FT_KB $ftrace_ev -o $T/out.dat $W $2 $3 >$T/ft.log 2>&1
		grep -E '^[0-9]+$' $T/ft.log | tail -n 1 ;;
	perf)	perf record -m $PERF_PAGES -a $perf_ev -o $T/out.data -- $W $2 $3 2>$T/perf.err ;;
	lttng)	lttng -q create b --output=$T/out >/dev/null
		lttng -q enable-channel -k c --subbuf-size=$LT_SUBBUF --num-subbuf=$LT_NSUB >/dev/null
		lttng -q enable-event -k -c c sched_switch,sched_wakeup,sched_migrate_task >/dev/null
		lttng -q enable-event -k -c c --syscall -a >/dev/null
		lttng -q start
		$W $2 $3
		lttng stop >$T/lt.log 2>&1; lttng -q destroy >/dev/null ;;
	esac
}

case " $PART " in *" cost "*) ;; *) R=0 ;; esac
# Each traced run right after an untraced one, its baseline: the host's
# speed drifts by tens of percent within seconds, more than a tracer adds
# to the ping-pong.
for round in $(seq $R); do
	for tr in $TRACERS; do
		[ $tr = none ] && continue
		for wl in syscalls pingpong; do
			n=$SYSCALLS; [ $wl = pingpong ] && n=$PINGPONG
			base=$(run none $wl $n | tail -n 1)
			ns=$(run $tr $wl $n | tail -n 1)
			recs=
			[ $tr = ktrace ] && recs=$(kt_written | cut -d' ' -f1)
			echo "RAW $round $tr $wl $ns $base $recs"
		done
	done
done

# Lost events: the flood on every CPU, each tracer with each memory size.
case " $PART " in *" lost "*) ;; *) LOST_KB= ;; esac
for kb in $LOST_KB; do
set_memory $kb
for tr in $TRACERS; do
	case $tr in none|ktrace_whole) continue ;; esac
	run $tr flood $FLOOD >/dev/null
	case $tr in
	ktrace)	lost=$(kt_written | cut -d' ' -f2); fired=$(kt_written | cut -d' ' -f1) ;;
	# trace-cmd record ends with "CPU N: COUNT events lost" per CPU
	ftrace)	lost=$(awk '/^CPU [0-9]+: [0-9]+ events lost/ { s += $3 } END { print s + 0 }' $T/ft.log) ;;
	# perf record counts samples, not what it dropped: the flood fired
	# as many events as ktrace.ko saw in its run, less perf's samples
	perf)	samples=$(sed -n 's/.*(\([0-9][0-9]*\) samples).*/\1/p' $T/perf.err | tail -n 1)
		lost=$(( ${fired:-0} - ${samples:-0} )); [ $lost -ge 0 ] || lost=0 ;;
	lttng)	lost=$(sed -n 's/.*Warning: \([0-9][0-9]*\) events were discarded.*/\1/p' $T/lt.log | awk '{ s += $1 } END { print s + 0 }') ;;
	esac
	echo "LOST $tr $lost $kb"
	[ $tr = ktrace ] && ktrace -s | sed "s/^/# ktrace ${kb}k: /"
	[ $tr = ftrace ] && grep -E '^CPU' $T/ft.log | sed "s/^/# ftrace ${kb}k: /" | head -n 12
	[ $tr = perf ] && sed "s/^/# perf ${kb}k: /" $T/perf.err | tail -n 5
	[ $tr = lttng ] && sed "s/^/# lttng ${kb}k: /" $T/lt.log | tail -n 5
done
done
echo "@@BENCH-DONE@@"
