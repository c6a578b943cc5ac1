// SPDX-License-Identifier: GPL-2.0
/*
 * callfilter: the call views' filters (see callfilter.h).
 *
 * The replay's steps are balanced (every ENTER has its EXIT, innermost
 * first), so the filter keeps a stack of its own beside it: for each
 * running call whether it is shown, and the shown call it is in.  Which
 * functions match is decided once per function.  --min-time needs a
 * call's duration at its entry: a first replay notes the duration of
 * every call, by the order of entries, which the second replay repeats.
 */
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "callfilter.h"
#include "opts.h"
#include "util.h"

void call_filter_add(struct call_filter *f, enum call_filter_list list, const char *opt,
		     const char *text)
{
	struct kt_funcpat **pats[] = { &f->keep, &f->drop, &f->libs };
	unsigned int *nrs[] = { &f->nr_keep, &f->nr_drop, &f->nr_libs };
	char err[256];

	*pats[list] = xrealloc(*pats[list], (*nrs[list] + 1) * sizeof(**pats[list]));
	if (!kt_funcpat_compile(&(*pats[list])[*nrs[list]], text, err, sizeof(err)))
		kt_usage_error("%s: %s", opt, err);
	(*nrs[list])++;
}

bool call_filter_active(const struct call_filter *f)
{
	return f && (f->nr_keep || f->nr_drop || f->nr_libs || f->max_depth || f->min_ns);
}

void call_filter_free(struct call_filter *f)
{
	for (unsigned int i = 0; i < f->nr_keep; i++)
		kt_funcpat_free(&f->keep[i]);
	for (unsigned int i = 0; i < f->nr_drop; i++)
		kt_funcpat_free(&f->drop[i]);
	for (unsigned int i = 0; i < f->nr_libs; i++)
		kt_funcpat_free(&f->libs[i]);
	free(f->keep);
	free(f->drop);
	free(f->libs);
}

/* What a function matches, decided once: bits of decided(). */
#define FN_DECIDED	1u
#define FN_KEEP		2u
#define FN_DROP		4u
#define FN_LIB		8u

struct fframe {
	const struct sym_func *fn;
	uint64_t callees_ns;		/* of the shown calls it is the caller of */
	size_t outer_shown;		/* index + 1 of the shown call it is in, 0: none */
	bool shown, keeps, drops;
	bool lib_only;			/* hidden by --exclude-lib alone: its events show */
};

struct fwalk {
	const struct call_filter *f;
	call_step_fn *step;
	void *ctx;
	uint8_t *fn_bits;		/* by function id */
	unsigned int nr_fn_bits;
	unsigned int *shown_running;	/* by function id: its shown calls running */
	unsigned int nr_running;
	struct fframe *stack;
	size_t depth, alloc;
	size_t top_shown;		/* index + 1 of the innermost shown call, 0: none */
	unsigned int shown_depth, keeps, drops;
	uint64_t *dur;			/* --min-time: by entry, its duration */
	size_t nr_dur, dur_alloc, next_entry;
	size_t *open;			/* first replay: entries running */
	size_t nr_open, open_alloc;
};

static void grow(void **p, unsigned int *nr, unsigned int need, size_t size)
{
	if (need <= *nr)
		return;
	*p = xrealloc(*p, need * size);
	memset((char *)*p + *nr * size, 0, (need - *nr) * size);
	*nr = need;
}

static bool any_match(const struct kt_funcpat *pats, unsigned int nr, const char *name)
{
	for (unsigned int i = 0; i < nr; i++)
		if (kt_funcpat_match(&pats[i], name))
			return true;
	return false;
}

static unsigned int fn_bits(struct fwalk *w, const struct sym_func *fn)
{
	const struct call_filter *f = w->f;
	uint8_t *b;

	grow((void **)&w->fn_bits, &w->nr_fn_bits, fn->id + 1 + fn->id / 2, 1);
	b = &w->fn_bits[fn->id];
	if (*b & FN_DECIDED)
		return *b;
	*b = FN_DECIDED;
	if (any_match(f->keep, f->nr_keep, fn->name))
		*b |= FN_KEEP;
	if (any_match(f->drop, f->nr_drop, fn->name))
		*b |= FN_DROP;
	if (fn->object) {
		const char *base = strrchr(fn->object, '/');

		base = base ? base + 1 : fn->object;
		if (any_match(f->libs, f->nr_libs, base) ||
		    any_match(f->libs, f->nr_libs, fn->object))
			*b |= FN_LIB;
	}
	return *b;
}

/* First replay: each call's duration, by the order of entries. */
static void note_duration(void *ctx, struct call_thread *t, const struct call_step *s)
{
	struct fwalk *w = ctx;

	if (s->kind == STEP_ENTER) {
		if (w->nr_dur == w->dur_alloc) {
			w->dur_alloc = w->dur_alloc ? 2 * w->dur_alloc : 1024;
			w->dur = xrealloc(w->dur, w->dur_alloc * sizeof(*w->dur));
		}
		if (w->nr_open == w->open_alloc) {
			w->open_alloc = w->open_alloc ? 2 * w->open_alloc : 64;
			w->open = xrealloc(w->open, w->open_alloc * sizeof(*w->open));
		}
		w->dur[w->nr_dur] = 0;
		w->open[w->nr_open++] = w->nr_dur++;
	} else if (s->kind == STEP_EXIT && w->nr_open) {
		w->dur[w->open[--w->nr_open]] = s->ns - s->entry_ns;
	}
}

static void enter(struct fwalk *w, struct call_thread *t, const struct call_step *s)
{
	const struct call_filter *f = w->f;
	unsigned int bits = fn_bits(w, s->fn);
	size_t entry = w->next_entry++;
	struct call_step out = *s;
	struct fframe *fr;
	bool in_region;

	if (w->depth == w->alloc) {
		w->alloc = w->alloc ? 2 * w->alloc : 64;
		w->stack = xrealloc(w->stack, w->alloc * sizeof(*w->stack));
	}
	fr = &w->stack[w->depth++];
	*fr = (struct fframe){ .fn = s->fn, .outer_shown = w->top_shown,
			       .keeps = bits & FN_KEEP, .drops = bits & FN_DROP };
	w->keeps += fr->keeps;
	w->drops += fr->drops;
	in_region = !w->drops && (!f->nr_keep || w->keeps) &&
		    (!f->max_depth || w->shown_depth < f->max_depth) &&
		    (!f->min_ns || (entry < w->nr_dur && w->dur[entry] >= f->min_ns));
	fr->shown = in_region && !(bits & FN_LIB);
	fr->lib_only = in_region && !fr->shown;
	if (!fr->shown)
		return;
	grow((void **)&w->shown_running, &w->nr_running, s->fn->id + 1 + s->fn->id / 2,
	     sizeof(*w->shown_running));
	w->shown_running[s->fn->id]++;
	out.depth = w->shown_depth++;
	out.caller = w->top_shown ? w->stack[w->top_shown - 1].fn : NULL;
	w->top_shown = w->depth;
	w->step(w->ctx, t, &out);
}

static void leave(struct fwalk *w, struct call_thread *t, const struct call_step *s)
{
	struct fframe *fr = &w->stack[--w->depth];
	struct call_step out = *s;

	w->keeps -= fr->keeps;
	w->drops -= fr->drops;
	if (!fr->shown)
		return;
	w->shown_running[fr->fn->id]--;
	w->top_shown = fr->outer_shown;
	out.depth = --w->shown_depth;
	out.caller = w->top_shown ? w->stack[w->top_shown - 1].fn : NULL;
	out.callees_ns = fr->callees_ns;
	out.recursive = w->shown_running[fr->fn->id] > 0;
	if (w->top_shown)
		w->stack[w->top_shown - 1].callees_ns += s->ns - s->entry_ns;
	w->step(w->ctx, t, &out);
}

static void filter_step(void *ctx, struct call_thread *t, const struct call_step *s)
{
	struct fwalk *w = ctx;
	struct call_step out;

	switch (s->kind) {
	case STEP_ENTER:
		enter(w, t, s);
		return;
	case STEP_EXIT:
		if (w->depth)
			leave(w, t, s);
		return;
	default:
		/* an event or a note: where its innermost call shows (or none runs) */
		if (w->depth ? !(w->stack[w->depth - 1].shown || w->stack[w->depth - 1].lib_only) :
			       w->f->nr_keep != 0)
			return;
		out = *s;
		out.depth = w->shown_depth;
		w->step(w->ctx, t, &out);
	}
}

void call_filter_walk(const struct call_filter *f, struct calls *c, struct call_thread *t,
		      void (*walk)(struct calls *c, struct call_thread *t, call_step_fn *step,
				   void *ctx),
		      call_step_fn *step, void *ctx)
{
	struct fwalk w = { .f = f, .step = step, .ctx = ctx };

	if (f->min_ns)
		walk(c, t, note_duration, &w);
	walk(c, t, filter_step, &w);
	free(w.fn_bits);
	free(w.shown_running);
	free(w.stack);
	free(w.dur);
	free(w.open);
}
