// SPDX-License-Identifier: GPL-2.0
/*
 * ktevents: names, lookup and decoding of ktrace events, from the table in
 * <linux/ktrace_events.h>.
 *
 * dtrace formats tens of millions of events a second, so the formats are
 * split once, at load time, into literal pieces and conversions, and the
 * numbers are written by hand instead of through printf (numfmt.c).
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "ksyms.h"
#include "ktevents.h"
#include "numfmt.h"
#include "util.h"

/* <linux/ktrace_events.h> is a table, read here three ways. */
#define KTRACE_GROUP(grp)
#define KTRACE_EVENT(grp, nm, cont, f)					\
	{ .group = #grp, .name = #nm, .code = KTRACE_##grp##_##nm,	\
	  .bit = __builtin_ctz(KTRACE_GRP_##grp),				\
	  .sub = KTRACE_SUB(KTRACE_##grp##_##nm), .nr_cont = (cont), .fmt = f },
const struct ktev_desc ktev_events[] = {
#include <linux/ktrace_events.h>
};
#undef KTRACE_GROUP
#undef KTRACE_EVENT
const unsigned int ktev_nr_events = ARRAY_SIZE(ktev_events);

#define KTRACE_GROUP(grp)	[__builtin_ctz(KTRACE_GRP_##grp)] = #grp,
#define KTRACE_EVENT(grp, nm, cont, f)
static const char *const group_names[KTRACE_NR_GROUPS] = {
#include <linux/ktrace_events.h>
};
#undef KTRACE_GROUP

#define KTRACE_GROUP(grp)	| KTRACE_GRP_##grp
const uint32_t ktev_all_groups = 0
#include <linux/ktrace_events.h>
;
#undef KTRACE_GROUP
#undef KTRACE_EVENT

/*
 * A format split into pieces: a literal, then a conversion.  Literals and
 * names sit in fixed slots padded with spaces, so they are copied whole with
 * one constant-size copy (the bytes past the end get overwritten next; the
 * caller's room, KTEV_TEXT_MAX, has the slack).
 */
enum conv {
	CONV_END, CONV_NONE, CONV_U, CONV_D, CONV_X, CONV_LLU, CONV_LLX,
	/* decoding: each prints as one of the above when raw */
	CONV_SYSCALL, CONV_ERRNO, CONV_SIGNAL, CONV_SOFTIRQ, CONV_FAULT, CONV_IRQ,
	CONV_KSYM, CONV_TASK, CONV_TASK_STATE,
	CONV_STRING,	/* the same raw or not */
};

#define SLOT		32
#define MAX_PIECES	12

struct piece {
	char lit[SLOT];
	uint8_t len;
	uint8_t conv[2];	/* the conversion, [1] when the context says raw */
	uint8_t nr_args;	/* the conversion's, raw or not */
	uint8_t arg;		/* its first argument's index */
};

struct compiled {
	struct piece piece[MAX_PIECES];
	uint8_t nr_pieces;
	uint8_t nr_args;	/* the arguments all but a %s take, a %s one more */
	uint8_t name_len;
	char name[SLOT];		/* "group:name", then spaces */
};

static const struct ktev_desc *by_code[KTRACE_NR_GROUPS][256];
static struct compiled compiled[ARRAY_SIZE(ktev_events)];

/*
 * The conversions: letters, arguments, raw form, and the most bytes each
 * prints (a name of the generated tables fits a slot; %K and %I print one
 * name of at most KTEV_SYM_MAX bytes, and a format has one of them at most).
 */
static const struct conv_kind {
	const char *spec;
	uint8_t conv, raw, nr_args;
	char raw_letter;
	uint16_t max;
} conv_kinds[] = {
	{ "%u", CONV_U, CONV_U, 1, 'u', 10 },
	{ "%d", CONV_D, CONV_D, 1, 'd', 11 },
	{ "%x", CONV_X, CONV_X, 1, 'x', 8 },
	{ "%llu", CONV_LLU, CONV_LLU, 2, 'u', 20 },
	{ "%llx", CONV_LLX, CONV_LLX, 2, 'x', 16 },
	{ "%S", CONV_SYSCALL, CONV_U, 1, 'u', SLOT },
	{ "%E", CONV_ERRNO, CONV_D, 1, 'd', SLOT + 1 },
	{ "%G", CONV_SIGNAL, CONV_U, 1, 'u', SLOT },
	{ "%Q", CONV_SOFTIRQ, CONV_U, 1, 'u', SLOT },
	{ "%F", CONV_FAULT, CONV_X, 1, 'x', SLOT },
	{ "%W", CONV_TASK_STATE, CONV_X, 1, 'x', SLOT },
	{ "%I", CONV_IRQ, CONV_U, 1, 'u', KTEV_SYM_MAX },
	{ "%K", CONV_KSYM, CONV_LLX, 2, 'x', KTEV_SYM_MAX },
	{ "%T", CONV_TASK, CONV_U, 1, 'u', KTEV_TASK_MAX },
	/* the remaining arguments, at most KTEV_STRING_ARGS */
	{ "%s", CONV_STRING, CONV_STRING, 1, 's', KT_ESC_MAX(4 * KTEV_STRING_ARGS) },
};

static const struct conv_kind *conv_kind(const char *s)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(conv_kinds); i++)
		if (!strncmp(s, conv_kinds[i].spec, strlen(conv_kinds[i].spec)))
			return &conv_kinds[i];
	return NULL;
}

int ktev_conv_parse(const char *s, struct ktev_conv *c)
{
	const struct conv_kind *k = conv_kind(s);

	if (!k)
		return -1;
	c->len = strlen(k->spec);
	c->nr_args = k->nr_args;
	c->raw = k->raw_letter;
	c->letter = k->spec[c->len - 1];
	return 0;
}

/* A format or name the table should never have is a bug: abort. */
__attribute__((noreturn)) static void bad_table(const char *what)
{
	fprintf(stderr, "ktevents: bad entry in the event table: \"%s\"\n", what);
	abort();
}

static void add_piece(struct compiled *c, const char *fmt, const char *lit,
		      size_t len, const struct conv_kind *k)
{
	for (;;) {
		size_t n = len < SLOT ? len : SLOT;
		struct piece *pc;

		if (c->nr_pieces == MAX_PIECES)
			bad_table(fmt);
		pc = &c->piece[c->nr_pieces++];
		memset(pc->lit, ' ', SLOT);
		memcpy(pc->lit, lit, n);
		pc->len = n;
		pc->conv[0] = pc->conv[1] = CONV_NONE;
		pc->nr_args = 0;
		pc->arg = c->nr_args;
		if (n == len) {
			pc->conv[0] = k ? k->conv : CONV_END;
			pc->conv[1] = k ? k->raw : CONV_END;
			pc->nr_args = k ? k->nr_args : 0;
			c->nr_args += pc->nr_args;
			return;
		}
		lit += n;
		len -= n;
	}
}

/*
 * Split @fmt into pieces, checking that what it prints for @nr_args
 * arguments stays within KTEV_TEXT_BOUND(nr_args).
 */
static void compile(struct compiled *c, const char *fmt, unsigned int nr_args)
{
	static const struct conv_kind none = { .conv = CONV_NONE, .raw = CONV_NONE };
	const char *lit = fmt, *s = fmt;
	size_t most = 0, names = 0;
	bool after_string = false;

	while (*s) {
		const struct conv_kind *k;

		if (*s != '%') {
			s++;
			continue;
		}
		if (s[1] == '%') {	/* the literal takes one '%' */
			add_piece(c, fmt, lit, s + 1 - lit, &none);
			most += s + 1 - lit;
			s += 2;
			lit = s;
			continue;
		}
		k = conv_kind(s);
		/* a %s takes the rest: put_compiled()'s first loop has it last */
		if (!k || after_string)
			bad_table(fmt);
		after_string = k->conv == CONV_STRING;
		add_piece(c, fmt, lit, s - lit, k);
		most += s - lit + k->max;
		names += k->max == KTEV_SYM_MAX;
		s += strlen(k->spec);
		lit = s;
	}
	add_piece(c, fmt, lit, s - lit, NULL);
	most += s - lit;
	if (names > 1 || most > KTEV_TEXT_BOUND(nr_args))
		bad_table(fmt);
}

__attribute__((constructor)) static void ktev_init(void)
{
	for (unsigned int i = 0; i < ARRAY_SIZE(ktev_events); i++) {
		const struct ktev_desc *d = &ktev_events[i];
		struct compiled *c = &compiled[i];
		char name[KTEV_NAME_MAX];
		size_t len = snprintf(name, sizeof(name), "%s:%s", d->group, d->name);

		if (len > SLOT)
			bad_table(name);
		by_code[d->bit][d->sub] = d;
		compile(c, d->fmt, 2 + 2 * d->nr_cont);
		memset(c->name, ' ', SLOT);
		memcpy(c->name, name, len);
		c->name_len = len;
	}
}

int ktev_group_bit(const char *name)
{
	for (unsigned int bit = 0; bit < KTRACE_NR_GROUPS; bit++)
		if (group_names[bit] && !strcmp(group_names[bit], name))
			return bit;
	return -1;
}

const char *ktev_group_name(unsigned int bit)
{
	return bit < KTRACE_NR_GROUPS ? group_names[bit] : NULL;
}

const struct ktev_desc *ktev_lookup(uint32_t code)
{
	uint32_t grp = code & KTRACE_GROUP_MASK;

	if (!grp || (grp & (grp - 1)) || (code & (KTRACE_EVT_CONT | KTRACE_EVT_END)))
		return NULL;
	return by_code[__builtin_ctz(grp)][KTRACE_SUB(code)];
}

static const char hex_digits[] = "0123456789abcdef";

static char *put_str(char *p, const char *s, size_t len)
{
	memcpy(p, s, len);
	return p + len;
}

/* ---- names and text ------------------------------------------------------- */

char *ktev_put_name(char *p, uint32_t code, unsigned int width)
{
	const struct ktev_desc *d = ktev_lookup(code);
	uint32_t grp = code & KTRACE_GROUP_MASK;
	char *start = p;

	if (d && width <= SLOT) {
		const struct compiled *c = &compiled[d - ktev_events];

		memcpy(p, c->name, SLOT);
		return p + (c->name_len > width ? c->name_len : width);
	}
	if (d) {
		p = put_str(p, d->group, strlen(d->group));
		*p++ = ':';
		p = put_str(p, d->name, strlen(d->name));
		return ktev_put_pad(p, p - start, width);
	}
	if (!grp) {
		p = put_str(p, KTEV_META_NAME, strlen(KTEV_META_NAME));
	} else if (!(grp & (grp - 1)) && group_names[__builtin_ctz(grp)]) {
		const char *g = group_names[__builtin_ctz(grp)];

		p = put_str(p, g, strlen(g));
	} else {
		p = put_str(p, "0x", 2);
		p = ktev_put_hex(p, grp);
	}
	*p++ = ':';
	if (code == KTRACE_META_LOST)
		p = put_str(p, "lost", 4);
	else
		p = ktev_put_u64(p, KTRACE_SUB(code));
	return ktev_put_pad(p, p - start, width);
}

static char *put_generic(char *p, uint32_t code, const uint32_t *args,
			 unsigned int nr_args)
{
	p = put_str(p, "event 0x", 8);
	for (int i = 7; i >= 0; i--)
		*p++ = hex_digits[(code >> (4 * i)) & 15];
	p = put_str(p, " args", 5);
	for (unsigned int i = 0; i < nr_args; i++) {
		p = put_str(p, " 0x", 3);
		p = ktev_put_hex(p, args[i]);
	}
	return p;
}

/*
 * The names of lib/names_gen.h (made from the kernel source by
 * scripts/gen-names.py), in slots like the literals: zero-padded, copied
 * whole.  A number without a name has length 0.
 */
struct name_slot {
	char s[SLOT];
	uint8_t len;
};

#define NAME_SLOT(nr, name)	[nr] = { name, sizeof(name) - 1 },
#define KTNAME_SYSCALL(nr, name)	NAME_SLOT(nr, name)
#define KTNAME_ERRNO(nr, name)
#define KTNAME_SIGNAL(nr, name)
#define KTNAME_SOFTIRQ(nr, name)
static const struct name_slot syscall_names[] = {
#include "names_gen.h"
};
#undef KTNAME_SYSCALL
#undef KTNAME_ERRNO
#define KTNAME_SYSCALL(nr, name)
#define KTNAME_ERRNO(nr, name)		NAME_SLOT(nr, name)
static const struct name_slot errno_names[] = {
#include "names_gen.h"
};
#undef KTNAME_ERRNO
#undef KTNAME_SIGNAL
#define KTNAME_ERRNO(nr, name)
#define KTNAME_SIGNAL(nr, name)		NAME_SLOT(nr, name)
static const struct name_slot signal_names[] = {
#include "names_gen.h"
};
#undef KTNAME_SIGNAL
#undef KTNAME_SOFTIRQ
#define KTNAME_SIGNAL(nr, name)
#define KTNAME_SOFTIRQ(nr, name)	NAME_SLOT(nr, name)
static const struct name_slot softirq_names[] = {
#include "names_gen.h"
};
#undef KTNAME_SYSCALL
#undef KTNAME_ERRNO
#undef KTNAME_SIGNAL
#undef KTNAME_SOFTIRQ

const char *ktev_syscall_name(uint32_t nr)
{
	return nr < ARRAY_SIZE(syscall_names) && syscall_names[nr].len ? syscall_names[nr].s : NULL;
}

/* Page fault flags (KTRACE_FAULT_*), by their two bits. */
static const struct name_slot fault_names[4] = {
	{ "kernel|read", 11 }, { "user|read", 9 }, { "kernel|write", 12 }, { "user|write", 10 },
};

/* The name of @v in @names, false if it has none. */
static inline bool put_name(char **p, const struct name_slot *names, size_t nr, uint64_t v)
{
	if (v >= nr || !names[v].len)
		return false;
	memcpy(*p, names[v].s, SLOT);
	*p += names[v].len;
	return true;
}

/* @v's name from @names, or the number where it has none */
static char *put_name_or_u64(char *p, const struct name_slot *names, size_t nr, uint64_t v)
{
	return put_name(&p, names, nr, v) ? p : ktev_put_u64(p, v);
}

static char *put_signed(char *p, int32_t v)
{
	if (v < 0)
		*p++ = '-';
	return ktev_put_u64(p, v < 0 ? -(int64_t)v : v);
}

/* A system call's return value: -4095..-1 is an error, "-ENOENT". */
static char *put_errno(char *p, int32_t v)
{
	if (v < 0 && v >= -4095) {
		char *q = p + 1;

		if (put_name(&q, errno_names, ARRAY_SIZE(errno_names), -v)) {
			*p = '-';
			return q;
		}
	}
	return put_signed(p, v);
}

static char *put_fault(char *p, uint32_t v)
{
	put_name(&p, fault_names, 4, v & (KTRACE_FAULT_USER | KTRACE_FAULT_WRITE));
	if (v & ~(KTRACE_FAULT_USER | KTRACE_FAULT_WRITE)) {	/* bits of a later kernel */
		p = put_str(p, "|0x", 3);
		p = ktev_put_hex(p, v & ~(KTRACE_FAULT_USER | KTRACE_FAULT_WRITE));
	}
	return p;
}

/*
 * A task state as sched_switch reports it: TASK_REPORT bits (as Linux
 * 4.14 and later number them), TASK_REPORT_MAX for a preempted task.
 */
static char *put_task_state(char *p, uint32_t v)
{
	static const char letters[] = "SDTtXZPI";	/* bit 0, 1, ... */
	const uint32_t report_max = 1u << (sizeof(letters) - 1);
	bool any = false;

	for (unsigned int i = 0; i < sizeof(letters) - 1; i++) {
		if (!(v & 1u << i))
			continue;
		if (any)
			*p++ = '|';
		*p++ = letters[i];
		any = true;
	}
	if (!any)
		*p++ = 'R';
	if (v & report_max)
		*p++ = '+';
	if (v & ~(report_max | (report_max - 1))) {	/* bits of a later kernel */
		p = put_str(p, "|0x", 3);
		p = ktev_put_hex(p, v & ~(report_max | (report_max - 1)));
	}
	return p;
}

/*
 * The rest of the arguments as a string, four bytes an argument in
 * little-endian order (as an x86 kernel copies a char array into them),
 * up to the first NUL; escaped, it comes from the traced machine.
 */
size_t ktev_unpack_bytes(char *dst, size_t max, const uint32_t *args,
			 unsigned int nr_args)
{
	size_t len = 0;

#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	/* the arguments' bytes in memory are the string's: one copy */
	len = 4 * (size_t)nr_args < max ? 4 * (size_t)nr_args : max;
	memcpy(dst, args, len);
	return len;
#endif
	for (; len < max && len / 4 < nr_args; len++)
		dst[len] = args[len / 4] >> (8 * (len % 4));
	return len;
}

static char *put_string(char *p, const uint32_t *args, unsigned int nr_args)
{
	char s[4 * KTEV_STRING_ARGS];
	size_t len = ktev_unpack_bytes(s, sizeof(s), args, nr_args);

	return kt_escape(p, KT_ESC_MAX(sizeof(s)), s, len, KT_ESC_TEXT);
}

/*
 * A conversion @conv of @v, the argument(s) at @args (@nr_args from there,
 * for %s).  Inlined into both of put_compiled()'s loops.
 */
static inline __attribute__((always_inline)) char *
put_conv(char *p, unsigned int conv, uint64_t v, const uint32_t *args, unsigned int nr_args,
	 const struct ktev_ctx *ctx)
{
	switch (conv) {
	case CONV_STRING:
		return put_string(p, args, nr_args);
	case CONV_TASK:
		return ctx->put_task ? ctx->put_task(ctx, p, v) : ktev_put_u64(p, v);
	case CONV_D:
		return put_signed(p, v);
	case CONV_U:
	case CONV_LLU:
		return ktev_put_u64(p, v);
	case CONV_X:
	case CONV_LLX:
		return ktev_put_hex(p, v);
	case CONV_SYSCALL:
		return put_name_or_u64(p, syscall_names, ARRAY_SIZE(syscall_names), v);
	case CONV_ERRNO:
		return put_errno(p, v);
	case CONV_SIGNAL:
		return put_name_or_u64(p, signal_names, ARRAY_SIZE(signal_names), v);
	case CONV_SOFTIRQ:
		return put_name_or_u64(p, softirq_names, ARRAY_SIZE(softirq_names), v);
	case CONV_FAULT:
		return put_fault(p, v);
	case CONV_TASK_STATE:
		return put_task_state(p, v);
	case CONV_IRQ:
		p = ktev_put_u64(p, v);
		return ctx->irqs ? irq_names_put(p, ctx->irqs, v) : p;
	case CONV_KSYM: {
		char *sym = ctx->ksyms ? ksyms_put(p, ctx->ksyms, v) : NULL;

		return sym ? sym : ktev_put_hex(p, v);
	}
	}
	return p;
}

/*
 * The text of an event of the table, by its compiled format @c.  An event
 * with the arguments its format takes (almost all) goes through the first
 * loop: each piece's arguments at the index compile() gave it, no count
 * kept or checked, the literal, the end and the conversion told apart by
 * one switch.  One with fewer prints '?' for each conversion without its
 * arguments, in the second.  Inlined into its two callers: dtrace's listing
 * saves a call a line.
 */
static inline __attribute__((always_inline)) char *
put_compiled(char *p, const struct compiled *c, const uint32_t *args, unsigned int nr_args,
	     const struct ktev_ctx *ctx)
{
	const unsigned int raw = !ctx || ctx->raw;
	unsigned int a = 0;

	if (nr_args >= c->nr_args) {
		for (const struct piece *pc = c->piece; ; pc++) {
			unsigned int conv = pc->conv[raw];
			uint64_t v;

			memcpy(p, pc->lit, SLOT);
			p += pc->len;
			if (conv == CONV_END)
				return p;
			if (conv == CONV_NONE)
				continue;
			v = args[pc->arg];
			if (pc->nr_args == 2)
				v |= (uint64_t)args[pc->arg + 1] << 32;
			p = put_conv(p, conv, v, args + pc->arg, nr_args - pc->arg, ctx);
		}
	}
	for (const struct piece *pc = c->piece; ; pc++) {
		unsigned int conv = pc->conv[raw];
		unsigned int need = pc->nr_args;
		uint64_t v;

		memcpy(p, pc->lit, SLOT);
		p += pc->len;
		if (conv == CONV_END)
			return p;
		if (conv == CONV_NONE)
			continue;
		if (a + need > nr_args) {
			*p++ = '?';
			a += need;
			continue;
		}
		v = args[a];
		if (need == 2)
			v |= (uint64_t)args[a + 1] << 32;
		p = put_conv(p, conv, v, args + a, nr_args - a, ctx);
		a += conv == CONV_STRING ? nr_args - a : need;
	}
}

char *ktev_put_text(char *p, uint32_t code, const uint32_t *args,
		    unsigned int nr_args, const struct ktev_ctx *ctx)
{
	const struct ktev_desc *d = ktev_lookup(code);
	uint64_t lost;

	if (d)
		return put_compiled(p, &compiled[d - ktev_events], args, nr_args, ctx);
	if (ktev_lost_count(code, args, nr_args, &lost)) {
		if (lost == KTEV_LOST_UNKNOWN)
			return put_str(p, "records lost, how many is not known", 35);
		p = ktev_put_u64(p, lost);
		return put_str(p, " records lost", 13);
	}
	return put_generic(p, code, args, nr_args);
}

char *ktev_put_name_text(char *p, uint32_t code, unsigned int width, const uint32_t *args,
			 unsigned int nr_args, const struct ktev_ctx *ctx)
{
	const struct ktev_desc *d = ktev_lookup(code);

	/* one lookup for both (dtrace's listing: every line) */
	if (d)
		return ktev_put_desc_name_text(p, d, width, args, nr_args, ctx);
	p = ktev_put_name(p, code, width);
	*p++ = ' ';
	return ktev_put_text(p, code, args, nr_args, ctx);
}

char *ktev_put_desc_name_text(char *p, const struct ktev_desc *d, unsigned int width,
			      const uint32_t *args, unsigned int nr_args,
			      const struct ktev_ctx *ctx)
{
	uint32_t code = d->code;

	if (width <= SLOT) {
		const struct compiled *c = &compiled[d - ktev_events];

		memcpy(p, c->name, SLOT);
		p += c->name_len > width ? c->name_len : width;
		*p++ = ' ';
		return put_compiled(p, c, args, nr_args, ctx);
	}
	p = ktev_put_name(p, code, width);
	*p++ = ' ';
	return ktev_put_text(p, code, args, nr_args, ctx);
}

/* ---- command-line syntax -------------------------------------------------- */

/* Bits of one mask item (a name, "all" or a number); -1 if it is none. */
static int64_t mask_item(const char *item)
{
	unsigned long long v;
	char *end;
	int bit;

	if (!strcmp(item, "all"))
		return ktev_all_groups;
	bit = ktev_group_bit(item);
	if (bit >= 0)
		return 1u << bit;
	if (*item < '0' || *item > '9')
		return -1;
	errno = 0;
	v = strtoull(item, &end, 0);
	if (*end || errno || v > KTRACE_GROUP_MASK)
		return -1;
	return v;
}

int ktev_parse_mask(const char *s, uint32_t base, uint32_t *mask)
{
	uint32_t m = 0;
	bool first = true;
	const char *p = s;

	do {
		size_t len = strcspn(p, ",");
		char item[32], op = 0;
		int64_t bits;

		if (*p == '+' || *p == '-') {
			op = *p++;
			len--;
		}
		if (!len || len >= sizeof(item)) {
			pr_err("bad group mask '%s': empty or overlong item", s);
			return -1;
		}
		memcpy(item, p, len);
		item[len] = '\0';
		bits = mask_item(item);
		if (bits < 0) {
			if (*item >= '0' && *item <= '9')
				pr_err("bad group mask '%s': '%s' is not a mask of bits 0-%d",
				       s, item, KTRACE_NR_GROUPS - 1);
			else
				pr_err("bad group mask '%s': no group '%s' (%s -l lists them)",
				       s, item, progname);
			return -1;
		}
		if (first)
			m = op ? base : 0;
		first = false;
		if (op == '-')
			m &= ~(uint32_t)bits;
		else
			m |= bits;
		p += len;
	} while (*p++ == ',');
	*mask = m;
	return 0;
}

static bool parse_ulong(const char **p, unsigned long *v)
{
	char *end;

	if (**p < '0' || **p > '9')
		return false;
	errno = 0;
	*v = strtoul(*p, &end, 10);
	if (errno)
		return false;
	*p = end;
	return true;
}

int ktev_parse_list(const char *s, uint64_t *bits, unsigned int nbits,
		    const char *what)
{
	const char *p = s;

	memset(bits, 0, (nbits + 63) / 64 * sizeof(*bits));
	if (!strcmp(s, "all")) {
		for (unsigned int i = 0; i < nbits; i++)
			bits[i / 64] |= 1ull << (i % 64);
		return 0;
	}
	do {
		unsigned long lo, hi;

		if (!parse_ulong(&p, &lo))
			goto bad;
		hi = lo;
		if (*p == '-') {
			p++;
			if (!parse_ulong(&p, &hi) || hi < lo)
				goto bad;
		}
		if (*p && *p != ',')
			goto bad;
		if (hi >= nbits) {
			pr_err("%s %lu out of range (0-%u)", what, hi, nbits - 1);
			return -1;
		}
		for (unsigned long i = lo; i <= hi; i++)
			bits[i / 64] |= 1ull << (i % 64);
	} while (*p++ == ',');
	return 0;
bad:
	pr_err("bad %s list '%s' (numbers and ranges: 0-3,6)", what, s);
	return -1;
}

void ktev_list(FILE *f)
{
	for (unsigned int bit = 0; bit < KTRACE_NR_GROUPS; bit++) {
		if (!group_names[bit])
			continue;
		fprintf(f, "%-10s bit %2u  mask 0x%x\n", group_names[bit], bit, 1u << bit);
		for (unsigned int i = 0; i < ARRAY_SIZE(ktev_events); i++) {
			const struct ktev_desc *d = &ktev_events[i];

			if (d->bit == bit)
				fprintf(f, "  %-10s %3u  %s\n", d->name, d->sub, d->fmt);
		}
	}
	fprintf(f, "%-10s lost markers: \"N records lost\" (always shown)\n",
		KTEV_META_NAME);
}
