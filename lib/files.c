// SPDX-License-Identifier: GPL-2.0
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
