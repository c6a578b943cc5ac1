// SPDX-License-Identifier: GPL-2.0
/*
 * tests/user/kfake: a kernel stream for a user one, to test that dtrace
 * merges both into one call tree.  For the first three func:entry events
 * of USERFILE it writes, one tick after each, a sched:switch away from the
 * thread and a page fault by it, into OUT (cpu 0, same clock).
 *
 *   kfake USERFILE OUT
 */
#include <stdio.h>
#include <string.h>

#include "ktfile.h"

int main(int argc, char **argv)
{
	struct ktfile_reader *r;
	struct ktfile_writer w;
	struct ktfile_header h;
	struct ktrace_record recs[4];
	int n = 0, ret;

	if (argc != 3) {
		fprintf(stderr, "usage: kfake USERFILE OUT\n");
		return 2;
	}
	r = ktfile_open(argv[1], 0);
	if (!r)
		return 1;
	ktfile_header_init(&h, 0, r->hdr.tsc_hz, true, KTRACE_GRP_sched | KTRACE_GRP_fault);
	ret = ktfile_create(&w, argv[2], &h);
	if (ret < 0) {
		fprintf(stderr, "kfake: %s: %s\n", argv[2], strerror(-ret));
		return 1;
	}
	while (n < 3 && ktfile_next(r) > 0) {
		const struct ktfile_event *ev = &r->ev;

		if (ev->code != KTRACE_func_entry && ev->code != KTRACE_func_enter)
			continue;
		/* a switch away, the thread sleeping (S), to the idle task (prio 120) */
		recs[0] = (struct ktrace_record){ ev->tsc + 1, KTRACE_sched_switch, ev->tid,
						  ev->tid, 0 };
		recs[1] = (struct ktrace_record){ ev->tsc + 1, KTRACE_EVT_CONT | KTRACE_EVT_END,
						  ev->tid, 1, 120 };
		recs[2] = (struct ktrace_record){ ev->tsc + 1, KTRACE_fault_page, ev->tid,
						  ev->tid, KTRACE_FAULT_USER };
		recs[3] = (struct ktrace_record){ ev->tsc + 1, KTRACE_EVT_CONT | KTRACE_EVT_END,
						  ev->tid, 0x1000 * (n + 1), 0 };
		ktfile_append(&w, recs, 4);
		n++;
	}
	ktfile_reader_close(r);
	return ktfile_close(&w) < 0;
}
