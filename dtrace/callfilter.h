/* SPDX-License-Identifier: GPL-2.0 */
/*
 * callfilter: the call views' filters (-F, -N, --depth, --min-time,
 * --exclude-lib), applied to the replay of calls.c, so that every call
 * view (--calltree, --flat, --callgraph, --folded, the Perfetto export)
 * shows the same calls:
 *
 *   -F PAT          only the calls of functions matching PAT and their
 *                   callees, the outermost such call at depth 0
 *   -N PAT          not the calls of functions matching PAT, nor their callees
 *   --depth N       only calls less than N deep (in what is shown)
 *   --min-time T    only calls that last T or more (their callees are shorter)
 *   --exclude-lib L not the calls of functions in object L (base name, path
 *                   or pattern); their callees elsewhere are shown, under
 *                   the nearest caller that is
 *
 * A call that is not shown gives its time to the shown call it is in: the
 * self time of that one grows by it.  Patterns: funcpat.h.
 */
#ifndef DTRACE_CALLFILTER_H
#define DTRACE_CALLFILTER_H

#include <stdbool.h>
#include <stdint.h>

#include "funcpat.h"

struct call_filter {
	struct kt_funcpat *keep, *drop, *libs;	/* -F, -N, --exclude-lib */
	unsigned int nr_keep, nr_drop, nr_libs;
	unsigned int max_depth;			/* --depth; 0: no limit */
	uint64_t min_ns;			/* --min-time; 0: none */
};

enum call_filter_list { CALL_FILTER_KEEP, CALL_FILTER_DROP, CALL_FILTER_LIB };

/* Add pattern @text (kept, not copied) to a list; a usage error if it is bad. */
void call_filter_add(struct call_filter *f, enum call_filter_list list, const char *opt,
		     const char *text);
/* Whether @f filters anything (NULL: no). */
bool call_filter_active(const struct call_filter *f);
void call_filter_free(struct call_filter *f);

struct calls;
struct call_thread;
struct call_step;
typedef void call_step_fn(void *ctx, struct call_thread *t, const struct call_step *s);

/*
 * calls.c's replay of @t (@walk, which calls its step function for each
 * step) through the filters: @step gets the steps of the calls shown, at
 * their depth among those, with the caller shown and the callees' time of
 * the callees shown.  Linear in the steps.
 */
void call_filter_walk(const struct call_filter *f, struct calls *c, struct call_thread *t,
		      void (*walk)(struct calls *c, struct call_thread *t, call_step_fn *step,
				   void *ctx),
		      call_step_fn *step, void *ctx);

#endif /* DTRACE_CALLFILTER_H */
