// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * funcpat: function patterns of the call filters (see funcpat.h).
 */
#include <fnmatch.h>
#include <stdio.h>
#include <string.h>

#include "funcpat.h"

bool kt_funcpat_compile(struct kt_funcpat *p, const char *text, char *err, size_t size)
{
	size_t len = strlen(text);
	int ret;

	p->text = text;
	if (!len) {
		snprintf(err, size, "empty function pattern");
		return false;
	}
	if (len >= 2 && text[0] == '/' && text[len - 1] == '/') {
		char re[len - 1];

		memcpy(re, text + 1, len - 2);
		re[len - 2] = '\0';
		p->kind = KT_FUNCPAT_REGEX;
		ret = regcomp(&p->re, re, REG_EXTENDED | REG_NOSUB);
		if (ret) {
			char why[128];

			regerror(ret, &p->re, why, sizeof(why));
			snprintf(err, size, "bad regular expression '%s': %s", text, why);
			return false;
		}
		return true;
	}
	p->kind = strpbrk(text, "*?[") ? KT_FUNCPAT_GLOB : KT_FUNCPAT_NAME;
	return true;
}

bool kt_funcpat_match(const struct kt_funcpat *p, const char *name)
{
	switch (p->kind) {
	case KT_FUNCPAT_NAME:
		return !strcmp(p->text, name);
	case KT_FUNCPAT_GLOB:
		return fnmatch(p->text, name, 0) == 0;
	case KT_FUNCPAT_REGEX:
		return regexec(&p->re, name, 0, NULL, 0) == 0;
	}
	return false;
}

void kt_funcpat_free(struct kt_funcpat *p)
{
	if (p->kind == KT_FUNCPAT_REGEX)
		regfree(&p->re);
}
