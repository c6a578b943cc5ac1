/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrace-window: trace every CPU between two user-event markers and count
 * records in that window, for tests that compare ktrace with the kernel's
 * own counters.
 */
#ifndef KTRACE_WINDOW_H
#define KTRACE_WINDOW_H

#include "ktest.h"

#define WINDOW_MAX_CPUS	64
#define WINDOW_MAX_MARKS	64

struct window {
	int fd, nr_cpus, rfd[WINDOW_MAX_CPUS];
	struct ktrace_record *recs[WINDOW_MAX_CPUS];
	size_t nr[WINDOW_MAX_CPUS], cap[WINDOW_MAX_CPUS];
	uint64_t tsc_begin, tsc_end, lost;
	uint64_t mark[WINDOW_MAX_MARKS];	/* tsc of marker n, 0 if missing */
};

static inline void window_open(struct window *w, uint32_t buf_records)
{
	memset(w, 0, sizeof(*w));
	w->nr_cpus = nr_cpus_online();
	if (w->nr_cpus > WINDOW_MAX_CPUS)
		w->nr_cpus = WINDOW_MAX_CPUS;
	w->fd = kt_open(O_RDWR);
	kt_set_mask(w->fd, 0);
	if (kt_resize(w->fd, buf_records))
		bail("resize");
	for (int cpu = 0; cpu < w->nr_cpus; cpu++) {
		w->rfd[cpu] = kt_open(O_RDWR | O_NONBLOCK);
		if (kt_attach(w->rfd[cpu], cpu))
			bail("attach");
	}
}

static inline void window_marker(struct window *w, uint32_t which)
{
	uint32_t args[2] = { 0x6b74776e, which };

	if (kt_user_event(w->fd, 200, args, 2))
		bail("marker");
}

/*
 * Drain every CPU and find the markers; tracing must be off.  Markers 1 and
 * 2 bound the window; the others are the test's own.
 */
static inline void window_collect(struct window *w)
{
	w->lost = 0;
	memset(w->mark, 0, sizeof(w->mark));
	for (int cpu = 0; cpu < w->nr_cpus; cpu++) {
		w->nr[cpu] = kt_drain(w->rfd[cpu], &w->recs[cpu], &w->cap[cpu], 0);
		for (size_t i = 0; i < w->nr[cpu]; i++) {
			struct ktrace_record *r = &w->recs[cpu][i];

			if (r->event == KTRACE_CODE(KTRACE_GRP_user, 200) &&
			    r->arg1 == 0x6b74776e && r->arg2 < WINDOW_MAX_MARKS)
				w->mark[r->arg2] = r->tsc;
			if (r->event == KTRACE_META_LOST)
				w->lost += r->arg1 | (uint64_t)r->arg2 << 32;
		}
	}
	w->tsc_begin = w->mark[1];
	w->tsc_end = w->mark[2];
}

/* Records of event @code (group bits and subevent) between two tsc values. */
static inline uint64_t window_count(const struct window *w, uint32_t code,
				    uint64_t after, uint64_t before)
{
	uint64_t n = 0;

	for (int cpu = 0; cpu < w->nr_cpus; cpu++)
		for (size_t i = 0; i < w->nr[cpu]; i++)
			n += w->recs[cpu][i].event == code &&
			     w->recs[cpu][i].tsc > after && w->recs[cpu][i].tsc < before;
	return n;
}

/* Call @fn on every record of the window, continuation records excluded. */
#define window_for_each(w, r, cpu)					\
	for (int cpu = 0; cpu < (w)->nr_cpus; cpu++)			\
		for (struct ktrace_record *r = (w)->recs[cpu];		\
		     r < (w)->recs[cpu] + (w)->nr[cpu]; r++)		\
			if (r->tsc > (w)->tsc_begin && r->tsc < (w)->tsc_end && \
			    !(r->event & KTRACE_EVT_CONT))

/* The argument continuing @r (the first continuation record), or NULL. */
static inline struct ktrace_record *window_cont(struct window *w, int cpu,
						struct ktrace_record *r)
{
	if (r + 1 < w->recs[cpu] + w->nr[cpu] && (r[1].event & KTRACE_EVT_CONT))
		return r + 1;
	return NULL;
}

static inline void window_close(struct window *w)
{
	kt_set_mask(w->fd, 0);
	for (int cpu = 0; cpu < w->nr_cpus; cpu++) {
		close(w->rfd[cpu]);
		free(w->recs[cpu]);
	}
	kt_resize(w->fd, 65536);
	close(w->fd);
}

#endif /* KTRACE_WINDOW_H */
