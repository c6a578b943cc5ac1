// SPDX-License-Identifier: GPL-2.0
/*
 * cygcount: the ground truth for dtrace's call views.  A trivial
 * -finstrument-functions hook library, preloaded instead of libktrace:
 * it counts each function's entries and exits, nothing else, and at exit
 * writes "ADDRESS ENTRIES EXITS" per function (file addresses of the main
 * program, the load bias taken off) to $CYGCOUNT_OUT.  A function's
 * entries less its exits are its frames that never returned (longjmp,
 * exit() from inside it): what dtrace must repair, no more.
 *
 * Preloaded in front of libktrace (LD_PRELOAD=cygcount.so:libktrace.so),
 * it passes each call on to the next library's hook: the counts and the
 * trace are of the same run (Lua seeds its string hashes with addresses
 * and the time: two runs do not make the same calls).
 *
 * Single-threaded programs only (the counts are not atomic); a fixed table,
 * no allocation, so that it can run inside any program.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOTRACE	__attribute__((no_instrument_function))
#define SLOTS	(1u << 16)

static struct slot {
	uintptr_t fn;
	unsigned long entries, exits;
} table[SLOTS];
static unsigned long overflow;
static void (*next_enter)(void *fn, void *site), (*next_exit)(void *fn, void *site);

static NOTRACE __attribute__((constructor)) void cygcount_init(void)
{
	next_enter = (void (*)(void *, void *))dlsym(RTLD_NEXT, "__cyg_profile_func_enter");
	next_exit = (void (*)(void *, void *))dlsym(RTLD_NEXT, "__cyg_profile_func_exit");
}

static NOTRACE struct slot *slot_of(uintptr_t fn)
{
	for (unsigned int i = (fn * 0x9e3779b97f4a7c15ull) >> 48, n = 0; n < SLOTS;
	     i = (i + 1) & (SLOTS - 1), n++) {
		if (table[i].fn == fn)
			return &table[i];
		if (!table[i].fn) {
			table[i].fn = fn;
			return &table[i];
		}
	}
	overflow++;
	return NULL;
}

NOTRACE void __cyg_profile_func_enter(void *fn, void *site)
{
	struct slot *s = slot_of((uintptr_t)fn);

	if (s)
		s->entries++;
	if (next_enter)
		next_enter(fn, site);
}

NOTRACE void __cyg_profile_func_exit(void *fn, void *site)
{
	struct slot *s = slot_of((uintptr_t)fn);

	if (s)
		s->exits++;
	if (next_exit)
		next_exit(fn, site);
}

static NOTRACE int main_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uintptr_t *)data = info->dlpi_addr;	/* the first one is the program */
	return 1;
}

static NOTRACE __attribute__((destructor)) void cygcount_write(void)
{
	const char *path = getenv("CYGCOUNT_OUT");
	uintptr_t bias = 0;
	FILE *f;

	if (!path || !(f = fopen(path, "w")))
		return;
	dl_iterate_phdr(main_bias, &bias);
	for (unsigned int i = 0; i < SLOTS; i++)
		if (table[i].fn)
			fprintf(f, "%#lx %lu %lu\n", (unsigned long)(table[i].fn - bias),
				table[i].entries, table[i].exits);
	if (overflow)
		fprintf(f, "overflow %lu\n", overflow);
	fclose(f);
}
