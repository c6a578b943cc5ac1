// SPDX-License-Identifier: GPL-2.0
/*
 * cygcount: the ground truth for dtrace's call views.  A trivial
 * -finstrument-functions hook library, preloaded instead of libktrace:
 * it counts each function's entries and exits, nothing else, and at exit
 * writes "ADDRESS ENTRIES EXITS OBJECT" per function to $CYGCOUNT_OUT: the
 * file address in OBJECT, the program or the library it is in (its load
 * bias taken off; found when the function is first called, so that a
 * library closed since is still named).  A function's
 * entries less its exits are its frames that never returned (longjmp,
 * exit() from inside it): what dtrace must repair, no more.
 *
 * Preloaded in front of libktrace (LD_PRELOAD=cygcount.so:libktrace.so),
 * it passes each call on to the next library's hook: the counts and the
 * trace are of the same run (Lua seeds its string hashes with addresses
 * and the time: two runs do not make the same calls).
 *
 * Threads: a slot is claimed with a compare-and-swap and counted with
 * atomic adds, so the counts are exact whatever the threads do.  A fixed
 * table, no allocation, so that it can run inside any program (one that
 * defines malloc itself included).  Processes: "%p" in $CYGCOUNT_OUT is
 * replaced by the process id, and a forked child starts from zero, so each
 * process writes the calls it made itself.  Calls made before the
 * constructors run (.preinit_array) find the next hooks on first use.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#define NOTRACE	__attribute__((no_instrument_function))
#define SLOTS	(1u << 16)

#define OBJECTS	64

static struct slot {
	uintptr_t fn;
	unsigned long entries, exits;
	unsigned int object;	/* in objects[], + 1; 0: not found */
} table[SLOTS];
static unsigned long overflow;
static struct object {
	uintptr_t bias;
	char path[240];
} objects[OBJECTS];
static unsigned int nr_objects;
static char objects_lock;
static void (*next_enter)(void *fn, void *site), (*next_exit)(void *fn, void *site);
static int resolved, resolving, written;

/* the next library's hooks; dlsym() may call an instrumented malloc(): not again then */
static NOTRACE void resolve(void)
{
	if (__atomic_load_n(&resolved, __ATOMIC_ACQUIRE) ||
	    __atomic_exchange_n(&resolving, 1, __ATOMIC_ACQ_REL))
		return;
	next_enter = (void (*)(void *, void *))dlsym(RTLD_NEXT, "__cyg_profile_func_enter");
	next_exit = (void (*)(void *, void *))dlsym(RTLD_NEXT, "__cyg_profile_func_exit");
	__atomic_store_n(&resolved, 1, __ATOMIC_RELEASE);
}

/* a forked child counts its own calls from the fork on */
static NOTRACE void forked(void)
{
	for (unsigned int i = 0; i < SLOTS; i++)
		table[i].entries = table[i].exits = 0;
	overflow = 0;
}

static NOTRACE __attribute__((constructor)) void cygcount_init(void)
{
	resolve();
	pthread_atfork(NULL, NULL, forked);
}

struct found {
	uintptr_t fn, bias;
	const char *path;
};

static NOTRACE int object_has(struct dl_phdr_info *info, size_t size, void *data)
{
	struct found *f = data;

	(void)size;
	for (unsigned int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;

		if (ph->p_type == PT_LOAD && f->fn >= start && f->fn - start < ph->p_memsz) {
			f->bias = info->dlpi_addr;
			f->path = info->dlpi_name;
			return 1;
		}
	}
	return 0;
}

/* the object FN is in, + 1 (0: none found or no room) */
static NOTRACE unsigned int object_of(uintptr_t fn)
{
	struct found f = { .fn = fn };
	char exe[sizeof(objects[0].path)];
	unsigned int i;
	ssize_t n;

	if (!dl_iterate_phdr(object_has, &f))
		return 0;
	if (!f.path || !*f.path) {	/* the program */
		n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
		exe[n > 0 ? n : 0] = 0;
		f.path = exe;
	}
	while (__atomic_test_and_set(&objects_lock, __ATOMIC_ACQUIRE))
		;
	for (i = 0; i < nr_objects; i++)
		if (objects[i].bias == f.bias && !strcmp(objects[i].path, f.path))
			break;
	if (i == nr_objects && i < OBJECTS) {
		objects[i].bias = f.bias;
		snprintf(objects[i].path, sizeof(objects[i].path), "%s", f.path);
		nr_objects++;
	}
	__atomic_clear(&objects_lock, __ATOMIC_RELEASE);
	return i < OBJECTS ? i + 1 : 0;
}

#define unresolved()	__builtin_expect(!__atomic_load_n(&resolved, __ATOMIC_RELAXED), 0)

static NOTRACE struct slot *slot_of(uintptr_t fn)
{
	for (unsigned int i = (fn * 0x9e3779b97f4a7c15ull) >> 48, n = 0; n < SLOTS;
	     i = (i + 1) & (SLOTS - 1), n++) {
		uintptr_t seen = __atomic_load_n(&table[i].fn, __ATOMIC_ACQUIRE);

		if (!seen && __atomic_compare_exchange_n(&table[i].fn, &seen, fn, 0,
							 __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			table[i].object = object_of(fn);
			return &table[i];
		}
		if (seen == fn)
			return &table[i];
	}
	__atomic_fetch_add(&overflow, 1, __ATOMIC_RELAXED);
	return NULL;
}

NOTRACE void __cyg_profile_func_enter(void *fn, void *site)
{
	struct slot *s;

	if (__atomic_load_n(&written, __ATOMIC_RELAXED))
		return;
	s = slot_of((uintptr_t)fn);
	if (s)
		__atomic_fetch_add(&s->entries, 1, __ATOMIC_RELAXED);
	if (unresolved())
		resolve();
	if (next_enter)
		next_enter(fn, site);
}

NOTRACE void __cyg_profile_func_exit(void *fn, void *site)
{
	struct slot *s;

	if (__atomic_load_n(&written, __ATOMIC_RELAXED))
		return;
	s = slot_of((uintptr_t)fn);
	if (s)
		__atomic_fetch_add(&s->exits, 1, __ATOMIC_RELAXED);
	if (unresolved())
		resolve();
	if (next_exit)
		next_exit(fn, site);
}

static NOTRACE __attribute__((destructor)) void cygcount_write(void)
{
	const char *path = getenv("CYGCOUNT_OUT"), *pid_at;
	char name[4096];
	FILE *f;

	if (!path)
		return;
	__atomic_store_n(&written, 1, __ATOMIC_RELAXED);
	pid_at = strstr(path, "%p");
	if (pid_at)
		snprintf(name, sizeof(name), "%.*s%d%s", (int)(pid_at - path), path, (int)getpid(),
			 pid_at + 2);
	else
		snprintf(name, sizeof(name), "%s", path);
	if (!(f = fopen(name, "w")))
		return;
	for (unsigned int i = 0; i < SLOTS; i++) {
		const struct slot *t = &table[i];
		const struct object *o = t->object ? &objects[t->object - 1] : NULL;

		if (t->fn && (t->entries || t->exits))
			fprintf(f, "%#lx %lu %lu %s\n", (unsigned long)(t->fn - (o ? o->bias : 0)),
				t->entries, t->exits, o ? o->path : "?");
	}
	if (overflow)
		fprintf(f, "overflow %lu\n", overflow);
	fclose(f);
}
