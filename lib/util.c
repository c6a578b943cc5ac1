// SPDX-License-Identifier: GPL-2.0
/*
 * util: messages and allocation helpers shared by the ktrace tools.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util.h"

const char *progname = "ktrace";
int verbose;

/* argv[0] is the caller's: a name of any length leaves room for the message */
void util_set_progname(const char *argv0)
{
	static char name[65];
	const char *slash = strrchr(argv0, '/');

	snprintf(name, sizeof(name), "%s", slash ? slash + 1 : argv0);
	progname = name;
}

/*
 * One write per message, so a tool and the command it runs do not
 * interleave.  Each part is cut to what is left of the buffer (snprintf
 * returns what it would have written, not what it wrote): a name or a
 * message of any length gives a cut line, never an overrun.
 */
static void vmsg(const char *level, const char *fmt, va_list ap)
{
	char buf[4096];
	size_t len, room = sizeof(buf) - 1;	/* one byte kept for the newline */
	int n;

	n = snprintf(buf, room, "%s: %s", progname, level);
	len = n < 0 ? 0 : (size_t)n < room ? (size_t)n : room - 1;
	n = vsnprintf(buf + len, room - len, fmt, ap);
	len += n < 0 ? 0 : (size_t)n < room - len ? (size_t)n : room - len - 1;
	buf[len++] = '\n';
	fflush(stdout);
	if (write(STDERR_FILENO, buf, len) < 0)
		return;
}

void pr_err(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void pr_warn(const char *fmt, ...)
{
	va_list ap;

	if (verbose < 0)
		return;
	va_start(ap, fmt);
	vmsg("warning: ", fmt, ap);
	va_end(ap);
}

void pr_info(const char *fmt, ...)
{
	va_list ap;

	if (verbose < 0)
		return;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void pr_debug(const char *fmt, ...)
{
	va_list ap;

	if (verbose < 1)
		return;
	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
}

void die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg("", fmt, ap);
	va_end(ap);
	exit(1);
}

static void *check_alloc(void *p)
{
	if (!p)
		die("out of memory");
	return p;
}

void *xmalloc(size_t size)
{
	return check_alloc(malloc(size ? size : 1));
}

void *xcalloc(size_t nmemb, size_t size)
{
	return check_alloc(calloc(nmemb ? nmemb : 1, size ? size : 1));
}

void *xrealloc(void *ptr, size_t size)
{
	return check_alloc(realloc(ptr, size ? size : 1));
}

char *xstrdup(const char *s)
{
	return check_alloc(strdup(s));
}

char *xstrndup(const char *s, size_t n)
{
	return check_alloc(strndup(s, n));
}
