#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Checks of dtrace's exports (standard library only).

  export-check.py ctf LIST TEXT BT [--order exact|tsc] [--stream cpu=N|tid=N]
      babeltrace2 --clock-cycles --no-delta output BT against dtrace --tsc --raw
      output TEXT, LIST being dtrace -l: each babeltrace event is printed
      again through the event table's format, as dtrace prints it, and the
      two must be the same events with the same fields; --order exact: in
      the same order; tsc: the same time stamps in the same order, events
      with equal time stamps in any order (babeltrace breaks ties its own
      way).  --stream: only that stream's events of BT.
  export-check.py perfetto JSON [--text TEXT] [--list LIST]
      JSON well-formed as Trace Event Format, slices nested per thread, with
      TEXT (dtrace output): the instants are its events, same times, same
      order; the CPU slices its context switches; the call slices and notes
      account for every func:entry/exit.  With LIST (dtrace -l): the
      instants' fields printed through the table's formats are their text
      (then JSON and TEXT must be made with --raw: the fields are numbers).
      Prints what it counted, key=value.
  export-check.py mkfile PATH CPU PID TID COMM < records
      A trace file for hand-made cases: CPU's stream, or with CPU -1 the
      user stream of PID/TID/COMM; records "tsc code tid arg1 arg2" a line
      (numbers as in C: 0x.. for hex), # comments.

Exit 0 when all is well, else 1 with the differences on stdout.
"""
import json
import re
import struct
import sys

# the table's conversions; the decoding ones as the numbers they print raw
# (dtrace --raw): %S %G %Q %I %T as %u, %E as %d, %F %W and %K as hex; %s a string
CONV = re.compile(r"%(?:ll)?[udx]|%[SEGQFIKTWs]")


def read_list(path):
    """dtrace -l: {group: bit}, {(group, name): format}."""
    groups, formats, group = {}, {}, None
    for line in open(path):
        if not line.strip():
            continue
        if not line[0].isspace() and " bit " in line:
            f = line.split()
            group = f[0]
            groups[group] = int(f[2])
        elif line[0].isspace():
            name, _sub, fmt = line.strip().split(None, 2)
            formats[(group, name)] = fmt
    return groups, formats


def event_name(code, groups):
    """The name dtrace gives an event the table does not know."""
    grp, sub = code & 0x3FFFFF, code >> 24
    if not grp:
        return "meta:lost" if code == 1 << 24 else "meta:%d" % sub
    if grp & (grp - 1) == 0:
        for g, bit in groups.items():
            if grp == 1 << bit:
                return "%s:%d" % (g, sub)
    return "0x%x:%d" % (grp, sub)


def string(values):
    """%s: the remaining arguments as little-endian bytes, up to a NUL (ASCII here)."""
    b = b"".join(struct.pack("<I", v & 0xFFFFFFFF) for v in values)
    return b.split(b"\0")[0].decode("ascii", "backslashreplace")


def render(fmt, values):
    """The text of an event printed raw (dtrace --raw)."""
    vals = list(values)

    def conv(m):
        nonlocal vals
        if m.group(0) == "%s":
            # exported as a string field, or raw words (an unknown event)
            s = vals[0] if vals and isinstance(vals[0], str) else string(vals)
            vals = []
            return s
        v = vals.pop(0)
        return "%x" % v if m.group(0)[-1] in "xFKW" else "%d" % v
    return CONV.sub(conv, fmt)


BT_LINE = re.compile(r"^\[(\d+)\] (?:\S+ )?(\S+): (.*)$")
BT_FIELD = re.compile(r'(\w+|\[\d+\]) = (-?(?:0x[0-9A-Fa-f]+|\d+)|"(?:[^"\\]|\\.)*")')


def bt_value(v):
    """A babeltrace2 field value: a number, or a quoted string."""
    if v.startswith('"'):
        return re.sub(r"\\(.)", r"\1", v[1:-1])
    return int(v, 0)


def read_bt(path, groups, formats, stream=None):
    """babeltrace2 lines as (cpu, tsc, tid, name, text)."""
    out = []
    for line in open(path):
        m = BT_LINE.match(line.rstrip("\n"))
        if not m:
            raise SystemExit("babeltrace line not understood: " + line)
        tsc, name, rest = int(m.group(1)), m.group(2), m.group(3)
        fields = [(k, bt_value(v)) for k, v in BT_FIELD.findall(rest)]
        if fields[0][0] == "cpu_id":
            cpu, key, fields = str(fields[0][1]), "cpu=%d" % fields[0][1], fields[1:]
        else:
            cpu, key, fields = "-", "tid=%d" % fields[1][1], fields[2:]
        if stream and key != stream:
            continue
        if len(fields) > 1 and fields[1][0] == "comm":    # the context's, not the payload's
            del fields[1]
        tid, payload = fields[0][1], [v for _, v in fields[1:]]
        if name == "meta:lost":
            text = "%d records lost" % payload[0]
        elif name == "unknown":
            code, args = payload[0], payload[2:]
            name = event_name(code, groups)
            text = "event 0x%08x args" % code + "".join(" 0x%x" % a for a in args)
        else:
            text = render(formats[tuple(name.split(":"))], payload)
        out.append((cpu, tsc, tid, name, text))
    return out


def read_text(path):
    out = []
    for line in open(path):
        cpu, tsc, tid, name, text = line.rstrip("\n").split(None, 4)
        out.append((cpu, int(tsc), int(tid), name, text))
    return out


def diff(what, want, got):
    for i, (w, g) in enumerate(zip(want, got)):
        if w != g:
            print("%s: event %d differs:\n  dtrace     %s\n  babeltrace %s" % (what, i, w, g))
            return 1
    if len(want) != len(got):
        print("%s: dtrace has %d events, babeltrace %d" % (what, len(want), len(got)))
        return 1
    return 0


def ctf(args):
    order, stream = "exact", None
    lst, text, bt = args[:3]
    opts = args[3:]
    while opts:
        if opts[0] == "--order":
            order = opts[1]
        elif opts[0] == "--stream":
            stream = opts[1]
        opts = opts[2:]
    groups, formats = read_list(lst)
    want, got = read_text(text), read_bt(bt, groups, formats, stream)
    if order == "exact":
        return diff("order", want, got)
    return (diff("time stamps", [e[1] for e in want], [e[1] for e in got]) or
            diff("events", sorted(want), sorted(got)))


CPU_PID = 1 << 22


def perfetto(args):
    doc = json.load(open(args[0]))
    opts = dict(zip(args[1::2], args[2::2]))
    text = read_text_us(opts["--text"]) if "--text" in opts else None
    formats = read_list(opts["--list"])[1] if "--list" in opts else None
    bad = []
    if doc.get("displayTimeUnit") != "ns" or not isinstance(doc.get("traceEvents"), list):
        bad.append("no traceEvents list or displayTimeUnit ns")
    stacks, last_ts, count = {}, {}, {}
    names, instants, cpu_slices, calls = {}, [], {}, {}
    lost = 0

    def n(key, inc=1):
        count[key] = count.get(key, 0) + inc
    for i, e in enumerate(doc.get("traceEvents", [])):
        ph, track = e.get("ph"), (e.get("pid"), e.get("tid"))
        if not isinstance(track[0], int) or not isinstance(track[1], int):
            bad.append("event %d: no pid/tid: %s" % (i, e))
            continue
        n("ph_" + str(ph))
        if ph == "M":
            if e.get("name") in ("thread_name", "process_name"):
                names[(e["name"],) + track] = e["args"]["name"]
            continue
        ts = e.get("ts")
        if not isinstance(ts, (int, float)) or ts < 0:
            bad.append("event %d: bad ts: %s" % (i, e))
            continue
        if ph in ("B", "E"):
            # B and E are a track's stack: in time order, every E ends a B
            if ts < last_ts.get(track, 0):
                bad.append("event %d: ts %s before the track's last %s" % (i, ts, last_ts[track]))
            last_ts[track] = ts
            st = stacks.setdefault(track, [])
            if ph == "B":
                st.append(e)
                if track[0] == CPU_PID:
                    cpu_slices.setdefault(track[1] - CPU_PID, []).append(
                        ("%.3f" % ts, e["args"]["tid"]))
                else:
                    calls.setdefault(track[1], {"B": 0, "E": 0, "repaired": 0, "noentry": 0,
                                                "pre": 0})
                    calls[track[1]]["B"] += 1
                    if "repaired" in e.get("args", {}):
                        calls[track[1]]["pre"] += 1
            elif not st:
                bad.append("event %d: E without B on %s" % (i, track))
            else:
                st.pop()
                if track[0] != CPU_PID:
                    calls[track[1]]["E"] += 1
                    if "repaired" in e.get("args", {}):
                        calls[track[1]]["repaired"] += 1
        elif ph == "i":
            if e["name"] == "lost records":
                lost += e["args"]["count"]
            elif e["name"] == "exit without entry":
                calls.setdefault(track[1], {"B": 0, "E": 0, "repaired": 0, "noentry": 0,
                                            "pre": 0})
                calls[track[1]]["noentry"] += 1
            else:
                instants.append(("%.3f" % ts, e["name"], e["args"]["text"]))
                fmt = formats and formats.get(tuple(e["name"].split(":")))
                if fmt and "code" not in e["args"]:
                    vals = [int(v, 0) if isinstance(v, str) and re.fullmatch(r"0x[0-9a-f]+", v)
                            else v for v in e["args"]["fields"].values()]
                    if render(fmt, vals) != e["args"]["text"]:
                        bad.append("event %d: fields %s are not its text" % (i, e["args"]))
        else:
            bad.append("event %d: unexpected ph %s" % (i, ph))
    for track, st in stacks.items():
        if st:
            bad.append("track %s: %d slices never end" % (track, len(st)))
    if text is not None:
        # slices: context switches of CPUs, calls of user threads
        want = [(t, nm, tx) for c, t, _tid, nm, tx in text
                if nm != "meta:lost" and not (nm == "sched:switch" and c != "-") and
                not (nm in ("func:entry", "func:exit", "func:enter", "func:leave") and c == "-")]
        if want != instants:
            for i, (w, g) in enumerate(zip(want + [None] * len(instants),
                                           instants + [None] * len(want))):
                if w != g:
                    bad.append("instant %d: dtrace %s, json %s" % (i, w, g))
                    break
        want_cpu = {}
        for c, t, _tid, nm, tx in text:
            if nm == "sched:switch" and c != "-":
                # "... to task NAME-TID[, prev state S, next prio 120]"
                nxt = int(re.search(r" to task (\S+?)(?:,|$)", tx).group(1).rsplit("-", 1)[-1])
                if nxt:
                    want_cpu.setdefault(int(c), []).append((t, nxt))
        if want_cpu != cpu_slices:
            bad.append("CPU slices are not the context switches")
        want_lost = sum(int(tx.split()[0]) for _c, _t, _tid, nm, tx in text if nm == "meta:lost")
        if want_lost != lost:
            bad.append("lost: dtrace %d, json %d" % (want_lost, lost))
        for tid, c in calls.items():
            entries = sum(1 for cc, _t, t2, nm, _x in text
                          if cc == "-" and t2 == tid and nm in ("func:entry", "func:enter"))
            exits = sum(1 for cc, _t, t2, nm, _x in text
                        if cc == "-" and t2 == tid and nm in ("func:exit", "func:leave"))
            # every entry is a slice, and the slices entered before the
            # trace; every exit ends one or says why not
            if c["B"] - c["pre"] != entries or c["E"] - c["repaired"] + c["noentry"] != exits:
                bad.append("tid %d: %s for %d entries, %d exits" % (tid, c, entries, exits))
    for k in sorted(count):
        print("%s=%d" % (k, count[k]))
    print("lost=%d" % lost)
    print("instants=%d" % len(instants))
    for tid, c in sorted(calls.items()):
        print("calls_%d=%d,%d,%d,%d,%d" % (tid, c["B"], c["E"], c["repaired"], c["noentry"],
                                           c["pre"]))
    for k, v in sorted(names.items()):
        print("%s_%d_%d=%s" % (k + (v,)))
    for b in bad:
        print("bad: " + b)
    return 1 if bad else 0


TEXT_LINE = re.compile(r"^\s*(\S+)\s+(\S+)\s+(?:.*?-)?(\d+)\s+(\S+) (.*)$")
META_LINE = re.compile(r"^\s*(\S+)\s+(\S+)\s+-\s+(meta:\S+) (.*)$")


def read_text_us(path):
    """dtrace lines with the time in us, as strings: (cpu, time, tid, name, text);
    the task column comm-tid (tid 0 for meta records, which have none)."""
    out = []
    for line in open(path):
        line = line.rstrip("\n")
        m = META_LINE.match(line)
        if m:
            out.append((m.group(1), m.group(2), 0, m.group(3), m.group(4).lstrip()))
            continue
        m = TEXT_LINE.match(line)
        if not m:
            raise SystemExit("dtrace line not understood: " + line)
        out.append((m.group(1), m.group(2), int(m.group(3)), m.group(4), m.group(5).lstrip()))
    return out


def mkfile(args):
    path, cpu, pid, tid, comm = args[0], int(args[1]), int(args[2]), int(args[3]), args[4]
    user = cpu < 0
    hdr = struct.pack("=8sIIIIiIIIQQQQII40s65s65s16s16s230s", b"KTRACE\r\n", 1, 512,
                      0x01020304, 24, cpu, 3 if user else 1, pid if user else 0,
                      tid if user else 0, 1000000000, 0, 0,
                      1700000000000000000, 1 << 12, 0, b"", b"6.1.0-handmade",
                      b"handmade", b"test", comm.encode() if user else b"", b"")
    with open(path, "wb") as f:
        f.write(hdr)
        for line in sys.stdin:
            if line.strip() and not line.startswith("#"):
                f.write(struct.pack("=QIIII", *(int(x, 0) for x in line.split())))
    return 0


if __name__ == "__main__":
    cmds = {"ctf": ctf, "perfetto": perfetto, "mkfile": mkfile}
    if len(sys.argv) < 3 or sys.argv[1] not in cmds:
        sys.exit(__doc__)
    sys.exit(cmds[sys.argv[1]](sys.argv[2:]))
