// SPDX-License-Identifier: GPL-2.0
/*
 * shapes: call shapes that the stack pointers alone misread, built with
 * -finstrument-functions at -O0 and -O2 by tests/host/80-user-shapes.sh and
 * counted by tests/debsrc/cygcount.c in the same run.  Every call returns:
 * the trace is balanced, so dtrace must repair nothing.
 *
 *   shapes fib N        fib(N) by double recursion: at -O2 GCC inlines fib
 *                       into itself, and the inlined calls share its stack
 *                       pointer
 *   shapes deep N       one recursion N deep (inlined into itself too)
 *   shapes ucontext N   N switches to a makecontext() function whose stack
 *                       is an array in its caller's frame, as in uftrace's
 *                       s-ucontext; it returns through uc_link
 *   shapes altstack N   N signals handled on a sigaltstack (malloc'd: any
 *                       distance from the thread's stack), raised at
 *                       several depths, then N/10 more from a function
 *                       that makes 5000 calls after each
 *   shapes altstack-alias N   the same, the sigaltstack mapped 4 GiB below
 *                       the thread's stack, a little above it in the low
 *                       32 bits of the address (exits 77 if it cannot)
 *   shapes tsd N        N threads, each with a value of a key of the
 *                       program's own, whose destructor calls functions
 *                       as the thread exits, after the thread's function
 *                       returned (as uftrace's s-thread-tsd), and sets it
 *                       again twice: three rounds of destructors
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

static volatile int sink;

int fib(int n)
{
	if (n <= 2)
		return 1;
	return fib(n - 1) + fib(n - 2);
}

int deep(int n)
{
	if (n <= 0)
		return sink;
	return deep(n - 1) + 1;
}

static ucontext_t ctx_main, ctx_co;

void co_leaf(int i)
{
	sink += i;
}

void co_body(int i)
{
	co_leaf(i);
}

/* switches to co_body, which returns here through uc_link */
void co_switch(void)
{
	swapcontext(&ctx_main, &ctx_co);
}

int run_ucontext(int n)
{
	char stack[8192];

	for (int i = 0; i < n; i++) {
		getcontext(&ctx_co);
		ctx_co.uc_link = &ctx_main;
		ctx_co.uc_stack.ss_sp = stack;
		ctx_co.uc_stack.ss_size = sizeof(stack);
		makecontext(&ctx_co, (void (*)(void))co_body, 1, i);
		co_switch();
	}
	return sink;
}

void on_signal_leaf(void)
{
	sink++;
}

void on_signal(int sig)
{
	on_signal_leaf();
	sink += sig;
}

void raise_at(int depth)
{
	if (depth > 0) {
		raise_at(depth - 1);
		return;
	}
	kill(getpid(), SIGUSR1);
}

int run_altstack(int n, int alias)
{
	stack_t ss = { .ss_size = 65536 };
	uintptr_t sp = (uintptr_t)__builtin_frame_address(0);
	struct sigaction sa;

	if (alias) {
		ss.ss_sp = mmap((void *)((((sp >> 32) - 1) << 32) | ((sp & 0xffff0000u) + 0x20000)),
				ss.ss_size, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (ss.ss_sp == MAP_FAILED)
			return 77;
	} else {
		ss.ss_sp = malloc(ss.ss_size);
	}
	if (!ss.ss_sp || sigaltstack(&ss, NULL) < 0)
		return 1;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	for (int i = 0; i < n; i++)
		raise_at(i % 7);
	/* signalled from here, many calls of its own after each: one more frame on the stack */
	for (int i = 0; i < n / 10; i++) {
		kill(getpid(), SIGUSR1);
		for (int j = 0; j < 5000; j++)
			co_leaf(j);
	}
	return 0;
}

static pthread_key_t tsd_key;

void tsd_leaf(int i)
{
	sink += i;
}

void tsd_dtor(void *value)
{
	uintptr_t round = (uintptr_t)value;

	tsd_leaf((int)round);
	fib(5);
	if (round < 3)
		pthread_setspecific(tsd_key, (void *)(round + 1));
}

void *tsd_thread(void *arg)
{
	pthread_setspecific(tsd_key, (void *)1);
	tsd_leaf(0);
	return arg;
}

int run_tsd(int n)
{
	pthread_t t;

	if (pthread_key_create(&tsd_key, tsd_dtor))
		return 1;
	for (int i = 0; i < n; i++) {
		if (pthread_create(&t, NULL, tsd_thread, NULL))
			return 1;
		pthread_join(t, NULL);
	}
	return 0;
}

int main(int argc, char **argv)
{
	int n = argc > 2 ? atoi(argv[2]) : 10;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "fib"))
		fib(n);
	else if (!strcmp(argv[1], "deep"))
		deep(n);
	else if (!strcmp(argv[1], "ucontext"))
		run_ucontext(n);
	else if (!strcmp(argv[1], "altstack"))
		return run_altstack(n, 0);
	else if (!strcmp(argv[1], "altstack-alias"))
		return run_altstack(n, 1);
	else if (!strcmp(argv[1], "tsd"))
		return run_tsd(n);
	else
		return 2;
	return 0;
}
