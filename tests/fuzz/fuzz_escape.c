// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_escape: libFuzzer target for the escaping of trace strings
 * (lib/escape.c) into each output: text, quoted (probe strings), DOT
 * (--callgraph), JSON (--format=perfetto-json), TSDL (CTF metadata), XML
 * (--format=svg).  The input is one string of any bytes; for each style the
 * output must stay in KT_ESC_MAX() and in the room given, and be what that
 * output's reader accepts:
 *
 *   text  valid UTF-8, no control character (C0, DEL, C1)
 *   DOT, quoted  as text, and no " that ends the string (every " escaped)
 *   JSON  valid UTF-8, no control character, every " and \ escaped; and
 *         for input that is valid UTF-8 without controls, decoding the
 *         escapes gives the input back
 *   TSDL  printable ASCII only, every " and \ escaped
 *   XML   valid UTF-8, no control character, no < > " ', every & the start
 *         of one of the five entities it writes
 *
 * Built and run by tests/fuzz/run.sh.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"

/* Length of the valid UTF-8 sequence at s, 0 if none (a second decoder). */
static size_t seq(const unsigned char *s, size_t n, uint32_t *cp)
{
	size_t len = s[0] < 0x80 ? 1 : (s[0] & 0xe0) == 0xc0 ? 2 :
		     (s[0] & 0xf0) == 0xe0 ? 3 : (s[0] & 0xf8) == 0xf0 ? 4 : 0;
	uint32_t c = len == 1 ? s[0] : len == 2 ? s[0] & 0x1f : len == 3 ? s[0] & 0xf : s[0] & 7;
	static const uint32_t min[] = { 0, 0, 0x80, 0x800, 0x10000 };

	if (!len || len > n)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (s[i] & 0x3f);
	}
	if (c < min[len] || c > 0x10ffff || (c >= 0xd800 && c < 0xe000))
		return 0;
	*cp = c;
	return len;
}

static bool is_control(uint32_t c)
{
	return c < 0x20 || c == 0x7f || (c >= 0x80 && c < 0xa0);
}

/* Valid UTF-8 without control characters; *plain: nor " or \ . */
static bool clean(const unsigned char *s, size_t n, bool c1_ok)
{
	for (size_t i = 0; i < n; ) {
		uint32_t c;
		size_t len = seq(s + i, n - i, &c);

		if (!len || (is_control(c) && !(c1_ok && c >= 0x80)))
			return false;
		i += len;
	}
	return true;
}

/* No " that is not escaped by an odd run of backslashes. */
static bool quotes_escaped(const char *s, size_t n)
{
	size_t run = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] == '"' && run % 2 == 0)
			return false;
		run = s[i] == '\\' ? run + 1 : 0;
	}
	return run % 2 == 0;	/* nor a backslash that escapes the closing quote */
}

/* JSON string body -> bytes (only the escapes escape.c writes) */
static size_t json_decode(const char *s, size_t n, char *out)
{
	size_t o = 0;

	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\\') {
			out[o++] = s[i];
		} else if (s[i + 1] == 'u') {
			out[o++] = (char)strtoul((char[]){ s[i + 4], s[i + 5], 0 }, NULL, 16);
			i += 5;
		} else {
			out[o++] = s[++i];
		}
	}
	return o;
}

/* No < > " ' and every & one of the entities kt_escape() writes. */
static bool xml_clean(const char *s, size_t n)
{
	static const char *const entities[] = { "&amp;", "&lt;", "&gt;", "&quot;", "&#39;" };

	for (size_t i = 0; i < n; i++) {
		bool known = false;

		if (strchr("<>\"'", s[i]) && s[i])
			return false;
		if (s[i] != '&')
			continue;
		for (size_t e = 0; e < sizeof(entities) / sizeof(*entities); e++)
			known |= n - i >= strlen(entities[e]) &&
				 !memcmp(s + i, entities[e], strlen(entities[e]));
		if (!known)
			return false;
	}
	return true;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t in = strnlen((const char *)data, size), room = KT_ESC_MAX(size);
	char *out = malloc(room + 1), *dec = malloc(room + 1);

	for (int how = KT_ESC_TEXT; how <= KT_ESC_XML; how++) {
		/* all of it, then in a room too small, which must be respected */
		for (size_t r = room; ; r /= 3) {
			char *end = kt_escape(out, r, (const char *)data, size, how);
			size_t len = end - out;

			if (len > r || len > KT_ESC_MAX(in))
				__builtin_trap();
			switch (how) {
			case KT_ESC_TEXT:
				if (!clean((unsigned char *)out, len, false))
					__builtin_trap();
				break;
			case KT_ESC_QUOTED:
			case KT_ESC_DOT:
				if (!clean((unsigned char *)out, len, false) ||
				    !quotes_escaped(out, len))
					__builtin_trap();
				break;
			case KT_ESC_JSON:
				if (!clean((unsigned char *)out, len, true) ||
				    !quotes_escaped(out, len))
					__builtin_trap();
				if (r == room && clean(data, in, true) &&
				    (json_decode(out, len, dec) != in || memcmp(dec, data, in)))
					__builtin_trap();
				break;
			case KT_ESC_TSDL:
				for (size_t i = 0; i < len; i++)
					if (out[i] < ' ' || out[i] > '~')
						__builtin_trap();
				if (!quotes_escaped(out, len))
					__builtin_trap();
				break;
			case KT_ESC_XML:
				if (!clean((unsigned char *)out, len, false) || !xml_clean(out, len))
					__builtin_trap();
				break;
			}
			if (!r)
				break;
		}
	}
	free(out);
	free(dec);
	return 0;
}
