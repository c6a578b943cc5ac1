// SPDX-License-Identifier: GPL-2.0
/*
 * offcpu (--folded-offcpu): the time threads spend off CPU, from the
 * kernel's context switches, as stacks (stacks.h).  A thread is off CPU
 * from a sched:switch that switches it out to the next one that switches
 * it in, on any CPU; that time, in ns, is folded under
 *
 *   comm-tid[;main;read_file][;sys_read];[blocked] NS
 *
 *   comm-tid     the task, named as it was when switched out
 *   main;...     a thread with user calls (libktrace, the same timeline):
 *                the calls it was in when switched out
 *   sys_read     the system call it was in, where the trace has the
 *                thread's syscall events
 *   [sleeping]   its state when switched out (sched:switch records it):
 *   [blocked]    S, D, R or R+ (preempted), T or t, P, I, X or Z
 *   [preempted]
 *   [stopped] [parked] [idle] [dead]
 *
 * A file from before the kernel recorded the state says only what followed
 * the switch: [blocked] if a sched:wakeup of the thread came before it ran
 * again (it had gone to sleep), else [preempted] (runnable all along).
 * Left out:
 * the idle task, a switch out with no switch in after it (the trace ended,
 * or the thread exited: thread:exit ends it, so that a reused tid starts
 * anew), and a switch in with no switch out before it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "stacks.h"
#include "util.h"

/* A thread, as its context switches and system calls leave it. */
struct offcpu_task {
	uint64_t out_ns;		/* switched out then */
	uint32_t name;			/* its comm-tid then (stacks_name()) */
	uint32_t syscall;		/* nr + 1 of the system call it is in, 0: none */
	uint32_t out_syscall;		/* ... that it was in when switched out */
	int state;			/* sched_switch's prev_state when switched out, -1: none */
	bool out, woken, exited;
};

/* One time off CPU, from switch out to switch in. */
struct offcpu_span {
	uint64_t out_ns, in_ns;
	uint32_t tid, name, syscall;
	int state;
	bool woken;
};

/* Why a thread was off CPU: its state when switched out, else what followed. */
static const char *off_reason(const struct offcpu_span *sp)
{
	static const char *const by_bit[] = {	/* TASK_REPORT bits, as %W names them */
		"[sleeping]", "[blocked]", "[stopped]", "[stopped]", "[dead]", "[dead]",
		"[parked]", "[idle]",
	};

	if (sp->state < 0)
		return sp->woken ? "[blocked]" : "[preempted]";
	for (unsigned int i = 0; i < ARRAY_SIZE(by_bit); i++)
		if (sp->state & (1 << i))
			return by_bit[i];
	return "[preempted]";	/* R, or R+: runnable */
}

/*
 * A thread with a user stream is folded at the end, when its calls are
 * replayed: its spans are kept until then.  Any other is folded at its
 * switch in: memory grows with the paths, not with the switches.
 */
struct offcpu {
	struct amap tasks;		/* tid -> struct offcpu_task */
	struct amap user_tids;		/* tids of the user streams' threads */
	struct offcpu_span *spans;	/* of those threads */
	size_t nr, alloc;
	uint64_t switches;		/* sched:switch records seen */
};

struct offcpu *offcpu_new(struct dtrace *dt)
{
	struct offcpu *oc = xcalloc(1, sizeof(*oc));

	for (unsigned int i = 0; i < kt_merge_nr_files(dt->merge); i++) {
		const struct ktfile_reader *f = kt_merge_file(dt->merge, i);

		if (f->hdr.cpu < 0)
			amap_put(&oc->user_tids, f->hdr.tid, oc);
	}
	return oc;
}

static struct offcpu_task *task_of(struct offcpu *oc, uint32_t tid)
{
	struct offcpu_task *t = amap_get(&oc->tasks, tid);

	if (!t) {
		t = xcalloc(1, sizeof(*t));
		amap_put(&oc->tasks, tid, t);
	}
	return t;
}

/* One thread's spans, in time, and its calls replayed beside them. */
struct offcpu_walk {
	struct stacks *s;
	const struct offcpu_span *next, *end;
	uint32_t *calls;		/* the names of the calls it is in, outermost first */
	unsigned int depth, alloc;
};

/* @sp folded under its task, the @depth @calls it was in, its system call */
static void add_span(struct stacks *s, const uint32_t *calls, unsigned int depth,
		     const struct offcpu_span *sp)
{
	uint32_t node = stacks_child(s, 0, sp->name);
	const char *reason = off_reason(sp);

	for (unsigned int d = 0; d < depth; d++)
		node = stacks_child(s, node, calls[d]);
	if (sp->syscall) {
		const char *call = ktev_syscall_name(sp->syscall - 1);
		char buf[64];
		int len = call ? snprintf(buf, sizeof(buf), "sys_%s", call) :
				 snprintf(buf, sizeof(buf), "sys_%u", sp->syscall - 1);

		node = stacks_child(s, node, stacks_name(s, buf, len));
	}
	node = stacks_child(s, node, stacks_name(s, reason, strlen(reason)));
	s->nodes[node].count++;
	s->nodes[node].weight += sp->in_ns - sp->out_ns;
}

static void switched_in(struct stacks *s, struct offcpu_task *t, uint32_t tid, uint64_t ns)
{
	struct offcpu *oc = s->offcpu;
	struct offcpu_span sp = {
		.out_ns = t->out_ns, .in_ns = ns, .tid = tid, .name = t->name,
		.syscall = t->out_syscall, .state = t->state, .woken = t->woken,
	};

	t->out = false;
	if (!amap_get(&oc->user_tids, tid)) {
		add_span(s, NULL, 0, &sp);
		return;
	}
	if (oc->nr == oc->alloc) {
		oc->alloc = oc->alloc ? 2 * oc->alloc : 1024;
		oc->spans = xrealloc(oc->spans, oc->alloc * sizeof(*oc->spans));
	}
	oc->spans[oc->nr++] = sp;
}

void offcpu_event(struct dtrace *dt, struct stacks *s, const struct dtrace_event *e)
{
	const struct ktfile_event *ev = e->ev;
	struct offcpu *oc = s->offcpu;
	struct offcpu_task *t;
	char name[KTEV_TASK_MAX];

	if (ev->nr_args < 2)
		return;
	switch (ev->code) {
	case KTRACE_sched_switch:
		oc->switches++;
		if (ev->args[0] == ev->args[1])
			return;
		t = ev->args[1] ? amap_get(&oc->tasks, ev->args[1]) : NULL;
		if (t && t->out)
			switched_in(s, t, ev->args[1], e->ns);
		if (!ev->args[0] || !dtrace_task_selected(dt, 0, ev->args[0], ev->tsc))
			return;
		t = task_of(oc, ev->args[0]);
		if (t->exited) {	/* its last switch: it is gone */
			t->exited = false;
			return;
		}
		t->out = true;
		t->woken = false;
		t->state = ev->nr_args >= 4 ? (int)(ev->args[2] & 0xffff) : -1;
		t->out_ns = e->ns;
		t->out_syscall = t->syscall;
		t->name = stacks_name(s, name, tasks_put_named(&e->names, name, ev->args[0], 0) - name);
		return;
	case KTRACE_sched_wakeup:
		t = amap_get(&oc->tasks, ev->args[0]);
		if (t && t->out)
			t->woken = true;
		return;
	case KTRACE_syscall_entry:
		task_of(oc, ev->tid)->syscall = ev->args[0] + 1;
		return;
	case KTRACE_syscall_exit:
		t = amap_get(&oc->tasks, ev->tid);
		if (t)
			t->syscall = 0;
		return;
	case KTRACE_thread_exit:
		*task_of(oc, ev->args[0]) = (struct offcpu_task){ .exited = true };
		return;
	case KTRACE_thread_fork:	/* a reused tid: nothing of the old thread */
		t = amap_get(&oc->tasks, ev->args[1]);
		if (t)
			*t = (struct offcpu_task){ 0 };
		return;
	}
}

static int by_tid_then_time(const void *a, const void *b)
{
	const struct offcpu_span *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->out_ns != y->out_ns)
		return x->out_ns < y->out_ns ? -1 : 1;
	return x->in_ns < y->in_ns ? -1 : x->in_ns > y->in_ns;
}

/* The spans that began before @ns, under the calls running now. */
static void add_spans_before(struct offcpu_walk *w, uint64_t ns)
{
	for (; w->next < w->end && w->next->out_ns < ns; w->next++)
		add_span(w->s, w->calls, w->depth, w->next);
}

static void offcpu_step(void *ctx, struct call_thread *t, const struct call_step *s)
{
	struct offcpu_walk *w = ctx;

	add_spans_before(w, s->ns);
	if (s->kind == STEP_ENTER) {
		if (s->depth >= w->alloc) {
			w->alloc = 2 * s->depth + 64;
			w->calls = xrealloc(w->calls, w->alloc * sizeof(*w->calls));
		}
		w->calls[s->depth] = stacks_fn_name(w->s, s->fn);
		w->depth = s->depth + 1;
	} else if (s->kind == STEP_EXIT) {
		w->depth = s->depth;
	}
}

void offcpu_finish(struct dtrace *dt, struct stacks *s)
{
	struct offcpu *oc = s->offcpu;
	struct amap threads = { 0 };	/* tid -> its user thread (calls.h) */
	struct offcpu_walk w = { .s = s };

	if (!oc->switches)
		pr_warn("--folded-offcpu: no context switches (sched:switch) in the trace: "
			"record them with ktrace -e sched");
	if (calls_has_threads(dt->calls)) {
		unsigned int nr;
		struct call_thread **t = calls_threads(dt->calls, &nr);

		for (unsigned int i = 0; i < nr; i++)
			if (!amap_get(&threads, t[i]->tid))
				amap_put(&threads, t[i]->tid, t[i]);
	}
	if (oc->nr)
		qsort(oc->spans, oc->nr, sizeof(*oc->spans), by_tid_then_time);
	for (size_t i = 0, end; i < oc->nr; i = end) {
		struct call_thread *t = amap_get(&threads, oc->spans[i].tid);

		for (end = i; end < oc->nr && oc->spans[end].tid == oc->spans[i].tid; end++)
			;
		w.next = oc->spans + i;
		w.end = oc->spans + end;
		w.depth = 0;
		if (t)
			calls_walk(dt->calls, t, offcpu_step, &w);
		w.depth = 0;		/* after its last call */
		add_spans_before(&w, UINT64_MAX);
	}
	for (size_t i = 0; i < oc->tasks.cap; i++)
		free(oc->tasks.vals[i]);
	free(oc->tasks.keys);
	free(oc->tasks.vals);
	free(oc->user_tids.keys);
	free(oc->user_tids.vals);
	free(threads.keys);
	free(threads.vals);
	free(oc->spans);
	free(w.calls);
	free(oc);
	s->offcpu = NULL;
}
