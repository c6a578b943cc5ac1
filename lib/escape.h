/* SPDX-License-Identifier: GPL-2.0 */
/*
 * escape: strings from a trace file (comm, host name, event names and
 * formats from a map file, symbol names from the ELF files it names) made
 * safe for the output they go to.  They are hostile input: a comm can hold
 * a quote, a terminal escape or bytes that are not UTF-8.
 *
 *   KT_ESC_TEXT  terminal and text views: control characters (C0, DEL, C1)
 *                and bytes that are not UTF-8 as \xNN, a backslash as \\
 *   KT_ESC_QUOTED a "string" in a text view (a probe's): as TEXT, and a
 *                quote as \"
 *   KT_ESC_DOT   inside a Graphviz "string": " and \ escaped, the rest as
 *                TEXT shows it (so the label reads the same)
 *   KT_ESC_JSON  inside a JSON "string": " and \ escaped, control
 *                characters as \u00XX, bytes that are not UTF-8 as \ufffd;
 *                the result is always valid UTF-8
 *   KT_ESC_TSDL  inside a CTF metadata "string": printable ASCII only,
 *                " and \ escaped, anything else '?'
 *   KT_ESC_XML   XML text or a quoted attribute: & < > " ' as entities,
 *                control characters (which XML 1.0 cannot carry), bytes
 *                that are not UTF-8 and U+FFFE/U+FFFF as U+FFFD; the
 *                result is always valid UTF-8
 *
 * Every style writes at most KT_ESC_MAX(len) bytes for @len input bytes.
 */
#ifndef KT_ESCAPE_H
#define KT_ESCAPE_H

#include <stddef.h>

enum kt_esc {
	KT_ESC_TEXT,
	KT_ESC_QUOTED,
	KT_ESC_DOT,
	KT_ESC_JSON,
	KT_ESC_TSDL,
	KT_ESC_XML,
};

#define KT_ESC_MAX(len)	(6 * (len))

/*
 * Write at most @len bytes of @s (less if it ends with a NUL first),
 * escaped for @how, at @p, never more than @room bytes: escaping stops
 * before a character whose escape would not fit.  No quotes around and no
 * NUL after.  Returns the end of what was written.
 */
char *kt_escape(char *p, size_t room, const char *s, size_t len, enum kt_esc how);

/* The same into a new NUL-terminated string (xmalloc'd). */
char *kt_escape_dup(const char *s, size_t len, enum kt_esc how);

#endif /* KT_ESCAPE_H */
