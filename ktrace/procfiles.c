// SPDX-License-Identifier: GPL-2.0
/*
 * procfiles: the copies of /proc/kallsyms and /proc/interrupts that ktrace
 * saves beside a recording or a snapshot, for dtrace to name kernel
 * addresses and irqs with once the machine is gone.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "files.h"
#include "ktrace.h"
#include "util.h"

/* Most of a /proc file we copy: a kallsyms with many modules is ~20 MiB. */
#define PROC_COPY_MAX	(256u << 20)

/* All of /proc file @path, in *len bytes; NULL (after a message) if not. */
static char *read_proc(const char *path, size_t *len)
{
	int fd = kt_open_regular(path);
	size_t cap = 1 << 20;
	char *buf;

	*len = 0;
	if (fd < 0) {
		/* a kernel without CONFIG_KALLSYMS has none: nothing to say */
		if (fd == -ENOENT)
			pr_debug("%s: %s", path, strerror(-fd));
		else
			pr_warn("%s: %s", path, strerror(-fd));
		return NULL;
	}
	buf = xmalloc(cap);
	for (;;) {
		ssize_t n;

		if (*len == cap) {
			if (cap == PROC_COPY_MAX) {
				pr_warn("%s: larger than %u MiB: not copied", path,
					PROC_COPY_MAX >> 20);
				break;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		n = read(fd, buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			pr_warn("reading %s: %s", path, strerror(errno));
		if (n <= 0) {
			close(fd);
			if (!n)
				return buf;
			break;
		}
		*len += n;
	}
	close(fd);
	free(buf);
	return NULL;
}

/* Whether a kallsyms copy has real addresses: kptr_restrict makes them all 0. */
static bool has_addresses(const char *buf, size_t len)
{
	for (const char *line = buf; line < buf + len; ) {
		const char *nl = memchr(line, '\n', buf + len - line);
		size_t zeros = strspn(line, "0");

		if (line + zeros < buf + len && line[zeros] != ' ')
			return true;
		if (!nl)
			break;
		line = nl + 1;
	}
	return false;
}

/* /proc file @proc as @base@suffix (see save_proc_copies()). */
static void save_proc(const char *base, const char *proc, const char *suffix)
{
	size_t len, plen = strlen(base) + strlen(suffix) + 1;
	char *buf = read_proc(proc, &len), *path;
	int fd;

	if (!buf)
		return;
	if (!strcmp(suffix, ".kallsyms") && !has_addresses(buf, len)) {
		pr_warn("%s shows no addresses (kernel.kptr_restrict, or not root): "
			"no %s%s, dtrace prints kernel addresses in hex", proc, base, suffix);
		free(buf);
		return;
	}
	path = xmalloc(plen);
	snprintf(path, plen, "%s%s", base, suffix);
	fd = kt_create_file(path);
	if (fd < 0) {
		pr_warn("%s: %s", path, kt_create_strerror(fd));
	} else {
		size_t done = 0;

		while (done < len) {
			ssize_t n = write(fd, buf + done, len - done);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				pr_warn("%s: %s: not kept", path, n < 0 ? strerror(errno) : "short write");
				unlink(path);
				break;
			}
			done += n;
		}
		if (close(fd) < 0 && done == len) {
			pr_warn("%s: %s: not kept", path, strerror(errno));
			unlink(path);
		}
	}
	free(path);
	free(buf);
}

void save_proc_copies(const char *base)
{
	save_proc(base, "/proc/kallsyms", ".kallsyms");
	save_proc(base, "/proc/interrupts", ".irqs");
}
