// SPDX-License-Identifier: GPL-2.0
/*
 * stacks: a program that knows its own call paths, for the tests of
 * ktrace_user_stack() and dtrace --stacks / --stack-budget
 * (tests/host/91-user-stack-budget.sh, 92-user-stacks.sh).  Built with
 * -finstrument-functions; every function below is instrumented and
 * counts itself in @depth (this thread's depth, main or a thread's start
 * function at 1), so the program's own count is the ground truth.
 *
 *   stacks budget      main and 3 threads, each: a recursion of small
 *                      frames (the deepest path) and one of 2 KiB frames
 *                      (the most stack); prints per thread
 *                      "budget TID DEPTH PATH" and "bytes TID BYTES PATH",
 *                      BYTES the distance from a local of the thread's
 *                      outermost function to the lowest of the largest
 *                      path's innermost frame
 *   stacks signal      ktrace_user_stack() from signal handlers at known
 *                      paths, compared here with the functions' addresses
 *                      (on the thread's stack, on a sigaltstack, after a
 *                      siglongjmp out of a handler, in a recursion, after
 *                      one GCC inlines into itself, after makecontext()
 *                      switches, in a recursion deeper than the frames
 *                      kept); prints "ok WHAT" or "not ok WHAT: ..." and
 *                      ktrace_user_stack_print()'s line for each
 *   stacks park HOW    3 threads and main stop at known paths ("path TID
 *                      PATH" each), then: kill (wait for SIGKILL, after
 *                      printing "ready"), abort (main calls abort())
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <semaphore.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <ucontext.h>
#include <unistd.h>

#include "ktrace_user.h"

#define NOINLINE	__attribute__((noinline))
/* the program's own bookkeeping: not on the paths it keeps */
#define UNTRACED	__attribute__((no_instrument_function))

static __thread int depth;
static __thread int max_depth;
static __thread uintptr_t base_addr, low_addr;
static __thread char deepest_path[4096], largest_path[4096];
static __thread char path[4096];		/* the path now, "main - a -- b" */
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;

/* Function entry and exit, counted: the path now, as dtrace writes it. */
static __thread size_t path_len[4096];	/* the path's length at each depth */

UNTRACED NOINLINE static void enter(const char *name)
{
	size_t len = strlen(path);

	path_len[depth] = len;
	if (len < sizeof(path) - 256) {	/* a deep recursion: counted, not written */
		if (depth > 32)
			len += sprintf(path + len, " -(%d)- ", depth);
		else if (depth)
			len += sprintf(path + len, " %.*s ", depth,
				       "--------------------------------");
		strcpy(path + len, name);
	}
	depth++;
	if (depth > max_depth) {
		max_depth = depth;
		strcpy(deepest_path, path);
	}
}

UNTRACED NOINLINE static void leave(void)
{
	path[path_len[--depth]] = '\0';
}

UNTRACED static pid_t gettid_(void)
{
	return syscall(SYS_gettid);
}

/* ---- budget ---------------------------------------------------------------- */

static volatile int sink;

NOINLINE int small(int n)
{
	int r;

	enter("small");
	r = n > 1 ? small(n - 1) + 1 : sink;
	leave();
	return r;
}

NOINLINE int big(int n)
{
	volatile char buf[2048];
	int r;

	enter("big");
	buf[0] = (char)n;
	if (n > 1) {
		r = big(n - 1) + buf[0];
	} else {
		/* the innermost frame of the largest path: its lowest local */
		if (!low_addr || (uintptr_t)buf < low_addr) {
			low_addr = (uintptr_t)buf;
			strcpy(largest_path, path);
		}
		r = buf[0];
	}
	leave();
	return r;
}

UNTRACED static void report_budget(void)
{
	pthread_mutex_lock(&out_lock);
	printf("budget %d %d %s\n", gettid_(), max_depth, deepest_path);
	printf("bytes %d %lu %s\n", gettid_(), (unsigned long)(base_addr - low_addr), largest_path);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

NOINLINE void *budget_thread(void *arg)
{
	volatile int here;
	int k = (int)(intptr_t)arg;

	enter("budget_thread");
	base_addr = (uintptr_t)&here;
	small(20 + 7 * k);
	big(3 + k);
	small(5);
	report_budget();
	leave();
	return NULL;
}

/* ---- signal ----------------------------------------------------------------- */

static void *want[16];
static const char *shape = "";
static sigjmp_buf jump_back;
static int failures;

/* the handler: the path it runs on is the one wanted, then itself */
NOINLINE void on_signal(int sig)
{
	void *got[16];
	int d;

	enter("on_signal");
	want[depth - 1] = (void *)on_signal;
	d = ktrace_user_stack(got, 16);
	if (d != depth) {
		printf("not ok %s: depth %d, counted %d\n", shape, d, depth);
		failures++;
	} else {
		int i;

		for (i = 0; i < d && got[i] == want[d - 1 - i]; i++)
			;
		if (i < d) {
			printf("not ok %s: frame %d is %p, want %p\n", shape, i, got[i],
			       want[d - 1 - i]);
			failures++;
		} else {
			printf("ok %s: depth %d\n", shape, d);
		}
	}
	printf("print %s: ", shape);
	fflush(stdout);
	ktrace_user_stack_print(1);
	printf("want %s: %s\n", shape, path);
	leave();
	if (!strcmp(shape, "longjmp"))
		siglongjmp(jump_back, 1);
}

NOINLINE void sig_c(void)
{
	enter("sig_c");
	want[depth - 1] = (void *)sig_c;
	raise(SIGUSR1);
	leave();
}

NOINLINE void sig_b(void)
{
	enter("sig_b");
	want[depth - 1] = (void *)sig_b;
	sig_c();
	leave();
}

NOINLINE void sig_a(void)
{
	enter("sig_a");
	want[depth - 1] = (void *)sig_a;
	sig_b();
	leave();
}

void run_signal(void);
int main(int argc, char **argv);

NOINLINE int deep(int n)
{
	int r = 0;

	enter("deep");
	if (n > 1) {
		r = deep(n - 1) + 1;
	} else {
		static void *got[4096];	/* not in the frame: 2000 of them */
		int d = ktrace_user_stack(got, 4096);
		int kept = 0, right = 1;

		for (int i = 0; i < d && i < 4096; i++) {
			if (!got[i])
				continue;
			kept++;
			if (got[i] != (i == d - 1 ? (void *)main : i == d - 2 ? (void *)run_signal :
				       (void *)deep))
				right = 0;
		}
		/* main and the innermost frames at least: the outermost 64, innermost 256 */
		if (d != depth || !right || kept < 64 + 256 || got[d - 1] != (void *)main)
			printf("not ok deep: depth %d (counted %d), %d frames kept, right %d\n", d,
			       depth, kept, right), failures++;
		else
			printf("ok deep: depth %d, %d frames kept\n", d, kept);
		printf("print deep: ");
		fflush(stdout);
		ktrace_user_stack_print(1);
	}
	leave();
	return r;
}

/*
 * A recursion signalled at its first leaf (the deepest path), which
 * counts the LEVEL frames on the path in: fib() has no bookkeeping of its
 * own.  fib_inlined() is shapes.c's fib, which GCC inlines into itself at
 * -O2 (its inlined calls share a stack pointer): the path after it must
 * be whole.
 */
static int fib_raised;

int fib(int n, int level);

UNTRACED NOINLINE static void fib_leaf(int level)
{
	for (int i = 0; i <= level; i++) {
		enter("fib");
		want[depth - 1] = (void *)fib;
	}
	raise(SIGUSR1);
	for (int i = 0; i <= level; i++)
		leave();
}

int fib(int n, int level)
{
	if (n <= 2) {
		if (!fib_raised++)
			fib_leaf(level);
		return 1;
	}
	return fib(n - 1, level + 1) + fib(n - 2, level + 1);
}

int fib_inlined(int n)
{
	if (n <= 2)
		return 1;
	return fib_inlined(n - 1) + fib_inlined(n - 2);
}

static ucontext_t ctx_main, ctx_co;

NOINLINE void co_body(void)
{
	enter("co_body");
	sink++;
	leave();
}

NOINLINE void co_switch(void)
{
	enter("co_switch");
	swapcontext(&ctx_main, &ctx_co);
	leave();
}

NOINLINE void run_ucontext(void)
{
	char stack[16384];

	enter("run_ucontext");
	for (int i = 0; i < 10; i++) {
		getcontext(&ctx_co);
		ctx_co.uc_link = &ctx_main;
		ctx_co.uc_stack.ss_sp = stack;
		ctx_co.uc_stack.ss_size = sizeof(stack);
		makecontext(&ctx_co, co_body, 0);
		co_switch();
	}
	leave();
}

NOINLINE void run_signal(void)
{
	struct sigaction sa = { .sa_handler = on_signal };
	stack_t ss = { .ss_size = 65536 };

	enter("run_signal");
	want[0] = (void *)main;
	want[1] = (void *)run_signal;
	sigaction(SIGUSR1, &sa, NULL);
	shape = "thread-stack";
	sig_a();
	ss.ss_sp = malloc(ss.ss_size);
	sigaltstack(&ss, NULL);
	sa.sa_flags = SA_ONSTACK;
	sigaction(SIGUSR1, &sa, NULL);
	shape = "sigaltstack";
	sig_a();
	shape = "longjmp";
	for (int i = 0; i < 20; i++) {
		int saved_depth = depth;
		size_t saved_len = strlen(path);

		if (!sigsetjmp(jump_back, 1))
			sig_a();
		/* what the jump left behind: the program's own count of it */
		depth = saved_depth;
		path[saved_len] = '\0';
	}
	/* the frames the handler jumped out of are gone: the paths are whole again */
	shape = "after-longjmp";
	sig_a();
	shape = "recursion";
	fib(12, 0);
	sink += fib_inlined(20);
	shape = "after-inlined";
	sig_a();
	deep(2000);
	run_ucontext();
	shape = "after-ucontext";
	sig_a();
	leave();
}

/* ---- park ------------------------------------------------------------------- */

static sem_t parked;

UNTRACED static void say_path(void)
{
	pthread_mutex_lock(&out_lock);
	printf("path %d %s\n", gettid_(), path);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

NOINLINE void park(void)
{
	enter("park");
	say_path();
	sem_post(&parked);
	for (;;)
		pause();
}

NOINLINE void park_b(void)
{
	enter("park_b");
	park();
}

NOINLINE void park_a(int k)
{
	enter("park_a");
	if (k)
		park_b();
	else
		park();
}

NOINLINE void *park_thread(void *arg)
{
	enter("park_thread");
	park_a((int)(intptr_t)arg);
	return NULL;
}

NOINLINE void abort_here(void)
{
	enter("abort_here");
	say_path();
	abort();
}

NOINLINE void wait_here(void)
{
	enter("wait_here");
	say_path();
	printf("ready\n");
	fflush(stdout);
	for (;;)
		pause();
}

int main(int argc, char **argv)
{
	pthread_t th[3];

	enter("main");
	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "budget")) {
		volatile int here;

		base_addr = (uintptr_t)&here;
		for (int k = 0; k < 3; k++)
			pthread_create(&th[k], NULL, budget_thread, (void *)(intptr_t)(k + 1));
		for (int k = 0; k < 3; k++)
			pthread_join(th[k], NULL);
		small(12);
		big(2);
		report_budget();
	} else if (!strcmp(argv[1], "signal")) {
		if (ktrace_user_stack_symbols() <= 0)
			printf("not ok symbols: none read\n"), failures++;
		run_signal();
		return failures ? 1 : 0;
	} else if (!strcmp(argv[1], "park") && argc > 2) {
		sem_init(&parked, 0, 0);
		for (int k = 0; k < 3; k++)
			pthread_create(&th[k], NULL, park_thread, (void *)(intptr_t)(k & 1));
		for (int k = 0; k < 3; k++)
			sem_wait(&parked);
		if (!strcmp(argv[2], "abort"))
			abort_here();
		wait_here();
	} else {
		return 2;
	}
	leave();
	return 0;
}
