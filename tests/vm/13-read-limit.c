// SPDX-License-Identifier: GPL-2.0
/*
 * One read() copies at most KTRACE_READ_MAX records, however many wait and
 * however large the user buffer: it copies without rescheduling.
 */
#include "ktest.h"

#define CPU	2
#define EVENTS	20000

int main(void)
{
	struct ktrace_record batch[64], *recs;
	int fd, rfd, i, j;
	ssize_t n, m;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = kt_open(O_RDWR);
	kt_set_mask(fd, 0);
	pin_to_cpu(CPU);
	ok(kt_resize(fd, 65536) == 0, "buffers of 65536 records");
	rfd = kt_open(O_RDWR | O_NONBLOCK);
	ok(kt_attach(rfd, CPU) == 0, "reader attached to cpu %d", CPU);
	ok(kt_set_mask(fd, KTRACE_GRP_user) == 0, "tracing user events");
	memset(batch, 0, sizeof(batch));
	for (i = 0; i < EVENTS; i += 64) {
		for (j = 0; j < 64; j++) {
			batch[j].event = KTRACE_user_mark;
			batch[j].arg1 = i + j;
		}
		if (write(fd, batch, sizeof(batch)) != sizeof(batch))
			bail("write");
	}
	kt_set_mask(fd, 0);

	recs = calloc(2 * EVENTS, sizeof(*recs));
	if (!recs)
		bail("calloc");
	n = read(rfd, recs, 2 * EVENTS * sizeof(*recs));
	ok(n == KTRACE_READ_MAX * (ssize_t)sizeof(*recs),
	   "a read() for %d records returns %d (%zd bytes)", 2 * EVENTS, KTRACE_READ_MAX, n);
	m = read(rfd, recs + n / sizeof(*recs), 2 * EVENTS * sizeof(*recs));
	ok(n > 0 && m > 0 && (n + m) / (ssize_t)sizeof(*recs) == (EVENTS + 63) / 64 * 64,
	   "the next read() returns the rest (%zd records)", m / (ssize_t)sizeof(*recs));
	ok(n > 0 && recs[0].arg1 == 0 && recs[KTRACE_READ_MAX].arg1 == KTRACE_READ_MAX,
	   "in order across the two reads");
	close(rfd);
	close(fd);
	free(recs);
	return done_testing();
}
