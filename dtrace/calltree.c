// SPDX-License-Identifier: GPL-2.0
/*
 * calltree (--calltree): each user thread's calls, indented, with their
 * durations, and what else happened in the thread where it happened:
 *
 *   # thread 4243 (pid 4242, calls)
 *   #    DURATION | FUNCTION
 *                 | main() {
 *        0.120 us |   add_one();
 *                 |   / * sched:switch context switch from task 4243 to task 0 * /
 *       12.345 us | } / * main * /
 *
 * A call without callees is one line; the others show their duration on
 * the closing line.  Repairs (see calls.h) are marked "!".  Threads come
 * one after the other, in the order they started.
 */
#include <string.h>

#include "calls.h"
#include "escape.h"

#define DUR_WIDTH	12
#define MAX_INDENT	100	/* deeper calls are shown at this depth, with it */

struct tree {
	struct outbuf *o;
	bool sites;			/* --sites: where each call is */
	struct call_step pending;	/* an ENTER that may turn out a leaf */
	bool has_pending;
};

/* "    1.234 us | " or blanks, then the indentation */
static void line_start(struct tree *tr, const uint64_t *dur, unsigned int depth)
{
	char *p = out_reserve(tr->o);

	if (dur) {
		p = dtrace_put_us(p, *dur, DUR_WIDTH);
		p = memcpy(p, " us | ", 6) + 6;
	} else {
		p = memset(p, ' ', DUR_WIDTH + 3) + DUR_WIDTH + 3;
		p = memcpy(p, " | ", 3) + 3;
	}
	if (depth > MAX_INDENT) {
		p += sprintf(p, "[%u] ", depth);
		depth = MAX_INDENT;
	}
	p = memset(p, ' ', 2 * depth) + 2 * depth;
	out_commit(tr->o, p);
}

static void comments(struct tree *tr, struct call_thread *t, const struct call_step *s,
		     enum call_repair repair)
{
	char site[512];

	if (tr->sites && s->site)
		out_printf(tr->o, " /* from %s */", sym_site(t->proc, s->site, site, sizeof(site)));
	if (repair != REPAIR_NONE)
		out_printf(tr->o, " /* ! %s */", calls_repair_text[repair]);
	out_printf(tr->o, "\n");
}

static void flush_pending(struct tree *tr, struct call_thread *t)
{
	const struct call_step *s = &tr->pending;

	if (!tr->has_pending)
		return;
	tr->has_pending = false;
	line_start(tr, NULL, s->depth);
	out_printf(tr->o, "%s() {", s->fn->name);
	comments(tr, t, s, s->repair);
}

static void tree_step(void *ctx, struct call_thread *t, const struct call_step *s)
{
	struct tree *tr = ctx;
	uint64_t dur = s->ns - s->entry_ns;

	if (s->kind == STEP_EXIT && tr->has_pending) {
		/* entered and left with nothing in between: one line */
		tr->has_pending = false;
		line_start(tr, &dur, s->depth);
		out_printf(tr->o, "%s();", s->fn->name);
		comments(tr, t, s, s->repair ? s->repair : tr->pending.repair);
		return;
	}
	flush_pending(tr, t);
	switch (s->kind) {
	case STEP_ENTER:
		tr->pending = *s;
		tr->has_pending = true;
		break;
	case STEP_EXIT:
		line_start(tr, &dur, s->depth);
		out_printf(tr->o, "} /* %s */", s->fn->name);
		if (s->repair != REPAIR_NONE)
			out_printf(tr->o, " /* ! %s */", calls_repair_text[s->repair]);
		out_printf(tr->o, "\n");
		break;
	case STEP_EVENT:
		line_start(tr, NULL, s->depth);
		out_printf(tr->o, "/* %s */\n", s->text);
		break;
	case STEP_NOTE:
		line_start(tr, NULL, s->depth);
		out_printf(tr->o, "/* ! %s */\n", s->text);
		break;
	}
}

static void calltree_end(struct dtrace *dt, struct outbuf *o)
{
	unsigned int nr;
	struct call_thread **threads = calls_threads(dt->calls, &nr);
	struct tree tr = { .o = o, .sites = dt->sites };

	for (unsigned int i = 0; i < nr; i++) {
		struct call_thread *t = threads[i];

		char comm[KT_ESC_MAX(sizeof(t->comm)) + 1];	/* the trace's: escaped */

		*kt_escape(comm, sizeof(comm) - 1, t->comm, sizeof(t->comm), KT_ESC_TEXT) = '\0';
		out_printf(o, "%s# thread %u (pid %u, %s)\n#%*s | FUNCTION\n", i ? "\n" : "",
			   t->tid, t->pid, comm, DUR_WIDTH + 2, "DURATION");
		calls_walk(dt->calls, t, tree_step, &tr);
		flush_pending(&tr, t);
	}
}

const struct dtrace_format dtrace_calltree = {
	.name = "calltree",
	.flags = DTRACE_FMT_CALLS | DTRACE_FMT_CALL_EVENTS | DTRACE_FMT_CALL_VIEW,
	.event = calls_event,
	.end = calltree_end,
};
