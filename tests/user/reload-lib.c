// SPDX-License-Identifier: GPL-2.0
/* reload-lib: built as libfirst.so and libsecond.so (-DNAME=first, second). */
#define CAT(a, b)	a##b
#define FN(name, sfx)	CAT(name, sfx)

static volatile int sink;

void FN(NAME, _leaf)(void)
{
	sink++;
}

void FN(NAME, _fn)(void)
{
	FN(NAME, _leaf)();
}
