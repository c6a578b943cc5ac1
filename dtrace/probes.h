/* SPDX-License-Identifier: GPL-2.0 */
/*
 * probes: what ktrace saved of its uprobes (BASE.probes, beside the trace
 * files; Documentation/trace/ktrace-probes.rst) and the decoding of their
 * hits, KTRACE_CODE(KTRACE_GRP_probe, id) records: arg1 the missing mask,
 * the value words from arg2 on (include/uapi/linux/ktrace.h).
 *
 * A hit prints as "probe:NAME f1=V1 f2=V2" ("probe:NAME%return" for a
 * return probe), a value that could not be fetched, or whose CONT record
 * was lost, as "f=?", a string quoted and escaped; without a definition
 * (no BASE.probes, an id it lacks, --raw) as "probe:ID" and the record's
 * words as any event the event table lacks: "event CODE args MASK W0 W1".
 * The table is read-only once loaded: the formats' threads share it.
 */
#ifndef DTRACE_PROBES_H
#define DTRACE_PROBES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/ktrace.h>

#include "ktfile.h"

#define PROBE_NAME_MAX		256	/* bytes of a probe's name in the file */
#define PROBE_VALUE_NAME_MAX	64	/* bytes of a value's name */

enum probe_type {
	PROBE_UNSIGNED,		/* u8 .. u64 */
	PROBE_SIGNED,		/* s8 .. s64 */
	PROBE_HEX,		/* x8 .. x64: pointers, flags */
	PROBE_STR,		/* strN: up to N bytes, NUL-padded */
};

struct probe_value {
	char *name;		/* as the file says it */
	char *shown;		/* escaped for the text views */
	uint8_t type;		/* enum probe_type */
	uint8_t size;		/* bytes: 1, 2, 4, 8, or a string's most */
	uint8_t word;		/* its first word among the hit's value words */
	uint8_t words;
};

struct probe {
	unsigned int id;
	bool ret;		/* a return probe: "NAME%return" */
	char *name;		/* as the file says it (what --latency matches) */
	char *shown;		/* "probe:NAME[%return]", escaped for the text views */
	unsigned int nr_values;
	struct probe_value values[KTRACE_PROBE_MAX_VALUES];
};

struct probes {
	struct probe *by_id[KTRACE_PROBE_MAX_ID + 1];
};

/*
 * Read @path; dies on what cannot be decoded safely (a bad id, type,
 * index, a name too long), naming the file and line; a line of an
 * unknown kind is skipped, with one warning.
 */
struct probes *probes_load(const char *path);
void probes_free(struct probes *ps);

/* The probe of event code @code, NULL if not a probe hit or not defined. */
static inline const struct probe *probes_get(const struct probes *ps, uint32_t code)
{
	if (!ps || (code & KTRACE_GROUP_MASK) != KTRACE_GRP_probe)
		return NULL;
	return ps->by_id[KTRACE_SUB(code)];
}

/*
 * Value @i of hit @ev: false when missing (the mask says so, or the record
 * is short of its words: CONT records lost).  A number in *@v (sign-extended
 * for a signed one); a string's bytes in @str (PROBE_STR: at most the
 * value's size, up to its first NUL), their count in *@v.
 */
bool probe_value(const struct probe *pr, const struct ktfile_event *ev, unsigned int i,
		 uint64_t *v, char *str);

/* The missing mask of @ev, the values it is short of included. */
uint32_t probe_missing(const struct probe *pr, const struct ktfile_event *ev);

/*
 * "probe:NAME" of @code padded to @width, "probe:ID" if @ps lacks it;
 * its text, "f1=V1 f2=V2" or the record's words.  Together at most
 * PROBE_TEXT_MAX bytes whatever the hit's records, a lost CONT record's
 * too: a name shown is at most 213 bytes, a value's 128, and the values
 * are 32 words: 16 x (130 + 21) and 512 for strings escaped (4 bytes a
 * byte at most) come to 3174 (values that would not fit are "...").
 */
#define PROBE_TEXT_MAX		4096
char *probes_put_name(const struct probes *ps, char *p, uint32_t code, unsigned int width);
char *probes_put_text(const struct probes *ps, char *p, const struct ktfile_event *ev,
		      size_t room);
char *probes_put_event(const struct probes *ps, char *p, const struct ktfile_event *ev,
		       unsigned int width);

/* Names --latency matches: "NAME", "NAME%return", the part after the last "::". */
bool probe_matches(const struct probe *pr, const char *name);

#endif /* DTRACE_PROBES_H */
