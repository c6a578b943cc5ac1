// SPDX-License-Identifier: GPL-2.0
/*
 * flat (--flat): per function, over all threads: calls, total time (from
 * entry to exit, counted once where it recurses) and self time (total less
 * its callees'), most self time first.
 *
 *        CALLS      TOTAL(us)       SELF(us)  FUNCTION  (FILE:LINE)
 *          177         35.120         35.120  fib  calls.c:25
 */
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "util.h"

/* What the replay adds up, thread after thread. */
struct flat {
	const struct calls *calls;
	struct call_totals *fns;	/* by sym_func id */
	unsigned int nr;
	uint64_t repairs;
};

static void flat_step(void *ctx, struct call_thread *t, const struct call_step *s)
{
	struct flat *flat = ctx;

	if (s->kind == STEP_NOTE || (s->kind != STEP_EXIT && s->repair))
		flat->repairs++;
	if (s->kind != STEP_EXIT)
		return;
	if (s->repair)
		flat->repairs++;
	calls_add_totals(flat->calls, &flat->fns, &flat->nr, s);
}

static int by_self(const void *a, const void *b)
{
	const struct call_totals *x = a, *y = b;

	if (x->self != y->self)
		return x->self > y->self ? -1 : 1;
	if (x->calls != y->calls)
		return x->calls > y->calls ? -1 : 1;
	return strcmp(x->fn->name, y->fn->name);
}

static void flat_end(struct dtrace *dt, struct outbuf *o)
{
	unsigned int nr_threads, nr = 0;
	struct call_thread **threads = calls_threads(dt->calls, &nr_threads);
	struct flat flat = { .calls = dt->calls };
	uint64_t calls = 0;

	for (unsigned int i = 0; i < nr_threads; i++)
		calls_walk(dt->calls, threads[i], flat_step, &flat);
	for (unsigned int i = 0; i < flat.nr; i++)
		if (flat.fns[i].fn)
			flat.fns[nr++] = flat.fns[i];
	if (nr)
		qsort(flat.fns, nr, sizeof(*flat.fns), by_self);
	for (unsigned int i = 0; i < nr; i++)
		calls += flat.fns[i].calls;
	out_printf(o, "# %u functions, %llu calls in %u threads", nr, (unsigned long long)calls,
		   nr_threads);
	if (flat.repairs)
		out_printf(o, "; %llu repairs of unbalanced calls (see --calltree)",
			   (unsigned long long)flat.repairs);
	out_printf(o, "\n%12s %14s %14s  %s\n", "CALLS", "TOTAL(us)", "SELF(us)",
		   "FUNCTION  (FILE:LINE)");
	for (unsigned int i = 0; i < nr; i++) {
		const struct call_totals *f = &flat.fns[i];
		char *p = out_reserve(o);

		p = ktev_put_u64_width(p, f->calls, 12);
		*p++ = ' ';
		p = dtrace_put_us(p, f->total, 14);
		*p++ = ' ';
		p = dtrace_put_us(p, f->self, 14);
		out_commit(o, p);
		out_printf(o, "  %s", f->fn->name);
		if (f->fn->file)
			out_printf(o, "  %s:%u", f->fn->file, f->fn->line);
		out_printf(o, "\n");
	}
	free(flat.fns);
}

const struct dtrace_format dtrace_flat = {
	.name = "flat",
	.flags = DTRACE_FMT_CALLS | DTRACE_FMT_CALL_VIEW,
	.event = calls_event,
	.end = flat_end,
};
