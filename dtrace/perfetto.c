// SPDX-License-Identifier: GPL-2.0
/*
 * perfetto: --format=perfetto-json writes Chrome's Trace Event Format (JSON),
 * which ui.perfetto.dev, chrome://tracing and speedscope open:
 *
 *   - a process "CPUs" with a track per CPU, with a slice for each task
 *     that ran there, from the context switches;
 *   - the function calls of user threads (func:*) as nested
 *     slices on the thread's track;
 *   - every other event an instant on its thread's track (the CPU's for
 *     tid 0), with the decoded text and the fields (fields.h) as args;
 *   - lost records an instant "lost records" with the count on their
 *     stream's track;
 *   - thread and process names from the user streams' headers and the
 *     kernel's thread:name events (fork, exec, renames, ktrace's dump of
 *     every task at the start), and for a task forked by a named one, its
 *     parent's name (fork keeps the comm); a CPU's slice is named as the
 *     task was at that time (comm-tid, tasks.h).
 *
 * Times are microseconds after the first event with ns precision, as
 * dtrace prints them.  The JSON goes out as the events come, but for the
 * calls: calls.c keeps them and replays them at the end, as it does for
 * --calltree and --flat, so the slices are the same calls with the same
 * repairs ("repaired" says why a slice begins or ends where the trace
 * has no record of it; an exit that matches no call is an instant "exit
 * without entry").  Each thread's slices are in time order.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "dtrace.h"
#include "escape.h"
#include "fields.h"
#include "symbols.h"
#include "util.h"

/* The CPUs' process: above any pid (PID_MAX_LIMIT); CPU n is thread CPU_PID + n. */
#define CPU_PID		(1u << 22)
#define NAME_MAX_LEN	512	/* longer names are cut: a line has room for one */

struct pf_file {
	bool user;
	bool running;		/* CPU: a task's slice is open */
	uint32_t pid, tid;	/* the track: a user thread's, or a CPU's */
};

struct pf {
	bool any;		/* an event is out: the next needs a comma */
	uint64_t last_ns;
	struct pf_file *files;	/* by file index */
	unsigned int nr_files;
	struct fields *fields;	/* the event table's, by index */
	char event[KTEV_TEXT_MAX + 1];	/* the event being written, as dtrace_put_event() */
};

/* ---- JSON ------------------------------------------------------------------ */

/* @s (at most @max bytes of it) as a JSON string: valid UTF-8, escaped. */
static char *put_str(char *p, const char *s, size_t max)
{
	*p++ = '"';
	p = kt_escape(p, KT_ESC_MAX(max), s, max, KT_ESC_JSON);
	*p++ = '"';
	return p;
}

static char *put_lit(char *p, const char *s)
{
	size_t len = strlen(s);

	memcpy(p, s, len);
	return p + len;
}

static char *put_hex_str(char *p, uint64_t v)
{
	p = put_lit(p, "\"0x");
	p = ktev_put_hex(p, v);
	*p++ = '"';
	return p;
}

/*
 * The start of an event, up to the "ts" or "args" that follow:
 * {"ph":"i","name":"...","pid":1,"tid":2
 */
static char *put_head(struct pf *pf, struct outbuf *o, char ph, const char *name,
		      uint32_t pid, uint32_t tid)
{
	char *p = out_reserve(o);

	if (pf->any)
		p = put_lit(p, ",\n");
	pf->any = true;
	p = put_lit(p, "{\"ph\":\"");
	*p++ = ph;
	p = put_lit(p, "\",\"name\":");
	p = put_str(p, name, NAME_MAX_LEN);
	p = put_lit(p, ",\"pid\":");
	p = ktev_put_u64(p, pid);
	p = put_lit(p, ",\"tid\":");
	return ktev_put_u64(p, tid);
}

static char *put_ts(char *p, uint64_t ns)
{
	p = put_lit(p, ",\"ts\":");
	return dtrace_put_us(p, ns, 0);
}

/* A metadata event: thread_name, process_name, *_sort_index. */
static void put_meta(struct pf *pf, struct outbuf *o, const char *what, uint32_t pid,
		     uint32_t tid, const char *name, int sort_index)
{
	char *p = put_head(pf, o, 'M', what, pid, tid);

	p = put_lit(p, ",\"args\":{");
	if (name) {
		p = put_lit(p, "\"name\":");
		p = put_str(p, name, NAME_MAX_LEN);
	} else {
		p = put_lit(p, "\"sort_index\":");
		if (sort_index < 0)
			*p++ = '-';
		p = ktev_put_u64(p, sort_index < 0 ? -sort_index : sort_index);
	}
	out_commit(o, put_lit(p, "}}"));
}

/* ---- threads and their names ----------------------------------------------- */

/*
 * A task's name as tasks.c had it at event @e (among @e->names, as every
 * view has it): a thread_name, and a process_name for a main thread.
 */
static void put_task_meta(struct pf *pf, struct outbuf *o, const struct dtrace_event *e,
			  uint32_t tid)
{
	char comm[KT_ESC_MAX(KTRACE_COMM_LEN) + 1];
	uint32_t pid;
	size_t len;
	const char *n = tid ? tasks_named_comm(&e->names, tid, &len, &pid) : NULL;

	if (!n)
		return;
	memcpy(comm, n, len);
	comm[len] = '\0';
	if (!pid)
		pid = tid;
	if (tid == pid)
		put_meta(pf, o, "process_name", pid, pid, comm, 0);
	put_meta(pf, o, "thread_name", pid, tid, comm, 0);
}

/*
 * Whether user stream @i names its process: its main thread's stream
 * does, else the first stream of the process (-c or not) with none of
 * the main thread's before it.
 */
static bool names_process(struct dtrace *dt, unsigned int i)
{
	const struct ktfile_header *h = &kt_merge_file(dt->merge, i)->hdr;

	if (h->tid == h->pid)
		return true;
	for (unsigned int j = 0; j < i; j++) {
		const struct ktfile_header *o = &kt_merge_file(dt->merge, j)->hdr;

		if (o->cpu < 0 && o->tid &&
		    (o->tid == h->pid || (o->pid == h->pid && dt->files[j].selected)))
			return false;
	}
	return true;
}

/* The tracks: the CPUs', and the named threads from the user streams' headers. */
static void *perfetto_start(struct dtrace *dt, struct outbuf *o)
{
	struct pf *pf = xcalloc(1, sizeof(*pf));
	char name[32];

	pf->fields = fields_table();
	pf->nr_files = kt_merge_nr_files(dt->merge);
	pf->files = xcalloc(pf->nr_files, sizeof(*pf->files));
	out_printf(o, "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n");
	put_meta(pf, o, "process_name", CPU_PID, CPU_PID, "CPUs", 0);
	put_meta(pf, o, "process_sort_index", CPU_PID, CPU_PID, NULL, -1);
	for (unsigned int i = 0; i < pf->nr_files; i++) {
		const struct ktfile_header *h = &kt_merge_file(dt->merge, i)->hdr;
		struct pf_file *f = &pf->files[i];

		f->user = h->cpu < 0;
		if (!f->user) {
			f->pid = CPU_PID;
			f->tid = CPU_PID + h->cpu;
			if (!dt->files[i].selected)
				continue;
			snprintf(name, sizeof(name), "CPU %d", h->cpu);
			put_meta(pf, o, "thread_name", f->pid, f->tid, name, 0);
			put_meta(pf, o, "thread_sort_index", f->pid, f->tid, NULL, h->cpu);
			continue;
		}
		f->pid = h->pid;
		f->tid = h->tid;
		if (!h->tid || !dt->files[i].selected)
			continue;
		/* the process is named by its main thread, else its first stream */
		if (names_process(dt, i))
			put_meta(pf, o, "process_name", h->pid, h->pid, h->comm, 0);
		put_meta(pf, o, "thread_name", h->pid, h->tid, h->comm, 0);
	}
	return pf;
}

/* ---- events ---------------------------------------------------------------- */

static void put_slice_end(struct outbuf *o, const struct pf_file *f, uint64_t ns,
			  const char *note)
{
	char *p = out_reserve(o);

	p = put_lit(p, ",\n{\"ph\":\"E\",\"pid\":");
	p = ktev_put_u64(p, f->pid);
	p = put_lit(p, ",\"tid\":");
	p = ktev_put_u64(p, f->tid);
	p = put_ts(p, ns);
	if (note) {
		p = put_lit(p, ",\"args\":{\"repaired\":");
		p = put_str(p, note, NAME_MAX_LEN);
		*p++ = '}';
	}
	out_commit(o, put_lit(p, "}"));
}

/* An instant event; @args: the inside of its "args" object. */
static char *put_instant(struct pf *pf, struct outbuf *o, const char *name, uint32_t pid,
			 uint32_t tid, uint64_t ns)
{
	char *p = put_head(pf, o, 'i', name, pid, tid);

	p = put_lit(p, ",\"s\":\"t\"");
	p = put_ts(p, ns);
	return put_lit(p, ",\"args\":{");
}

/*
 * A CPU's slice for the task @e switches to: named as the listing names
 * it ("wget-61"), "task 61" if unnamed.
 */
static void cpu_switch(struct pf *pf, struct outbuf *o, struct pf_file *f,
		       const struct dtrace_event *e, uint64_t ns, uint32_t next)
{
	char name[KTEV_TASK_MAX + 1], *p;
	uint32_t pid;
	size_t len;

	if (f->running)
		put_slice_end(o, f, ns, NULL);
	f->running = next != 0;		/* the idle task is no slice */
	if (!next)
		return;
	if (tasks_named_comm(&e->names, next, &len, &pid))
		*tasks_put_named(&e->names, name, next, 0) = '\0';
	else
		snprintf(name, sizeof(name), "task %u", next);
	p = put_head(pf, o, 'B', name, f->pid, f->tid);
	p = put_ts(p, ns);
	p = put_lit(p, ",\"args\":{\"tid\":");
	p = ktev_put_u64(p, next);
	out_commit(o, put_lit(p, "}}"));
}

/* Where the replay of the calls writes. */
struct pf_walk {
	struct pf *pf;
	struct outbuf *o;
};

/* A step of a thread's calls (calls.c) as a slice's begin or end. */
static void call_step(void *ctx, struct call_thread *t, const struct call_step *s)
{
	const struct pf_walk *w = ctx;
	struct pf *pf = w->pf;
	struct outbuf *o = w->o;
	char *p;

	switch (s->kind) {
	case STEP_ENTER:
		p = put_head(pf, o, 'B', s->fn->name, t->pid, t->tid);
		p = put_ts(p, s->ns);
		p = put_lit(p, ",\"args\":{\"from\":");
		p = put_hex_str(p, s->site);
		if (s->repair) {
			p = put_lit(p, ",\"repaired\":");
			p = put_str(p, calls_repair_text[s->repair], NAME_MAX_LEN);
		}
		out_commit(o, put_lit(p, "}}"));
		break;
	case STEP_EXIT:
		p = put_lit(out_reserve(o), ",\n{\"ph\":\"E\",\"pid\":");
		p = ktev_put_u64(p, t->pid);
		p = put_lit(p, ",\"tid\":");
		p = ktev_put_u64(p, t->tid);
		p = put_ts(p, s->ns);
		if (s->repair) {
			p = put_lit(p, ",\"args\":{\"repaired\":");
			p = put_str(p, calls_repair_text[s->repair], NAME_MAX_LEN);
			*p++ = '}';
		}
		out_commit(o, put_lit(p, "}"));
		break;
	case STEP_NOTE:
		if (!s->fn)
			break;	/* lost records: their instant went out in time */
		p = put_instant(pf, o, "exit without entry", t->pid, t->tid, s->ns);
		p = put_lit(p, "\"function\":");
		p = put_str(p, s->fn->name, NAME_MAX_LEN);
		out_commit(o, put_lit(p, "}}"));
		break;
	case STEP_EVENT:
		break;
	}
}

/* A probe hit's values: numbers, strings, null where missing (probes.h). */
static void put_probe_fields(struct outbuf *o, const struct probe *pr,
			     const struct ktfile_event *ev)
{
	char *p = put_lit(out_reserve(o), ",\"fields\":{");

	for (unsigned int i = 0; i < pr->nr_values; i++) {
		const struct probe_value *pv = &pr->values[i];
		char str[KTRACE_PROBE_MAX_STR + 4];
		uint64_t v;

		out_commit(o, p);
		p = out_reserve(o);
		if (i)
			*p++ = ',';
		p = put_str(p, pv->name, PROBE_VALUE_NAME_MAX);
		*p++ = ':';
		if (!probe_value(pr, ev, i, &v, str))
			p = put_lit(p, "null");
		else if (pv->type == PROBE_STR)
			p = put_str(p, str, v);
		else if (pv->type == PROBE_SIGNED && (int64_t)v < 0 && -v < (1ull << 53))
			p = ktev_put_u64(put_lit(p, "-"), -v);
		/* numbers past 2^53 would lose digits in JSON readers */
		else if (pv->type == PROBE_HEX || v >> 53)
			p = put_hex_str(p, v);
		else
			p = ktev_put_u64(p, v);
	}
	out_commit(o, put_lit(p, "}"));
}

/* Any other event: an instant with the text and the fields. */
static void put_event(struct pf *pf, struct outbuf *o, const struct dtrace_event *e,
		      const char *event, const struct probe *probe)
{
	const struct ktfile_event *ev = e->ev;
	const struct pf_file *f = &pf->files[e->file];
	const struct ktev_desc *d = ktev_lookup(ev->code);
	const struct fields *fs = d ? fields_of(pf->fields, d) : NULL;
	/* a probe's name may have spaces (C++): its length is the table's */
	const char *text = probe ? event + strlen(probe->shown) : strchr(event, ' ');
	char name[KTEV_NAME_MAX + 256], *p;
	uint32_t pid = f->pid, tid = f->tid;
	size_t len;

	/* a kernel event is its thread's; tid 0 (idle, interrupts) stays on the CPU */
	if (!f->user && ev->tid) {
		const char *comm = tasks_named_comm(&e->names, ev->tid, &len, &pid);

		tid = ev->tid;
		if (!comm || !pid)
			pid = tid;
	}
	/* "group:event text" as every view says it: the program's name of a user event */
	len = text ? (size_t)(text - event) : strlen(event);
	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, event, len);
	name[len] = '\0';
	text = text ? text + 1 : "";
	p = put_instant(pf, o, name, pid, tid, e->ns);
	if (!f->user) {
		p = put_lit(p, "\"cpu\":");
		p = ktev_put_u64(p, f->tid - CPU_PID);
		*p++ = ',';
	}
	p = put_lit(p, "\"text\":");
	out_commit(o, p);
	p = put_str(out_reserve(o), text, KTEV_TEXT_MAX);
	/* fields in an object of their own: a field may be called "cpu" too */
	if (fs && fs->nr_args == ev->nr_args) {
		p = put_lit(p, ",\"fields\":{");
		for (unsigned int i = 0; i < fs->nr; i++) {
			const struct field *fl = &fs->f[i];
			uint64_t v = field_value(fl, ev->args);

			if (i)
				*p++ = ',';
			p = put_str(p, fl->name, FIELD_NAME_MAX);
			*p++ = ':';
			/* numbers past 2^53 would lose digits in JSON readers */
			if (fl->type == FIELD_STRING) {
				const char *str;
				size_t len = field_string(fl, ev->args, ev->nr_args, &str);

				p = put_str(p, str, len);
			} else if (fl->type == FIELD_S32 && (int64_t)v < 0) {
				*p++ = '-';
				p = ktev_put_u64(p, -v);
			} else if (fl->type == FIELD_X32 || fl->type == FIELD_X64 || v >> 53) {
				p = put_hex_str(p, v);
			} else {
				p = ktev_put_u64(p, v);
			}
		}
		*p++ = '}';
	} else if (probe) {
		out_commit(o, p);
		put_probe_fields(o, probe, ev);
		p = out_reserve(o);
	} else {
		p = put_lit(p, ",\"code\":");
		p = put_hex_str(p, ev->code);
		p = put_lit(p, ",\"args\":[");
		for (unsigned int i = 0; i < ev->nr_args; i++) {
			out_commit(o, p);
			p = out_reserve(o);
			if (i)
				*p++ = ',';
			p = put_hex_str(p, ev->args[i]);
		}
		*p++ = ']';
	}
	out_commit(o, put_lit(p, "}}"));
}

static void perfetto_event(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e)
{
	struct pf *pf = dt->fmt_state;
	const struct ktfile_event *ev = e->ev;
	struct pf_file *f = &pf->files[e->file];
	uint64_t lost;
	char *p;

	pf->last_ns = e->ns;
	if (ktev_lost_count(ev->code, ev->args, ev->nr_args, &lost)) {
		if (f->user)
			calls_event(dt, o, e);	/* where the calls have a gap */
		p = put_instant(pf, o, "lost records", f->pid, f->tid, e->ns);
		if (lost == KTEV_LOST_UNKNOWN) {
			p = put_lit(p, "\"count\":\"unknown\"");
		} else {
			p = put_lit(p, "\"count\":");
			p = ktev_put_u64(p, lost);
		}
		out_commit(o, put_lit(p, "}}"));
		return;
	}
	if (f->user && (ev->code & KTRACE_GROUP_MASK) == KTRACE_GRP_func &&
	    sym_call_event(ev, &(struct sym_call_event){ 0 })) {
		calls_event(dt, o, e);
		return;
	}
	if (ev->code == KTRACE_sched_switch && ev->nr_args >= 2 && !f->user) {
		cpu_switch(pf, o, f, e, e->ns, ev->args[1]);
		return;
	}
	/* a fork's child (named as its parent), a task named or renamed */
	if (ev->code == KTRACE_thread_fork && ev->nr_args == 2 && !f->user)
		put_task_meta(pf, o, e, ev->args[1]);
	if (ev->code == KTRACE_thread_name && ev->nr_args && !f->user)
		put_task_meta(pf, o, e, ev->args[0]);
	*dtrace_put_event(dt, pf->event, e, 0) = '\0';
	put_event(pf, o, e, pf->event, probes_get(dt->probes, ev->code));
}

static void perfetto_end(struct dtrace *dt, struct outbuf *o)
{
	struct pf *pf = dt->fmt_state;
	struct pf_walk w = { pf, o };
	struct call_thread **threads;
	unsigned int nr = 0;

	for (unsigned int i = 0; i < pf->nr_files; i++)
		if (pf->files[i].running)
			put_slice_end(o, &pf->files[i], pf->last_ns, NULL);
	threads = calls_has_threads(dt->calls) ? calls_threads(dt->calls, &nr) : NULL;
	for (unsigned int i = 0; i < nr; i++)
		calls_walk(dt->calls, threads[i], call_step, &w);
	out_printf(o, "\n]}\n");
	free(pf->files);
	free(pf->fields);
	free(pf);
}

const struct dtrace_format dtrace_perfetto = {
	.name = "perfetto-json",
	.flags = DTRACE_FMT_CALLS,
	.start = perfetto_start,
	.event = perfetto_event,
	.end = perfetto_end,
};
