/* SPDX-License-Identifier: GPL-2.0 */
/*
 * fields: an event's arguments as named, typed values, for the formats that
 * hand events to other tools (ctf.c, perfetto.c).
 *
 * The names come from the event table's formats, so no second table has to
 * be kept in step with it.  A conversion is named by the last word before
 * it ("irq %u entry, vector %u": irq, vector), or by the first word after it
 * when there is none ("dev %x, %u bytes": dev, bytes); conversions that
 * would get the same name take the word before too ("from task %u to task
 * %u": from_task, to_task).  A %s is one string field: the bytes of the
 * remaining arguments.  Arguments the format does not print become
 * hex fields argN; a name that cannot be made is argN too (N from 1).
 */
#ifndef DTRACE_FIELDS_H
#define DTRACE_FIELDS_H

#include <stdint.h>
#include <string.h>

#include "ktevents.h"

#define FIELDS_MAX	16
#define FIELD_NAME_MAX	32

enum field_type {
	FIELD_U32,	/* %u, and %S %G %Q %I: the numbers, not the names */
	FIELD_S32,	/* %d, %E */
	FIELD_X32,	/* %x, %F, and arguments the format leaves out */
	FIELD_U64,	/* %llu: two arguments, low word first */
	FIELD_X64,	/* %llx, %K */
	FIELD_STRING,	/* %s: the remaining arguments, NUL-padded bytes */
};

struct field {
	char name[FIELD_NAME_MAX];	/* an identifier: letters, digits, '_' */
	uint8_t type;			/* enum field_type */
	uint8_t arg;			/* index of its (first) argument */
};

/* The bytes of a FIELD_STRING field of an event with @nr_args arguments. */
static inline size_t field_string(const struct field *f, const uint32_t *args,
				  unsigned int nr_args, const char **s)
{
	*s = (const char *)&args[f->arg];
	return strnlen(*s, 4 * (nr_args - f->arg));
}

/**
 * struct fields - the fields of one event of the table
 * @nr_args: arguments such an event has: 2 + 2 * nr_cont; an event with
 *           another number is exported as an unknown one (all are, when
 *           the format and nr_cont disagree: then it is 0)
 */
struct fields {
	unsigned int nr;
	unsigned int nr_args;
	struct field f[FIELDS_MAX];
};

/* The fields of every entry of the event table, by index; free() it. */
struct fields *fields_table(void);

/* The fields of table entry @d, in @table from fields_table(). */
static inline const struct fields *fields_of(const struct fields *table,
					     const struct ktev_desc *d)
{
	return &table[d - ktev_events];
}

static inline uint64_t field_value(const struct field *f, const uint32_t *args)
{
	uint64_t v = args[f->arg];

	if (f->type == FIELD_U64 || f->type == FIELD_X64)
		v |= (uint64_t)args[f->arg + 1] << 32;
	else if (f->type == FIELD_S32)
		v = (uint64_t)(int64_t)(int32_t)v;
	return v;
}

#endif /* DTRACE_FIELDS_H */
