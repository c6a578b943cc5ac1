// SPDX-License-Identifier: GPL-2.0
/*
 * calls: keep each user thread's calls and replay them balanced, repaired
 * where the trace is not (see calls.h).
 *
 * A thread is a user stream file.  Kernel events join the thread whose tid
 * they carry (a context switch also joins the thread it switches to), so
 * that a call tree shows what the kernel did while the function ran.
 */
#include <stdlib.h>
#include <string.h>

#include "amap.h"
#include "calls.h"
#include "callfilter.h"
#include "util.h"

enum rec_kind { REC_ENTRY, REC_EXIT, REC_TEXT, REC_LOST };

/*
 * 24 bytes an event: traces of millions of calls are kept whole.  Symbols
 * are looked up once, here.  @aux holds the kind in its top bits (no user
 * address or count comes near them).
 */
struct call_rec {
	uint64_t ns;
	uint64_t aux;			/* ENTRY: call site, 0 if unknown; TEXT: text;
					   LOST: how many; | kind << 61 | has sp << 60 */
	uint32_t fn;			/* ENTRY, EXIT: sym_func id */
	uint32_t sp;			/* ENTRY, EXIT: stack pointer, low 32 bits */
};

#define REC_KIND_SHIFT	61
#define REC_HAS_SP	(1ull << 60)
#define REC_VALUE_MASK	(REC_HAS_SP - 1)
#define REC_KIND(r)	((unsigned int)((r)->aux >> REC_KIND_SHIFT))
#define REC_VALUE(r)	((r)->aux & REC_VALUE_MASK)

/*
 * A frame of the replay.  @below_same: index + 1 of the next frame further
 * down running the same function (0: none), so that finding a function's
 * innermost frame and knowing it recurses take no walk down the stack.
 */
struct frame {
	const struct sym_func *fn;
	uint64_t site, entry_ns, callees_ns;
	uint32_t sp;
	bool has_sp, before_start;
	size_t below_same;
};

const char *const calls_repair_text[] = {
	[REPAIR_BEFORE_START] = "entered before the trace started",
	[REPAIR_NO_EXIT] = "no exit recorded: a caller returned first (longjmp?)",
	[REPAIR_TRACE_END] = "still running when the trace ended",
};

struct calls {
	struct sym_db *syms;
	const struct call_filter *filter;	/* -F, -N, ...: NULL if none */
	bool with_events;		/* the threads' other events too */
	struct call_thread **by_file;	/* user streams' threads, by file index */
	struct call_thread **sorted;
	unsigned int nr_files, nr_threads;
	struct amap by_tid;		/* dtrace_task_key() -> its thread, for kernel events */
	char *text;			/* event texts, NUL-separated */
	size_t text_len, text_cap;
};

static void add_rec(struct call_thread *t, uint64_t ns, uint64_t kind, uint64_t aux,
		    uint32_t fn, uint32_t sp)
{
	if (t->nr == t->alloc) {
		t->alloc = t->alloc ? 2 * t->alloc : 1024;
		t->recs = xrealloc(t->recs, t->alloc * sizeof(*t->recs));
	}
	t->recs[t->nr++] = (struct call_rec){ ns, (aux & ((1ull << REC_KIND_SHIFT) - 1)) |
					      kind << REC_KIND_SHIFT,
					      fn, sp };
}

/* @key: dtrace_task_key() */
static struct call_thread *thread_of_tid(struct calls *c, uint64_t key)
{
	return amap_get(&c->by_tid, key);
}

/* One thread per user stream, all made before the first event. */
struct calls *calls_new(struct dtrace *dt, bool with_events)
{
	struct calls *c = xcalloc(1, sizeof(*c));

	c->syms = dt->syms;
	c->filter = call_filter_active(dt->call_filter) ? dt->call_filter : NULL;
	c->with_events = with_events;
	c->nr_files = kt_merge_nr_files(dt->merge);
	c->by_file = xcalloc(c->nr_files, sizeof(*c->by_file));
	for (unsigned int i = 0; i < c->nr_files; i++) {
		const struct ktfile_reader *f = kt_merge_file(dt->merge, i);
		struct call_thread *t;

		if (f->hdr.cpu >= 0)
			continue;
		t = xcalloc(1, sizeof(*t));
		t->pid = f->hdr.pid;
		t->tid = f->hdr.tid;
		memcpy(t->comm, f->hdr.comm, sizeof(f->hdr.comm));
		t->path = f->path;
		t->file = i;
		c->by_file[i] = t;
		if (!thread_of_tid(c, dtrace_task_key(dt, i, t->tid)))
			amap_put(&c->by_tid, dtrace_task_key(dt, i, t->tid), t);
	}
	return c;
}

static uint64_t add_text(struct calls *c, struct dtrace *dt, const struct dtrace_event *e)
{
	uint64_t off;
	char *p;

	if (c->text_cap - c->text_len < KTEV_TEXT_MAX + 256) {
		c->text_cap = c->text_cap ? 2 * c->text_cap : 1 << 20;
		c->text = xrealloc(c->text, c->text_cap);
	}
	off = c->text_len;
	p = c->text + off;
	p = dtrace_put_event(dt, p, e, 0);	/* as the listing says it */
	*p++ = '\0';
	c->text_len = p - c->text;
	return off;
}

/* Its process's symbols, loaded when the thread is first needed. */
static struct sym_proc *proc_of(struct calls *c, struct call_thread *t)
{
	if (!t->proc)
		t->proc = sym_proc(c->syms, t->pid, t->path);
	return t->proc;
}

void calls_event(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e)
{
	const struct ktfile_event *ev = e->ev;
	const struct ktfile_reader *f = kt_merge_file(dt->merge, e->file);
	struct calls *c = dt->calls;
	struct sym_call_event call;
	struct call_thread *t;
	uint64_t lost;

	if (f->hdr.cpu < 0) {
		t = c->by_file[e->file];
		proc_of(c, t);
		if (sym_call_event(ev, &call)) {
			const struct sym_func *fn;

			/* func:leave has the low bits of the function: those of an entry */
			if (call.low_only) {
				fn = amap_get(&t->by_low, call.fn);
				if (!fn)
					fn = sym_func_low(t->proc, call.fn);
			} else {
				fn = sym_func_at(t->proc, call.fn, ev->tsc);
				if (call.has_sp)
					amap_put(&t->by_low, (uint32_t)call.fn, (void *)fn);
			}

			add_rec(t, e->ns, call.entry ? REC_ENTRY : REC_EXIT,
				call.site | (call.has_sp ? REC_HAS_SP : 0), fn->id, call.sp);
			return;
		}
		if (ktev_lost_count(ev->code, ev->args, ev->nr_args, &lost)) {
			add_rec(t, e->ns, REC_LOST, lost, 0, 0);
			return;
		}
	} else {
		t = thread_of_tid(c, dtrace_task_key(dt, e->file, ev->tid));
		if (ev->code == KTRACE_sched_switch && ev->args[1] != ev->tid) {
			struct call_thread *to = thread_of_tid(c, dtrace_task_key(dt, e->file,
										  ev->args[1]));

			if (to && c->with_events) {
				proc_of(c, to);
				add_rec(to, e->ns, REC_TEXT, add_text(c, dt, e), 0, 0);
			}
		}
	}
	if (!t || !c->with_events)
		return;
	proc_of(c, t);
	add_rec(t, e->ns, REC_TEXT, add_text(c, dt, e), 0, 0);
}

static int by_first_event(const void *a, const void *b)
{
	const struct call_thread *x = *(struct call_thread *const *)a;
	const struct call_thread *y = *(struct call_thread *const *)b;

	if (x->recs[0].ns != y->recs[0].ns)
		return x->recs[0].ns < y->recs[0].ns ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

bool calls_has_threads(const struct calls *c)
{
	for (unsigned int i = 0; i < c->nr_files; i++)
		if (c->by_file[i] && c->by_file[i]->nr)
			return true;
	return false;
}

uint64_t calls_thread_last_ns(const struct call_thread *t)
{
	return t->nr ? t->recs[t->nr - 1].ns : 0;
}

struct call_thread **calls_threads(struct calls *c, unsigned int *nr)
{
	if (!c->sorted) {
		c->sorted = xcalloc(c->nr_files + 1, sizeof(*c->sorted));
		for (unsigned int i = 0; i < c->nr_files; i++)
			if (c->by_file[i] && c->by_file[i]->nr)
				c->sorted[c->nr_threads++] = c->by_file[i];
		qsort(c->sorted, c->nr_threads, sizeof(*c->sorted), by_first_event);
		if (!c->nr_threads)
			pr_warn("no user thread has events here: the calls come from libktrace's "
				"files (ktrace-run)");
	}
	*nr = c->nr_threads;
	return c->sorted;
}

/* ---- the replay ----------------------------------------------------------- */

struct walk {
	const struct calls *c;
	struct call_thread *t;
	void (*step)(void *ctx, struct call_thread *t, const struct call_step *s);
	void *ctx;
	struct frame *stack;
	size_t depth, alloc;
	size_t *top_of;		/* by function id: index + 1 of its innermost frame */
	unsigned int nr_fns;
	size_t at;		/* index of the record being replayed */
	uint32_t *decides;	/* by record: see match_balanced() */
};

static void no_step(void *ctx, struct call_thread *t, const struct call_step *s)
{
}

static size_t *top_of(struct walk *w, const struct sym_func *fn)
{
	if (fn->id >= w->nr_fns) {
		unsigned int grown = sym_nr_funcs(w->c->syms);

		w->top_of = xrealloc(w->top_of, grown * sizeof(*w->top_of));
		memset(w->top_of + w->nr_fns, 0, (grown - w->nr_fns) * sizeof(*w->top_of));
		w->nr_fns = grown;
	}
	return &w->top_of[fn->id];
}

static void push(struct walk *w, const struct sym_func *fn, uint64_t site, uint64_t ns,
		 bool has_sp, uint32_t sp, enum call_repair repair)
{
	struct call_step s = {
		.kind = STEP_ENTER, .repair = repair, .depth = w->depth, .ns = ns, .fn = fn,
		.caller = w->depth ? w->stack[w->depth - 1].fn : NULL, .site = site,
		.sp = sp & ~1u, .has_sp = has_sp,	/* bit 0: an exit's flag (entered before the trace) */
	};
	size_t *top = top_of(w, fn);

	if (w->depth == w->alloc) {
		w->alloc = w->alloc ? 2 * w->alloc : 64;
		w->stack = xrealloc(w->stack, w->alloc * sizeof(*w->stack));
	}
	w->stack[w->depth++] = (struct frame){ fn, site, ns, 0, sp, has_sp,
					       repair == REPAIR_BEFORE_START, *top };
	*top = w->depth;
	w->step(w->ctx, w->t, &s);
}

static void pop(struct walk *w, uint64_t ns, enum call_repair repair)
{
	struct frame *f = &w->stack[--w->depth];
	struct call_step s = {
		.kind = STEP_EXIT, .repair = repair, .depth = w->depth, .ns = ns, .fn = f->fn,
		.caller = w->depth ? w->stack[w->depth - 1].fn : NULL, .site = f->site,
		.entry_ns = f->entry_ns, .callees_ns = f->callees_ns,
		.recursive = f->below_same != 0, .before_start = f->before_start,
	};

	*top_of(w, f->fn) = f->below_same;
	if (w->depth)
		w->stack[w->depth - 1].callees_ns += ns - f->entry_ns;
	w->step(w->ctx, w->t, &s);
}

static void note(struct walk *w, enum call_step_kind kind, uint64_t ns, const char *text,
		 const struct sym_func *fn)
{
	struct call_step s = { .kind = kind, .depth = w->depth, .ns = ns, .text = text, .fn = fn };

	w->step(w->ctx, w->t, &s);
}

/* Stack pointer @sp less @f's (negative: below it), if on the same stack. */
static bool sp_diff(const struct frame *f, uint32_t sp, int64_t *by)
{
	*by = (int32_t)(sp - f->sp);
	return f->has_sp && (uint64_t)(*by < 0 ? -*by : *by) < CALLS_STACK_SPAN;
}

/*
 * For each entry, the record that says whether the frame below it goes on:
 * reading the thread's records as if every call returned (each exit
 * closes the latest open entry), the first record after the entry's exit
 * and the calls of its later siblings that is not an entry (an exit, lost
 * records) and not a text; t->nr if there is none, or the entry has no
 * exit.  Computed once per thread, the first time a frame's fate is in
 * doubt: matching forward, then backwards, each entry from the one after
 * its exit (whose answer is known by then): linear.  Lost records end the
 * matching: what came before them is not matched.
 */
static void match_balanced(struct walk *w)
{
	const struct call_thread *t = w->t;
	uint32_t *open = xcalloc(t->nr + 1, sizeof(*open)), *d;
	size_t nr_open = 0;

	d = w->decides = xcalloc(t->nr + 1, sizeof(*w->decides));
	for (size_t i = 0; i < t->nr; i++) {
		d[i] = t->nr;
		switch (REC_KIND(&t->recs[i])) {
		case REC_ENTRY:
			open[nr_open++] = i;
			break;
		case REC_EXIT:
			if (nr_open)
				d[open[--nr_open]] = i + 1;	/* for now: after its exit */
			break;
		case REC_LOST:
			nr_open = 0;
			break;
		}
	}
	free(open);
	d[t->nr] = t->nr;
	for (size_t i = t->nr; i-- > 0; ) {
		switch (REC_KIND(&t->recs[i])) {
		case REC_TEXT:
			d[i] = d[i + 1];
			break;
		case REC_ENTRY:
			d[i] = d[i] < t->nr ? d[d[i]] : t->nr;
			break;
		default:
			d[i] = i;
			break;
		}
	}
}

/*
 * Whether frame @f, which the stack pointer of the entry being replayed
 * says is gone, exits later all the same: read as balanced, the first exit
 * after the entry's own calls and those of its siblings is @f's (its
 * function, its stack pointer).  A signal handler on another stack, a
 * makecontext() stack inside a frame, and a function GCC inlined into
 * itself (its inlined calls share its stack pointer) all look like frames
 * left behind and are not; after a longjmp the frames it left never exit.
 * @below: the frame under @f, or NULL.
 */
static bool frame_exits_later(struct walk *w, const struct frame *f, const struct frame *below)
{
	const struct call_thread *t = w->t;
	const struct call_rec *r;
	uint32_t sp;
	size_t j;

	if (!f->has_sp || t->nr >= UINT32_MAX)
		return false;
	if (!w->decides)
		match_balanced(w);
	j = w->decides[w->at];
	if (j >= t->nr)
		return false;
	r = &t->recs[j];
	if (REC_KIND(r) != REC_EXIT || !(r->aux & REC_HAS_SP) || r->fn != f->fn->id)
		return false;
	sp = r->sp & ~1u;
	if (r->sp & 1)
		return sp == f->sp;
	/* the hook tail-called: the frame's CFA, above it, at most its caller's */
	return (int32_t)(sp - f->sp) > 0 &&
		(!below || !below->has_sp || (int32_t)(below->sp - sp) >= 0);
}

/* The frame on top of the stack, unless later records show it exits. */
static bool top_left_behind(struct walk *w)
{
	return !frame_exits_later(w, &w->stack[w->depth - 1],
				  w->depth > 1 ? &w->stack[w->depth - 2] : NULL);
}

/*
 * An entry at stack pointer @sp.  The hooks' stack pointer is the caller's
 * after its prologue: a running function's is above that of everything it
 * calls, or equal where the function was inlined into it (GCC still calls
 * the hooks for inlined functions, with the call site of the function
 * they are inlined into).  So:
 *  - the frames entered below @sp are no longer running (a longjmp, an
 *    exception or a switch left them);
 *  - a frame entered at @sp is one too, unless the new function is
 *    inlined into it: a different function, with the same call site;
 *  - frames entered above @sp may be left behind too, by a function with
 *    a smaller frame than the new one's: where the call site is in the
 *    code of a function running further down, that function is the
 *    caller, and the frames above it not inlined into it are gone;
 *  - unless later records show such a frame exits (frame_exits_later()):
 *    then the new entry runs on another stack or is inlined into it.
 */
static void enter(struct walk *w, const struct call_rec *r)
{
	const struct sym_func *fn = sym_func_by_id(w->c->syms, r->fn), *caller;
	uint64_t site = REC_VALUE(r) & ~REC_HAS_SP;
	const struct frame *top, *c;
	size_t at;
	int64_t by;

	if (!(r->aux & REC_HAS_SP))
		goto push;
	while (w->depth && sp_diff(top = &w->stack[w->depth - 1], r->sp, &by) &&
	       (by > 0 || (by == 0 && (top->site != site || top->fn == fn))) &&
	       top_left_behind(w))
		pop(w, r->ns, REPAIR_NO_EXIT);
	if (site && w->depth && sp_diff(top = &w->stack[w->depth - 1], r->sp, &by) && by < 0 &&
	    (caller = sym_func(w->t->proc, site - 1)) != top->fn &&
	    (at = *top_of(w, caller)) && sp_diff(c = &w->stack[at - 1], r->sp, &by) && by < 0) {
		uint32_t caller_sp = c->sp;

		while (sp_diff(&w->stack[w->depth - 1], caller_sp, &by) && by > 0 &&
		       top_left_behind(w))
			pop(w, r->ns, REPAIR_NO_EXIT);
	}
push:
	push(w, fn, site, r->ns, r->aux & REC_HAS_SP, r->sp, REPAIR_NONE);
}

/*
 * The frame exit @r leaves.  With a stack pointer: bit 0 set, the one
 * after the function's prologue, as its entry had it: the frames entered
 * below it are gone, and the frame is the function's innermost one (at or
 * above it: alloca() can only have moved it down); bit 0 clear, the one
 * it was called with (the hook was tail-called after the epilogue), above
 * its entry's: the outermost of the function's frames entered below it
 * (or at it: see below).  Without one (older files), the function's
 * innermost frame.  The frames above it were left behind.  -1: none.
 *
 * The stack is in order of stack pointers (enter() pops what is below a
 * new frame), so each frame looked at and passed over is popped: time
 * linear in the trace, whatever the depth.
 */
static ssize_t exiting(struct walk *w, const struct call_rec *r)
{
	const struct sym_func *fn = sym_func_by_id(w->c->syms, r->fn);
	uint32_t sp = r->sp & ~1u;
	ssize_t at, found = -1;
	int64_t by;

	if (!(r->aux & REC_HAS_SP))
		return (ssize_t)*top_of(w, fn) - 1;
	if (r->sp & 1) {
		while (w->depth && sp_diff(&w->stack[w->depth - 1], sp, &by) && by > 0)
			pop(w, r->ns, REPAIR_NO_EXIT);
		return (ssize_t)*top_of(w, fn) - 1;
	}
	for (at = (ssize_t)*top_of(w, fn) - 1; at >= 0; at = w->stack[at].below_same - 1) {
		if (!sp_diff(&w->stack[at], sp, &by))
			return found >= 0 ? found : w->stack[at].has_sp ? -1 : at;
		/*
		 * A frame entered at the stack pointer itself is the caller's,
		 * when it recurses, unless none is below it: the exit of a
		 * function's out-of-line part (foo.part.0) has that part's CFA,
		 * the stack pointer of the function foo was inlined into.
		 */
		if (by < 0 || (by == 0 && found >= 0))
			return found;
		if (by == 0)
			return at;
		found = at;
	}
	return found;
}

/*
 * Replay @w's thread.  With @pre, the pass that finds the functions entered
 * before the trace started: exits that match nothing running, before any
 * record was lost (after, a lost entry is likelier); what ran was inside
 * such a function, so its exit empties the stack.  They come innermost
 * first, into @pre (@nr_pre of them).
 */
static void replay(struct walk *w, struct call_rec **pre, size_t *nr_pre)
{
	struct call_thread *t = w->t;
	bool lost = false;
	char text[160];

	for (size_t i = 0; i < t->nr; i++) {
		const struct call_rec *r = &t->recs[i];
		ssize_t at;

		w->at = i;
		switch (REC_KIND(r)) {
		case REC_ENTRY:
			enter(w, r);
			break;
		case REC_EXIT:
			at = exiting(w, r);
			if (at < 0 && pre) {
				while (w->depth)
					pop(w, r->ns, REPAIR_NO_EXIT);
				*pre = xrealloc(*pre, (*nr_pre + 1) * sizeof(**pre));
				(*pre)[(*nr_pre)++] = *r;
				break;
			}
			if (at < 0) {
				const struct sym_func *fn = sym_func_by_id(w->c->syms, r->fn);

				snprintf(text, sizeof(text), "exit of %s without its entry%s: left out",
					 fn->name, lost ? " (lost)" : "");
				note(w, STEP_NOTE, r->ns, text, fn);
				break;
			}
			while (w->depth > (size_t)at + 1)
				pop(w, r->ns, REPAIR_NO_EXIT);
			pop(w, r->ns, REPAIR_NONE);
			break;
		case REC_TEXT:
			note(w, STEP_EVENT, r->ns, w->c->text + REC_VALUE(r), NULL);
			break;
		case REC_LOST:
			if (pre)
				return;
			lost = true;
			if (REC_VALUE(r) == (KTEV_LOST_UNKNOWN & REC_VALUE_MASK))
				snprintf(text, sizeof(text), "records lost here, how many is not known");
			else
				snprintf(text, sizeof(text), "%llu records lost here",
					 (unsigned long long)REC_VALUE(r));
			note(w, STEP_NOTE, r->ns, text, NULL);
			break;
		}
	}
}

static void walk_thread(struct calls *c, struct call_thread *t, call_step_fn *step, void *ctx)
{
	struct walk w = { .c = c, .t = t, .step = step, .ctx = ctx };
	struct walk dry = { .c = c, .t = t, .step = no_step };
	uint64_t first = t->nr ? t->recs[0].ns : 0, last = t->nr ? t->recs[t->nr - 1].ns : 0;
	struct call_rec *pre = NULL;
	size_t nr_pre = 0;

	proc_of(c, t);
	replay(&dry, &pre, &nr_pre);
	free(dry.stack);
	free(dry.top_of);
	free(dry.decides);
	/* outermost first; their call sites are unknown (exits do not carry them) */
	while (nr_pre--)
		push(&w, sym_func_by_id(c->syms, pre[nr_pre].fn), 0, first, pre[nr_pre].aux & REC_HAS_SP,
		     pre[nr_pre].sp, REPAIR_BEFORE_START);
	free(pre);
	replay(&w, NULL, NULL);
	while (w.depth)
		pop(&w, last, REPAIR_TRACE_END);
	free(w.stack);
	free(w.top_of);
	free(w.decides);
}

void calls_walk(struct calls *c, struct call_thread *t, call_step_fn *step, void *ctx)
{
	if (c->filter)
		call_filter_walk(c->filter, c, t, walk_thread, step, ctx);
	else
		walk_thread(c, t, step, ctx);
}

void calls_add_totals(const struct calls *c, struct call_totals **totals, unsigned int *nr,
		      const struct call_step *s)
{
	uint64_t dur = s->ns - s->entry_ns;
	struct call_totals *t;

	if (s->fn->id >= *nr) {
		unsigned int grown = sym_nr_funcs(c->syms);

		*totals = xrealloc(*totals, grown * sizeof(**totals));
		memset(*totals + *nr, 0, (grown - *nr) * sizeof(**totals));
		*nr = grown;
	}
	t = &(*totals)[s->fn->id];
	t->fn = s->fn;
	if (call_step_calls(s)) {	/* a frame from before the trace: time, no call */
		if (!t->calls++ || dur < t->min)
			t->min = dur;
		if (dur > t->max)
			t->max = dur;
		t->all += dur;
	}
	t->self += dur - s->callees_ns;
	if (!s->recursive)
		t->total += dur;
}

void calls_free(struct calls *c)
{
	if (!c)
		return;
	for (unsigned int i = 0; i < c->nr_files; i++) {
		if (c->by_file[i]) {
			free(c->by_file[i]->recs);
			free(c->by_file[i]->by_low.keys);
			free(c->by_file[i]->by_low.vals);
		}
		free(c->by_file[i]);
	}
	free(c->by_file);
	free(c->by_tid.keys);
	free(c->by_tid.vals);
	free(c->sorted);
	free(c->text);
	free(c);
}
