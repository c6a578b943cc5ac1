// SPDX-License-Identifier: GPL-2.0
/*
 * tasks: names of the traced tasks by thread id and time (tasks.h).
 *
 * One array of every naming, sorted by thread id then time stamp, and a
 * hash map from a thread id to its run of namings: a lookup (one or more
 * per printed event) is a hash probe, then a search of the few namings of
 * one thread.
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
	uint64_t tsc;		/* from then on (0: from the start) */
	uint32_t tid, pid;
	uint32_t seq;		/* order read, among equal tid and tsc */
	uint8_t len;
	char comm[COMM_MAX];	/* escaped for text */
};

struct tasks {
	struct naming *v;
	size_t nr, cap;
	/*
	 * Flight snapshots: the latest start of a CPU's records that begin
	 * with records overwritten (a lost marker).  Before it, renames may
	 * be lost on one CPU and kept on another: a naming older than it is
	 * trusted only where no later one says otherwise.  0: none.
	 */
	uint64_t complete_from;
	struct amap by_tid;	/* tid -> its struct run */
	uint64_t serial;	/* which table: see struct cached */
	struct run {
		size_t first, nr;	/* its namings: v[first ... first + nr - 1] */
	} *runs;
};

static void add(struct tasks *t, uint64_t tsc, uint32_t tid, uint32_t pid,
		const char *comm)
{
	struct naming *n;

	if (t->nr == t->cap) {
		t->cap = t->cap ? 2 * t->cap : 256;
		t->v = xrealloc(t->v, t->cap * sizeof(*t->v));
	}
	n = &t->v[t->nr];
	n->tsc = tsc;
	n->tid = tid;
	n->pid = pid;
	n->seq = t->nr++;
	n->len = kt_escape(n->comm, COMM_MAX, comm, KTRACE_COMM_LEN, KT_ESC_TEXT) - n->comm;
}

static int cmp(const void *a, const void *b)
{
	const struct naming *x = a, *y = b;

	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

void tasks_event_comm(const struct ktfile_event *ev, char comm[KTRACE_COMM_LEN])
{
	memset(comm, 0, KTRACE_COMM_LEN);
	if (ev->nr_args > 2)
		ktev_unpack_bytes(comm, KTRACE_COMM_LEN, ev->args + 2, ev->nr_args - 2);
}

/*
 * The thread:name events of one kernel stream.  A bad record ends it
 * quietly: the merge says what is wrong when it gets there.
 */
static void load_file(struct tasks *t, const char *path)
{
	struct ktfile_reader *r;
	char comm[KTRACE_COMM_LEN];
	struct stat st;

	/* read again: only a file, a pipe's records are the merge's alone */
	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return;
	r = ktfile_open(path, KTFILE_QUIET);
	if (!r)
		return;
	for (bool first = true; ktfile_next(r) > 0; first = false) {
		const struct ktfile_event *ev = &r->ev;

		if (first && ev->code == KTRACE_META_LOST && ev->tsc > t->complete_from)
			t->complete_from = ev->tsc;

		if (ev->code == KTRACE_thread_name && ev->nr_args >= 2 + KTRACE_COMM_LEN / 4) {
			tasks_event_comm(ev, comm);
			add(t, ev->tsc, ev->args[0], ev->args[1], comm);
		}
	}
	ktfile_reader_close(r);
}

struct tasks *tasks_load(struct kt_merge *m)
{
	static uint64_t tables;		/* loaded so far: the serials */
	struct tasks *t = xcalloc(1, sizeof(*t));

	t->serial = __atomic_add_fetch(&tables, 1, __ATOMIC_RELAXED);
	for (unsigned int i = 0; i < kt_merge_nr_files(m); i++) {
		const struct ktfile_reader *f = kt_merge_file(m, i);

		if (f->hdr.cpu < 0)	/* a user stream names its thread */
			add(t, 0, f->hdr.tid, f->hdr.pid, f->hdr.comm);
		else
			load_file(t, f->path);
	}
	if (t->nr)		/* qsort() of NULL is undefined, even of none */
		qsort(t->v, t->nr, sizeof(*t->v), cmp);
	t->runs = xcalloc(t->nr + 1, sizeof(*t->runs));
	for (size_t i = 0, r = 0; i < t->nr; i++) {
		if (i && t->v[i].tid == t->v[i - 1].tid) {
			t->runs[r - 1].nr++;
			continue;
		}
		t->runs[r] = (struct run){ i, 1 };
		amap_put(&t->by_tid, t->v[i].tid, &t->runs[r++]);
	}
	return t;
}

void tasks_free(struct tasks *t)
{
	if (t) {
		free(t->v);
		free(t->runs);
		free(t->by_tid.keys);
		free(t->by_tid.vals);
	}
	free(t);
}

/*
 * The last lookups of this thread (the formats run on several), by tid:
 * events come in time order, so a task's next event mostly falls in the
 * same naming's time range, [from, to).
 */
#define CACHE_SIZE	64

struct cached {
	/*
	 * The table by its address and serial: a table loaded after another
	 * was freed may be where that one was, and its cached namings are
	 * freed memory then.
	 */
	const struct tasks *t;
	uint64_t serial;
	uint32_t tid;
	uint64_t from, to;
	const struct naming *n;
};

static _Thread_local struct cached cache[CACHE_SIZE];

/* The naming of @tid in force at @tsc, else its first one, else NULL. */
static const struct naming *find(const struct tasks *t, uint32_t tid, uint64_t tsc)
{
	struct cached *c = &cache[tid % CACHE_SIZE];
	const struct run *run;
	const struct naming *v;
	size_t lo = 0, hi;

	if (c->t == t && t && c->serial == t->serial && c->tid == tid && tsc >= c->from &&
	    tsc < c->to)
		return c->n;
	c->t = NULL;
	run = t ? amap_get(&t->by_tid, tid) : NULL;
	if (!run)
		return NULL;
	v = &t->v[run->first];
	hi = run->nr;
	/* the first of its namings after @tsc */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (v[mid].tsc <= tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && v[lo - 1].tsc < t->complete_from) {
		/* from before the snapshot was complete: a later naming wins */
		size_t k = lo;

		while (k < run->nr && v[k].tsc < t->complete_from)
			k++;
		if (k < run->nr)
			return &v[k];
	}
	*c = (struct cached){
		.t = t, .serial = t->serial, .tid = tid, .n = &v[lo ? lo - 1 : 0],
		.from = lo ? v[lo - 1].tsc : 0,
		.to = lo < run->nr ? v[lo].tsc : UINT64_MAX,
	};
	return c->n;
}

const char *tasks_comm(const struct tasks *t, uint32_t tid, uint64_t tsc, size_t *len)
{
	const struct naming *n = find(t, tid, tsc);

	if (!n)
		return NULL;
	*len = n->len;
	return n->comm;
}

uint32_t tasks_pid(const struct tasks *t, uint32_t tid, uint64_t tsc)
{
	const struct naming *n = find(t, tid, tsc);

	return n ? n->pid : 0;
}

char *tasks_put(const struct tasks *t, char *p, uint32_t tid, uint64_t tsc,
		unsigned int width)
{
	const struct naming *n = find(t, tid, tsc);
	const char *comm = n ? n->comm : tid ? "<...>" : "<idle>";
	size_t len = n ? n->len : strlen(comm);
	char *start;

	if (width > len) {
		memset(p, ' ', width - len);
		p += width - len;
	}
	memcpy(p, comm, len);
	p += len;
	*p++ = '-';
	start = p;
	p = ktev_put_u64(p, tid);
	if (width)
		for (; p - start < 7; )
			*p++ = ' ';
	return p;
}

char *tasks_put_ctx(const struct ktev_ctx *ctx, char *p, uint32_t tid)
{
	return tasks_put(ctx->tasks, p, tid, ctx->tsc, 0);
}
