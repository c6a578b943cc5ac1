/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrace: the parts of the ktrace command shared by its files.
 */
#ifndef KTRACE_KTRACE_H
#define KTRACE_KTRACE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>
#include <linux/ktrace.h>

struct probe_set;
struct ktfile_header;

/* What the command line asked for. */
struct ktrace_opts {
	const char *dev;	/* $KTRACE_DEV or /dev/ktrace */
	const char *events;	/* -e as given, NULL if not given */
	const char *output;	/* -o: files are <output>.cpu<N> */
	unsigned int wait_ms;	/* -w */
	double duration;	/* -d in seconds, 0 for no limit */
	uint32_t buf_records;	/* -b, 0 to leave the buffers alone */
	bool status;		/* -s */
	bool flight;		/* --flight */
	bool zstd;		/* -z: compressed files, BASE.cpuN.zst */
	int zstd_level;		/* --zstd-level, KTFILE_ZSTD_LEVEL by default */
	bool *cpus;		/* -c, resolved: cpus[n] for n < nr_cpus */
	unsigned int nr_cpus;	/* = nr_cpu_ids of the kernel */
	char **command;		/* after --, NULL if none */
	struct probe_set *probes;	/* -P, resolved; NULL if none */
	const char *send;	/* --send HOST:PORT: stream to a collector, no files */
	const char *spool;	/* --spool DIR, NULL: a temporary one */
	uint64_t spool_size;	/* --spool-size in bytes */
	double send_wait;	/* --send-wait: seconds to wait for the acks at the end */
	const char *name;	/* --name: the machine's name for the collector */
	const char *listen;	/* --listen [ADDR:]PORT: be the collector */
	const char *key;	/* --key FILE (or, --listen, DIR): authenticate, seal */
};

/* The control file: /dev/ktrace opened once for the ioctls (dev.c). */
int dev_open(const char *dev);
void dev_info(int ctl, const char *dev, struct ktrace_info *info);
void dev_set_mask(int ctl, const char *dev, uint32_t mask);
int dev_session_mask(int ctl, const char *dev, uint32_t mask);
void dev_name_tasks(int ctl, const char *dev);
void dev_set_mode(int ctl, const char *dev, uint32_t flags);
/* -b: resize the buffers (tracing off meanwhile), then set @then_mask if not 0 */
void dev_set_buf_size(int ctl, const char *dev, struct ktrace_info *info,
		      uint32_t records, uint32_t then_mask);
int dev_cpu_stats(int ctl, unsigned int cpu, struct ktrace_cpu_stats *st);
/* The mask from before, which ends the session; false (said why) if refused. */
bool dev_put_mask_back(int ctl, const char *dev, uint32_t mask);

/* Records per read() of a CPU's buffer: 256 KiB. */
#define CHUNK_RECORDS	10922

/* CLOCK_MONOTONIC in seconds, and seconds as a timeout (0 if negative). */
double now(void);
struct timespec to_timespec(double s);

/*
 * session.c: what record() and flight() share around their files: the
 * signals, the command, -d, and one stop sequence (session.c says in what
 * order).
 */
struct session {
	const struct ktrace_opts *o;
	int ctl;		/* the control file, for the probes */
	sigset_t orig;		/* the signal mask to sleep with, and the command's */
	pid_t child;		/* the command while it runs; 0: none, or it ended */
	int status;		/* its wait status once it ended */
	double start;		/* now() when the command started */
	double deadline;	/* the end of -d, 0 for none */
};

/*
 * Catch the stopping signals (SIGUSR1 asks for a snapshot if @snapshots);
 * with @own, own tracing (a session: off, the buffers empty) or die.
 */
void session_begin(struct session *s, const struct ktrace_opts *o, int ctl, bool own,
		   bool snapshots);
/*
 * Add the probes (-P: in the command, held before its exec until they are
 * in), start the command and -d's clock; false if the command could not start.
 */
bool session_run(struct session *s);
/* A stopping signal came, or -d is over. */
bool session_stopped(const struct session *s);
/* Sleep up to @wait s (never past -d) or until a signal; false: the command ended. */
bool session_sleep(struct session *s, double wait);
/* SIGUSR1 came since the last call (--flight). */
bool session_snapshot_asked(void);
/* Pass the signal that stopped ktrace on to the command. */
void session_stop(struct session *s);
/* Once the files are complete: the signals back, the command waited for; the exit status. */
int session_end(struct session *s, bool failed);

/*
 * procfiles.c: BASE.kallsyms and BASE.irqs, copies of /proc/kallsyms and
 * /proc/interrupts (0600, never through a link): before a recording
 * starts, with each snapshot; a copy that cannot be made costs only the names.
 */
void save_proc_copies(const char *base);

/*
 * Record the CPUs in o->cpus until a signal, the end of -d or the end of
 * the command.  @mask is the mask to set for the recording (-e), or
 * @set_mask false to leave the mask as it is.  Returns the exit status.
 */
int record(const struct ktrace_opts *o, int ctl, const struct ktrace_info *info,
	   bool set_mask, uint32_t mask);

/*
 * --flight: keep the newest records in the kernel's buffers (overwrite
 * mode) and write a snapshot of them on SIGUSR1 and at the end.  Same
 * arguments and exit status as record().
 */
int flight(const struct ktrace_opts *o, int ctl, const struct ktrace_info *info,
	   bool set_mask, uint32_t mask);

/*
 * send.c: --send.  sender_open() before tracing starts (the files' header
 * @tmpl, the CPUs' streams); sender_base() is where BASE.kallsyms and the
 * like go to be sent; sender_put() from a CPU's thread (its index) never
 * waits for the network; sender_finish() waits for the acknowledgements,
 * @wait s at most: 0, or -1 if some records were not delivered (said).
 */
struct sender;
struct sender *sender_open(const struct ktrace_opts *o, const struct ktfile_header *tmpl,
			   const unsigned int *cpus, unsigned int nr);
const char *sender_base(struct sender *s);
void sender_start(struct sender *s);
void sender_put(struct sender *s, unsigned int idx, const struct ktrace_record *recs,
		size_t nr);
int sender_finish(struct sender *s, double wait);

/* collect.c: --listen, the collector: runs until SIGINT/SIGTERM; the exit status. */
int collect(const struct ktrace_opts *o);

#endif /* KTRACE_KTRACE_H */
