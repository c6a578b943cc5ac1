// SPDX-License-Identifier: GPL-2.0
/*
 * fields: names and types of the events' arguments, made from the event
 * table's formats; the naming rules are in fields.h.
 */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "fields.h"
#include "util.h"

/* Where a conversion sits in its format: the text before and after it. */
struct span {
	const char *before, *conv, *after, *end;
};

static bool is_word(char c)
{
	return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* The first word of [s, e) (@nth < 0), or the @nth from its end (0: the last). */
static const char *find_word(const char *s, const char *e, int nth, size_t *len)
{
	const char *w;

	if (nth < 0) {
		while (s < e && !is_word(*s))
			s++;
		for (w = s; s < e && is_word(*s); s++)
			;
		*len = s - w;
		return *len ? w : NULL;
	}
	for (;;) {
		while (e > s && !is_word(e[-1]))
			e--;
		for (w = e; w > s && is_word(w[-1]); w--)
			;
		if (w == e)
			return NULL;
		if (!nth--) {
			*len = e - w;
			return w;
		}
		e = w;
	}
}

/* Append word @w to @name, '_' between words, '-' as '_'; false if it can't be. */
static bool add_word(char *name, const char *w, size_t len)
{
	size_t n = strlen(name);

	if (!w || !isalpha((unsigned char)*w) || n + len + 2 > FIELD_NAME_MAX)
		return false;
	if (n)
		name[n++] = '_';
	for (size_t i = 0; i < len; i++)
		name[n++] = w[i] == '-' ? '_' : w[i];
	name[n] = '\0';
	return true;
}

static void name_field(struct field *f, const struct span *sp, bool two_words)
{
	const char *w1, *w2;
	size_t len1, len2;

	f->name[0] = '\0';
	w1 = find_word(sp->before, sp->conv, 0, &len1);
	if (!w1) {
		w1 = find_word(sp->after, sp->end, -1, &len1);
		add_word(f->name, w1, len1);
		return;
	}
	w2 = find_word(sp->before, sp->conv, 1, &len2);
	if (two_words && w2)
		add_word(f->name, w2, len2);
	if (!add_word(f->name, w1, len1))
		f->name[0] = '\0';
}

static bool same_name(const struct fields *fs, unsigned int i)
{
	for (unsigned int j = 0; j < fs->nr; j++)
		if (j != i && !strcmp(fs->f[i].name, fs->f[j].name))
			return true;
	return false;
}

static void make_fields(struct fields *fs, const struct ktev_desc *d)
{
	struct span sp[FIELDS_MAX];
	bool dup[FIELDS_MAX];
	const char *s = d->fmt, *lit = d->fmt;
	unsigned int arg = 0;

	fs->nr_args = 2 + 2 * d->nr_cont;
	while (*s) {
		struct field *f = &fs->f[fs->nr];
		struct ktev_conv cv;
		size_t skip;

		if (*s != '%' || s[1] == '%') {
			s += *s == '%' ? 2 : 1;
			continue;
		}
		if (fs->nr == FIELDS_MAX)
			die("event table: %s:%s has too many arguments", d->group, d->name);
		if (ktev_conv_parse(s, &cv) < 0)
			die("event table: %s:%s: bad format", d->group, d->name);
		/* the raw number: %S is a U32 field, %K an X64 */
		if (cv.letter == 's')
			f->type = FIELD_STRING;
		else if (cv.nr_args == 2)
			f->type = cv.raw == 'u' ? FIELD_U64 : FIELD_X64;
		else
			f->type = cv.raw == 'u' ? FIELD_U32 : cv.raw == 'd' ? FIELD_S32 : FIELD_X32;
		skip = cv.len;
		f->arg = arg;
		/* a string is the rest of the event's arguments */
		arg = f->type == FIELD_STRING && arg < fs->nr_args ? fs->nr_args : arg + cv.nr_args;
		if (fs->nr)
			sp[fs->nr - 1].end = s;
		sp[fs->nr++] = (struct span){ lit, s, s + skip, NULL };
		s += skip;
		lit = s;
	}
	if (fs->nr)
		sp[fs->nr - 1].end = s;
	for (unsigned int i = 0; i < fs->nr; i++)
		name_field(&fs->f[i], &sp[i], false);
	for (unsigned int i = 0; i < fs->nr; i++)
		dup[i] = same_name(fs, i);
	for (unsigned int i = 0; i < fs->nr; i++)
		if (dup[i])
			name_field(&fs->f[i], &sp[i], true);
	/* what the format does not print is still the event's */
	for (; arg < fs->nr_args && fs->nr < FIELDS_MAX; arg++)
		fs->f[fs->nr++] = (struct field){ .type = FIELD_X32, .arg = arg };
	/* a format that wants more (or too many): its events export as unknown */
	if (arg != fs->nr_args)
		fs->nr_args = 0;
	for (unsigned int i = 0; i < fs->nr; i++)
		if (!fs->f[i].name[0] || same_name(fs, i))
			snprintf(fs->f[i].name, FIELD_NAME_MAX, "arg%u", fs->f[i].arg + 1);
}

struct fields *fields_table(void)
{
	struct fields *all = xcalloc(ktev_nr_events, sizeof(*all));

	for (unsigned int i = 0; i < ktev_nr_events; i++)
		make_fields(&all[i], &ktev_events[i]);
	return all;
}
