/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * The ring protocol between libktrace and ktrace-run: the layout of a
 * thread's ring and of ktrace-run's control page, and who moves what.
 * ktrace-run and its tests include this alone; the library's internals
 * are libktrace.h.
 *
 * Each thread that records owns a stream: a ring of records.  The thread
 * reserves records by moving @head, fills them and publishes them in the
 * ring's @committed; whoever drains the ring writes the records from
 * @done to @committed to the thread's trace file and moves @done.
 *
 *   done            committed        head             done + ring size
 *    |  being written |   being filled  |  free             |
 *    v  or to write   v   by this thread v                   v
 *  --+----------------+------------------+-------------------+--
 *
 * Who drains.  Under ktrace-run (KTRACE_RUN_RINGS set) the ring is a file
 * in ktrace-run's ring directory (tmpfs), mapped shared: ktrace-run drains
 * it from outside the program, so what a thread published is in the trace
 * whatever happens to the process after (_exit, exec, abort, a crash,
 * SIGKILL), and the library keeps no thread, file descriptor or signal
 * handler in the program.  Without ktrace-run but with KTRACE_USER_DIR set
 * the ring is private memory drained by a writer thread of the library
 * into files it holds open ("standalone": what is left in the rings is
 * lost on _exit, exec, SIGKILL and crashes).  Neither: nothing is recorded.
 *
 * Waits.  A thread waits for the drainer only while its ring is full (or
 * to flush, or for room for its last lost marker), and never for ever: it
 * stops waiting, and recording, when the drainer sets @abandoned in the
 * ring, or when @done has not moved for DRAINER_GONE_MS (stream.c) while
 * it waited (the drainer is gone, stopped, stuck, or never took the ring).  A live
 * drainer moves @done of every ring it drains in each round.
 */
#ifndef KT_RING_H
#define KT_RING_H

#include <stdint.h>
#include <linux/ktrace.h>

#include "ktfile.h"

/*
 * The ring a thread records into: this header (KT_RING_HEADER bytes), then
 * @records records.  Shared with ktrace-run (a file of its ring directory,
 * mapped by both) or private to the process (standalone).  ktrace-run
 * trusts none of it: it checks @magic, @version, @records against the
 * file's size and every @committed against what it has drained.
 */
#define KT_RING_MAGIC	0x31676e69726b746bull		/* "ktring1" */
#define KT_RING_VERSION	1
#define KT_RING_HEADER	4096

struct kt_ring {
	uint64_t magic;			/* KT_RING_MAGIC */
	uint32_t version;		/* KT_RING_VERSION */
	uint32_t ended;			/* the thread is gone: nothing follows */
	uint64_t records;		/* ring size, a power of two */
	struct ktfile_header file;	/* the trace file's header, from the thread */

	/* written by the recording thread */
	uint64_t committed __attribute__((aligned(64)));	/* records before it are whole */
	uint64_t lost;			/* dropped, not yet marked in the ring: the
					 * drainer marks them if the thread cannot */

	/* written by the drainer: a cache line of its own */
	uint64_t done __attribute__((aligned(64)));	/* in the file before it */
	uint32_t done_seq;		/* futex: bumped when done moves */
	int waiting;			/* the owner sleeps on done_seq */
	uint32_t abandoned;		/* the drainer writes no more of this ring
					 * (its file failed, the ring is bad): the
					 * thread stops recording, never waits on it */
};

_Static_assert(sizeof(struct kt_ring) <= KT_RING_HEADER, "ring header fits its page");

/*
 * ktrace-run's control page, the file "control" in its ring directory: how
 * a thread whose ring is filling wakes it.
 */
#define KT_CONTROL_MAGIC	0x316c72746374726bull	/* "krtctrl1" */

struct kt_control {
	uint64_t magic;			/* KT_CONTROL_MAGIC */
	uint32_t version;		/* KT_RING_VERSION */
	int32_t drainer_pid;
	uint32_t kick __attribute__((aligned(64)));	/* futex: rings to drain */
	int sleeping;			/* the drainer waits on kick */
	uint32_t rings_made;		/* bumped with each new ring: look for it */
	uint64_t heartbeat;		/* bumped by every round of the drainer, for
					 * libraries of this KT_RING_VERSION that
					 * still wait by it; this one goes by its
					 * ring's @done (see "Waits") */
};

static inline struct ktrace_record *kt_ring_records(struct kt_ring *r)
{
	return (struct ktrace_record *)((char *)r + KT_RING_HEADER);
}

/* The ring file's name in ktrace-run's directory: ring.<pid>.<tid>.<n> */
#define KT_RING_PREFIX	"ring."

#endif /* KT_RING_H */
