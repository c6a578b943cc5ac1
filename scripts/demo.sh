#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
#
# demo.sh (make demo): install what is missing, build the tools and the
# patched kernel, boot it under QEMU, trace a real workload with
# `ktrace -e all -c all -- demo/workload.sh`, and show what dtrace makes of
# it: the summary, the first lines of the merged trace, and the paths of
# the trace files, a call graph and a Perfetto file.
set -euo pipefail
cd "$(dirname "$0")/.."

out=build/demo
msg() { echo "ktrace demo: $*"; }
die() { echo "ktrace demo: $*" >&2; exit 1; }
# Any other failure says which command failed, and where to look.
log_hint="the messages above"
trap 'die "failed (exit $?): $BASH_COMMAND (scripts/demo.sh line $LINENO); see $log_hint"' ERR

case $(pwd) in
*[[:space:]]*) die "$(pwd): the checkout's path has white space, which the VM's initramfs list cannot carry; clone it to a path without" ;;
esac

scripts/deps.sh
msg "building the tools"
make -s tools
top=$PWD
KCONFIG=vm
. scripts/kver.sh
log_hint="${kver_objdir#"$top"/}/build.log"
make -s kernel KCONFIG=vm
log_hint="the messages above"
make -s initramfs >/dev/null

mkdir -p "$out"
msg "building demo/demo-app with -finstrument-functions and libktrace"
${CC:-cc} -static -O1 -g -finstrument-functions -Iuser -Iinclude/uapi \
	-o "$out/demo-app" demo/demo-app.c build/tools/libktrace.a -pthread
# In the VM the demo's files sit where they are here, so that dtrace finds
# demo-app by the path its memory map recorded.
vmdir=$(pwd)/$out/vm
rm -rf "$vmdir"
mkdir -p "$vmdir"
cp demo/run.sh demo/workload.sh "$out/demo-app" "$vmdir/"
scripts/mkextra-initramfs.sh "$out/initramfs.cpio" "${vmdir#/}" "$vmdir"/*

msg "booting the patched kernel (QEMU, 4 vCPUs, software emulation) and tracing the workload"
log_hint="$out/console.log"
start=$SECONDS
scripts/vmboot.sh vm "$out/initramfs.cpio" "$vmdir/run.sh" "$out/console.log" ||
	die "the VM did not finish; see $out/console.log"
msg "VM done in $((SECONDS - start))s; the workload's output:"
sed -n '/^demo: ktrace/,/^demo: workload exited/p' "$out/console.log" | tr -d '\r' |
	sed '/^ktrace: /d; s/^/    /'
grep -q '^demo: workload exited with 0' "$out/console.log" ||
	msg "warning: the workload or ktrace did not exit 0 in the VM; see $out/console.log"

rm -rf "$out/trace"
mkdir -p "$out/trace"
sed -n '/^@@DEMO-FILES-BEGIN@@/,/^@@DEMO-FILES-END@@/p' "$out/console.log" | tr -d '\r' |
	sed '1d;$d' | base64 -d | tar -xzf - -C "$out/trace" --strip-components=1 ||
	die "no trace files came back; see $out/console.log"

dtrace=build/tools/dtrace
echo
"$dtrace" -S "$out"/trace/trace.*
echo
# the first wget's process, as the trace names it ("... is named wget")
wget=$({ "$dtrace" -e thread "$out"/trace/trace.* || true; } |
	awk '$4 == "thread:name" && $NF == "wget" { print $(NF - 3); exit }')
if [ -n "$wget" ]; then
	echo "wget (process $wget) from its exec: names, system calls, packets, context"
	echo "switches (dtrace -p $wget -e sched,thread,syscall,net $out/trace/trace.*):"
	{ "$dtrace" -p "$wget" -e sched,thread,syscall,net "$out"/trace/trace.* || true; } |
		awk '/syscall execve entry/ { on = 1 } on { print; if (++n == 30) exit }'
else
	echo "(the trace names no wget: see $out/console.log)"
fi
echo
worker=$(ls "$out"/trace | sed -n 's/.*\.tid\([0-9]*\)$/\1/p' | sort -n | sed -n 2p)
echo "A demo-app thread's calls, with its context switches and user events"
echo "(dtrace --calltree -e func,user,sched -t $worker):"
{ "$dtrace" --calltree -e func,user,sched -t "$worker" "$out"/trace/trace.* || true; } | head -n 24
"$dtrace" --callgraph -o "$out/callgraph.dot" "$out"/trace/trace.*
"$dtrace" --format=perfetto -o "$out/trace.perfetto" "$out"/trace/trace.*
echo
msg "trace files:  $out/trace/ ($(ls "$out"/trace | wc -l) files: per CPU, and per thread of demo-app)"
msg "call graph:   $out/callgraph.dot   (dot -Tsvg $out/callgraph.dot -o callgraph.svg)"
msg "Perfetto:     $out/trace.perfetto (open it in ui.perfetto.dev: CPU tracks, threads, calls)"
msg "again:        dtrace -e sched,thread $out/trace/trace.*   (dtrace --help for more)"
