// SPDX-License-Identifier: GPL-2.0
/*
 * out: dtrace's output buffer.  One write() per megabyte: printing tens of
 * millions of lines is mostly formatting, not system calls.
 */
#define _GNU_SOURCE		/* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtrace.h"
#include "files.h"
#include "pager.h"
#include "util.h"

void out_open_fd(struct outbuf *o, int fd, const char *name, size_t size)
{
	o->buf = o->p = xmalloc(size);
	o->end = o->buf + size;
	o->fd = fd;
	o->name = name;
	o->before_write = NULL;
	o->date_len = 0;
}

/*
 * A file -o names is written under a temporary name beside it and renamed
 * to its own when complete: a full disk, a bad input or a kill -9 leaves
 * the file as it was (or none), never a partial one that looks whole (a
 * kill -9 leaves the hidden temporary one).
 * One -o a run: the exit handler needs it where it can find it.
 */
static struct pending_output {
	char *tmp;		/* DIR/.NAME.XXXXXX, being written; NULL: none */
	char *path;		/* what it becomes */
} pending;

static void remove_pending(void)
{
	if (pending.tmp)
		unlink(pending.tmp);
}

/* A new file beside @path, 0600 (@mode if not 0), that out_close() renames to it. */
static int create_pending(const char *path, mode_t mode)
{
	const char *slash = strrchr(path, '/');
	size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0;
	char *tmp = xmalloc(strlen(path) + 16);
	int fd;

	sprintf(tmp, "%.*s.%s.XXXXXX", (int)dir_len, path, path + dir_len);
	fd = mkostemp(tmp, O_CLOEXEC);	/* O_EXCL, 0600 */
	if (fd < 0)
		die("%s: %s (making its temporary file beside it)", path, strerror(errno));
	if (!pending.tmp)
		atexit(remove_pending);
	pending.tmp = tmp;
	pending.path = xstrdup(path);
	if (mode && fchmod(fd, mode) < 0)
		die("%s: %s", tmp, strerror(errno));
	return fd;
}

/*
 * -o FILE, where another user may have planted something (root writing in
 * /tmp): a new file is created O_EXCL, 0600 (the output holds kernel
 * addresses).  An existing name is looked at first (O_PATH, O_NOFOLLOW:
 * nothing is opened, no FIFO waited on) and written only if it is
 *  - a regular file of this user's with no other links: replaced, as any
 *    tool writes over its output (another user's file would leak the
 *    output to them; a hard link could be to any file of this user's);
 *  - a character device (/dev/null, a tty): only root makes those;
 *  - a FIFO of this user's;
 * never a symbolic link.  It must not be one of the inputs either
 * (`dtrace -o t.cpu* ...` once put t.cpu0 there, and emptied it before
 * reading it), compared by device and inode so that no other name for an
 * input slips through.
 */
static int open_output(const char *path, const struct stat *inputs, unsigned int nr_inputs)
{
	const int flags = O_WRONLY | O_NOFOLLOW | O_NOCTTY | O_CLOEXEC;
	struct stat st;
	int fd, pfd;

	pfd = open(path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (pfd < 0 && errno == ENOENT)
		return create_pending(path, 0);
	if (pfd < 0 || fstat(pfd, &st) < 0)
		die("%s: %s", path, strerror(errno));
	if (S_ISLNK(st.st_mode))
		die("%s: is a symbolic link: dtrace does not write through links", path);
	for (unsigned int i = 0; i < nr_inputs; i++)
		if (st.st_dev == inputs[i].st_dev && st.st_ino == inputs[i].st_ino)
			die("%s: is one of the input files: dtrace does not overwrite "
			    "its input", path);
	if (!S_ISCHR(st.st_mode) && st.st_uid != geteuid())
		die("%s: belongs to another user (uid %u): dtrace writes over only "
		    "a file of yours", path, (unsigned int)st.st_uid);
	if (S_ISREG(st.st_mode) && st.st_nlink != 1)
		die("%s: has %ju other (hard) links: dtrace does not write over it", path,
		    (uintmax_t)st.st_nlink - 1);
	if (!S_ISREG(st.st_mode) && !S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
		die("%s: is %s: dtrace writes to a file, a character device or a FIFO",
		    path, kt_file_type(st.st_mode));
	if (S_ISREG(st.st_mode)) {
		/* replaced whole when done; its mode kept */
		close(pfd);
		return create_pending(path, st.st_mode & 0777);
	}
	fd = kt_reopen(pfd, path, &st, flags);
	if (fd < 0)
		die("%s: %s", path, fd == -EAGAIN ? "replaced while being opened" : strerror(-fd));
	close(pfd);
	return fd;
}

void out_open(struct outbuf *o, const char *path, const struct stat *inputs,
	      unsigned int nr_inputs)
{
	int fd = path ? open_output(path, inputs, nr_inputs) : STDOUT_FILENO;

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
	if (pending.tmp && o->fd != STDOUT_FILENO) {
		if (rename(pending.tmp, pending.path) < 0)
			die("%s: %s (renaming %s to it)", pending.path, strerror(errno),
			    pending.tmp);
		free(pending.tmp);
		free(pending.path);
		pending.tmp = pending.path = NULL;
	}
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

void out_write(struct outbuf *o, const void *s, size_t len)
{
	const char *c = s;

	while (len) {
		char *p = out_reserve(o);
		size_t n = len < DTRACE_LINE_MAX / 2 ? len : DTRACE_LINE_MAX / 2;

		memcpy(p, c, n);
		out_commit(o, p + n);
		c += n;
		len -= n;
	}
}
