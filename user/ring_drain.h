/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ring_drain: ktrace-run's side of the ring protocol (ring.h), apart
 * from the rest of ktrace-run so that a fuzzer (tests/fuzz/fuzz_ring.c) can
 * feed it any bytes.
 *
 * A ring belongs to the traced program, which may be hostile or broken:
 * any field may hold anything and change between two loads, and the file
 * may be cut under the mapping (a load from it then raises SIGBUS).  So:
 *  - the ring's first page is read with pread() and checked once; the
 *    trace file gets ktrace-run's own header, with only the pid and tid
 *    (checked against the ring's name), the time reference, the mask and
 *    the comm (cut to a string) taken from the ring;
 *  - every load from and store to a mapped ring is guarded: a SIGBUS in
 *    one (ring_guard_install()) fails that ring, never ktrace-run.  Of a
 *    ring that could not be mapped whole, only the header page is, and the
 *    records are read with pread() (the header's atomics and futexes need
 *    the mapping; without even that, pread()/pwrite() for everything);
 *  - records are copied out of the ring before they are written and
 *    counted, so the lost markers counted are the ones in the file;
 *  - every record the thread published that does not reach the file is
 *    counted, and ring_finish() ends the file with a lost marker of them.
 */
#ifndef RING_DRAIN_H
#define RING_DRAIN_H

#include <stdbool.h>
#include <stdint.h>

#include "ktfile.h"
#include "ring.h"

/* How the drainer reaches one ring: mapped, or through its file. */
struct ring_src {
	char *map;		/* the ring mapped shared (its first @mapped bytes), or NULL */
	uint64_t mapped;
	int fd;			/* for what is not mapped: the ring file, else -1 */
	uint64_t size;		/* bytes: KT_RING_HEADER + records * 24 */
};

/* Where a chain of records (an event and its CONT records) starts in the file. */
struct ring_chain {
	uint64_t pos;		/* record index in the file */
	uint64_t tsc;
	uint64_t marked;	/* a lost marker there: its count */
};

/**
 * struct ring_drain - one ring being drained into one trace file
 * @lost:   records the thread published (or dropped, as its markers and
 *          @lost field say) that are not in the file and not yet marked
 * @marked: records the lost markers in the file count
 * @torn:   the file may end inside a chain: ring_finish() cuts it back
 * @why:    set once the ring is unusable (a fault, out of order): nothing
 *          more is taken from it
 */
struct ring_drain {
	struct ring_src src;
	uint64_t records;		/* ring size, a power of two */
	uint64_t done;			/* records taken from the ring */
	uint32_t tid;			/* the thread's, for the lost marker */
	uint64_t last_tsc;		/* of the last record in the file */
	struct ktfile_writer out;	/* fd -1: no file */
	int write_err;			/* errno of the failed write, 0 */
	bool torn;
	uint64_t lost, marked, written;
	struct ring_chain last;		/* the last chain written */
	const char *why;
	struct ktrace_record *buf;	/* RING_CHUNK records: the caller's, shared */
};

/* Records copied out of a ring at a time */
#define RING_CHUNK	8192

/*
 * Check the first page of a ring file of @file_size bytes named for @pid
 * and @tid.  Returns 1 with *records and *hdr (the trace file's header,
 * from @tmpl and the ring's checked fields) set; 0: not whole yet (no
 * magic); -1: not a ring of this libktrace, *why says what is wrong.
 */
int ring_check(const struct kt_ring *page, uint64_t file_size, uint32_t pid, uint32_t tid,
	       const struct ktfile_header *tmpl, struct ktfile_header *hdr,
	       uint64_t *records, const char **why);

/*
 * Start draining @src (@records checked) into @out_fd (-1: none, all lost),
 * copying through @buf (RING_CHUNK records, may be shared by every ring).
 */
void ring_drain_init(struct ring_drain *d, struct ring_src src, uint64_t records,
		     int out_fd, uint32_t tid, uint64_t ref_tsc, struct ktrace_record *buf);

/*
 * Write what the thread published since the last call.  Returns the
 * records taken, -1 once the ring is unusable (d->why).  A failed write
 * (d->write_err) does not stop the draining: the rest is counted as lost,
 * and the thread goes on.
 */
int64_t ring_drain(struct ring_drain *d);

/* Whether the thread ended and everything it published was taken. */
bool ring_ended(struct ring_drain *d);

/*
 * The end: add the drops the thread could not mark, let a thread still
 * waiting for room go, end the file with a lost marker of d->lost (cutting
 * a torn chain, and if there is no room even for the marker, putting it in
 * place of the last chain: counted too) and close it.  Returns 0, or
 * -errno when the marker could not be written (d->lost stays counted).
 */
int ring_finish(struct ring_drain *d);

/*
 * One access to @len bytes at @off of @s, guarded (mapped) or with
 * pread()/pwrite(); false: it faulted, failed, or is out of @s.  Loads are
 * acquire, stores release; G_ADD32 adds 1 (nothing without a mapping).
 */
enum ring_op { G_COPY, G_LOAD64, G_LOAD32, G_STORE64, G_STORE32, G_ADD32 };
bool ring_access(struct ring_src *s, enum ring_op op, uint64_t off, void *v, size_t len);

/* Let a SIGBUS in a guarded load fail the ring (ktrace-run is one thread). */
void ring_guard_install(void);

#endif /* RING_DRAIN_H */
