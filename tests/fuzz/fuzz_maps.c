// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_maps: libFuzzer target for dtrace's map file parser (symbols.c).
 * The input is a map file (trace.pid1.maps); dtrace loads it as for a
 * stream of pid 1, prints user events and function calls through it, and
 * checks that what it prints for a terminal holds no control character and
 * stays within the line's bound.  Object lines may name any file: only
 * regular ones are read.  Built and run by tests/fuzz/run.sh.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktevents.h"
#include "ktfile.h"
#include "symbols.h"
#include "symtext.h"
#include "util.h"


static char dir[64], maps[128], stream[128];

static void put(struct sym_proc *proc, uint32_t code, uint64_t a, uint64_t b)
{
	struct ktfile_event ev = {
		.code = code, .tid = 1, .nr_args = 4,
		.args = { (uint32_t)a, a >> 32, (uint32_t)b, b >> 32 },
	};

	check_text(line, sym_put_event(line, proc, &ev, WIDTH, NULL));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const uint64_t addrs[] = { 0, 0x401000, 0x401234, 0x555555554000, 0x7f0000001000 };
	struct sym_db *syms;
	struct sym_proc *proc;
	int fd;

	if (!dir[0]) {
		/* run.sh points TMPDIR into build/fuzz/maps and removes it after */
		snprintf(dir, sizeof(dir), "%.40s/fuzz_maps.XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(dir))
			__builtin_trap();
		snprintf(maps, sizeof(maps), "%s/trace.pid1.maps", dir);
		snprintf(stream, sizeof(stream), "%s/trace.pid1.tid1", dir);
		verbose = -1;		/* warnings are expected, and many */
	}
	fd = open(maps, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		__builtin_trap();
	close(fd);
	syms = sym_db_new();
	proc = sym_proc(syms, 1, stream);
	for (unsigned int sub = 0; sub < 256; sub += 17)
		put(proc, KTRACE_CODE(KTRACE_GRP_user, sub), 0xffffffff80000000ull, 42);
	put(proc, KTRACE_CODE(KTRACE_GRP_user, 1), 7, 1ull << 63);
	for (unsigned int i = 0; i < sizeof(addrs) / sizeof(addrs[0]); i++) {
		put(proc, KTRACE_func_entry, addrs[i], addrs[(i + 1) % 5]);
		put(proc, KTRACE_func_exit, addrs[i], 0);
		sym_site(proc, addrs[i] + 1, line, 256);
		check_text(line, line + strlen(line));
	}
	sym_db_free(syms);
	return 0;
}
