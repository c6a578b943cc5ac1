// SPDX-License-Identifier: GPL-2.0
/*
 * tests/vm/user-calls: a program traced by libktrace (linked in statically,
 * built with -finstrument-functions) that makes system calls from inside
 * its traced functions, for 60-user-kernel.sh: under ktrace, the kernel's
 * records of those calls must fall between the program's own records.
 *
 *   user-calls N     two threads, each N times:
 *                      TRACE(1, i, 0)  call_kernel(i)  TRACE(2, i, 0)
 *                    where call_kernel() (traced) calls getppid() once.
 *
 * Prints "tid T" for each thread and "ppid P".
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "ktrace_user.h"

#define NOTRACE	__attribute__((no_instrument_function))

static long rounds;
static volatile long sink;

__attribute__((noinline)) void call_kernel(long i)
{
	/* the system call itself, not a cached value */
	sink += syscall(SYS_getppid) + i;
}

static NOTRACE void *thread_main(void *arg)
{
	printf("tid %ld\n", (long)syscall(SYS_gettid));
	fflush(stdout);
	for (long i = 0; i < rounds; i++) {
		TRACE(1, i, 0);
		call_kernel(i);
		TRACE(2, i, 0);
	}
	return arg;
}

NOTRACE int main(int argc, char **argv)
{
	pthread_t t;

	rounds = argc > 1 ? atol(argv[1]) : 100;
	printf("ppid %d\n", getppid());
	KTRACE_USER_NAME(1, "before", "round %u");
	KTRACE_USER_NAME(2, "after", "round %u");
	if (pthread_create(&t, NULL, thread_main, NULL))
		return 1;
	thread_main(NULL);
	pthread_join(t, NULL);
	return 0;
}
