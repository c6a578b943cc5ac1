// SPDX-License-Identifier: GPL-2.0
/*
 * callpaths (--stacks, --stack-budget): call paths of the user threads, from
 * the same replay as the other call views (calls.c), written as the
 * libktrace's ktrace_user_stack_print() writes them: outermost first, each
 * function after as many dashes as its depth, "main - parse -- expr".
 *
 * --stacks: each thread's path at its last record: after a crash, an
 * abort() or a SIGKILL, what every thread was doing (the frames the
 * replay closes at the end of the trace; none: it had returned from all).
 *
 * --stack-budget: per thread, the deepest path (depth: its frames) and
 * the path that used the most stack, with how many bytes: the stack
 * pointer the hooks recorded at the entry of the path's outermost
 * function on that stack less that at the entry of its innermost one.
 * That leaves out the outermost function's frame above its stack pointer
 * (its locals, its return address) and what the innermost one's
 * uninstrumented callees use, and counts the innermost's locals: the
 * stack used by instrumented code from the outermost function on.  A
 * signal handler on a sigaltstack is a path on another stack: its bytes
 * are counted from its own outermost frame there.  Then the deepest and
 * the largest of all threads.
 */
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "util.h"

/* Past this depth, "-(40)-" instead of 40 dashes (ktrace_user_stack_print()'s). */
#define DASHES_MAX	32

/* A path kept: its functions, outermost first. */
struct path {
	const struct sym_func **fns;
	unsigned int nr;
	uint64_t ns;			/* when it was reached */
};

struct stacks {
	bool budget;			/* --stack-budget, else --stacks */
	/* the thread being replayed: its stack, by depth */
	const struct sym_func **fns;
	uint32_t *sp;
	unsigned int *base;		/* depth of the outermost frame on the same stack */
	bool *has_sp;
	unsigned int alloc;
	/* --stacks: the path at the end; --stack-budget: the deepest, the largest */
	struct path end, deepest, largest;
	uint64_t largest_bytes;
	bool pending_deepest, pending_largest;	/* reached: kept at the next exit */
	bool ended;
	/* --stack-budget: of all threads */
	unsigned int all_depth;
	uint64_t all_bytes;
	const struct call_thread *all_deepest, *all_largest;
};

static void keep_path(struct stacks *st, struct path *p, unsigned int depth, uint64_t ns)
{
	p->fns = xrealloc(p->fns, (depth + 1) * sizeof(*p->fns));
	memcpy(p->fns, st->fns, (depth + 1) * sizeof(*p->fns));
	p->nr = depth + 1;
	p->ns = ns;
}

static void stacks_step(void *ctx, struct call_thread *t, const struct call_step *s)
{
	struct stacks *st = ctx;
	unsigned int d = s->depth;

	if (s->kind == STEP_ENTER) {
		if (d >= st->alloc) {
			st->alloc = 2 * d + 64;
			st->fns = xrealloc(st->fns, st->alloc * sizeof(*st->fns));
			st->sp = xrealloc(st->sp, st->alloc * sizeof(*st->sp));
			st->base = xrealloc(st->base, st->alloc * sizeof(*st->base));
			st->has_sp = xrealloc(st->has_sp, st->alloc * sizeof(*st->has_sp));
		}
		st->fns[d] = s->fn;
		st->sp[d] = s->sp;
		st->has_sp[d] = s->has_sp;
		/* the outermost frame of this stack: modular differences of the low 32 bits */
		st->base[d] = d && s->has_sp && st->has_sp[d - 1] &&
			(uint32_t)(st->sp[d - 1] - s->sp + CALLS_STACK_SPAN) < 2 * CALLS_STACK_SPAN ?
			st->base[d - 1] : d;
		if (!st->budget)
			return;
		if (!st->deepest.nr || d + 1 > st->deepest.nr) {
			st->deepest.nr = d + 1;
			st->deepest.ns = s->ns;
			st->pending_deepest = true;
		}
		if (s->has_sp) {
			int32_t bytes = (int32_t)(st->sp[st->base[d]] - s->sp);

			if (bytes > 0 && (uint64_t)bytes > st->largest_bytes) {
				st->largest_bytes = bytes;
				st->largest.nr = d + 1;
				st->largest.ns = s->ns;
				st->pending_largest = true;
			}
		}
	} else if (s->kind == STEP_EXIT) {
		/* the stack is still whole down to the exiting frame */
		if (st->pending_deepest)
			keep_path(st, &st->deepest, st->deepest.nr - 1, st->deepest.ns);
		if (st->pending_largest)
			keep_path(st, &st->largest, st->largest.nr - 1, st->largest.ns);
		st->pending_deepest = st->pending_largest = false;
		if (s->repair == REPAIR_TRACE_END && !st->ended) {
			keep_path(st, &st->end, d, s->ns);
			st->ended = true;
		}
	}
}

/* "main - parse -- expr", and the end of the line */
static void put_path(struct outbuf *o, const struct path *p)
{
	char *q;

	if (!p->nr)
		out_write(o, "(none running)", strlen("(none running)"));
	for (unsigned int d = 0; d < p->nr; d++) {
		q = out_reserve(o);
		if (d) {
			*q++ = ' ';
			if (d <= DASHES_MAX) {
				memset(q, '-', d);
				q += d;
			} else {
				*q++ = '-';
				*q++ = '(';
				q = ktev_put_u64(q, d);
				*q++ = ')';
				*q++ = '-';
			}
			*q++ = ' ';
		}
		out_commit(o, q);
		out_write(o, p->fns[d]->name, strlen(p->fns[d]->name));
	}
	q = out_reserve(o);
	*q++ = '\n';
	out_commit(o, q);
}

/* "PID/TID COMM " columns */
static void put_thread(struct outbuf *o, const struct call_thread *t)
{
	char *p = out_reserve(o), *start = p;

	p = ktev_put_u64(p, t->pid);
	*p++ = '/';
	p = ktev_put_u64(p, t->tid);
	p = ktev_put_pad(p, p - start, 16);
	*p++ = ' ';
	start = p;
	for (const char *c = t->comm; *c && c < t->comm + sizeof(t->comm); c++)
		*p++ = (unsigned char)*c <= ' ' || *c == 0x7f ? '_' : *c;
	p = ktev_put_pad(p, p - start, 16);
	*p++ = ' ';
	out_commit(o, p);
}

static void put_row(struct outbuf *o, const struct call_thread *t, uint64_t ns,
		    const char *what, uint64_t value, const struct path *path)
{
	char *p;

	put_thread(o, t);
	p = out_reserve(o);
	p = dtrace_put_us(p, ns, 14);
	*p++ = ' ';
	if (what) {
		memcpy(p, what, strlen(what));
		p += strlen(what);
	}
	p = ktev_put_u64_width(p, value, 8);
	*p++ = ' ';
	*p++ = ' ';
	out_commit(o, p);
	put_path(o, path);
}

static void stacks_end(struct dtrace *dt, struct outbuf *o)
{
	unsigned int nr_threads;
	struct call_thread **threads = calls_threads(dt->calls, &nr_threads);
	struct stacks *st = dt->fmt_state;

	if (st->budget)
		out_printf(o, "# per thread: the deepest call path (DEPTH: its frames) and the one "
			   "using the most stack\n# (BYTES: from its outermost function's stack "
			   "pointer to its innermost one's)\n%-16s %-16s %14s %14s  %s\n",
			   "PID/TID", "COMM", "REACHED(us)", "DEPTH/BYTES", "CALL PATH");
	else
		out_printf(o, "# the call path of each thread at its last record\n"
			   "%-16s %-16s %14s %8s  %s\n", "PID/TID", "COMM", "LAST(us)", "DEPTH",
			   "CALL PATH");
	for (unsigned int i = 0; i < nr_threads; i++) {
		const struct call_thread *t = threads[i];

		st->end.nr = st->deepest.nr = st->largest.nr = 0;
		st->largest_bytes = 0;
		st->ended = st->pending_deepest = st->pending_largest = false;
		calls_walk(dt->calls, threads[i], stacks_step, st);
		if (!st->budget) {
			put_row(o, t, calls_thread_last_ns(t), NULL, st->end.nr, &st->end);
			continue;
		}
		put_row(o, t, st->deepest.ns, "depth ", st->deepest.nr, &st->deepest);
		if (st->largest.nr)
			put_row(o, t, st->largest.ns, "bytes ", st->largest_bytes, &st->largest);
		if (st->deepest.nr > st->all_depth) {
			st->all_depth = st->deepest.nr;
			st->all_deepest = t;
		}
		if (st->largest_bytes > st->all_bytes) {
			st->all_bytes = st->largest_bytes;
			st->all_largest = t;
		}
	}
	if (st->budget && st->all_deepest)
		out_printf(o, "# all threads: depth %u (tid %u), stack %llu bytes (tid %u)\n",
			   st->all_depth, st->all_deepest->tid, (unsigned long long)st->all_bytes,
			   st->all_largest ? st->all_largest->tid : 0);
	free(st->fns);
	free(st->sp);
	free(st->base);
	free(st->has_sp);
	free(st->end.fns);
	free(st->deepest.fns);
	free(st->largest.fns);
	free(st);
}

/* --stacks and --stack-budget: one format but for what they keep */
#define STACKS_FORMAT(var, fmt_name, is_budget)					\
	static void *var##_start(struct dtrace *dt, struct outbuf *o)		\
	{									\
		struct stacks *st = xcalloc(1, sizeof(*st));			\
										\
		st->budget = is_budget;						\
		return st;							\
	}									\
	const struct dtrace_format var = {					\
		.name = fmt_name,						\
		.flags = DTRACE_FMT_CALLS | DTRACE_FMT_CALL_VIEW,		\
		.start = var##_start,						\
		.event = calls_event,						\
		.end = stacks_end,						\
	}

STACKS_FORMAT(dtrace_stacks, "stacks", false);
STACKS_FORMAT(dtrace_stack_budget, "stack-budget", true);
