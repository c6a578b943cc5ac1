// SPDX-License-Identifier: GPL-2.0
/*
 * tests/user/dlopen: calls into a traced library it loads with dlopen()
 * after its first record and unloads before it exits: the library must
 * still be in the map (libktrace's writer notices the new library).
 *
 *   dlopen PATH/libcalls.so
 */
#include <dlfcn.h>
#include <stdio.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct timespec pause = { 0, 300 * 1000 * 1000 };
	int (*square)(int);
	void *lib;

	if (argc != 2 || !(lib = dlopen(argv[1], RTLD_NOW))) {
		fprintf(stderr, "dlopen: %s\n", argc == 2 ? dlerror() : "usage: dlopen LIB");
		return 1;
	}
	square = (int (*)(int))dlsym(lib, "lib_square");
	if (!square || square(3) != 9)
		return 1;
	nanosleep(&pause, NULL);	/* the writer's period is 100 ms */
	dlclose(lib);
	return 0;
}
