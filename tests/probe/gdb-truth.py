# SPDX-License-Identifier: GPL-2.0
# gdb's view of the probes, the probe tests' ground truth: loaded with
# `gdb -batch -x gdb-truth.py --args PROGRAM...`, with $PROBE_TRUTH naming a
# file of lines (TAB-separated)
#     LOCATION  PROBE  NAME  EXPRESSION  FORMAT  [NAME EXPRESSION FORMAT]...
# it stops at each LOCATION (gdb's `break LOCATION`), evaluates each
# EXPRESSION with gdb's own DWARF reading, and prints the hit as
# probe-eval does: "probe:PROBE NAME=VALUE ...".  FORMAT: d (signed), u
# (unsigned), xN (hex of N bits), sN (the string at a char pointer, at
# most N bytes, quoted).  $PROBE_RUN: the arguments of `run` (redirections).
# A PROBE ending in %return is printed when the function returns, with
# $retval its return value (a FinishBreakpoint).  A smart pointer's `->`
# works in EXPRESSION, static programs included (libstdc++'s xmethods).
import glob
import os
import sys
import gdb

gdb.execute("set pagination off")
gdb.execute("set confirm off")
gdb.execute("set debuginfod enabled off")


def libstdcxx_xmethods():
    """libstdc++'s own xmethods (`->`, get() of its smart pointers: its
    reading of their layout, not ours) for every program: gdb loads them
    with libstdc++.so, which a static program does not have."""
    for d in sorted(glob.glob("/usr/share/gcc*/python")):
        sys.path.insert(0, d)
        try:
            from libstdcxx.v6.xmethods import register_libstdcxx_xmethods
        except ImportError:
            continue
        register_libstdcxx_xmethods(None)
        return


libstdcxx_xmethods()


def fmt(value, how):
    if how == "d" or how == "u":
        return str(int(value))
    if how[0] == "x":
        return hex(int(value) & ((1 << int(how[1:])) - 1))
    if how[0] == "s":
        addr, out = int(value), ""
        mem = gdb.selected_inferior()
        for i in range(int(how[1:])):
            c = mem.read_memory(addr + i, 1).tobytes()[0]
            if c == 0:
                break
            if c in (0x22, 0x5c):
                out += "\\" + chr(c)
            elif c < 0x20 or c >= 0x7f:
                out += "\\x%02x" % c
            else:
                out += chr(c)
        return '"' + out + '"'
    raise ValueError(how)


def show(name, fields, retval=None):
    out = "probe:" + name
    for fname, expr, how in fields:
        v = retval if expr == "$retval" else gdb.parse_and_eval(expr)
        out += " %s=%s" % (fname, fmt(v, how))
    print(out, flush=True)


class Return(gdb.FinishBreakpoint):
    def __init__(self, name, fields):
        super().__init__(gdb.newest_frame(), internal=True)
        self.name, self.fields = name, fields

    def stop(self):
        show(self.name, self.fields, self.return_value)
        return False


class ReturnToInlined(gdb.Breakpoint):
    """A return into a function inlined in its caller, where gdb's
    FinishBreakpoint finds the frame gone at once (out of scope): a
    breakpoint at the return address, this call's when the stack pointer
    is back to the callee's CFA; the value is rax cut to the return type."""

    def __init__(self, frame, name, fields):
        caller = frame.older()
        super().__init__("*%#x" % caller.pc(), internal=True)
        self.sp = int(caller.read_register("rsp"))
        self.rettype = frame.function().type.target().strip_typedefs()
        self.name, self.fields = name, fields

    def stop(self):
        if not self.enabled or int(gdb.parse_and_eval("$sp")) != self.sp:
            return False
        self.enabled = False
        bits = 8 * self.rettype.sizeof
        v = int(gdb.parse_and_eval("$rax")) & ((1 << bits) - 1)
        if self.rettype.is_signed and v >> (bits - 1):
            v -= 1 << bits
        show(self.name, self.fields, v)
        return False


class Probe(gdb.Breakpoint):
    def __init__(self, location, name, fields):
        super().__init__(location, internal=True)
        self.name, self.fields = name, fields

    def stop(self):
        if self.name.endswith("%return"):
            frame = gdb.newest_frame()
            if frame.older().type() == gdb.INLINE_FRAME:
                ReturnToInlined(frame, self.name, self.fields)
            else:
                Return(self.name, self.fields)
        else:
            show(self.name, self.fields)
        return False


with open(os.environ["PROBE_TRUTH"]) as f:
    for line in f:
        parts = line.rstrip("\n").split("\t")
        if len(parts) < 2 or line.startswith("#"):
            continue
        fields = [tuple(parts[i:i + 3]) for i in range(2, len(parts) - 2, 3)]
        Probe(parts[0], parts[1], fields)
gdb.execute("run " + os.environ.get("PROBE_RUN", ""))
