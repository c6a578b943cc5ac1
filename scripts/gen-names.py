#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""gen-names: the name tables dtrace decodes arguments with, from the kernel's
own source, so that they are never copied by hand.

  scripts/gen-names.py [--source TARBALL] [-o FILE]

reads, from the kernel source tarball (default
/usr/src/linux-source-6.12.tar.xz, Debian's linux-source-6.12), only these
members:

  arch/x86/entry/syscalls/syscall_64.tbl   x86_64 system calls (ABI common
                                           and 64; x32 left out)
  include/uapi/asm-generic/errno-base.h    errno names (an alias such as
  include/uapi/asm-generic/errno.h         EWOULDBLOCK is defined by name:
                                           the first name of a number wins)
  include/linux/errno.h                    the kernel's own, 512 and up
                                           (ERESTARTSYS: a system call a
                                           signal interrupted returns it)
  arch/x86/include/uapi/asm/signal.h       SIGHUP..SIGSYS (SIGIOT after
                                           SIGABRT: the first name wins)
  include/linux/interrupt.h                the softirq enum, HI_SOFTIRQ..,
                                           named as ftrace names them (HI,
                                           TIMER, NET_TX, ...)

and writes lib/names_gen.h (or FILE; "-" is standard output): one X-macro
line per name, KTNAME_SYSCALL(nr, "name") and so on, for lib/ktevents.c.
tests/host/59-names.sh checks that the committed file is what this writes,
and the names against the host's headers and Python's errno and signal
modules.
"""
import argparse
import os
import re
import sys
import tarfile

TOP = "linux-source-6.12/"
MEMBERS = {
    "syscalls": "arch/x86/entry/syscalls/syscall_64.tbl",
    "errno_base": "include/uapi/asm-generic/errno-base.h",
    "errno": "include/uapi/asm-generic/errno.h",
    "errno_kernel": "include/linux/errno.h",
    "signal": "arch/x86/include/uapi/asm/signal.h",
    "interrupt": "include/linux/interrupt.h",
}
# Longest name the tables take (lib/ktevents.c copies names in 32-byte slots).
NAME_MAX = 31


def fail(msg):
    sys.exit("gen-names: " + msg)


def read_members(tarball):
    """The members' text by key, in one pass over the tarball."""
    want = {TOP + path: key for key, path in MEMBERS.items()}
    got = {}
    try:
        with tarfile.open(tarball, "r|xz") as tar:
            for m in tar:
                if m.name in want and m.isfile():
                    got[want[m.name]] = tar.extractfile(m).read().decode()
                    if len(got) == len(want):
                        break
    except (OSError, tarfile.TarError) as e:
        fail("%s: %s" % (tarball, e))
    missing = sorted(TOP + MEMBERS[k] for k in MEMBERS if k not in got)
    if missing:
        fail("%s: no %s" % (tarball, ", ".join(missing)))
    return got


def add(table, nr, name, what):
    """First name of a number wins; a name must fit its slot."""
    if len(name) > NAME_MAX:
        fail("%s name %s longer than %d bytes" % (what, name, NAME_MAX))
    table.setdefault(nr, name)


def syscalls(text):
    table = {}
    for line in text.splitlines():
        f = line.split("#", 1)[0].split()
        if len(f) < 3:
            continue
        if not f[0].isdigit():
            fail("syscall_64.tbl: bad line: " + line)
        if f[1] in ("common", "64"):
            add(table, int(f[0]), f[2], "syscall")
    return table


def errnos(*texts):
    table = {}
    for text in texts:
        # "#define ENOENT  2  /* ... */"; aliases ("#define EWOULDBLOCK EAGAIN")
        # have no number and are left out
        for m in re.finditer(r"^#define\s+(E[A-Z0-9]+)\s+(\d+)\b", text, re.M):
            add(table, int(m.group(2)), m.group(1), "errno")
    return table


def signals(text):
    table = {}
    for m in re.finditer(r"^#define\s+(SIG[A-Z0-9]+)\s+(\d+)\b", text, re.M):
        nr = int(m.group(2))
        if 1 <= nr <= 31:	# SIGHUP..SIGSYS; not SIGRTMIN, SIGSTKSZ
            add(table, nr, m.group(1), "signal")
    if sorted(table) != list(range(1, 32)):
        fail("signal.h: signals 1-31 not all found")
    return table


def softirqs(text):
    m = re.search(r"enum\s*\{\s*(HI_SOFTIRQ\s*=\s*0\s*,.*?)NR_SOFTIRQS", text, re.S)
    if not m:
        fail("interrupt.h: no enum starting HI_SOFTIRQ=0")
    body = re.sub(r"/\*.*?\*/", "", m.group(1), flags=re.S)
    table = {}
    for nr, item in enumerate(x.strip() for x in body.split(",") if x.strip()):
        name = item.split("=")[0].strip()
        if not name.endswith("_SOFTIRQ"):
            fail("interrupt.h: softirq enum item " + item)
        add(table, nr, name[:-len("_SOFTIRQ")], "softirq")
    return table


def generate(tarball):
    src = read_members(tarball)
    tables = [
        ("SYSCALL", "x86_64 system calls", MEMBERS["syscalls"], syscalls(src["syscalls"])),
        ("ERRNO", "errno names", "%s, %s, %s" % (MEMBERS["errno_base"], MEMBERS["errno"],
                                                 MEMBERS["errno_kernel"]),
         errnos(src["errno_base"], src["errno"], src["errno_kernel"])),
        ("SIGNAL", "signals", MEMBERS["signal"], signals(src["signal"])),
        ("SOFTIRQ", "softirqs", MEMBERS["interrupt"], softirqs(src["interrupt"])),
    ]
    out = [
        "/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */",
        "/*",
        " * Generated by scripts/gen-names.py from %s" % os.path.basename(tarball),
        " * (%s): do not edit, run the script." % TOP.rstrip("/"),
        " *",
        " * Names dtrace decodes arguments with, one X-macro line each, for a",
        " * tool to include after defining KTNAME_SYSCALL(nr, name),",
        " * KTNAME_ERRNO(nr, name), KTNAME_SIGNAL(nr, name) and",
        " * KTNAME_SOFTIRQ(nr, name).",
        " */",
    ]
    for macro, what, member, table in tables:
        out.append("")
        out.append("/* %s: %d, from %s */" % (what, len(table), member))
        for nr in sorted(table):
            out.append('KTNAME_%s(%d, "%s")' % (macro, nr, table[nr]))
    return "\n".join(out) + "\n"


def main():
    p = argparse.ArgumentParser(description="generate lib/names_gen.h")
    p.add_argument("--source", default="/usr/src/linux-source-6.12.tar.xz",
                   help="the kernel source tarball")
    p.add_argument("-o", "--output", default="lib/names_gen.h",
                   help='the file to write ("-": standard output)')
    a = p.parse_args()
    text = generate(a.source)
    if a.output == "-":
        sys.stdout.write(text)
    else:
        with open(a.output, "w") as f:
            f.write(text)


if __name__ == "__main__":
    main()
