// SPDX-License-Identifier: GPL-2.0
/*
 * folded (--folded, --folded-time): the user threads' calls as folded
 * stacks, the input of flamegraph.pl and speedscope: one line per distinct
 * call path, outermost function first, and its weight:
 *
 *   main;fib;fib 144
 *
 * --folded weighs a path by the calls of its last function made on that
 * path, so the lines ending in f add up to f's calls in --flat; with
 * --folded-time, by their self time in ns (what --flat's self time adds up
 * from), so all lines add up to the time of the threads' outermost calls.
 * The paths of all threads are merged (as --flat merges the functions)
 * into a tree of paths, one node per distinct path, kept in an amap from
 * (caller's path, function) to the node: memory grows with the distinct
 * paths, not with the calls.  Names are --flat's, with ';', blanks and
 * control characters (which the format cannot carry) written as '_'.
 */
#include <stdlib.h>

#include "calls.h"
#include "util.h"

struct path {
	uint32_t parent;		/* index in folded.paths, 0: none */
	const struct sym_func *fn;
	uint64_t calls, self;
};

struct folded {
	bool time;			/* weight: self ns, not calls */
	struct path *paths;		/* [0] unused: the root */
	uint32_t nr, alloc;
	struct amap by_parent_fn;	/* parent << 32 | fn id -> path index */
	uint32_t *stack;		/* the path at each depth of the thread */
	unsigned int stack_alloc;
};

static uint32_t path_of(struct folded *f, uint32_t parent, const struct sym_func *fn)
{
	uint64_t key = (uint64_t)parent << 32 | fn->id;
	uint32_t i = (uint32_t)(uintptr_t)amap_get(&f->by_parent_fn, key);

	if (i)
		return i;
	if (f->nr == UINT32_MAX)
		die("--folded: too many call paths");
	if (f->nr == f->alloc) {
		f->alloc *= 2;
		f->paths = xrealloc(f->paths, f->alloc * sizeof(*f->paths));
	}
	i = f->nr++;
	f->paths[i] = (struct path){ .parent = parent, .fn = fn };
	amap_put(&f->by_parent_fn, key, (void *)(uintptr_t)i);
	return i;
}

static void folded_step(void *ctx, struct call_thread *t, const struct call_step *s)
{
	struct folded *f = ctx;
	struct path *p;

	if (s->kind == STEP_ENTER) {
		if (s->depth >= f->stack_alloc) {
			f->stack_alloc = 2 * s->depth + 64;
			f->stack = xrealloc(f->stack, f->stack_alloc * sizeof(*f->stack));
		}
		f->stack[s->depth] = path_of(f, s->depth ? f->stack[s->depth - 1] : 0, s->fn);
	} else if (s->kind == STEP_EXIT) {
		p = &f->paths[f->stack[s->depth]];
		p->calls += call_step_calls(s);
		p->self += s->ns - s->entry_ns - s->callees_ns;
	}
}

/* A name as the format can carry it: no ';', blank or control character. */
static void put_name(struct outbuf *o, const char *name)
{
	if (!*name)
		name = "?";
	while (*name) {
		char *p = out_reserve(o), *end = p + DTRACE_LINE_MAX / 2;

		for (; *name && p < end; name++)
			*p++ = *name == ';' || (unsigned char)*name <= ' ' || *name == 0x7f ?
				'_' : *name;
		out_commit(o, p);
	}
}

static void folded_end(struct dtrace *dt, struct outbuf *o)
{
	unsigned int nr_threads, depth;
	struct call_thread **threads = calls_threads(dt->calls, &nr_threads);
	struct folded *f = dt->fmt_state;

	for (unsigned int i = 0; i < nr_threads; i++)
		calls_walk(dt->calls, threads[i], folded_step, f);
	for (uint32_t i = 1; i < f->nr; i++) {
		const struct path *p = &f->paths[i];
		char *q;

		/* the path from its outermost function: the stack, reversed */
		depth = 0;
		for (uint32_t j = i; j; j = f->paths[j].parent) {
			if (depth == f->stack_alloc) {
				f->stack_alloc = 2 * depth + 64;
				f->stack = xrealloc(f->stack, f->stack_alloc * sizeof(*f->stack));
			}
			f->stack[depth++] = j;
		}
		while (depth--) {
			put_name(o, f->paths[f->stack[depth]].fn->name);
			if (depth) {
				q = out_reserve(o);
				*q++ = ';';
				out_commit(o, q);
			}
		}
		q = out_reserve(o);
		*q++ = ' ';
		q = ktev_put_u64_width(q, f->time ? p->self : p->calls, 0);
		*q++ = '\n';
		out_commit(o, q);
	}
	free(f->paths);
	free(f->by_parent_fn.keys);
	free(f->by_parent_fn.vals);
	free(f->stack);
	free(f);
}

static void *folded_new(bool time)
{
	struct folded *f = xcalloc(1, sizeof(*f));

	f->time = time;
	f->alloc = 1024;
	f->paths = xcalloc(f->alloc, sizeof(*f->paths));
	f->nr = 1;		/* [0]: the root, parent of the outermost calls */
	return f;
}

/* --folded and --folded-time: one format but for the weight */
#define FOLDED_FORMAT(var, fmt_name, weigh_time)				\
	static void *var##_start(struct dtrace *dt, struct outbuf *o)		\
	{									\
		return folded_new(weigh_time);					\
	}									\
	const struct dtrace_format var = {					\
		.name = fmt_name,						\
		.flags = DTRACE_FMT_CALLS | DTRACE_FMT_CALL_VIEW,		\
		.start = var##_start,						\
		.event = calls_event,						\
		.end = folded_end,						\
	}

FOLDED_FORMAT(dtrace_folded, "folded", false);
FOLDED_FORMAT(dtrace_folded_time, "folded-time", true);
