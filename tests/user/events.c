// SPDX-License-Identifier: GPL-2.0
/*
 * tests/user/events: TRACE() events for the library's tests.  Prints how
 * many events it recorded, by subevent, before it ends the way MODE says:
 *
 *   events threads T N   T threads record N events each (user:1), main returns
 *   events exit N        N events, then exit() from a thread
 *   events sigterm N     N events, then SIGTERM kills it (default action)
 *   events sigint N      N events, SIGINT: the program's handler records one
 *                        (user:3) and calls exit(3)
 *   events wait N        N events, then sleeps until killed (the test kills it)
 *   events fork N        N events, fork: the child records N (user:2), exits;
 *                        the parent N more (user:1)
 *   events flush N       N events, ktrace_user_flush(), then _exit(): no
 *                        exit handlers
 *   events join N        a thread records N events and ends; once it is
 *                        joined, prints its file's size, then _exit()
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "ktrace_user.h"

enum { EV_WORK = 1, EV_CHILD = 2, EV_SIGNAL = 3 };

static long n;

static void record(unsigned int sub, long count, unsigned int who)
{
	for (long i = 0; i < count; i++)
		TRACE(sub, who, (uint32_t)i);
}

static void *thread_main(void *arg)
{
	record(EV_WORK, n, (unsigned int)(long)arg);
	return NULL;
}

static void *tid_thread(void *arg)
{
	*(long *)arg = syscall(SYS_gettid);
	record(EV_WORK, n, 1);
	return NULL;
}

static void *exit_thread(void *arg)
{
	exit(0);
}

static void on_sigint(int sig)
{
	TRACE(EV_SIGNAL, sig, 0);
	exit(3);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "";
	long threads = 1;

	if (argc < 3) {
		fprintf(stderr, "usage: events MODE [T] N\n");
		return 2;
	}
	if (!strcmp(mode, "threads") && argc > 3)
		threads = atol(argv[2]);
	n = atol(argv[argc - 1]);
	KTRACE_USER_NAME(EV_WORK, "work", "worker %u, item %u");
	KTRACE_USER_NAME(EV_CHILD, "child", "child %u, item %u");
	KTRACE_USER_NAME(EV_SIGNAL, "signal", "signal %u");
	setvbuf(stdout, NULL, _IONBF, 0);

	if (!strcmp(mode, "threads")) {
		pthread_t *t = calloc(threads, sizeof(*t));

		for (long i = 0; i < threads; i++)
			pthread_create(&t[i], NULL, thread_main, (void *)i);
		for (long i = 0; i < threads; i++)
			pthread_join(t[i], NULL);
		printf("user:work %ld\n", threads * n);
		return 0;
	}
	if (!strcmp(mode, "join")) {
		char path[4096];
		struct stat st;
		pthread_t t;
		long tid;

		pthread_create(&t, NULL, tid_thread, &tid);
		pthread_join(t, NULL);
		snprintf(path, sizeof(path), "%s/trace.pid%d.tid%ld", getenv("KTRACE_USER_DIR"),
			 (int)getpid(), tid);
		printf("size %lld\n", stat(path, &st) ? -1LL : (long long)st.st_size);
		_exit(0);
	}
	record(EV_WORK, n, 0);
	printf("user:work %ld\n", n);
	if (!strcmp(mode, "exit")) {
		pthread_t t;

		pthread_create(&t, NULL, exit_thread, NULL);
		pause();
	} else if (!strcmp(mode, "flush")) {
		if (ktrace_user_flush() < 0)
			return 1;
		_exit(0);
	} else if (!strcmp(mode, "sigterm")) {
		raise(SIGTERM);
	} else if (!strcmp(mode, "sigint")) {
		signal(SIGINT, on_sigint);
		printf("user:signal 1\n");
		raise(SIGINT);
	} else if (!strcmp(mode, "wait")) {
		printf("ready\n");
		for (;;)
			pause();
	} else if (!strcmp(mode, "fork")) {
		pid_t pid = fork();

		if (pid == 0) {
			record(EV_CHILD, n, 1);
			exit(0);
		}
		waitpid(pid, NULL, 0);
		record(EV_WORK, n, 0);
		printf("user:child %ld\nuser:work(parent) %ld\n", n, 2 * n);
	}
	return 0;
}
