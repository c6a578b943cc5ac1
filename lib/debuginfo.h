/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * debuginfo: finding a binary's separate debug file, for dtrace and ktrace.
 * The names come from the binary (.gnu_debuglink) and the binary is
 * hostile: libdwfl's own search opens what it finds blocking and unchecked
 * (a FIFO there hung the tools, a link to /dev/zero read for ever, a link
 * to /etc/shadow was read as root).  Every candidate here is opened by
 * kt_open_regular() (no device or FIFO ever opened), must be below a size
 * cap, and must match the debug link's CRC.
 */
#ifndef KT_DEBUGINFO_H
#define KT_DEBUGINFO_H

#include <elfutils/libdwfl.h>

/* A debug file larger than this is refused (no reading for ever). */
#define KT_DEBUGINFO_MAX	(8ULL << 30)

/*
 * @path as a debug file: a regular file under the cap with @crc (0: any).
 * Returns the fd and *found (malloc'd) or -1.
 */
int kt_open_debug(const char *path, GElf_Word crc, char **found);

/* A file named by build id @id (hex) in @debug_path's absolute directories, or NULL. */
char *kt_debuginfo_by_build_id(const char *debug_path, const char *id);

/*
 * libdwfl's find_debuginfo, hardened: by build id in the absolute
 * directories of @debug_path (libdwfl's syntax, NULL: its default), then
 * by the debug link's name, absolute, or in each entry of the path ("":
 * the file's directory; relative: below it; absolute: that directory with
 * the file's directory below).  A leading '-' skips the CRC check.
 */
int kt_find_debuginfo(Dwfl_Module *mod, const char *debug_path, const char *file_name,
		      const char *debuglink, GElf_Word crc, char **found);

#endif
