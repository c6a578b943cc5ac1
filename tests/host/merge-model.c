// SPDX-License-Identifier: GPL-2.0
/*
 * merge-model: check the merge against a model too simple to be wrong.
 *
 *   merge-model [--expect-bad] FILE[=MODEL_FILE]...
 *
 * The model reads every file whole, folds CONT records into the event
 * before them, concatenates the files' events in command-line order and
 * sorts them stably by time stamp.  kt_merge must hand out the same events
 * (time stamp, code, tid, arguments, file) in the same order.  Exit 0 and
 * "N events agree", or 1 and the first difference.
 *
 * FILE=MODEL_FILE: the merge reads FILE, the model MODEL_FILE, the good
 * part of FILE (a bad or torn file cut where it goes bad): a bad file must
 * end only itself.  --expect-bad: the merge must also say it failed.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "merge.h"
#include "util.h"

struct model_event {
	uint64_t tsc;
	unsigned int file, seq;		/* concatenation order, for stability */
	uint32_t code, tid, nr_args;
	size_t args;			/* index in the argument pool */
};

static struct model_event *events;
static size_t nr_events, max_events;
static uint32_t *pool;
static size_t nr_pool, max_pool;

/* Room for one more of @size bytes in a doubling array. */
static void *grow(void *array, size_t *max, size_t nr, size_t size)
{
	if (nr < *max)
		return array;
	*max = *max ? 2 * *max : 1024;
	return xrealloc(array, *max * size);
}

static void load(const char *path, unsigned int file)
{
	FILE *f = fopen(path, "rb");
	struct ktfile_header h;
	struct ktrace_record rec;
	unsigned int seq = 0;

	if (!f || fread(&h, sizeof(h), 1, f) != 1 || h.byte_order != KTFILE_BYTE_ORDER ||
	    fseek(f, h.header_size, SEEK_SET))
		die("%s: cannot load (the model reads only good, native files)", path);
	while (fread(&rec, sizeof(rec), 1, f) == 1) {
		pool = grow(pool, &max_pool, nr_pool + 1, sizeof(*pool));
		pool[nr_pool++] = rec.arg1;
		pool[nr_pool++] = rec.arg2;
		if (rec.event & KTRACE_EVT_CONT) {
			events[nr_events - 1].nr_args += 2;
			continue;
		}
		events = grow(events, &max_events, nr_events, sizeof(*events));
		events[nr_events++] = (struct model_event){
			.tsc = rec.tsc, .file = file, .seq = seq++, .code = rec.event,
			.tid = rec.tid, .nr_args = 2, .args = nr_pool - 2,
		};
	}
	fclose(f);
}

static int by_time_stable(const void *a, const void *b)
{
	const struct model_event *x = a, *y = b;

	if (x->tsc != y->tsc)
		return x->tsc < y->tsc ? -1 : 1;
	if (x->file != y->file)
		return x->file < y->file ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int main(int argc, char **argv)
{
	struct kt_merge *m;
	struct ktfile_reader *f;
	bool expect_bad = false;
	size_t i = 0;

	util_set_progname(argv[0]);
	if (argc > 1 && !strcmp(argv[1], "--expect-bad")) {
		expect_bad = true;
		argv++;
		argc--;
	}
	if (argc < 2)
		die("usage: merge-model [--expect-bad] FILE[=MODEL_FILE]...");
	for (int a = 1; a < argc; a++) {
		char *eq = strchr(argv[a], '=');

		if (eq)
			*eq = '\0';
		load(eq ? eq + 1 : argv[a], a - 1);
	}
	qsort(events, nr_events, sizeof(*events), by_time_stable);

	m = kt_merge_open(argv + 1, argc - 1, 0);
	if (!m)
		return 1;
	for (; (f = kt_merge_next(m)); i++) {
		const struct ktfile_event *ev = &f->ev;
		const struct model_event *me = &events[i];

		if (i == nr_events)
			die("the merge has more events than the model's %zu", nr_events);
		if (ev->tsc != me->tsc || ev->code != me->code || ev->tid != me->tid ||
		    f->index != me->file || ev->nr_args != me->nr_args ||
		    memcmp(ev->args, &pool[me->args], me->nr_args * sizeof(*pool)))
			die("event %zu differs: merge has tsc %llu code 0x%x from %s, "
			    "model tsc %llu code 0x%x from %s", i,
			    (unsigned long long)ev->tsc, ev->code, f->path,
			    (unsigned long long)me->tsc, me->code, argv[me->file + 1]);
	}
	if (kt_merge_failed(m) != expect_bad)
		die("the merge %s", expect_bad ? "did not fail" : "failed");
	if (i != nr_events)
		die("the merge has %zu events, the model %zu", i, nr_events);
	printf("%zu events agree\n", i);
	kt_merge_close(m);
	return 0;
}
