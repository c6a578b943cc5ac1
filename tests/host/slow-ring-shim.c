// SPDX-License-Identifier: GPL-2.0
/*
 * Preloaded behind libktrace by 131-run-slow-ring: posix_fallocate() of a
 * file named ring.* (libktrace reserving a thread's ring) takes
 * $SLOW_RING_MS longer for each thread but the process's first, as a 16 MiB
 * ring did on a loaded machine.  Everything else is libc's.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

int posix_fallocate(int fd, off_t off, off_t len)
{
	static int (*real)(int, off_t, off_t);
	const char *ms = getenv("SLOW_RING_MS");
	char link[64], path[4096];
	ssize_t n;

	if (!real)
		real = (int (*)(int, off_t, off_t))dlsym(RTLD_NEXT, "posix_fallocate");
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n > 0 && ms && getpid() != gettid()) {
		path[n] = 0;
		if (strstr(path, "/ring.")) {
			long v = atol(ms);
			struct timespec ts = { v / 1000, (v % 1000) * 1000000 };

			nanosleep(&ts, NULL);
		}
	}
	return real(fd, off, len);
}
