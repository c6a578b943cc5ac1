// SPDX-License-Identifier: GPL-2.0
/*
 * reload: libraries loaded with dlopen() by a relative path, and one
 * unloaded and another loaded in its place, for
 * tests/host/82-user-dlopen.sh.  Built with -finstrument-functions, as are
 * the two libraries: tests/user/reload-lib.c built twice, as
 * libfirst.so (first_fn, first_leaf) and libsecond.so (second_fn,
 * second_leaf), the same code at the same offsets.  Run in the directory
 * that holds them:
 *
 *   reload rel N        dlopen("./libfirst.so"), first_fn() N times, and
 *                       chdir("/") before the process's map is written
 *   reload swap N M     dlopen("libfirst.so" by its absolute path PATH
 *                       given as $RELOAD_DIR), first_fn() N times,
 *                       dlclose(); then libsecond.so, second_fn() M times;
 *                       exits 77 if the second is not where the first was
 *
 * Prints "FUNCTION CALLS" for each function it called (the ground truth:
 * the leaf is called once per call).
 */
#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void *load(const char *path, const char *sym, void (**fn)(void))
{
	void *h = dlopen(path, RTLD_NOW);

	if (!h || !(*fn = (void (*)(void))dlsym(h, sym))) {
		fprintf(stderr, "reload: %s: %s\n", path, dlerror());
		exit(1);
	}
	return h;
}

static void call(void (*fn)(void), int n)
{
	for (int i = 0; i < n; i++)
		fn();
}

int main(int argc, char **argv)
{
	char path[4096];
	const char *dir = getenv("RELOAD_DIR");
	void (*fn)(void), (*first)(void);
	void *h;
	int n = argc > 2 ? atoi(argv[2]) : 10, m = argc > 3 ? atoi(argv[3]) : 10;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "rel")) {
		load("./libfirst.so", "first_fn", &fn);
		call(fn, n);
		if (chdir("/") < 0)
			return 1;
		printf("first_fn %d\nfirst_leaf %d\n", n, n);
		return 0;
	}
	if (strcmp(argv[1], "swap") || !dir)
		return 2;
	snprintf(path, sizeof(path), "%s/libfirst.so", dir);
	h = load(path, "first_fn", &fn);
	call(fn, n);
	first = fn;
	dlclose(h);
	snprintf(path, sizeof(path), "%s/libsecond.so", dir);
	load(path, "second_fn", &fn);
	if ((char *)fn - (char *)first)
		return 77;
	call(fn, m);
	printf("first_fn %d\nfirst_leaf %d\nsecond_fn %d\nsecond_leaf %d\n", n, n, m, m);
	return 0;
}
