#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""flame-check: an SVG flame graph read back against the folded lines it draws.

  flame-check.py SVG FOLDED [WIDTH]     prints "ok WHAT" or "bad WHAT: ..." lines

The SVG is parsed with xml.etree (so it must be well-formed, every name
escaped); each frame (<g> with <title> "NAME (N UNIT, P%)", <rect>) gets its
depth from its y and its caller from the geometry alone: the frame one row
below whose rectangle holds it.  From the folded lines (the ground truth, a
path's total is the sum of the lines it begins):
  frames     the frames' paths are the lines' prefixes (but those under
             0.1 px, which are left out, as flamegraph.pl leaves them out)
  totals     each frame's N is its path's total; "all" is the sum of all
  widths     each width is N * WIDTH / all, within the rounding of 2 decimals
  children   a frame is as wide as its callees and its own weight together,
             its own weight first, then its callees side by side in the order
             of their lines sorted as text, as flamegraph.pl sorts them (after
             those before them that are too narrow to draw)
  labels     a frame's text is its name, or its start and "..", or none
"""
import re
import sys
import xml.etree.ElementTree as ET

svg, folded = sys.argv[1], sys.argv[2]
width = float(sys.argv[3]) if len(sys.argv) > 3 else 1180.0
NS = "{http://www.w3.org/2000/svg}"
EPS = 0.011


def line_order(name):
    return (name + ";").encode()


def report(what, bad):
    print(("bad %s: %s" % (what, "; ".join(bad[:5]))) if bad else "ok " + what)


weights = {}
with open(folded, encoding="utf-8") as f:
    for line in f:
        path, n = line.rstrip("\n").rsplit(" ", 1)
        key = tuple(path.split(";"))
        weights[key] = weights.get(key, 0) + int(n)
totals = {}
for path, n in weights.items():
    for i in range(1, len(path) + 1):
        totals[path[:i]] = totals.get(path[:i], 0) + n
everything = sum(weights.values())

frames = []
for g in ET.parse(svg).getroot().iter(NS + "g"):
    m = re.fullmatch(r"(.*) \((\d+) (\S+), ([0-9.]+)%\)", g.find(NS + "title").text, re.S)
    r, t = g.find(NS + "rect"), g.find(NS + "text")
    frames.append({"name": m[1], "n": int(m[2]), "x": float(r.get("x")), "y": int(r.get("y")),
                   "w": float(r.get("width")), "label": None if t is None else t.text})
rows = sorted({f["y"] for f in frames}, reverse=True)
bad = [] if all(a - b == 16 for a, b in zip(rows, rows[1:])) else ["rows %s" % rows]
for f in frames:
    f["depth"] = rows.index(f["y"])
bottom = [f for f in frames if f["depth"] == 0]
if len(bottom) != 1 or bottom[0]["name"] != "all" or bottom[0]["n"] != everything or \
   abs(bottom[0]["w"] - width) > EPS:
    bad.append("bottom row %s, the lines add up to %d" % (bottom, everything))
report("all: one frame at the bottom, the sum of the lines, full width", bad)

# callers from the geometry
bad = []
for f in sorted(frames, key=lambda f: f["depth"]):
    if f["depth"] == 0:
        f["path"], f["kids"] = (), []
        continue
    under = [p for p in frames if p["depth"] == f["depth"] - 1 and
             p["x"] - EPS <= f["x"] and f["x"] + f["w"] <= p["x"] + p["w"] + EPS * f["depth"]]
    if len(under) != 1:
        bad.append("%s at x %.2f: %d frames under it" % (f["name"], f["x"], len(under)))
        f["path"], f["kids"] = (f["name"],), []
        continue
    f["path"], f["kids"] = under[0]["path"] + (f["name"],), []
    under[0]["kids"].append(f)
report("every frame stands on one frame", bad)

scale = width / everything if everything else 0
drawn = {f["path"] for f in frames if f["depth"]}
missing = [";".join(p) for p, n in totals.items() if p not in drawn and n * scale >= 0.1]
extra = [";".join(p) for p in drawn if p not in totals]
report("frames: the lines' prefixes (0.1 px or wider)", missing + extra)
report("totals: each frame's count is its path's total in the lines",
       ["%s: %d, lines %d" % (";".join(f["path"]), f["n"], totals.get(f["path"], -1))
        for f in frames if f["depth"] and f["n"] != totals.get(f["path"])])
report("widths: count * %g / %d" % (width, everything),
       ["%s: %.2f for %d" % (f["name"], f["w"], f["n"])
        for f in frames if abs(f["w"] - f["n"] * scale) > EPS])
bad = []
for f in frames:
    kids = sorted(f["kids"], key=lambda k: k["x"])
    own = f["n"] - sum(k["n"] for k in kids)	# its weight and its callees under 0.1 px
    if abs(sum(k["w"] for k in kids) + own * scale - f["w"]) > EPS * (len(kids) + 1):
        bad.append("%s: %.2f, callees %.2f + own %.2f" %
                   (f["name"], f["w"], sum(k["w"] for k in kids), own * scale))
    # a line's text goes on after a name with ';'
    if [k["name"] for k in kids] != sorted((k["name"] for k in kids), key=line_order):
        bad.append("%s: callees not in the order of their lines" % f["name"])
    # its callees in the lines, drawn or too narrow: each starts after its
    # caller's own weight and the callees before it
    names = sorted((p[-1] for p in totals if p[:-1] == f["path"]), key=line_order)
    before = {}
    for i, name in enumerate(names):
        before[name] = before[names[i - 1]] + totals[f["path"] + (names[i - 1],)] if i else \
            weights.get(f["path"], 0)
    for k in kids:
        x = f["x"] + before.get(k["name"], 0) * scale
        if abs(k["x"] - x) > EPS:
            bad.append("%s at %.2f, not %.2f" % (k["name"], k["x"], x))
report("children: its own weight, then its callees side by side", bad)
report("labels: the name, its start and .., or none",
       ["%r for %r" % (f["label"], f["name"]) for f in frames if f["label"] is not None and
        f["label"] != f["name"] and
        not (f["label"].endswith("..") and f["name"].startswith(f["label"][:-2]))])
