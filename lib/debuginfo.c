// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * debuginfo: the one hardened search for separate debug files, used by
 * dtrace (symbols.c) and ktrace (probe_dwarf.c).  See debuginfo.h.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "debuginfo.h"
#include "files.h"
#include "util.h"

/* CRC-32 (the .gnu_debuglink checksum) of the rest of @fd; false on a read error. */
static bool file_crc32(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uint32_t table[256], c = 0xffffffff;
	ssize_t n;

	/* made for each file: next to reading one, it costs nothing */
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t v = i;

		for (int k = 0; k < 8; k++)
			v = v & 1 ? 0xedb88320 ^ (v >> 1) : v >> 1;
		table[i] = v;
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		for (ssize_t i = 0; i < n; i++)
			c = table[(c ^ buf[i]) & 0xff] ^ (c >> 8);
	}
	*crc = ~c;
	return lseek(fd, 0, SEEK_SET) == 0;
}

int kt_open_debug(const char *path, GElf_Word crc, char **found)
{
	int fd = kt_open_regular(path);
	struct stat st;
	uint32_t sum;

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    (unsigned long long)st.st_size > KT_DEBUGINFO_MAX ||
	    (crc && (!file_crc32(fd, &sum) || sum != crc))) {
		close(fd);
		return -1;
	}
	*found = xstrdup(path);
	return fd;
}

char *kt_debuginfo_by_build_id(const char *debug_path, const char *id)
{
	const char *list = debug_path ? debug_path : "/usr/lib/debug";
	char path[4096];

	if (strlen(id) < 4 || !strcmp(id, "-"))
		return NULL;
	for (const char *p = list; *p; ) {
		size_t len = strcspn(p, ":");

		if (*p == '/') {
			for (int debug = 1; debug >= 0; debug--) {
				snprintf(path, sizeof(path), "%.*s/.build-id/%.2s/%s%s", (int)len, p,
					 id, id + 2, debug ? ".debug" : "");
				if (access(path, R_OK) == 0)
					return xstrdup(path);
			}
		}
		p += len + (p[len] == ':');
	}
	return NULL;
}

int kt_find_debuginfo(Dwfl_Module *mod, const char *debug_path, const char *file_name,
		      const char *debuglink, GElf_Word crc, char **found)
{
	const char *list = debug_path ? debug_path : ":.debug:/usr/lib/debug";
	const char *slash = file_name ? strrchr(file_name, '/') : NULL;
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr), fd = -1;
	char path[4096], hex[256];
	size_t dir_len;

	if (len > 0 && 2 * (size_t)len < sizeof(hex)) {
		char *by_id;

		for (int i = 0; i < len; i++)
			snprintf(hex + 2 * i, 3, "%02x", bits[i]);
		by_id = kt_debuginfo_by_build_id(debug_path, hex);
		if (by_id)
			fd = kt_open_debug(by_id, 0, found);
		free(by_id);
		if (fd >= 0)
			return fd;
	}
	if (!debuglink || !*debuglink)
		return -1;
	if (*debuglink == '/')
		return kt_open_debug(debuglink, crc, found);
	if (!file_name)
		return -1;
	dir_len = slash ? (size_t)(slash + 1 - file_name) : 0;	/* with its '/' */
	for (const char *p = list; *p; ) {
		size_t n = strcspn(p, ":");
		const char *e = p;
		GElf_Word want = crc;

		p += n + (p[n] == ':');
		if (*e == '-' || *e == '+') {
			want = *e == '-' ? 0 : crc;
			e++;
			n--;
		}
		if (!n)
			snprintf(path, sizeof(path), "%.*s%s", (int)dir_len, file_name, debuglink);
		else if (*e != '/')
			snprintf(path, sizeof(path), "%.*s%.*s/%s", (int)dir_len, file_name,
				 (int)n, e, debuglink);
		else
			snprintf(path, sizeof(path), "%.*s%s%.*s%s", (int)n, e,
				 *file_name == '/' ? "" : "/", (int)dir_len, file_name, debuglink);
		if (!strcmp(path, file_name))
			continue;		/* the file itself has no debug info */
		fd = kt_open_debug(path, want, found);
		if (fd >= 0)
			return fd;
	}
	return -1;
}
