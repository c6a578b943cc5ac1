/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * ktfile: the ktrace trace file, its reader, writer and merge.
 *
 * A trace file is one stream: the records of one CPU (written by ktrace from
 * /dev/ktrace) or of one user thread (written by libktrace).  It is a
 * fixed 512-byte header followed by struct ktrace_record exactly as the
 * kernel produced them, lost-record markers in place.  The format is
 * documented in Documentation/trace/ktrace-file.rst.
 *
 * Every tool and test reads and writes trace files through this library.
 */
#ifndef KTFILE_H
#define KTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/ktrace.h>

#define KTFILE_MAGIC		"KTRACE\r\n"	/* 8 bytes, no NUL */
#define KTFILE_VERSION		1
#define KTFILE_HEADER_SIZE	512
#define KTFILE_BYTE_ORDER	0x01020304u

/*
 * Most arguments one event can carry: its own two, two per CONT record, of
 * which a chain has at most 256 (their index is the 8-bit subevent field).
 */
#define KTFILE_MAX_ARGS		(2 + 2 * (1 << (32 - KTRACE_SUB_SHIFT)))

/* ktfile_header.flags */
#define KTFILE_TSC_INVARIANT	(1u << 0)	/* TSC rate constant, synced across CPUs */
#define KTFILE_USER_STREAM	(1u << 1)	/* one user thread, not one CPU */

/**
 * struct ktfile_header - first KTFILE_HEADER_SIZE bytes of a trace file
 * All integers in the byte order of the machine that wrote the file, which
 * byte_order tells; strings NUL-terminated; unused bytes zero.
 */
struct ktfile_header {
	char magic[8];		/* KTFILE_MAGIC */
	uint32_t version;	/* KTFILE_VERSION */
	uint32_t header_size;	/* KTFILE_HEADER_SIZE: records start here */
	uint32_t byte_order;	/* KTFILE_BYTE_ORDER as written */
	uint32_t record_size;	/* sizeof(struct ktrace_record) */
	int32_t cpu;		/* CPU of a kernel stream, -1 for a user stream */
	uint32_t flags;		/* KTFILE_* */
	uint32_t pid;		/* user stream: process id; kernel: 0 */
	uint32_t tid;		/* user stream: thread id; kernel: 0 */
	uint64_t tsc_hz;	/* TSC frequency */
	uint64_t ref_tsc;	/* TSC read at the start of recording ... */
	uint64_t ref_mono_ns;	/* ... with CLOCK_MONOTONIC ... */
	uint64_t ref_real_ns;	/* ... and CLOCK_REALTIME at that moment */
	uint32_t mask;		/* group mask in force */
	uint32_t reserved0;
	char boot_id[40];	/* /proc/sys/kernel/random/boot_id */
	char release[65];	/* uname -r */
	char hostname[65];	/* uname -n */
	char tool_version[16];	/* version of the writer */
	char comm[16];		/* user stream: program name */
	uint8_t reserved[230];	/* zero */
};

_Static_assert(sizeof(struct ktfile_header) == KTFILE_HEADER_SIZE,
	       "ktfile header is 512 bytes");
_Static_assert(sizeof(struct ktrace_record) == 24, "record is 24 bytes");

/* ---- writer: lib/ktfile_write.c ---------------------------------------- */

/*
 * Fill *h for a stream of @cpu (-1: a user stream of the calling thread;
 * pid, tid and comm are taken from it) with the TSC reference (TSC,
 * CLOCK_MONOTONIC, CLOCK_REALTIME) taken now.  @tsc_hz 0 means calibrate
 * with ktfile_tsc_hz().  Returns 0, or -errno when the boot id could not be
 * read (the header is complete otherwise, boot_id empty).
 */
int ktfile_header_init(struct ktfile_header *h, int cpu, uint64_t tsc_hz,
		       bool tsc_invariant, uint32_t mask);

/* TSC frequency measured against CLOCK_MONOTONIC over ~15 ms; 0 on failure. */
uint64_t ktfile_tsc_hz(void);

struct ktfile_writer;

/*
 * How a compressed writer (ktfile_create_zstd()) stores records: set by it,
 * so that ktfile_write.c, which libktrace links, needs no libzstd.
 */
struct ktfile_codec {
	int (*append)(struct ktfile_writer *w, const struct ktrace_record *recs, size_t nr);
	int (*cut)(struct ktfile_writer *w, uint64_t records);
	int (*close)(struct ktfile_writer *w);
};

/**
 * struct ktfile_writer - a trace file being written
 * @fd:      the open file, -1 once closed
 * @records: whole records in the file after the header (compressed: in
 *           its frames and in the frame still being filled)
 * @codec:   NULL: records go into the file as they are
 * @codec_state: the codec's
 * @file_bytes: compressed: bytes in the file (its whole frames)
 */
struct ktfile_writer {
	int fd;
	uint64_t records;
	const struct ktfile_codec *codec;
	void *codec_state;
	uint64_t file_bytes;
};

/* Bytes in the file: the header and every whole record. */
static inline uint64_t ktfile_bytes(const struct ktfile_writer *w)
{
	return KTFILE_HEADER_SIZE + w->records * sizeof(struct ktrace_record);
}

/*
 * Create @path (mode 0600, O_EXCL|O_NOFOLLOW: an existing regular file is
 * replaced, a link, FIFO or device is refused with -EEXIST; see files.h)
 * and write the header.  Returns 0 or -errno (kt_create_strerror() says
 * it); on error no file is left behind.
 */
int ktfile_create(struct ktfile_writer *w, const char *path,
		  const struct ktfile_header *h);

/*
 * Append @nr records.  Returns 0 or -errno (ENOSPC, EDQUOT, EIO ...).  On
 * error the records that got out whole stay in the file and are counted in
 * w->records, a torn last record is cut off, so the file stays readable; the
 * writer stays usable (a later append goes after the last whole record).
 */
int ktfile_append(struct ktfile_writer *w, const struct ktrace_record *recs,
		  size_t nr);

/* Close the file.  Returns 0 or -errno from close(). */
int ktfile_close(struct ktfile_writer *w);

/*
 * Cut the file back to its first @records records (a lost marker then
 * takes the place of what was cut).  Returns 0, or -errno; compressed, only
 * the last KTFILE_ZSTD_HOLD records can be cut (-ESPIPE before them).
 */
int ktfile_cut(struct ktfile_writer *w, uint64_t records);

/* Bytes the file takes on disk: compressed or not. */
static inline uint64_t ktfile_file_bytes(const struct ktfile_writer *w)
{
	return w->codec ? w->file_bytes : ktfile_bytes(w);
}

/* Write all of @buf; on error return -errno with *@done what got out. */
int ktfile_write_all(int fd, const void *buf, size_t len, size_t *done);

/* ---- compressed files: lib/ktfile_zstd.c (link -lzstd) ------------------- */

/*
 * A compressed trace file is the same byte stream (header, records) cut
 * into independent zstd frames: the header alone, then about
 * KTFILE_ZSTD_FRAME records a frame, each ending on an event boundary, each
 * with its content size and checksum.  A torn last frame loses that frame
 * only; readers tell the file by its magic.  Documentation/trace/ktrace-file.rst.
 */
#define KTFILE_ZSTD_SUFFIX	".zst"		/* ktrace -z: trace.cpu0.zst */
#define KTFILE_ZSTD_FRAME	10922		/* records: 262128 bytes */
#define KTFILE_ZSTD_HOLD	512		/* the last records stay cuttable */
#define KTFILE_ZSTD_LEVEL	1		/* the default: fast, ~6x on records */
#define KTFILE_ZSTD_MAX_FRAME	(8u << 20)	/* most bytes a frame the reader takes */

/*
 * ktfile_create() of a compressed file at zstd @level (ZSTD_minCLevel()
 * to ZSTD_maxCLevel(); 0 is zstd's default).  The header goes out as the
 * first frame now, records a frame at a time; ktfile_close() writes the last.
 */
int ktfile_create_zstd(struct ktfile_writer *w, const char *path,
		       const struct ktfile_header *h, int level);

/* ktfile_create_zstd() at @level when @zstd, else ktfile_create(). */
int ktfile_create_as(struct ktfile_writer *w, const char *path,
		     const struct ktfile_header *h, bool zstd, int level);

/*
 * @arg as a zstd level into *@level; false (*@min, *@max the levels there
 * are, for the caller's message) when it is not one.
 */
bool ktfile_zstd_parse_level(const char *arg, int *level, int *min, int *max);

/* ---- end of writer --------------------------------------------------------- */

/* ---- reader: lib/ktfile_read.c ------------------------------------------- */

/**
 * struct ktfile_event - one event with its continuation arguments folded in
 * @tsc:     time stamp of the event's record
 * @offset:  file offset of the event's record, for messages
 * @code:    event code, KTRACE_* (a meta record has no group bit)
 * @tid:     thread id
 * @nr_args: arguments in @args: 2, plus 2 per CONT record
 * @args:    arg1, arg2 of the event, then those of each CONT record
 */
struct ktfile_event {
	uint64_t tsc;
	uint64_t offset;
	uint32_t code;
	uint32_t tid;
	uint32_t nr_args;
	uint32_t args[KTFILE_MAX_ARGS];
};

/* ktfile_open() flags */
#define KTFILE_FORCE	(1u << 0)	/* a bad record ends the file with a warning, not an error */
#define KTFILE_QUIET	(1u << 1)	/* a bad record ends the file, silently (a second pass) */

/**
 * struct ktfile_reader - a trace file being read, one event at a time
 * @path:    the name given to ktfile_open(), used in every message
 * @hdr:     the header, converted to host byte order
 * @swapped: the file was written in the other byte order (read all the same)
 * @cut:     KTFILE_FORCE ended the file early at a bad record
 * @bad:     the file ended at a bad record: an error (without KTFILE_FORCE)
 * @bad_offset: where the bad record is (with @bad or @cut)
 * @torn:    bytes left out at the end, a torn tail: a record cut short or
 *           an event cut inside its continuation records (a warning)
 * @index:   free for the caller (the merge: position in its file list)
 * @machine: the merge: the machine the file is of (kt_merge_open_opts())
 * @ev:      the event the last ktfile_next() returned
 * The rest is private to ktfile_read.c.
 */
struct ktfile_reader {
	const char *path;
	struct ktfile_header hdr;
	bool swapped;
	bool cut;
	bool bad;
	uint64_t bad_offset;
	uint64_t torn;
	unsigned int index;
	unsigned int machine;
	struct ktfile_event ev;

	int fd;
	unsigned int flags;
	int state;			/* 1 reading, 0 at the end, -1 error */
	bool eof;			/* read() returned 0 */
	uint32_t tail;			/* bytes of a torn last record after buf */
	int read_errno;			/* read() failed after buf */
	uint64_t buf_off;		/* file offset of buf[0] */
	size_t pos, nr;			/* next record in buf, records in buf */
	uint64_t last_tsc;
	uint64_t tsc_hz;		/* the rate ktfile_ns() converts with */
	uint64_t ns_int, ns_frac;	/* ns per TSC tick: integer and 64-bit fraction */
	bool mapped;			/* ktfile_set_tsc_map() */
	uint64_t map_from, map_to;
	double map_scale;
	struct ktrace_record *buf;
	struct ktfile_zreader *z;	/* a compressed file: its decoder (ktfile_zstd.h) */
};

/*
 * Open @path and check its header.  Returns the reader, or NULL after
 * printing why ("dtrace: trace.cpu0: offset 8: unknown format version 7").
 * ktfile_open_fd() reads @fd (which it owns from then on), naming it @name.
 */
struct ktfile_reader *ktfile_open(const char *path, unsigned int flags);
struct ktfile_reader *ktfile_open_fd(int fd, const char *name, unsigned int flags);

/*
 * Read the next event into r->ev.  Returns 1, 0 at the end of the file, or
 * -1 after printing what is wrong with the file and where.  Checked: time
 * stamps going back, CONT records not following an event or out of
 * sequence, chains without END, read errors.  With KTFILE_FORCE such a
 * record ends the file: a warning, then 0.  A torn tail (the file ends
 * inside a record or a chain: a killed writer, a live file) is not an
 * error: a warning, r->torn set, then 0.
 */
int ktfile_next(struct ktfile_reader *r);

void ktfile_reader_close(struct ktfile_reader *r);

/* Byte-swap every field: between this machine's order and the other one. */
void ktfile_swap_header(struct ktfile_header *h);
void ktfile_swap_record(struct ktrace_record *rec);

/*
 * Convert this file's time stamps with @hz, not the header's rate: a merge
 * converts every file with one rate (merge.h).
 */
void ktfile_set_tsc_hz(struct ktfile_reader *r, uint64_t hz);

/*
 * Events' time stamps on another clock: map_to + (tsc - map_from) * scale,
 * 0 below 0 (the time stamps of several machines on one timeline).  The
 * records' order is still checked on the file's own.
 */
void ktfile_set_tsc_map(struct ktfile_reader *r, uint64_t from, uint64_t to, double scale);
uint64_t ktfile_map_tsc(const struct ktfile_reader *r, uint64_t tsc);

/* Nanoseconds in @ticks of this file's TSC (at r->tsc_hz). */
static inline uint64_t ktfile_ns(const struct ktfile_reader *r, uint64_t ticks)
{
	return ticks * r->ns_int +
	       (uint64_t)(((unsigned __int128)ticks * r->ns_frac) >> 64);
}

/* ---- end of reader --------------------------------------------------------- */

#endif /* KTFILE_H */
