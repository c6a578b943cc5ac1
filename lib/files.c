// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * files: safe creation and opening of files by name (see files.h).
 */
#define _GNU_SOURCE		/* O_PATH */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"

int kt_create_file(const char *path)
{
	const int flags = O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
	int fd = open(path, flags, 0600);
	struct stat st;

	if (fd >= 0 || errno != EEXIST)
		return fd >= 0 ? fd : -errno;
	/* only a regular file is replaced; unlink() never touches a link's target */
	if (lstat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EEXIST;
	if (unlink(path) < 0)
		return -errno;
	/* O_EXCL again: a name planted since the unlink is an error, not followed */
	fd = open(path, flags, 0600);
	return fd >= 0 ? fd : -errno;
}

const char *kt_create_strerror(int err)
{
	if (err == -EEXIST)
		return "exists and is not a regular file (a link, FIFO or device is "
		       "neither followed nor replaced)";
	return strerror(-err);
}

const char *kt_file_type(mode_t mode)
{
	switch (mode & S_IFMT) {
	case S_IFREG:
		return "a regular file";
	case S_IFDIR:
		return "a directory";
	case S_IFCHR:
		return "a character device";
	case S_IFBLK:
		return "a block device";
	case S_IFIFO:
		return "a FIFO";
	case S_IFSOCK:
		return "a socket";
	case S_IFLNK:
		return "a symbolic link";
	}
	return "a special file";
}

/*
 * Open what O_PATH descriptor @pfd (of @path, found to be *st) is, with
 * @flags, through /proc/self/fd: that inode, whatever has become of the
 * name.  Without /proc the name is opened again (O_NONBLOCK, O_NOFOLLOW
 * where @flags say) and must still be that inode.
 */
int kt_reopen(int pfd, const char *path, const struct stat *st, int flags)
{
	struct stat now;
	char proc[32];
	bool by_name = false;
	int fd, err;

	snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
	fd = open(proc, (flags & ~O_NOFOLLOW) | O_NOCTTY | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT && access("/proc/self/fd", F_OK) < 0) {
		by_name = true;
		fd = open(path, flags | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	if (fstat(fd, &now) < 0)
		err = -errno;
	else if (now.st_dev != st->st_dev || now.st_ino != st->st_ino)
		err = -EAGAIN;		/* replaced while we looked */
	else if (by_name && fcntl(fd, F_SETFL, flags & O_APPEND) < 0)
		err = -errno;
	else
		return fd;
	close(fd);
	return err;
}

/*
 * Look first, open after: an O_PATH descriptor opens nothing (no driver's
 * open or release runs, a FIFO does not wait for a writer), fstat says what
 * it is, and only then is that same inode opened for reading.
 */
int kt_open_checked(const char *path, bool fifo_ok, struct stat *st)
{
	int pfd = open(path, O_PATH | O_CLOEXEC), fd;

	st->st_mode = 0;
	if (pfd < 0)
		return -errno;
	if (fstat(pfd, st) < 0)
		fd = -errno;
	else if (!S_ISREG(st->st_mode) && !(fifo_ok && S_ISFIFO(st->st_mode)))
		fd = -EINVAL;
	else
		fd = kt_reopen(pfd, path, st, O_RDONLY);
	close(pfd);
	return fd;
}

int kt_open_regular(const char *path)
{
	struct stat st;

	return kt_open_checked(path, false, &st);
}

int kt_mkdir_private(const char *path)
{
	struct stat st;

	if (mkdir(path, 0700) == 0)
		return 0;
	if (errno != EEXIST)
		return -errno;
	if (lstat(path, &st) < 0)
		return -errno;
	return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}

/*
 * A directory to create trace files in: ours (or root's), and nobody
 * else's to write (where another user could plant links or swap files).
 * Returns a directory descriptor, or -1 with errno (EPERM: not safe).
 */
int kt_open_checked_dir(const char *dir)
{
	int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	struct stat st;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || (st.st_uid != geteuid() && st.st_uid != 0) ||
	    (st.st_mode & S_IWOTH) || ((st.st_mode & S_IWGRP) && st.st_gid != getegid())) {
		close(fd);
		errno = EPERM;
		return -1;
	}
	return fd;
}

int kt_create_file_in(const char *dir, const char *name, bool append)
{
	int flags = O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC;
	int dfd = kt_open_checked_dir(dir), fd, err;
	struct stat st;

	if (dfd < 0)
		return -1;
	fd = openat(dfd, name, flags | (append ? O_APPEND : O_EXCL), 0600);
	/* appending: only to a regular file of ours, not a link to another */
	if (fd >= 0 && append && (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
				  st.st_nlink != 1 || st.st_uid != geteuid())) {
		close(fd);
		fd = -1;
		errno = EEXIST;
	}
	/* a file of an earlier run, or a link: replaced, never written through */
	if (fd < 0 && (errno == EEXIST || errno == ELOOP) && unlinkat(dfd, name, 0) == 0)
		fd = openat(dfd, name, flags | O_EXCL, 0600);
	err = errno;
	close(dfd);
	errno = err;
	return fd;
}

int kt_foreign_link(const char *path, char *link, size_t size, unsigned int *uid)
{
	size_t len = strlen(path);

	for (size_t i = 1; i <= len; i++) {
		struct stat st;

		if (i < len && path[i] != '/')
			continue;
		if (i >= size)
			return 0;	/* longer than @link: the open fails on it anyway */
		memcpy(link, path, i);
		link[i] = '\0';
		if (lstat(link, &st) == 0 && S_ISLNK(st.st_mode) && st.st_uid != geteuid() &&
		    st.st_uid != 0) {
			*uid = st.st_uid;
			return 1;
		}
	}
	return 0;
}
