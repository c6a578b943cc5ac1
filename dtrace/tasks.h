/* SPDX-License-Identifier: GPL-2.0 */
/*
 * tasks: the names of the traced tasks, from the trace itself: the
 * kernel's thread:name events (fork, exec, renames, and the state dump
 * ktrace asks for when it starts) and the headers of user streams.  A
 * task's name at an event is the last naming before it in merge order, so
 * a renamed task shows its old name before the rename and its new one
 * after, and a task that exited is unnamed until a naming of its reused
 * thread id.  Fork keeps the comm: a forked task no naming names yet
 * has its parent's name (as a process of its own) until one does.  The table follows the merge (tasks_follow()): one naming per
 * live thread, whatever the trace's length.
 *
 * Two cases look ahead, in regular files only (a pipe is read once, by
 * the merge): events before a task's first naming (it ran when tracing
 * started, before the state dump) get that first name, if it is among the
 * first TASKS_AHEAD records of a file; and in a flight snapshot (a CPU's
 * records begin with a lost marker: renames before the latest such start
 * may be lost on one CPU and kept on another) a naming from before every
 * CPU's records begin yields to the first one after (the snapshot's state
 * dump names every task at its end): such a file is read ahead whole, its
 * size is the kernel buffer's.
 *
 * The formats' worker threads never look names up: the merge thread puts
 * the namings an event needs in the event (struct task_names), and a
 * naming the table drops is freed once no batch that may hold it is left
 * (tasks_progress()).
 */
#ifndef DTRACE_TASKS_H
#define DTRACE_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "ktevents.h"
#include "merge.h"

#define TASKS_AHEAD	(1u << 16)

struct tasks;
struct naming;
struct ktfile_event;

/*
 * The tasks an event shows: its own, then its %T arguments (at most 2),
 * the task a thread:name names, a thread:fork's child.
 */
#define TASKS_PER_EVENT	3
struct task_names {
	const struct naming *n[TASKS_PER_EVENT];	/* NULL: none, or unnamed */
};

/* The names the user streams' headers give, and what tasks.h looks ahead for. */
struct tasks *tasks_open(struct kt_merge *m);
void tasks_free(struct tasks *t);

/*
 * The machine (ktfile_reader.machine) of the events that follow: each
 * machine's tids are its own tasks.  0 for one machine.
 */
void tasks_set_machine(struct tasks *t, unsigned int machine);

/*
 * Every event of the merge, in its order, filtered out or not: a naming
 * takes effect at its own event (before @ev is shown), an exit after it
 * (call tasks_follow_after() once @ev is handed on).
 */
void tasks_follow(struct tasks *t, const struct ktfile_event *ev);
void tasks_follow_after(struct tasks *t, const struct ktfile_event *ev);

/*
 * Where the formats' batches are: a naming dropped now may be in batch
 * @filling or any before it; batches before @written are written.  Without
 * a pipeline (0, 1), a dropped naming is freed at once.
 */
void tasks_progress(struct tasks *t, uint64_t filling, uint64_t written);

/* Whether @ev changes the table (tasks_progress() is wanted before it). */
static inline bool tasks_changes(const struct ktfile_event *ev)
{
	return ev->code == KTRACE_thread_name || ev->code == KTRACE_thread_exit ||
	       ev->code == KTRACE_thread_fork;
}

/*
 * The namings @ev shows, as the table is now: for another thread to print.
 * Returns 1 + the index in ktev_events[] of ktev_lookup(@ev->code), 0 if
 * none or not looked up (no table): struct dtrace_event's desc.
 */
uint32_t tasks_resolve(const struct tasks *t, const struct ktfile_event *ev,
		   struct task_names *names);

/* Process id of task @tid now (at @tsc), 0 if unknown. */
uint32_t tasks_pid(const struct tasks *t, uint32_t tid, uint64_t tsc);

/*
 * "comm-tid" of task @tid now (at @tsc) (ftrace's convention): "wget-61",
 * "<idle>-0", "<...>-57" when unnamed; the comm is escaped (it comes from
 * the traced machine).  At most KTEV_TASK_MAX bytes, no NUL.  @width > 0
 * right-aligns the comm in @width columns and left-aligns the tid in 7
 * (a column).
 */
char *tasks_put(const struct tasks *t, char *p, uint32_t tid, uint64_t tsc,
		unsigned int width);

/* The same of task @tid among an event's @names (tasks_resolve()). */
char *tasks_put_named(const struct task_names *names, char *p, uint32_t tid,
		      unsigned int width);

/*
 * The name (comm, escaped for text: at most KT_ESC_MAX(KTRACE_COMM_LEN)
 * bytes, @len of them, no NUL) and process (@pid) of task @tid among an
 * event's @names, NULL if unnamed: what every view says of the task.
 */
const char *tasks_named_comm(const struct task_names *names, uint32_t tid, size_t *len,
			     uint32_t *pid);

/* ktev_ctx put_task: ctx->tasks is a struct tasks (now, in merge order). */
char *tasks_put_ctx(const struct ktev_ctx *ctx, char *p, uint32_t tid);

/* ktev_ctx put_task: ctx->tasks is an event's struct task_names. */
char *tasks_put_names_ctx(const struct ktev_ctx *ctx, char *p, uint32_t tid);

#endif /* DTRACE_TASKS_H */
