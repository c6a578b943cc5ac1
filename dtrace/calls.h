/* SPDX-License-Identifier: GPL-2.0 */
/*
 * calls: function calls of user threads, from their func:* events, for
 * --calltree, --callgraph, --flat, --folded and the Perfetto export: one replay, so
 * that they all show the same calls and the same repairs.
 *
 * calls_event() is the formats' event(): it keeps each user thread's calls
 * (and, with DTRACE_FMT_CALL_EVENTS, the other events of the thread: its
 * user events and the kernel's events of its tid) in dt->calls, made by
 * calls_new() before the first event.  At the end calls_walk()
 * replays one thread as balanced steps, repairing what the trace lacks:
 *
 *   - an exit whose entry came before the trace started (a forked child
 *     returning through its parent's calls, a library loaded mid-call):
 *     the function is entered at the thread's first event;
 *   - functions left without an exit (longjmp, exceptions through code
 *     not built with -finstrument-functions, lost records): they exit
 *     where the stack pointers of later calls and exits show they are
 *     gone, unless later records show they exit after all (another
 *     stack, a function inlined into itself: see enter() and
 *     frame_exits_later() in calls.c; older files without
 *     stack pointers: when an exit of a function below them comes);
 *   - functions still running when the trace ends: they exit at its end;
 *   - an exit of a function that is not running, after lost records: left
 *     out.
 *
 * Every repair comes with a note, so a repaired tree is never shown as a
 * recorded one.
 */
#ifndef DTRACE_CALLS_H
#define DTRACE_CALLS_H

#include <sys/types.h>

#include "amap.h"
#include "dtrace.h"
#include "symbols.h"

struct call_thread {
	uint32_t pid, tid;
	char comm[17];
	const char *path;		/* its stream file */
	struct sym_proc *proc;
	struct call_rec *recs;
	size_t nr, alloc;
	struct amap by_low;		/* low 32 bits of entered functions -> sym_func */
	unsigned int file;		/* index of its stream file */
};

enum call_step_kind {
	STEP_ENTER,
	STEP_EXIT,
	STEP_EVENT,			/* another event of the thread: @text */
	STEP_NOTE,			/* lost records, a left-out exit: @text */
};

/* Why a step was made up rather than recorded. */
enum call_repair {
	REPAIR_NONE,
	REPAIR_BEFORE_START,		/* ENTER: entered before the trace started */
	REPAIR_NO_EXIT,			/* EXIT: a caller exited first (longjmp?) */
	REPAIR_TRACE_END,		/* EXIT: still running at the end */
};

struct call_step {
	enum call_step_kind kind;
	enum call_repair repair;
	unsigned int depth;		/* 0 for the outermost function */
	uint64_t ns;			/* when */
	const struct sym_func *fn;	/* ENTER, EXIT: the function; NOTE: the one
					   whose exit was left out, or NULL */
	const struct sym_func *caller;	/* ENTER, EXIT: NULL at depth 0 */
	uint64_t site;			/* ENTER, EXIT: the call site, 0 if unknown */
	uint64_t entry_ns;		/* EXIT: when it was entered */
	uint64_t callees_ns;		/* EXIT: time spent in its callees */
	bool recursive;			/* EXIT: it is also running further down */
	bool before_start;		/* EXIT: entered before the trace started (a
					   forked child's callers): its time is in
					   the trace, its call is not */
	const char *text;		/* EVENT, NOTE */
};

/* The threads of @dt's user streams, none of their events yet. */
struct calls *calls_new(struct dtrace *dt, bool with_events);

/* The formats' event(): keeps what the threads did, in dt->calls. */
void calls_event(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e);

/* Whether calls_event() kept anything of a thread. */
bool calls_has_threads(const struct calls *c);

/* The threads, in the order of their first event. */
struct call_thread **calls_threads(struct calls *c, unsigned int *nr);

/* Replay @t as balanced steps; @step gets each one. */
void calls_walk(struct calls *c, struct call_thread *t,
		void (*step)(void *ctx, struct call_thread *t, const struct call_step *s),
		void *ctx);

/* What the calls of one function that ended add up to (--flat, --callgraph). */
struct call_totals {
	const struct sym_func *fn;	/* NULL: none of its calls ended */
	uint64_t calls;
	uint64_t total;			/* entry to exit, once where it recurses */
	uint64_t self;			/* total less its callees' */
};

/* The calls EXIT step @s ends that the trace saw made: 1, 0 before its start. */
static inline unsigned int call_step_calls(const struct call_step *s)
{
	return !s->before_start;
}

/* Count EXIT step @s into @totals, by function id, @nr of them (grown). */
void calls_add_totals(const struct calls *c, struct call_totals **totals, unsigned int *nr,
		      const struct call_step *s);

/* Free @c and everything calls_event() kept in it. */
void calls_free(struct calls *c);

extern const struct dtrace_format dtrace_calltree;	/* calltree.c */
extern const struct dtrace_format dtrace_callgraph;	/* callgraph.c */
extern const struct dtrace_format dtrace_flat;		/* flat.c */
extern const struct dtrace_format dtrace_folded;	/* folded.c: --folded */
extern const struct dtrace_format dtrace_folded_time;	/* folded.c: --folded-time */

/* Why a step was made up, in words (perfetto.c says it in "repaired"). */
extern const char *const calls_repair_text[];

#endif /* DTRACE_CALLS_H */
