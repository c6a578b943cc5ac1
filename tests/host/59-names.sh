#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# The names dtrace decodes arguments with (lib/names_gen.h):
#  - the file is what scripts/gen-names.py makes of the kernel source,
#    regenerated from the tarball (make check installs linux-source-6.12);
#    skipped where the tarball is not installed;
#  - the names against truths made independently of the kernel source:
#    system call numbers against the host's <asm/unistd_64.h>, errno names
#    against Python's errno module (the host's headers for what Python
#    lacks), signal names against Python's signal module, softirq names
#    against /proc/softirqs.
# NAMES=FILE checks another table against the truths.
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
. "$ROOT/tests/lib/tap.sh"
SRC=/usr/src/linux-source-6.12.tar.xz
if ! command -v python3 >/dev/null; then
	skip "the names against the kernel source and the host" "python3 not installed (scripts/deps.sh)"
	done_testing
	exit
fi
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
what="lib/names_gen.h is what scripts/gen-names.py makes of $SRC"
if [ ! -f "$SRC" ]; then
	skip "$what" "no $SRC"
else
	python3 "$ROOT/scripts/gen-names.py" --source "$SRC" -o "$TMP/names_gen.h" 2>"$TMP/err" &&
		diff -u "$ROOT/lib/names_gen.h" "$TMP/names_gen.h" >"$TMP/diff"
	ok $? "$what" "$(head -n 30 "$TMP/err" "$TMP/diff")"
fi
# the rest in Python, numbered on from $tap_n; it prints the plan
python3 - "${NAMES:-$ROOT/lib/names_gen.h}" "$tap_n" <<'PY'
import errno, os, re, signal, sys

tables = {}
twice = []
for kind, nr, name in re.findall(r'^KTNAME_(\w+)\((\d+), "([^"]*)"\)$',
                                 open(sys.argv[1]).read(), re.M):
    if int(nr) in tables.setdefault(kind, {}):
        twice.append((kind, nr, name))
    tables[kind][int(nr)] = name
n, failed = int(sys.argv[2]), 0

def ok(cond, what, diag=""):
    global n, failed
    n += 1
    print("%sok %d - %s" % ("" if cond else "not ", n, what))
    if not cond:
        failed += 1
        print("#   " + diag)

def skip(what, why):
    global n
    n += 1
    print("ok %d - %s # SKIP %s" % (n, what, why))

ok(not twice, "no number is named twice", str(twice[:5]))

ours = tables.get("SYSCALL", {})
hdr = "/usr/include/x86_64-linux-gnu/asm/unistd_64.h"
if os.path.exists(hdr):
    truth = {m[0]: int(m[1]) for m in
             re.findall(r"#define __NR_(\w+)\s+(\d+)", open(hdr).read())}
    both = [(nr, name) for nr, name in ours.items() if name in truth]
    bad = [(nr, name, truth[name]) for nr, name in both if truth[name] != nr]
    ok(len(both) >= 300 and not bad,
       "%d syscall numbers are the host's __NR_ constants" % len(both),
       "matched %d; wrong: %s" % (len(both), bad[:5]))
    known = [(nr, name) for name, nr in truth.items() if nr <= max(ours) and nr not in ours]
    ok(not known, "every host syscall up to %d has a name" % max(ours), str(known[:5]))
else:
    skip("syscall numbers", "no " + hdr)
ok(ours.get(0) == "read" and ours.get(39) == "getpid" and ours.get(110) == "getppid"
   and ours.get(59) == "execve" and 512 not in ours,
   "syscalls: read 0, getpid 39, getppid 110, execve 59; no x32 (512)", str(ours.get(512)))

ours = tables.get("ERRNO", {})
# names Python lacks (EHWPOISON) from the host's installed headers
host = {}
for h in ("/usr/include/asm-generic/errno-base.h", "/usr/include/asm-generic/errno.h"):
    if os.path.exists(h):
        host.update((m[0], int(m[1])) for m in
                    re.findall(r"#define\s+(E[A-Z0-9]+)\s+(\d+)", open(h).read()))
bad = [(nr, name) for nr, name in ours.items()
       if nr < 512 and getattr(errno, name, host.get(name)) != nr]
ok(len(ours) > 100 and not bad,
   "errno names are Python's errno values (the host's headers for the rest)", str(bad[:5]))
missing = [nr for nr in errno.errorcode if nr < 512 and nr not in ours]
ok(not missing, "every errno number Python knows has a name", str(missing[:5]))
ok(ours.get(11) == "EAGAIN" and ours.get(35) == "EDEADLK" and ours.get(512) == "ERESTARTSYS",
   "aliases: the first name (EAGAIN, EDEADLK); kernel-internal ERESTARTSYS 512",
   str([ours.get(11), ours.get(35), ours.get(512)]))

ours = tables.get("SIGNAL", {})
bad = [(nr, name) for nr, name in ours.items()
       if name not in signal.Signals.__members__ or signal.Signals[name].value != nr]
ok(sorted(ours) == list(range(1, 32)) and not bad,
   "signals 1-31 are Python's signal values", str(bad[:5]))

ours = tables.get("SOFTIRQ", {})
if os.path.exists("/proc/softirqs"):
    truth = [line.split(":")[0].strip() for line in open("/proc/softirqs").readlines()[1:]]
    ok([ours.get(i) for i in range(len(truth))] == truth and len(ours) == len(truth),
       "softirq names are /proc/softirqs' rows, in order", "%s vs %s" % (ours, truth))
else:
    skip("softirq names", "no /proc/softirqs")

print("1..%d" % n)
sys.exit(failed != 0)
PY
