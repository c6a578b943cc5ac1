// SPDX-License-Identifier: GPL-2.0
/*
 * ring_drain: ktrace-run's ring ingestion, trusting nothing of the ring
 * (see ring_drain.h).
 *
 * Why a SIGBUS guard and not pread() for everything: ktrace-run keeps no
 * descriptor per ring (thousands of live threads would take thousands of
 * descriptors), and the protocol's fields are read and written as atomics
 * and futexes, which need the mapping.  A load under the guard costs a
 * sigsetjmp without a signal mask (SA_NODEFER keeps SIGBUS unblocked when
 * the handler jumps out), no system call; records are copied in pieces of
 * RING_CHUNK under one guard each.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <linux/futex.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ring_drain.h"

/*
 * Where a SIGBUS in a guarded access jumps back to.  A signal handler has
 * no other way to reach its caller's state than a variable of the file;
 * ktrace-run drains from one thread.
 */
static sigjmp_buf *volatile guard_jmp;

static void on_sigbus(int sig, siginfo_t *si, void *uc)
{
	if (guard_jmp)
		siglongjmp(*guard_jmp, 1);
	/* not ours: the fault happens again, and kills as it would have */
	signal(sig, SIG_DFL);
}

void ring_guard_install(void)
{
	struct sigaction sa = { .sa_sigaction = on_sigbus, .sa_flags = SA_SIGINFO | SA_NODEFER };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

/* One access to a mapped ring; false: it faulted (the file was cut). */
static bool guarded(enum ring_op op, void *p, void *v, size_t len)
{
	sigjmp_buf jb;

	if (sigsetjmp(jb, 0)) {
		guard_jmp = NULL;
		return false;
	}
	guard_jmp = &jb;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	switch (op) {
	case G_COPY:
		memcpy(v, p, len);
		break;
	case G_LOAD64:
		*(uint64_t *)v = __atomic_load_n((uint64_t *)p, __ATOMIC_ACQUIRE);
		break;
	case G_LOAD32:
		*(uint32_t *)v = __atomic_load_n((uint32_t *)p, __ATOMIC_ACQUIRE);
		break;
	case G_STORE64:
		__atomic_store_n((uint64_t *)p, *(uint64_t *)v, __ATOMIC_RELEASE);
		break;
	case G_STORE32:
		__atomic_store_n((uint32_t *)p, *(uint32_t *)v, __ATOMIC_RELEASE);
		break;
	case G_ADD32:
		__atomic_fetch_add((uint32_t *)p, 1, __ATOMIC_SEQ_CST);
		break;
	}
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	guard_jmp = NULL;
	return true;
}

/* Access @len bytes at @off of the ring, mapped or through its file. */
bool ring_access(struct ring_src *s, enum ring_op op, uint64_t off, void *v, size_t len)
{
	bool store = op == G_STORE64 || op == G_STORE32;

	if (off > s->size || len > s->size - off)
		return false;
	if (s->map && off + len <= s->mapped)
		return guarded(op, s->map + off, v, len);
	if (op == G_ADD32)
		return true;		/* no futex without a mapping: the thread polls */
	return (store ? pwrite(s->fd, v, len, off) : pread(s->fd, v, len, off)) == (ssize_t)len;
}

#define RING_OFF(field)	offsetof(struct kt_ring, field)

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

static uint64_t marker_count(const struct ktrace_record *r)
{
	return r->event == KTRACE_META_LOST ? r->arg1 | (uint64_t)r->arg2 << 32 : 0;
}

int ring_check(const struct kt_ring *page, uint64_t file_size, uint32_t pid, uint32_t tid,
	       const struct ktfile_header *tmpl, struct ktfile_header *hdr,
	       uint64_t *records, const char **why)
{
	const struct ktfile_header *f = &page->file;
	uint64_t n = page->records;

	if (page->magic != KT_RING_MAGIC)
		return 0;		/* being made: the magic is written last */
	if (page->version != KT_RING_VERSION)
		*why = "ring version is not this libktrace's";
	else if (n < 2 || (n & (n - 1)) || n > (1u << 24))
		*why = "ring size is not a power of two from 2 to 2^24 records";
	else if (file_size != KT_RING_HEADER + n * sizeof(struct ktrace_record))
		*why = "file size does not match the ring size";
	else if (memcmp(f->magic, KTFILE_MAGIC, sizeof(f->magic)))
		*why = "bad trace file header (magic)";
	else if (f->pid != pid || f->tid != tid)
		*why = "header names another thread than the file name";
	else
		*why = NULL;
	if (*why)
		return -1;
	/* ours but for what only the thread knows: dtrace never refuses the file */
	*hdr = *tmpl;
	hdr->cpu = -1;
	hdr->flags = KTFILE_USER_STREAM | (f->flags & KTFILE_TSC_INVARIANT);
	hdr->pid = pid;
	hdr->tid = tid;
	hdr->ref_tsc = f->ref_tsc;
	hdr->ref_mono_ns = f->ref_mono_ns;
	hdr->ref_real_ns = f->ref_real_ns;
	hdr->mask = f->mask;
	memset(hdr->comm, 0, sizeof(hdr->comm));
	memcpy(hdr->comm, f->comm, strnlen(f->comm, sizeof(hdr->comm) - 1));
	*records = n;
	return 1;
}

void ring_drain_init(struct ring_drain *d, struct ring_src src, uint64_t records,
		     int out_fd, uint32_t tid, uint64_t ref_tsc, struct ktrace_record *buf)
{
	memset(d, 0, sizeof(*d));
	d->src = src;
	d->records = records;
	d->out.fd = out_fd;
	d->tid = tid;
	d->last_tsc = ref_tsc;
	d->last.tsc = ref_tsc;
	d->buf = buf;
}

static void wake_owner(struct ring_drain *d)
{
	uint32_t waiting;

	ring_access(&d->src, G_ADD32, RING_OFF(done_seq), NULL, 4);
	if (d->src.mapped >= KT_RING_HEADER &&
	    ring_access(&d->src, G_LOAD32, RING_OFF(waiting), &waiting, 4) &&
	    waiting)
		syscall(SYS_futex, d->src.map + RING_OFF(done_seq), FUTEX_WAKE, INT_MAX,
			NULL, NULL, 0);
}

/*
 * The ring is unusable: nothing more is taken from it.  Its thread is told
 * (@abandoned, ring.h), so that it stops recording and never waits
 * for room; where even that store faults, its wait is bounded by the
 * library's own 2 s rule.
 */
static int64_t ring_gone(struct ring_drain *d, const char *why)
{
	uint32_t one = 1;

	if (!d->why) {
		d->why = why;
		ring_access(&d->src, G_STORE32, RING_OFF(abandoned), &one, 4);
		wake_owner(d);
	}
	return -1;
}

/* Write @nr records of d->buf, or count them lost once the file failed. */
static void take(struct ring_drain *d, uint64_t nr)
{
	uint64_t before = d->out.records, kept = 0;

	if (d->out.fd >= 0 && !d->write_err) {
		int ret = ktfile_append(&d->out, d->buf, nr);

		/*
		 * compressed, a failed frame takes records of earlier pieces with
		 * it, the last chain written perhaps too: then there is none to
		 * cut back (the file ends with a whole frame, on an event)
		 */
		if (d->out.records < before) {
			d->lost = add_sat(d->lost, before - d->out.records);
			before = d->out.records;
			if (d->last.pos >= before)
				d->last = (struct ring_chain){ before, d->last_tsc, 0 };
		}
		kept = d->out.records - before;
		if (ret < 0) {
			d->write_err = -ret;
			d->torn = !d->out.codec && kept < nr && (d->buf[kept].event & KTRACE_EVT_CONT);
		}
	}
	for (uint64_t i = 0; i < kept; i++) {
		const struct ktrace_record *r = &d->buf[i];

		if (!(r->event & KTRACE_EVT_CONT))
			d->last = (struct ring_chain){ before + i, r->tsc, marker_count(r) };
		d->marked = add_sat(d->marked, marker_count(r));
	}
	if (kept)
		d->last_tsc = d->buf[kept - 1].tsc;
	d->written += kept;
	for (uint64_t i = kept; i < nr; i++)
		d->lost = add_sat(d->lost, d->buf[i].event == KTRACE_META_LOST ?
				  marker_count(&d->buf[i]) : 1);
}

int64_t ring_drain(struct ring_drain *d)
{
	uint64_t end, taken = 0, piece = d->records / 8 ? d->records / 8 : 1;

	if (d->why)
		return -1;
	if (!ring_access(&d->src, G_LOAD64, RING_OFF(committed), &end, 8))
		return ring_gone(d, "cut under ktrace-run (a fault reading it)");
	if (end < d->done || end - d->done > d->records)
		return ring_gone(d, "ring out of order (committed went back, or past the ring)");
	if (piece > RING_CHUNK)
		piece = RING_CHUNK;
	while (d->done < end) {
		uint64_t first = d->done & (d->records - 1);
		uint64_t nr = end - d->done;

		if (nr > d->records - first)
			nr = d->records - first;
		if (nr > piece)		/* a piece at a time: the thread goes on early */
			nr = piece;
		if (!ring_access(&d->src, G_COPY, KT_RING_HEADER + first * sizeof(*d->buf),
				 d->buf, nr * sizeof(*d->buf)))
			return ring_gone(d, "cut under ktrace-run (a fault reading it)");
		take(d, nr);
		d->done += nr;
		taken += nr;
		if (!ring_access(&d->src, G_STORE64, RING_OFF(done), &d->done, 8))
			return ring_gone(d, "cut under ktrace-run (a fault writing it)");
		wake_owner(d);
	}
	return taken;
}

bool ring_ended(struct ring_drain *d)
{
	uint32_t ended;
	uint64_t committed;

	return ring_access(&d->src, G_LOAD32, RING_OFF(ended), &ended, 4) && ended &&
	       ring_access(&d->src, G_LOAD64, RING_OFF(committed), &committed, 8) &&
	       committed == d->done;
}

/* Cut the file back to the start of its last chain; what goes is lost. */
static void cut_last_chain(struct ring_drain *d, uint64_t *at, uint64_t *tsc)
{
	uint64_t gone = d->out.records - d->last.pos;

	d->marked -= d->last.marked;
	d->lost = add_sat(d->lost, d->last.marked ? d->last.marked : gone);
	*at = d->last.pos;
	*tsc = d->last.tsc;
}

/*
 * A lost marker of d->lost at the end of the file.  A torn chain is cut
 * first; where an appended marker finds no room, it takes the place of the
 * last chain (overwriting needs no new space).
 */
static int mark_lost(struct ring_drain *d)
{
	uint64_t at = d->out.records, tsc = d->last_tsc;
	int err = 0;

	if (d->torn)
		cut_last_chain(d, &at, &tsc);
	for (int tries = 0; tries < 2; tries++) {
		struct ktrace_record m = { .tsc = tsc, .event = KTRACE_META_LOST, .tid = d->tid,
					   .arg1 = (uint32_t)d->lost,
					   .arg2 = (uint32_t)(d->lost >> 32) };
		off_t off = KTFILE_HEADER_SIZE + at * sizeof(m);

		if (d->out.codec) {
			/* compressed: the frame being filled is cut and takes the marker */
			if ((err = -ktfile_cut(&d->out, at)) || (err = -ktfile_append(&d->out, &m, 1)))
				return -err;
			d->marked = add_sat(d->marked, d->lost);
			d->lost = 0;
			d->torn = false;
			return 0;
		}
		if (pwrite(d->out.fd, &m, sizeof(m), off) == sizeof(m)) {
			if (at + 1 < d->out.records && ftruncate(d->out.fd, off + sizeof(m)) < 0)
				return -errno;
			d->out.records = at + 1;
			d->marked = add_sat(d->marked, d->lost);
			d->lost = 0;
			d->torn = false;
			return 0;
		}
		err = errno ? errno : ENOSPC;
		if (at == d->out.records && ftruncate(d->out.fd, off) < 0)
			break;		/* a torn marker could not be cut off */
		if (at != d->out.records || at == 0)
			break;
		cut_last_chain(d, &at, &tsc);
	}
	return -err;
}

int ring_finish(struct ring_drain *d)
{
	uint64_t unmarked, end = d->done + d->records;
	int ret = 0;

	/*
	 * The drops the thread could not mark, also from a ring given up on
	 * (what it dropped before it saw @abandoned): a guarded load, and a
	 * program can only overstate its own losses.
	 */
	if (ring_access(&d->src, G_LOAD64, RING_OFF(lost), &unmarked, 8))
		d->lost = add_sat(d->lost, unmarked);
	if (!d->why) {
		/* a thread still waiting for room (its ring is gone) must not hang */
		ring_access(&d->src, G_STORE64, RING_OFF(done), &end, 8);
		wake_owner(d);
	}
	if (d->out.fd >= 0) {
		uint64_t marking = d->lost, records;
		bool marker = false;

		if (d->lost || d->torn) {
			ret = mark_lost(d);
			marker = !ret && d->out.codec;
		}
		records = d->out.records;
		int closed = ktfile_close(&d->out);

		/*
		 * compressed, the last frame goes out at the close: failed, its
		 * records (the marker last) are not in the file, and are lost
		 */
		if (closed < 0 && d->out.records < records) {
			uint64_t gone = records - d->out.records - marker;

			if (marker) {
				d->marked -= marking;
				d->lost = add_sat(d->lost, marking);
			}
			d->written -= gone < d->written ? gone : d->written;
			d->lost = add_sat(d->lost, gone);
		}
		if (!ret)
			ret = closed;
	}
	return ret;
}
