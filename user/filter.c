// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * filter: the record-time call filters (see filter.h): the patterns from
 * the environment, each object's functions matched against them, and the
 * cache the hooks read.
 *
 * An object's functions are its ELF symbols (.symtab, else .dynsym), read
 * from its file, mapped, once: those that match a pattern are kept, by
 * run-time address, in a sorted array.  Objects are found by address with
 * dl_iterate_phdr().  All under one lock, which a thread that already
 * holds it (a signal handler in its lookup) does not wait for: its
 * function is then taken for one that matches nothing, and not cached.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "funcpat.h"
#include "libktrace.h"
#include "filter.h"

#define MAX_PATTERNS	64
#define MAX_OBJECTS	1024
#define CACHE_PROBES	8

struct kt_filter kt_filter = { .on = true };
__thread struct kt_filter_thread kt_filter_self __attribute__((tls_model("initial-exec")));

struct match {
	uintptr_t addr;
	unsigned int bits;
};

struct object {
	uintptr_t start, end;		/* what its PT_LOAD segments cover */
	struct match *matches;		/* sorted by address */
	size_t nr;
};

static struct {
	pthread_mutex_t lock;
	uintptr_t holder;		/* the thread holding @lock (its thread_mark), 0: none */
	char *env_keep, *env_drop;	/* copies of the variables */
	unsigned int depth_env;
	struct kt_funcpat pats[MAX_PATTERNS];
	unsigned int bits[MAX_PATTERNS];	/* KT_FILTER_KEEP or _DROP */
	bool matched[MAX_PATTERNS];
	unsigned int nr_pats;
	struct object objs[MAX_OBJECTS];
	unsigned int nr_objs;
} flt = { .lock = PTHREAD_MUTEX_INITIALIZER };

static KT_NOTRACE void say(const char *fmt, const char *what, const char *detail)
{
	char msg[PATH_MAX + 256];
	int n = snprintf(msg, sizeof(msg), fmt, what, detail);

	kt_say(msg, n >= (int)sizeof(msg) ? (int)sizeof(msg) - 1 : n);
}

/*
 * The patterns of variable @name, split at ';' (that copy is kept: they
 * point into it); returns another copy, whole, for the children.
 */
static KT_NOTRACE char *add_patterns(const char *name, unsigned int bits)
{
	const char *v = kt_getenv(name);
	char *copy, *save = NULL, err[256];

	if (!v || !*v || !(copy = strdup(v)))
		return NULL;
	for (char *p = strtok_r(copy, ";", &save); p; p = strtok_r(NULL, ";", &save)) {
		if (flt.nr_pats == MAX_PATTERNS) {
			say("libktrace: %s: more than 64 patterns, the rest ignored%s\n", name, "");
			break;
		}
		if (!kt_funcpat_compile(&flt.pats[flt.nr_pats], p, err, sizeof(err))) {
			say("libktrace: %s: %s, ignored\n", name, err);
			continue;
		}
		flt.bits[flt.nr_pats++] = bits;
	}
	return strdup(v);
}

/* ---- objects -------------------------------------------------------------- */

static KT_NOTRACE int by_addr(const void *a, const void *b)
{
	const struct match *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The matching functions of ELF file @path loaded at @bias into @o. */
static KT_NOTRACE void read_symbols(struct object *o, const char *path, uintptr_t bias)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	const unsigned char *map;
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh, *symtab = NULL, *dynsym = NULL, *use;
	size_t alloc = 0;

	if (fd < 0)
		return;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(*eh)) {
		close(fd);
		return;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return;
	eh = (const void *)map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(*sh) || eh->e_shoff > (uint64_t)st.st_size ||
	    eh->e_shnum > ((uint64_t)st.st_size - eh->e_shoff) / sizeof(*sh))
		goto out;
	sh = (const void *)(map + eh->e_shoff);
	for (unsigned int i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type == SHT_SYMTAB)
			symtab = &sh[i];
		else if (sh[i].sh_type == SHT_DYNSYM)
			dynsym = &sh[i];
	}
	use = symtab ? symtab : dynsym;
	if (!use || use->sh_link >= eh->e_shnum || use->sh_entsize != sizeof(Elf64_Sym) ||
	    use->sh_offset > (uint64_t)st.st_size ||
	    use->sh_size > (uint64_t)st.st_size - use->sh_offset ||
	    sh[use->sh_link].sh_offset > (uint64_t)st.st_size ||
	    sh[use->sh_link].sh_size > (uint64_t)st.st_size - sh[use->sh_link].sh_offset)
		goto out;
	const Elf64_Sym *syms = (const void *)(map + use->sh_offset);
	const char *str = (const char *)map + sh[use->sh_link].sh_offset;
	size_t nr = use->sh_size / sizeof(*syms), str_size = sh[use->sh_link].sh_size;

	for (size_t i = 0; i < nr; i++) {
		const Elf64_Sym *s = &syms[i];
		unsigned int type = ELF64_ST_TYPE(s->st_info), bits = 0;
		const char *name;

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s->st_shndx == SHN_UNDEF ||
		    !s->st_value || s->st_name >= str_size ||
		    !memchr(str + s->st_name, '\0', str_size - s->st_name))
			continue;
		name = str + s->st_name;
		for (unsigned int p = 0; p < flt.nr_pats; p++) {
			if (kt_funcpat_match(&flt.pats[p], name)) {
				bits |= flt.bits[p];
				flt.matched[p] = true;
			}
		}
		if (!bits)
			continue;
		if (o->nr == alloc) {
			struct match *m = realloc(o->matches, (alloc = 2 * alloc + 16) * sizeof(*m));

			if (!m)
				break;
			o->matches = m;
		}
		o->matches[o->nr++] = (struct match){ bias + s->st_value, bits };
	}
	qsort(o->matches, o->nr, sizeof(*o->matches), by_addr);
out:
	munmap((void *)map, st.st_size);
}

struct find {
	uintptr_t addr;			/* an object with it; 0: every object */
	unsigned int added;
};

static KT_NOTRACE int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	uintptr_t start = UINTPTR_MAX, end = 0;
	const char *path = info->dlpi_name;
	struct object *o;

	if (!kt_object_span(info, &start, &end) || (f->addr && (f->addr < start || f->addr >= end)))
		return 0;
	for (unsigned int i = 0; i < flt.nr_objs; i++)
		if (flt.objs[i].start == start && flt.objs[i].end == end)
			return f->addr != 0;	/* known */
	if (flt.nr_objs == MAX_OBJECTS)
		return 1;
	o = &flt.objs[flt.nr_objs];
	*o = (struct object){ start, end, NULL, 0 };
	if (!path || !*path)
		path = "/proc/self/exe";	/* the program */
	if (path[0] == '/')		/* not the vDSO ("linux-vdso.so.1") */
		read_symbols(o, path, info->dlpi_addr);
	flt.nr_objs++;
	f->added++;
	return f->addr != 0;
}

static KT_NOTRACE const struct object *object_of(uintptr_t addr)
{
	struct find f = { addr, 0 };

	for (unsigned int i = 0; i < flt.nr_objs; i++)
		if (addr >= flt.objs[i].start && addr < flt.objs[i].end)
			return &flt.objs[i];
	dl_iterate_phdr(add_object, &f);
	return f.added ? &flt.objs[flt.nr_objs - 1] : NULL;
}

static KT_NOTRACE unsigned int bits_in(const struct object *o, uintptr_t addr)
{
	size_t lo = 0, hi = o ? o->nr : 0;

	while (lo < hi) {
		size_t mid = (lo + hi) / 2;

		if (o->matches[mid].addr == addr)
			return o->matches[mid].bits;
		if (o->matches[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/*
 * Which thread this is, without a system call (the traced program's
 * system calls are its own: a gettid() at its first call showed up in
 * the kernel's trace of it): the address of a thread-local byte.
 */
static __thread char thread_mark __attribute__((tls_model("initial-exec")));

/* The lock, unless this thread holds it (a signal handler in a lookup): then false. */
static KT_NOTRACE bool lock(void)
{
	uintptr_t me = (uintptr_t)&thread_mark;

	if (__atomic_load_n(&flt.holder, __ATOMIC_RELAXED) == me)
		return false;
	pthread_mutex_lock(&flt.lock);
	__atomic_store_n(&flt.holder, me, __ATOMIC_RELAXED);
	return true;
}

static KT_NOTRACE void unlock(void)
{
	__atomic_store_n(&flt.holder, 0, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&flt.lock);
}

/* ---- the hooks' side ------------------------------------------------------ */

KT_NOTRACE unsigned int kt_filter_lookup(uintptr_t fn)
{
	size_t first = (fn * 0x9e3779b97f4a7c15ull) >> (64 - KT_FILTER_CACHE_BITS);
	size_t mask = (1u << KT_FILTER_CACHE_BITS) - 1;
	unsigned int bits;
	uint64_t v;

	for (size_t i = 0; i < CACHE_PROBES; i++) {
		v = __atomic_load_n(&kt_filter.cache[(first + i) & mask], __ATOMIC_RELAXED);
		if (v >> 8 == fn)
			return v & 0xff;
		if (!v)
			break;
	}
	if (fn >> 56 || !lock())
		return 0;
	bits = bits_in(object_of(fn), fn) | KT_FILTER_KNOWN;
	unlock();
	/* a free slot near its place: the first one, where the hooks look */
	for (size_t i = 0; i < CACHE_PROBES; i++) {
		uint64_t empty = 0;

		if (__atomic_compare_exchange_n(&kt_filter.cache[(first + i) & mask], &empty,
						(uint64_t)fn << 8 | bits, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			break;
	}
	return bits;
}

KT_NOTRACE void kt_filter_setup(void)
{
	struct find all = { 0, 0 };
	const char *depth;
	unsigned int nr_keep;
	bool ok;

	/*
	 * No filter asked for (almost always): off, without the lock, whose
	 * contention between threads calling at once is a futex() system
	 * call of the traced program's.  Every thread decides the same.
	 */
	if (!kt_getenv("KTRACE_USER_FILTER") && !kt_getenv("KTRACE_USER_NOTRACE") &&
	    !kt_getenv("KTRACE_USER_DEPTH")) {
		kt_filter.on = false;
		__atomic_store_n(&kt_filter.ready, true, __ATOMIC_RELEASE);
		return;
	}
	if (!lock())
		return;			/* a signal handler of the setup: not yet */
	if (kt_filter.ready) {
		unlock();
		return;
	}
	flt.env_keep = add_patterns("KTRACE_USER_FILTER", KT_FILTER_KEEP);
	nr_keep = flt.nr_pats;
	flt.env_drop = add_patterns("KTRACE_USER_NOTRACE", KT_FILTER_DROP);
	depth = kt_getenv("KTRACE_USER_DEPTH");
	if (depth && *depth) {
		char *end;
		unsigned long n = strtoul(depth, &end, 10);

		if (*end || n < 1 || n > 1000000)
			say("libktrace: %s: not a depth (1-1000000), ignored%s\n",
			    "KTRACE_USER_DEPTH", "");
		else
			kt_filter.max_depth = flt.depth_env = n;
	}
	ok = flt.nr_pats || kt_filter.max_depth;
	if (ok && flt.nr_pats) {
		kt_filter.cache = mmap(NULL, sizeof(uint64_t) << KT_FILTER_CACHE_BITS,
				       PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (kt_filter.cache == MAP_FAILED) {
			say("libktrace: %s: no memory for the filter; calls are recorded "
			    "unfiltered%s\n", "KTRACE_USER_FILTER", "");
			kt_filter.cache = NULL;
			ok = false;
		} else {
			dl_iterate_phdr(add_object, &all);
			for (unsigned int p = 0; p < flt.nr_pats; p++)
				if (!flt.matched[p])
					say("libktrace: '%s' (%s) matches no function of the program "
					    "or its libraries loaded now (one loaded later is "
					    "searched when its functions are called)\n",
					    flt.pats[p].text, flt.bits[p] == KT_FILTER_KEEP ?
					    "KTRACE_USER_FILTER" : "KTRACE_USER_NOTRACE");
		}
	}
	/* the hooks look at the cache once these say so */
	kt_filter.keep = ok && nr_keep;
	kt_filter.patterns = ok && flt.nr_pats;
	kt_filter.on = ok;
	__atomic_store_n(&kt_filter.ready, true, __ATOMIC_RELEASE);
	unlock();
}

KT_NOTRACE void kt_filter_library_change(void)
{
	if (!kt_filter.ready || !kt_filter.cache || !lock())
		return;
	for (unsigned int i = 0; i < flt.nr_objs; i++)
		free(flt.objs[i].matches);
	flt.nr_objs = 0;
	for (size_t i = 0; i < (1u << KT_FILTER_CACHE_BITS); i++)
		__atomic_store_n(&kt_filter.cache[i], 0, __ATOMIC_RELAXED);
	unlock();
}

KT_NOTRACE unsigned int kt_filter_env(char (*var)[PATH_MAX + 32], unsigned int room)
{
	unsigned int nr = 0;

	if (!kt_filter.ready)
		kt_filter_setup();
	if (flt.env_keep && nr < room)
		snprintf(var[nr++], PATH_MAX + 32, "KTRACE_USER_FILTER=%s", flt.env_keep);
	if (flt.env_drop && nr < room)
		snprintf(var[nr++], PATH_MAX + 32, "KTRACE_USER_NOTRACE=%s", flt.env_drop);
	if (flt.depth_env && nr < room)
		snprintf(var[nr++], PATH_MAX + 32, "KTRACE_USER_DEPTH=%u", flt.depth_env);
	return nr;
}
