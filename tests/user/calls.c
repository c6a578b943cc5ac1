// SPDX-License-Identifier: GPL-2.0
/*
 * tests/user/calls: a program for the call tree, call graph and flat
 * profile goldens, built with -finstrument-functions.  Its calls are the
 * same on every run: three threads started one after the other (each has
 * recorded its first call before the next one starts), recursion, calls
 * into a shared library and back, an inlined function, a function with a
 * .cold part, and a forked child that returns from the functions its
 * parent entered.
 */
#include <pthread.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

#include "calls.h"

static sem_t started;
static volatile int sink;

__attribute__((noinline)) int fib(int n)
{
	return n < 2 ? n : fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) int add_one(int x)
{
	return x + 1;
}

/* inlined into its callers, instrumented all the same */
static inline __attribute__((always_inline)) int twice(int x)
{
	return add_one(x) * 2;
}

__attribute__((noinline, cold)) void report(const char *what)
{
	fprintf(stderr, "calls: %s\n", what);
}

/* the unlikely branch goes to check.cold */
__attribute__((noinline)) int check(int x)
{
	if (__builtin_expect(x < 0, 0)) {
		report("negative");
		return 0;
	}
	return x;
}

static void *worker(void *arg)
{
	int n = (int)(long)arg;

	sem_post(&started);
	sink = fib(n);
	sink = lib_apply(add_one, n);
	return NULL;
}

__attribute__((noinline)) void run_threads(void)
{
	pthread_t t[3];

	for (int i = 0; i < 3; i++) {
		pthread_create(&t[i], NULL, worker, (void *)(long)(i + 3));
		sem_wait(&started);
	}
	for (int i = 0; i < 3; i++)
		pthread_join(t[i], NULL);
}

/* the child returns through functions it never entered */
__attribute__((noinline)) int spawn(void)
{
	pid_t pid = fork();

	if (pid == 0) {
		sink = fib(4);
		return 1;
	}
	waitpid(pid, NULL, 0);
	return 0;
}

int main(void)
{
	sem_init(&started, 0, 0);
	sink = twice(20);
	sink = check(5);
	sink = check(-1);
	for (int i = 0; i < 3; i++)
		sink = lib_square(i);
	run_threads();
	if (spawn())
		return 0;
	return 0;
}
