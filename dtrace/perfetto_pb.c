// SPDX-License-Identifier: GPL-2.0
/*
 * perfetto_pb: --format=perfetto writes Perfetto's own trace format: the
 * protobuf messages of Perfetto's trace.proto, which ui.perfetto.dev and
 * trace_processor read natively (no legacy JSON importer).  The messages
 * and fields written are listed once, with Perfetto's field numbers, in
 * enum pb_field below; dtrace/perfetto_trace.proto is the same subset as a
 * schema, for `protoc --decode` (tests/host/57-dtrace-perfetto-pb.sh).
 *
 *   - per CPU, ftrace event bundles: context switches and wakeups in the
 *     compact_sched encoding (columns of varints, the first time stamp
 *     absolute and the others deltas, the comms interned per bundle);
 *     forks and exits as sched_process_fork and sched_process_exit; every
 *     other kernel event a GenericFtraceEvent named as the listing names
 *     it, with the fields of fields.h; the bundle after lost records has
 *     lost_events set;
 *   - thread and process names as ProcessTree packets, when the kernel
 *     names a task (thread:name) and from the user streams' headers;
 *   - user threads: a track each (TrackDescriptor), their function calls
 *     as slices (replayed at the end by calls.c, as for --calltree, with
 *     the same repairs) and their other events as instants with the text
 *     and the fields as debug annotations; names interned per sequence;
 *   - a ClockSnapshot: time stamps are the recording's CLOCK_MONOTONIC in
 *     ns, given as Perfetto's boot clock, tied to the wall clock; and
 *     SystemInfo with the kernel release.
 *
 * sched:switch has the previous task's state (sched_switch's prev_state,
 * as Perfetto wants it) and the next one's priority; in a file from before
 * the kernel recorded them, the compact_sched columns say state 0x8000
 * (which Perfetto takes as invalid: unknown, rather than a made-up state)
 * and priority 0.
 *
 * A nested message's length is written before its contents are known as
 * a four-byte varint (padded with continuation bits, which every protobuf
 * reader accepts) and patched at its end, as Perfetto's own writer does;
 * a packet is built whole in memory and then copied out.
 */
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "dtrace.h"
#include "escape.h"
#include "fields.h"
#include "probes.h"
#include "symbols.h"
#include "util.h"

/* Perfetto's field numbers (protos/perfetto/trace/...), message by message. */
enum pb_field {
	TRACE_PACKET = 1,			/* Trace */
	PKT_TIMESTAMP = 8,			/* TracePacket */
	PKT_SEQUENCE_ID = 10,
	PKT_MACHINE_ID = 98,
	PKT_SEQUENCE_FLAGS = 13,
	PKT_INTERNED_DATA = 12,
	PKT_FTRACE_EVENTS = 1,
	PKT_PROCESS_TREE = 2,
	PKT_CLOCK_SNAPSHOT = 6,
	PKT_TRACK_EVENT = 11,
	PKT_TRACK_DESCRIPTOR = 60,
	PKT_SYSTEM_INFO = 45,
	SEQ_INCREMENTAL_STATE_CLEARED = 1,	/* TracePacket.SequenceFlags */
	SEQ_NEEDS_INCREMENTAL_STATE = 2,
	CLOCKS = 1,				/* ClockSnapshot */
	CLOCK_ID = 1, CLOCK_TIMESTAMP = 2,	/* ClockSnapshot.Clock */
	CLOCK_REALTIME = 1, CLOCK_MONOTONIC = 3, CLOCK_BOOTTIME = 6,
	SYSINFO_UTSNAME = 1,			/* SystemInfo */
	UTS_SYSNAME = 1, UTS_RELEASE = 3,	/* Utsname */
	BUNDLE_CPU = 1,				/* FtraceEventBundle */
	BUNDLE_EVENT = 2,
	BUNDLE_LOST_EVENTS = 3,
	BUNDLE_COMPACT_SCHED = 4,
	CS_SWITCH_TIMESTAMP = 1,		/* FtraceEventBundle.CompactSched */
	CS_SWITCH_PREV_STATE = 2,
	CS_SWITCH_NEXT_PID = 3,
	CS_SWITCH_NEXT_PRIO = 4,
	CS_INTERN_TABLE = 5,
	CS_SWITCH_NEXT_COMM_INDEX = 6,
	CS_WAKING_TIMESTAMP = 7,
	CS_WAKING_PID = 8,
	CS_WAKING_TARGET_CPU = 9,
	CS_WAKING_PRIO = 10,
	CS_WAKING_COMM_INDEX = 11,
	CS_WAKING_COMMON_FLAGS = 12,
	FT_TIMESTAMP = 1,			/* FtraceEvent */
	FT_PID = 2,
	FT_SOFTIRQ_ENTRY = 24, FT_SOFTIRQ_EXIT = 25, FT_SOFTIRQ_RAISE = 26,
	FT_SCHED_PROCESS_EXIT = 238,
	FT_SCHED_PROCESS_FORK = 239,
	FT_GENERIC = 327,
	FT_SYS_ENTER = 329, FT_SYS_EXIT = 330,
	FT_SCHED_MIGRATE_TASK = 491,
	SYS_ID = 1, SYS_ENTER_ARGS = 2, SYS_EXIT_RET = 2,	/* Sys{Enter,Exit}FtraceEvent */
	SOFTIRQ_VEC = 1,			/* Softirq{Entry,Exit,Raise}FtraceEvent */
	MIGRATE_PID = 2, MIGRATE_DEST_CPU = 5,	/* SchedMigrateTaskFtraceEvent */
	EXIT_COMM = 1, EXIT_PID = 2, EXIT_TGID = 3,	/* SchedProcessExitFtraceEvent */
	FORK_PARENT_COMM = 1, FORK_PARENT_PID = 2,	/* SchedProcessForkFtraceEvent */
	FORK_CHILD_COMM = 3, FORK_CHILD_PID = 4,
	GEN_EVENT_NAME = 1, GEN_FIELD = 2,	/* GenericFtraceEvent */
	GF_NAME = 1, GF_STR = 3, GF_INT = 4, GF_UINT = 5,	/* GenericFtraceEvent.Field */
	PT_PROCESSES = 1, PT_THREADS = 2,	/* ProcessTree */
	PROC_PID = 1, PROC_CMDLINE = 3, PROC_CMDLINE_IS_COMM = 9,	/* ProcessTree.Process */
	THR_TID = 1, THR_NAME = 2, THR_TGID = 3,	/* ProcessTree.Thread */
	TD_UUID = 1, TD_NAME = 2, TD_THREAD = 4,	/* TrackDescriptor */
	THD_PID = 1, THD_TID = 2, THD_NAME = 5,	/* ThreadDescriptor */
	TE_DEBUG_ANNOTATIONS = 4,		/* TrackEvent */
	TE_TYPE = 9,
	TE_NAME_IID = 10,
	TE_TRACK_UUID = 11,
	TE_SLICE_BEGIN = 1, TE_SLICE_END = 2, TE_INSTANT = 3,	/* TrackEvent.Type */
	DA_UINT = 3, DA_INT = 4, DA_STRING = 6, DA_NAME = 10,	/* DebugAnnotation */
	ID_EVENT_NAMES = 2,			/* InternedData */
	EN_IID = 1, EN_NAME = 2,		/* EventName */
};

enum { WT_VARINT = 0, WT_LEN = 2 };

/*
 * The kernel events Perfetto has a message of its own for, whose arguments
 * all fit its fields: the UI draws them (system calls as slices on the
 * thread's track).  @arg: the field each argument goes to, 0 for none (an
 * argument the format does not print, always zero); @sign: argument 2 is
 * a 32-bit signed number.  The rest are GenericFtraceEvents.
 */
static const struct native_event {
	uint32_t code;
	uint16_t event;
	uint8_t arg[2];
	bool sign;
} native_events[] = {
	{ KTRACE_syscall_entry, FT_SYS_ENTER, { SYS_ID, SYS_ENTER_ARGS }, false },
	{ KTRACE_syscall_exit, FT_SYS_EXIT, { SYS_ID, SYS_EXIT_RET }, true },
	{ KTRACE_softirq_entry, FT_SOFTIRQ_ENTRY, { SOFTIRQ_VEC, 0 }, false },
	{ KTRACE_softirq_exit, FT_SOFTIRQ_EXIT, { SOFTIRQ_VEC, 0 }, false },
	{ KTRACE_softirq_raise, FT_SOFTIRQ_RAISE, { SOFTIRQ_VEC, 0 }, false },
	{ KTRACE_sched_migrate, FT_SCHED_MIGRATE_TASK, { MIGRATE_PID, MIGRATE_DEST_CPU }, false },
};

#define TASK_STATE_UNKNOWN	0x8000	/* no TASK_REPORT bit: Perfetto's "invalid" */
#define BUNDLE_EVENTS		1024	/* events a bundle holds before it goes out */
#define SEQ_TRACKS		1	/* the sequence of the track events */
#define SEQ_SYSTEM		2	/* clock, names, ftrace bundles */

/* ---- protobuf encoding ---------------------------------------------------- */

struct pb {
	uint8_t *buf;
	size_t len, cap;
};

static uint8_t *pb_room(struct pb *b, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = (b->len + n) * 2 + 256;
		b->buf = xrealloc(b->buf, b->cap);
	}
	return b->buf + b->len;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	uint8_t *p = pb_room(b, 10), *s = p;

	while (v >= 0x80) {
		*p++ = (uint8_t)v | 0x80;
		v >>= 7;
	}
	*p++ = v;
	b->len += p - s;
}

static void pb_tag(struct pb *b, unsigned int field, unsigned int wire)
{
	pb_varint(b, (uint64_t)field << 3 | wire);
}

/* An integer field; a negative int32/int64 is its 64-bit two's complement. */
static void pb_uint(struct pb *b, unsigned int field, uint64_t v)
{
	pb_tag(b, field, WT_VARINT);
	pb_varint(b, v);
}

static void pb_bytes(struct pb *b, unsigned int field, const void *s, size_t n)
{
	pb_tag(b, field, WT_LEN);
	pb_varint(b, n);
	memcpy(pb_room(b, n), s, n);
	b->len += n;
}

/*
 * Bytes from the trace (a comm, a probe's string) as a string field: as
 * the text views show them (KT_ESC_TEXT: valid UTF-8, \xNN for the rest),
 * at most PB_TEXT_MAX of them.
 */
#define PB_TEXT_MAX	256
static void pb_text(struct pb *b, unsigned int field, const char *s, size_t len)
{
	char buf[KT_ESC_MAX(PB_TEXT_MAX)];

	if (len > PB_TEXT_MAX)
		len = PB_TEXT_MAX;
	pb_bytes(b, field, buf, kt_escape(buf, sizeof(buf), s, len, KT_ESC_TEXT) - buf);
}

/* A string of dtrace's own (a name it made or decoded): NUL-terminated. */
static void pb_str(struct pb *b, unsigned int field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

/* Open a nested message: its length, four bytes, is patched by pb_end(). */
static size_t pb_begin(struct pb *b, unsigned int field)
{
	pb_tag(b, field, WT_LEN);
	pb_room(b, 4);
	b->len += 4;
	return b->len;
}

static void pb_end(struct pb *b, size_t start)
{
	size_t n = b->len - start;
	uint8_t *p = b->buf + start - 4;

	if (n >= 1u << 28)
		die("perfetto: a message of %zu bytes", n);
	p[0] = (n & 0x7f) | 0x80;
	p[1] = (n >> 7 & 0x7f) | 0x80;
	p[2] = (n >> 14 & 0x7f) | 0x80;
	p[3] = n >> 21;
}

/* A packed repeated field from the varints already encoded in @col. */
static void pb_packed(struct pb *b, unsigned int field, const struct pb *col)
{
	if (col->len)
		pb_bytes(b, field, col->buf, col->len);
}

/* ---- state ------------------------------------------------------------------ */

/* A CPU's bundle being filled. */
struct pb_cpu {
	int cpu;
	unsigned int machine;		/* its file's (machines.c), 0: the first */
	unsigned int nr;		/* events in it */
	bool lost;			/* records were lost before its first */
	struct pb events;		/* encoded FtraceEvents (BUNDLE_EVENT fields) */
	struct pb sw_ts, sw_state, sw_pid, sw_prio, sw_comm;	/* compact_sched columns */
	struct pb wk_ts, wk_pid, wk_cpu, wk_prio, wk_comm, wk_flags;
	uint64_t last_sw_ns, last_wk_ns;
	char (*comms)[KTRACE_COMM_LEN + 1];	/* the bundle's intern table */
	unsigned int nr_comms;
};

struct pbt {
	uint64_t mono0;			/* CLOCK_MONOTONIC of ns 0 */
	unsigned int machine;		/* of the packets being written: their machine_id */
	bool clock_out;
	bool seq_started;		/* SEQ_TRACKS had its first packet */
	struct pb pkt;			/* the packet being built */
	struct pb_cpu *cpus;		/* by file index; NULL for a user stream */
	unsigned int nr_files;
	struct fields *fields;
	uint64_t *tracks;		/* tids with a TrackDescriptor out, sorted */
	unsigned int nr_tracks;
	unsigned int nr_names;		/* interned event names: iids 1..nr_names */
	struct name_iid { const char *name; uint64_t iid; } *by_name;	/* hash, open addressing */
	unsigned int hash_size;
	char event[KTEV_TEXT_MAX + 1];
};

/* ---- packets -------------------------------------------------------------- */

static struct pb *packet_begin(struct pbt *t, uint64_t ns, unsigned int seq)
{
	t->pkt.len = 0;
	if (ns != UINT64_MAX)
		pb_uint(&t->pkt, PKT_TIMESTAMP, t->mono0 + ns);
	pb_uint(&t->pkt, PKT_SEQUENCE_ID, seq);
	/* several machines: Perfetto keeps each one's CPUs and processes apart */
	if (t->machine)
		pb_uint(&t->pkt, PKT_MACHINE_ID, t->machine);
	return &t->pkt;
}

/* The packet as one Trace.packet field. */
static void packet_end(struct pbt *t, struct outbuf *o)
{
	uint8_t head[16];
	struct pb h = { head, 0, sizeof(head) };

	pb_tag(&h, TRACE_PACKET, WT_LEN);
	pb_varint(&h, t->pkt.len);
	out_write(o, h.buf, h.len);
	out_write(o, t->pkt.buf, t->pkt.len);
}

/* The clock snapshot at the first event, @e; and the kernel release. */
static void put_clocks(struct pbt *t, struct outbuf *o, struct dtrace *dt,
		       const struct dtrace_event *e)
{
	const struct ktfile_reader *f = kt_merge_file(dt->merge, e->file);
	const struct ktfile_header *h = &f->hdr;
	static const unsigned int ids[] = { CLOCK_BOOTTIME, CLOCK_MONOTONIC, CLOCK_REALTIME };
	uint64_t tsc = e->ev->tsc, mono, real, d;
	struct pb *b;
	size_t c, k;

	d = tsc >= h->ref_tsc ? ktfile_ns(f, tsc - h->ref_tsc) : 0;
	mono = h->ref_mono_ns + d;
	real = h->ref_real_ns + d;
	t->mono0 = mono - e->ns;
	b = packet_begin(t, UINT64_MAX, SEQ_SYSTEM);
	c = pb_begin(b, PKT_CLOCK_SNAPSHOT);
	for (unsigned int i = 0; i < 3; i++) {
		k = pb_begin(b, CLOCKS);
		pb_uint(b, CLOCK_ID, ids[i]);
		pb_uint(b, CLOCK_TIMESTAMP, ids[i] == CLOCK_REALTIME ? real : mono);
		pb_end(b, k);
	}
	pb_end(b, c);
	packet_end(t, o);
	b = packet_begin(t, UINT64_MAX, SEQ_SYSTEM);
	c = pb_begin(b, PKT_SYSTEM_INFO);
	k = pb_begin(b, SYSINFO_UTSNAME);
	pb_bytes(b, UTS_SYSNAME, "Linux", 5);
	if (h->release[0])
		pb_text(b, UTS_RELEASE, h->release, strnlen(h->release, sizeof(h->release)));
	pb_end(b, k);
	pb_end(b, c);
	packet_end(t, o);
	t->clock_out = true;
}

/* A ProcessTree packet naming thread @tid of process @pid. */
static void put_task_name(struct pbt *t, struct outbuf *o, uint64_t ns, uint32_t tid,
			  uint32_t pid, const char *comm, size_t len)
{
	struct pb *b = packet_begin(t, ns, SEQ_SYSTEM);
	size_t c = pb_begin(b, PKT_PROCESS_TREE), k;

	if (!pid)
		pid = tid;
	if (tid == pid) {
		k = pb_begin(b, PT_PROCESSES);
		pb_uint(b, PROC_PID, pid);
		pb_text(b, PROC_CMDLINE, comm, len);
		pb_uint(b, PROC_CMDLINE_IS_COMM, 1);
		pb_end(b, k);
	}
	k = pb_begin(b, PT_THREADS);
	pb_uint(b, THR_TID, tid);
	pb_text(b, THR_NAME, comm, len);
	pb_uint(b, THR_TGID, pid);
	pb_end(b, k);
	pb_end(b, c);
	packet_end(t, o);
}

/* ---- ftrace bundles --------------------------------------------------------- */

static unsigned int intern_comm(struct pb_cpu *c, const char *comm, size_t len)
{
	unsigned int i;

	if (len > KTRACE_COMM_LEN)
		len = KTRACE_COMM_LEN;
	for (i = 0; i < c->nr_comms; i++)
		if (!strncmp(c->comms[i], comm, len) && !c->comms[i][len])
			return i;
	c->comms = xrealloc(c->comms, (i + 1) * sizeof(*c->comms));
	memcpy(c->comms[i], comm, len);
	c->comms[i][len] = '\0';
	c->nr_comms++;
	return i;
}

static void bundle_flush(struct pbt *t, struct outbuf *o, struct pb_cpu *c)
{
	struct pb *b;
	size_t k, s;

	if (!c->nr && !c->lost)
		return;
	t->machine = c->machine;
	b = packet_begin(t, UINT64_MAX, SEQ_SYSTEM);
	k = pb_begin(b, PKT_FTRACE_EVENTS);
	pb_uint(b, BUNDLE_CPU, c->cpu);
	memcpy(pb_room(b, c->events.len), c->events.buf, c->events.len);
	b->len += c->events.len;
	if (c->lost)
		pb_uint(b, BUNDLE_LOST_EVENTS, 1);
	if (c->sw_ts.len || c->wk_ts.len) {
		s = pb_begin(b, BUNDLE_COMPACT_SCHED);
		for (unsigned int i = 0; i < c->nr_comms; i++)
			pb_text(b, CS_INTERN_TABLE, c->comms[i], strlen(c->comms[i]));
		pb_packed(b, CS_SWITCH_TIMESTAMP, &c->sw_ts);
		pb_packed(b, CS_SWITCH_PREV_STATE, &c->sw_state);
		pb_packed(b, CS_SWITCH_NEXT_PID, &c->sw_pid);
		pb_packed(b, CS_SWITCH_NEXT_PRIO, &c->sw_prio);
		pb_packed(b, CS_SWITCH_NEXT_COMM_INDEX, &c->sw_comm);
		pb_packed(b, CS_WAKING_TIMESTAMP, &c->wk_ts);
		pb_packed(b, CS_WAKING_PID, &c->wk_pid);
		pb_packed(b, CS_WAKING_TARGET_CPU, &c->wk_cpu);
		pb_packed(b, CS_WAKING_PRIO, &c->wk_prio);
		pb_packed(b, CS_WAKING_COMM_INDEX, &c->wk_comm);
		pb_packed(b, CS_WAKING_COMMON_FLAGS, &c->wk_flags);
		pb_end(b, s);
	}
	pb_end(b, k);
	packet_end(t, o);
	c->nr = c->nr_comms = 0;
	c->lost = false;
	c->events.len = c->sw_ts.len = c->sw_state.len = c->sw_pid.len = 0;
	c->sw_prio.len = c->sw_comm.len = c->wk_ts.len = c->wk_pid.len = 0;
	c->wk_cpu.len = c->wk_prio.len = c->wk_comm.len = c->wk_flags.len = 0;
}

/* The name of task @tid among @e's names, "" if it has none. */
static const char *task_comm(const struct dtrace_event *e, uint32_t tid, size_t *len,
			     uint32_t *pid)
{
	const char *comm = tid ? tasks_named_comm(&e->names, tid, len, pid) : NULL;

	if (!tid) {
		*len = strlen("<idle>");	/* as the listing names it */
		*pid = 0;
		return "<idle>";
	}
	if (!comm) {
		*len = 0;
		*pid = 0;
		return "";
	}
	return comm;
}

static void compact_switch(struct pb_cpu *c, const struct dtrace_event *e, uint64_t ts)
{
	uint32_t next = e->ev->args[1], pid;
	size_t len;
	const char *comm = task_comm(e, next, &len, &pid);

	pb_varint(&c->sw_ts, c->sw_ts.len ? ts - c->last_sw_ns : ts);
	c->last_sw_ns = ts;
	/* a file of a kernel before the state was recorded has two arguments */
	pb_varint(&c->sw_state, e->ev->nr_args >= 4 ? e->ev->args[2] : TASK_STATE_UNKNOWN);
	pb_varint(&c->sw_pid, next);
	pb_varint(&c->sw_prio, e->ev->nr_args >= 4 ? e->ev->args[3] : 0);
	pb_varint(&c->sw_comm, intern_comm(c, comm, len));
}

static void compact_waking(struct pb_cpu *c, const struct dtrace_event *e, uint64_t ts)
{
	uint32_t woken = e->ev->args[0], pid;
	size_t len;
	const char *comm = task_comm(e, woken, &len, &pid);

	pb_varint(&c->wk_ts, c->wk_ts.len ? ts - c->last_wk_ns : ts);
	c->last_wk_ns = ts;
	pb_varint(&c->wk_pid, woken);
	pb_varint(&c->wk_cpu, e->ev->args[1]);
	pb_varint(&c->wk_prio, 0);
	pb_varint(&c->wk_comm, intern_comm(c, comm, len));
	pb_varint(&c->wk_flags, 0);
}

/* The event's name, as the listing's first word ("sched:migrate", "user:work"). */
static size_t event_name(const char *event, const char **text)
{
	const char *sp = strchr(event, ' ');

	*text = sp ? sp + 1 : "";
	return sp ? (size_t)(sp - event) : strlen(event);
}

/* A probe hit's values as fields: a missing one is left out (probes.h). */
static void probe_fields(struct pb *b, const struct probe *pr, const struct ktfile_event *ev)
{
	char str[KTRACE_PROBE_MAX_STR + 4];
	uint64_t v;
	size_t k;

	for (unsigned int i = 0; i < pr->nr_values; i++) {
		const struct probe_value *pv = &pr->values[i];

		if (!probe_value(pr, ev, i, &v, str))
			continue;
		k = pb_begin(b, GEN_FIELD);
		pb_str(b, GF_NAME, pv->name);
		if (pv->type == PROBE_STR)
			pb_text(b, GF_STR, str, v);
		else
			pb_uint(b, pv->type == PROBE_SIGNED ? GF_INT : GF_UINT, v);
		pb_end(b, k);
	}
}

/* Any other kernel event: a GenericFtraceEvent with its fields. */
static void generic_event(struct pbt *t, struct pb *b, struct dtrace *dt,
			  const struct dtrace_event *e)
{
	const struct ktfile_event *ev = e->ev;
	const struct ktev_desc *d = ktev_lookup(ev->code);
	const struct fields *fs = d ? fields_of(t->fields, d) : NULL;
	const struct probe *pr = probes_get(dt->probes, ev->code);
	const char *text;
	size_t g = pb_begin(b, FT_GENERIC), k;

	/* a probe's name may have spaces (C++): the table says how long it is */
	pb_bytes(b, GEN_EVENT_NAME, t->event,
		 pr ? strlen(pr->shown) : event_name(t->event, &text));
	if (pr) {
		probe_fields(b, pr, ev);
	} else if (fs && fs->nr_args == ev->nr_args) {
		for (unsigned int i = 0; i < fs->nr; i++) {
			const struct field *fl = &fs->f[i];

			k = pb_begin(b, GEN_FIELD);
			pb_str(b, GF_NAME, fl->name);
			if (fl->type == FIELD_STRING) {
				const char *s;
				size_t len = field_string(fl, ev->args, ev->nr_args, &s);

				pb_text(b, GF_STR, s, len);
			} else {
				pb_uint(b, fl->type == FIELD_S32 ? GF_INT : GF_UINT,
					field_value(fl, ev->args));
			}
			pb_end(b, k);
		}
	} else {
		k = pb_begin(b, GEN_FIELD);
		pb_str(b, GF_NAME, "code");
		pb_uint(b, GF_UINT, ev->code);
		pb_end(b, k);
		for (unsigned int i = 0; i < ev->nr_args; i++) {
			char name[16];

			snprintf(name, sizeof(name), "arg%u", i + 1);
			k = pb_begin(b, GEN_FIELD);
			pb_str(b, GF_NAME, name);
			pb_uint(b, GF_UINT, ev->args[i]);
			pb_end(b, k);
		}
	}
	pb_end(b, g);
}

/* @ev as Perfetto's own message for it, if it has one (native_events). */
static bool native_event(struct pb *b, const struct ktfile_event *ev)
{
	const struct native_event *n = NULL;
	size_t k;

	for (unsigned int i = 0; i < ARRAY_SIZE(native_events); i++)
		if (native_events[i].code == ev->code)
			n = &native_events[i];
	if (!n || ev->nr_args != 2 || (!n->arg[1] && ev->args[1]))
		return false;
	k = pb_begin(b, n->event);
	pb_uint(b, n->arg[0], ev->args[0]);
	if (n->arg[1])
		pb_uint(b, n->arg[1], n->sign ? (uint64_t)(int64_t)(int32_t)ev->args[1] :
			ev->args[1]);
	pb_end(b, k);
	return true;
}

static void kernel_event(struct pbt *t, struct outbuf *o, struct dtrace *dt,
			 const struct dtrace_event *e, struct pb_cpu *c)
{
	const struct ktfile_event *ev = e->ev;
	uint64_t ts = t->mono0 + e->ns;
	struct pb *b = &c->events;
	uint32_t pid;
	size_t k, f, len;
	const char *comm;

	if (ev->code == KTRACE_sched_switch && (ev->nr_args == 2 || ev->nr_args == 4)) {
		compact_switch(c, e, ts);
	} else if (ev->code == KTRACE_sched_wakeup && ev->nr_args == 2) {
		compact_waking(c, e, ts);
	} else {
		k = pb_begin(b, BUNDLE_EVENT);
		pb_uint(b, FT_TIMESTAMP, ts);
		pb_uint(b, FT_PID, ev->tid);
		if (ev->code == KTRACE_thread_fork && ev->nr_args == 2) {
			f = pb_begin(b, FT_SCHED_PROCESS_FORK);
			comm = task_comm(e, ev->tid, &len, &pid);
			pb_text(b, FORK_PARENT_COMM, comm, len);
			pb_uint(b, FORK_PARENT_PID, ev->tid);
			pb_text(b, FORK_CHILD_COMM, comm, len);	/* fork keeps the name */
			pb_uint(b, FORK_CHILD_PID, ev->args[1]);
			pb_end(b, f);
		} else if (ev->code == KTRACE_thread_exit && ev->nr_args == 2) {
			f = pb_begin(b, FT_SCHED_PROCESS_EXIT);
			comm = task_comm(e, ev->tid, &len, &pid);
			pb_text(b, EXIT_COMM, comm, len);
			pb_uint(b, EXIT_PID, ev->tid);
			if (pid)
				pb_uint(b, EXIT_TGID, pid);
			pb_end(b, f);
		} else if (!native_event(b, ev)) {
			*dtrace_put_event(dt, t->event, e, 0) = '\0';
			generic_event(t, b, dt, e);
		}
		pb_end(b, k);
	}
	if (++c->nr >= BUNDLE_EVENTS)
		bundle_flush(t, o, c);
}

/* ---- tracks and track events ------------------------------------------------ */

static uint64_t track_uuid(uint32_t tid)
{
	return 0x6b74000000000000ull | tid;	/* "kt": apart from Perfetto's own */
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* The TrackDescriptor of thread @tid, once. */
static void need_track(struct pbt *t, struct outbuf *o, uint32_t pid, uint32_t tid,
		       const char *comm, size_t len)
{
	uint64_t key = tid;
	struct pb *b;
	size_t k, th;

	if (t->nr_tracks && bsearch(&key, t->tracks, t->nr_tracks, sizeof(key), cmp_u64))
		return;
	t->tracks = xrealloc(t->tracks, (t->nr_tracks + 1) * sizeof(*t->tracks));
	t->tracks[t->nr_tracks++] = key;
	qsort(t->tracks, t->nr_tracks, sizeof(*t->tracks), cmp_u64);
	b = packet_begin(t, UINT64_MAX, SEQ_TRACKS);
	k = pb_begin(b, PKT_TRACK_DESCRIPTOR);
	pb_uint(b, TD_UUID, track_uuid(tid));
	th = pb_begin(b, TD_THREAD);
	pb_uint(b, THD_PID, pid ? pid : tid);
	pb_uint(b, THD_TID, tid);
	if (len)
		pb_text(b, THD_NAME, comm, len);
	pb_end(b, th);
	pb_end(b, k);
	packet_end(t, o);
}

static uint32_t hash_str(const char *s)
{
	uint32_t h = 2166136261u;

	while (*s)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

/* The iid of event name @name; *@is_new: the packet must intern it. */
static uint64_t name_iid(struct pbt *t, const char *name, bool *is_new)
{
	uint32_t i;

	if (t->nr_names * 2 >= t->hash_size) {
		struct name_iid *old = t->by_name;
		unsigned int old_size = t->hash_size;

		t->hash_size = t->hash_size ? t->hash_size * 2 : 1024;
		t->by_name = xcalloc(t->hash_size, sizeof(*t->by_name));
		for (unsigned int j = 0; j < old_size; j++) {
			if (!old[j].name)
				continue;
			for (i = hash_str(old[j].name) & (t->hash_size - 1); t->by_name[i].name;
			     i = (i + 1) & (t->hash_size - 1))
				;
			t->by_name[i] = old[j];
		}
		free(old);
	}
	for (i = hash_str(name) & (t->hash_size - 1); t->by_name[i].name;
	     i = (i + 1) & (t->hash_size - 1))
		if (!strcmp(t->by_name[i].name, name)) {
			*is_new = false;
			return t->by_name[i].iid;
		}
	*is_new = true;
	t->by_name[i].name = xstrdup(name);
	t->by_name[i].iid = ++t->nr_names;
	return t->nr_names;
}

/*
 * A TrackEvent of @type on @tid's track at @ns, named @name (NULL: an end);
 * returns the packet with the event open (at *@te) for annotations.
 */
static struct pb *track_event(struct pbt *t, uint64_t ns, uint32_t tid, unsigned int type,
			      const char *name, size_t *te)
{
	struct pb *b = packet_begin(t, ns, SEQ_TRACKS);
	uint64_t iid = 0;
	bool is_new = false;
	size_t k, n;

	pb_uint(b, PKT_SEQUENCE_FLAGS, t->seq_started ? SEQ_NEEDS_INCREMENTAL_STATE :
		SEQ_INCREMENTAL_STATE_CLEARED | SEQ_NEEDS_INCREMENTAL_STATE);
	t->seq_started = true;
	if (name) {
		iid = name_iid(t, name, &is_new);
		if (is_new) {
			k = pb_begin(b, PKT_INTERNED_DATA);
			n = pb_begin(b, ID_EVENT_NAMES);
			pb_uint(b, EN_IID, iid);
			pb_str(b, EN_NAME, name);
			pb_end(b, n);
			pb_end(b, k);
		}
	}
	*te = pb_begin(b, PKT_TRACK_EVENT);
	pb_uint(b, TE_TYPE, type);
	pb_uint(b, TE_TRACK_UUID, track_uuid(tid));
	if (name)
		pb_uint(b, TE_NAME_IID, iid);
	return b;
}

static void annotate_str(struct pb *b, const char *name, const char *s, size_t len)
{
	size_t k = pb_begin(b, TE_DEBUG_ANNOTATIONS);

	pb_str(b, DA_NAME, name);
	pb_bytes(b, DA_STRING, s, len);
	pb_end(b, k);
}

static void annotate_uint(struct pb *b, const char *name, uint64_t v)
{
	size_t k = pb_begin(b, TE_DEBUG_ANNOTATIONS);

	pb_str(b, DA_NAME, name);
	pb_uint(b, DA_UINT, v);
	pb_end(b, k);
}

struct pb_walk {
	struct pbt *t;
	struct outbuf *o;
};

/* A step of a thread's calls (calls.c) as a slice's begin or end. */
static void call_step(void *ctx, struct call_thread *th, const struct call_step *s)
{
	const struct pb_walk *w = ctx;
	struct pbt *t = w->t;
	struct pb *b;
	size_t te;

	switch (s->kind) {
	case STEP_ENTER:
	case STEP_EXIT:
		b = track_event(t, s->ns, th->tid,
				s->kind == STEP_ENTER ? TE_SLICE_BEGIN : TE_SLICE_END,
				s->kind == STEP_ENTER ? s->fn->name : NULL, &te);
		if (s->repair)
			annotate_str(b, "repaired", calls_repair_text[s->repair],
				     strlen(calls_repair_text[s->repair]));
		break;
	case STEP_NOTE:
		if (!s->fn)
			return;	/* lost records: their instant went out in time */
		b = track_event(t, s->ns, th->tid, TE_INSTANT, "exit without entry", &te);
		annotate_str(b, "function", s->fn->name, strlen(s->fn->name));
		break;
	default:
		return;
	}
	pb_end(b, te);
	packet_end(t, w->o);
}

/* A user stream's event that is no call: an instant with its text and fields. */
static void user_event(struct pbt *t, struct outbuf *o, struct dtrace *dt,
		       const struct dtrace_event *e)
{
	const struct ktfile_event *ev = e->ev;
	const struct ktfile_header *h = &kt_merge_file(dt->merge, e->file)->hdr;
	const struct ktev_desc *d = ktev_lookup(ev->code);
	const struct fields *fs = d ? fields_of(t->fields, d) : NULL;
	const char *text;
	char name[KTEV_NAME_MAX + 64];
	size_t len, te;
	struct pb *b;

	*dtrace_put_event(dt, t->event, e, 0) = '\0';
	len = event_name(t->event, &text);
	if (len >= sizeof(name))
		len = sizeof(name) - 1;
	memcpy(name, t->event, len);
	name[len] = '\0';
	need_track(t, o, h->pid, h->tid, h->comm, strnlen(h->comm, sizeof(h->comm)));
	b = track_event(t, e->ns, h->tid, TE_INSTANT, name, &te);
	annotate_str(b, "text", text, strlen(text));
	if (fs && fs->nr_args == ev->nr_args)
		for (unsigned int i = 0; i < fs->nr; i++)
			if (fs->f[i].type != FIELD_STRING)
				annotate_uint(b, fs->f[i].name, field_value(&fs->f[i], ev->args));
	pb_end(b, te);
	packet_end(t, o);
}

/* ---- the format ----------------------------------------------------------------- */

static void *pb_start(struct dtrace *dt, struct outbuf *o)
{
	struct pbt *t = xcalloc(1, sizeof(*t));

	(void)o;
	t->fields = fields_table();
	t->nr_files = kt_merge_nr_files(dt->merge);
	t->cpus = xcalloc(t->nr_files, sizeof(*t->cpus));
	for (unsigned int i = 0; i < t->nr_files; i++) {
		t->cpus[i].cpu = kt_merge_file(dt->merge, i)->hdr.cpu;
		t->cpus[i].machine = kt_merge_file(dt->merge, i)->machine;
	}
	return t;
}

static void pb_event(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e)
{
	struct pbt *t = dt->fmt_state;
	const struct ktfile_event *ev = e->ev;
	const struct ktfile_header *h = &kt_merge_file(dt->merge, e->file)->hdr;
	struct pb_cpu *c = &t->cpus[e->file];
	uint64_t lost;
	size_t te;
	struct pb *b;

	t->machine = 0;
	if (!t->clock_out) {
		put_clocks(t, o, dt, e);
		/* the user streams' threads, named by their headers */
		for (unsigned int i = 0; i < t->nr_files; i++) {
			const struct ktfile_header *u = &kt_merge_file(dt->merge, i)->hdr;

			if (u->cpu < 0 && u->tid && dt->files[i].selected)
				put_task_name(t, o, e->ns, u->tid, u->pid, u->comm,
					      strnlen(u->comm, sizeof(u->comm)));
		}
	}
	t->machine = c->machine;
	if (ktev_lost_count(ev->code, ev->args, ev->nr_args, &lost)) {
		if (h->cpu >= 0) {
			/* a bundle for each: one after another, or the CPU's last */
			bundle_flush(t, o, c);
			c->lost = true;
			return;
		}
		calls_event(dt, o, e);	/* where the calls have a gap */
		need_track(t, o, h->pid, h->tid, h->comm, strnlen(h->comm, sizeof(h->comm)));
		b = track_event(t, e->ns, h->tid, TE_INSTANT, "lost records", &te);
		if (lost != KTEV_LOST_UNKNOWN)		/* else: how many is not known */
			annotate_uint(b, "count", lost);
		pb_end(&t->pkt, te);
		packet_end(t, o);
		return;
	}
	if (h->cpu < 0) {
		if ((ev->code & KTRACE_GROUP_MASK) == KTRACE_GRP_func &&
		    sym_call_event(ev, &(struct sym_call_event){ 0 })) {
			need_track(t, o, h->pid, h->tid, h->comm, strnlen(h->comm, sizeof(h->comm)));
			calls_event(dt, o, e);
			return;
		}
		user_event(t, o, dt, e);
		return;
	}
	/* a task named or renamed: before its own event, which may use the name */
	if (ev->code == KTRACE_thread_name && ev->nr_args == 6) {
		const char *comm = (const char *)&ev->args[2];

		put_task_name(t, o, e->ns, ev->args[0], ev->args[1], comm,
			      strnlen(comm, KTRACE_COMM_LEN));
	}
	kernel_event(t, o, dt, e, c);
}

static void pb_free(struct pb *b)
{
	free(b->buf);
}

static void pb_finish(struct dtrace *dt, struct outbuf *o)
{
	struct pbt *t = dt->fmt_state;
	struct pb_walk w = { t, o };
	struct call_thread **threads;
	unsigned int nr = 0;

	for (unsigned int i = 0; i < t->nr_files; i++)
		bundle_flush(t, o, &t->cpus[i]);
	threads = calls_has_threads(dt->calls) ? calls_threads(dt->calls, &nr) : NULL;
	for (unsigned int i = 0; i < nr; i++) {
		need_track(t, o, threads[i]->pid, threads[i]->tid, threads[i]->comm,
			   strnlen(threads[i]->comm, KTRACE_COMM_LEN));
		calls_walk(dt->calls, threads[i], call_step, &w);
	}
	for (unsigned int i = 0; i < t->nr_files; i++) {
		struct pb_cpu *c = &t->cpus[i];
		struct pb *cols[] = { &c->events, &c->sw_ts, &c->sw_state, &c->sw_pid,
				      &c->sw_prio, &c->sw_comm, &c->wk_ts, &c->wk_pid,
				      &c->wk_cpu, &c->wk_prio, &c->wk_comm, &c->wk_flags };

		for (unsigned int j = 0; j < ARRAY_SIZE(cols); j++)
			pb_free(cols[j]);
		free(c->comms);
	}
	for (unsigned int i = 0; i < t->hash_size; i++)
		free((char *)t->by_name[i].name);
	free(t->by_name);
	free(t->tracks);
	free(t->cpus);
	free(t->fields);
	pb_free(&t->pkt);
	free(t);
}

const struct dtrace_format dtrace_perfetto_pb = {
	.name = "perfetto",
	.flags = DTRACE_FMT_CALLS,
	.start = pb_start,
	.event = pb_event,
	.end = pb_finish,
};
