/* SPDX-License-Identifier: GPL-2.0 */
/*
 * calls: function calls of user threads, from their func:* events, for
 * --calltree, --callgraph, --report (--flat), the stacks views (stacks.h)
 * and the Perfetto exports: one replay, so that they all show the same
 * calls and the same repairs.
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
	uint32_t sp;			/* ENTER: stack pointer, low 32 bits, if @has_sp */
	bool has_sp;
	uint64_t entry_ns;		/* EXIT: when it was entered */
	uint64_t callees_ns;		/* EXIT: time spent in its callees */
	bool recursive;			/* EXIT: it is also running further down */
	bool before_start;		/* EXIT: entered before the trace started (a
					   forked child's callers): its time is in
					   the trace, its call is not */
	const char *text;		/* EVENT, NOTE */
};

/*
 * Stack pointers: a running function's is above those of everything it
 * calls (the stack grows down), by less than this; a greater distance is
 * another stack (sigaltstack, a coroutine's own), not a frame left behind.
 */
#define CALLS_STACK_SPAN	(256u << 20)

/* The threads of @dt's user streams, none of their events yet. */
struct calls *calls_new(struct dtrace *dt, bool with_events);

/* The formats' event(): keeps what the threads did, in dt->calls. */
void calls_event(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e);

/* Whether calls_event() kept anything of a thread. */
bool calls_has_threads(const struct calls *c);

/* When the last event calls_event() kept of @t was. */
uint64_t calls_thread_last_ns(const struct call_thread *t);

/* The threads, in the order of their first event. */
struct call_thread **calls_threads(struct calls *c, unsigned int *nr);

/* Replay @t as balanced steps; @step gets each one, through dt->call_filter's filters. */
void calls_walk(struct calls *c, struct call_thread *t,
		void (*step)(void *ctx, struct call_thread *t, const struct call_step *s),
		void *ctx);

/*
 * What the calls of one function that ended add up to (--report, --flat,
 * --callgraph).  @total counts a recursive function's outermost calls only
 * (as uftrace report does), so that it is time the function ran; @all,
 * @min and @max are of every call's own duration, inner ones too.
 */
struct call_totals {
	const struct sym_func *fn;	/* NULL: none of its calls ended */
	uint64_t calls;
	uint64_t total;			/* entry to exit, once where it recurses */
	uint64_t self;			/* total less its callees' */
	uint64_t all, min, max;		/* entry to exit of each call */
};

/* The calls EXIT step @s ends that the trace saw made: 1, 0 before its start. */
static inline unsigned int call_step_calls(const struct call_step *s)
{
	return !s->before_start;
}

/* Count EXIT step @s into @totals, by function id, @nr of them (grown). */
void calls_add_totals(const struct calls *c, struct call_totals **totals, unsigned int *nr,
		      const struct call_step *s);

/* --report's columns and --sort's keys */
enum report_key {
	REPORT_CALLS, REPORT_TOTAL, REPORT_SELF, REPORT_AVG, REPORT_MIN, REPORT_MAX,
	REPORT_NAME,
};
#define REPORT_MAX_KEYS	8

/* What main.c's options say to the report formats (dt->report; NULL: defaults). */
struct report_opts {
	enum report_key keys[REPORT_MAX_KEYS];	/* --sort */
	unsigned int nr_keys;			/* 0: the view's own order */
	bool per_thread;			/* --per-thread */
	/* --diff: the run that reads the old trace keeps its table in @old */
	bool keep_old;
	struct report_table *old;
	const char *old_path, *new_path;	/* for the diff's header */
};

/* --sort KEYS: "total,name"; a usage error if one is unknown */
void report_parse_sort(struct report_opts *opts, const char *keys);
/* Whether @fmt is one of the report's (--report, --flat, --format=csv). */
bool report_format(const struct dtrace_format *fmt);
void report_table_free(struct report_table *table);

/* Free @c and everything calls_event() kept in it. */
void calls_free(struct calls *c);

extern const struct dtrace_format dtrace_calltree;	/* calltree.c */
extern const struct dtrace_format dtrace_callgraph;	/* callgraph.c */
extern const struct dtrace_format dtrace_report;	/* report.c: --report */
extern const struct dtrace_format dtrace_flat;		/* report.c: --flat */
extern const struct dtrace_format dtrace_report_csv;	/* report.c: --format=csv */
extern const struct dtrace_format dtrace_stacks;	/* callpaths.c: --stacks */
extern const struct dtrace_format dtrace_stack_budget;	/* callpaths.c: --stack-budget */

/* Why a step was made up, in words (perfetto.c says it in "repaired"). */
extern const char *const calls_repair_text[];

#endif /* DTRACE_CALLS_H */
