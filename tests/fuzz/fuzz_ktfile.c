// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_ktfile: libFuzzer target for the trace file reader, the merge and
 * the event decoding.  The input is one trace file; it is read as it is,
 * again with KTFILE_FORCE, and merged with itself, and every event is
 * formatted.  Built and run by tests/fuzz/run.sh.
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <unistd.h>

#include "ktevents.h"
#include "merge.h"

static char text[KTEV_NAME_MAX + KTEV_TEXT_MAX];

static void format(const struct ktfile_event *ev)
{
	char *p = ktev_put_name(text, ev->code, 16);

	ktev_put_text(p, ev->code, ev->args, ev->nr_args, NULL);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz", MFD_CLOEXEC);
	char path[64];
	char *paths[2] = { path, path };
	struct kt_merge *m;
	struct ktfile_reader *f;

	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		__builtin_trap();
	for (unsigned int flags = 0; flags <= KTFILE_FORCE; flags += KTFILE_FORCE) {
		struct ktfile_reader *r;

		lseek(fd, 0, SEEK_SET);
		r = ktfile_open_fd(dup(fd), "fuzz", flags);
		if (!r)
			continue;
		while (ktfile_next(r) > 0)
			format(&r->ev);
		ktfile_reader_close(r);
	}
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	m = kt_merge_open(paths, 2, 0);
	if (m) {
		while ((f = kt_merge_next(m)))
			format(&f->ev);
		kt_merge_close(m);
	}
	close(fd);
	return 0;
}
