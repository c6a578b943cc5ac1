// SPDX-License-Identifier: GPL-2.0
/*
 * tasks: names of the traced tasks, following the merge (tasks.h).
 *
 * A thread id's naming in force, by index (in a hash map for large ids);
 * two hash maps for what the merge has not reached yet but events before
 * it show (tasks.h): a task's first naming, and in a flight snapshot its
 * first naming from when every CPU's records are complete.  A naming the merge passes or an
 * exit drops is retired: freed when no batch that may hold it is left.
 * With several machines (machines.c) the maps' keys are machine << 32 | tid:
 * a tid on two machines is two tasks.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "amap.h"
#include "escape.h"
#include "ktevents.h"
#include "ktfile.h"
#include "tasks.h"
#include "util.h"

#define COMM_MAX	(KT_ESC_MAX(KTRACE_COMM_LEN))

struct naming {
	uint64_t tsc;		/* from then on (0: a user stream's header) */
	uint32_t tid, pid;
	uint8_t len;
	char comm[COMM_MAX];	/* escaped for text */
	/*
	 * "-tid" and spaces to the end, made once: every line shows its
	 * task's, and put() copies it whole (@tid_len: '-' and the digits).
	 */
	uint8_t tid_len;
	char tid_text[16];
	struct naming *retired_next;
	uint64_t retired_in;	/* the last batch that may hold it */
};

/*
 * The namings in force of the tids below this are found by index (most
 * are: the default pid_max is 32768, a page of the array covers 512 tids,
 * only the pages of tids seen take memory), the others in a hash map.
 */
#define NOW_DIRECT	(1u << 16)

struct tasks {
	uint64_t machine;	/* of the events now (tasks_set_machine()), << 32 */
	struct naming **now_direct;	/* machine 0's tid < NOW_DIRECT -> its naming in force */
	struct amap now;	/* the larger tids' */
	struct amap first;	/* tid -> its first naming, not reached yet */
	struct amap complete;	/* flight: tid -> its first naming from complete_from on */
	/*
	 * Flight snapshots: the latest start of a CPU's records that begin
	 * with records overwritten (a lost marker).  0: none.
	 */
	uint64_t complete_from;
	struct naming *retired, **retired_tail;
	uint64_t filling, written;	/* tasks_progress() */
	/* per event of the table: its %T arguments' indices, 0xff: none */
	uint8_t (*task_args)[TASKS_PER_EVENT - 1];
};

/* @tid of the machine now: the maps' key */
static uint64_t key(const struct tasks *t, uint32_t tid)
{
	return t->machine | tid;
}

static struct naming *now_get(const struct tasks *t, uint32_t tid)
{
	return key(t, tid) < NOW_DIRECT ? t->now_direct[tid] : amap_get(&t->now, key(t, tid));
}

static void now_put(struct tasks *t, uint32_t tid, struct naming *n)
{
	if (key(t, tid) < NOW_DIRECT)
		t->now_direct[tid] = n;
	else
		amap_put(&t->now, key(t, tid), n);
}

static void now_del(struct tasks *t, uint32_t tid)
{
	if (key(t, tid) < NOW_DIRECT)
		t->now_direct[tid] = NULL;
	else
		amap_del(&t->now, key(t, tid));
}

void tasks_set_machine(struct tasks *t, unsigned int machine)
{
	if (t)
		t->machine = (uint64_t)machine << 32;
}

/* @n names task @tid: its tid and tid_text. */
static void naming_set_tid(struct naming *n, uint32_t tid)
{
	char digits[10 + KTEV_SLACK];	/* a u32's */

	n->tid = tid;
	n->tid_len = 1 + ktev_put_u64(digits, tid) - digits;
	memset(n->tid_text, ' ', sizeof(n->tid_text));
	n->tid_text[0] = '-';
	memcpy(n->tid_text + 1, digits, n->tid_len - 1);
}

static struct naming *naming_new(uint64_t tsc, uint32_t tid, uint32_t pid, const char *comm)
{
	struct naming *n = xcalloc(1, sizeof(*n));

	n->tsc = tsc;
	naming_set_tid(n, tid);
	n->pid = pid;
	n->len = kt_escape(n->comm, COMM_MAX, comm, KTRACE_COMM_LEN, KT_ESC_TEXT) - n->comm;
	return n;
}

/* Free the retired namings no batch holds any more. */
static void reclaim(struct tasks *t)
{
	while (t->retired && t->retired->retired_in < t->written) {
		struct naming *n = t->retired;

		t->retired = n->retired_next;
		free(n);
	}
	if (!t->retired)
		t->retired_tail = &t->retired;
}

static void retire(struct tasks *t, struct naming *n)
{
	if (!n)
		return;
	n->retired_in = t->filling;
	n->retired_next = NULL;
	*t->retired_tail = n;
	t->retired_tail = &n->retired_next;
	reclaim(t);
}

void tasks_progress(struct tasks *t, uint64_t filling, uint64_t written)
{
	if (t) {
		t->filling = filling;
		t->written = written;
		reclaim(t);
	}
}

/* The name in a thread:name event (at least 6 arguments): not terminated. */
static void event_comm(const struct ktfile_event *ev, char comm[KTRACE_COMM_LEN])
{
	memset(comm, 0, KTRACE_COMM_LEN);
	if (ev->nr_args > 2)
		ktev_unpack_bytes(comm, KTRACE_COMM_LEN, ev->args + 2, ev->nr_args - 2);
}

static bool is_naming(const struct ktfile_event *ev)
{
	return ev->code == KTRACE_thread_name && ev->nr_args >= 2 + KTRACE_COMM_LEN / 4;
}

/* A kernel stream that is a regular file: the look-ahead reads it too. */
static struct ktfile_reader *open_ahead(const struct ktfile_reader *f)
{
	struct stat st;

	if (f->hdr.cpu < 0 || stat(f->path, &st) || !S_ISREG(st.st_mode))
		return NULL;
	return ktfile_open(f->path, KTFILE_QUIET);
}

/* @m's naming of the tid @ev names: the earliest, over the files read ahead. */
static void keep_earliest(const struct tasks *t, struct amap *m, const struct ktfile_event *ev)
{
	struct naming *old = amap_get(m, key(t, ev->args[0]));
	char comm[KTRACE_COMM_LEN];

	if (old && old->tsc <= ev->tsc)
		return;
	free(old);
	event_comm(ev, comm);
	amap_put(m, key(t, ev->args[0]), naming_new(ev->tsc, ev->args[0], ev->args[1], comm));
}

/*
 * The look-ahead (tasks.h) of one file: the first namings among its first
 * TASKS_AHEAD records, or of all its records in a flight snapshot.  A bad
 * record ends it quietly: the merge says what is wrong when it gets there.
 */
static void look_ahead(struct tasks *t, const struct ktfile_reader *f)
{
	struct ktfile_reader *r = open_ahead(f);

	if (!r)
		return;
	for (uint64_t i = 0; ktfile_next(r) > 0; i++) {
		const struct ktfile_event *ev = &r->ev;

		if (!t->complete_from && i >= TASKS_AHEAD)
			break;
		if (!is_naming(ev))
			continue;
		keep_earliest(t, &t->first, ev);
		if (t->complete_from && ev->tsc >= t->complete_from)
			keep_earliest(t, &t->complete, ev);
	}
	ktfile_reader_close(r);
}

/* Where a flight snapshot's records are complete: the latest start after a lost marker. */
static void find_complete_from(struct tasks *t, struct kt_merge *m)
{
	for (unsigned int i = 0; i < kt_merge_nr_files(m); i++) {
		struct ktfile_reader *r = open_ahead(kt_merge_file(m, i));

		if (!r)
			continue;
		if (ktfile_next(r) > 0 && r->ev.code == KTRACE_META_LOST &&
		    r->ev.tsc > t->complete_from)
			t->complete_from = r->ev.tsc;
		ktfile_reader_close(r);
	}
}

/* An event's argument @arg is a task it shows (besides its %T ones). */
static void add_task_arg(struct tasks *t, uint32_t code, unsigned int arg)
{
	const struct ktev_desc *d = ktev_lookup(code);

	for (unsigned int k = 0; d && k < TASKS_PER_EVENT - 1; k++)
		if (t->task_args[d - ktev_events][k] == 0xff) {
			t->task_args[d - ktev_events][k] = arg;
			return;
		}
}

static void find_task_args(struct tasks *t)
{
	t->task_args = xcalloc(ktev_nr_events, sizeof(*t->task_args));
	for (unsigned int i = 0; i < ktev_nr_events; i++) {
		unsigned int arg = 0, k = 0;

		memset(t->task_args[i], 0xff, sizeof(t->task_args[i]));
		for (const char *s = ktev_events[i].fmt; *s; s++) {
			struct ktev_conv c;

			if (*s != '%')
				continue;
			if (s[1] == '%') {
				s++;
				continue;
			}
			if (ktev_conv_parse(s, &c) < 0)
				break;
			if (c.letter == 'T' && k < TASKS_PER_EVENT - 1)
				t->task_args[i][k++] = arg;
			arg += c.nr_args;
			s += c.len - 1;
		}
	}
	/* the task a naming names (named so at its own event), a fork's child */
	add_task_arg(t, KTRACE_thread_name, 0);
	add_task_arg(t, KTRACE_thread_fork, 1);
}

struct tasks *tasks_open(struct kt_merge *m)
{
	struct tasks *t = xcalloc(1, sizeof(*t));

	t->now_direct = xcalloc(NOW_DIRECT, sizeof(*t->now_direct));
	t->retired_tail = &t->retired;
	t->written = 1;		/* no pipeline: a dropped naming goes at once */
	find_task_args(t);
	for (unsigned int i = 0; i < kt_merge_nr_files(m); i++) {
		const struct ktfile_reader *f = kt_merge_file(m, i);

		tasks_set_machine(t, f->machine);
		if (f->hdr.cpu < 0 && !now_get(t, f->hdr.tid))	/* a user stream names its thread */
			now_put(t, f->hdr.tid,
				 naming_new(0, f->hdr.tid, f->hdr.pid, f->hdr.comm));
	}
	find_complete_from(t, m);
	for (unsigned int i = 0; i < kt_merge_nr_files(m); i++) {
		tasks_set_machine(t, kt_merge_file(m, i)->machine);
		look_ahead(t, kt_merge_file(m, i));
	}
	tasks_set_machine(t, 0);
	return t;
}

static void free_map(struct amap *m)
{
	for (size_t i = 0; i < m->cap; i++)
		if (m->keys[i])
			free(m->vals[i]);
	free(m->keys);
	free(m->vals);
}

void tasks_free(struct tasks *t)
{
	if (!t)
		return;
	t->written = UINT64_MAX;
	reclaim(t);
	for (size_t i = 0; i < NOW_DIRECT; i++)
		free(t->now_direct[i]);
	free(t->now_direct);
	free_map(&t->now);
	free_map(&t->first);
	free_map(&t->complete);
	free(t->task_args);
	free(t);
}

static const struct naming *find(const struct tasks *t, uint32_t tid);

/*
 * Fork keeps the comm: a child no naming names, now or later (the
 * look-ahead's), has its parent's, as a process of its own.
 */
static void follow_fork(struct tasks *t, const struct ktfile_event *ev)
{
	const struct naming *parent = find(t, ev->args[0]);
	uint32_t child = ev->args[1];
	struct naming *n;

	if (!parent || !child || now_get(t, child) || amap_get(&t->first, key(t, child)))
		return;
	n = xmalloc(sizeof(*n));
	*n = *parent;
	n->tsc = ev->tsc;
	naming_set_tid(n, child);
	n->pid = child;
	now_put(t, child, n);
}

void tasks_follow(struct tasks *t, const struct ktfile_event *ev)
{
	char comm[KTRACE_COMM_LEN];
	uint32_t tid;

	if (t && ev->code == KTRACE_thread_fork && ev->nr_args >= 2)
		follow_fork(t, ev);
	if (!t || !is_naming(ev))
		return;
	tid = ev->args[0];
	event_comm(ev, comm);
	retire(t, now_get(t, tid));
	now_put(t, tid, naming_new(ev->tsc, tid, ev->args[1], comm));
	/* the merge reached what was looked ahead for */
	retire(t, amap_get(&t->first, key(t, tid)));
	amap_del(&t->first, key(t, tid));
	if (t->complete_from && ev->tsc >= t->complete_from) {
		retire(t, amap_get(&t->complete, key(t, tid)));
		amap_del(&t->complete, key(t, tid));
	}
}

void tasks_follow_after(struct tasks *t, const struct ktfile_event *ev)
{
	if (!t || ev->code != KTRACE_thread_exit || !ev->nr_args)
		return;
	retire(t, now_get(t, ev->args[0]));
	now_del(t, ev->args[0]);
	/* a naming looked ahead for is a later task's of the same tid */
	retire(t, amap_get(&t->complete, key(t, ev->args[0])));
	amap_del(&t->complete, key(t, ev->args[0]));
}

/* The naming of @tid an event now shows, NULL if unnamed. */
static const struct naming *find(const struct tasks *t, uint32_t tid)
{
	const struct naming *n;

	if (!t)
		return NULL;
	n = now_get(t, tid);
	if (!n)		/* the look-ahead's namings go as the merge reaches them */
		return t->first.nr ? amap_get(&t->first, key(t, tid)) : NULL;
	if (t->complete.nr && n->tsc < t->complete_from && n->tsc) {
		/* from before the snapshot was complete: a later naming wins */
		const struct naming *later = amap_get(&t->complete, key(t, tid));

		if (later)
			return later;
	}
	return n;
}

uint32_t tasks_resolve(const struct tasks *t, const struct ktfile_event *ev,
		       struct task_names *names)
{
	const struct ktev_desc *d;
	uint32_t i;

	memset(names, 0, sizeof(*names));
	if (!t)
		return 0;
	names->n[0] = find(t, ev->tid);
	d = ktev_lookup(ev->code);
	if (!d)
		return 0;
	i = d - ktev_events;
	for (unsigned int k = 0; k < TASKS_PER_EVENT - 1; k++) {
		unsigned int a = t->task_args[i][k];

		if (a < ev->nr_args)
			names->n[k + 1] = find(t, ev->args[a]);
	}
	return i + 1;
}

uint32_t tasks_pid(const struct tasks *t, uint32_t tid, uint64_t tsc)
{
	const struct naming *n = find(t, tid);

	(void)tsc;
	return n ? n->pid : 0;
}

/*
 * "comm-tid", the comm right-aligned in @width and the tid left-aligned in
 * 7 columns when @width is given.  dtrace's hot loop: the usual comm (up
 * to 16 bytes, the naming's array or a literal padded to 16) and padding
 * go in constant-size copies, the bytes past the end overwritten next
 * (the line's room has the slack, as for ktevents.c's slots).
 */
static inline __attribute__((always_inline)) char *
put(char *p, const struct naming *n, uint32_t tid, unsigned int width)
{
	static const char spaces[16] = "                ";
	static const char unnamed[16] = "<...>", idle[16] = "<idle>";
	const char *comm = n ? n->comm : tid ? unnamed : idle;
	size_t len = n ? n->len : tid ? 5 : 6;
	char *start;

	if (width == 16 && len <= 16) {
		memcpy(p, spaces, 16);
		p += 16 - len;
		memcpy(p, comm, 16);
		p += len;
	} else {
		if (width > len) {
			memset(p, ' ', width - len);
			p += width - len;
		}
		if (len <= 16)	/* the usual comm, as above */
			memcpy(p, comm, 16);
		else
			memcpy(p, comm, len);
		p += len;
	}
	if (n && n->tid == tid) {	/* "-tid" and the column's spaces at once */
		memcpy(p, n->tid_text, sizeof(n->tid_text));
		return p + (width && n->tid_len < 8 ? 8 : n->tid_len);
	}
	*p++ = '-';
	start = p;
	p = ktev_put_u64(p, tid);
	if (width) {
		memcpy(p, spaces, 8);
		if (p - start < 7)
			p = start + 7;
	}
	return p;
}

char *tasks_put(const struct tasks *t, char *p, uint32_t tid, uint64_t tsc,
		unsigned int width)
{
	(void)tsc;
	return put(p, find(t, tid), tid, width);
}

static const struct naming *named(const struct task_names *names, uint32_t tid)
{
	for (unsigned int k = 0; k < TASKS_PER_EVENT; k++)
		if (names->n[k] && names->n[k]->tid == tid)
			return names->n[k];
	return NULL;
}

char *tasks_put_named(const struct task_names *names, char *p, uint32_t tid,
		      unsigned int width)
{
	/* put() made for the listing's column and for a task in a text */
	if (width == 16)
		return put(p, named(names, tid), tid, 16);
	if (!width)
		return put(p, named(names, tid), tid, 0);
	return put(p, named(names, tid), tid, width);
}

const char *tasks_named_comm(const struct task_names *names, uint32_t tid, size_t *len,
			     uint32_t *pid)
{
	const struct naming *n = named(names, tid);

	if (!n)
		return NULL;
	*len = n->len;
	*pid = n->pid;
	return n->comm;
}

char *tasks_put_ctx(const struct ktev_ctx *ctx, char *p, uint32_t tid)
{
	return tasks_put(ctx->tasks, p, tid, ctx->tsc, 0);
}

char *tasks_put_names_ctx(const struct ktev_ctx *ctx, char *p, uint32_t tid)
{
	return put(p, named(ctx->tasks, tid), tid, 0);
}
