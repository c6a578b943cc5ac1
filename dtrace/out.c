// SPDX-License-Identifier: GPL-2.0
/*
 * out: dtrace's output buffer.  One write() per megabyte: printing tens of
 * millions of lines is mostly formatting, not system calls.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtrace.h"
#include "pager.h"
#include "util.h"

void out_open_fd(struct outbuf *o, int fd, const char *name, size_t size)
{
	o->buf = o->p = xmalloc(size);
	o->end = o->buf + size;
	o->fd = fd;
	o->name = name;
	o->before_write = NULL;
}

/*
 * -o FILE: opened without O_TRUNC, then checked, then emptied.  It must not
 * be one of the inputs (`dtrace -o t.cpu* ...` once put t.cpu0 there, and
 * emptied it before reading it), compared by device and inode so that no
 * other name for an input slips through; and it is not written through a
 * symbolic link (a planted one in /tmp would redirect root's output).  A
 * new file is 0600: the output holds kernel addresses too.
 */
void out_open(struct outbuf *o, const char *path, const struct stat *inputs,
	      unsigned int nr_inputs)
{
	int fd = STDOUT_FILENO;
	struct stat st;

	if (path) {
		fd = open(path, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC, 0600);
		if (fd < 0 && errno == ELOOP)
			die("%s: is a symbolic link: dtrace does not write through links", path);
		if (fd < 0 || fstat(fd, &st) < 0)
			die("%s: %s", path, strerror(errno));
		for (unsigned int i = 0; i < nr_inputs; i++)
			if (st.st_dev == inputs[i].st_dev && st.st_ino == inputs[i].st_ino)
				die("%s: is one of the input files: dtrace does not overwrite "
				    "its input", path);
		if (S_ISREG(st.st_mode) && ftruncate(fd, 0) < 0)
			die("%s: %s", path, strerror(errno));
	}
	out_open_fd(o, fd, path ? path : "standard output", DTRACE_OUT_SIZE);
}

void out_flush(struct outbuf *o)
{
	const char *s = o->buf;

	if (o->before_write && s < o->p)
		o->before_write(o);
	while (s < o->p) {
		ssize_t n = write(o->fd, s, o->p - s);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			kt_pager_write_failed(errno);	/* the user quit the pager */
		if (n <= 0)
			die("%s: write error: %s", o->name, n ? strerror(errno) : "no space");
		s += n;
	}
	o->p = o->buf;
}

void out_close(struct outbuf *o)
{
	out_flush(o);
	if (o->fd != STDOUT_FILENO && close(o->fd) < 0)
		die("%s: %s", o->name, strerror(errno));
	free(o->buf);
}

/*
 * Lines are bounded (out_reserve()) but for the names in them: a C++ name
 * can be longer than a line's room, so what does not fit where the buffer
 * ends goes out after a flush, or, longer than the buffer, on its own.
 */
void out_printf(struct outbuf *o, const char *fmt, ...)
{
	va_list ap;
	char *big;
	int n;

	out_reserve(o);
	va_start(ap, fmt);
	n = vsnprintf(o->p, o->end - o->p, fmt, ap);
	va_end(ap);
	if (n < 0)
		die("%s: cannot format output: %s", o->name, strerror(errno));
	if (n < o->end - o->p) {
		o->p += n;
		return;
	}
	out_flush(o);
	big = n < o->end - o->p ? o->p : xmalloc(n + 1);
	va_start(ap, fmt);
	vsnprintf(big, n + 1, fmt, ap);
	va_end(ap);
	if (big == o->p) {
		o->p += n;
		return;
	}
	{
		char *save_buf = o->buf, *save_end = o->end;

		/* write it through the usual path: the pipeline's turn included */
		o->buf = big;
		o->p = big + n;
		o->end = big + n + 1;
		out_flush(o);
		o->buf = o->p = save_buf;
		o->end = save_end;
	}
	free(big);
}
