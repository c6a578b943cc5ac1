/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * funcpat: the function patterns of the call filters, one syntax for
 * dtrace's view-time filters and libktrace's record-time ones:
 *
 *   NAME        the function of that name
 *   GLOB        a name with * ? or [...]: fnmatch(3)
 *   /REGEX/     an extended regular expression, anywhere in the name
 *
 * Functions are matched by the name dtrace shows: C++ names demangled,
 * without their arguments ("ns::f<int>").
 */
#ifndef KT_FUNCPAT_H
#define KT_FUNCPAT_H

#include <regex.h>
#include <stdbool.h>
#include <stddef.h>

enum kt_funcpat_kind { KT_FUNCPAT_NAME, KT_FUNCPAT_GLOB, KT_FUNCPAT_REGEX };

struct kt_funcpat {
	enum kt_funcpat_kind kind;
	const char *text;		/* as given (not copied) */
	regex_t re;			/* KT_FUNCPAT_REGEX */
};

/* Compile @text into @p; false with what is wrong in @err (@size bytes). */
bool kt_funcpat_compile(struct kt_funcpat *p, const char *text, char *err, size_t size);
bool kt_funcpat_match(const struct kt_funcpat *p, const char *name);
void kt_funcpat_free(struct kt_funcpat *p);

#endif /* KT_FUNCPAT_H */
