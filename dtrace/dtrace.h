/* SPDX-License-Identifier: GPL-2.0 */
/*
 * dtrace: merge trace files and print them.
 *
 * main.c parses the options, run.c merges the files and filters the
 * events; each output format is a struct dtrace_format in a file of its
 * own (text.c, summary.c, ...) that gets the events that passed the
 * filters, and keeps its state in a struct of its own (dt->fmt_state).
 * To add a format: write its file (dtrace.mk builds all of dtrace/) and
 * give it an option in main.c's table.
 */
#ifndef DTRACE_H
#define DTRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "ktevents.h"
#include "ktfile.h"
#include "merge.h"
#include "probes.h"
#include "symbols.h"
#include "tasks.h"

/* Output buffered in big blocks, formatted by hand into it. */
struct outbuf {
	char *buf, *p, *end;
	int fd;
	const char *name;	/* for messages: the -o file or "standard output" */
	void (*before_write)(struct outbuf *o);	/* the pipeline's turn, or NULL */
	/*
	 * text.c's --absolute: the date part of the last second written here
	 * (each thread writes to an outbuf of its own).  date_len 0: none.
	 */
	int64_t date_sec;
	uint8_t date_len;
	char date[32];
};

/* Room for one line of any format; out_reserve() guarantees it. */
#define DTRACE_LINE_MAX		(KTEV_TEXT_MAX + KTEV_TASK_MAX + 256)
#define DTRACE_OUT_SIZE		(1024 * 1024)

/*
 * @path NULL: standard output.  Dies if @path is one of the @inputs (by
 * device and inode) or a symbolic link.
 */
struct stat;
void out_open(struct outbuf *o, const char *path, const struct stat *inputs,
	      unsigned int nr_inputs);
void out_open_fd(struct outbuf *o, int fd, const char *name, size_t size);
void out_flush(struct outbuf *o);			/* dies on a write error */
void out_close(struct outbuf *o);
void out_printf(struct outbuf *o, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* @len bytes of @s, any length (names as long as C++ makes them). */
void out_write(struct outbuf *o, const void *s, size_t len);

/* Where to write up to DTRACE_LINE_MAX bytes; out_commit() the end after. */
static inline char *out_reserve(struct outbuf *o)
{
	if (o->end - o->p < DTRACE_LINE_MAX)
		out_flush(o);
	return o->p;
}

static inline void out_commit(struct outbuf *o, char *p)
{
	o->p = p;
}

struct calls;
struct call_filter;

/* What dtrace knows of each file, by its reader's index. */
struct dtrace_file {
	bool selected;		/* passes -c */
	char cpu[16];		/* the CPU column, "  3" or "  -" for a user stream */
	uint8_t cpu_len;
	struct sym_proc *proc;	/* a user stream's process: its symbols */
	/*
	 * Its machine's name (machines.c), NULL: one machine.  What a
	 * format's machine column shows (text.c, ctf.c, parquet.c).
	 */
	const char *machine;
	uint8_t machine_len;
	unsigned int machine_nr;	/* its index among the machines, 0 for one */
	/* its machine's kallsyms, irq names and probes (machines.c); NULL: dt's */
	const struct ksyms *ksyms;
	const struct irq_names *irqs;
	const struct probes *probes;
	/*
	 * How its events decode, but for each event's time and names: the
	 * above or dt's, made once (dtrace_format_start()), not per event.
	 */
	struct ktev_ctx decode;
};

struct dtrace {
	/* options */
	uint32_t mask;		/* -e: groups shown; meta records always are */
	uint64_t *cpus;		/* -c: bitmap, NULL for all */
	uint64_t *tids;		/* -t: bitmap, NULL for all */
	uint64_t *pids;		/* -p: bitmap of processes, NULL for all */
	uint64_t from_ns, to_ns;	/* --from/--to, relative to the first event */
	bool tsc;		/* --tsc: raw time stamps */
	bool absolute;		/* --absolute: wall clock time */
	bool sites;		/* --sites: call sites in --calltree */
	struct report_opts *report;	/* --report's --sort, --per-thread, --diff */
	struct call_filter *call_filter;	/* -F, -N, --depth, ...: the call views' (callfilter.h) */
	unsigned int stacks;	/* --folded*: what the stacks formats weigh (stacks.h) */
	struct ktev_ctx decode;	/* --raw, the kernel's symbols, irq and task names */
	const char *output;	/* -o, NULL for standard output */
	const char *only_machine;	/* --machine */
	bool machines_report;	/* --machines */
	struct machines *machines;	/* machine directories given (machines.c), NULL: none */
	/* state */
	struct kt_merge *merge;
	struct dtrace_file *files;
	bool user_streams;	/* some files are user streams (symbols: one thread) */
	uint64_t t0;		/* time stamp of the first event of the merge */
	struct tasks *tasks;	/* names of the tasks, following the merge (NULL: --raw) */
	struct sym_db *syms;	/* user streams' symbols (symbols.h) */
	struct probes *probes;	/* BASE.probes (probes.h), NULL: none, or --raw */
	const char *probes_expected;	/* where it was looked for, to say so once */
	bool probes_warned;
	struct latency_opts *latency;	/* --latency (latency.c) */
	struct calls *calls;	/* the user threads' calls, for a DTRACE_FMT_CALLS format */
	void *fmt_state;	/* the format's own, from its start() */
	struct outbuf out;
};

/*
 * Task @tid of file @file's machine, as per-task tables key it: a tid on two
 * machines is two tasks.
 */
static inline uint64_t dtrace_task_key(const struct dtrace *dt, unsigned int file, uint32_t tid)
{
	return (uint64_t)dt->files[file].machine_nr << 32 | tid;
}

/* An event that passed the filters, as the formats get it. */
struct dtrace_event {
	uint64_t ns;			/* time after the first event of the merge */
	unsigned int file;		/* index of its file: dt->files[], kt_merge_file() */
	/* 1 + index in ktev_events[] of ktev_lookup(ev->code); 0: none, or not looked up */
	uint32_t desc;
	const struct ktfile_event *ev;	/* the reader's, or the pipeline's copy */
	struct task_names names;	/* the tasks it shows, named as they were then */
};

/*
 * An event's group:event (padded to @width) and text, as every view shows
 * it: the program's name and format of a user event, the names of its
 * tasks then (@e->names).  At most KTEV_TEXT_MAX bytes, no NUL.
 */
char *dtrace_put_event(const struct dtrace *dt, char *p, const struct dtrace_event *e,
		       unsigned int width);
/* Its text alone (not of a function call), as dtrace_put_event() says it. */
char *dtrace_put_text(const struct dtrace *dt, char *p, const struct dtrace_event *e);
/* The group:event of @code alone, as dtrace_put_event() names a kernel event. */
char *dtrace_put_name(const struct dtrace *dt, char *p, uint32_t code, unsigned int width);
/* @e's time as the listing's column says it: us, --tsc or --absolute. */
char *dtrace_put_time(const struct dtrace *dt, char *p, struct outbuf *o,
		      const struct dtrace_event *e);

/*
 * An output format.  start(), if any, runs before the first event: what it
 * returns is the format's state, dt->fmt_state, until end().  event()
 * writes one event to @o; end(), if any, runs after the last one and frees
 * the state.  @flags say what dtrace does for the format (DTRACE_FMT_*).
 */
struct dtrace_format {
	const char *name;
	unsigned int flags;
	void *(*start)(struct dtrace *dt, struct outbuf *o);
	void (*event)(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e);
	void (*end)(struct dtrace *dt, struct outbuf *o);
};

/*
 * event() may run on several threads at once (each with its own @o, in
 * batches whose output the pipeline puts in order): it changes no state,
 * and writes at most DTRACE_EVENT_BOUND(e->ev) bytes an event.
 */
#define DTRACE_FMT_PARALLEL	(1u << 0)
/* Files of its own in the directory -o names (dt->output): @o is stdout. */
#define DTRACE_FMT_TO_DIR	(1u << 1)
/* It replays the user threads' calls: dt->calls keeps them (calls.h) ... */
#define DTRACE_FMT_CALLS	(1u << 2)
/* ... with the threads' other events among them (--calltree) */
#define DTRACE_FMT_CALL_EVENTS	(1u << 3)
/* It shows the calls alone: they pass -e, which picks the other events. */
#define DTRACE_FMT_CALL_VIEW	(1u << 4)
/* With --raw it names no task: the names need not be followed. */
#define DTRACE_FMT_RAW_NAMELESS	(1u << 5)
/* -t and -p pick the tasks it shows, not its events: dtrace_task_selected() */
#define DTRACE_FMT_OWN_TASKS	(1u << 6)
/* It draws the stacks of dt->stacks (stacks.h): their groups pass -e. */
#define DTRACE_FMT_STACKS	(1u << 7)
/* Binary: to the file -o names, never a terminal or the pager. */
#define DTRACE_FMT_TO_FILE	(1u << 8)

/* a line's columns and text: a task column besides its text */
#define DTRACE_LINE_BOUND(nr_args)	(192 + KTEV_TASK_MAX + KTEV_TEXT_BOUND(nr_args))
/* ... and of @ev's: a probe hit's values need not be in its records (probes.h) */
#define DTRACE_EVENT_BOUND(ev)	(((ev)->code & KTRACE_GROUP_MASK) == KTRACE_GRP_probe ?	\
				 192 + KTEV_TASK_MAX + PROBE_TEXT_MAX :			\
				 DTRACE_LINE_BOUND((ev)->nr_args))

extern const struct dtrace_format dtrace_text;		/* text.c */
extern const struct dtrace_format dtrace_summary;	/* summary.c */
extern const struct dtrace_format dtrace_ctf;		/* ctf.c */
extern const struct dtrace_format dtrace_perfetto;	/* perfetto.c: JSON */
extern const struct dtrace_format dtrace_perfetto_pb;	/* perfetto_pb.c: protobuf */
extern const struct dtrace_format dtrace_latency;	/* latency.c */
extern const struct dtrace_format dtrace_parquet;	/* parquet.c */

/* --latency A,B, --key, --slowest: what latency.c pairs (parsed in its start()) */
struct latency_opts {
	const char *pair;	/* "A,B" as given */
	const char *key;	/* a value name of both, NULL: the same thread */
	unsigned int slowest;	/* pairs listed */
};

#define DTRACE_MAX_TIDS	(1u << 22)	/* PID_MAX_LIMIT: the bits of -p and -t */

/*
 * run.c: merge, filter and hand every event to @fmt, through the pipeline
 * where @fmt is parallel: @jobs threads in all, this one merging and
 * @jobs - 1 formatting; returns the exit status.
 */
int dtrace_run(struct dtrace *dt, const struct dtrace_format *fmt, unsigned int jobs);
/*
 * Whether -t and -p select task @tid of process @pid (0: the process the
 * trace's names give it at @tsc).
 */
bool dtrace_task_selected(const struct dtrace *dt, uint32_t pid, uint32_t tid, uint64_t tsc);
/* What dtrace_run() does before the first event and after the last. */
void dtrace_format_start(struct dtrace *dt, const struct dtrace_format *fmt);
void dtrace_format_end(struct dtrace *dt, const struct dtrace_format *fmt);

/*
 * pipeline.c: parallel formats run on @workers threads while the main
 * thread merges.  pipeline_add() copies @ev into the current batch and
 * returns its slot there, whose ns, file and names the caller sets before
 * the next call; pipeline_finish() waits until all is written.  A format's event() on
 * a worker thread gets the names of @e->names, never the table's.
 */
struct pipeline;
struct pipeline *pipeline_start(struct dtrace *dt, const struct dtrace_format *fmt,
				unsigned int workers);
struct dtrace_event *pipeline_add(struct pipeline *pl, const struct ktfile_event *ev);
/* The batch the next event goes into, and how many batches are written. */
void pipeline_progress(struct pipeline *pl, uint64_t *filling, uint64_t *written);
void pipeline_finish(struct pipeline *pl);

/*
 * machines.c: several machines' directories (ktrace --listen's) on one
 * timeline.  machines_expand(): NULL if none of @args is one, else their
 * files (dt->machines set); machines_merge_open() merges them on the
 * collector's clock; machines_setup_file() names a file's machine (and
 * applies --machine); machines_report() is --machines: each machine's
 * clock alignment and its error bound.
 */
char **machines_expand(struct dtrace *dt, char *const *args, int nr, int *nr_out);
struct kt_merge *machines_merge_open(struct dtrace *dt, char **traces, unsigned int nr,
				     unsigned int flags);
void machines_setup_file(const struct dtrace *dt, struct dtrace_file *df,
			 const struct ktfile_reader *f);
unsigned int machines_width(const struct dtrace *dt);
void machines_report(const struct dtrace *dt, FILE *out);
void machines_free(struct dtrace *dt);

/* Time columns, shared by the formats: "12.345" microseconds, ns precision. */
char *dtrace_put_us(char *p, uint64_t ns, unsigned int width);

#endif /* DTRACE_H */
