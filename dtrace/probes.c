// SPDX-License-Identifier: GPL-2.0
/*
 * probes: BASE.probes read as hostile input, and a probe hit's values
 * decoded and printed; the format of the file and of a hit is in probes.h.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "ktevents.h"
#include "probes.h"
#include "util.h"

#define LINE_MAX_BYTES	4096	/* a longer line is not ktrace's */
#define FIELDS_MAX	7	/* of a probe line */
#define SHOWN_NAME_MAX	200	/* of a name escaped: longer ones are cut */
#define SHOWN_VALUE_MAX	128	/* of a value's name escaped */

static const struct { char name[4]; uint8_t type; } type_prefixes[] = {
	{ "u", PROBE_UNSIGNED }, { "s", PROBE_SIGNED }, { "x", PROBE_HEX },
};

struct probes_file {
	const char *path;
	unsigned long line;
	bool warned;		/* of a line of an unknown kind */
};

static __attribute__((noreturn, format(printf, 2, 3)))
void bad_line(const struct probes_file *pf, const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	die("%s:%lu: %s", pf->path, pf->line, msg);
}

/* A decimal number in [min, max], all of @s. */
static unsigned long parse_number(const struct probes_file *pf, const char *s,
				  unsigned long min, unsigned long max, const char *what)
{
	unsigned long v = 0;
	const char *p = s;

	for (; *p >= '0' && *p <= '9' && v <= max; p++)
		v = v * 10 + (*p - '0');
	if (p == s || *p || v < min || v > max)
		bad_line(pf, "bad %s '%.32s': a number %lu..%lu", what, s, min, max);
	return v;
}

/* "u8".."s64", "x8".."x64", "strN" (N 1..KTRACE_PROBE_MAX_STR). */
static void parse_type(const struct probes_file *pf, const char *s, struct probe_value *v)
{
	if (!strncmp(s, "str", 3)) {
		v->type = PROBE_STR;
		v->size = parse_number(pf, s + 3, 1, KTRACE_PROBE_MAX_STR, "string size");
		v->words = (v->size + 3) / 4;
		return;
	}
	for (unsigned int i = 0; i < ARRAY_SIZE(type_prefixes); i++) {
		if (s[0] != type_prefixes[i].name[0])
			continue;
		if (!strcmp(s + 1, "8") || !strcmp(s + 1, "16") || !strcmp(s + 1, "32") ||
		    !strcmp(s + 1, "64")) {
			v->type = type_prefixes[i].type;
			v->size = atoi(s + 1) / 8;
			v->words = v->size == 8 ? 2 : 1;
			return;
		}
	}
	bad_line(pf, "bad value type '%.32s' (u8..u64, s8..s64, x8..x64, strN)", s);
}

/* A name: not empty, bounded, no control characters (they are not ktrace's). */
static char *parse_name(const struct probes_file *pf, const char *s, size_t max,
			const char *what)
{
	size_t len = strlen(s);

	if (!len || len > max)
		bad_line(pf, "%s name of %zu bytes: 1..%zu", what, len, max);
	for (size_t i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			bad_line(pf, "%s name with a control character", what);
	return xstrdup(s);
}

/* Split @line at TABs into at most @max fields, the last one taking the rest. */
static unsigned int split(char *line, char **f, unsigned int max)
{
	unsigned int n = 0;

	f[n++] = line;
	while (n < max && (line = strchr(line, '\t'))) {
		*line++ = '\0';
		f[n++] = line;
	}
	return n;
}

static void parse_probe(struct probes *ps, struct probes_file *pf, char **f, unsigned int n)
{
	struct probe *pr;
	unsigned int id;
	size_t len;

	if (n != 7 || strchr(f[6], '\t'))
		bad_line(pf, "a probe line has 7 fields: probe ID KIND BUILD_ID OFFSET BINARY NAME");
	id = parse_number(pf, f[1], 1, KTRACE_PROBE_MAX_ID, "probe id");
	if (ps->by_id[id])
		bad_line(pf, "probe %u defined twice", id);
	if (strcmp(f[2], "entry") && strcmp(f[2], "return"))
		bad_line(pf, "bad probe kind '%.32s' (entry, return)", f[2]);
	len = strlen(f[3]);
	if (strcmp(f[3], "-") && (!len || len > 128 || len % 2 ||
				  strspn(f[3], "0123456789abcdef") != len))
		bad_line(pf, "bad build id '%.32s': lowercase hex, or -", f[3]);
	if (strncmp(f[4], "0x", 2) || !f[4][2] || strlen(f[4]) > 18 ||
	    strspn(f[4] + 2, "0123456789abcdef") != strlen(f[4] + 2))
		bad_line(pf, "bad offset '%.32s': 0x and lowercase hex", f[4]);
	if (!f[5][0])
		bad_line(pf, "probe %u has no binary", id);
	pr = xcalloc(1, sizeof(*pr));
	pr->id = id;
	pr->ret = !strcmp(f[2], "return");
	pr->name = parse_name(pf, f[6], PROBE_NAME_MAX, "probe");
	/* "probe:" + the name escaped, cut to fit a line's bound + "%return" */
	pr->shown = xmalloc(6 + SHOWN_NAME_MAX + 8);
	strcpy(kt_escape(stpcpy(pr->shown, "probe:"), SHOWN_NAME_MAX, pr->name, SIZE_MAX,
			 KT_ESC_TEXT), pr->ret ? "%return" : "");
	ps->by_id[id] = pr;
}

static void parse_value(struct probes *ps, struct probes_file *pf, char **f, unsigned int n)
{
	struct probe_value *v;
	struct probe *pr;
	unsigned int id, idx, words = 0;

	if (n != 5 || strchr(f[4], '\t'))
		bad_line(pf, "a value line has 5 fields: value ID INDEX TYPE NAME");
	id = parse_number(pf, f[1], 1, KTRACE_PROBE_MAX_ID, "probe id");
	pr = ps->by_id[id];
	if (!pr)
		bad_line(pf, "value of probe %u before its probe line", id);
	idx = parse_number(pf, f[2], 0, KTRACE_PROBE_MAX_VALUES - 1, "value index");
	if (idx != pr->nr_values)
		bad_line(pf, "value %u of probe %u out of order (expected %u)", idx, id,
			 pr->nr_values);
	v = &pr->values[idx];
	parse_type(pf, f[3], v);
	if (idx)
		words = pr->values[idx - 1].word + pr->values[idx - 1].words;
	if (words + v->words > KTRACE_PROBE_MAX_WORDS)
		bad_line(pf, "probe %u's values take more than %u words", id,
			 KTRACE_PROBE_MAX_WORDS);
	v->word = words;
	v->name = parse_name(pf, f[4], PROBE_VALUE_NAME_MAX, "value");
	for (unsigned int i = 0; i < idx; i++)
		if (!strcmp(pr->values[i].name, v->name))
			bad_line(pf, "probe %u has two values named '%s'", id, v->name);
	v->shown = xmalloc(SHOWN_VALUE_MAX + 1);
	*kt_escape(v->shown, SHOWN_VALUE_MAX, v->name, SIZE_MAX, KT_ESC_TEXT) = '\0';
	pr->nr_values++;
}

struct probes *probes_load(const char *path)
{
	struct probes_file pf = { .path = path };
	struct probes *ps;
	char *line = NULL, *f[FIELDS_MAX];
	size_t size = 0;
	ssize_t len;
	FILE *file = fopen(path, "re");

	if (!file)
		die("%s: %s", path, strerror(errno));
	ps = xcalloc(1, sizeof(*ps));
	while ((len = getline(&line, &size, file)) > 0) {
		unsigned int n;

		pf.line++;
		if (len > LINE_MAX_BYTES)
			bad_line(&pf, "line of %zd bytes: ktrace writes at most %d", len,
				 LINE_MAX_BYTES);
		if (line[len - 1] == '\n')
			line[--len] = '\0';
		if (memchr(line, '\0', len))
			bad_line(&pf, "a NUL byte: not a text file");
		if (line[0] == '#' || !line[0])
			continue;
		n = split(line, f, FIELDS_MAX);
		if (!strcmp(f[0], "probe")) {
			parse_probe(ps, &pf, f, n);
		} else if (!strcmp(f[0], "value")) {
			parse_value(ps, &pf, f, n);
		} else if (!pf.warned) {
			pr_warn("%s:%lu: a line of an unknown kind '%.32s', skipped (and any "
				"more such lines)", path, pf.line, f[0]);
			pf.warned = true;
		}
	}
	if (ferror(file))
		die("%s: read error", path);
	fclose(file);
	free(line);
	return ps;
}

void probes_free(struct probes *ps)
{
	if (!ps)
		return;
	for (unsigned int id = 0; id <= KTRACE_PROBE_MAX_ID; id++) {
		struct probe *pr = ps->by_id[id];

		if (!pr)
			continue;
		for (unsigned int i = 0; i < pr->nr_values; i++) {
			free(pr->values[i].name);
			free(pr->values[i].shown);
		}
		free(pr->name);
		free(pr->shown);
		free(pr);
	}
	free(ps);
}

/* Whether @ev has all the words of value @v (arg1 is the mask, words from arg2). */
static bool has_words(const struct ktfile_event *ev, const struct probe_value *v)
{
	return 1u + v->word + v->words <= ev->nr_args;
}

uint32_t probe_missing(const struct probe *pr, const struct ktfile_event *ev)
{
	uint32_t missing = ev->args[0];

	for (unsigned int i = 0; i < pr->nr_values; i++)
		if (!has_words(ev, &pr->values[i]))
			missing |= 1u << i;
	return missing & ((1u << pr->nr_values) - 1);
}

bool probe_value(const struct probe *pr, const struct ktfile_event *ev, unsigned int i,
		 uint64_t *v, char *str)
{
	const struct probe_value *pv = &pr->values[i];
	const uint32_t *w = &ev->args[1 + pv->word];
	unsigned int bits = pv->size * 8;

	if ((ev->args[0] >> i & 1) || !has_words(ev, pv))
		return false;
	if (pv->type == PROBE_STR) {
		size_t n = ktev_unpack_bytes(str, pv->size, w, pv->words);

		*v = strnlen(str, n);
		return true;
	}
	*v = pv->size == 8 ? w[0] | (uint64_t)w[1] << 32 : w[0];
	/* the size the file gives, whatever the kernel left above it */
	if (bits < 64) {
		*v &= (1ull << bits) - 1;
		if (pv->type == PROBE_SIGNED && (*v >> (bits - 1) & 1))
			*v |= ~0ull << bits;
	}
	return true;
}

char *probes_put_name(const struct probes *ps, char *p, uint32_t code, unsigned int width)
{
	const struct probe *pr = probes_get(ps, code);
	char *start = p;

	if (!pr)
		return ktev_put_name(p, code, width);
	p = stpcpy(p, pr->shown);
	return ktev_put_pad(p, p - start, width);
}

/* Room a value may need besides its name: a number, or the quotes and " ...". */
#define NUMBER_ROOM	(24 + KTEV_SLACK)

char *probes_put_text(const struct probes *ps, char *p, const struct ktfile_event *ev,
		      size_t room)
{
	const struct probe *pr = probes_get(ps, ev->code);
	char *end = p + room;

	/* the record as it is, as any event the table lacks: "event CODE args ..." */
	if (!pr)
		return ktev_put_text(p, ev->code, ev->args, ev->nr_args, NULL);
	for (unsigned int i = 0; i < pr->nr_values; i++) {
		const struct probe_value *pv = &pr->values[i];
		size_t name_len = strlen(pv->shown);
		char str[KTRACE_PROBE_MAX_STR + 4];
		uint64_t v;

		/* room for it and for a " ..." after: what does not fit is cut */
		if ((size_t)(end - p) < name_len + 5 + NUMBER_ROOM) {
			p = stpcpy(p, i ? " ..." : "...");
			break;
		}
		if (i)
			*p++ = ' ';
		p = memcpy(p, pv->shown, name_len) + name_len;
		*p++ = '=';
		if (!probe_value(pr, ev, i, &v, str)) {
			*p++ = '?';
		} else if (pv->type == PROBE_STR) {
			/* quoted: a quote or backslash in it is escaped */
			*p++ = '"';
			p = kt_escape(p, end - p - 8, str, v, KT_ESC_QUOTED);
			*p++ = '"';
		} else if (pv->type == PROBE_HEX) {
			p = ktev_put_hex(stpcpy(p, "0x"), v);
		} else if (pv->type == PROBE_SIGNED && (int64_t)v < 0) {
			*p++ = '-';
			p = ktev_put_u64(p, -v);
		} else {
			p = ktev_put_u64(p, v);
		}
	}
	return p;
}

char *probes_put_event(const struct probes *ps, char *p, const struct ktfile_event *ev,
		       unsigned int width)
{
	char *start = p;

	p = probes_put_name(ps, p, ev->code, width);
	*p++ = ' ';
	return probes_put_text(ps, p, ev, PROBE_TEXT_MAX - (p - start));
}

bool probe_matches(const struct probe *pr, const char *name)
{
	size_t len = strlen(pr->name);
	const char *last = pr->name, *s;
	bool ret = false;

	/* "NAME%return" is the return probe of NAME */
	s = strstr(name, "%return");
	if (s && !s[7]) {
		ret = true;
	} else {
		s = name + strlen(name);
	}
	if (ret != pr->ret)
		return false;
	for (const char *c = pr->name; (c = strstr(c, "::")); c += 2)
		last = c + 2;
	return ((size_t)(s - name) == len && !strncmp(name, pr->name, len)) ||
	       ((size_t)(s - name) == strlen(last) && !strncmp(name, last, s - name));
}
