// SPDX-License-Identifier: GPL-2.0
/*
 * pipeline: format events on worker threads while the main thread merges.
 *
 * Formatting is most of dtrace's work, and it parallelizes: the main thread
 * packs the events that pass the filters into batches, each worker formats
 * a whole batch into its own buffer and writes it once every earlier batch
 * is written.  The output is byte for byte what one thread would write.
 *
 * A batch closes before its output could outgrow a worker's buffer
 * (DTRACE_EVENT_BOUND per event), so a worker writes once per batch; should
 * it have to write earlier, it waits for its turn then.  Memory: a few
 * batches and one output buffer per worker, and one for the main thread.
 *
 * The main thread merges faster than one worker formats: rather than wait
 * for a free batch, it formats the oldest batch no worker has taken, as a
 * worker would (its turn, its own buffer), so that with one worker both
 * CPUs of a 2-CPU machine stay busy.
 */
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "dtrace.h"
#include "prefetch.h"
#include "util.h"

/*
 * Batches of a few thousand events: few enough hand-overs to cost nothing.
 * The output bound is some 4 times the real size, but only the pages a
 * worker writes take memory.
 */
#ifndef BATCH_BYTES		/* the fuzz target's are small: many batches */
#define BATCH_BYTES	(512 * 1024)		/* packed events */
#endif
#define BATCH_PREFETCH	2048			/* bytes ahead, see prefetch.h */
/* past a batch's end: what pipeline_add() copies past a short event, and its prefetch */
#define BATCH_SLACK	(2 * sizeof(uint32_t) + BATCH_PREFETCH)
#define WORKER_OUT	(2 * DTRACE_OUT_SIZE)	/* a worker's output buffer */
#define BATCH_OUTPUT	(WORKER_OUT - DTRACE_LINE_MAX)
#define MAX_WORKERS	8

struct batch {
	struct batch *next;
	uint64_t seq;			/* output order */
	size_t used;			/* bytes of packed events */
	size_t output;			/* bound of their output */
	char *data;
};

/* A thread that formats batches: a worker, or the main thread when ahead. */
struct worker {
	struct outbuf out;
	struct pipeline *pl;
	uint64_t seq;			/* of the batch it formats */
};

struct pipeline {
	struct dtrace *dt;
	const struct dtrace_format *fmt;
	pthread_mutex_t lock;
	pthread_cond_t changed;		/* any of the below */
	struct batch *free;		/* empty batches */
	struct batch *full, **full_tail;	/* to format, in order */
	uint64_t written;		/* batches written: whose turn it is (read unlocked: below) */
	bool done;			/* no more batches coming */
	struct batch *cur;		/* being filled by the main thread */
	uint64_t next_seq;
	unsigned int nr_workers;
	pthread_t workers[MAX_WORKERS];
	struct worker main_worker;	/* the main thread's, formatting a batch */
};

/* A packed event: its struct dtrace_event, then the ktfile_event's used part. */
static size_t packed_size(unsigned int nr_args)
{
	size_t size = sizeof(struct dtrace_event) + offsetof(struct ktfile_event, args) +
		      nr_args * sizeof(uint32_t);

	return (size + 7) & ~(size_t)7;
}

static void format_batch(struct pipeline *pl, struct outbuf *o, struct batch *b)
{
	for (size_t off = 0; off < b->used; ) {
		const struct dtrace_event *e = (const void *)(b->data + off);

		pl->fmt->event(pl->dt, o, e);
		off += packed_size(e->ev->nr_args);
	}
}

/* out_flush() of a worker: wait until every earlier batch is written. */
static void wait_turn(struct outbuf *o)
{
	struct worker *w = (struct worker *)((char *)o - offsetof(struct worker, out));
	struct pipeline *pl = w->pl;

	pthread_mutex_lock(&pl->lock);
	while (pl->written != w->seq)
		pthread_cond_wait(&pl->changed, &pl->lock);
	pthread_mutex_unlock(&pl->lock);
}

/* The oldest full batch, taken off the queue; called locked, @pl->full set. */
static struct batch *take_full(struct pipeline *pl)
{
	struct batch *b = pl->full;

	pl->full = b->next;
	if (!pl->full)
		pl->full_tail = &pl->full;
	return b;
}

/*
 * Format batch @b taken off the queue, write it in its turn and free it;
 * called unlocked, returns locked.
 */
static void format_write(struct worker *w, struct batch *b)
{
	struct pipeline *pl = w->pl;

	w->seq = b->seq;
	format_batch(pl, &w->out, b);
	wait_turn(&w->out);
	out_flush(&w->out);

	pthread_mutex_lock(&pl->lock);
	__atomic_store_n(&pl->written, pl->written + 1, __ATOMIC_RELEASE);
	b->next = pl->free;
	pl->free = b;
	/* the main thread (a free batch), the next in turn, or idle workers */
	pthread_cond_broadcast(&pl->changed);
}

static void *worker(void *arg)
{
	struct worker w = { .pl = arg };
	struct pipeline *pl = w.pl;

	out_open_fd(&w.out, pl->dt->out.fd, pl->dt->out.name, WORKER_OUT);
	w.out.before_write = wait_turn;
	pthread_mutex_lock(&pl->lock);
	for (;;) {
		struct batch *b = pl->full;

		if (!b) {
			if (pl->done)
				break;
			pthread_cond_wait(&pl->changed, &pl->lock);
			continue;
		}
		take_full(pl);
		pthread_mutex_unlock(&pl->lock);

		format_write(&w, b);
	}
	pthread_mutex_unlock(&pl->lock);
	free(w.out.buf);
	return NULL;
}

/* Hand the current batch to the workers (if it has anything). */
static void send_batch(struct pipeline *pl)
{
	struct batch *b = pl->cur;

	pl->cur = NULL;
	if (!b)
		return;
	pthread_mutex_lock(&pl->lock);
	if (b->used) {
		b->seq = pl->next_seq++;
		b->next = NULL;
		*pl->full_tail = b;
		pl->full_tail = &b->next;
	} else {
		b->next = pl->free;
		pl->free = b;
	}
	pthread_cond_broadcast(&pl->changed);
	pthread_mutex_unlock(&pl->lock);
}

/*
 * Asked at every naming (tasks_sync()), a few percent of the events: no
 * lock.  next_seq is the main thread's own; @written only grows, and a
 * value read late says less is written than is, which keeps a naming
 * longer, never shorter.
 */
void pipeline_progress(struct pipeline *pl, uint64_t *filling, uint64_t *written)
{
	*filling = pl->next_seq;
	*written = __atomic_load_n(&pl->written, __ATOMIC_ACQUIRE);
}

/*
 * A batch to fill, the current one having no room left (or none): sent to
 * the workers, and a free one taken.  Apart from pipeline_add(), so that
 * its locks and calls do not weigh on every event.
 */
static __attribute__((noinline)) struct batch *next_batch(struct pipeline *pl)
{
	send_batch(pl);
	pthread_mutex_lock(&pl->lock);
	while (!pl->free) {
		/*
		 * Every batch is full or being formatted: format the oldest
		 * full one here rather than wait.  Every batch before it is
		 * taken, so its turn comes without this thread.
		 */
		if (pl->full) {
			struct batch *full = take_full(pl);

			pthread_mutex_unlock(&pl->lock);
			format_write(&pl->main_worker, full);
			continue;
		}
		pthread_cond_wait(&pl->changed, &pl->lock);
	}
	pl->cur = pl->free;
	pl->free = pl->cur->next;
	pthread_mutex_unlock(&pl->lock);
	pl->cur->used = pl->cur->output = 0;
	return pl->cur;
}

/*
 * The event is made in its batch, not copied there: the caller fills in
 * the rest of the slot (its time, file and names) before the next call
 * sends the batch.
 */
struct dtrace_event *pipeline_add(struct pipeline *pl, const struct ktfile_event *ev)
{
	size_t size = packed_size(ev->nr_args), bound = DTRACE_EVENT_BOUND(ev);
	struct batch *b = pl->cur;
	struct dtrace_event *e;
	struct ktfile_event *copy;

	if (!b || b->used + size > BATCH_BYTES || b->output + bound > BATCH_OUTPUT)
		b = next_batch(pl);
	e = (void *)(b->data + b->used);
	/* a worker read this batch on another CPU: take its lines back early */
	prefetch_write(b->data + b->used + BATCH_PREFETCH);
	copy = (void *)(e + 1);
	/*
	 * Most events have two arguments: the header and two are copied
	 * whatever the count, a few moves (past a shorter event's end, into
	 * the next one's room or BATCH_SLACK), the rest after.
	 */
	memcpy(copy, ev, offsetof(struct ktfile_event, args) + 2 * sizeof(uint32_t));
	if (ev->nr_args > 2)
		memcpy(copy->args + 2, ev->args + 2, (ev->nr_args - 2) * sizeof(uint32_t));
	e->ev = copy;
	b->used += size;
	b->output += bound;
	return e;
}

struct pipeline *pipeline_start(struct dtrace *dt, const struct dtrace_format *fmt,
				unsigned int workers)
{
	struct pipeline *pl = xcalloc(1, sizeof(*pl));

	if (workers > MAX_WORKERS)
		workers = MAX_WORKERS;
	pl->dt = dt;
	pl->fmt = fmt;
	pl->full_tail = &pl->full;
	pthread_mutex_init(&pl->lock, NULL);
	pthread_cond_init(&pl->changed, NULL);
	/*
	 * Four batches a worker: with two, the main thread waited for a free
	 * one while workers waited for their turn to write (on 2 CPUs, four
	 * took dtrace from 1.26 s to 1.19 s, medians of 5, bench/dtrace.sh's
	 * 20M events).
	 */
	for (unsigned int i = 0; i < 4 * workers + 1; i++) {
		struct batch *b = xcalloc(1, sizeof(*b));

		b->data = xmalloc(BATCH_BYTES + BATCH_SLACK);
		b->next = pl->free;
		pl->free = b;
	}
	out_flush(&dt->out);		/* whatever came before goes first */
	pl->main_worker.pl = pl;
	out_open_fd(&pl->main_worker.out, dt->out.fd, dt->out.name, WORKER_OUT);
	pl->main_worker.out.before_write = wait_turn;
	for (unsigned int i = 0; i < workers; i++) {
		if (pthread_create(&pl->workers[i], NULL, worker, pl))
			break;
		pl->nr_workers++;
	}
	if (!pl->nr_workers)
		die("cannot start a thread");
	return pl;
}

void pipeline_finish(struct pipeline *pl)
{
	send_batch(pl);
	pthread_mutex_lock(&pl->lock);
	pl->done = true;
	pthread_cond_broadcast(&pl->changed);
	pthread_mutex_unlock(&pl->lock);
	for (unsigned int i = 0; i < pl->nr_workers; i++)
		pthread_join(pl->workers[i], NULL);
	free(pl->main_worker.out.buf);
	while (pl->free) {
		struct batch *b = pl->free;

		pl->free = b->next;
		free(b->data);
		free(b);
	}
	pthread_mutex_destroy(&pl->lock);
	pthread_cond_destroy(&pl->changed);
	free(pl);
}
