/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * numfmt: integers written as text by hand, not through printf: dtrace
 * prints tens of millions of numbers a second.  The event decoder
 * (ktevents), the symbol tables (ksyms) and the tools' own columns use it.
 *
 * Like ktevents' "put" functions, each writes at p, no NUL, returns the end
 * of what it wrote and may scribble up to KTEV_SLACK bytes past that end.
 * (They keep the ktev_ prefix they had inside the decoder: dtrace calls
 * them by it.)
 */
#ifndef KT_NUMFMT_H
#define KT_NUMFMT_H

#include <stdint.h>

/* What a put function may write past its end: the caller provides it. */
#define KTEV_SLACK	64

char *ktev_put_u64(char *p, uint64_t v);
char *ktev_put_hex(char *p, uint64_t v);	/* "1f", no 0x */
/* @v right-aligned in @width columns (more if it needs them) */
char *ktev_put_u64_width(char *p, uint64_t v, unsigned int width);
/* ".123": a point and the 3 digits of @v < 1000 (fractions of a time) */
char *ktev_put_point3(char *p, unsigned int v);
/* @ns as microseconds, 3 decimals ("12.345"), right-aligned in @width columns */
char *ktev_put_us(char *p, uint64_t ns, unsigned int width);
/* Spaces after @len characters up to @width columns (none if @len fills them). */
char *ktev_put_pad(char *p, unsigned int len, unsigned int width);

#endif /* KT_NUMFMT_H */
