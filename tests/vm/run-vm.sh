#!/bin/sh
# ktrace: in-VM test runner, started by /init.  Runs every test in /tests
# (executables named NN-name or NN-name.sh, alphabetical) from /tmp, each
# under a timeout, framing its output (stdout and stderr) with markers the
# host (scripts/vmtest.sh) turns into build/results/vm-CONFIG-NAME.tap:
#   @@TAP-BEGIN NAME@@ ... @@TAP-END NAME rc=STATUS@@
# kt_tests=a,b (from the kernel command line) runs only those tests;
# kt_timeout=SECONDS is the per-test limit (default 300).
cd /tests || exit 1
for t in [0-9]*; do
	[ -f "$t" ] && [ -x "$t" ] || continue
	name=${t%.sh}
	if [ -n "${kt_tests:-}" ]; then
		case ",$kt_tests," in *",$name,"*) ;; *) continue ;; esac
	fi
	# so that a splat in dmesg names the test that was running (level 6:
	# kept off the console, where it would break into the markers)
	echo "<6>ktrace-vm: test $name" >/dev/kmsg
	echo "@@TAP-BEGIN $name@@"
	(cd /tmp && exec timeout -k 10 "${kt_timeout:-300}" "/tests/$t") </dev/null 2>&1
	rc=$?
	echo "@@TAP-END $name rc=$rc@@"
done
