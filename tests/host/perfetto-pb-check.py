#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""perfetto-pb-check: dtrace --format=perfetto's protobuf, decoded by Debian's
protoc against dtrace/perfetto_trace.proto, against dtrace's own listing of
the same trace (--raw, and with names).

  perfetto-pb-check.py DECODED RAW_LISTING NAMED_LISTING JSON

DECODED is `protoc --decode=perfetto.protos.Trace` output; JSON is dtrace
--format=perfetto-json of the same trace (for the calls' slices).  Prints
one "bad: ..." line per disagreement and a summary; exits 1 on any.

Every kernel event of the listing must be in its CPU's bundles exactly once,
at its time: a context switch and a wakeup in compact_sched (the next or
woken task's tid and name; a switch's previous state and next priority,
0x8000 and 0 where the record has none), fork and exit as sched_process_fork/exit, any
other a GenericFtraceEvent named as the listing names it, whose fields
print the listing's text; each lost record a bundle with lost_events.  A
kernel thread:name is also a ProcessTree entry.  A user stream's event is
an instant on its thread's track (the listing's name and text), a call
a slice, as the JSON export's, in the same order, at the same times.
"""
import json
import re
import sys


def parse_text_format(text):
    """protoc's text format as nested dicts of lists."""
    root, stack = {}, []
    cur = root
    for line in text.splitlines():
        line = line.strip()
        if not line:
            continue
        if line.endswith("{"):
            child = {}
            cur.setdefault(line[:-1].strip(), []).append(child)
            stack.append(cur)
            cur = child
        elif line == "}":
            cur = stack.pop()
        else:
            key, val = line.split(":", 1)
            val = val.strip()
            if val.startswith('"'):
                val = bytes(val[1:-1], "ascii").decode("unicode_escape").encode("latin-1") \
                    .decode("utf-8", "backslashreplace")
            elif re.fullmatch(r"-?\d+", val):
                val = int(val)
            cur.setdefault(key, []).append(val)
    return root


LINE = re.compile(r"^\s*(\S+)\s+(\d+)\.(\d{3})\s+(\S+)\s+(\S+)\s*(.*)$")


def read_listing(path):
    """(cpu, ns, task, name, text) of each line."""
    out = []
    for line in open(path, encoding="utf-8", errors="backslashreplace"):
        m = LINE.match(line.rstrip("\n"))
        if not m:
            raise SystemExit("listing line not understood: " + line)
        cpu, us, frac, task, name, text = m.groups()
        out.append((cpu, int(us) * 1000 + int(frac), task, name, text))
    return out


def one(d, k, default=None):
    v = d.get(k)
    return v[0] if v else default


# Perfetto's own messages dtrace writes for some events: their names in the
# listing, and the fields that hold the event's two arguments ("" for none)
NATIVE = {
    "sys_enter": ("syscall:entry", ("id", "args")),
    "sys_exit": ("syscall:exit", ("id", "ret")),
    "softirq_entry": ("softirq:entry", ("vec", "")),
    "softirq_exit": ("softirq:exit", ("vec", "")),
    "softirq_raise": ("softirq:raise", ("vec", "")),
    "sched_migrate_task": ("sched:migrate", ("pid", "dest_cpu")),
}


def probe_name(line, got, ns):
    """The probe name of a listing's NAME TEXT: the longest generic event name
    of the protobuf at the same time that starts it, else its first word."""
    best = line.split(" ", 1)[0]
    for ts, name, _, _ in got:
        if ts == ns and line.startswith(name + " ") and len(name) > len(best):
            best = name
    return best


def u32(v):
    """An int32 field as the 32-bit number dtrace wrote (ktgen's are random)."""
    return v & 0xffffffff


def deltas(vals):
    out, t = [], 0
    for i, v in enumerate(vals):
        t = v if i == 0 else t + v
        out.append(t)
    return out


def main():
    decoded, raw_path, named_path, json_path = sys.argv[1:5]
    trace = parse_text_format(open(decoded, encoding="utf-8").read())
    raw, named = read_listing(raw_path), read_listing(named_path)
    bad = []
    packets = trace.get("packet", [])

    snap = [one(p, "clock_snapshot") for p in packets if "clock_snapshot" in p]
    if len(snap) != 1:
        print("bad: %d clock snapshots" % len(snap))
        return 1
    clocks = {one(c, "clock_id"): one(c, "timestamp") for c in snap[0]["clocks"]}
    first_ns = raw[0][1] if raw else 0
    base = clocks[6] - first_ns  # BOOTTIME at the first event, less its ns

    # the kernel side, per CPU: (kind, ns, detail) in order of kind
    got = {}
    lost_bundles = {}
    for p in packets:
        b = one(p, "ftrace_events")
        if not b:
            continue
        cpu = str(one(b, "cpu"))
        g = got.setdefault(cpu, {})
        if one(b, "lost_events"):
            lost_bundles[cpu] = lost_bundles.get(cpu, 0) + 1
        cs = one(b, "compact_sched")
        if cs:
            table = cs.get("intern_table", [])
            n = len(cs.get("switch_timestamp", []))
            for col in ("switch_prev_state", "switch_next_pid", "switch_next_prio",
                        "switch_next_comm_index"):
                if len(cs.get(col, [])) != n:
                    bad.append("cpu %s: compact_sched column %s has %d of %d" %
                               (cpu, col, len(cs.get(col, [])), n))
            for ts, pid, ci, state, prio in zip(deltas(cs.get("switch_timestamp", [])),
                                                cs.get("switch_next_pid", []),
                                                cs.get("switch_next_comm_index", []),
                                                cs.get("switch_prev_state", []),
                                                cs.get("switch_next_prio", [])):
                g.setdefault("sched:switch", []).append((ts - base, u32(pid), table[ci],
                                                         u32(state), u32(prio)))
            for ts, pid, ci, tcpu in zip(deltas(cs.get("waking_timestamp", [])),
                                         cs.get("waking_pid", []),
                                         cs.get("waking_comm_index", []),
                                         cs.get("waking_target_cpu", [])):
                g.setdefault("sched:wakeup", []).append((ts - base, u32(pid), table[ci],
                                                         u32(tcpu)))
        for ev in b.get("event", []):
            ts = one(ev, "timestamp") - base
            if "sched_process_fork" in ev:
                f = one(ev, "sched_process_fork")
                g.setdefault("thread:fork", []).append((ts, one(ev, "pid"),
                                                        u32(one(f, "child_pid"))))
            elif "sched_process_exit" in ev:
                g.setdefault("thread:exit", []).append((ts, one(ev, "pid")))
            elif any(k in ev for k in NATIVE):
                k = next(k for k in NATIVE if k in ev)
                f = one(ev, k)
                name, keys = NATIVE[k]
                vals = [one(f, key, 0) for key in keys]
                if k == "sched_migrate_task":    # int32 fields: ktgen's numbers are any
                    vals = [u32(v) for v in vals]
                g.setdefault("generic", []).append((ts, name, one(ev, "pid"), vals))
            elif "generic" in ev:
                gen = one(ev, "generic")
                fields = [one(f, "str_value", one(f, "int_value", one(f, "uint_value")))
                          for f in gen.get("field", [])]
                g.setdefault("generic", []).append((ts, one(gen, "event_name"), one(ev, "pid"),
                                                    fields))
            else:
                bad.append("cpu %s: an ftrace event of no kind dtrace writes: %s" % (cpu, ev))

    want, want_lost, names, listing_text = {}, {}, [], {}
    counted = 0
    for (cpu, ns, task, name, text), nm in zip(raw, named):
        if cpu == "-":
            continue
        w = want.setdefault(cpu, {})
        if name == "meta:lost":
            want_lost[cpu] = want_lost.get(cpu, 0) + 1
            continue
        counted += 1
        if name == "sched:switch":
            m = re.match(r"context switch from task \d+ to task (\d+)(?:, prev state (\S+), "
                         r"next prio (\S+))?", text)
            nxt = int(m.group(1))
            state = int(m.group(2), 16) if m.group(2) and m.group(2) != "?" else 0x8000
            prio = int(m.group(3)) & 0xffffffff if m.group(3) and m.group(3) != "?" else 0
            task = re.match(r"context switch from task .* to task (.*?)(?:, prev state|$)",
                            nm[4]).group(1)
            comm = task.rsplit("-", 1)[0] if task.rsplit("-", 1)[-1] == str(nxt) else ""
            comm = "" if comm == "<...>" else comm
            w.setdefault(name, []).append((ns, nxt, comm, state, prio))
        elif name == "sched:wakeup":
            m = re.match(r"wakeup of task (\d+) on cpu (\d+)", text)
            woken = nm[4][len("wakeup of task "):].rsplit(" on cpu ", 1)[0]
            comm = woken.rsplit("-", 1)[0] if woken.rsplit("-", 1)[-1] == m.group(1) else ""
            comm = "" if comm == "<...>" else comm
            w.setdefault(name, []).append((ns, int(m.group(1)), comm, int(m.group(2))))
        elif name == "thread:fork":
            m = re.match(r"fork: task (\d+) created task (\d+)", text)
            w.setdefault(name, []).append((ns, int(task), int(m.group(2))))
        elif name == "thread:exit":
            w.setdefault(name, []).append((ns, int(task)))
        else:
            if name.startswith("probe:"):
                # named as the table says (a name may have spaces): the pb's
                name = probe_name(nm[3] + " " + nm[4], got.get(cpu, {}).get("generic", []), ns)
            w.setdefault("generic", []).append((ns, name, int(task), text))
            listing_text.setdefault((cpu, ns, int(task), name), []).append(nm[3] + " " + nm[4])
            if name == "thread:name":
                m = re.match(r"task (\d+) of process (\d+) is named (.*)", nm[4])
                names.append((ns, int(m.group(1)), int(m.group(2)), m.group(3)))

    js = json.load(open(json_path))["traceEvents"]
    json_fields = {}
    for e in js:
        if e["ph"] == "i" and "fields" in e.get("args", {}):
            # a probe's missing value is null in JSON, left out in protobuf
            vals = [int(v, 16) if isinstance(v, str) and re.fullmatch(r"0x[0-9a-f]+", v) else v
                    for v in e["args"]["fields"].values() if v is not None]
            json_fields.setdefault((round(e["ts"] * 1000), e["name"], e["tid"]),
                                   []).append(vals)
        elif e["ph"] == "i" and "code" in e.get("args", {}):
            json_fields.setdefault((round(e["ts"] * 1000), e["name"], e["tid"]),
                                   []).append([int(e["args"]["code"], 16)] +
                                              [int(a, 16) for a in e["args"]["args"]])

    for cpu in sorted(set(want) | set(got)):
        w, g = want.get(cpu, {}), got.get(cpu, {})
        for kind in sorted(set(w) | set(g)):
            wl, gl = w.get(kind, []), g.get(kind, [])
            if kind == "generic":
                # the fields as the JSON export's (tests 56, 57: they print the text)
                for ns, name, tid, fields in gl:
                    # strings: as the listing shows them (JSON replaces bytes
                    # that are not UTF-8); numbers: as the JSON's
                    text = listing_text.get((cpu, ns, tid, name), [""])
                    for f in fields:
                        if isinstance(f, str) and not any(
                                t.endswith(" " + f) or ('"%s"' % f.replace('"', '\\"')) in t
                                for t in text):
                            bad.append("cpu %s %s at %d: string %r not in the listing's %r" %
                                       (cpu, name, ns, f, text))
                    fields = [f if not isinstance(f, str) else "" for f in fields]
                    # events at the same time, of the same name and task: any of them
                    jf = json_fields.get((ns, name, tid))
                    jf = jf and [[v if not isinstance(v, str) else "" for v in x] for x in jf]
                    if jf is not None and fields not in jf:
                        bad.append("cpu %s %s at %d: fields %s, JSON's %s" %
                                   (cpu, name, ns, fields, jf))
                wl = [(ns, name, tid) for ns, name, tid, _ in wl]
                gl = [(ns, name, tid) for ns, name, tid, _ in gl]
            if wl != gl:
                for i, (a, b) in enumerate(zip(wl, gl)):
                    if a != b:
                        bad.append("cpu %s %s #%d: listing %s, perfetto %s" % (cpu, kind, i, a, b))
                        break
                else:
                    bad.append("cpu %s %s: listing %d, perfetto %d" % (cpu, kind, len(wl), len(gl)))
        if want_lost.get(cpu, 0) != lost_bundles.get(cpu, 0):
            bad.append("cpu %s: %d lost records in the listing, %d bundles with lost_events" %
                       (cpu, want_lost.get(cpu, 0), lost_bundles.get(cpu, 0)))

    # thread:name: a ProcessTree entry each, at its time
    trees = []
    for p in packets:
        t = one(p, "process_tree")
        if t:
            for th in t.get("threads", []):
                trees.append((one(p, "timestamp") - base, one(th, "tid"), one(th, "tgid"),
                              one(th, "name", "")))
    for n in names:
        if n not in trees:
            bad.append("thread:name %s: no ProcessTree entry" % (n,))

    # the user streams: instants (events) and slices (calls) per track
    iids, tracks, user_got = {}, {}, {}
    for p in packets:
        for idata in p.get("interned_data", []):
            for en in idata.get("event_names", []):
                iids[one(en, "iid")] = one(en, "name")
        td = one(p, "track_descriptor")
        if td:
            tracks[one(td, "uuid")] = one(one(td, "thread"), "tid")
        te = one(p, "track_event")
        if te:
            tid = tracks.get(one(te, "track_uuid"))
            name = iids.get(one(te, "name_iid"))
            ann = {one(a, "name"): one(a, "string_value", one(a, "uint_value"))
                   for a in te.get("debug_annotations", [])}
            user_got.setdefault(tid, []).append((one(te, "type"), one(p, "timestamp") - base,
                                                 name, ann))
    user_want = {}
    for (cpu, ns, task, _, _), (_, _, _, name, text) in zip(raw, named):
        if cpu != "-" or name in ("func:entry", "func:exit", "func:enter", "func:leave") \
                or name == "meta:lost":
            continue
        user_want.setdefault(int(task), []).append(("TYPE_INSTANT", ns, name, text))
    for e in js:
        if e["ph"] in "BE" and e["pid"] < (1 << 22):
            ns = round(e["ts"] * 1000)
            user_want.setdefault(e["tid"], []).append(
                ("TYPE_SLICE_BEGIN" if e["ph"] == "B" else "TYPE_SLICE_END", ns,
                 e.get("name") if e["ph"] == "B" else None, None))
        elif e["ph"] == "i" and e["name"] in ("lost records", "exit without entry") \
                and e["pid"] < (1 << 22):
            ns = round(e["ts"] * 1000)
            user_want.setdefault(e["tid"], []).append(("TYPE_INSTANT", ns, e["name"], None))
    for tid in sorted(set(user_want) | set(user_got)):
        w = sorted(user_want.get(tid, []), key=lambda x: (x[1], x[0] != "TYPE_SLICE_END"))
        g = user_got.get(tid, [])
        gk = sorted([(t, ns, name, ann.get("text") if t == "TYPE_INSTANT" and "text" in ann
                      else None) for t, ns, name, ann in g],
                    key=lambda x: (x[1], x[0] != "TYPE_SLICE_END"))
        wk = [(t, ns, name, text) for t, ns, name, text in w]
        if sorted(map(str, wk)) != sorted(map(str, gk)):
            missing = [x for x in wk if x not in gk][:3]
            extra = [x for x in gk if x not in wk][:3]
            bad.append("tid %s: %d events wanted, %d got; missing %s; extra %s" %
                       (tid, len(wk), len(gk), missing, extra))

    for b in bad[:20]:
        print("bad:", b)
    print("kernel_events=%d user_tracks=%d packets=%d" % (counted, len(user_got), len(packets)))
    return 1 if bad else 0


sys.exit(main())
