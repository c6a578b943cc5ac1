// SPDX-License-Identifier: GPL-2.0
/*
 * svg (--format=svg): the stacks of --folded, --folded-time or
 * --folded-offcpu (stacks.h; --folded if none is given) drawn as a flame
 * graph, laid out as flamegraph.pl lays out the same folded lines: "all"
 * at the bottom, each frame as wide as its weight and its callees' (the
 * weight of the lines it begins), above its caller, its own weight first
 * and then its callees in the order flamegraph.pl sorts their lines in.
 * Self-contained SVG, no
 * script: a frame's <title> (shown on hover) says its name, weight and
 * share.  Frames narrower than 0.1 pixel are left out, as flamegraph.pl
 * leaves them out.  Colors come from a hash of the name: the same trace
 * gives the same file.
 */
#define _GNU_SOURCE		/* qsort_r */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "stacks.h"
#include "util.h"

#define SVG_WIDTH	1200
#define SVG_XPAD	10
#define SVG_FRAME	16			/* a frame's height, with a pixel between */
#define SVG_FONT	12
#define SVG_CHAR	(SVG_FONT * 0.59)	/* a character's width, about */
#define SVG_TOP		(3 * SVG_FONT)		/* the title's room */
#define SVG_BOTTOM	(2 * SVG_FONT + 10)
#define SVG_MIN_WIDTH	0.1

static const struct {
	const char *title, *unit, *about;
} kinds[] = {
	[STACKS_CALLS] = { "Flame Graph: calls", "calls",
			   "user threads' call paths, weighed by their calls (dtrace --folded)" },
	[STACKS_CALL_TIME] = { "Flame Graph: time in calls", "ns",
			       "user threads' call paths, weighed by self time (dtrace --folded-time)" },
	[STACKS_OFFCPU] = { "Off-CPU Time Flame Graph", "ns",
			    "time off CPU: task; user calls; system call; [blocked] or [preempted]"
			    " (dtrace --folded-offcpu)" },
};

/* What the layout needs of each node, by its index. */
struct frame {
	uint64_t total;			/* its weight and its callees' */
	uint64_t x;			/* left edge, in weight from the left of "all" */
	unsigned int depth;
};

/*
 * Callees in the order of their folded lines sorted as text, as
 * flamegraph.pl sorts them: names compared as if each ended with the ';'
 * that follows it in a line ("a-b" before "a", whose lines go on "a;").
 */
static int by_parent_then_line(const void *a, const void *b, void *ctx)
{
	const struct stacks *s = ctx;
	const struct stack_node *x = &s->nodes[*(const uint32_t *)a];
	const struct stack_node *y = &s->nodes[*(const uint32_t *)b];
	const unsigned char *p = (const unsigned char *)s->names[x->name];
	const unsigned char *q = (const unsigned char *)s->names[y->name];

	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	for (; *p == *q && *p; p++, q++)
		;
	return (*p ? *p : ';') - (*q ? *q : ';');
}

/* Text escaped for XML, in pieces out_reserve() can take. */
static void put_xml(struct outbuf *o, const char *s, size_t len)
{
	while (len) {
		size_t n = len < DTRACE_LINE_MAX / 8 ? len : DTRACE_LINE_MAX / 8;
		char *p = out_reserve(o);

		/* whole UTF-8 characters in each piece */
		while (n < len && ((unsigned char)s[n] & 0xc0) == 0x80 && n > 1)
			n--;
		out_commit(o, kt_escape(p, KT_ESC_MAX(n), s, n, KT_ESC_XML));
		s += n;
		len -= n;
	}
}

/* Bytes of the first @chars characters of @s (UTF-8; a stray byte is one). */
static size_t prefix_bytes(const char *s, size_t chars)
{
	size_t i = 0;

	while (s[i] && chars--)
		for (i++; ((unsigned char)s[i] & 0xc0) == 0x80; i++)
			;
	return i;
}

static size_t nr_chars(const char *s)
{
	size_t n = 0;

	for (; *s; s++)
		n += ((unsigned char)*s & 0xc0) != 0x80;
	return n;
}

static void put_frame(struct outbuf *o, const struct stacks *s, uint32_t i,
		      const struct frame *f, uint64_t all, double scale, unsigned int height)
{
	const char *name = i ? s->names[s->nodes[i].name] : "all";
	double x = SVG_XPAD + f->x * scale, w = f->total * scale;
	unsigned int y = height - SVG_BOTTOM - (f->depth + 1) * SVG_FRAME;
	size_t fit = (size_t)(w / SVG_CHAR), len = strlen(name);
	uint32_t h = 2166136261u;

	for (const char *c = name; *c; c++)
		h = (h ^ (unsigned char)*c) * 16777619u;
	out_printf(o, "<g>\n<title>");
	put_xml(o, name, len);
	out_printf(o, " (%llu %s, %.2f%%)</title>\n", (unsigned long long)f->total,
		   kinds[s->kind].unit, 100.0 * f->total / all);
	/* warm colors for calls, blue for time off CPU, as flamegraph.pl's hot and io */
	if (s->kind == STACKS_OFFCPU)
		out_printf(o, "<rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\" "
			   "fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>\n", x, y, w, SVG_FRAME - 1,
			   80 + (h & 63), 80 + (h & 63), 190 + (h >> 8) % 56);
	else
		out_printf(o, "<rect x=\"%.2f\" y=\"%u\" width=\"%.2f\" height=\"%u\" "
			   "fill=\"rgb(%u,%u,%u)\" rx=\"2\" ry=\"2\"/>\n", x, y, w, SVG_FRAME - 1,
			   205 + h % 51, (h >> 8) % 231, (h >> 16) % 56);
	/* the name, or as much of it as fits, or none under three characters */
	if (fit >= 3) {
		out_printf(o, "<text x=\"%.2f\" y=\"%u\">", x + 3, y + SVG_FRAME - 5);
		if (nr_chars(name) <= fit) {
			put_xml(o, name, len);
		} else {
			put_xml(o, name, prefix_bytes(name, fit - 2));
			out_printf(o, "..");
		}
		out_printf(o, "</text>\n");
	}
	out_printf(o, "</g>\n");
}

static void svg_end(struct dtrace *dt, struct outbuf *o)
{
	struct stacks *s = stacks_finish(dt);
	struct frame *f = xcalloc(s->nr, sizeof(*f));
	uint32_t *order = xmalloc(s->nr * sizeof(*order));
	unsigned int max_depth = 0, height;
	double scale;

	for (uint32_t i = 0; i < s->nr; i++) {
		f[i].total = s->nodes[i].weight;
		order[i] = i;
	}
	for (uint32_t i = s->nr - 1; i > 0; i--)	/* a parent comes before its children */
		f[s->nodes[i].parent].total += f[i].total;
	/* its own weight first: its line sorts before those of its callees */
	qsort_r(order + 1, s->nr - 1, sizeof(*order), by_parent_then_line, s);
	for (uint32_t i = 1; i < s->nr; i++) {
		const struct stack_node *n = &s->nodes[order[i]];

		/* sorted by parent: a parent's place is known before its callees' */
		if (i == 1 || n->parent != s->nodes[order[i - 1]].parent)
			f[order[i]].x = f[n->parent].x + s->nodes[n->parent].weight;
		else
			f[order[i]].x = f[order[i - 1]].x + f[order[i - 1]].total;
		f[order[i]].depth = f[n->parent].depth + 1;
		if (f[order[i]].depth > max_depth)
			max_depth = f[order[i]].depth;
	}
	height = SVG_TOP + (max_depth + 1) * SVG_FRAME + SVG_BOTTOM;
	scale = f[0].total ? (double)(SVG_WIDTH - 2 * SVG_XPAD) / f[0].total : 0;

	out_printf(o, "<?xml version=\"1.0\" encoding=\"UTF-8\" standalone=\"no\"?>\n"
		   "<svg version=\"1.1\" width=\"%u\" height=\"%u\" viewBox=\"0 0 %u %u\" "
		   "xmlns=\"http://www.w3.org/2000/svg\" font-family=\"Verdana, sans-serif\" "
		   "font-size=\"%u\">\n", SVG_WIDTH, height, SVG_WIDTH, height, SVG_FONT);
	out_printf(o, "<rect x=\"0\" y=\"0\" width=\"%u\" height=\"%u\" fill=\"#f8f8f8\"/>\n",
		   SVG_WIDTH, height);
	out_printf(o, "<text x=\"%u\" y=\"%u\" text-anchor=\"middle\" font-size=\"17\">%s</text>\n",
		   SVG_WIDTH / 2, 2 * SVG_FONT, kinds[s->kind].title);
	out_printf(o, "<text x=\"%u\" y=\"%u\" fill=\"#606060\">%s</text>\n", SVG_XPAD,
		   height - SVG_BOTTOM / 2, f[0].total ? kinds[s->kind].about : "no stacks in the trace");
	if (f[0].total)
		for (uint32_t i = 0; i < s->nr; i++)
			if (f[order[i]].total * scale >= SVG_MIN_WIDTH)
				put_frame(o, s, order[i], &f[order[i]], f[0].total, scale, height);
	out_printf(o, "</svg>\n");
	free(order);
	free(f);
	stacks_free(s);
}

const struct dtrace_format dtrace_svg = {
	.name = "svg",
	.flags = DTRACE_FMT_CALLS | DTRACE_FMT_STACKS | DTRACE_FMT_OWN_TASKS,
	.start = stacks_start,
	.event = stacks_event,
	.end = svg_end,
};
