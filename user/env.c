// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * env: the library's variables (KTRACE_*), read once when the process
 * records its first event.  That may be before the C library has set
 * environ: a function of .preinit_array runs before libc's own
 * initialisation, and getenv() then finds nothing, so the process would
 * decide, once and for good, not to record.  Until environ is set, the
 * variables come from /proc/self/environ, the environment the process was
 * started with (which is all it can have by then).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "libktrace.h"

#define EARLY_ENV_MAX	(3 * PATH_MAX)	/* KTRACE_* entries kept, NUL-separated */

extern char **environ;

static struct {
	bool read;			/* tried /proc/self/environ */
	size_t len;
	char vars[EARLY_ENV_MAX];	/* its KTRACE_ entries */
} early_env;

/* Keep @entry (NAME=VALUE) if it is one of ours and fits. */
static KT_NOTRACE void keep_early(const char *entry, size_t len)
{
	if (len < 7 || memcmp(entry, "KTRACE_", 7) ||
	    len + 1 > sizeof(early_env.vars) - early_env.len)
		return;
	memcpy(early_env.vars + early_env.len, entry, len);
	early_env.len += len;
	early_env.vars[early_env.len++] = '\0';
}

/* Entries may be longer than the buffer: only ours, short, are kept whole. */
static KT_NOTRACE void read_early_env(void)
{
	int fd = open("/proc/self/environ", O_RDONLY | O_CLOEXEC);
	char buf[4096], entry[PATH_MAX + 32];
	size_t elen = 0;
	bool too_long = false;
	ssize_t n;

	early_env.read = true;
	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (buf[i]) {
				if (elen < sizeof(entry))
					entry[elen++] = buf[i];
				else
					too_long = true;
				continue;
			}
			if (!too_long)
				keep_early(entry, elen);
			elen = 0;
			too_long = false;
		}
	}
	close(fd);
}

KT_NOTRACE const char *kt_getenv(const char *name)
{
	size_t nlen = strlen(name);

	if (environ)
		return getenv(name);
	if (!early_env.read)
		read_early_env();
	for (size_t off = 0; off < early_env.len; off += strlen(early_env.vars + off) + 1) {
		const char *e = early_env.vars + off;

		if (!strncmp(e, name, nlen) && e[nlen] == '=')
			return e + nlen + 1;
	}
	return NULL;
}
