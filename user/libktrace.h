/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * libktrace internals: the per-thread stream and its recording fast path.
 *
 * Each thread that records owns a stream: a ring of records (the ring
 * protocol, shared with ktrace-run, is ring.h's), filled by this fast path.
 *
 * Signals.  A signal handler that records runs on the same thread, between
 * any two instructions of the code it interrupts, and runs to the end
 * before that code goes on.  So:
 *  - a reservation is one compare-and-exchange of @head, without the lock
 *    prefix (one instruction cannot be split by a signal); the time stamp
 *    is read before it, and a handler that reserves in between makes it
 *    fail and the loop reads a new time stamp: records are in time order;
 *  - @nest counts this thread's records being written; only the outermost
 *    one (nest == 1) moves @committed up to @head: every record below
 *    @head is whole by then, the handlers' included;
 *  - a handler that finds the ring full while it interrupted a record of
 *    its thread cannot wait (that record will not be finished until it
 *    returns): it drops its record and counts it; the next record that
 *    finds room writes a lost marker first, as the kernel does.
 *
 * Waits: see ring.h.
 *
 * The fast path has no system call, no lock prefix and no atomic other than
 * that: about 25 instructions and one rdtsc per event.
 */
#ifndef LIBKTRACE_H
#define LIBKTRACE_H

#include <limits.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/ktrace.h>

#include "files.h"
#include "ktfile.h"
#include "prefetch.h"
#include "ring.h"

#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#define KT_HIDDEN	__attribute__((visibility("hidden")))
#define KT_NOTRACE	__attribute__((no_instrument_function))
#define kt_unlikely(x)	__builtin_expect(!!(x), 0)
#define kt_likely(x)	__builtin_expect(!!(x), 1)
#define kt_barrier()	__atomic_signal_fence(__ATOMIC_SEQ_CST)

/*
 * How far ahead of the record being written its thread asks for the ring's
 * cache line, to write (prefetchw).  The writer thread has read that line
 * on another CPU the last time round; without this, taking it back stalls
 * the recording thread on its stores: a sustained loop of traced calls
 * took 43 ns a call instead of 26 (bench/user.sh; 32 to 4096 records
 * ahead all do as well).
 */
#define KT_PREFETCH_RECORDS	256

enum kt_state { KT_FREE, KT_LIVE };

/*
 * The thread's call path, kept by the -finstrument-functions hooks for
 * ktrace_user_stack() (stack.c): @depth frames deep, frame d in @ring at
 * d % KT_STACK_RING if that slot's @depth is d, so that a recursion too
 * deep to keep is counted and its innermost frames kept; the outermost
 * KT_STACK_OUTER frames (main ...) are saved in @outer when a deeper one
 * takes their slot.  The hooks' fast paths maintain nothing else.
 * Written by the thread and its signal handlers only (a handler's calls
 * return before the code it interrupted goes on).
 */
#define KT_STACK_RING	256		/* a power of two */
#define KT_STACK_OUTER	64

struct kt_frame {
	uintptr_t fn, site;
	uintptr_t sp;			/* the hook's CFA at entry, as recorded */
	uintptr_t at;			/* the hook's return address: where in the code */
	unsigned long depth;		/* which frame this is */
};

struct kt_shadow {
	unsigned long depth;
	struct kt_frame ring[KT_STACK_RING];
	struct kt_frame outer[KT_STACK_OUTER];
};

static inline KT_NOTRACE struct kt_frame *kt_ring(struct kt_shadow *st, unsigned long d)
{
	return &st->ring[d & (KT_STACK_RING - 1)];
}

/* Stack pointers further apart are on different stacks (dtrace's calls.h: the same). */
#define KT_STACK_SPAN	((uintptr_t)256 << 20)

struct kt_stream {
	/* written by the owner thread (and its signal handlers) */
	uint64_t head;			/* next record to reserve */
	uint64_t limit;			/* reserving past it takes the slow path */
	struct kt_ring *shm;		/* committed, done: see struct kt_ring */
	uint64_t last_tsc;		/* time stamps never go back in a file */
	unsigned long nest;		/* records of this thread being written */
	struct ktrace_record *ring;	/* kt_ring_records(shm) */
	uint64_t mask;			/* ring size in records - 1 */
	uint32_t tid;
	uint64_t wait_since_ns;		/* CLOCK_MONOTONIC: waiting, with
					 * @done_seq at @wait_seq, since (0: not) */
	uint32_t wait_seq;
	struct kt_shadow stack;		/* the call path (func.c, stack.c) */

	/* shared with the writer thread or a flush: a cache line of its own */
	int lock __attribute__((aligned(64)));	/* tid of the thread writing the file, 0 */
	int state;			/* enum kt_state */
	bool failed;			/* the file failed: records are dropped */
	struct ktfile_writer file;	/* standalone only */
	dev_t file_dev;			/* standalone: the file @file.fd must be, */
	ino_t file_ino;			/* checked before it is written */
	uint64_t unwritten;		/* standalone: records dropped after @failed */
	struct kt_stream *next;		/* all streams, never unlinked */
	char path[PATH_MAX];
};

extern __thread struct kt_stream *kt_self
	__attribute__((tls_model("initial-exec"))) KT_HIDDEN;
/* The thread does not record: tracing is off, its stream failed to start, or it is ending. */
extern __thread bool kt_thread_off __attribute__((tls_model("initial-exec"))) KT_HIDDEN;

/*
 * A vfork() child's record, not made (the child runs on its parent's
 * thread state, and no stream of its own can be made there): counted lost
 * in the parent's stream, for its file to say.  Elsewhere a no-op.
 */
void kt_not_recorded(void) KT_HIDDEN;

/* The thread's stream, started on its first record; NULL: do not record. */
struct kt_stream *kt_stream_start(unsigned int n) KT_HIDDEN;
/* Make room for @n records at @h (see above); false: drop them. */
bool kt_slow_path(struct kt_stream *s, uint64_t h, unsigned int n) KT_HIDDEN;

/*
 * The hook's return address, from its CFA @sp: where in the instrumented
 * function's code it was called (one entry hook call per function and per
 * function inlined into it).
 */
static inline KT_NOTRACE uintptr_t kt_hook_return(uintptr_t sp)
{
	return ((const uintptr_t *)sp)[-1];
}

/*
 * stack.c, for func.c: an entry not below the frame on top on its stack,
 * or KT_STACK_RING deep or more: drop what is gone, save the outer frame
 * whose slot it takes, then push it.
 */
void kt_shadow_push_slow(struct kt_shadow *st, uintptr_t fn, uintptr_t site,
			 uintptr_t sp) KT_HIDDEN;
/* frame @d (below st->depth), or NULL if it is not kept */
const struct kt_frame *kt_frame_at(const struct kt_shadow *st, unsigned long d) KT_HIDDEN;
/* an exit that is not of the frame on top */
void kt_shadow_unwind(struct kt_shadow *st, uintptr_t fn, uintptr_t sp,
		      bool after_prologue) KT_HIDDEN;

/* Flush every stream; @final: the process is going away. */
int kt_flush_all(bool final) KT_HIDDEN;

/* kt_create_file_in() and kt_open_checked_dir(): lib/files.h */

/* How many of @len bytes written at @start stay under RLIMIT_FSIZE. */
size_t kt_fsize_room(off_t start, size_t len) KT_HIDDEN;
/* Write @len bytes of @msg to stderr, if that takes no file past it. */
void kt_say(const char *msg, int len) KT_HIDDEN;

/* stream.c, for dlwrap.c: what a child needs to record as this process does */
#define KT_ENV_MAX	8
struct kt_env {
	size_t nr;
	char var[KT_ENV_MAX][PATH_MAX + 32];	/* NAME=value */
};
bool kt_tracing_env(struct kt_env *e) KT_HIDDEN;
/* vfork(): the thread's state, saved; the child's, off; the parent's, back */
uintptr_t kt_vfork_save(void) KT_HIDDEN;
void kt_vfork_child(void) KT_HIDDEN;
void kt_vfork_parent(uintptr_t saved) KT_HIDDEN;

/* env.c: getenv(), also before the C library has set environ. */
const char *kt_getenv(const char *name) KT_HIDDEN;

/* maps.c: write the process's map, build ids and event names. */
void kt_maps_snapshot(const char *dir, uint64_t tsc) KT_HIDDEN;
int kt_maps_add_name(const char *dir, unsigned int sub, const char *name,
		     const char *format) KT_HIDDEN;
void kt_maps_fork_child(void) KT_HIDDEN;
/* A library is about to be unloaded, or was: a snapshot if the process records. */
void kt_maps_library_change(void) KT_HIDDEN;
/* Whether libraries were loaded or unloaded since the last snapshot. */
bool kt_maps_changed(void) KT_HIDDEN;
struct dl_phdr_info;
/* Where a loaded object's PT_LOAD segments are: [*start, *end), false if none. */
bool kt_object_span(const struct dl_phdr_info *info, uintptr_t *start, uintptr_t *end) KT_HIDDEN;

static inline KT_NOTRACE uint64_t kt_rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return __rdtsc();
#else
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
#endif
}

/* Compare and exchange, atomic against signals of this thread only. */
static inline KT_NOTRACE bool kt_cas_local(uint64_t *p, uint64_t old, uint64_t new)
{
#if defined(__x86_64__)
	bool ok;

	asm volatile("cmpxchgq %3, %1" : "=@ccz"(ok), "+m"(*p), "+a"(old)
		     : "r"(new) : "memory");
	return ok;
#else
	return __atomic_compare_exchange_n(p, &old, new, false, __ATOMIC_RELAXED,
					   __ATOMIC_RELAXED);
#endif
}

static inline KT_NOTRACE void kt_put(struct ktrace_record *r, uint64_t tsc,
				     uint32_t code, uint32_t tid, uint32_t a1, uint32_t a2)
{
	r->tsc = tsc;
	r->event = code;
	r->tid = tid;
	r->arg1 = a1;
	r->arg2 = a2;
}

/*
 * Record @code with arguments @a1, @a2 and, if @cont, one continuation
 * record with @a3, @a4.
 */
static inline __attribute__((always_inline)) KT_NOTRACE void
kt_record_in(struct kt_stream *s, uint32_t code, uint32_t a1, uint32_t a2, bool cont,
	     uint32_t a3, uint32_t a4)
{
	const unsigned int n = cont ? 2 : 1;
	uint64_t h, tsc;

	s->nest++;
	kt_barrier();
	for (;;) {
		h = s->head;
		if (kt_unlikely(h + n > s->limit)) {
			if (!kt_slow_path(s, h, n))
				goto out;
			continue;
		}
		tsc = kt_rdtsc();
		if (kt_unlikely(tsc < s->last_tsc))
			tsc = s->last_tsc;
		if (kt_cas_local(&s->head, h, h + n))
			break;
	}
	s->last_tsc = tsc;
	prefetch_write(&s->ring[(h + KT_PREFETCH_RECORDS) & s->mask]);
	kt_put(&s->ring[h & s->mask], tsc, code, s->tid, a1, a2);
	if (cont)
		kt_put(&s->ring[(h + 1) & s->mask], tsc, KTRACE_EVT_CONT | KTRACE_EVT_END,
		       s->tid, a3, a4);
	kt_barrier();
	if (s->nest == 1)
		__atomic_store_n(&s->shm->committed, s->head, __ATOMIC_RELEASE);
out:
	kt_barrier();
	s->nest--;
}

/* The same into the thread's stream, started on its first record. */
static inline __attribute__((always_inline)) KT_NOTRACE void
kt_record(uint32_t code, uint32_t a1, uint32_t a2, bool cont, uint32_t a3, uint32_t a4)
{
	struct kt_stream *s = kt_self;

	if (kt_unlikely(!s) && !(s = kt_stream_start(cont ? 2 : 1)))
		return;
	kt_record_in(s, code, a1, a2, cont, a3, a4);
}

#endif /* LIBKTRACE_H */
