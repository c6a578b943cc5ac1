// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * ktfile_write: fill a trace file header and write a trace file.
 *
 * Used by ktrace (one file per CPU) and by the user-space tracing library
 * (one file per thread), so nothing here prints or exits: errors come back
 * as negative errno values and the caller names the file.
 *
 * A write that fails half way (disk full, quota, I/O error) must not leave a
 * torn record behind: the file is cut back to the last whole record, so
 * every reader can still read everything written before the error.
 */
#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>
#if defined(__x86_64__) || defined(__i386__)
#include <x86intrin.h>
#endif

#include "files.h"
#include "ktfile.h"

#ifndef KTRACE_VERSION
#define KTRACE_VERSION "unknown"
#endif

static uint64_t clock_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static uint64_t read_tsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint64_t tsc;

	/* lfence on both sides: the TSC read must not move out of the window */
	_mm_lfence();
	tsc = __rdtsc();
	_mm_lfence();
	return tsc;
#else
	return clock_ns(CLOCK_MONOTONIC_RAW);
#endif
}

/*
 * One (TSC, CLOCK_MONOTONIC) pair: the TSC read between two clock reads,
 * the tightest window out of a few tries (an interrupt or a vDSO retry makes
 * a try wide).  Returns the window width in ns.
 */
static uint64_t tsc_mono_pair(uint64_t *tsc, uint64_t *mono, uint64_t *real)
{
	uint64_t best = UINT64_MAX;

	for (int try = 0; try < 8; try++) {
		uint64_t r0 = real ? clock_ns(CLOCK_REALTIME) : 0;
		uint64_t m0 = clock_ns(CLOCK_MONOTONIC);
		uint64_t t = read_tsc();
		uint64_t m1 = clock_ns(CLOCK_MONOTONIC);
		uint64_t r1 = real ? clock_ns(CLOCK_REALTIME) : 0;

		if (m1 - m0 < best) {
			best = m1 - m0;
			*tsc = t;
			*mono = m0 + (m1 - m0) / 2;
			if (real)
				*real = r0 + (r1 - r0) / 2;
		}
	}
	return best;
}

uint64_t ktfile_tsc_hz(void)
{
	struct timespec nap = { 0, 15 * 1000 * 1000 };
	uint64_t t0, m0, t1, m1;

	tsc_mono_pair(&t0, &m0, NULL);
	while (nanosleep(&nap, &nap) < 0 && errno == EINTR)
		;
	tsc_mono_pair(&t1, &m1, NULL);
	if (m1 <= m0 || t1 <= t0)
		return 0;
	/* (t1 - t0) * 1e9 would overflow after ~18 s at 1 GHz: use 128 bits */
	return (uint64_t)((unsigned __int128)(t1 - t0) * 1000000000u / (m1 - m0));
}

static void copy_str(char *dst, size_t size, const char *src)
{
	size_t n = strnlen(src, size - 1);

	memcpy(dst, src, n);
	dst[n] = '\0';
}

static int read_boot_id(char *buf, size_t size)
{
	int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = read(fd, buf, size - 1);
	close(fd);
	if (n < 0)
		return -errno;
	buf[n] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

int ktfile_header_init(struct ktfile_header *h, int cpu, uint64_t tsc_hz,
		       bool tsc_invariant, uint32_t mask)
{
	struct utsname uts;
	int ret;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, KTFILE_MAGIC, sizeof(h->magic));
	h->version = KTFILE_VERSION;
	h->header_size = KTFILE_HEADER_SIZE;
	h->byte_order = KTFILE_BYTE_ORDER;
	h->record_size = sizeof(struct ktrace_record);
	h->cpu = cpu < 0 ? -1 : cpu;
	h->flags = tsc_invariant ? KTFILE_TSC_INVARIANT : 0;
	h->mask = mask;
	if (cpu < 0) {
		h->flags |= KTFILE_USER_STREAM;
		h->pid = getpid();
		h->tid = syscall(SYS_gettid);
		prctl(PR_GET_NAME, h->comm);
		h->comm[sizeof(h->comm) - 1] = '\0';
	}
	h->tsc_hz = tsc_hz ? tsc_hz : ktfile_tsc_hz();
	tsc_mono_pair(&h->ref_tsc, &h->ref_mono_ns, &h->ref_real_ns);
	if (uname(&uts) == 0) {
		copy_str(h->release, sizeof(h->release), uts.release);
		copy_str(h->hostname, sizeof(h->hostname), uts.nodename);
	}
	copy_str(h->tool_version, sizeof(h->tool_version), KTRACE_VERSION);
	ret = read_boot_id(h->boot_id, sizeof(h->boot_id));
	return ret;
}

int ktfile_write_all(int fd, const void *buf, size_t len, size_t *done)
{
	*done = 0;
	while (*done < len) {
		ssize_t n = write(fd, (const char *)buf + *done, len - *done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -ENOSPC;
		*done += n;
	}
	return 0;
}

static bool is_regular(int fd)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

int ktfile_create(struct ktfile_writer *w, const char *path,
		  const struct ktfile_header *h)
{
	size_t done;
	int ret;

	*w = (struct ktfile_writer){ .fd = -1 };
	/* 0600, never through a link or into a device: see files.h */
	w->fd = kt_create_file(path);
	if (w->fd < 0)
		return w->fd;
	ret = ktfile_write_all(w->fd, h, sizeof(*h), &done);
	if (ret < 0) {
		/* a file without a whole header is no trace file: remove it */
		if (is_regular(w->fd))
			unlink(path);
		close(w->fd);
		w->fd = -1;
	}
	return ret;
}

int ktfile_append(struct ktfile_writer *w, const struct ktrace_record *recs,
		  size_t nr)
{
	size_t done;
	int ret;

	if (w->codec)
		return w->codec->append(w, recs, nr);
	ret = ktfile_write_all(w->fd, recs, nr * sizeof(*recs), &done);
	w->records += done / sizeof(*recs);
	if (ret < 0 && done % sizeof(*recs) && is_regular(w->fd)) {
		off_t end = ktfile_bytes(w);

		/* drop the torn record; the next append goes after the last whole one */
		if (ftruncate(w->fd, end) == 0)
			lseek(w->fd, end, SEEK_SET);
	}
	return ret;
}

int ktfile_cut(struct ktfile_writer *w, uint64_t records)
{
	off_t end;

	if (records > w->records)
		return -EINVAL;
	if (w->codec)
		return w->codec->cut(w, records);
	end = KTFILE_HEADER_SIZE + records * sizeof(struct ktrace_record);
	if (ftruncate(w->fd, end) < 0 || lseek(w->fd, end, SEEK_SET) < 0)
		return -errno;
	w->records = records;
	return 0;
}

int ktfile_close(struct ktfile_writer *w)
{
	int ret = 0;

	if (w->codec && w->fd >= 0)
		ret = w->codec->close(w);	/* the last frame; frees the codec's state */
	if (w->fd >= 0 && close(w->fd) < 0 && !ret)
		ret = -errno;
	w->fd = -1;
	return ret;
}
