/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktest: TAP output and /dev/ktrace helpers for the in-VM tests.
 *
 * Header-only so that each test stays one static binary.  Every check
 * prints one TAP line; a test ends with done_testing(), which prints the
 * plan and returns the exit status.
 */
#ifndef KTEST_H
#define KTEST_H

#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ktrace.h>

static int kt_tests, kt_failed;

static inline int ok(int cond, const char *fmt, ...)
{
	va_list ap;

	kt_tests++;
	if (!cond)
		kt_failed++;
	printf("%sok %d - ", cond ? "" : "not ", kt_tests);
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	return cond;
}

static inline void diag(const char *fmt, ...)
{
	va_list ap;

	printf("# ");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

static inline int done_testing(void)
{
	printf("1..%d\n", kt_tests);
	return kt_failed ? 1 : 0;
}

static inline void bail(const char *what)
{
	printf("Bail out! %s: %s\n", what, strerror(errno));
	exit(1);
}

/* @rc is the return of a call that must fail with errno @want. */
static inline int is_errno(long rc, int want, const char *fmt, ...)
{
	int err = errno;
	char what[256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return ok(rc == -1 && err == want, "%s: %s (got %s)", what,
		  strerror(want), rc == -1 ? strerror(err) : "success");
}

static inline int kt_open(int flags)
{
	int fd = open("/dev/ktrace", flags);

	if (fd < 0)
		bail("open /dev/ktrace");
	return fd;
}

static inline int kt_set_mask(int fd, uint32_t mask)
{
	struct ktrace_mask m = { .mask = mask };

	return ioctl(fd, KTRACE_IOC_SET_MASK, &m);
}

static inline int kt_resize(int fd, uint32_t records)
{
	struct ktrace_buf_size b = { .records = records };

	return ioctl(fd, KTRACE_IOC_SET_BUF_SIZE, &b);
}

static inline int kt_attach(int fd, uint32_t cpu)
{
	struct ktrace_attach a = { .cpu = cpu };

	return ioctl(fd, KTRACE_IOC_ATTACH_CPU, &a);
}

static inline int kt_stats(int fd, uint32_t cpu, struct ktrace_cpu_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->cpu = cpu;
	return ioctl(fd, KTRACE_IOC_CPU_STATS, st);
}

static inline void pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		bail("sched_setaffinity");
}

/* A user event (group user, subevent @sub) with @nr_args arguments. */
static inline int kt_user_event(int fd, unsigned int sub, const uint32_t *args,
				unsigned int nr_args)
{
	struct ktrace_record recs[4];
	unsigned int nr = nr_args <= 2 ? 1 : 1 + (nr_args - 1) / 2;
	unsigned int i;

	memset(recs, 0, sizeof(recs));
	for (i = 0; i < nr; i++) {
		recs[i].event = i ? KTRACE_EVT_CONT | ((i - 1) << KTRACE_SUB_SHIFT) :
				    KTRACE_CODE(KTRACE_GRP_user, sub);
		if (i && i == nr - 1)
			recs[i].event |= KTRACE_EVT_END;
		recs[i].arg1 = 2 * i < nr_args ? args[2 * i] : 0;
		recs[i].arg2 = 2 * i + 1 < nr_args ? args[2 * i + 1] : 0;
	}
	return write(fd, recs, nr * sizeof(recs[0])) == (ssize_t)(nr * sizeof(recs[0])) ? 0 : -1;
}

/* Read everything waiting on an attached fd into *out (grown); returns count. */
static inline size_t kt_drain(int fd, struct ktrace_record **out, size_t *cap,
			      size_t have)
{
	ssize_t n;

	for (;;) {
		if (have + 4096 > *cap) {
			*cap = (have + 4096) * 2;
			*out = realloc(*out, *cap * sizeof(**out));
			if (!*out)
				bail("realloc");
		}
		n = read(fd, *out + have, 4096 * sizeof(**out));
		if (n < 0 && errno == EAGAIN)
			return have;
		if (n < 0)
			bail("read");
		if (n % sizeof(**out)) {
			ok(0, "read returned %zd bytes, not whole records", n);
			return have;
		}
		have += n / sizeof(**out);
	}
}

/* The records read from one CPU. */
struct stream {
	struct ktrace_record *recs;
	size_t nr, cap;
};

/*
 * Read at most @chunk records at a time from each of @nr attached files
 * into its stream, polling every 10 ms, until every process in @pids has
 * exited.  Returns how many of them failed.
 */
static inline int kt_read_while_running(struct pollfd *pfd, struct stream *streams,
					int nr, pid_t *pids, size_t chunk)
{
	int i, status, running = nr, failures = 0;

	while (running) {
		poll(pfd, nr, 10);
		for (i = 0; i < nr; i++) {
			struct stream *s = &streams[i];
			ssize_t n;

			if (s->nr + chunk > s->cap) {
				s->cap = s->cap ? 2 * s->cap : 1 << 16;
				s->recs = realloc(s->recs, s->cap * sizeof(*s->recs));
				if (!s->recs)
					bail("realloc");
			}
			n = read(pfd[i].fd, s->recs + s->nr, chunk * sizeof(*s->recs));
			if (n > 0)
				s->nr += n / sizeof(*s->recs);
		}
		running = 0;
		for (i = 0; i < nr; i++) {
			if (pids[i] && waitpid(pids[i], &status, WNOHANG) == pids[i]) {
				failures += !WIFEXITED(status) || WEXITSTATUS(status);
				pids[i] = 0;
			}
			running += pids[i] != 0;
		}
	}
	return failures;
}

static inline int nr_cpus_online(void)
{
	return (int)sysconf(_SC_NPROCESSORS_ONLN);
}

#endif /* KTEST_H */
