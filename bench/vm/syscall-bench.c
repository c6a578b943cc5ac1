// SPDX-License-Identifier: GPL-2.0
/*
 * syscall-bench: ns per getppid() system call, the median of 7 runs of
 * 200000 calls, printed as "BENCH <name> <ns> ns".
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define CALLS	200000
#define RUNS	7

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	double ns[RUNS];
	struct timespec t0, t1;

	for (int r = 0; r < RUNS; r++) {
		clock_gettime(CLOCK_MONOTONIC, &t0);
		for (int i = 0; i < CALLS; i++)
			syscall(SYS_getppid);
		clock_gettime(CLOCK_MONOTONIC, &t1);
		ns[r] = ((t1.tv_sec - t0.tv_sec) * 1e9 + (t1.tv_nsec - t0.tv_nsec)) / CALLS;
	}
	qsort(ns, RUNS, sizeof(ns[0]), cmp_double);
	printf("BENCH %s %.1f ns\n", argc > 1 ? argv[1] : "syscall", ns[RUNS / 2]);
	return 0;
}
