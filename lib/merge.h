/* SPDX-License-Identifier: GPL-2.0 */
/*
 * merge: the events of many trace files in time stamp order.
 *
 * A k-way merge over the files with a binary heap keyed by (tsc, file
 * position): ties keep the order of the files as given.  It streams; memory
 * is one reader (about 100 KiB) per file, whatever the files' sizes.
 *
 *	struct kt_merge *m = kt_merge_open(paths, nr, 0);
 *	struct ktfile_reader *f;
 *
 *	while ((f = kt_merge_next(m)))
 *		use(f->hdr.cpu, &f->ev);
 *	if (kt_merge_failed(m))
 *		...;			(the message is out already)
 *	kt_merge_close(m);
 */
#ifndef KT_MERGE_H
#define KT_MERGE_H

#include <stdbool.h>

#include "ktfile.h"

struct kt_merge;

/*
 * Open @nr files and check that they belong together: same boot id and
 * hostname where both files have one.  All are converted to time with one
 * TSC rate, the first CPU file's (the kernel's), else the first file's; a
 * warning says so when a header's rate differs from it by more than 1 ppm.  @flags: KTFILE_FORCE passes to the
 * readers, and also merges files from different boots or hosts with a
 * warning and leaves out files with a bad header.  Returns NULL after
 * printing why.  Each reader's index is its position among the files kept.
 */
struct kt_merge *kt_merge_open(char *const *paths, unsigned int nr,
			       unsigned int flags);

/*
 * Files of several machines (dtrace/machines.c): @machine[i] is the
 * machine of paths[i] (the readers' ->machine); files are checked to
 * belong together within a machine only; @align, called for each file
 * opened, puts its time stamps on the common clock (ktfile_set_tsc_map()),
 * whose rate @tsc_hz every file is converted with.
 */
struct kt_merge_machines {
	const unsigned int *machine;
	void (*align)(void *ctx, struct ktfile_reader *f);
	void *ctx;
	uint64_t tsc_hz;
};

struct kt_merge *kt_merge_open_machines(char *const *paths, unsigned int nr,
					unsigned int flags, const struct kt_merge_machines *mm);

/*
 * The reader whose event (its ->ev) is next in time; valid until the next
 * call.  NULL at the end of all the files.  A bad record ends its file
 * only (the reader prints where and what; kt_merge_failed() is true from
 * then on), and a torn tail ends its file with a warning: the other files
 * are merged to their end.
 */
struct ktfile_reader *kt_merge_next(struct kt_merge *m);

/* A file had a bad record (its events stopped there): exit non-zero. */
bool kt_merge_failed(const struct kt_merge *m);

/* The files kept, in the order given: index 0 .. kt_merge_nr_files() - 1. */
unsigned int kt_merge_nr_files(const struct kt_merge *m);
struct ktfile_reader *kt_merge_file(const struct kt_merge *m, unsigned int i);

void kt_merge_close(struct kt_merge *m);

#endif /* KT_MERGE_H */
