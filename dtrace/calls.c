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

#include "calls.h"
#include "util.h"

enum rec_kind { REC_ENTRY, REC_EXIT, REC_TEXT, REC_LOST };

/*
 * 24 bytes an event: traces of millions of calls are kept whole.  Symbols
 * are looked up once, here: the function, and the one the call came from.
 */
struct call_rec {
	uint64_t ns;
	uint64_t aux;			/* ENTRY, EXIT: call site, 0 if unknown; TEXT: text;
					   LOST: how many */
	uint32_t fn;			/* ENTRY, EXIT: sym_func id */
	uint32_t kind_caller;		/* kind | (ENTRY: id + 1 of the caller's
					   function, from the site; 0: none) << 2 */
};

#define REC_KIND(r)	((r)->kind_caller & 3)
#define REC_CALLER(r)	((r)->kind_caller >> 2)

struct frame {
	const struct sym_func *fn;
	uint64_t site, entry_ns, callees_ns;
};

bool calls_with_events;
bool calls_with_sites;

static struct {
	struct call_thread **by_file;	/* user streams' threads, by file index */
	struct call_thread **sorted;
	unsigned int nr_files, nr_threads;
	struct call_thread **by_tid;	/* hash by tid, for kernel events */
	unsigned int tid_cap;
	char *text;			/* event texts, NUL-separated */
	size_t text_len, text_cap;
} calls;

static void add_rec(struct call_thread *t, uint64_t ns, uint32_t kind, uint64_t aux,
		    uint32_t fn, uint32_t caller)
{
	if (t->nr == t->alloc) {
		t->alloc = t->alloc ? 2 * t->alloc : 1024;
		t->recs = xrealloc(t->recs, t->alloc * sizeof(*t->recs));
	}
	t->recs[t->nr++] = (struct call_rec){ ns, aux, fn, kind | caller << 2 };
}

static struct call_thread *thread_of_tid(uint32_t tid)
{
	unsigned int mask = calls.tid_cap - 1;

	for (unsigned int i = tid * 2654435761u & mask; calls.by_tid[i]; i = (i + 1) & mask)
		if (calls.by_tid[i]->tid == tid)
			return calls.by_tid[i];
	return NULL;
}

/* One thread per user stream, all made at the first event. */
static void setup(struct dtrace *dt)
{
	calls.nr_files = kt_merge_nr_files(dt->merge);
	calls.by_file = xcalloc(calls.nr_files, sizeof(*calls.by_file));
	calls.tid_cap = 64;
	while (calls.tid_cap < 2 * calls.nr_files)
		calls.tid_cap *= 2;
	calls.by_tid = xcalloc(calls.tid_cap, sizeof(*calls.by_tid));
	for (unsigned int i = 0; i < calls.nr_files; i++) {
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
		calls.by_file[i] = t;
		if (!thread_of_tid(t->tid)) {
			unsigned int j = t->tid * 2654435761u & (calls.tid_cap - 1);

			while (calls.by_tid[j])
				j = (j + 1) & (calls.tid_cap - 1);
			calls.by_tid[j] = t;
		}
	}
}

static uint64_t add_text(struct call_thread *t, const struct ktfile_event *ev)
{
	uint64_t off;
	char *p;

	if (calls.text_cap - calls.text_len < KTEV_TEXT_MAX + 256) {
		calls.text_cap = calls.text_cap ? 2 * calls.text_cap : 1 << 20;
		calls.text = xrealloc(calls.text, calls.text_cap);
	}
	off = calls.text_len;
	p = calls.text + off;
	p = sym_put_event(p, t->proc, ev, 0);
	*p++ = '\0';
	calls.text_len = p - calls.text;
	return off;
}

void calls_event(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e)
{
	const struct ktfile_event *ev = e->ev;
	const struct ktfile_reader *f = kt_merge_file(dt->merge, e->file);
	struct call_thread *t;

	if (!calls.by_file)
		setup(dt);
	if (f->hdr.cpu < 0) {
		t = calls.by_file[e->file];
		if (!t->proc)
			t->proc = sym_proc(t->pid, t->path);
		if (ev->code == KTRACE_func_entry || ev->code == KTRACE_func_exit) {
			uint64_t fn = ev->args[0] | (uint64_t)ev->args[1] << 32;
			uint64_t site = ev->nr_args >= 4 ?
					ev->args[2] | (uint64_t)ev->args[3] << 32 : 0;
			bool entry = ev->code == KTRACE_func_entry;

			add_rec(t, e->ns, entry ? REC_ENTRY : REC_EXIT, site,
				sym_func(t->proc, fn)->id,
				entry && site ? sym_func(t->proc, site - 1)->id + 1 : 0);
			return;
		}
		if (ev->code == KTRACE_META_LOST) {
			add_rec(t, e->ns, REC_LOST, ev->args[0] | (uint64_t)ev->args[1] << 32, 0, 0);
			return;
		}
	} else {
		t = thread_of_tid(ev->tid);
		if (ev->code == KTRACE_sched_switch && ev->args[1] != ev->tid) {
			struct call_thread *to = thread_of_tid(ev->args[1]);

			if (to && calls_with_events) {
				if (!to->proc)
					to->proc = sym_proc(to->pid, to->path);
				add_rec(to, e->ns, REC_TEXT, add_text(to, ev), 0, 0);
			}
		}
	}
	if (!t || !calls_with_events)
		return;
	if (!t->proc)
		t->proc = sym_proc(t->pid, t->path);
	add_rec(t, e->ns, REC_TEXT, add_text(t, ev), 0, 0);
}

static int by_first_event(const void *a, const void *b)
{
	const struct call_thread *x = *(struct call_thread *const *)a;
	const struct call_thread *y = *(struct call_thread *const *)b;

	if (x->recs[0].ns != y->recs[0].ns)
		return x->recs[0].ns < y->recs[0].ns ? -1 : 1;
	return x->file < y->file ? -1 : x->file > y->file;
}

struct call_thread **calls_threads(struct dtrace *dt, unsigned int *nr)
{
	if (!calls.sorted) {
		calls.sorted = xcalloc(calls.nr_files + 1, sizeof(*calls.sorted));
		for (unsigned int i = 0; i < calls.nr_files; i++)
			if (calls.by_file[i] && calls.by_file[i]->nr)
				calls.sorted[calls.nr_threads++] = calls.by_file[i];
		qsort(calls.sorted, calls.nr_threads, sizeof(*calls.sorted), by_first_event);
		if (!calls.nr_threads)
			pr_warn("no user thread has events here: the calls come from libktrace's "
				"files (ktrace-run)");
	}
	*nr = calls.nr_threads;
	return calls.sorted;
}

/* ---- the replay ----------------------------------------------------------- */

struct walk {
	struct call_thread *t;
	void (*step)(void *ctx, struct call_thread *t, const struct call_step *s);
	void *ctx;
	struct frame *stack;
	size_t depth, alloc;
};

static void push(struct walk *w, const struct sym_func *fn, uint64_t site, uint64_t ns,
		 enum call_repair repair)
{
	struct call_step s = {
		.kind = STEP_ENTER, .repair = repair, .depth = w->depth, .ns = ns, .fn = fn,
		.caller = w->depth ? w->stack[w->depth - 1].fn : NULL, .site = site,
	};

	if (w->depth == w->alloc) {
		w->alloc = w->alloc ? 2 * w->alloc : 64;
		w->stack = xrealloc(w->stack, w->alloc * sizeof(*w->stack));
	}
	w->stack[w->depth++] = (struct frame){ fn, site, ns, 0 };
	w->step(w->ctx, w->t, &s);
}

static void pop(struct walk *w, uint64_t ns, enum call_repair repair)
{
	struct frame *f = &w->stack[--w->depth];
	struct call_step s = {
		.kind = STEP_EXIT, .repair = repair, .depth = w->depth, .ns = ns, .fn = f->fn,
		.caller = w->depth ? w->stack[w->depth - 1].fn : NULL, .site = f->site,
		.entry_ns = f->entry_ns, .callees_ns = f->callees_ns,
	};

	for (size_t i = 0; i < w->depth && !s.recursive; i++)
		s.recursive = w->stack[i].fn == f->fn;
	if (w->depth)
		w->stack[w->depth - 1].callees_ns += ns - f->entry_ns;
	w->step(w->ctx, w->t, &s);
}

static void note(struct walk *w, enum call_step_kind kind, uint64_t ns, const char *text)
{
	struct call_step s = { .kind = kind, .depth = w->depth, .ns = ns, .text = text };

	w->step(w->ctx, w->t, &s);
}

static ssize_t find(const struct frame *stack, size_t depth, const struct sym_func *fn)
{
	for (size_t i = depth; i-- > 0; )
		if (stack[i].fn == fn)
			return i;
	return -1;
}

/* foo.cold is code of foo */
static bool same_function(const struct sym_func *a, const struct sym_func *b)
{
	size_t len = strcspn(a->name, ".");

	return a == b || (!strncmp(a->name, b->name, len) && strchr(".", b->name[len]) &&
			  (strstr(a->name, ".cold") || strstr(b->name, ".cold")));
}

/*
 * How many frames are still running when a function is called from @site:
 * if the call comes from a function further down than the top, the ones
 * above it were left without an exit (longjmp out of them).  A call from
 * an instrumented function inlined into a caller comes from the caller's
 * code: not a sign of that.
 */
static size_t running(struct sym_proc *proc, const struct frame *stack, size_t depth,
		      const struct call_rec *r)
{
	const struct sym_func *caller;
	ssize_t at;

	if (!REC_CALLER(r) || depth < 2)
		return depth;
	caller = sym_func_by_id(REC_CALLER(r) - 1);
	if (same_function(caller, stack[depth - 1].fn))
		return depth;
	for (at = depth - 1; at-- > 0; )
		if (same_function(caller, stack[at].fn))
			break;
	if (at < 0)
		return depth;	/* called from code that is not traced */
	for (size_t i = at + 1; i < depth; i++)
		if (sym_inlined_at(proc, r->aux, stack[i].fn))
			return depth;
	return at + 1;
}

/*
 * Functions entered before the trace started: exits that match nothing
 * running, before any record was lost (after, a lost entry is likelier).
 * Innermost first; their call sites are unknown (exits do not carry them).
 */
static size_t before_start(struct call_thread *t, struct frame **pre)
{
	struct frame *stack = NULL;
	size_t depth = 0, nr = 0, alloc = 0;

	*pre = NULL;
	for (size_t i = 0; i < t->nr; i++) {
		const struct call_rec *r = &t->recs[i];
		const struct sym_func *fn;
		ssize_t at;

		if (REC_KIND(r) == REC_LOST)
			break;
		if (REC_KIND(r) == REC_TEXT)
			continue;
		fn = sym_func_by_id(r->fn);
		if (REC_KIND(r) == REC_ENTRY) {
			depth = running(t->proc, stack, depth, r);
			if (depth == alloc) {
				alloc = alloc ? 2 * alloc : 64;
				stack = xrealloc(stack, alloc * sizeof(*stack));
			}
			stack[depth++].fn = fn;
			continue;
		}
		at = find(stack, depth, fn);
		if (at >= 0) {
			depth = at;
			continue;
		}
		depth = 0;	/* what ran was inside it */
		*pre = xrealloc(*pre, (nr + 1) * sizeof(**pre));
		(*pre)[nr++] = (struct frame){ .fn = fn, .site = r->aux };
	}
	free(stack);
	return nr;
}

void calls_walk(struct call_thread *t,
		void (*step)(void *ctx, struct call_thread *t, const struct call_step *s),
		void *ctx)
{
	struct walk w = { .t = t, .step = step, .ctx = ctx };
	uint64_t first = t->nr ? t->recs[0].ns : 0, last = t->nr ? t->recs[t->nr - 1].ns : 0;
	bool lost = false;
	struct frame *pre;
	size_t nr_pre;
	char text[160];

	if (!t->proc)
		t->proc = sym_proc(t->pid, t->path);
	nr_pre = before_start(t, &pre);
	while (nr_pre--)
		push(&w, pre[nr_pre].fn, pre[nr_pre].site, first, REPAIR_BEFORE_START);
	free(pre);
	for (size_t i = 0; i < t->nr; i++) {
		const struct call_rec *r = &t->recs[i];
		const struct sym_func *fn = sym_func_by_id(r->fn);
		ssize_t at;

		switch (REC_KIND(r)) {
		case REC_ENTRY:
			for (size_t keep = running(t->proc, w.stack, w.depth, r); w.depth > keep; )
				pop(&w, r->ns, REPAIR_NO_EXIT);
			push(&w, fn, r->aux, r->ns, REPAIR_NONE);
			break;
		case REC_EXIT:
			at = find(w.stack, w.depth, fn);
			if (at < 0) {
				snprintf(text, sizeof(text), "exit of %s without its entry%s: left out",
					 fn->name, lost ? " (lost)" : "");
				note(&w, STEP_NOTE, r->ns, text);
				break;
			}
			while (w.depth > (size_t)at + 1)
				pop(&w, r->ns, REPAIR_NO_EXIT);
			pop(&w, r->ns, REPAIR_NONE);
			break;
		case REC_TEXT:
			note(&w, STEP_EVENT, r->ns, calls.text + r->aux);
			break;
		case REC_LOST:
			lost = true;
			snprintf(text, sizeof(text), "%llu records lost here",
				 (unsigned long long)r->aux);
			note(&w, STEP_NOTE, r->ns, text);
			break;
		}
	}
	while (w.depth)
		pop(&w, last, REPAIR_TRACE_END);
	free(w.stack);
}

void calls_add_totals(struct call_totals **totals, unsigned int *nr,
		      const struct call_step *s)
{
	uint64_t dur = s->ns - s->entry_ns;
	struct call_totals *t;

	if (s->fn->id >= *nr) {
		unsigned int grown = sym_nr_funcs();

		*totals = xrealloc(*totals, grown * sizeof(**totals));
		memset(*totals + *nr, 0, (grown - *nr) * sizeof(**totals));
		*nr = grown;
	}
	t = &(*totals)[s->fn->id];
	t->fn = s->fn;
	t->calls++;
	t->self += dur - s->callees_ns;
	if (!s->recursive)
		t->total += dur;
}

void calls_free(void)
{
	for (unsigned int i = 0; i < calls.nr_files; i++) {
		if (calls.by_file[i])
			free(calls.by_file[i]->recs);
		free(calls.by_file[i]);
	}
	free(calls.by_file);
	free(calls.by_tid);
	free(calls.sorted);
	free(calls.text);
	memset(&calls, 0, sizeof(calls));
	sym_free();
}
