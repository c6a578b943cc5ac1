#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# bench/vm/probe-peers.sh: in a stock-kernel VM chrooted into the host's /
# (scripts/hostroot.sh; bench/probe-peers.sh boots it), the cost of one
# probe hit on the traced thread for ktrace and its peers, and what each
# loses in a burst with 384 KiB of buffer a CPU.  Prints
#   RAW ROUND TOOL NS_PER_CALL BASELINE_NS_PER_CALL   (the traced thread's CPU time)
#   LOST TOOL HITS_RECORDED LOST_AS_REPORTED UNIT HITS_MADE WRONG_VALUES
# for the host to reduce.  Environment (kernel command line): bench_dir
# (probe-bench, ktrace.ko), bench_tools (build/tools), bench_part (cost,
# lost or both), bench_rounds, bench_calls, bench_burst (calls a process
# in the burst, one a CPU), bench_peers (the cost part's tools, comma
# separated; default all of $peers below).
set -u
dir=${bench_dir:?} tools=${bench_tools:?} part=${bench_part:-cost lost}
rounds=${bench_rounds:-5} calls=${bench_calls:-10000} burst=${bench_burst:-20000}
pb=$dir/probe-bench
T=/sys/kernel/tracing
w=/tmp/pp
mkdir -p $w
say() { echo "bench: $*"; }
fail() { echo "bench: $*"; echo "@@BENCH-DONE@@"; exit 1; }

insmod "$dir/ktrace.ko" || fail "insmod ktrace.ko"
# perf probe, resolving the fields through the program's DWARF as a user
# would; the tracefs events copy its fetch args (the same chain by offsets)
perf probe -q -x "$pb" -a 'ppeer=bench_probed a b n->next->next->val' 2>$w/perf-probe.err ||
	fail "perf probe: $(cat $w/perf-probe.err)"
def=$(grep '/ppeer ' $T/uprobe_events | head -n 1)
[ -n "$def" ] || fail "no perf probe in uprobe_events: $(cat $T/uprobe_events)"
pgroup=$(echo "$def" | sed 's/^p:\([^/]*\)\/.*/\1/')
say "perf probe: $def"
loc=$(echo "$def" | awk '{ print $2 }') args=$(echo "$def" | cut -d' ' -f3-)
printf 'p:ktbench/bare %s\np:ktbench/chain %s %s\n' "$loc" "$loc" "$args" >>$T/uprobe_events ||
	fail "tracefs uprobe_events refuses: p:ktbench/chain $loc $args"

spec="$pb:bench_probed"
chain="n.next.next.val"
# struct node of bench/vm/probe-bench.c, for bpftrace's casts
bt_node='struct node { struct node *next; int val; }'
bt_chain='((struct node *)arg2)->next->next->val'

# the LOOP line's CPU time a call
cpu_ns() { awk '$1 == "LOOP" { print $3 }'; }
loop() { "$pb" loop "$@" | cpu_ns; }
ftrace_on() {	# EVENT: enabled, read by cat trace_pipe into $w/ftrace.txt
	echo > $T/trace
	echo 1 >$T/events/$1/enable
	cat $T/trace_pipe >$w/ftrace.txt & reader=$!
}
ftrace_off() {
	echo 0 >$T/events/$1/enable
	sleep 0.5; kill $reader; wait $reader 2>/dev/null
}
# run TOOL CALLS PROCS: one run of the loop, probed as TOOL; prints ns a call
run() {
	local tool=$1 n=$2 procs=$3
	case $tool in
	none)		loop $n $procs ;;
	floor)		loop $n $procs ktrace_masked ;;
	tracefs_bare)	ftrace_on ktbench/bare; loop $n $procs; ftrace_off ktbench/bare ;;
	tracefs_chain)	ftrace_on ktbench/chain; loop $n $procs; ftrace_off ktbench/chain ;;
	ktrace_regs)	"$tools/ktrace" -e probe -b 16384 -o $w/kt -P "$spec a b" -- \
				"$pb" loop $n $procs 2>$w/ktrace.err | cpu_ns ;;
	ktrace_none)	"$tools/ktrace" -e probe -b 16384 -o $w/kt -P "$spec" -- \
				"$pb" loop $n $procs 2>$w/ktrace.err | cpu_ns ;;
	ktrace_chain)	"$tools/ktrace" -e probe -b 16384 -o $w/kt -P "$spec a b $chain" -- \
				"$pb" loop $n $procs 2>$w/ktrace.err | cpu_ns ;;
	perf_chain)	perf record -m 512K -e "$pgroup:ppeer" -o $w/perf.data -- \
				"$pb" loop $n $procs 2>$w/perf.err | cpu_ns ;;
	bpftrace_map)	bpftrace -o $w/bt.out -e "$bt_node; uprobe:\"$pb\":bench_probed { @hits[arg1, $bt_chain] = count(); @a = sum(arg0); }" \
				-c "$pb loop $n $procs" 2>$w/bt.err | cpu_ns ;;
	bpftrace_printf) BPFTRACE_PERF_RB_PAGES=128 bpftrace -o $w/bt.out \
				-e "$bt_node; uprobe:\"$pb\":bench_probed { printf(\"%ld %ld %d\\n\", arg0, arg1, $bt_chain); }" \
				-c "$pb loop $n $procs" 2>$w/bt.err | cpu_ns ;;
	esac
}

echo 384 >$T/buffer_size_kb
peers="floor tracefs_bare ktrace_none ktrace_regs ktrace_chain tracefs_chain perf_chain bpftrace_map bpftrace_printf"
if [ -n "${bench_peers:-}" ]; then
	for t in ${bench_peers//,/ }; do
		[[ " $peers " == *" $t "* ]] || fail "bench_peers: no tool $t (tools: $peers)"
	done
	peers=${bench_peers//,/ }
fi
[[ $part == *cost* ]] && say "$(uname -r), $(nproc) CPUs, $rounds rounds of $calls calls: $peers"
[[ $part == *cost* ]] && for r in $(seq "$rounds"); do
	for t in $peers; do
		base=$(run none $calls 1)
		ns=$(run $t $calls 1)
		[ -n "$ns" ] || { say "$t: no result: $(tail -n 3 $w/*.err 2>/dev/null)"; continue; }
		echo "RAW $r $t $ns $base"
	done
done

# The burst: every CPU calls the function $burst times at once.  What each
# tool says it lost, and what it recorded, against the calls made.
[[ $part == *lost* ]] || { echo "@@BENCH-DONE@@"; exit 0; }
procs=$(nproc) made=$((procs * burst))
say "burst: $procs processes x $burst calls, 384 KiB a CPU (perf, bpftrace: 512 KiB, powers of two)"
# tally PATTERN: the hits among the lines that match, and how many of them
# do not end with b and the chain's value as probe-bench passed them (2 42)
tally() {
	awk -v pat="$1" '$0 ~ pat { n++; b = $(NF - 1); v = $NF; sub(/.*=/, "", b); sub(/.*=/, "", v)
		if (b != 2 || v != 42) bad++ } END { print n + 0, bad + 0 }'
}
run ktrace_chain $burst $procs >/dev/null
read -r rec bad < <("$tools/dtrace" -e probe $w/kt.* 2>/dev/null | tally 'probe:bench_probed')
lost=$(sed -n 's/.* records, \([0-9]*\) lost,.*/\1/p' $w/ktrace.err | tail -n 1)
echo "LOST ktrace $rec ${lost:-?} records $made $bad"
run tracefs_chain $burst $procs >/dev/null
read -r rec bad < <(tally 'chain:' <$w/ftrace.txt)
lost=$(cat $T/per_cpu/cpu*/stats | awk '/^(overrun|dropped events):/ { s += $NF } END { print s + 0 }')
echo "LOST ftrace $rec $lost events $made $bad"
run perf_chain $burst $procs >/dev/null
read -r rec bad < <(perf script -i $w/perf.data 2>/dev/null | tally ppeer)
# PERF_RECORD_LOST(_SAMPLES) in the dump: "... lost:N" (the samples lost)
lost=$(perf report -D -i $w/perf.data 2>/dev/null | sed -n '/PERF_RECORD_LOST/s/.*lost[: ] *\([0-9][0-9]*\).*/\1/p' |
	awk '{ s += $1 } END { print s + 0 }')
echo "LOST perf $rec $lost samples $made $bad"
say "perf record said: $(tr '\n' ' ' <$w/perf.err | cut -c1-300)"
run bpftrace_printf $burst $procs >/dev/null
read -r rec bad < <(tally '^[0-9]+ ' <$w/bt.out)
lost=$(cat $w/bt.out $w/bt.err | sed -n 's/.*Lost \([0-9]*\) events.*/\1/p' | awk '{ s += $1 } END { print s + 0 }')
echo "LOST bpftrace $rec $lost events $made $bad"
say "bpftrace said: $(grep -v '^[0-9]' $w/bt.out $w/bt.err | tr '\n' ' ' | cut -c1-300)"
echo "@@BENCH-DONE@@"
