// SPDX-License-Identifier: GPL-2.0
/*
 * preinit: the first instrumented call comes from .preinit_array, before
 * the C library has set environ (as a malloc hook installed there, in
 * uftrace's t119-t121).  Built with -finstrument-functions; each function
 * counts its own calls and main prints "FUNCTION CALLS" at the end, the
 * ground truth for tests/host/81-user-preinit.sh.
 */
#include <stdio.h>
#include <stdlib.h>

enum { EARLY, HOOK_SETUP, HOOK_LEAF, WORK, MAIN, NR };
static const char *const names[NR] = { "early", "hook_setup", "hook_leaf", "work", "main" };
static unsigned long calls[NR];

void hook_leaf(void)
{
	calls[HOOK_LEAF]++;
}

void hook_setup(void)
{
	calls[HOOK_SETUP]++;
	hook_leaf();
}

void early(int argc, char **argv, char **envp)
{
	calls[EARLY]++;
	hook_setup();
}

__attribute__((section(".preinit_array"), used))
static void (*const preinit)(int, char **, char **) = early;

void work(int i)
{
	calls[WORK]++;
	if (i % 3 == 0)
		hook_leaf();
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;

	calls[MAIN]++;
	for (int i = 0; i < n; i++)
		work(i);
	for (int i = 0; i < NR; i++)
		printf("%s %lu\n", names[i], calls[i]);
	return 0;
}
