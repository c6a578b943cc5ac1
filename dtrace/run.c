// SPDX-License-Identifier: GPL-2.0
/*
 * dtrace's loop: merge the files, follow the task names, filter, and hand
 * each event to the output format, on this thread or through the pipeline.
 * Apart from main.c so that the fuzzers (tests/fuzz/kstream.h) run the
 * loop dtrace runs, not a copy of it.
 */
#include "calls.h"
#include "dtrace.h"
#include "tasks.h"
#include "util.h"

bool dtrace_task_selected(const struct dtrace *dt, uint32_t pid, uint32_t tid, uint64_t tsc)
{
	if (dt->tids && !(tid < DTRACE_MAX_TIDS && ktev_bit_test(dt->tids, tid)))
		return false;
	if (!dt->pids)
		return true;
	if (!pid)
		pid = tasks_pid(dt->tasks, tid, tsc);
	return pid && pid < DTRACE_MAX_TIDS && ktev_bit_test(dt->pids, pid);
}

/*
 * Where the pipeline's batches are now, for the names table (tasks.h): a
 * naming it drops must outlive every batch that may hold it.
 */
static void tasks_sync(struct dtrace *dt, struct pipeline *pl)
{
	uint64_t filling = 0, written = 1;

	if (pl)
		pipeline_progress(pl, &filling, &written);
	tasks_progress(dt->tasks, filling, written);
}

/*
 * Whether @ev passes the filters; -t and -p only where the format does not
 * pick the tasks itself (DTRACE_FMT_OWN_TASKS).
 */
static bool selected(const struct dtrace *dt, const struct ktfile_reader *f,
		     const struct ktfile_event *ev, uint64_t ns, bool own_tasks)
{
	uint32_t grp = ev->code & KTRACE_GROUP_MASK;

	if (ns < dt->from_ns || !dt->files[f->index].selected)
		return false;
	/* meta records (lost markers) pass -e and -t: they concern every event */
	/* without -t and -p every task is: no call for each event then */
	return !grp || ((grp & dt->mask) &&
			(own_tasks || (!dt->tids && !dt->pids) ||
			 dtrace_task_selected(dt, f->hdr.cpu < 0 ? f->hdr.pid : 0,
					      ev->tid, ev->tsc)));
}

/* A probe hit without BASE.probes: say once where it was looked for. */
static void probes_missing_warn(struct dtrace *dt)
{
	if (dt->probes || !dt->probes_expected || dt->probes_warned)
		return;
	pr_warn("%s: no such file: probe hits print as probe:ID with their words "
		"(--probes FILE names the file)", dt->probes_expected);
	dt->probes_warned = true;
}

void dtrace_format_start(struct dtrace *dt, const struct dtrace_format *fmt)
{
	for (unsigned int i = 0; dt->files && i < kt_merge_nr_files(dt->merge); i++) {
		struct dtrace_file *df = &dt->files[i];

		df->decode = dt->decode;
		if (df->ksyms)
			df->decode.ksyms = df->ksyms;
		if (df->irqs)
			df->decode.irqs = df->irqs;
		df->decode.put_task = tasks_put_names_ctx;
	}
	if (fmt->flags & DTRACE_FMT_CALLS)
		dt->calls = calls_new(dt, fmt->flags & DTRACE_FMT_CALL_EVENTS);
	dt->fmt_state = fmt->start ? fmt->start(dt, &dt->out) : NULL;
}

void dtrace_format_end(struct dtrace *dt, const struct dtrace_format *fmt)
{
	if (fmt->end)
		fmt->end(dt, &dt->out);
	dt->fmt_state = NULL;
	calls_free(dt->calls);
	dt->calls = NULL;
}

/*
 * Merge, filter, hand to the format: on this thread, or packed for the
 * pipeline's workers, with the names of its tasks then.  The names follow
 * every event of the merge, shown or not.  Returns the exit status.
 */
int dtrace_run(struct dtrace *dt, const struct dtrace_format *fmt, unsigned int jobs)
{
	struct pipeline *pl = NULL;
	struct ktfile_reader *f;
	bool first = true;

	dtrace_format_start(dt, fmt);
	/*
	 * @jobs threads: this one merging, the others formatting.  Symbols
	 * of user streams are looked up on this thread only.
	 */
	if ((fmt->flags & DTRACE_FMT_PARALLEL) && jobs > 1 && !dt->user_streams)
		pl = pipeline_start(dt, fmt, jobs - 1);
	while ((f = kt_merge_next(dt->merge))) {
		const struct ktfile_event *ev = &f->ev;
		bool kernel = f->hdr.cpu >= 0;
		uint64_t ns;

		if (first) {
			dt->t0 = ev->tsc;
			first = false;
		}
		ns = ktfile_ns(f, ev->tsc - dt->t0);
		if (ns > dt->to_ns)
			break;
		if (dt->machines)
			tasks_set_machine(dt->tasks, f->machine);
		if (kernel && dt->tasks && tasks_changes(ev)) {
			tasks_sync(dt, pl);
			tasks_follow(dt->tasks, ev);
		}
		if (selected(dt, f, ev, ns, fmt->flags & DTRACE_FMT_OWN_TASKS)) {
			/* with the pipeline, made in its batch: no copy of it */
			struct dtrace_event here, *e = pl ? pipeline_add(pl, ev) : &here;

			if ((ev->code & KTRACE_GROUP_MASK) == KTRACE_GRP_probe)
				probes_missing_warn(dt);
			e->ns = ns;
			e->file = f->index;
			if (!pl)
				e->ev = ev;
			e->desc = tasks_resolve(dt->tasks, ev, &e->names);
			if (!pl)
				fmt->event(dt, &dt->out, e);
		}
		/* after the event: it may have gone into a batch of its own */
		if (kernel && dt->tasks && ev->code == KTRACE_thread_exit) {
			tasks_sync(dt, pl);
			tasks_follow_after(dt->tasks, ev);
		}
	}
	if (pl)
		pipeline_finish(pl);
	dtrace_format_end(dt, fmt);
	return kt_merge_failed(dt->merge) ? 1 : 0;
}
