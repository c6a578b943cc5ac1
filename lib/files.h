/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * files: creating and opening files the tools' way.  Trace files hold
 * kernel addresses and memory maps, and the tools often run as root in
 * directories others can write (/tmp): a name may be a planted symbolic
 * link, FIFO or device.
 *
 * Created files are 0600 and directories 0700, created with O_EXCL and
 * O_NOFOLLOW: a link is never followed, a device or FIFO never written.
 * Files read by name that must be files (map files, the ELF files they
 * name, saved kallsyms) are looked at before they are opened: only a
 * regular file is ever opened for reading.
 */
#ifndef KT_FILES_H
#define KT_FILES_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/stat.h>

/*
 * Create @path for writing, mode 0600.  An existing regular file of that
 * name is replaced (unlinked, then created anew); a symbolic link, FIFO,
 * device or directory is left alone and -EEXIST returned.  Returns the fd
 * (O_CLOEXEC) or -errno.
 */
int kt_create_file(const char *path);

/* Why kt_create_file() failed, for a message after the path. */
const char *kt_create_strerror(int err);

/*
 * Open @path (links followed) read-only if it is a regular file, or with
 * @fifo_ok a FIFO: what it is is looked at through an O_PATH descriptor
 * first, so a device, FIFO or directory in the way is never opened (no
 * driver's open, no wait for a FIFO's writer), then that same inode is
 * reopened.  *st: what was found (st_mode 0 if nothing).  Returns the fd
 * (O_CLOEXEC, blocking) or -errno: -EINVAL for a file of another type
 * (kt_file_type(st->st_mode) says which), -EAGAIN when the name was
 * replaced between the look and the open.
 */
int kt_open_checked(const char *path, bool fifo_ok, struct stat *st);

/*
 * Open the file that O_PATH descriptor @pfd for @path is, found by fstat
 * to be *st, with open() @flags: that same inode even if the name was
 * swapped since (through /proc/self/fd; without /proc by name, compared by
 * device and inode).  Returns the fd (O_CLOEXEC) or -errno, -EAGAIN when
 * the name now leads to another file.
 */
int kt_reopen(int pfd, const char *path, const struct stat *st, int flags);

/* kt_open_checked(path, false, ...): only a regular file. */
int kt_open_regular(const char *path);

/* "a character device", "a FIFO", "a directory" ...: for messages. */
const char *kt_file_type(mode_t mode);

/*
 * Make directory @path, mode 0700; an existing one is accepted if it is a
 * real directory (not a link to one).  Returns 0 or -errno.
 */
int kt_mkdir_private(const char *path);

/*
 * A directory to create files in when the files may be written by a
 * program run by another user (libktrace in a setuid program, ktrace-run):
 * it must be the effective user's (or root's) and nobody else's to write.
 * Returns a directory descriptor, or -1 with errno (EPERM: not safe).
 */
int kt_open_checked_dir(const char *dir);

/*
 * Create @name in @dir (checked as above), 0600, O_EXCL|O_NOFOLLOW: a link
 * or an earlier file in the way is unlinked, never followed.  @append: open
 * an existing regular file of ours with one link to append instead.
 * Returns the fd or -1 with errno.
 */
int kt_create_file_in(const char *dir, const char *name, bool append);

/*
 * Whether @path, or a directory on the way to it, is a symbolic link of
 * another user than the effective one (and not root's): one planted in a
 * directory others can write (/tmp), which a tool run as root must not
 * follow.  Returns 1 with the link's path (cut to @size) in @link and its
 * owner in *@uid, else 0.  Components that do not exist yet are fine.
 */
int kt_foreign_link(const char *path, char *link, size_t size, unsigned int *uid);

#endif /* KT_FILES_H */
