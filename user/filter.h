/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * filter: libktrace's record-time call filters, from the environment
 * (ktrace-run -F, -N, --depth set it):
 *
 *   KTRACE_USER_FILTER   patterns (lib/funcpat.h), ';' between them: only
 *                        the calls of matching functions and their callees
 *   KTRACE_USER_NOTRACE  not the calls of matching functions, nor their callees
 *   KTRACE_USER_DEPTH    only calls less than N deep (from the outermost
 *                        -F call, with -F)
 *
 * A call not recorded costs its decision only: the thread's call level
 * and where its kept (-F) and hidden (-N) calls began, in thread-local
 * variables, and, with patterns, what its function matches, from a cache
 * keyed by the function's address (one load where it is known).  The
 * exit needs no lookup: a region ends when the level it began at does.
 * A function is looked up once per process: at the first record, every
 * object loaded then has its symbols matched against the patterns (a
 * pattern that matches none is said on stderr); an object loaded later
 * (dlopen), when a function of it is first called.
 */
#ifndef KT_FILTER_H
#define KT_FILTER_H

#include <stdbool.h>
#include <stdint.h>

#define KT_FILTER_KNOWN		1u	/* a cache entry, whatever it matched */
#define KT_FILTER_KEEP		2u	/* matches KTRACE_USER_FILTER */
#define KT_FILTER_DROP		4u	/* matches KTRACE_USER_NOTRACE */
#define KT_FILTER_CACHE_BITS	14	/* 16384 functions: 128 KiB */

struct kt_filter_thread {
	unsigned int level;		/* instrumented calls running */
	unsigned int kept;		/* the level the outermost -F call runs at, 0: none */
	unsigned int hidden;		/* the same for -N */
};

struct kt_filter {
	bool on;			/* true until set up without filters */
	bool ready;			/* set up */
	bool keep;			/* -F patterns given: calls outside are not recorded */
	bool patterns;			/* -F or -N patterns given */
	unsigned int max_depth;		/* 0: no limit */
	uint64_t *cache;		/* fn << 8 | KT_FILTER_* bits, 0: empty */
};

extern struct kt_filter kt_filter KT_HIDDEN;
extern __thread struct kt_filter_thread kt_filter_self
	__attribute__((tls_model("initial-exec"))) KT_HIDDEN;

void kt_filter_setup(void) KT_HIDDEN;
unsigned int kt_filter_lookup(uintptr_t fn) KT_HIDDEN;	/* a cache miss */
/* dlclose() (dlwrap.c): the functions of an address may change */
void kt_filter_library_change(void) KT_HIDDEN;
/* the variables for a child (kt_tracing_env()), NAME=value, into @var[] */
unsigned int kt_filter_env(char (*var)[PATH_MAX + 32], unsigned int room) KT_HIDDEN;

static inline KT_NOTRACE unsigned int kt_filter_bits(uintptr_t fn)
{
	uint64_t v = __atomic_load_n(&kt_filter.cache[(fn * 0x9e3779b97f4a7c15ull) >>
						      (64 - KT_FILTER_CACHE_BITS)],
				     __ATOMIC_RELAXED);

	if (kt_likely(v >> 8 == fn))
		return v & 0xff;
	return kt_filter_lookup(fn);
}

/* Whether a call at @level, of @t's state, is recorded. */
static inline KT_NOTRACE bool kt_filter_shown(const struct kt_filter_thread *t,
					      unsigned int level)
{
	unsigned int base = t->kept ? t->kept - 1 : 0;

	return (!kt_filter.keep || t->kept) && !t->hidden &&
		(!kt_filter.max_depth || level - base <= kt_filter.max_depth);
}

/* Function @fn is entered: whether the entry is recorded. */
static inline KT_NOTRACE bool kt_filter_enter(uintptr_t fn)
{
	struct kt_filter_thread *t = &kt_filter_self;
	unsigned int level, bits;

	if (kt_unlikely(!kt_filter.ready)) {
		kt_filter_setup();
		if (!kt_filter.ready)
			return false;	/* a signal handler of the setup */
		if (!kt_filter.on)
			return true;
	}
	level = ++t->level;
	if (kt_filter.patterns) {
		bits = kt_filter_bits(fn);
		if ((bits & KT_FILTER_KEEP) && !t->kept)
			t->kept = level;
		if ((bits & KT_FILTER_DROP) && !t->hidden)
			t->hidden = level;
	}
	return kt_filter_shown(t, level);
}

/* A function exits: whether the exit is recorded (its entry was). */
static inline KT_NOTRACE bool kt_filter_exit(void)
{
	struct kt_filter_thread *t = &kt_filter_self;
	unsigned int level = t->level;
	bool shown;

	if (kt_unlikely(!kt_filter.ready)) {
		kt_filter_setup();
		if (!kt_filter.ready)
			return false;	/* a signal handler of the setup */
		if (!kt_filter.on)
			return true;
	}
	if (kt_unlikely(!level))
		return !kt_filter.keep && !kt_filter.max_depth;	/* entered before: unknown */
	shown = kt_filter_shown(t, level);
	if (t->kept == level)
		t->kept = 0;
	if (t->hidden == level)
		t->hidden = 0;
	t->level = level - 1;
	return shown;
}

#endif /* KT_FILTER_H */
