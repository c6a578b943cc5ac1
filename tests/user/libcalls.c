// SPDX-License-Identifier: GPL-2.0
/* tests/user: a shared library whose functions are traced, one calling back. */
#include "calls.h"

int lib_square(int x)
{
	return x * x;
}

int lib_apply(int (*fn)(int), int x)
{
	return fn(lib_square(x));
}
