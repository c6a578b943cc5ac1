// SPDX-License-Identifier: GPL-2.0
/*
 * tests/host/user-fds: a standalone-traced program (KTRACE_USER_DIR) that
 * takes over the descriptor of its thread's trace file, as daemons do
 * (for 66-user-standalone-fds).  It records one event, waits for the
 * writer to write it, finds the descriptor of its trace file
 * (/proc/self/fd), then, by MODE:
 *   dup2       opens DATA and dup2()s it over that descriptor
 *   closefrom  close_range(3, ~0), then opens files until DATA gets that
 *              descriptor's number
 *   unlink     removes its trace file, then as dup2
 *   thread     in a second thread: records its N+1 events first, waits
 *              for the writer, then dup2()s DATA over its own trace file's
 *              descriptor, writes "before\n" and ends at once (its file is
 *              closed at its end); the main thread, once it is joined,
 *              writes "after\n" through that number
 * writes "before\n" to DATA (through that number), records N events,
 * writes "after\n", closes it, prints "recorded N+1".  Exits 3 if it finds
 * no trace file descriptor, 4 if DATA does not get its number, 5 if a
 * write to it fails (6: in thread mode, after the thread ended).
 *
 *	user-fds MODE DATA N
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ktrace_user.h"

static int trace_fd(const char *path)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	char link[64], target[4096];
	int found = -1;

	while (d && (e = readdir(d))) {
		ssize_t n;

		snprintf(link, sizeof(link), "/proc/self/fd/%s", e->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n > 0 && (target[n] = '\0', !strcmp(target, path)))
			found = atoi(e->d_name);
	}
	if (d)
		closedir(d);
	return found;
}

struct thread_arg {
	const char *data;
	long n;
	int t, ret;		/* the descriptor taken over; 0, or the exit status */
};

/* thread mode: N+1 events, then dup2 over this thread's own trace file, end */
static void *worker(void *p)
{
	struct thread_arg *a = p;
	char path[4096];
	int fd;

	for (long i = 0; i <= a->n; i++)
		TRACE(1, 0, (uint32_t)i);
	usleep(300000);		/* all written: its end has only the file to close */
	snprintf(path, sizeof(path), "%s/trace.pid%d.tid%d", getenv("KTRACE_USER_DIR"),
		 (int)getpid(), (int)syscall(SYS_gettid));
	a->t = trace_fd(path);
	if (a->t < 3) {
		a->ret = 3;
		return NULL;
	}
	fd = open(a->data, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || dup2(fd, a->t) != a->t) {
		a->ret = 4;
		return NULL;
	}
	close(fd);
	if (write(a->t, "before\n", 7) != 7)
		a->ret = 5;
	return NULL;
}

static int thread_mode(const char *data, long n)
{
	struct thread_arg a = { data, n, -1, 0 };
	pthread_t th;

	if (pthread_create(&th, NULL, worker, &a) || pthread_join(th, NULL))
		return 7;
	if (a.ret)
		return a.ret;
	/* the thread has ended: its trace file's descriptor number is still DATA */
	if (write(a.t, "after\n", 6) != 6)
		return 6;
	close(a.t);
	printf("recorded %ld\n", n + 1);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 3 ? argv[1] : "", *data = argc > 3 ? argv[2] : "";
	long n = argc > 3 ? atol(argv[3]) : 0;
	char path[4096];
	int fd, t;

	if (argc < 4) {
		fprintf(stderr, "usage: user-fds dup2|closefrom|unlink|thread DATA N\n");
		return 2;
	}
	if (!strcmp(mode, "thread"))
		return thread_mode(data, n);
	TRACE(1, 0, 0);
	usleep(300000);		/* the writer writes at least every 100 ms */
	snprintf(path, sizeof(path), "%s/trace.pid%d.tid%d", getenv("KTRACE_USER_DIR"),
		 (int)getpid(), (int)getpid());
	t = trace_fd(path);
	if (t < 3)
		return 3;
	if (!strcmp(mode, "unlink"))
		unlink(path);
	if (!strcmp(mode, "closefrom")) {
		syscall(SYS_close_range, 3, ~0u, 0);
		while ((fd = open("/dev/null", O_RDONLY)) >= 0 && fd < t - 1)
			;
		fd = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd != t)
			return 4;
	} else {
		fd = open(data, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0 || dup2(fd, t) != t)
			return 4;
		close(fd);
	}
	if (write(t, "before\n", 7) != 7)
		return 5;
	for (long i = 1; i <= n; i++)
		TRACE(1, 0, (uint32_t)i);
	if (write(t, "after\n", 6) != 6)
		return 5;
	close(t);
	printf("recorded %ld\n", n + 1);
	return 0;
}
