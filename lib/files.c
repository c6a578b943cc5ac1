// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * files: safe creation and opening of files by name (see files.h).
 */
#include <errno.h>
#include <fcntl.h>
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

int kt_open_regular(const char *path)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
	struct stat st;
	int err;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) < 0) {
		err = -errno;
	} else if (!S_ISREG(st.st_mode)) {
		err = -EINVAL;
	} else if (fcntl(fd, F_SETFL, 0) < 0) {
		err = -errno;
	} else {
		return fd;
	}
	close(fd);
	return err;
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
