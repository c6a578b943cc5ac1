// SPDX-License-Identifier: GPL-2.0
/*
 * ktgen: write trace files for tests and benchmarks, reproducibly from a
 * seed, through the same library as ktrace (header and writer).
 *
 *   ktgen [options] BASE    writes BASE.cpu0 ... and BASE.user0 ...
 *
 * Random events of the event table with their CONT records, unknown events,
 * lost markers, equal time stamps within and across files, the other byte
 * order, and one of several corruptions of the first file (--corrupt KIND),
 * whose byte offset it prints ("offset N") for the tests to expect.
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktevents.h"
#include "ktfile.h"
#include "util.h"

#define CHUNK		4096
#define CORRUPTIONS	" magic version header-size byte-order record-size cpu tsc-hz string" \
			" short-header empty truncated order cont-orphan cont-seq cont-end "

#define FIXED_REAL_NS	1700000000000000000ull	/* 2023-11-14T22:13:20Z */

static struct {
	uint64_t seed, events, lost, unknown, step, hz, start, skew;
	unsigned int cpus, users;
	const char *boot_id, *hostname, *corrupt;
	bool swap;
	int zstd;		/* --zstd LEVEL: compressed, BASE.cpuN.zst; 0 none */
} opt = {
	.seed = 1, .events = 100, .step = 1000, .hz = 1000000000, .start = 1000000,
	.cpus = 2, .boot_id = "6c0e3f8a-1d2b-4c5d-9e8f-0a1b2c3d4e5f", .hostname = "ktgen",
};

static uint64_t rng;

static uint64_t rnd(uint64_t n)		/* 0 .. n-1; xorshift64* */
{
	rng ^= rng >> 12;
	rng ^= rng << 25;
	rng ^= rng >> 27;
	return n ? (rng * 0x2545f4914f6cdd1dull >> 11) % n : 0;
}

struct stream {
	const char *path;
	struct ktfile_writer w;
	struct ktrace_record buf[CHUNK];
	unsigned int nr;
	uint64_t tsc;			/* of the next record */
	uint64_t last_tsc;		/* of the last record */
	uint32_t tid;			/* user stream: its thread */
	bool user;
	long long bad_offset;		/* where --corrupt broke it, -1 */
};

static void flush(struct stream *s)
{
	int ret;

	if (opt.swap)
		for (unsigned int i = 0; i < s->nr; i++)
			ktfile_swap_record(&s->buf[i]);
	ret = ktfile_append(&s->w, s->buf, s->nr);
	if (ret < 0)
		die("%s: %s", s->path, strerror(-ret));
	s->nr = 0;
}

static uint64_t next_offset(const struct stream *s)
{
	return KTFILE_HEADER_SIZE + (s->w.records + s->nr) * sizeof(struct ktrace_record);
}

static void emit(struct stream *s, uint32_t code, uint32_t tid, uint32_t a1, uint32_t a2)
{
	s->buf[s->nr++] = (struct ktrace_record){ s->tsc, code, tid, a1, a2 };
	s->last_tsc = s->tsc;
	if (s->nr == CHUNK)
		flush(s);
}

static void emit_conts(struct stream *s, unsigned int n, uint32_t tid, bool end)
{
	for (unsigned int i = 0; i < n; i++) {
		uint32_t flags = KTRACE_EVT_CONT | (end && i == n - 1 ? KTRACE_EVT_END : 0);

		emit(s, flags | i << KTRACE_SUB_SHIFT, tid, rnd(1u << 31), rnd(16));
	}
}

static void emit_event(struct stream *s)
{
	uint32_t tid = s->user ? s->tid : rnd(8) ? 1000 + rnd(20) : 0;
	const struct ktev_desc *d;

	if (rnd(1000) < opt.unknown) {
		/* an unknown subevent, or several group bits, with 0-2 CONT records */
		uint32_t grp = rnd(2) ? 1u << rnd(KTRACE_NR_GROUPS) : 0x300;

		emit(s, grp | (200 + rnd(56)) << KTRACE_SUB_SHIFT, tid, rnd(100), rnd(100));
		emit_conts(s, rnd(3), tid, true);
		return;
	}
	do
		d = &ktev_events[rnd(ktev_nr_events)];
	while (s->user && strcmp(d->group, "user") && strcmp(d->group, "func"));
	if (d->code == KTRACE_thread_name) {	/* a name a person can read */
		static const char *const comms[] = { "bash", "wget", "kworker/0:1", "sshd" };
		uint32_t comm[KTRACE_COMM_LEN / 4] = { 0 };
		uint32_t named = 1000 + rnd(20);

		strncpy((char *)comm, comms[rnd(ARRAY_SIZE(comms))], sizeof(comm) - 1);
		emit(s, d->code, tid, named, named - named % 4);
		emit(s, KTRACE_EVT_CONT, tid, comm[0], comm[1]);
		emit(s, KTRACE_EVT_CONT | KTRACE_EVT_END | 1 << KTRACE_SUB_SHIFT, tid,
		     comm[2], comm[3]);
		return;
	}
	/* now and then a negative second argument, for %d */
	emit(s, d->code, tid, rnd(2000), rnd(4) ? rnd(64) : -(uint32_t)rnd(100));
	emit_conts(s, d->nr_cont, tid, true);
}

/* At the middle of stream 0: the record-level corruptions. */
static void corrupt_records(struct stream *s)
{
	const char *k = opt.corrupt;

	s->bad_offset = next_offset(s);
	if (!strcmp(k, "order")) {
		uint64_t tsc = s->tsc;

		s->tsc = s->last_tsc - 1;
		emit_event(s);
		s->tsc = tsc;
	} else if (!strcmp(k, "cont-orphan")) {
		emit(s, KTRACE_META_LOST, 0, 5, 0);
		s->bad_offset = next_offset(s);
		emit_conts(s, 1, 0, true);
	} else if (!strcmp(k, "cont-seq")) {
		emit(s, KTRACE_fault_page, 1000, 1, 2);
		s->bad_offset = next_offset(s);
		emit(s, KTRACE_EVT_CONT | KTRACE_EVT_END | 1 << KTRACE_SUB_SHIFT, 1000, 3, 4);
	} else if (!strcmp(k, "cont-end")) {
		emit(s, KTRACE_fault_page, 1000, 1, 2);
		emit_conts(s, 1, 1000, false);
		s->bad_offset = next_offset(s);
		emit_event(s);
	} else {
		s->bad_offset = -1;
	}
}

/* After writing: the header-level corruptions, and a torn last record. */
static void corrupt_file(struct stream *s, struct ktfile_header *h)
{
	static const struct {
		const char *kind;
		size_t off;
	} fields[] = {
		{ "magic", 0 }, { "version", offsetof(struct ktfile_header, version) },
		{ "header-size", offsetof(struct ktfile_header, header_size) },
		{ "byte-order", offsetof(struct ktfile_header, byte_order) },
		{ "record-size", offsetof(struct ktfile_header, record_size) },
		{ "cpu", offsetof(struct ktfile_header, cpu) },
		{ "tsc-hz", offsetof(struct ktfile_header, tsc_hz) },
		{ "string", offsetof(struct ktfile_header, hostname) },
	};
	const char *k = opt.corrupt;
	FILE *f;

	for (unsigned int i = 0; i < ARRAY_SIZE(fields); i++) {
		if (strcmp(k, fields[i].kind))
			continue;
		s->bad_offset = fields[i].off;
		switch (i) {
		case 0: h->magic[0] = 'X'; break;
		case 1: h->version = 7; break;
		case 2: h->header_size = 100; break;
		case 3: h->byte_order = 0x11223344; break;
		case 4: h->record_size = 32; break;
		case 5: h->cpu = -1; break;
		case 6: h->tsc_hz = 0; break;
		case 7: memset(h->hostname, 'x', sizeof(h->hostname)); break;
		}
	}
	if (s->bad_offset >= 0 && s->bad_offset < KTFILE_HEADER_SIZE) {
		f = fopen(s->path, "r+");
		if (!f || fwrite(h, sizeof(*h), 1, f) != 1 || fclose(f))
			die("%s: cannot rewrite the header", s->path);
	} else if (!strcmp(k, "truncated")) {
		s->bad_offset = next_offset(s);
		if (truncate(s->path, s->bad_offset + 10))
			die("%s: truncate failed", s->path);
	} else if (!strcmp(k, "short-header") || !strcmp(k, "empty")) {
		s->bad_offset = k[0] == 's' ? 100 : 0;
		if (truncate(s->path, s->bad_offset))
			die("%s: truncate failed", s->path);
	}
}

static void write_stream(struct stream *s, int cpu, unsigned int nr)
{
	struct ktfile_header h;
	int ret;

	ktfile_header_init(&h, cpu, opt.hz, true, ktev_all_groups);
	/* everything a test might print is fixed, not taken from this machine */
	snprintf(h.boot_id, sizeof(h.boot_id), "%s", opt.boot_id);
	snprintf(h.hostname, sizeof(h.hostname), "%s", opt.hostname);
	snprintf(h.release, sizeof(h.release), "6.1.0-ktgen");
	s->tsc = opt.start + rnd(opt.skew + 1);
	h.ref_tsc = opt.start;
	h.ref_mono_ns = 1000000000;
	h.ref_real_ns = FIXED_REAL_NS;
	if (cpu < 0) {
		s->user = true;
		s->tid = 5000 + nr;
		h.pid = 5000;
		h.tid = s->tid;
		snprintf(h.comm, sizeof(h.comm), "ktgen-user");
	}
	if (opt.swap)
		ktfile_swap_header(&h);
	ret = opt.zstd ? ktfile_create_zstd(&s->w, s->path, &h, opt.zstd) :
			 ktfile_create(&s->w, s->path, &h);
	if (ret < 0)
		die("%s: %s", s->path, strerror(-ret));
	if (opt.swap)
		ktfile_swap_header(&h);

	s->bad_offset = -1;
	for (uint64_t i = 0; i < opt.events; i++) {
		if (opt.corrupt && nr == 0 && cpu >= 0 && i == opt.events / 2)
			corrupt_records(s);
		if (opt.lost && rnd(opt.events) < opt.lost)
			emit(s, KTRACE_META_LOST, 0, 1 + rnd(500), rnd(20) ? 0 : 1);
		emit_event(s);
		s->tsc += rnd(opt.step + 1);
	}
	flush(s);
	if (opt.corrupt && nr == 0 && cpu >= 0)
		corrupt_file(s, &h);
	ktfile_close(&s->w);
}

static void usage(void)
{
	fprintf(stderr,
		"usage: ktgen [options] BASE   (writes BASE.cpuN, BASE.userN)\n"
		"  -s, --seed N      random seed (1)\n"
		"  -c, --cpus N      CPU streams (2)\n"
		"  -u, --users N     user thread streams (0)\n"
		"  -n, --events N    events per stream (100)\n"
		"  -l, --lost N      about N lost markers per stream (0)\n"
		"  -U, --unknown N   per mille of unknown events (0)\n"
		"      --step N      largest time stamp step, 0 allowed (1000)\n"
		"      --hz HZ       TSC frequency (1000000000)\n"
		"      --start TSC   first time stamp (1000000)\n"
		"      --skew N      start each stream up to N later (0)\n"
		"      --boot-id S   --hostname S   header fields\n"
		"      --swap        write the other byte order\n"
		"      --zstd LEVEL  compressed (BASE.cpuN.zst) at zstd LEVEL, not 0\n"
		"      --corrupt K   break the cpu0 file and print the offset; K: magic version\n"
		"                    header-size byte-order record-size cpu tsc-hz string\n"
		"                    short-header empty truncated order cont-orphan cont-seq cont-end\n");
	exit(2);
}

int main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "seed", 1, NULL, 's' }, { "cpus", 1, NULL, 'c' }, { "users", 1, NULL, 'u' },
		{ "events", 1, NULL, 'n' }, { "lost", 1, NULL, 'l' }, { "unknown", 1, NULL, 'U' },
		{ "step", 1, NULL, 'T' }, { "hz", 1, NULL, 'H' }, { "start", 1, NULL, 'A' },
		{ "skew", 1, NULL, 'K' }, { "boot-id", 1, NULL, 'B' }, { "hostname", 1, NULL, 'N' },
		{ "swap", 0, NULL, 'W' }, { "corrupt", 1, NULL, 'X' }, { "zstd", 1, NULL, 'Z' },
		{ NULL, 0, NULL, 0 },
	};
	struct stream *s = xcalloc(1, sizeof(*s));
	char path[4096];
	int c;

	util_set_progname(argv[0]);
	while ((c = getopt_long(argc, argv, "s:c:u:n:l:U:", longopts, NULL)) != -1) {
		switch (c) {
		case 's': opt.seed = strtoull(optarg, NULL, 0); break;
		case 'c': opt.cpus = strtoul(optarg, NULL, 0); break;
		case 'u': opt.users = strtoul(optarg, NULL, 0); break;
		case 'n': opt.events = strtoull(optarg, NULL, 0); break;
		case 'l': opt.lost = strtoull(optarg, NULL, 0); break;
		case 'U': opt.unknown = strtoull(optarg, NULL, 0); break;
		case 'T': opt.step = strtoull(optarg, NULL, 0); break;
		case 'H': opt.hz = strtoull(optarg, NULL, 0); break;
		case 'A': opt.start = strtoull(optarg, NULL, 0); break;
		case 'K': opt.skew = strtoull(optarg, NULL, 0); break;
		case 'B': opt.boot_id = optarg; break;
		case 'N': opt.hostname = optarg; break;
		case 'W': opt.swap = true; break;
		case 'X': opt.corrupt = optarg; break;
		case 'Z': opt.zstd = strtol(optarg, NULL, 0); break;
		default: usage();
		}
	}
	if (optind != argc - 1 || !opt.hz || opt.events < 2)
		usage();
	if (opt.corrupt && (!strstr(CORRUPTIONS, opt.corrupt) || opt.zstd))
		usage();
	rng = opt.seed * 0x9e3779b97f4a7c15ull + 1;
	for (unsigned int i = 0; i < opt.cpus + opt.users; i++) {
		bool user = i >= opt.cpus;
		unsigned int nr = user ? i - opt.cpus : i;

		snprintf(path, sizeof(path), "%s.%s%u%s", argv[optind], user ? "user" : "cpu", nr,
			 opt.zstd ? KTFILE_ZSTD_SUFFIX : "");
		s->path = path;
		write_stream(s, user ? -1 : (int)nr, nr);
		if (s->bad_offset >= 0)
			printf("offset %lld\n", s->bad_offset);
	}
	if (opt.corrupt && !opt.cpus)
		die("--corrupt needs a cpu stream");
	free(s);
	return 0;
}
