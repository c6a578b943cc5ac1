/* SPDX-License-Identifier: GPL-2.0 */
/*
 * util: messages and small helpers shared by the ktrace tools.
 *
 * Every message starts with the tool's name (set once with
 * util_set_progname()), so a user piping several tools knows who spoke.
 */
#ifndef KT_UTIL_H
#define KT_UTIL_H

#include <stddef.h>

extern const char *progname;
extern int verbose;		/* -v raises it, -q lowers it below 0 */

void util_set_progname(const char *argv0);
void pr_err(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void pr_debug(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void die(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));
void *xmalloc(size_t size);
void *xcalloc(size_t nmemb, size_t size);
void *xrealloc(void *ptr, size_t size);
char *xstrdup(const char *s);
char *xstrndup(const char *s, size_t n);

/*
 * What a missing /dev/ktrace means and what fixes it: said by ktrace and by
 * ktrace-run -k alike (a stock kernel needs the module, loaded by root).
 */
#define KTRACE_DEV_MISSING_FMT \
	"%s missing: the ktrace module is not loaded (as root: modprobe ktrace; " \
	"build and install it first: make module, see ktrace-module.rst), or boot a " \
	"kernel patched with ktrace"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

#endif /* KT_UTIL_H */
