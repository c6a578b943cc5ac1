// SPDX-License-Identifier: GPL-2.0
/*
 * summary (-S): counts per group and event, per file (CPU), per task (the
 * busiest, named as at their last event), lost records, time span and
 * events per second, instead of the events.
 */
#include <stdlib.h>
#include <string.h>

#include "amap.h"
#include "dtrace.h"
#include "util.h"

#define TOP_TASKS	20

struct task_count {
	uint32_t tid;
	uint64_t events;
	char task[KTEV_TASK_MAX];	/* comm-tid at its last event (it may exit) */
	uint8_t task_len;
};

struct file_counts {
	uint64_t events;
	uint64_t lost_markers;
	uint64_t lost;			/* the markers of a known count */
	uint64_t lost_unknown;		/* markers of KTEV_LOST_UNKNOWN */
};

struct summary {
	uint64_t by_code[KTRACE_NR_GROUPS][256];	/* one group bit, no flags */
	uint64_t other;					/* any other code */
	uint64_t events;
	uint64_t first_ns, last_ns;
	struct file_counts *files;			/* by file index */
	struct amap tasks;				/* dtrace_task_key() -> struct task_count */
};

static void *summary_start(struct dtrace *dt, struct outbuf *o)
{
	struct summary *sum = xcalloc(1, sizeof(*sum));

	sum->files = xcalloc(kt_merge_nr_files(dt->merge), sizeof(*sum->files));
	return sum;
}

static void summary_event(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e)
{
	struct summary *sum = dt->fmt_state;
	const struct ktfile_event *ev = e->ev;
	uint64_t ns = e->ns;
	uint32_t grp = ev->code & KTRACE_GROUP_MASK;
	struct file_counts *fc = &sum->files[e->file];
	uint64_t lost;

	if (ktev_lost_count(ev->code, ev->args, ev->nr_args, &lost)) {
		fc->lost_markers++;
		if (lost == KTEV_LOST_UNKNOWN)
			fc->lost_unknown++;
		else
			fc->lost += lost;
		return;
	}
	if (grp) {
		uint64_t key = dtrace_task_key(dt, e->file, ev->tid);
		struct task_count *tc = amap_get(&sum->tasks, key);

		if (!tc) {
			tc = xcalloc(1, sizeof(*tc));
			tc->tid = ev->tid;
			amap_put(&sum->tasks, key, tc);
		}
		tc->events++;
		tc->task_len = tasks_put_named(&e->names, tc->task, ev->tid, 0) - tc->task;
	}
	if (!sum->events++)
		sum->first_ns = ns;
	sum->last_ns = ns;
	fc->events++;
	if (grp && !(grp & (grp - 1)) &&
	    !(ev->code & (KTRACE_EVT_CONT | KTRACE_EVT_END)))
		sum->by_code[__builtin_ctz(grp)][KTRACE_SUB(ev->code)]++;
	else
		sum->other++;
}

static void put_us(struct outbuf *o, uint64_t ns)
{
	char *p = out_reserve(o);

	out_commit(o, dtrace_put_us(p, ns, 0));
}

static int by_events(const void *a, const void *b)
{
	const struct task_count *x = *(struct task_count *const *)a;
	const struct task_count *y = *(struct task_count *const *)b;

	if (x->events != y->events)
		return x->events > y->events ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

/* The busiest tasks, as comm-tid (their name at their last event). */
static void put_tasks(struct dtrace *dt, struct summary *sum, struct outbuf *o)
{
	struct task_count **v = xcalloc(sum->tasks.nr + 1, sizeof(*v));
	size_t nr = 0;

	for (size_t i = 0; i < sum->tasks.cap; i++)
		if (sum->tasks.keys[i])
			v[nr++] = sum->tasks.vals[i];
	qsort(v, nr, sizeof(*v), by_events);
	if (nr > TOP_TASKS)
		out_printf(o, "\n%-24s %12s  (the %d busiest of %zu)\n", "task", "events",
			   TOP_TASKS, nr);
	else
		out_printf(o, "\n%-24s %12s\n", "task", "events");
	for (size_t i = 0; i < nr; i++) {
		char *p;

		if (i < TOP_TASKS) {
			p = memset(out_reserve(o), ' ', 2) + 2;
			p = dt->decode.raw ? ktev_put_u64(p, v[i]->tid)
					   : (char *)memcpy(p, v[i]->task, v[i]->task_len) + v[i]->task_len;
			*p++ = ' ';
			p = ktev_put_u64_width(p, v[i]->events, 12 + (p < o->p + 24 ? o->p + 24 - p : 0));
			*p++ = '\n';
			out_commit(o, p);
		}
		free(v[i]);
	}
	free(v);
	free(sum->tasks.keys);
	free(sum->tasks.vals);
}

/*
 * What the lost markers cannot say: files whose end was not read, a torn
 * tail (a writer killed mid-record, a live file) or a bad record.  Said
 * only when there are such files.
 */
static void put_ends(struct dtrace *dt, struct outbuf *o)
{
	unsigned int nr_files = kt_merge_nr_files(dt->merge), torn = 0, bad = 0;
	uint64_t torn_bytes = 0;

	for (unsigned int i = 0; i < nr_files; i++) {
		const struct ktfile_reader *f = kt_merge_file(dt->merge, i);

		if (f->bad || f->cut) {
			bad++;
		} else if (f->torn) {
			torn++;
			torn_bytes += f->torn;
		}
	}
	if (torn)
		out_printf(o, "torn        %u file%s cut short at the end: %llu bytes left out\n",
			   torn, torn > 1 ? "s" : "", (unsigned long long)torn_bytes);
	if (bad)
		out_printf(o, "bad         %u file%s not read past a bad record\n", bad,
			   bad > 1 ? "s" : "");
}

static void summary_end(struct dtrace *dt, struct outbuf *o)
{
	struct summary *sum = dt->fmt_state;
	unsigned int nr_files = kt_merge_nr_files(dt->merge);
	uint64_t span = sum->last_ns - sum->first_ns, lost = 0, markers = 0, unknown = 0;

	for (unsigned int i = 0; i < nr_files; i++) {
		lost += sum->files[i].lost;
		markers += sum->files[i].lost_markers;
		unknown += sum->files[i].lost_unknown;
	}
	out_printf(o, "events      %llu in %u files\n", (unsigned long long)sum->events,
		   nr_files);
	out_printf(o, "lost        %llu records (%llu markers)", (unsigned long long)lost,
		   (unsigned long long)markers);
	if (unknown)
		out_printf(o, " and more: %llu markers of an unknown count",
			   (unsigned long long)unknown);
	out_printf(o, "\n");
	put_ends(dt, o);
	out_printf(o, "time span   ");
	put_us(o, span);
	out_printf(o, " us (");
	put_us(o, sum->first_ns);
	out_printf(o, " to ");
	put_us(o, sum->last_ns);
	out_printf(o, ")\n");
	if (span)
		out_printf(o, "rate        %.0f events/s\n", sum->events * 1e9 / span);
	else
		out_printf(o, "rate        -\n");

	out_printf(o, "\n%-24s %12s\n", "group:event", "events");
	for (unsigned int bit = 0; bit < KTRACE_NR_GROUPS; bit++) {
		uint64_t total = 0;

		for (unsigned int sub = 0; sub < 256; sub++)
			total += sum->by_code[bit][sub];
		if (!total)
			continue;
		out_printf(o, "  %-22s %12llu\n", ktev_group_name(bit) ?: "?",
			   (unsigned long long)total);
		for (unsigned int sub = 0; sub < 256; sub++) {
			uint32_t code = (1u << bit) | sub << KTRACE_SUB_SHIFT;
			char *p;

			if (!sum->by_code[bit][sub])
				continue;
			p = out_reserve(o);
			p = memset(p, ' ', 4) + 4;
			p = dtrace_put_name(dt, p, code, 20);
			*p++ = ' ';
			p = ktev_put_u64_width(p, sum->by_code[bit][sub], 12);
			*p++ = '\n';
			out_commit(o, p);
		}
	}
	if (sum->other)
		out_printf(o, "  %-22s %12llu\n", "other",
			   (unsigned long long)sum->other);

	put_tasks(dt, sum, o);

	out_printf(o, "\n%5s %12s %12s %8s  %s\n", "cpu", "events", "lost", "markers",
		   "file");
	for (unsigned int i = 0; i < nr_files; i++) {
		const struct ktfile_reader *f = kt_merge_file(dt->merge, i);
		struct file_counts fc = sum->files[i];

		out_printf(o, "%5.*s %12llu %12llu %8llu  %s", dt->files[i].cpu_len,
			   dt->files[i].cpu, (unsigned long long)fc.events,
			   (unsigned long long)fc.lost, (unsigned long long)fc.lost_markers,
			   f->path);
		if (f->bad || f->cut)
			out_printf(o, "  (ends at a bad record, offset %llu)",
				   (unsigned long long)f->bad_offset);
		else if (f->torn)
			out_printf(o, "  (torn tail, %llu bytes)", (unsigned long long)f->torn);
		out_printf(o, "\n");
	}
	free(sum->files);
	free(sum);
}

const struct dtrace_format dtrace_summary = {
	.name = "summary",
	.start = summary_start,
	.event = summary_event,
	.end = summary_end,
};
