/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tasks: the names of the traced tasks, from the trace itself: the
 * kernel's thread:name events (fork, exec, renames, and the state dump
 * ktrace asks for when it starts) and the headers of user streams.  A
 * task's name is the one it had at the time of the event being printed,
 * so a renamed task shows its old name before the rename and its new one
 * after; events before a task's first name (it was running when tracing
 * started, before the state dump) get that first name.
 *
 * The table is read whole before the merge starts and never changes
 * after, so the formats' worker threads may use it at once.
 */
#ifndef DTRACE_TASKS_H
#define DTRACE_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "ktevents.h"
#include "merge.h"

struct tasks;

/* Read the names in every file of @m (opened again: @m is not moved). */
struct tasks *tasks_load(struct kt_merge *m);
void tasks_free(struct tasks *t);

/*
 * The name (comm, escaped for text: at most KT_ESC_MAX(KTRACE_COMM_LEN)
 * bytes, @len of them, no NUL) of task @tid at @tsc, NULL if the trace
 * never names it.
 */
const char *tasks_comm(const struct tasks *t, uint32_t tid, uint64_t tsc, size_t *len);

/* Process id of task @tid at @tsc, 0 if unknown. */
uint32_t tasks_pid(const struct tasks *t, uint32_t tid, uint64_t tsc);

/*
 * "comm-tid" of task @tid at @tsc (ftrace's convention): "wget-61",
 * "<idle>-0", "<...>-57" when the trace never names it; the comm is
 * escaped (it comes from the traced machine).  At most KTEV_TASK_MAX
 * bytes, no NUL.  @width > 0 right-aligns the comm in @width columns and
 * left-aligns the tid in 7 (a column).
 */
char *tasks_put(const struct tasks *t, char *p, uint32_t tid, uint64_t tsc,
		unsigned int width);

/* The name in a thread:name event (at least 6 arguments): not terminated. */
struct ktfile_event;
void tasks_event_comm(const struct ktfile_event *ev, char comm[KTRACE_COMM_LEN]);

/* The ktev_ctx put_task of an event at @tsc: ctx->tasks is a struct tasks. */
char *tasks_put_ctx(const struct ktev_ctx *ctx, char *p, uint32_t tid);

#endif /* DTRACE_TASKS_H */
