// SPDX-License-Identifier: GPL-2.0
/*
 * The buffer against a trivially correct model.
 *
 * Producers pinned one per CPU write numbered user events of three records
 * (an event and two continuation records) into deliberately tiny buffers
 * while a reader drains them slowly.  The model of each CPU's stream is
 * the sequence 0, 1, 2, ... of its producer: every event read must be the
 * next number, or skip exactly as many events as the lost-records marker
 * in front of it says.  Every record must be well formed, continuation
 * records must follow their event, time stamps must never go backwards,
 * written + lost must equal produced, and read must equal written once
 * the reader has everything (neither counts lost markers).
 */
#include "ktest.h"

#include <sys/wait.h>

#define EVENTS_PER_CPU	20000
#define RECS_PER_EVENT	3
#define TINY_BUF	64

static uint32_t seq_check(uint32_t seq, uint32_t cpu)
{
	return seq * 2654435761u ^ cpu;
}

static void produce(int fd, int cpu, int events, uint32_t first)
{
	uint32_t args[6];

	pin_to_cpu(cpu);
	for (uint32_t seq = first; seq < first + (uint32_t)events; seq++) {
		args[0] = seq;
		args[1] = cpu;
		args[2] = seq_check(seq, cpu);
		args[3] = ~seq;
		args[4] = cpu * 1000;
		args[5] = 77;
		if (kt_user_event(fd, 9, args, 6))
			_exit(1);
	}
	_exit(0);
}

/* Walk one CPU's stream against the model; returns records lost per markers. */
static uint64_t check_stream(const struct stream *s, int cpu, uint32_t *next_seq,
			     uint64_t *bad)
{
	uint64_t lost = 0, pending = 0, last_tsc = 0;
	size_t i;

	for (i = 0; i < s->nr; i++) {
		const struct ktrace_record *r = &s->recs[i];

		if (r->tsc < last_tsc) {
			diag("cpu %d record %zu: time stamp goes backwards", cpu, i);
			(*bad)++;
		}
		last_tsc = r->tsc;
		if (r->event == KTRACE_META_LOST) {
			pending += r->arg1 | (uint64_t)r->arg2 << 32;
			continue;
		}
		if (r->event != KTRACE_CODE(KTRACE_GRP_user, 9) || i + 2 >= s->nr ||
		    s->recs[i + 1].event != KTRACE_EVT_CONT ||
		    s->recs[i + 2].event != (KTRACE_EVT_CONT | KTRACE_EVT_END | 1u << 24)) {
			diag("cpu %d record %zu: malformed (event %#x)", cpu, i, r->event);
			(*bad)++;
			continue;
		}
		if (pending % RECS_PER_EVENT ||
		    r->arg1 != *next_seq + pending / RECS_PER_EVENT) {
			diag("cpu %d record %zu: event %u after %u with %llu records lost",
			     cpu, i, r->arg1, *next_seq, (unsigned long long)pending);
			(*bad)++;
		}
		if (r->arg2 != (uint32_t)cpu || s->recs[i + 1].arg1 != seq_check(r->arg1, cpu) ||
		    s->recs[i + 1].arg2 != ~r->arg1 || s->recs[i + 2].arg1 != (uint32_t)cpu * 1000 ||
		    s->recs[i + 2].arg2 != 77 || s->recs[i + 1].tsc != r->tsc ||
		    s->recs[i + 2].tsc != r->tsc || s->recs[i + 1].tid != r->tid) {
			diag("cpu %d record %zu: torn event %u", cpu, i, r->arg1);
			(*bad)++;
		}
		lost += pending;
		pending = 0;
		*next_seq = r->arg1 + 1;
		i += 2;
	}
	return lost + pending;
}

static void test_sequential(int fd)
{
	struct ktrace_cpu_stats st;
	struct ktrace_record *recs = NULL;
	size_t cap = 0, nr;
	uint32_t args[2] = { 0, 0 };
	int rfd, cpu = 3, i;

	ok(kt_resize(fd, 16) == 0, "buffers of 16 records");
	pin_to_cpu(cpu);
	ok(kt_set_mask(fd, KTRACE_GRP_user) == 0, "tracing user events");
	for (i = 0; i < 100; i++) {
		args[0] = i;
		kt_user_event(fd, 1, args, 2);
	}
	kt_stats(fd, cpu, &st);
	ok(st.written == 16 && st.lost == 84, "100 events into 16 slots: %llu written, %llu lost",
	   (unsigned long long)st.written, (unsigned long long)st.lost);
	rfd = kt_open(O_RDWR | O_NONBLOCK);
	kt_attach(rfd, cpu);
	nr = kt_drain(rfd, &recs, &cap, 0);
	ok(nr == 16 && recs[0].arg1 == 0 && recs[15].arg1 == 15,
	   "reader gets the oldest 16 (%zu records)", nr);
	args[0] = 100;
	kt_user_event(fd, 1, args, 2);
	nr = kt_drain(rfd, &recs, &cap, 0);
	ok(nr == 2 && recs[0].event == KTRACE_META_LOST && recs[0].arg1 == 84 &&
	   recs[0].arg2 == 0 && recs[1].arg1 == 100,
	   "next event comes after a marker of exactly 84 lost records");
	kt_stats(fd, cpu, &st);
	ok(st.written + st.lost == 101 && st.read == 17 && st.read == st.written,
	   "written + lost = 101 produced, 17 read = written (markers counted in neither)");
	kt_set_mask(fd, 0);
	close(rfd);
	free(recs);
}

static void test_concurrent(int fd, int nr_cpus)
{
	struct ktrace_cpu_stats st;
	struct stream streams[64] = { 0 };
	struct pollfd pfd[64];
	uint64_t bad = 0;
	int cpu, status, failures;
	pid_t pids[64];

	ok(kt_resize(fd, TINY_BUF) == 0, "buffers of %d records", TINY_BUF);
	ok(kt_set_mask(fd, KTRACE_GRP_user) == 0, "tracing user events");
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		pfd[cpu].fd = kt_open(O_RDWR | O_NONBLOCK);
		pfd[cpu].events = POLLIN;
		if (kt_attach(pfd[cpu].fd, cpu))
			bail("attach");
	}
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		pids[cpu] = fork();
		if (pids[cpu] == 0)
			produce(fd, cpu, EVENTS_PER_CPU, 0);
	}

	/* A slow reader: small reads, so the tiny buffers overflow often. */
	failures = kt_read_while_running(pfd, streams, nr_cpus, pids, 7);
	ok(!failures, "%d producers wrote %d events of %d records each", nr_cpus,
	   EVENTS_PER_CPU, RECS_PER_EVENT);

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		struct stream *s = &streams[cpu];
		uint32_t next_seq = 0;
		uint64_t lost;

		s->nr = kt_drain(pfd[cpu].fd, &s->recs, &s->cap, s->nr);
		/* One more event flushes the count of the last losses as a marker. */
		pids[cpu] = fork();
		if (pids[cpu] == 0)
			produce(fd, cpu, 1, EVENTS_PER_CPU);
		waitpid(pids[cpu], &status, 0);
		s->nr = kt_drain(pfd[cpu].fd, &s->recs, &s->cap, s->nr);

		lost = check_stream(s, cpu, &next_seq, &bad);
		kt_stats(fd, cpu, &st);
		ok(next_seq == EVENTS_PER_CPU + 1, "cpu %d: stream ends with the flush event", cpu);
		ok(st.written + st.lost == (EVENTS_PER_CPU + 1) * RECS_PER_EVENT,
		   "cpu %d: written %llu + lost %llu = produced %d", cpu,
		   (unsigned long long)st.written, (unsigned long long)st.lost,
		   (EVENTS_PER_CPU + 1) * RECS_PER_EVENT);
		ok(lost == st.lost, "cpu %d: lost markers add up to the lost count (%llu)", cpu,
		   (unsigned long long)lost);
		ok(st.read == st.written, "cpu %d: %llu records read = written, markers not counted",
		   cpu, (unsigned long long)st.read);
		diag("cpu %d: %llu of %d records lost", cpu, (unsigned long long)st.lost,
		     (EVENTS_PER_CPU + 1) * RECS_PER_EVENT);
		close(pfd[cpu].fd);
		free(s->recs);
	}
	ok(bad == 0, "every record well formed, in order, untorn, and as the model says");
	kt_set_mask(fd, 0);
}

int main(void)
{
	int fd, nr_cpus = nr_cpus_online();

	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = kt_open(O_RDWR);
	kt_set_mask(fd, 0);
	test_sequential(fd);
	test_concurrent(fd, nr_cpus > 64 ? 64 : nr_cpus);
	ok(kt_resize(fd, 65536) == 0, "default buffer size restored");
	close(fd);
	return done_testing();
}
