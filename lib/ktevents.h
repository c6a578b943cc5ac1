/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * ktevents: the group and event table of <linux/ktrace_events.h> as data, for the
 * tools: names, lookup by event code, decoding arguments into text, and the
 * command-line syntax for group masks and number lists.
 *
 * Everything here is built from that table; no event is named anywhere
 * else.  Nothing needs an init call, and every
 * function may run on several threads at once.
 *
 * Text is written with "put" functions: each writes at p, no NUL, and
 * returns the end of what it wrote.  They may scribble up to KTEV_SLACK
 * bytes past that end (whole-block copies are faster than exact ones): the
 * caller provides the room, KTEV_NAME_MAX for a name, KTEV_TEXT_MAX for an
 * event's text, KTEV_SLACK more than the digits for a number.
 */
#ifndef KTEVENTS_H
#define KTEVENTS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <linux/ktrace.h>

#include "ktfile.h"	/* KTFILE_MAX_ARGS: the events it decodes come from there */
#include "numfmt.h"	/* the numbers of the text, KTEV_SLACK */

/* Most arguments one event can carry (a struct ktfile_event's). */
#define KTEV_MAX_ARGS	KTFILE_MAX_ARGS

/*
 * Room needed by ktev_put_name() and ktev_put_text(), slack included.  The
 * text of an event with @nr arguments is at most KTEV_TEXT_BOUND(nr)
 * bytes: 64 of literal text, 32 per argument (a number, or a name of the
 * generated tables), and KTEV_SYM_MAX for the one kernel symbol or irq
 * name a format may print (checked against every format at start).
 */
#define KTEV_SYM_MAX	256
#define KTEV_TEXT_BOUND(nr)	(64 + 32 * (nr) + KTEV_SYM_MAX)
#define KTEV_NAME_MAX	(64 + KTEV_SLACK)
#define KTEV_TEXT_MAX	(KTEV_TEXT_BOUND(KTEV_MAX_ARGS) + KTEV_SLACK)

/* Pseudo group name of meta records (no group bit): "meta:lost". */
#define KTEV_META_NAME	"meta"

/**
 * struct ktev_desc - one event of the table
 * @group:   group name, "sched"
 * @name:    subevent name, "switch"
 * @code:    event code (group bit | subevent << 24)
 * @bit:     group bit number
 * @sub:     subevent number
 * @nr_cont: CONT records the kernel writes after the event
 * @fmt:     printf-like format of the decoded text
 */
struct ktev_desc {
	const char *group;
	const char *name;
	uint32_t code;
	uint8_t bit;
	uint8_t sub;
	uint8_t nr_cont;
	const char *fmt;
};

/**
 * struct ktev_conv - one conversion of a format, as ktev_conv_parse() reads it
 * @len:     its characters, '%' included: 2 ("%u"), 4 ("%llx")
 * @nr_args: arguments it prints: 1, or 2 (a 64-bit value, low word first)
 * @raw:     how it prints as a number: 'u', 'd' or 'x'
 * @letter:  its letter: u d x, or one that decodes (S E G Q F I K T),
 *           or s: a string of the remaining arguments
 */
struct ktev_conv {
	uint8_t len;
	uint8_t nr_args;
	char raw;
	char letter;
};

/* The conversion at @s (a '%' not followed by '%'): 0, or -1 if none. */
int ktev_conv_parse(const char *s, struct ktev_conv *c);

struct ksyms;		/* ksyms.h */
struct irq_names;	/* ksyms.h */

/**
 * struct ktev_ctx - what decoding needs besides the event itself
 * @raw:   every argument as a number, as its conversion's raw form (%S as
 *         %u, %K as %llx): what the table's formats printed before they
 *         decoded anything.  A NULL context means raw too.
 * @ksyms: the kernel's symbols, for %K: NULL prints the address in hex
 * @irqs:  irq names, for %I: NULL prints the number alone
 * @put_task, @tasks, @tsc: task names, for %T (below)
 */
struct ktev_ctx {
	bool raw;
	const struct ksyms *ksyms;
	const struct irq_names *irqs;
	char *(*put_task)(const struct ktev_ctx *ctx, char *p, uint32_t tid);
	const void *tasks;
	uint64_t tsc;
};

/*
 * A task (%T) prints with @put_task, if set: "comm-tid" of the task @tid as
 * it was named at the event's time @tsc (@tasks is put_task's), at most
 * KTEV_TASK_MAX bytes; else its number.  A string (%s) is at most
 * KTEV_STRING_ARGS arguments.
 */
#define KTEV_TASK_MAX		(16 * 6 + 1 + 10)
#define KTEV_STRING_ARGS	8

/* All events of the table, in its order. */
extern const struct ktev_desc ktev_events[];
extern const unsigned int ktev_nr_events;

/* Bits of all groups of the table ("all"). */
extern const uint32_t ktev_all_groups;

/* The name of x86_64 system call @nr, "read"; NULL if it has none. */
const char *ktev_syscall_name(uint32_t nr);

/* Group bit number of @name, -1 if no such group. */
int ktev_group_bit(const char *name);

/* Name of group bit @bit, NULL if none. */
const char *ktev_group_name(unsigned int bit);

/* The event of @code (exactly one group bit, no flags), NULL if unknown. */
const struct ktev_desc *ktev_lookup(uint32_t code);

/*
 * "group:subevent" of @code: "sched:switch"; a known group with an unknown
 * subevent "sched:7"; other group bits in hex "0x300:7"; meta records
 * "meta:lost" or "meta:N".  Padded with spaces to @width.
 */
char *ktev_put_name(char *p, uint32_t code, unsigned int width);

/*
 * Decoded text of @code with its @nr_args arguments (the event's, then its
 * CONT records'): the table format, "context switch from task 12 to task 57",
 * "syscall getppid entry, arg0 0"; an argument the format wants but the
 * record lacks prints "?".  Unknown events print generically, "event
 * 0x07000001 args 0x1 0x2"; lost markers "N records lost".  @ctx: see
 * struct ktev_ctx; NULL prints numbers only.
 */
char *ktev_put_text(char *p, uint32_t code, const uint32_t *args,
		    unsigned int nr_args, const struct ktev_ctx *ctx);

/* ktev_put_name(), a space, ktev_put_text(): the event's name looked up once. */
char *ktev_put_name_text(char *p, uint32_t code, unsigned int width, const uint32_t *args,
			 unsigned int nr_args, const struct ktev_ctx *ctx);
/*
 * The same of an event of the table, @d (ktev_lookup() of its code, not
 * NULL): for a caller that looked it up before (dtrace's merge thread, for
 * its tasks), no lookup here.
 */
char *ktev_put_desc_name_text(char *p, const struct ktev_desc *d, unsigned int width,
			      const uint32_t *args, unsigned int nr_args,
			      const struct ktev_ctx *ctx);

/*
 * A lost marker's count when some records were lost and how many is not
 * known (a collector's marker for a killed sender's damaged spool).
 */
#define KTEV_LOST_UNKNOWN	UINT64_MAX

/*
 * Whether @code with its @nr_args arguments is a lost marker (meta:lost),
 * and how many records it says were lost, in *@count: arg1 | arg2 << 32.
 * A marker short of its two arguments is a bad record, not a count.
 */
static inline bool ktev_lost_count(uint32_t code, const uint32_t *args,
				   unsigned int nr_args, uint64_t *count)
{
	if (code != KTRACE_META_LOST || nr_args < 2)
		return false;
	*count = args[0] | (uint64_t)args[1] << 32;
	return true;
}

/*
 * The bytes a string argument (%s: a comm) packs into @nr_args arguments,
 * four each, low byte first, into @dst: at most @max; returns how many.
 */
size_t ktev_unpack_bytes(char *dst, size_t max, const uint32_t *args,
			 unsigned int nr_args);

/*
 * Parse a group mask: items separated by commas, each a group name, "all"
 * or a number (0x1f, 12).  An item with a leading '+' adds to the mask, '-'
 * removes from it; if the first item has neither, the mask starts at 0,
 * else at @base ("+irq,-net" changes @base).  Returns 0 and sets *mask, or
 * prints why @s is wrong (pr_err) and returns -1.
 */
int ktev_parse_mask(const char *s, uint32_t base, uint32_t *mask);

/*
 * Parse a list of numbers and ranges, "0-3,6", or "all", into the bitmap
 * @bits of @nbits bits (cleared first).  @what names the numbers in the
 * error message ("cpu").  Returns 0, or prints why and returns -1.
 */
int ktev_parse_list(const char *s, uint64_t *bits, unsigned int nbits,
		    const char *what);

static inline int ktev_bit_test(const uint64_t *bits, unsigned long nr)
{
	return (bits[nr / 64] >> (nr % 64)) & 1;
}

/* Print the groups and their events with formats (ktrace -l, dtrace -l). */
void ktev_list(FILE *f);

#endif /* KTEVENTS_H */
