// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * ksyms: kernel symbols and irq names from the copies of /proc/kallsyms and
 * /proc/interrupts that ktrace saves beside the trace files (see ksyms.h).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "ksyms.h"
#include "numfmt.h"
#include "util.h"

/* Bounds on what a file can make us keep. */
#define KSYMS_MAX		(1u << 22)	/* a kernel with modules has ~300k text symbols */
#define KSYMS_NAMES_MAX		(64u << 20)
#define IRQS_MAX		(1u << 16)
#define LINE_MAX_BYTES		65536		/* /proc/interrupts of ~5000 CPUs */

struct ksym {
	uint64_t addr;
	uint32_t name;		/* offsets into ksyms.names */
	uint32_t module;	/* 0: none (offset 0 is an empty name) */
};

struct ksyms {
	struct ksym *syms;
	size_t nr;
	char *names;
	size_t names_len;
};

struct irq_name {
	uint32_t irq;
	uint8_t len;
	char name[IRQ_NAME_MAX];
};

struct irq_names {
	struct irq_name *irqs;
	size_t nr;
};

/* A line reader that skips, rather than splits, lines too long to be real. */
struct lines {
	const char *path;
	FILE *f;
	char *buf;
	unsigned long nr;		/* of the current line */
	unsigned long bad;		/* lines skipped as not what the kernel writes */
	unsigned long first_bad;
	const char *first_why;
};

static bool lines_open(struct lines *l, const char *path)
{
	int fd = kt_open_regular(path);

	*l = (struct lines){ .path = path };
	if (fd < 0) {
		pr_warn("%s: %s", path, fd == -EINVAL ? "not a regular file" : strerror(-fd));
		return false;
	}
	l->f = fdopen(fd, "r");
	if (!l->f) {
		close(fd);
		pr_warn("%s: %s", path, strerror(errno));
		return false;
	}
	l->buf = xmalloc(LINE_MAX_BYTES);
	return true;
}

static void bad_line(struct lines *l, const char *why)
{
	if (!l->bad++) {
		l->first_bad = l->nr;
		l->first_why = why;
	}
}

/*
 * The next line, without its newline; NULL at the end.  A line too long to
 * be the kernel's, or with a NUL byte, is skipped.
 */
static char *next_line(struct lines *l)
{
	for (;;) {
		size_t len = 0;
		bool nul = false;
		int c;

		while ((c = getc_unlocked(l->f)) != EOF && c != '\n') {
			if (len < LINE_MAX_BYTES - 1)
				l->buf[len] = c;
			nul |= !c;
			len++;
		}
		if (c == EOF && !len)
			return NULL;
		l->nr++;
		if (len < LINE_MAX_BYTES && !nul) {
			l->buf[len] = '\0';
			return l->buf;
		}
		bad_line(l, nul ? "NUL byte in line" : "line too long");
	}
}

/* Say what was skipped; false if the file could not be read to its end. */
static bool lines_close(struct lines *l)
{
	bool failed = ferror(l->f);

	if (failed)
		pr_warn("%s: read error after line %lu", l->path, l->nr);
	if (l->bad)
		pr_warn("%s:%lu: %s; %lu such line%s skipped", l->path, l->first_bad,
			l->first_why, l->bad, l->bad == 1 ? "" : "s");
	fclose(l->f);
	free(l->buf);
	return !failed;
}

static bool is_name_char(char c)
{
	return c > ' ' && c < 0x7f;
}

/* Append @len bytes of @s and a NUL to the names; its offset, 0 if full. */
static uint32_t add_name(struct ksyms *ks, size_t *cap, const char *s, size_t len)
{
	size_t off = ks->names_len;

	if (off + len + 1 > KSYMS_NAMES_MAX)
		return 0;
	if (off + len + 1 > *cap) {
		*cap = *cap * 2 + len + 1;
		if (*cap > KSYMS_NAMES_MAX)
			*cap = KSYMS_NAMES_MAX;
		ks->names = xrealloc(ks->names, *cap);
	}
	memcpy(ks->names + off, s, len);
	ks->names[off + len] = '\0';
	ks->names_len = off + len + 1;
	return off;
}

/*
 * "ffffffff81000000 T _stext" or "ffffffffc0a01000 t foo_init\t[foo]":
 * false for anything else.  Names longer than we keep are cut.
 */
static bool parse_kallsyms_line(char *s, uint64_t *addr, char *type, char **name,
				size_t *name_len, char **module, size_t *module_len)
{
	char *end;

	if (!isxdigit((unsigned char)*s))
		return false;
	errno = 0;
	*addr = strtoull(s, &end, 16);
	if (errno || end - s > 16 || *end != ' ')
		return false;
	s = end + 1;
	*type = *s;
	if (!isalpha((unsigned char)*s) || s[1] != ' ')
		return false;
	s += 2;
	*name = s;
	while (is_name_char(*s))
		s++;
	*name_len = s - *name;
	if (!*name_len || *name_len > 1024)
		return false;
	*module = NULL;
	*module_len = 0;
	while (*s == ' ' || *s == '\t')
		s++;
	if (*s == '[') {
		*module = ++s;
		while (is_name_char(*s) && *s != ']')
			s++;
		*module_len = s - *module;
		if (*s++ != ']' || !*module_len)
			return false;
	}
	if (*name_len > KSYMS_NAME_MAX)
		*name_len = KSYMS_NAME_MAX;
	if (*module_len > KSYMS_MODULE_MAX)
		*module_len = KSYMS_MODULE_MAX;
	return !*s;
}

static int cmp_ksym(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	/* equal addresses: the earlier line first (its name is the one kept) */
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

struct ksyms *ksyms_load(const char *path)
{
	struct ksyms *ks = xcalloc(1, sizeof(*ks));
	size_t cap = 0, names_cap = 0, kept;
	bool full = false;
	struct lines l;
	char *s;

	if (!lines_open(&l, path)) {
		free(ks);
		return NULL;
	}
	add_name(ks, &names_cap, "", 0);		/* offset 0: no module */
	while ((s = next_line(&l))) {
		char type, *name, *module;
		size_t name_len, module_len;
		uint64_t addr;
		struct ksym *k;

		if (!parse_kallsyms_line(s, &addr, &type, &name, &name_len, &module,
					 &module_len)) {
			bad_line(&l, "not a kallsyms line (ADDRESS TYPE NAME [MODULE])");
			continue;
		}
		if (!strchr("tTwW", type) || !addr)
			continue;
		if (full)
			continue;
		if (ks->nr == KSYMS_MAX) {
			pr_warn("%s:%lu: more than %u text symbols: the rest left out", path,
				l.nr, KSYMS_MAX);
			full = true;
			continue;
		}
		if (ks->nr == cap) {
			cap = cap ? 2 * cap : 4096;
			ks->syms = xrealloc(ks->syms, cap * sizeof(*ks->syms));
		}
		k = &ks->syms[ks->nr];
		k->addr = addr;
		k->name = add_name(ks, &names_cap, name, name_len);
		k->module = module ? add_name(ks, &names_cap, module, module_len) : 0;
		if (!k->name || (module && !k->module)) {
			pr_warn("%s:%lu: more than %u MiB of names: the rest left out", path,
				l.nr, KSYMS_NAMES_MAX >> 20);
			full = true;
			continue;
		}
		ks->nr++;
	}
	lines_close(&l);
	if (!ks->nr) {
		pr_warn("%s: no text symbols: kernel addresses print in hex", path);
		ksyms_free(ks);
		return NULL;
	}
	qsort(ks->syms, ks->nr, sizeof(*ks->syms), cmp_ksym);
	kept = 1;
	for (size_t i = 1; i < ks->nr; i++)
		if (ks->syms[i].addr != ks->syms[kept - 1].addr)
			ks->syms[kept++] = ks->syms[i];
	ks->nr = kept;
	return ks;
}

void ksyms_free(struct ksyms *ks)
{
	if (!ks)
		return;
	free(ks->syms);
	free(ks->names);
	free(ks);
}

size_t ksyms_count(const struct ksyms *ks)
{
	return ks ? ks->nr : 0;
}

char *ksyms_put(char *p, const struct ksyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->nr;
	const struct ksym *k;
	const char *s;
	size_t len;

	/* the last symbol at or below addr */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	k = &ks->syms[lo - 1];
	if (addr - k->addr > KSYMS_MAX_OFFSET)
		return NULL;
	s = ks->names + k->name;
	len = strlen(s);
	memcpy(p, s, len);
	p += len;
	memcpy(p, "+0x", 3);
	p = ktev_put_hex(p + 3, addr - k->addr);
	if (k->module) {
		s = ks->names + k->module;
		len = strlen(s);
		memcpy(p, " [", 2);
		memcpy(p + 2, s, len);
		p[2 + len] = ']';
		p += 3 + len;
	}
	return p;
}

/* ---- irq names ------------------------------------------------------------ */

static int cmp_irq(const void *a, const void *b)
{
	const struct irq_name *x = a, *y = b;

	return x->irq < y->irq ? -1 : x->irq > y->irq;
}

/*
 * The handlers' names of one line: after the counts come the chip's name,
 * "HWIRQ-FLOW" ("9-fasteoi", "-edge" without a domain) and the names, ", "
 * between them.  False if the line has no such part (an irq without
 * handlers, or not the kernel's format).
 */
static bool irq_line_names(char *s, unsigned int nr_cpus, char **names)
{
	char *tok;

	for (unsigned int i = 0; i < nr_cpus; i++) {
		s += strspn(s, " \t");
		if (!isdigit((unsigned char)*s))
			return false;
		s += strspn(s, "0123456789");
	}
	s += strspn(s, " \t");
	s += strcspn(s, " \t");			/* the chip */
	for (;;) {
		s += strspn(s, " \t");
		if (!*s)
			return false;
		tok = s;
		s += strcspn(s, " \t");
		if (memchr(tok, '-', s - tok) && isdigit((unsigned char)*tok) + (*tok == '-'))
			break;
	}
	s += strspn(s, " \t");
	if (!*s)
		return false;
	*names = s;
	return true;
}

struct irq_names *irq_names_load(const char *path)
{
	struct irq_names *in = xcalloc(1, sizeof(*in));
	unsigned int nr_cpus = 0;
	size_t cap = 0;
	bool full = false;
	struct lines l;
	char *s;

	if (!lines_open(&l, path)) {
		free(in);
		return NULL;
	}
	while ((s = next_line(&l))) {
		unsigned long irq;
		struct irq_name *n;
		char *end, *names;
		size_t len;

		if (l.nr == 1) {	/* "           CPU0       CPU1" */
			for (char *t = strstr(s, "CPU"); t; t = strstr(t + 3, "CPU"))
				nr_cpus++;
			if (!nr_cpus)
				bad_line(&l, "not the CPU header of /proc/interrupts");
			continue;
		}
		s += strspn(s, " ");
		if (!isdigit((unsigned char)*s))
			continue;		/* NMI:, LOC: and the like */
		errno = 0;
		irq = strtoul(s, &end, 10);
		if (errno || *end != ':' || irq > UINT32_MAX) {
			bad_line(&l, "not an irq line of /proc/interrupts");
			continue;
		}
		if (!nr_cpus || !irq_line_names(end + 1, nr_cpus, &names) || full)
			continue;
		if (in->nr == IRQS_MAX) {
			pr_warn("%s:%lu: more than %u irqs: the rest left out", path, l.nr,
				IRQS_MAX);
			full = true;
			continue;
		}
		if (in->nr == cap) {
			cap = cap ? 2 * cap : 64;
			in->irqs = xrealloc(in->irqs, cap * sizeof(*in->irqs));
		}
		n = &in->irqs[in->nr++];
		n->irq = irq;
		len = strlen(names);
		while (len && names[len - 1] == ' ')
			len--;
		if (len > IRQ_NAME_MAX)
			len = IRQ_NAME_MAX;
		for (size_t i = 0; i < len; i++)
			n->name[i] = names[i] >= ' ' && names[i] < 0x7f ? names[i] : '?';
		n->len = len;
	}
	lines_close(&l);
	if (!in->nr) {
		pr_warn("%s: no irq names: irqs print as numbers", path);
		irq_names_free(in);
		return NULL;
	}
	qsort(in->irqs, in->nr, sizeof(*in->irqs), cmp_irq);
	return in;
}

void irq_names_free(struct irq_names *in)
{
	if (!in)
		return;
	free(in->irqs);
	free(in);
}

size_t irq_names_count(const struct irq_names *in)
{
	return in ? in->nr : 0;
}

char *irq_names_put(char *p, const struct irq_names *in, uint32_t irq)
{
	struct irq_name key = { .irq = irq };
	const struct irq_name *n = bsearch(&key, in->irqs, in->nr, sizeof(*in->irqs), cmp_irq);

	if (!n)
		return p;
	memcpy(p, " (", 2);
	memcpy(p + 2, n->name, n->len);
	p[2 + n->len] = ')';
	return p + 3 + n->len;
}
