/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrace: the parts of the ktrace command shared by its files.
 */
#ifndef KTRACE_KTRACE_H
#define KTRACE_KTRACE_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/ktrace.h>

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
	bool *cpus;		/* -c, resolved: cpus[n] for n < nr_cpus */
	unsigned int nr_cpus;	/* = nr_cpu_ids of the kernel */
	char **command;		/* after --, NULL if none */
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

#endif /* KTRACE_KTRACE_H */
