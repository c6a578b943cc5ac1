// SPDX-License-Identifier: GPL-2.0
/*
 * folded (--folded, --folded-time, --folded-offcpu): stacks as folded
 * lines, the input of flamegraph.pl and speedscope: one line per distinct
 * path, outermost frame first, and its weight:
 *
 *   main;fib;fib 144
 *
 * --folded weighs a path of the user threads' calls by the calls of its
 * last function made on that path, so the lines ending in f add up to f's
 * calls in --flat; with --folded-time, by their self time in ns (what
 * --flat's self time adds up from), so all lines add up to the time of the
 * threads' outermost calls; --folded-offcpu, the time threads spent off
 * CPU in ns (offcpu.c).  The paths of all threads are merged (as --flat
 * merges the functions): stacks.c keeps them, svg.c draws the same tree.
 */
#include <stdlib.h>
#include <string.h>

#include "stacks.h"
#include "util.h"

/* @len bytes at @s, in pieces out_reserve() can take: a name may be long */
static void folded_end(struct dtrace *dt, struct outbuf *o)
{
	struct stacks *s = stacks_finish(dt);
	uint32_t *path = NULL;
	unsigned int alloc = 0, depth;

	/* the paths where something ended, in the order they were first met */
	for (uint32_t i = 1; i < s->nr; i++) {
		char *q;

		if (!s->nodes[i].count)
			continue;
		depth = 0;
		for (uint32_t j = i; j; j = s->nodes[j].parent) {
			if (depth == alloc) {
				alloc = 2 * depth + 64;
				path = xrealloc(path, alloc * sizeof(*path));
			}
			path[depth++] = j;
		}
		while (depth--) {
			const char *name = s->names[s->nodes[path[depth]].name];

			out_write(o, name, strlen(name));
			if (depth)
				out_write(o, ";", 1);
		}
		q = out_reserve(o);
		*q++ = ' ';
		q = ktev_put_u64_width(q, s->nodes[i].weight, 0);
		*q++ = '\n';
		out_commit(o, q);
	}
	free(path);
	stacks_free(s);
}

const struct dtrace_format dtrace_folded = {
	.name = "folded",
	.flags = DTRACE_FMT_CALLS | DTRACE_FMT_STACKS | DTRACE_FMT_OWN_TASKS,
	.start = stacks_start,
	.event = stacks_event,
	.end = folded_end,
};
