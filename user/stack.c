// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * stack: the thread's call path as the -finstrument-functions hooks keep
 * it (struct kt_shadow, func.c), for ktrace_user_stack() and
 * ktrace_user_stack_print(), and the repairs that are too rare for the
 * hooks' inline code.
 *
 * Printing must work in a signal handler, a crash handler included: no
 * malloc, no stdio, no lock.  So names come from a table made beforehand
 * by ktrace_user_stack_symbols() (the ELF symbols of the program and its
 * libraries, read from their files), looked up by bisection; without it,
 * or for an address it lacks, the address in hex.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ktrace_user.h"
#include "libktrace.h"

KT_NOTRACE const struct kt_frame *kt_frame_at(const struct kt_shadow *st, unsigned long d)
{
	const struct kt_frame *f = &st->ring[d & (KT_STACK_RING - 1)];

	if (f->depth == d)
		return f;
	if (d < KT_STACK_OUTER && st->outer[d].depth == d)
		return &st->outer[d];
	return NULL;
}

/* The @i-th frame from the top, if it is there and kept. */
static KT_NOTRACE const struct kt_frame *from_top(const struct kt_shadow *st, unsigned long i)
{
	return i < st->depth ? kt_frame_at(st, st->depth - 1 - i) : NULL;
}


static KT_NOTRACE bool same_stack(uintptr_t a, uintptr_t b)
{
	return a - b < KT_STACK_SPAN || b - a < KT_STACK_SPAN;
}

/*
 * An entry at @sp that is not below the frame on top on the same stack.
 * The frames of this stack entered below @sp no longer run (a longjmp, an
 * exception or a switch left them), nor do the frames of other stacks
 * above them (a handler on a sigaltstack that longjmp'd out).  One entered
 * at @sp is gone too, unless the new function is inlined into it: GCC
 * calls the hooks of an inlined function at the stack pointer of the one
 * it is inlined into, with that one's call site, from another place in its
 * code; from the same place (@at) it is the same code entered again, and
 * with another call site another call.  A frame above @sp runs, and so do
 * those of other stacks above it (a handler on its own stack).  Frames not
 * kept end the search.
 */
static KT_NOTRACE void drop_gone(struct kt_shadow *st, uintptr_t site, uintptr_t sp, uintptr_t at)
{
	for (;;) {
		const struct kt_frame *f;
		unsigned long i;

		for (i = 0; (f = from_top(st, i)) && !same_stack(f->sp, sp); i++)
			;
		if (!f || f->sp > sp || (f->sp == sp && f->at != at && f->site == site))
			return;
		st->depth -= i + 1;
	}
}

KT_NOTRACE void kt_shadow_push_slow(struct kt_shadow *st, uintptr_t fn, uintptr_t site,
				    uintptr_t sp)
{
	uintptr_t at = kt_hook_return(sp);
	struct kt_frame *f;
	unsigned long d;

	drop_gone(st, site, sp, at);
	d = st->depth;
	f = kt_ring(st, d);
	/* an outermost frame whose slot a deeper one takes: kept apart */
	if (d >= KT_STACK_RING && f->depth == d - KT_STACK_RING && f->depth < KT_STACK_OUTER)
		st->outer[f->depth] = *f;
	st->depth = d + 1;
	kt_barrier();
	*f = (struct kt_frame){ fn, site, sp, at, d };
}

/*
 * An exit of @fn that is not simply of the frame on top.  @after_prologue:
 * @sp is the function's as at its entry (alloca() may have moved it down),
 * so the frames entered below it are gone and the exit is of the
 * function's innermost frame left; else @sp is the function's CFA, above
 * its frame: the exit is of the outermost frame of @fn entered below it.
 * Frames on another stack among those are gone too (a handler that
 * longjmp'd away).  If the frame is not there (entered before the
 * thread's first record, or dropped at a switch of stacks), only the
 * frames below @sp go; if the search came to a frame not kept (its slot
 * taken by a deeper one), that frame is the one that exits.
 */
KT_NOTRACE void kt_shadow_unwind(struct kt_shadow *st, uintptr_t fn, uintptr_t sp,
				 bool after_prologue)
{
	const struct kt_frame *f;
	unsigned long i, found = 0;

	for (i = 0; (f = from_top(st, i)); i++) {
		bool here = same_stack(f->sp, sp);

		if (here && f->sp >= sp) {
			const struct kt_frame *g;

			for (unsigned long j = i; after_prologue && !found && (g = from_top(st, j)); j++)
				if (g->fn == fn)
					found = j + 1;
			break;
		}
		if (f->fn == fn && here && !after_prologue)
			found = i + 1;
	}
	if (found) {
		st->depth -= found;
		return;
	}
	st->depth -= i;
	if (!f && st->depth)		/* the search ended at a frame not kept */
		st->depth--;
}

/* ---- the API -------------------------------------------------------------- */

__attribute__((visibility("default"))) KT_NOTRACE
int ktrace_user_stack(void **fns, int max)
{
	const struct kt_stream *s = kt_self;
	unsigned long depth;

	if (!s)
		return -1;
	depth = s->stack.depth;
	for (unsigned long i = 0; i < depth && i < (unsigned long)(max > 0 ? max : 0); i++) {
		const struct kt_frame *f = kt_frame_at(&s->stack, depth - 1 - i);

		fns[i] = f ? (void *)f->fn : NULL;
	}
	return depth > INT_MAX ? INT_MAX : (int)depth;
}

/* The names, made by ktrace_user_stack_symbols(), never freed (a handler may be reading). */
struct kt_sym {
	uintptr_t start, size;
	const char *name;
};

struct kt_symtab {
	struct kt_sym *syms;
	size_t nr, alloc;
};

static struct kt_symtab *kt_names;

static KT_NOTRACE int by_start(const void *a, const void *b)
{
	const struct kt_sym *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* The function symbols of one loaded object, from its file (kept mapped: the names). */
static KT_NOTRACE int add_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct kt_symtab *t = arg;
	const char *path = info->dlpi_name && *info->dlpi_name ? info->dlpi_name : "/proc/self/exe";
	const Elf64_Ehdr *eh;
	const Elf64_Shdr *sh, *tab = NULL;
	struct stat st;
	void *map;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return 0;		/* the vDSO, a deleted file: addresses in hex */
	if (fstat(fd, &st) < 0 || (size_t)st.st_size < sizeof(*eh)) {
		close(fd);
		return 0;
	}
	map = mmap(NULL, st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return 0;
	eh = map;
	if (memcmp(eh->e_ident, ELFMAG, SELFMAG) || eh->e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh->e_shentsize != sizeof(*sh) ||
	    eh->e_shoff > (uint64_t)st.st_size ||
	    eh->e_shnum > ((uint64_t)st.st_size - eh->e_shoff) / sizeof(*sh))
		goto unmap;
	sh = (const Elf64_Shdr *)((const char *)map + eh->e_shoff);
	for (unsigned int i = 0; i < eh->e_shnum; i++)
		if (sh[i].sh_type == SHT_SYMTAB || (sh[i].sh_type == SHT_DYNSYM && !tab))
			tab = &sh[i];
	if (!tab || tab->sh_link >= eh->e_shnum || tab->sh_entsize != sizeof(Elf64_Sym) ||
	    tab->sh_offset > (uint64_t)st.st_size ||
	    tab->sh_size > (uint64_t)st.st_size - tab->sh_offset ||
	    sh[tab->sh_link].sh_offset > (uint64_t)st.st_size ||
	    sh[tab->sh_link].sh_size > (uint64_t)st.st_size - sh[tab->sh_link].sh_offset)
		goto unmap;
	const Elf64_Sym *sym = (const Elf64_Sym *)((const char *)map + tab->sh_offset);
	const char *str = (const char *)map + sh[tab->sh_link].sh_offset;
	size_t nr = tab->sh_size / sizeof(*sym), strsz = sh[tab->sh_link].sh_size;
	size_t before = t->nr;

	for (size_t i = 0; i < nr; i++) {
		unsigned int type = ELF64_ST_TYPE(sym[i].st_info);

		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || sym[i].st_shndx == SHN_UNDEF ||
		    !sym[i].st_value || sym[i].st_name >= strsz ||
		    !memchr(str + sym[i].st_name, 0, strsz - sym[i].st_name))
			continue;
		if (t->nr == t->alloc) {
			struct kt_sym *grown;

			t->alloc = t->alloc ? 2 * t->alloc : 1024;
			grown = realloc(t->syms, t->alloc * sizeof(*grown));
			if (!grown)
				return 1;	/* what there is so far */
			t->syms = grown;
		}
		t->syms[t->nr++] = (struct kt_sym){ info->dlpi_addr + sym[i].st_value,
						    sym[i].st_size, str + sym[i].st_name };
	}
	if (t->nr > before)
		return 0;
unmap:
	munmap(map, st.st_size);
	return 0;
}

__attribute__((visibility("default"))) KT_NOTRACE
int ktrace_user_stack_symbols(void)
{
	struct kt_symtab *t = calloc(1, sizeof(*t));

	if (!t)
		return -1;
	dl_iterate_phdr(add_object, t);
	qsort(t->syms, t->nr, sizeof(*t->syms), by_start);
	__atomic_store_n(&kt_names, t, __ATOMIC_RELEASE);	/* an older table stays */
	return t->nr > INT_MAX ? INT_MAX : (int)t->nr;
}

/* The name of the function at @addr, or NULL. */
static KT_NOTRACE const char *name_of(uintptr_t addr)
{
	const struct kt_symtab *t = __atomic_load_n(&kt_names, __ATOMIC_ACQUIRE);
	size_t lo = 0, hi;

	if (!t)
		return NULL;
	hi = t->nr;
	while (lo < hi) {		/* the first symbol starting above @addr */
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* the first of the names at that start (an alias after it) */
	while (lo && lo - 1 && t->syms[lo - 2].start == t->syms[lo - 1].start)
		lo--;
	if (!lo || addr - t->syms[lo - 1].start >= (t->syms[lo - 1].size ?: 1))
		return NULL;
	return t->syms[lo - 1].name;
}

/* Output built in a buffer on the stack, written with write() alone. */
struct line {
	int fd;
	int err;
	size_t len;
	char buf[512];
};

static KT_NOTRACE void line_flush(struct line *l)
{
	for (size_t off = 0; off < l->len && !l->err; ) {
		ssize_t n = write(l->fd, l->buf + off, l->len - off);

		if (n < 0 && errno != EINTR)
			l->err = 1;
		else if (n > 0)
			off += n;
	}
	l->len = 0;
}

static KT_NOTRACE void put(struct line *l, const char *s, size_t n)
{
	while (n) {
		size_t room = sizeof(l->buf) - l->len, k = n < room ? n : room;

		memcpy(l->buf + l->len, s, k);
		l->len += k;
		s += k;
		n -= k;
		if (l->len == sizeof(l->buf))
			line_flush(l);
	}
}

static KT_NOTRACE void put_num(struct line *l, uint64_t v, unsigned int base)
{
	char d[24], *p = d + sizeof(d);

	do
		*--p = "0123456789abcdef"[v % base];
	while (v /= base);
	if (base == 16)
		put(l, "0x", 2);
	put(l, p, d + sizeof(d) - p);
}

/* Past this depth, "-(40)-" instead of 40 dashes. */
#define DASHES_MAX	32

__attribute__((visibility("default"))) KT_NOTRACE
int ktrace_user_stack_print(int fd)
{
	static const char dashes[DASHES_MAX] = "--------------------------------";
	const struct kt_stream *s = kt_self;
	struct line l = { .fd = fd };
	unsigned long depth;

	if (!s)
		return -1;
	depth = s->stack.depth;
	for (unsigned long d = 0; d < depth; d++) {
		const struct kt_frame *f = kt_frame_at(&s->stack, d);
		const char *name;
		unsigned long gap;

		if (!f) {
			for (gap = 1; d + gap < depth && !kt_frame_at(&s->stack, d + gap); gap++)
				;
			put(&l, " [", 2);
			put_num(&l, gap, 10);
			put(&l, " frames not kept]", 17);
			d += gap - 1;
			continue;
		}
		name = name_of(f->fn);
		if (d) {
			put(&l, " ", 1);
			if (d <= DASHES_MAX) {
				put(&l, dashes, d);
			} else {
				put(&l, "-(", 2);
				put_num(&l, d, 10);
				put(&l, ")-", 2);
			}
			put(&l, " ", 1);
		}
		if (name)
			put(&l, name, strlen(name));
		else
			put_num(&l, f->fn, 16);
	}
	put(&l, "\n", 1);
	line_flush(&l);
	return l.err ? -1 : depth > INT_MAX ? INT_MAX : (int)depth;
}
