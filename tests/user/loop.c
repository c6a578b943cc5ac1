// SPDX-License-Identifier: GPL-2.0
/*
 * tests/user/loop: bench/user.sh's tight loop: N calls of a tiny function
 * (argv[1], default 10000000), timed inside; prints "loop NS" (ns per call).
 *
 *   loop N          the calls, all timed: the tracer writes its trace meanwhile
 *   loop N rdtsc    two rdtsc per call instead of a tracer: the floor
 *   loop N burst    bursts of 4096 calls, timed, with ktrace_user_flush()
 *                   (when libktrace is there) untimed in between: what
 *                   recording costs, without writing
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <x86intrin.h>

#define BURST	4096

static volatile unsigned long long sink;

__attribute__((noinline)) int tiny(int x)
{
	__asm__ volatile("");
	return x + 1;
}

__attribute__((no_instrument_function)) static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((no_instrument_function)) int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000000;
	const char *mode = argc > 2 ? argv[2] : "";
	int (*flush)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "ktrace_user_flush");
	unsigned long long t = 0;
	double t0, spent = 0;
	long calls = n;
	int s = 0;

	if (!strcmp(mode, "burst")) {
		for (calls = 0; calls < n; calls += BURST) {
			t0 = now();
			for (int i = 0; i < BURST; i++)
				s = tiny(s);
			spent += now() - t0;
			if (flush)
				flush();
		}
	} else if (!strcmp(mode, "rdtsc")) {
		t0 = now();
		for (long i = 0; i < n; i++) {
			t += __rdtsc();
			s = tiny(s);
			t += __rdtsc();
		}
		spent = now() - t0;
	} else {
		t0 = now();
		for (long i = 0; i < n; i++)
			s = tiny(s);
		spent = now() - t0;
	}
	sink = t + s;
	printf("loop %.2f\n", spent * 1e9 / calls);
	return 0;
}
