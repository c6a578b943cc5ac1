// SPDX-License-Identifier: GPL-2.0
/*
 * tests/user/jumps: unbalanced calls for the call tree's repairs: longjmp
 * out of two functions, and exit() from inside three.
 */
#include <setjmp.h>
#include <stdlib.h>

static jmp_buf env;
static volatile int sink;

__attribute__((noinline)) void deep(int n)
{
	if (n == 0)
		longjmp(env, 1);
	deep(n - 1);
}

__attribute__((noinline)) void leaf(void)
{
	sink++;
}

__attribute__((noinline)) void jumper(void)
{
	if (!setjmp(env))
		deep(1);
	leaf();
}

__attribute__((noinline)) void bye(int n)
{
	if (n == 0)
		exit(0);
	bye(n - 1);
}

int main(void)
{
	jumper();
	bye(2);
	return 1;
}
