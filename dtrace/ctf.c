// SPDX-License-Identifier: GPL-2.0
/*
 * ctf: --format=ctf -o DIR writes the events as a CTF 1.8 trace, for
 * babeltrace2, Trace Compass and the other tools that read CTF.
 *
 *   DIR/metadata    TSDL: the trace, the clock, two stream classes (CPU,
 *                   user thread) and an event class per entry of the event
 *                   table, in each stream class
 *   DIR/cpuN        one stream per CPU file ...
 *   DIR/tidN        ... and per user thread file, made of packets
 *
 * Time stamps stay the raw TSC: the clock ktrace_tsc runs at the reference
 * file's tsc_hz (the first CPU file, else the first file) and its offset
 * puts that file's reference TSC at its CLOCK_REALTIME reference, so tools
 * show wall clock time.  The fields of an event are named from its format
 * (fields.h); an event the table does not know, or one with another number
 * of arguments than the table's, is an "unknown" event with its code and
 * all its arguments.  Lost records are a "meta:lost" event with the count,
 * and the packet that ends with it has them in events_discarded (the
 * number lost so far in the stream), which readers report as discarded
 * events.  A probe hit of a probe BASE.probes defines is of an event class
 * "probe:NAME" (CPU streams) with its missing mask and its values, named
 * as the probe's values (made identifiers: "op.type" is op_type) and of
 * their types; a value that is missing is zero or empty, its bit set.  A user event its program named (symbols.h) is of an event class
 * of that name, "user:work", with the table's fields: as the listing names it.
 *
 * Memory is one packet per stream; packets go out as they fill.
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtrace.h"
#include "escape.h"
#include "fields.h"
#include "files.h"
#include "util.h"

#define CTF_MAGIC	0xc1fc1fc1u
#define PACKET_BYTES	(64 * 1024)	/* a packet ends after this much */
/* the largest event: header, context (tid, comm), code, count and every argument */
#define EVENT_MAX	(4 + 8 + 4 + KT_ESC_MAX(KTRACE_COMM_LEN) + 1 + 8 + 4 * KTEV_MAX_ARGS + 1)
/* packet header and context, as the metadata declares them (byte-aligned) */
#define HEADER_LEN	32
#define CONTEXT_LEN(user)	((user) ? 48 : 44)

/* Event class ids, the same in both stream classes. */
enum { ID_LOST, ID_UNKNOWN, ID_TABLE };

/* An event class for a user event a program named. */
struct ctf_named {
	struct sym_proc *proc;
	unsigned int sub;
};

#define NR_SUBS		256	/* KTRACE_SUB() */

struct ctf_stream {
	uint32_t *named;	/* user: by sub, its named class's id, 0: none */
	int fd;			/* -1: the file is not exported (-c) */
	char name[32];
	bool user;
	uint32_t cpu, pid, tid;
	char *buf;		/* the packet being filled */
	size_t len;		/* bytes in buf, header and context included */
	uint64_t begin, end;	/* its time stamps */
	uint64_t discarded;	/* lost records so far */
	uint64_t packets;	/* written */
};

struct ctf {
	const char *dir;
	int dir_fd;			/* the files are made in it */
	struct ctf_stream *streams;	/* by file index */
	unsigned int nr;
	uint8_t uuid[16];
	struct fields *fields;		/* the event table's, by index */
	struct ctf_named *named;	/* classes ID_TABLE + ktev_nr_events + i */
	unsigned int nr_named;
	uint32_t probe_class[KTRACE_PROBE_MAX_ID + 1];	/* by probe id, 0: none */
};

static char *put32(char *p, uint32_t v)
{
	memcpy(p, &v, sizeof(v));
	return p + sizeof(v);
}

static char *put16(char *p, uint16_t v)
{
	memcpy(p, &v, sizeof(v));
	return p + sizeof(v);
}

static char *put64(char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
	return p + sizeof(v);
}

/* The same files give the same trace: the uuid is a hash of their headers. */
static void make_uuid(struct ctf *ctf, struct dtrace *dt)
{
	uint64_t h[2] = { 0xcbf29ce484222325ull, 0x84222325cbf29ce4ull };

	for (unsigned int i = 0; i < ctf->nr; i++) {
		const uint8_t *b = (const void *)&kt_merge_file(dt->merge, i)->hdr;

		for (size_t j = 0; j < sizeof(struct ktfile_header); j++)
			for (int k = 0; k < 2; k++)
				h[k] = (h[k] ^ b[j]) * 0x100000001b3ull;
	}
	memcpy(ctf->uuid, h, sizeof(ctf->uuid));
	ctf->uuid[6] = (ctf->uuid[6] & 0x0f) | 0x40;	/* version 4 ... */
	ctf->uuid[8] = (ctf->uuid[8] & 0x3f) | 0x80;	/* ... RFC 4122 variant */
}

static void put_uuid(FILE *f, const uint8_t *u)
{
	for (int i = 0; i < 16; i++)
		fprintf(f, "%s%02x", i == 4 || i == 6 || i == 8 || i == 10 ? "-" : "", u[i]);
}

/* A header string as a TSDL string literal: printable ASCII, escaped. */
static void put_string(FILE *f, const char *s, size_t size)
{
	char buf[KT_ESC_MAX(128)];

	if (size > 128)
		size = 128;
	fprintf(f, "\"%.*s\"", (int)(kt_escape(buf, sizeof(buf), s, size, KT_ESC_TSDL) - buf),
		buf);
}

static const char *const type_names[] = {
	[FIELD_U32] = "uint32_t", [FIELD_S32] = "int32_t", [FIELD_X32] = "xint32_t",
	[FIELD_U64] = "uint64_t", [FIELD_X64] = "xint64_t", [FIELD_STRING] = "string",
};

/* The event classes of stream class @sid. */
static void put_events(const struct ctf *ctf, FILE *f, unsigned int sid)
{
	fprintf(f, "event {\n\tname = \"%s:lost\";\n\tid = %u;\n\tstream_id = %u;\n"
		"\tfields := struct {\n\t\tuint64_t _count;\n\t};\n};\n\n",
		KTEV_META_NAME, ID_LOST, sid);
	fprintf(f, "event {\n\tname = \"unknown\";\n\tid = %u;\n\tstream_id = %u;\n"
		"\tfields := struct {\n\t\txint32_t _code;\n\t\tuint32_t _nr_args;\n"
		"\t\txint32_t _args[_nr_args];\n\t};\n};\n\n", ID_UNKNOWN, sid);
	for (unsigned int i = 0; i < ktev_nr_events; i++) {
		const struct ktev_desc *d = &ktev_events[i];
		const struct fields *fs = fields_of(ctf->fields, d);

		fprintf(f, "event {\n\tname = \"%s:%s\";\n\tid = %u;\n\tstream_id = %u;\n"
			"\tfields := struct {\n", d->group, d->name, ID_TABLE + i, sid);
		/* '_' escapes a name that is a TSDL keyword; readers take it off */
		for (unsigned int j = 0; j < fs->nr; j++)
			fprintf(f, "\t\t%s _%s;\n", type_names[fs->f[j].type], fs->f[j].name);
		fprintf(f, "\t};\n};\n\n");
	}
}

/* The user events' classes of the names the programs gave them. */
static void put_named_events(const struct ctf *ctf, FILE *f)
{
	for (unsigned int i = 0; i < ctf->nr_named; i++) {
		const struct ctf_named *n = &ctf->named[i];
		const struct ktev_desc *d = ktev_lookup(KTRACE_CODE(KTRACE_GRP_user, n->sub));
		const struct fields *fs = fields_of(ctf->fields, d);
		const char *fmt, *name = sym_event_name(n->proc, n->sub, &fmt);
		char buf[128];

		snprintf(buf, sizeof(buf), "user:%s", name);
		fprintf(f, "event {\n\tname = ");
		put_string(f, buf, strlen(buf));
		fprintf(f, ";\n\tid = %u;\n\tstream_id = 1;\n\tfields := struct {\n",
			ID_TABLE + ktev_nr_events + i);
		for (unsigned int j = 0; j < fs->nr; j++)
			fprintf(f, "\t\t%s _%s;\n", type_names[fs->f[j].type], fs->f[j].name);
		fprintf(f, "\t};\n};\n\n");
	}
}

/* @s made an identifier: letters, digits and '_'; returns its length. */
static size_t make_ident(const char *s, char *name, size_t size)
{
	size_t n = 0;

	if (*s >= '0' && *s <= '9')
		name[n++] = 'v';
	for (; *s && n < size - 1; s++)
		name[n++] = isalnum((unsigned char)*s) || *s == '_' ? *s : '_';
	name[n] = '\0';
	return n;
}

/*
 * Probe value @i's field name; one that another value (or the mask) gets
 * too takes the value's index: "a.b" and "a_b" are a_b_0 and a_b_1.
 */
static void probe_field_name(const struct probe *pr, unsigned int i, char *name, size_t size)
{
	size_t n = make_ident(pr->values[i].name, name, size - 8);

	for (unsigned int j = 0; j <= pr->nr_values; j++) {
		char other[PROBE_VALUE_NAME_MAX + 8] = "missing";

		if (j == i)
			continue;
		if (j < pr->nr_values)
			make_ident(pr->values[j].name, other, sizeof(other) - 8);
		if (!strcmp(other, name)) {
			snprintf(name + n, 8, "_%u", i % 100);
			return;
		}
	}
}

static const char *const probe_types[][5] = {
	[PROBE_UNSIGNED] = { "", "uint8_t", "uint16_t", "", "uint32_t" },
	[PROBE_SIGNED] = { "", "int8_t", "int16_t", "", "int32_t" },
	[PROBE_HEX] = { "", "xint8_t", "xint16_t", "", "xint32_t" },
};

/* The event classes of the probes BASE.probes defines, in the CPU streams. */
static void put_probe_events(struct ctf *ctf, FILE *f, const struct probes *ps)
{
	uint32_t id = ID_TABLE + ktev_nr_events + ctf->nr_named;

	for (unsigned int pid = 1; ps && pid <= KTRACE_PROBE_MAX_ID; pid++) {
		const struct probe *pr = ps->by_id[pid];

		if (!pr)
			continue;
		ctf->probe_class[pid] = id;
		fprintf(f, "event {\n\tname = ");
		put_string(f, pr->shown, strlen(pr->shown));
		fprintf(f, ";\n\tid = %u;\n\tstream_id = 0;\n\tfields := struct {\n"
			"\t\txint32_t _missing;\n", id++);
		for (unsigned int i = 0; i < pr->nr_values; i++) {
			const struct probe_value *pv = &pr->values[i];
			char name[PROBE_VALUE_NAME_MAX + 16];

			probe_field_name(pr, i, name, sizeof(name));
			if (pv->type == PROBE_STR)
				fprintf(f, "\t\tstring _%s;\n", name);
			else if (pv->size == 8)
				fprintf(f, "\t\t%s _%s;\n", pv->type == PROBE_SIGNED ? "int64_t" :
					pv->type == PROBE_HEX ? "xint64_t" : "uint64_t", name);
			else
				fprintf(f, "\t\t%s _%s;\n", probe_types[pv->type][pv->size], name);
		}
		fprintf(f, "\t};\n};\n\n");
	}
}

/* A probe hit: the mask, then each value at its size, a string up to its NUL. */
static char *put_probe_hit(char *p, const struct probe *pr, const struct ktfile_event *ev)
{
	p = put32(p, probe_missing(pr, ev));
	for (unsigned int i = 0; i < pr->nr_values; i++) {
		const struct probe_value *pv = &pr->values[i];
		uint64_t v = 0;

		/* a missing value stays 0, a missing string empty */
		probe_value(pr, ev, i, &v, p);
		if (pv->type == PROBE_STR) {
			/* a NUL ends it: the bytes before the first are the string */
			p += v;
			*p++ = '\0';
		} else if (pv->size == 1) {
			*p++ = v;
		} else if (pv->size == 2) {
			p = put16(p, v);
		} else if (pv->size == 4) {
			p = put32(p, v);
		} else {
			p = put64(p, v);
		}
	}
	return p;
}

/* The classes of the user events @s's program named (those the table has). */
static void find_named(struct ctf *ctf, struct ctf_stream *s, struct sym_proc *proc)
{
	const char *fmt;

	for (unsigned int sub = 0; proc && sub < NR_SUBS; sub++) {
		unsigned int i;

		if (!ktev_lookup(KTRACE_CODE(KTRACE_GRP_user, sub)) ||
		    !sym_event_name(proc, sub, &fmt))
			continue;
		for (i = 0; i < ctf->nr_named; i++)
			if (ctf->named[i].proc == proc && ctf->named[i].sub == sub)
				break;
		if (i == ctf->nr_named) {
			ctf->named = xrealloc(ctf->named, (i + 1) * sizeof(*ctf->named));
			ctf->named[ctf->nr_named++] = (struct ctf_named){ proc, sub };
		}
		if (!s->named)
			s->named = xcalloc(NR_SUBS, sizeof(*s->named));
		s->named[sub] = ID_TABLE + ktev_nr_events + i;
	}
}

static void write_metadata(struct ctf *ctf, const struct ktfile_reader *ref,
			   const struct probes *probes)
{
	const struct ktfile_header *h = &ref->hdr;
	uint64_t hz = h->tsc_hz, real_s = h->ref_real_ns / 1000000000;
	uint64_t real_ns = h->ref_real_ns % 1000000000;
	/* offset_s * freq + offset + ref_tsc cycles is ref_real_ns; offset >= 0 */
	int64_t offset_s = (int64_t)(real_s - h->ref_tsc / hz) - 1;
	uint64_t offset = hz - h->ref_tsc % hz +
			  (uint64_t)(((unsigned __int128)real_ns * hz + 500000000) / 1000000000);
	char path[4096];
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/metadata", ctf->dir);
	fd = openat(ctf->dir_fd, "metadata", O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	if (fd < 0)
		die("%s: %s", path, strerror(errno));
	f = fdopen(fd, "w");
	if (!f)
		die("%s: %s", path, strerror(errno));
	fprintf(f, "/* CTF 1.8 */\n\n"
		"typealias integer { size = 8; align = 8; signed = false; } := uint8_t;\n"
		"typealias integer { size = 8; align = 8; signed = true; } := int8_t;\n"
		"typealias integer { size = 8; align = 8; signed = false; base = 16; } := xint8_t;\n"
		"typealias integer { size = 16; align = 8; signed = false; } := uint16_t;\n"
		"typealias integer { size = 16; align = 8; signed = true; } := int16_t;\n"
		"typealias integer { size = 16; align = 8; signed = false; base = 16; } := xint16_t;\n"
		"typealias integer { size = 64; align = 8; signed = true; } := int64_t;\n"
		"typealias integer { size = 32; align = 8; signed = false; } := uint32_t;\n"
		"typealias integer { size = 32; align = 8; signed = true; } := int32_t;\n"
		"typealias integer { size = 32; align = 8; signed = false; base = 16; } := xint32_t;\n"
		"typealias integer { size = 64; align = 8; signed = false; } := uint64_t;\n"
		"typealias integer { size = 64; align = 8; signed = false; base = 16; } := xint64_t;\n\n"
		"trace {\n\tmajor = 1;\n\tminor = 8;\n\tuuid = \"");
	put_uuid(f, ctf->uuid);
	fprintf(f, "\";\n\tbyte_order = %s;\n"
		"\tpacket.header := struct {\n\t\tuint32_t magic;\n\t\tuint8_t uuid[16];\n"
		"\t\tuint32_t stream_id;\n\t\tuint64_t stream_instance_id;\n\t};\n};\n\n",
		__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? "le" : "be");
	fprintf(f, "env {\n\ttracer_name = \"ktrace\";\n\ttracer_version = \"%s\";\n"
		"\thostname = ", KTRACE_VERSION);
	put_string(f, h->hostname, sizeof(h->hostname));
	fprintf(f, ";\n\tsysname = \"Linux\";\n\tkernel_release = ");
	put_string(f, h->release, sizeof(h->release));
	fprintf(f, ";\n\tboot_id = ");
	put_string(f, h->boot_id, sizeof(h->boot_id));
	fprintf(f, ";\n\ttsc_hz = %llu;\n};\n\n", (unsigned long long)hz);
	fprintf(f, "clock {\n\tname = ktrace_tsc;\n");
	/* the TSC counts from boot: clocks of one boot correlate */
	if (strlen(h->boot_id) == 36 && strspn(h->boot_id, "0123456789abcdef-") == 36)
		fprintf(f, "\tuuid = \"%s\";\n", h->boot_id);
	fprintf(f, "\tdescription = \"time stamp counter\";\n\tfreq = %llu;\n"
		"\tprecision = 1;\n\toffset_s = %lld;\n\toffset = %llu;\n\tabsolute = TRUE;\n};\n\n"
		"typealias integer { size = 64; align = 8; signed = false;"
		" map = clock.ktrace_tsc.value; } := tsc_t;\n\n",
		(unsigned long long)hz, (long long)offset_s, (unsigned long long)offset);
	for (unsigned int sid = 0; sid < 2; sid++)
		fprintf(f, "stream {\n\tid = %u;\n\tpacket.context := struct {\n"
			"\t\ttsc_t timestamp_begin;\n\t\ttsc_t timestamp_end;\n"
			"\t\tuint64_t content_size;\n\t\tuint64_t packet_size;\n"
			"\t\tuint64_t events_discarded;\n%s\t};\n"
			"\tevent.header := struct {\n\t\tuint32_t id;\n\t\ttsc_t timestamp;\n\t};\n"
			"\tevent.context := struct {\n\t\tuint32_t _tid;\n\t\tstring _comm;\n"
			"\t};\n};\n\n", sid,
			sid ? "\t\tuint32_t _pid;\n\t\tuint32_t _tid;\n" : "\t\tuint32_t cpu_id;\n");
	put_events(ctf, f, 0);
	put_events(ctf, f, 1);
	put_named_events(ctf, f);
	put_probe_events(ctf, f, probes);
	if (ferror(f) | fclose(f))
		die("%s: write error", path);
}

static void open_streams(struct ctf *ctf, struct dtrace *dt)
{
	const struct ktfile_reader *ref = NULL;
	char path[4096];

	ctf->nr = kt_merge_nr_files(dt->merge);
	ctf->streams = xcalloc(ctf->nr, sizeof(*ctf->streams));
	for (unsigned int i = 0; i < ctf->nr; i++) {
		const struct ktfile_reader *f = kt_merge_file(dt->merge, i);
		struct ctf_stream *s = &ctf->streams[i];

		if ((!ref || ref->hdr.cpu < 0) && f->hdr.cpu >= 0)
			ref = f;
		s->fd = -1;
		if (!dt->files[i].selected)
			continue;
		s->user = f->hdr.cpu < 0;
		s->cpu = f->hdr.cpu;
		s->pid = f->hdr.pid;
		s->tid = f->hdr.tid;
		/* names tell what a stream is; two files of one thread get the index too */
		snprintf(s->name, sizeof(s->name), s->user ? "%.*s%stid%u" : "%.*s%scpu%u",
			 /* several machines: the machine's name first */
			 dt->files[i].machine ? 12 : 0,
			 dt->files[i].machine ? dt->files[i].machine : "",
			 dt->files[i].machine ? "." : "", s->user ? s->tid : s->cpu);
		for (int tries = 0; s->fd < 0; tries++) {
			snprintf(path, sizeof(path), "%s/%s", ctf->dir, s->name);
			s->fd = openat(ctf->dir_fd, s->name,
				       O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
			if (s->fd < 0 && (errno != EEXIST || tries))
				die("%s: %s", path, strerror(errno));
			if (s->fd < 0)
				snprintf(s->name + strlen(s->name), 12, "-%u", i);
		}
		s->buf = xmalloc(PACKET_BYTES + EVENT_MAX);
		if (s->user)
			find_named(ctf, s, dt->files[i].proc);
	}
	make_uuid(ctf, dt);
	write_metadata(ctf, ref ? ref : kt_merge_file(dt->merge, 0), dt->probes);
}

/*
 * DIR is made (0700), or must be empty: old stream files would join the
 * new trace.  An existing one must be this user's and nobody else's to
 * write: in another user's directory they could read the trace, or swap
 * its files.  It is opened once, not followed if a link, and the files are
 * made in what was opened, whatever becomes of the name.
 */
static int make_dir(const char *dir)
{
	int ret = kt_mkdir_private(dir);
	struct dirent *de;
	struct stat st;
	int fd;
	DIR *d;

	if (ret == -ENOTDIR)
		die("%s: %s (a link to one is not followed)", dir, strerror(ENOTDIR));
	if (ret < 0)
		die("%s: %s", dir, strerror(-ret));
	fd = open(dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0)
		die("%s: %s", dir, strerror(errno));
	if (st.st_uid != geteuid())
		die("%s: belongs to another user (uid %u): CTF goes in a directory of yours",
		    dir, (unsigned int)st.st_uid);
	if (st.st_mode & (S_IWGRP | S_IWOTH))
		die("%s: others can write to it (mode %03o): CTF goes in a directory "
		    "only you can write", dir, (unsigned int)st.st_mode & 0777);
	d = fdopendir(dup(fd));
	if (!d)
		die("%s: %s", dir, strerror(errno));
	while ((de = readdir(d)))
		if (strcmp(de->d_name, ".") && strcmp(de->d_name, ".."))
			die("%s: not empty: CTF needs a directory of its own", dir);
	closedir(d);
	return fd;
}

static void *ctf_start(struct dtrace *dt, struct outbuf *o)
{
	struct ctf *ctf = xcalloc(1, sizeof(*ctf));

	ctf->dir = dt->output;
	ctf->dir_fd = make_dir(ctf->dir);
	ctf->fields = fields_table();
	open_streams(ctf, dt);
	return ctf;
}

static void write_packet(struct ctf *ctf, struct ctf_stream *s)
{
	char *p = s->buf;

	/*
	 * Readers count what a packet lost against the packet before it: a
	 * stream that starts with losses starts with an empty packet, so that
	 * the count is known.
	 */
	if (!s->packets && s->discarded) {
		uint64_t lost = s->discarded, end = s->end;
		size_t len = s->len;

		s->discarded = 0;
		s->len = HEADER_LEN + CONTEXT_LEN(s->user);
		s->end = s->begin;
		write_packet(ctf, s);
		s->discarded = lost;
		s->end = end;
		s->len = len;
	}

	p = put32(p, CTF_MAGIC);
	memcpy(p, ctf->uuid, sizeof(ctf->uuid));
	p = put32(p + sizeof(ctf->uuid), s->user);
	p = put64(p, s - ctf->streams);
	p = put64(p, s->begin);
	p = put64(p, s->end);
	p = put64(p, (uint64_t)s->len * 8);
	p = put64(p, (uint64_t)s->len * 8);
	p = put64(p, s->discarded);
	if (s->user) {
		p = put32(p, s->pid);
		put32(p, s->tid);
	} else {
		put32(p, s->cpu);
	}
	for (size_t off = 0; off < s->len; ) {
		ssize_t n = write(s->fd, s->buf + off, s->len - off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("%s/%s: write error: %s", ctf->dir, s->name,
			    n ? strerror(errno) : "no space");
		off += n;
	}
	s->packets++;
	s->begin = s->end;	/* packets follow each other without a gap */
	s->len = 0;
}

/*
 * The event context's comm: the name the event's task had then, from the
 * event's names (tasks.h), as the text's task column has it: "<...>" for
 * a task the trace never names, "<idle>" for tid 0, "-" for a meta record.
 * Never empty: babeltrace2 (2.0) prints an empty string as the last one
 * it read.
 */
static char *put_comm(char *p, const struct dtrace_event *e)
{
	const struct ktfile_event *ev = e->ev;
	size_t len = 0;
	uint32_t pid;
	const char *comm = ev->code & KTRACE_GROUP_MASK ?
			   tasks_named_comm(&e->names, ev->tid, &len, &pid) : "-";

	if (!comm)
		comm = ev->tid ? "<...>" : "<idle>";
	if (!len)
		len = strlen(comm);
	memcpy(p, comm, len);
	p[len] = '\0';
	return p + len + 1;
}

static void ctf_event(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e)
{
	struct ctf *ctf = dt->fmt_state;
	const struct ktfile_event *ev = e->ev;
	const struct ktev_desc *d = ktev_lookup(ev->code);
	const struct fields *fs = d ? fields_of(ctf->fields, d) : NULL;
	const struct probe *probe = probes_get(dt->probes, ev->code);
	struct ctf_stream *s;
	bool is_lost;
	uint64_t lost = 0;
	char *p;

	s = &ctf->streams[e->file];
	if (!s->len) {
		s->len = HEADER_LEN + CONTEXT_LEN(s->user);
		if (!s->packets)
			s->begin = ev->tsc;
	}
	p = s->buf + s->len;
	is_lost = ktev_lost_count(ev->code, ev->args, ev->nr_args, &lost);
	if (is_lost) {
		p = put32(p, ID_LOST);
	} else if (probe && !s->user && ctf->probe_class[probe->id]) {
		p = put32(p, ctf->probe_class[probe->id]);
	} else if (fs && fs->nr_args == ev->nr_args) {
		bool named = s->named && (ev->code & KTRACE_GROUP_MASK) == KTRACE_GRP_user &&
			     s->named[KTRACE_SUB(ev->code)];

		p = put32(p, named ? s->named[KTRACE_SUB(ev->code)] : ID_TABLE + (d - ktev_events));
	} else {
		fs = NULL;
		p = put32(p, ID_UNKNOWN);
	}
	p = put64(p, ev->tsc);
	p = put32(p, ev->tid);
	p = put_comm(p, e);
	if (is_lost) {
		p = put64(p, lost);
	} else if (probe && !s->user && ctf->probe_class[probe->id]) {
		p = put_probe_hit(p, probe, ev);
	} else if (fs) {
		for (unsigned int i = 0; i < fs->nr; i++) {
			const struct field *f = &fs->f[i];

			if (f->type == FIELD_STRING) {
				const char *str;
				size_t len = field_string(f, ev->args, ev->nr_args, &str);

				p = memcpy(p, str, len) + len;
				*p++ = '\0';
			} else if (f->type == FIELD_U64 || f->type == FIELD_X64)
				p = put64(p, field_value(f, ev->args));
			else
				p = put32(p, ev->args[f->arg]);
		}
	} else {
		p = put32(p, ev->code);
		p = put32(p, ev->nr_args);
		for (unsigned int i = 0; i < ev->nr_args; i++)
			p = put32(p, ev->args[i]);
	}
	s->len = p - s->buf;
	s->end = ev->tsc;
	/* the packet that ends at the marker counts the records lost before it */
	s->discarded += lost;
	if (lost || s->len >= PACKET_BYTES)
		write_packet(ctf, s);
}

static void ctf_end(struct dtrace *dt, struct outbuf *o)
{
	struct ctf *ctf = dt->fmt_state;

	for (unsigned int i = 0; i < ctf->nr; i++) {
		struct ctf_stream *s = &ctf->streams[i];

		if (s->fd < 0)
			continue;
		/* a stream without events still says what it is: an empty packet */
		if (!s->len && !s->packets) {
			s->len = HEADER_LEN + CONTEXT_LEN(s->user);
			s->begin = s->end = dt->t0;
		}
		if (s->len)
			write_packet(ctf, s);
		if (close(s->fd) < 0)
			die("%s/%s: %s", ctf->dir, s->name, strerror(errno));
		free(s->buf);
		free(s->named);
	}
	free(ctf->named);
	free(ctf->streams);
	close(ctf->dir_fd);
	free(ctf->fields);
	free(ctf);
}

const struct dtrace_format dtrace_ctf = {
	.name = "ctf",
	.flags = DTRACE_FMT_TO_DIR,
	.start = ctf_start,
	.event = ctf_event,
	.end = ctf_end,
};
