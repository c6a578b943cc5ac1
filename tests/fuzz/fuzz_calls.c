// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_calls: libFuzzer target for the call reconstruction (dtrace/calls.c)
 * and the views and export built on it: --calltree (with the thread's
 * other events), --flat, --report (text, CSV), --callgraph, --folded,
 * its SVG flame graph and the Perfetto export.  The input is a user
 * thread's stream, 8 bytes a record:
 *
 *   byte 0      what: func:enter, func:leave, func:entry, func:exit, a
 *               lost marker, a user event (low 3 bits, modulo 6)
 *   byte 1      which of 16 functions (and, high bits, its call site's)
 *   bytes 2-5   the stack pointer, as libktrace records it (any value)
 *   bytes 6-7   time to the next record
 *
 * written as a trace file (no map file: names stay numbers) and run through
 * each format as dtrace would.  Built and run by tests/fuzz/run.sh calls.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calls.h"
#include "dtrace.h"
#include "ktfile.h"
#include "merge.h"
#include "stacks.h"

#define MAX_RECS	4096

static char dir[64], path[128];
static struct ktrace_record recs[2 * MAX_RECS];

static void run_format(const struct dtrace_format *fmt, int null_fd)
{
	char *paths[1] = { path };
	struct dtrace dt = { .mask = ~0u, .to_ns = UINT64_MAX };
	struct ktfile_reader *f;
	bool first = true;

	dt.merge = kt_merge_open(paths, 1, 0);
	if (!dt.merge)
		return;
	dt.files = calloc(1, sizeof(*dt.files));
	dt.files[0].selected = true;
	dt.user_streams = true;
	dt.syms = sym_db_new();
	out_open_fd(&dt.out, null_fd, "null", 1 << 16);
	dtrace_format_start(&dt, fmt);
	while ((f = kt_merge_next(dt.merge))) {
		struct dtrace_event e = { .file = f->index, .ev = &f->ev };

		if (first)
			dt.t0 = f->ev.tsc;
		first = false;
		e.ns = ktfile_ns(f, f->ev.tsc - dt.t0);
		fmt->event(&dt, &dt.out, &e);
	}
	dtrace_format_end(&dt, fmt);
	out_flush(&dt.out);
	free(dt.out.buf);
	sym_db_free(dt.syms);
	free(dt.files);
	kt_merge_close(dt.merge);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct dtrace_format *const formats[] = {
		&dtrace_calltree, &dtrace_flat, &dtrace_report, &dtrace_report_csv,
		&dtrace_callgraph, &dtrace_perfetto, &dtrace_perfetto_pb, &dtrace_folded,
		&dtrace_svg,
	};
	struct ktfile_header h;
	struct ktfile_writer w;
	uint64_t tsc = 1000;
	size_t n = 0;
	int null_fd;

	if (!dir[0]) {
		snprintf(dir, sizeof(dir), "/tmp/fuzz_calls.%d", getpid());
		mkdir(dir, 0700);
		snprintf(path, sizeof(path), "%s/trace.pid4242.tid4242", dir);
	}
	for (size_t i = 0; i + 8 <= size && n < MAX_RECS; i += 8) {
		const uint8_t *d = data + i;
		uint64_t fn = 0x401000 + (d[1] & 15) * 0x40, site = 0x401000 + (d[1] >> 4) * 0x40 + 9;
		uint32_t sp = d[2] | d[3] << 8 | d[4] << 16 | (uint32_t)d[5] << 24;

		switch (d[0] % 6) {
		case 0:
			recs[n++] = (struct ktrace_record){ tsc, KTRACE_func_enter, 4242, (uint32_t)fn,
				(uint32_t)(fn >> 32) | (uint32_t)(site >> 32) << 16 };
			recs[n++] = (struct ktrace_record){ tsc, KTRACE_EVT_CONT | KTRACE_EVT_END, 4242,
				(uint32_t)site, sp & ~15u };
			break;
		case 1:
			recs[n++] = (struct ktrace_record){ tsc, KTRACE_func_leave, 4242, (uint32_t)fn, sp };
			break;
		case 2:
			recs[n++] = (struct ktrace_record){ tsc, KTRACE_func_entry, 4242, (uint32_t)fn, 0 };
			recs[n++] = (struct ktrace_record){ tsc, KTRACE_EVT_CONT | KTRACE_EVT_END, 4242,
				(uint32_t)site, 0 };
			break;
		case 3:
			recs[n++] = (struct ktrace_record){ tsc, KTRACE_func_exit, 4242, (uint32_t)fn, 0 };
			break;
		case 4:
			recs[n++] = (struct ktrace_record){ tsc, KTRACE_META_LOST, 4242, d[2], 0 };
			break;
		default:
			recs[n++] = (struct ktrace_record){ tsc, KTRACE_user_mark, 4242, d[2], d[3] };
			break;
		}
		tsc += d[6] | d[7] << 8;
	}
	if (ktfile_header_init(&h, -1, 1000000000, true, KTRACE_GRP_func | KTRACE_GRP_user) < 0)
		__builtin_trap();
	h.pid = h.tid = 4242;
	unlink(path);
	if (ktfile_create(&w, path, &h) < 0 || ktfile_append(&w, recs, n) < 0 ||
	    ktfile_close(&w) < 0)
		__builtin_trap();
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	for (size_t i = 0; i < sizeof(formats) / sizeof(*formats); i++)
		run_format(formats[i], null_fd);
	close(null_fd);
	return 0;
}
