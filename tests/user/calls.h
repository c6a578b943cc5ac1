/* SPDX-License-Identifier: GPL-2.0 */
/* tests/user: the shared library of the calls test program. */
#ifndef CALLS_H
#define CALLS_H

int lib_square(int x);
int lib_apply(int (*fn)(int), int x);

#endif
