// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_ring: libFuzzer target for ktrace-run's ring ingestion
 * (user/ring_drain.c): the header check of a ring's first page, the
 * draining of the records a hostile thread publishes, and the end of the
 * trace file (lost marker, cut chains).  The input:
 *
 *   byte 0     ring size: 2 << (b % 8) records
 *   byte 1     bit 0: make the ring's magic and version right, bit 1: the
 *              trace file header's magic, pid and tid (else as given),
 *              bit 2: only the header page mapped, the records by pread()
 *   byte 2     RLIMIT_FSIZE of the trace file: 0 none, else that many
 *              records after the header (+ byte 3 % 24 bytes): failed and
 *              torn writes
 *   then       struct kt_ring up to @committed, then the records, then
 *              8-byte values, one per ring_drain(): bytes 0-6 the ring's
 *              @committed, byte 7 bit 0 @ended, bits 4-7 @lost
 *
 * Checked: ring_check() accepts exactly the rings the page says are
 * whole; the trace file written is one dtrace's reader opens (its header
 * is always good), its size is the header and whole records, and its lost
 * markers add up to what ring_drain says it marked.
 *
 * Built and run by tests/fuzz/run.sh.
 */
#define _GNU_SOURCE
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ktfile.h"
#include "ring_drain.h"

#define PID	100
#define TID	101

static struct ktfile_header tmpl;
static struct ktrace_record buf[RING_CHUNK];

/* The lost markers of the file on @fd: their sum; aborts on a bad file. */
static uint64_t check_file(int fd, uint64_t want_records)
{
	struct ktfile_reader *rd;
	struct ktrace_record rec;
	struct stat st;
	uint64_t sum = 0;

	if (fstat(fd, &st) < 0 || (uint64_t)st.st_size !=
	    KTFILE_HEADER_SIZE + want_records * sizeof(struct ktrace_record))
		abort();
	for (uint64_t i = 0; i < want_records; i++) {
		if (pread(fd, &rec, sizeof(rec), KTFILE_HEADER_SIZE + i * sizeof(rec)) !=
		    sizeof(rec))
			abort();
		if (rec.event == KTRACE_META_LOST) {
			uint64_t c = rec.arg1 | (uint64_t)rec.arg2 << 32;

			sum = sum + c < sum ? UINT64_MAX : sum + c;	/* ring_drain saturates */
		}
	}
	lseek(fd, 0, SEEK_SET);
	rd = ktfile_open_fd(dup(fd), "ring", 0);
	if (!rd)
		abort();		/* the header is ktrace-run's: always good */
	ktfile_reader_close(rd);
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t records, ring_n, size_ring, sum;
	struct rlimit fsize = { RLIM_INFINITY, RLIM_INFINITY };
	struct ktfile_header hdr;
	const uint8_t *data0 = data;
	struct ring_src src;
	struct ring_drain d;
	struct kt_ring *r;
	const char *why;
	size_t n;
	int fd, rfd, ok, want;

	if (size < 4)
		return 0;
	if (!tmpl.magic[0]) {
		ktfile_header_init(&tmpl, -1, 1000000000, true, 0);
		signal(SIGXFSZ, SIG_IGN);
	}
	records = ring_n = 2ull << (data[0] % 8);
	size_ring = KT_RING_HEADER + records * sizeof(struct ktrace_record);
	if (data[2])
		fsize.rlim_cur = KTFILE_HEADER_SIZE + data[2] * sizeof(struct ktrace_record) +
				 data[3] % 24;
	r = calloc(1, size_ring);
	n = size - 4 < offsetof(struct kt_ring, committed) ? size - 4 :
	    offsetof(struct kt_ring, committed);
	memcpy(r, data + 4, n);
	if (data[1] & 1) {
		r->magic = KT_RING_MAGIC;
		r->version = KT_RING_VERSION;
		r->records = records;
	}
	if (data[1] & 2) {
		memcpy(r->file.magic, KTFILE_MAGIC, 8);
		r->file.pid = PID;
		r->file.tid = TID;
	}
	data += 4 + n;
	size -= 4 + n;
	ok = ring_check(r, size_ring, PID, TID, &tmpl, &hdr, &records, &why);
	want = r->magic != KT_RING_MAGIC ? 0 :
	       r->version == KT_RING_VERSION && r->records == ring_n &&
	       !memcmp(r->file.magic, KTFILE_MAGIC, 8) && r->file.pid == PID &&
	       r->file.tid == TID ? 1 : -1;
	if (ok != want)
		abort();
	if (ok <= 0) {
		free(r);
		return 0;
	}
	n = size < records * sizeof(struct ktrace_record) ? size :
	    records * sizeof(struct ktrace_record);
	memcpy(kt_ring_records(r), data, n);
	data += n;
	size -= n;

	fd = memfd_create("fuzz_ring", 0);
	if (fd < 0 || write(fd, &hdr, sizeof(hdr)) != sizeof(hdr))
		abort();
	rfd = dup(fd);
	src = (struct ring_src){ .map = (char *)r, .mapped = size_ring, .fd = -1,
				 .size = size_ring };
	if (data0[1] & 4) {
		/* as a ring ktrace-run could not map whole: the records by pread() */
		src.mapped = KT_RING_HEADER;
		src.fd = memfd_create("fuzz_ring_src", 0);
		if (src.fd < 0 || write(src.fd, r, size_ring) != (ssize_t)size_ring)
			abort();
	}
	ring_drain_init(&d, src, records, fd, TID, hdr.ref_tsc, buf);
	setrlimit(RLIMIT_FSIZE, &fsize);
	for (; size >= 8; data += 8, size -= 8) {
		memcpy(&r->committed, data, 8);
		r->committed &= (1ull << 56) - 1;	/* byte 7 is for @ended and @lost */
		r->ended = data[7] & 1;
		r->lost = data[7] >> 4;
		ring_drain(&d);
		if (ring_ended(&d) && (!r->ended || r->committed != d.done))
			abort();
	}
	ring_finish(&d);
	fsize.rlim_cur = RLIM_INFINITY;
	setrlimit(RLIMIT_FSIZE, &fsize);
	/* the thread may go on: done was moved a whole ring past what was taken */
	if (!d.why && r->done != d.done + records)
		abort();
	sum = check_file(rfd, d.out.records);
	if (sum != d.marked)
		abort();
	close(rfd);
	if (src.fd >= 0)
		close(src.fd);
	free(r);
	return 0;
}
