// SPDX-License-Identifier: GPL-2.0
/*
 * escape: strings from trace files, escaped for text, DOT, JSON, CTF
 * metadata and XML.  One decoder of UTF-8 serves the five styles.
 */
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "escape.h"
#include "util.h"

static const char hex[] = "0123456789abcdef";

/* Bytes every style copies as they are: printable ASCII but " and \ */
static const bool plain[256] = {
	[' ' ... '!'] = true, ['#' ... '['] = true, [']' ... '~'] = true,
};

/* ... and those XML copies: not & ' < > either */
static const bool plain_xml[256] = {
	[' ' ... '!'] = true, ['#' ... '%'] = true, ['(' ... ';'] = true, ['='] = true,
	['?' ... '['] = true, [']' ... '~'] = true,
};

/*
 * The length of the valid UTF-8 sequence at @s (at most @len bytes), 0 if
 * it is not one: no overlong forms, no surrogates, nothing above U+10FFFF.
 * *cp gets the code point.
 */
static size_t utf8_seq(const unsigned char *s, size_t len, uint32_t *cp)
{
	size_t n;
	uint32_t c, min;

	if (s[0] < 0x80) {
		*cp = s[0];
		return 1;
	}
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		n = 2, c = s[0] & 0x1f, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		n = 3, c = s[0] & 0x0f, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		n = 4, c = s[0] & 0x07, min = 0x10000;
	else
		return 0;
	if (n > len)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	*cp = c;
	return n;
}

/* "\xNN" for each of @n bytes at @s, after @pre ("\\" for DOT) */
static char *put_bytes(char *p, const unsigned char *s, size_t n, const char *pre)
{
	for (size_t i = 0; i < n; i++) {
		p = stpcpy(p, pre);
		*p++ = 'x';
		*p++ = hex[s[i] >> 4];
		*p++ = hex[s[i] & 15];
	}
	return p;
}

char *kt_escape(char *p, size_t room, const char *str, size_t len, enum kt_esc how)
{
	const unsigned char *s = (const unsigned char *)str;
	const bool *copied = how == KT_ESC_XML ? plain_xml : plain;
	char *end = p + room;
	size_t i = 0;

	while (i < len && s[i]) {
		char tmp[24], *t = tmp;
		size_t run = 0;

		/* the common case, a run of printable ASCII no style changes: one copy */
		while (i + run < len && copied[s[i + run]])
			run++;
		if (run) {
			if (run > (size_t)(end - p))
				run = end - p;
			if (!run)
				break;
			memcpy(p, s + i, run);
			p += run;
			i += run;
			continue;
		}
		uint32_t cp = 0;
		size_t n = utf8_seq(s + i, len - i, &cp);
		bool control = n && (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0));

		switch (how) {
		case KT_ESC_TEXT:
		case KT_ESC_QUOTED:
		case KT_ESC_DOT: {
			const char *pre = how == KT_ESC_DOT ? "\\\\" : "\\";

			if (!n) {
				n = 1;
				t = put_bytes(t, s + i, 1, pre);
			} else if (control) {
				t = put_bytes(t, s + i, n, pre);
			} else if (cp == '\\') {
				t = stpcpy(stpcpy(t, pre), pre);
			} else if (cp == '"' && how != KT_ESC_TEXT) {
				t = stpcpy(t, "\\\"");
			} else {
				memcpy(t, s + i, n);
				t += n;
			}
			break;
		}
		case KT_ESC_JSON:
			if (!n) {
				n = 1;
				t = stpcpy(t, "\\ufffd");
			} else if (cp == '"' || cp == '\\') {
				*t++ = '\\';
				*t++ = cp;
			} else if (cp < 0x20 || cp == 0x7f) {
				t = stpcpy(t, "\\u00");
				*t++ = hex[cp >> 4];
				*t++ = hex[cp & 15];
			} else {
				memcpy(t, s + i, n);
				t += n;
			}
			break;
		case KT_ESC_TSDL:
			if (!n)
				n = 1;
			if (cp == '"' || cp == '\\')
				*t++ = '\\';
			*t++ = n == 1 && cp >= ' ' && cp < 0x7f ? (char)cp : '?';
			break;
		case KT_ESC_XML: {
			static const char *const entity[128] = {
				['&'] = "&amp;", ['<'] = "&lt;", ['>'] = "&gt;",
				['"'] = "&quot;", ['\''] = "&#39;",
			};

			if (!n || control || cp == 0xfffe || cp == 0xffff) {
				n = n ? n : 1;
				t = stpcpy(t, "\xef\xbf\xbd");	/* U+FFFD */
			} else if (cp < 128 && entity[cp]) {
				t = stpcpy(t, entity[cp]);
			} else {
				memcpy(t, s + i, n);
				t += n;
			}
			break;
		}
		}
		if (t - tmp > end - p)
			break;
		memcpy(p, tmp, t - tmp);
		p += t - tmp;
		i += n;
	}
	return p;
}

char *kt_escape_dup(const char *s, size_t len, enum kt_esc how)
{
	size_t in = strnlen(s, len);
	char *out = xmalloc(KT_ESC_MAX(in) + 1);

	*kt_escape(out, KT_ESC_MAX(in), s, in, how) = '\0';
	return out;
}
