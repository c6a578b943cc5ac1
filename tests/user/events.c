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
 *   events end HOW N     N events, then ends by HOW: return, exit, _exit,
 *                        exec (of /bin/true), abort, segv, kill (SIGKILL)
 *   events closerange FILE N   one event, close_range(3, ~0), opens FILE
 *                        (the lowest free descriptor), N events, writes
 *                        "data\n" to FILE
 *   events unshare N     one event, unshare(CLONE_NEWUSER), N events;
 *                        exits 4 if unshare failed
 *   events eintr N       installs a SIGINT handler without SA_RESTART, N
 *                        events, then a read() of an empty pipe that a
 *                        child interrupts with SIGINT: exits 0 if read()
 *                        failed with EINTR, the handler ran and has no
 *                        SA_RESTART, 5 otherwise (alarm(10): 142 if it
 *                        hangs); prints whose handler SIGINT has then
 *   events wait-go N     prints "pid P", waits for a line on stdin, then
 *                        N events (the test plants files meanwhile)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/auxv.h>
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

static volatile sig_atomic_t interrupted;

static void on_sigint_count(int sig)
{
	interrupted++;
}

/* ends the way @how says, after the events: none of it returns */
static int end_by(const char *how)
{
	if (!strcmp(how, "exit"))
		exit(0);
	if (!strcmp(how, "_exit"))
		_exit(0);
	if (!strcmp(how, "exec")) {
		execl("/bin/true", "true", (char *)NULL);
		return 1;
	}
	if (!strcmp(how, "abort"))
		abort();
	if (!strcmp(how, "segv")) {
		signal(SIGSEGV, SIG_DFL);
		*(volatile int *)8 = 1;
	}
	if (!strcmp(how, "kill"))
		kill(getpid(), SIGKILL);
	return strcmp(how, "return") ? 1 : 0;
}

static int eintr(void)
{
	struct sigaction sa = { .sa_handler = on_sigint_count }, now;
	int fds[2];
	char c;
	pid_t child;
	ssize_t r;

	/* the handler before the first record: the library sees it there */
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	record(EV_WORK, n, 0);
	alarm(10);
	if (pipe(fds) < 0)
		return 1;
	child = fork();
	if (child == 0) {
		usleep(200000);
		kill(getppid(), SIGINT);
		_exit(0);
	}
	r = read(fds[0], &c, 1);
	printf("read %zd errno %d interrupted %d\n", r, r < 0 ? errno : 0, (int)interrupted);
	waitpid(child, NULL, 0);
	sigaction(SIGINT, NULL, &now);
	/* standalone, the library's handler is in front of ours: says so */
	printf("handler %s\n", now.sa_handler == on_sigint_count ? "ours" : "another");
	return r < 0 && errno == EINTR && interrupted == 1 && !(now.sa_flags & SA_RESTART) ? 0 : 5;
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
	if (!strcmp(mode, "eintr"))
		return eintr();		/* its handler before any call of the library */
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
	if (!strcmp(mode, "end")) {
		record(EV_WORK, n, 0);
		return end_by(argv[2]);
	}
	if (!strcmp(mode, "closerange")) {
		int fd;

		TRACE(EV_WORK, 0, 0);
		n--;
		syscall(SYS_close_range, 3, ~0u, 0);
		fd = open(argv[2], O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (fd < 0)
			return 1;
		record(EV_WORK, n, 0);
		if (write(fd, "data\n", 5) != 5)
			return 1;
		close(fd);
		return 0;
	}
	if (!strcmp(mode, "unshare")) {
		TRACE(EV_WORK, 0, 0);
		n--;
		if (unshare(CLONE_NEWUSER) < 0) {
			printf("unshare: %s\n", strerror(errno));
			return 4;
		}
		record(EV_WORK, n, 0);
		return 0;
	}
	if (!strcmp(mode, "wait-go")) {
		char line[16];

		printf("pid %d secure %lu\n", (int)getpid(), getauxval(AT_SECURE));
		if (!fgets(line, sizeof(line), stdin))
			return 1;
		record(EV_WORK, n, 0);
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
