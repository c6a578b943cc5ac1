// SPDX-License-Identifier: GPL-2.0
/*
 * stock-work: the workloads of bench/stock.sh, each printing the wall time
 * it took in ns:
 *   stock-work syscalls N   N getppid() calls
 *   stock-work pingpong N   N round trips of one byte between two threads
 *                           on one CPU over two pipes (2 switches, 2 wakeups
 *                           and 4 system calls a round); threads, not
 *                           processes: an address-space switch costs TCG a
 *                           flush of its TLB, tens of times what a tracer
 *                           adds to a round
 *   stock-work flood N      one process per online CPU, pinned, N getppid()
 *                           each (the fixed high rate of the lost-event test)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_ns(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec * 1e9 + t.tv_nsec;
}

struct pong {
	int a[2], b[2];
	long n;
};

static void *pong(void *arg)
{
	struct pong *p = arg;
	char c;

	for (long i = 0; i < p->n; i++)
		if (read(p->a[0], &c, 1) != 1 || write(p->b[1], &c, 1) != 1)
			_exit(1);
	return NULL;
}

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	sched_setaffinity(0, sizeof(set), &set);
}

int main(int argc, char **argv)
{
	long n = argc > 2 ? atol(argv[2]) : 0;
	struct pong p = { .n = n };
	pthread_t thread;
	int ncpu;
	double t0 = now_ns();
	char c = 0;

	if (argc != 3 || n <= 0) {
		fprintf(stderr, "usage: stock-work syscalls|pingpong|flood N\n");
		return 2;
	}
	if (!strcmp(argv[1], "syscalls")) {
		for (long i = 0; i < n; i++)
			syscall(SYS_getppid);
	} else if (!strcmp(argv[1], "pingpong")) {
		if (pipe(p.a) || pipe(p.b))
			return 1;
		pin(1);
		if (pthread_create(&thread, NULL, pong, &p))
			return 1;
		for (long i = 0; i < n; i++)
			if (write(p.a[1], &c, 1) != 1 || read(p.b[0], &c, 1) != 1)
				return 1;
		pthread_join(thread, NULL);
	} else if (!strcmp(argv[1], "flood")) {
		ncpu = sysconf(_SC_NPROCESSORS_ONLN);
		for (int cpu = 0; cpu < ncpu; cpu++) {
			if (fork() == 0) {
				pin(cpu);
				for (long i = 0; i < n; i++)
					syscall(SYS_getppid);
				_exit(0);
			}
		}
		while (wait(NULL) > 0)
			;
	} else {
		fprintf(stderr, "stock-work: unknown workload %s\n", argv[1]);
		return 2;
	}
	printf("%.0f\n", now_ns() - t0);
	return 0;
}
