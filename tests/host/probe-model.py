#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""probe-model: probe hits written byte by byte, and what dtrace must say
of them, computed here from the values the model chose (standard library
only; the trace files' header from mktrace.py).

  probe-model.py decode DIR
      DIR/t.cpu0, t.cpu1, t.probes and a user stream t.u5000 (calls of
      thread 5000): hits of every value type, a probe of 16 values over
      several CONT records, strings to escape, missing values, a hit whose
      CONT records were lost (a lost marker after it), ids BASE.probes
      lacks, a return probe with spaces in its name.  Writes DIR/expect:
      one line per hit, "TSC<TAB>NAME<TAB>TEXT<TAB>JSON-FIELDS<TAB>VALUES"
      (fields as Perfetto's args; VALUES [name, type, value] with strings
      in hex, null when missing; both null for an undefined probe), and
      DIR/counts: "NAME<TAB>COUNT".
  probe-model.py latency SEED DIR [--key]
      Hits of enqueue_op and dequeue_op (keyed by a value tid, with
      --key), or of work and work%return by thread, random but seeded;
      DIR/expect is the report's numbers in the form `parse` prints.
  probe-model.py bench N DIR
      N pairs of enqueue_op/dequeue_op hits keyed by tid for
      bench/dtrace-latency.sh, 64 in flight at any time: a long trace
      whose pending pairs stay few (no model, written fast).
  probe-model.py parse < OUT
      dtrace --latency's report as "name value" lines (times in ns).
  probe-model.py check-listing|check-perfetto|check-ctf|check-summary DIR FILE
      FILE (dtrace --tsc's listing of the CPU files, its Perfetto JSON,
      babeltrace2's text of its CTF, -S) says of each hit what DIR/expect
      says; differences on stdout, exit 1.
  probe-model.py check-jump REPORT LISTING
      Each slowest pair of REPORT (--latency --key tid) is in LISTING
      (the same trace's listing): a line at A's time of A's thread with
      its key, and at B's of B's.

The percentile rule is dtrace's documented one (dtrace.1): nearest rank,
reported as the upper end of its bucket (exact below 128 ns, else 64
buckets per power of two), never above the maximum.
"""
import json
import os
import random
import re
import struct
import subprocess
import sys

ROOT = os.path.dirname(os.path.abspath(__file__))
GRP_PROBE, GRP_FUNC = 1 << 18, 1 << 12
CONT, END = 1 << 22, 1 << 23
META_LOST = 1 << 24


def code(grp, sub):
    return grp | sub << 24


def write_trace(path, records, *args):
    """records: (tsc, code, tid, arg1, arg2), in time order."""
    subprocess.run([sys.executable, os.path.join(ROOT, "mktrace.py"), path] + list(args),
                   check=True)
    with open(path, "ab") as f:
        for r in records:
            f.write(struct.pack("<QIIII", r[0], r[1], r[2], r[3] & 0xffffffff,
                                r[4] & 0xffffffff))


def hit_records(tsc, pid, tid, missing, words):
    """A probe hit: arg1 the mask, arg2 and then CONT pairs the words."""
    words = list(words)
    recs = [(tsc, code(GRP_PROBE, pid), tid, missing, words[0] if words else 0)]
    rest = words[1:]
    nr = (len(rest) + 1) // 2
    for i in range(nr):
        pair = rest[2 * i:2 * i + 2] + [0]
        recs.append((tsc, CONT | i << 24 | (END if i == nr - 1 else 0), tid, pair[0], pair[1]))
    return recs


# ---- values ---------------------------------------------------------------

def words_of(typ, v):
    """The value words of one value, as the kernel writes them."""
    if typ.startswith("str"):
        n = int(typ[3:])
        b = v[:n].ljust((n + 3) // 4 * 4, b"\0")
        return [struct.unpack("<I", b[i:i + 4])[0] for i in range(0, len(b), 4)]
    size = int(typ[1:]) // 8
    u = v & ((1 << (8 * size)) - 1)
    if typ[0] == "s" and v < 0:
        u = v & ((1 << 64) - 1)   # sign-extended over the words
    if size == 8:
        return [u & 0xffffffff, u >> 32]
    return [u & 0xffffffff]


def text_escape(b):
    """lib/escape.c's quoted style, written again from its description."""
    out, i = "", 0
    while i < len(b):
        c = b[i]
        n = 0
        if c < 0x80:
            n = 1
        else:
            for length, lo, hi in ((2, 0xc2, 0xdf), (3, 0xe0, 0xef), (4, 0xf0, 0xf4)):
                if lo <= c <= hi:
                    try:
                        s = b[i:i + length].decode("utf-8")
                        if len(s) == 1 and len(b[i:i + length]) == length:
                            n = length
                    except UnicodeDecodeError:
                        pass
        if not n:
            out += "\\x%02x" % c
            i += 1
            continue
        cp = ord(b[i:i + n].decode("utf-8"))
        if cp < 0x20 or cp == 0x7f or 0x80 <= cp < 0xa0:
            out += "".join("\\x%02x" % x for x in b[i:i + n])
        elif cp == 0x5c:
            out += "\\\\"
        elif cp == 0x22:
            out += "\\\""
        else:
            out += chr(cp)
        i += n
    return out


def value_text(typ, v):
    if v is None:
        return "?"
    if typ.startswith("str"):
        return '"' + text_escape(v) + '"'
    if typ[0] == "x":
        return "0x%x" % v
    return str(v)


def value_json(typ, v):
    """What Perfetto's fields hold: numbers, hex strings, strings, null."""
    if v is None:
        return None
    if typ.startswith("str"):
        return v.decode("utf-8", "replace")
    if typ[0] == "x" or (v >= 0 and v >> 53):
        return "0x%x" % (v & ((1 << 64) - 1))
    if v < 0 and -v >= 1 << 53:
        return "0x%x" % (v & ((1 << 64) - 1))
    return v


def random_value(rng, typ):
    if typ.startswith("str"):
        n = int(typ[3:])
        return bytes(rng.choice(b"abcdefgh XYZ_-.:0123") for _ in range(rng.randint(0, n)))
    bits = int(typ[1:])
    if typ[0] == "s":
        return rng.randint(-(1 << (bits - 1)), (1 << (bits - 1)) - 1)
    return rng.randint(0, (1 << bits) - 1)


class Probe:
    def __init__(self, pid, kind, name, values):
        self.id, self.kind, self.name, self.values = pid, kind, name, values

    def shown(self):
        return "probe:" + self.name + ("%return" if self.kind == "return" else "")

    def lines(self):
        out = ["probe\t%d\t%s\t%s\t0x%x\t/usr/bin/ceph-osd\t%s" %
               (self.id, self.kind, "a1b2c3d4" if self.id % 2 else "-", 0x1000 + self.id,
                self.name)]
        for i, (name, typ) in enumerate(self.values):
            out.append("value\t%d\t%d\t%s\t%s" % (self.id, i, typ, name))
        return out


def decode(d):
    rng = random.Random(77)
    types = ["u8", "u16", "u32", "u64", "s8", "s16", "s32", "s64",
             "x8", "x16", "x32", "x64", "str16", "str5"]
    probes = [
        Probe(1, "entry", "OSD::enqueue_op", [("op.type", t) if t == "u8" else
                                              ("v_" + t, t) for t in types]),
        Probe(2, "entry", "sixteen", [("f%d" % i, "u32") for i in range(16)]),
        Probe(3, "return", "ns::Cls::method(int, char const*)", [("ret", "s64")]),
        Probe(4, "entry", "noargs", []),
        Probe(5, "entry", "OSD::dequeue_op", [("tid", "x64"), ("name", "str64")]),
    ]
    by_id = {p.id: p for p in probes}
    cpus = {0: [], 1: []}
    expect, counts = [], {}
    tsc = 1000

    def emit(cpu, pr, tid, vals, missing=0, keep_words=None, undefined_words=None):
        nonlocal tsc
        tsc += rng.randint(1, 50)
        if pr is None:
            pid, words = undefined_words
            recs = hit_records(tsc, pid, tid, missing, words)
            name = "probe:%d" % pid
            args = [missing] + list(words) + ([0] if len(words) % 2 == 0 and words else [])
            if not words:
                args = [missing, 0]
            text = "event 0x%08x args " % code(GRP_PROBE, pid) + " ".join(
                "0x%x" % a for a in args)
            fields = typed = None
        else:
            words = []
            for (name, typ), v in zip(pr.values, vals):
                words += words_of(typ, v if v is not None else (b"" if typ.startswith("str") else 0))
            recs = hit_records(tsc, pr.id, tid, missing, words)
            if keep_words is not None:   # CONT records lost: the chain cut short
                nr_cont = (keep_words - 1 + 1) // 2
                recs = recs[:1 + nr_cont]
                if nr_cont:
                    t, c, ti, a1, a2 = recs[-1]
                    recs[-1] = (t, c | END, ti, a1, a2)
            have = 1 + 2 * (len(recs) - 1)   # value words in the records
            shown, fields, typed = [], {}, []
            w = 0
            for i, ((name, typ), v) in enumerate(zip(pr.values, vals)):
                nw = len(words_of(typ, v if v is not None else
                                  (b"" if typ.startswith("str") else 0)))
                gone = (missing >> i & 1) or w + nw > have
                w += nw
                if v is not None and typ.startswith("str"):
                    v = v.split(b"\0")[0]
                v = None if gone else v
                shown.append("%s=%s" % (text_escape(name.encode()), value_text(typ, v)))
                fields[name] = value_json(typ, v)
                typed.append([name, typ, v.hex() if isinstance(v, bytes) else v])
            name, text = pr.shown(), " ".join(shown)
        cpus[cpu].extend(recs)
        expect.append("%d\t%s\t%s\t%s\t%s" % (tsc, name, text, json.dumps(fields),
                                               json.dumps(typed)))
        counts[name] = counts.get(name, 0) + 1
        return tsc

    # every type, random values, a few times over
    for _ in range(6):
        emit(rng.randint(0, 1), by_id[1], 100, [random_value(rng, t) for _n, t in by_id[1].values])
    # extremes
    ext = [0xff, 0xffff, 0xffffffff, (1 << 64) - 1, -128, -32768, -(1 << 31), -(1 << 63),
           0xff, 0xffff, 0xffffffff, (1 << 64) - 1, b"0123456789abcdef", b"x\"y\\z"]
    emit(0, by_id[1], 100, ext)
    # missing values: the mask says so (their words are zero)
    vals = [random_value(rng, t) for _n, t in by_id[1].values]
    vals = [None if i in (0, 3, 12) else v for i, v in enumerate(vals)]
    emit(1, by_id[1], 100, vals, missing=1 << 0 | 1 << 3 | 1 << 12)
    # 16 values over 8 CONT records, and one more with every value missing
    emit(0, by_id[2], 101, [rng.randint(0, 1 << 32 - 1) for _ in range(16)])
    emit(1, by_id[2], 101, [None] * 16, missing=0xffff)
    # strings to escape: quote, backslash, control, DEL, not UTF-8, UTF-8
    emit(0, by_id[5], 102, [0xdeadbeefcafe, b"q\"b\\c\x01d\x7fe\xff\xc3\xa9 end"])
    emit(1, by_id[5], 102, [(1 << 64) - 1, b""])
    # a return probe whose name has spaces; a negative and a huge return value
    emit(0, by_id[3], 103, [-2])
    emit(1, by_id[3], 103, [(1 << 62)])
    emit(0, by_id[4], 104, [])
    # ids BASE.probes lacks
    emit(1, None, 105, None, undefined_words=(9, [1, 2, 3]))
    emit(0, None, 105, None, undefined_words=(200, []))
    # a hit whose CONT records were lost: 3 of its 21 words kept, then the
    # lost marker; the values past them print as missing
    vals = [random_value(rng, t) for _n, t in by_id[1].values]
    lost_at = emit(1, by_id[1], 100, vals, keep_words=3)
    cpus[1].append((lost_at + 1, META_LOST, 0, 4, 0))
    # calls of the user thread 5000 around a hit of its thread
    t_call = tsc + 10
    at = emit(0, by_id[5], 5000, [5000, b"in a call"])
    assert at > t_call - 10
    calls = [(t_call - 20 if t_call - 20 < at else at - 1, code(GRP_FUNC, 1), 5000, 0x401000, 0),
             (at + 5, code(GRP_FUNC, 2), 5000, 0x401000, 0)]
    for cpu, recs in cpus.items():
        recs.sort(key=lambda r: r[0])   # stable: a hit's CONT records stay after it
        write_trace(os.path.join(d, "t.cpu%d" % cpu), recs, "--cpu", str(cpu))
    write_trace(os.path.join(d, "t.u5000"), calls, "--user", "5000", "5000",
                "--comm", b"worker".hex())
    with open(os.path.join(d, "t.probes"), "w") as f:
        f.write("# ktrace probes 1\n")
        for p in probes:
            f.write("\n".join(p.lines()) + "\n")
    with open(os.path.join(d, "expect"), "w") as f:
        f.write("\n".join(expect) + "\n")
    with open(os.path.join(d, "counts"), "w") as f:
        for name in sorted(counts):
            f.write("%s\t%d\n" % (name, counts[name]))


# ---- latency --------------------------------------------------------------

def bucket_high(v):
    if v < 128:
        return v
    width = 1 << (v.bit_length() - 1 - 6)
    return v // width * width + width - 1


def size_label(v):
    u = ""
    for unit in "KMGTPE":
        if v >= 1024 and v % 1024 == 0:
            v //= 1024
            u = unit
        else:
            break
    return "%d%s" % (v, u)


def hist_label(k):
    if k == 0:
        return "[0]"
    if k == 1:
        return "[1]"
    return "[%s, %s)" % (size_label(1 << (k - 1)), size_label(1 << k))


def latency(seed, d, keyed):
    rng = random.Random(seed)
    if keyed:
        probes = [Probe(1, "entry", "OSD::enqueue_op", [("type", "u32"), ("tid", "u64")]),
                  Probe(2, "entry", "OSD::dequeue_op", [("tid", "u64"), ("cost", "s32")]),
                  Probe(3, "entry", "OSD::other", [("tid", "u64")])]
    else:
        probes = [Probe(1, "entry", "work", [("n", "u32")]),
                  Probe(2, "return", "work", [("ret", "s64")]),
                  Probe(3, "entry", "other", [])]
    events = []   # (tsc, side, thread, key or None(missing), cpu)
    used = set()

    def when(t):
        while t in used:
            t += 1
        used.add(t)
        return t

    t = 10000
    for i in range(3000):
        t += rng.randint(1, 3000)
        # latencies from ns to ms: exact buckets, fine ones, several octaves
        lat = int(rng.choice([rng.randint(0, 127), rng.randint(128, 5000),
                              int(rng.lognormvariate(9, 2))]))
        thread = 200 + rng.randint(0, 30)
        key = rng.choice([rng.randint(0, 1 << 20), rng.randint(1 << 40, 1 << 63)]) \
            if keyed else thread
        if not keyed and any(e[2] == thread and e[0] > t for e in events[-200:]):
            continue   # a thread's calls do not overlap, but for the recursion below
        a = when(t)
        events.append((a, 1, thread, key, rng.randint(0, 1)))
        r = rng.random()
        if r < 0.03:
            continue   # A without B
        if r < 0.06:   # A again before its B
            events.append((when(a + rng.randint(1, 50)), 1, thread, key, rng.randint(0, 1)))
        if keyed and r < 0.08 and r >= 0.06:   # a B whose key was not fetched
            events.append((when(a + lat + 1), 2, thread + 1, None, rng.randint(0, 1)))
            continue
        events.append((when(a + lat + 1 if r < 0.06 else a + lat), 2,
                       thread + (1 if keyed else 0), key, rng.randint(0, 1)))
    for i in range(40):   # B without A, others
        events.append((when(rng.randint(10000, t)), 2, 900 + i, rng.randint(1 << 21, 1 << 22)
                       if keyed else 900 + i, rng.randint(0, 1)))
        events.append((when(rng.randint(10000, t)), 3, 901, 1, rng.randint(0, 1)))
    events.sort()

    # the model: the documented pairing, in time order
    pending, pairs = {}, []
    a_again = b_unmatched = no_key = 0
    t0 = events[0][0]
    for tsc, side, thread, key, cpu in events:
        if side == 3:
            continue
        if key is None:
            no_key += 1
            continue
        if side == 1:
            if key in pending:
                a_again += 1
            pending[key] = (tsc, thread)
        elif key in pending:
            a_tsc, a_thread = pending.pop(key)
            pairs.append((tsc - a_tsc, a_tsc - t0, tsc - t0, a_thread, thread, key))
        else:
            b_unmatched += 1
    lats = sorted(p[0] for p in pairs)
    n = len(lats)
    out = ["pairs %d" % n, "min %d" % lats[0]]
    for name, pm in (("p50", 500), ("p90", 900), ("p99", 990)):
        rank = max(1, -(-n * pm // 1000))
        out.append("%s %d" % (name, min(bucket_high(lats[rank - 1]), lats[-1])))
    out += ["max %d" % lats[-1], "mean %d" % (sum(lats) // n),
            "a_without_b %d" % len(pending), "b_without_a %d" % b_unmatched,
            "a_again %d" % a_again]
    if keyed:
        out.append("no_key %d" % no_key)
    out.append("lost 7")
    hist = {}
    for v in lats:
        hist[v.bit_length()] = hist.get(v.bit_length(), 0) + 1
    for k in range(min(hist), max(hist) + 1):
        out.append("hist %s %d" % (hist_label(k), hist.get(k, 0)))
    slow = sorted(pairs, key=lambda p: (-p[0], p[1], p[2], p[3]))[:15]
    for p in slow:
        out.append("slow %d %d %d %d %d%s" % (p[0], p[1], p[2], p[3], p[4],
                                              " tid=%d" % p[5] if keyed else ""))

    # the trace: each hit on its CPU, the key at its index, a lost marker
    by_id = {p.id: p for p in probes}
    cpus = {0: [], 1: []}
    for tsc, side, thread, key, cpu in events:
        pr = by_id[side]
        vals, missing = [], 0
        for i, (name, typ) in enumerate(pr.values):
            if keyed and name == "tid":
                vals.append(key if key is not None else 0)
                if key is None:
                    missing |= 1 << i
            else:
                vals.append(random_value(rng, typ))
        words = []
        for (name, typ), v in zip(pr.values, vals):
            words += words_of(typ, v)
        cpus[cpu].extend(hit_records(tsc, side, thread, missing, words))
    cpus[1].append((events[len(events) // 2][0], META_LOST, 0, 7, 0))
    for cpu, recs in cpus.items():
        recs.sort(key=lambda r: r[0])
        write_trace(os.path.join(d, "t.cpu%d" % cpu), recs, "--cpu", str(cpu))
    with open(os.path.join(d, "t.probes"), "w") as f:
        f.write("# ktrace probes 1\n")
        for p in probes:
            f.write("\n".join(p.lines()) + "\n")
    with open(os.path.join(d, "expect"), "w") as f:
        f.write("\n".join(out) + "\n")


def bench(n, d):
    probes = [Probe(1, "entry", "OSD::enqueue_op", [("type", "u32"), ("tid", "u64")]),
              Probe(2, "entry", "OSD::dequeue_op", [("tid", "u64"), ("cost", "s32")])]
    rec = struct.Struct("<QIIII")
    a, b, c = code(GRP_PROBE, 1), code(GRP_PROBE, 2), CONT | END
    paths = [os.path.join(d, "t.cpu%d" % cpu) for cpu in (0, 1)]
    for cpu, path in enumerate(paths):
        write_trace(path, [], "--cpu", str(cpu))
    out = [open(p, "ab") for p in paths]
    for i in range(n + 64):
        t = 1000 + 1000 * i
        key = i * 2654435761 & 0xffffffffffff
        f = out[i & 1]
        if i < n:       # A of pair i: type, then the key's two words
            f.write(rec.pack(t, a, 100 + i % 50, 0, 3) + rec.pack(t, c, 100 + i % 50,
                                                                  key & 0xffffffff, key >> 32))
        if i >= 64:     # B of pair i - 64, on the other CPU
            j = i - 64
            kj = j * 2654435761 & 0xffffffffffff
            lat = 500 + (j * 7919) % 100000
            tb = t + 1 + j * 7919 % 998     # before the next A of that file
            out[(j + 1) & 1].write(rec.pack(tb, b, 200, 0, kj & 0xffffffff) +
                                   rec.pack(tb, c, 200, kj >> 32, lat))
    for f in out:
        f.close()
    with open(os.path.join(d, "t.probes"), "w") as f:
        f.write("# ktrace probes 1\n")
        for p in probes:
            f.write("\n".join(p.lines()) + "\n")


def ns(us):
    whole, frac = us.split(".")
    return int(whole) * 1000 + int(frac)


def parse():
    """dtrace --latency's report as the model's lines."""
    names = {"A without B": "a_without_b", "B without A": "b_without_a",
             "A again": "a_again", "no key": "no_key", "lost": "lost", "pairs": "pairs"}
    slow = False
    for line in sys.stdin:
        line = line.rstrip("\n")
        m = re.match(r"(min|p50|p90|p99|max|mean) +(\d+\.\d{3}) us$", line)
        if m:
            print("%s %d" % (m.group(1), ns(m.group(2))))
            continue
        m = re.match(r"(A without B|B without A|A again|no key|lost|pairs) +(\d+)", line)
        if m:
            print("%s %s" % (names[m.group(1)], m.group(2)))
            continue
        m = re.match(r"(\[[^]]*\]|\[[^)]*\)) +(\d+) \|@* *\|$", line)
        if m:
            print("hist %s %s" % (m.group(1), m.group(2)))
            continue
        if line.startswith("slowest"):
            slow = True
            continue
        m = re.match(r" *(\d+\.\d{3}) +(\d+\.\d{3}) +(\d+\.\d{3}) +(\d+) +(\d+)(  \S+)?$", line)
        if slow and m:
            print("slow %d %d %d %s %s%s" % (ns(m.group(1)), ns(m.group(2)), ns(m.group(3)),
                                             m.group(4), m.group(5),
                                             " " + m.group(6).strip() if m.group(6) else ""))


def load_expect(d):
    out = []
    for line in open(os.path.join(d, "expect")):
        tsc, name, text, fields, typed = line.rstrip("\n").split("\t")
        out.append((int(tsc), name, text, json.loads(fields), json.loads(typed)))
    return out


def report(bad):
    for b in bad[:20]:
        print(b)
    return 1 if bad else 0


def check_listing(d, path):
    """Each hit's line: the name padded to 16 columns, a space, the text."""
    exp = {e[0]: e for e in load_expect(d)}
    bad, seen = [], 0
    for line in open(path, encoding="utf-8", errors="surrogateescape"):
        m = re.match(r" *\S+ +(\d+) +\S+ +(probe:.*)$", line.rstrip("\n"))
        if not m:
            continue
        tsc, rest = int(m.group(1)), m.group(2)
        seen += 1
        e = exp.get(tsc)
        want = e and e[1].ljust(16) + " " + e[2]
        if rest != want:
            bad.append("at %d:\n  dtrace %r\n  model  %r" % (tsc, rest, want))
    if seen != len(exp):
        bad.append("%d hits listed, the model has %d" % (seen, len(exp)))
    return report(bad)


def check_summary(d, path):
    want = {}
    for line in open(os.path.join(d, "counts")):
        name, n = line.rstrip("\n").split("\t")
        want[name] = int(n)
    got = {}
    for line in open(path):
        m = re.match(r"    (probe:.*\S) +(\d+)$", line.rstrip("\n"))
        if m:
            got[m.group(1)] = int(m.group(2))
    return report([] if got == want else ["-S %r\nmodel %r" % (got, want)])


def check_perfetto(d, path):
    exp = load_expect(d)
    t0 = None
    inst = []
    for ev in json.load(open(path))["traceEvents"]:
        if ev.get("ph") == "i" and ev["name"].startswith("probe:"):
            inst.append(ev)
    bad = []
    if len(inst) != len(exp):
        bad.append("%d probe instants, the model has %d hits" % (len(inst), len(exp)))
    for ev, (tsc, name, text, fields, _typed) in zip(inst, exp):
        got = (ev["name"], ev["args"]["text"], ev["args"].get("fields"))
        if got != (name, text, fields):
            bad.append("at %d:\n  perfetto %r\n  model    %r" % (tsc, got,
                                                              (name, text, fields)))
    return report(bad)


def ident(name, names):
    """ctf.c's field name: an identifier; a clash takes the value's index."""
    def plain(n):
        s = re.sub(r"[^A-Za-z0-9_]", "_", n)
        return "v" + s if s[:1].isdigit() else s
    others = [plain(n) for n in names if n != name] + ["missing"]
    s = plain(name)
    return s + "_%d" % names.index(name) if s in others else s


def check_ctf(d, path):
    """babeltrace2 --clock-cycles --no-delta: each probe event's fields."""
    exp = {e[0]: e for e in load_expect(d)}
    bad, seen = [], 0
    for line in open(path, encoding="utf-8", errors="replace"):
        m = re.match(r"\[(\d+)\] \S+ (probe:.*|unknown): \{.*\}, \{.*\}, \{ (.*) \}$",
                     line.rstrip("\n"))
        if not m:
            continue
        tsc, name, body = int(m.group(1)), m.group(2), m.group(3)
        e = exp.get(tsc)
        if not e:
            continue
        seen += 1
        if e[3] is None:    # a probe BASE.probes lacks: the unknown class
            if name != "unknown" or "code = 0x%X," % code(GRP_PROBE, int(e[1][6:])) not in body:
                bad.append("at %d: %s %s" % (tsc, name, body))
            continue
        if name != e[1]:
            bad.append("at %d: class %r, the model's %r" % (tsc, name, e[1]))
        names = [n for n, _t, _v in e[4]]
        missing = sum(1 << i for i, (_n, _t, v) in enumerate(e[4]) if v is None)
        want = ["missing = 0x%X" % missing]
        for n, typ, v in e[4]:
            if typ.startswith("str"):
                # a missing string is empty; babeltrace2 escapes its own way:
                # the plain ones compare
                b = bytes.fromhex(v) if v is not None else b""
                if re.fullmatch(rb"[ !#-\[\]-~]*", b):
                    want.append('%s = "%s"' % (ident(n, names), b.decode()))
                continue
            v = v or 0
            want.append("%s = %s" % (ident(n, names), "0x%X" % v if typ[0] == "x" else v))
        for w in want:
            if w + "," not in body + ",":
                bad.append("at %d: %r not in %r" % (tsc, w, body))
    if seen != len(exp):
        bad.append("%d hits in the CTF, the model has %d" % (seen, len(exp)))
    return report(bad)


def check_jump(report_path, listing):
    pairs = []
    for line in subprocess.run([sys.executable, __file__, "parse"], stdin=open(report_path),
                               capture_output=True, text=True).stdout.splitlines():
        if line.startswith("slow "):
            f = line.split()
            pairs.append((f[2], f[3], f[4], f[5], f[6]))
    lines = open(listing).read().splitlines()
    bad = []

    def has(t_ns, tid, key, name):
        t = "%d.%03d" % (int(t_ns) // 1000, int(t_ns) % 1000)
        pat = re.compile(r" *\S+ +%s +\S*-%s +probe:OSD::%s .*\b%s\b" %
                         (re.escape(t), tid, name, re.escape(key)))
        return any(pat.match(x) for x in lines)

    for a, b, atid, btid, key in pairs:
        if not has(a, atid, key, "enqueue_op") or not has(b, btid, key, "dequeue_op"):
            bad.append("pair %s %s %s %s %s not in the listing" % (a, b, atid, btid, key))
    if not pairs:
        bad.append("no slowest pairs in the report")
    return report(bad)


if __name__ == "__main__":
    checks = {"check-listing": check_listing, "check-summary": check_summary,
              "check-perfetto": check_perfetto, "check-ctf": check_ctf}
    if sys.argv[1] in checks:
        sys.exit(checks[sys.argv[1]](sys.argv[2], sys.argv[3]))
    if sys.argv[1] == "check-jump":
        sys.exit(check_jump(sys.argv[2], sys.argv[3]))
    if sys.argv[1] == "decode":
        decode(sys.argv[2])
    elif sys.argv[1] == "latency":
        latency(int(sys.argv[2]), sys.argv[3], "--key" in sys.argv[4:])
    elif sys.argv[1] == "bench":
        bench(int(sys.argv[2]), sys.argv[3])
    elif sys.argv[1] == "parse":
        parse()
