#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# A short fuzz run of each fuzz target (tests/fuzz/run.sh): the trace file
# reader, dtrace's map file parser, the escaping of trace strings for each
# output, the call reconstruction with the call views and export on it,
# ktrace-run's ring ingestion, the formats on kernel streams (text with
# kallsyms, irq and task names, summary, CTF, Perfetto), the parallel pipeline against -j 1, the ELF/DWARF
# symbolizer and the kernel's user-event write() against its model.  Each
# passes if the sanitizers and the target's own checks found nothing.  The
# long run: tests/fuzz/run.sh 600.  FUZZ_SECONDS sets the time per target
# (default 20; half of it for the later targets, so that the whole test
# stays under 3 minutes on 2 CPUs).
cd "$(dirname "$0")/../.." || exit 1
. tests/lib/tap.sh
for t in ktfile maps escape calls ring kformats pipeline symbols uevent; do
	secs=${FUZZ_SECONDS:-20}
	case $t in
	ring|kformats|pipeline|symbols|uevent) secs=$(((secs + 1) / 2)) ;;
	esac
	out=$(tests/fuzz/run.sh "$secs" $t 2>&1)
	rc=$?
	if [ $rc -eq 77 ]; then
		skip "fuzz $t" "$out"
	elif [ $rc -eq 0 ]; then
		ok 0 "fuzz $t: $(echo "$out" | grep -o 'Done [0-9]* runs.*')"
	else
		ok $rc "fuzz $t (crash input in $O/fuzz/$t/)" "$(echo "$out" | tail -n 30)"
	fi
done
done_testing
