// SPDX-License-Identifier: GPL-2.0
/*
 * text: one line per event.
 *
 *   CPU  TIME(us)  TASK (comm-tid)  GROUP:EVENT  TEXT
 *     1     12.345             wget-61      sched:switch     context switch from wget-61 to <idle>-0
 *
 * The task is ftrace's comm-tid, as named at that time (tasks.h); --raw
 * prints the thread id alone and every argument as a number.
 *
 * This is dtrace's hot loop, so lines are put together by hand.
 */
#include <string.h>
#include <time.h>

#include "dtrace.h"

#define TIME_WIDTH	12
#define TSC_WIDTH	20
#define COMM_WIDTH	16
#define TID_WIDTH	7	/* and of the tid after it */
#define NAME_WIDTH	16

char *dtrace_put_us(char *p, uint64_t ns, unsigned int width)
{
	return ktev_put_us(p, ns, width);
}

/*
 * Wall clock time, local: "2024-05-01T12:34:56.123456789".  The date part
 * is made once a second, kept in @o (formats run on several threads, each
 * with an outbuf of its own).
 */
static char *put_realtime(char *p, struct outbuf *o, const struct ktfile_reader *f, uint64_t tsc)
{
	const struct ktfile_header *h = &f->hdr;
	uint64_t real = tsc >= h->ref_tsc ? h->ref_real_ns + ktfile_ns(f, tsc - h->ref_tsc)
					  : h->ref_real_ns - ktfile_ns(f, h->ref_tsc - tsc);
	time_t sec = real / 1000000000u;
	unsigned int nsec = real % 1000000000u;

	if (!o->date_len || sec != o->date_sec) {
		struct tm tm;

		localtime_r(&sec, &tm);
		o->date_len = strftime(o->date, sizeof(o->date), "%Y-%m-%dT%H:%M:%S.", &tm);
		o->date_sec = sec;
	}
	memcpy(p, o->date, o->date_len);
	p += o->date_len;
	for (int i = 8; i >= 0; i--, nsec /= 10)
		p[i] = '0' + nsec % 10;
	return p + 9;
}

/* How @e decodes: its file's way (dtrace_format_start()), its tasks named as they were then. */
static struct ktev_ctx event_ctx(const struct dtrace *dt, const struct dtrace_event *e)
{
	struct ktev_ctx ctx = dt->files[e->file].decode;

	ctx.tsc = e->ev->tsc;
	ctx.tasks = &e->names;
	return ctx;
}

char *dtrace_put_text(const struct dtrace *dt, char *p, const struct dtrace_event *e)
{
	struct ktev_ctx ctx = event_ctx(dt, e);

	if ((e->ev->code & KTRACE_GROUP_MASK) == KTRACE_GRP_probe)
		return probes_put_text(dt->files[e->file].probes ?: dt->probes, p, e->ev,
				       PROBE_TEXT_MAX);

	return sym_put_text(p, dt->files[e->file].proc, e->ev, &ctx);
}

/*
 * dtrace_put_event()'s body: the text listing has it inlined (a call and
 * its prologue less a line), every other view calls it.
 */
static inline __attribute__((always_inline)) char *
put_event(const struct dtrace *dt, char *p, const struct dtrace_event *e, unsigned int width)
{
	const struct ktfile_event *ev = e->ev;
	struct sym_proc *proc = dt->files[e->file].proc;
	struct ktev_ctx ctx = event_ctx(dt, e);

	if ((ev->code & KTRACE_GROUP_MASK) == KTRACE_GRP_probe)	/* named by BASE.probes */
		return probes_put_event(dt->files[e->file].probes ?: dt->probes, p, ev, width);
	if (proc)		/* user events the program named, calls */
		return sym_put_event(p, proc, ev, width, &ctx);
	/* the merge thread looked it up for its tasks (tasks_resolve()) */
	if (e->desc)
		return ktev_put_desc_name_text(p, &ktev_events[e->desc - 1], width, ev->args,
					       ev->nr_args, &ctx);
	return ktev_put_name_text(p, ev->code, width, ev->args, ev->nr_args, &ctx);
}

char *dtrace_put_event(const struct dtrace *dt, char *p, const struct dtrace_event *e,
		       unsigned int width)
{
	return put_event(dt, p, e, width);
}

char *dtrace_put_name(const struct dtrace *dt, char *p, uint32_t code, unsigned int width)
{
	return probes_put_name(dt->probes, p, code, width);
}

char *dtrace_put_time(const struct dtrace *dt, char *p, struct outbuf *o,
		      const struct dtrace_event *e)
{
	if (dt->tsc)
		return ktev_put_u64_width(p, e->ev->tsc, TSC_WIDTH);
	if (dt->absolute)
		return put_realtime(p, o, kt_merge_file(dt->merge, e->file), e->ev->tsc);
	return ktev_put_us(p, e->ns, TIME_WIDTH);
}

static void text_event(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e)
{
	const struct ktfile_event *ev = e->ev;
	const struct dtrace_file *df = &dt->files[e->file];
	char *p = out_reserve(o);

	if (df->machine) {	/* several machines: whose it is, first */
		unsigned int width = machines_width(dt);

		memcpy(p, df->machine, df->machine_len);
		memset(p + df->machine_len, ' ', width + 1 - df->machine_len);
		p += width + 1;
	}
	memcpy(p, df->cpu, sizeof(df->cpu));	/* whole: a constant-size copy */
	p += df->cpu_len;
	*p++ = ' ';
	/* the time since the first event, as dtrace_put_time() has it, without its call */
	if (!dt->tsc && !dt->absolute)
		p = ktev_put_us(p, e->ns, TIME_WIDTH);
	else
		p = dtrace_put_time(dt, p, o, e);
	*p++ = ' ';
	if (dt->decode.raw) {
		p = ktev_put_u64_width(p, ev->tid, TID_WIDTH);
	} else if (ev->code & KTRACE_GROUP_MASK) {
		p = tasks_put_named(&e->names, p, ev->tid, COMM_WIDTH);
	} else {		/* a meta record is no task's: "-", as a user stream's CPU */
		memset(p, ' ', COMM_WIDTH + 1 + TID_WIDTH);
		p[COMM_WIDTH] = '-';
		p += COMM_WIDTH + 1 + TID_WIDTH;
	}
	*p++ = ' ';
	p = put_event(dt, p, e, NAME_WIDTH);
	*p++ = '\n';
	out_commit(o, p);
}

const struct dtrace_format dtrace_text = {
	.name = "text",
	.flags = DTRACE_FMT_PARALLEL | DTRACE_FMT_RAW_NAMELESS,
	.event = text_event,
};
