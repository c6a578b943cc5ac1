// SPDX-License-Identifier: GPL-2.0
/*
 * The flight recorder: overwrite mode (KTRACE_IOC_SET_MODE) keeps the
 * newest records, whole, and counts what it overwrote.
 *
 * A producer pinned to a CPU writes numbered user events of 1, 2 and 3
 * records, far more than its small buffer holds, then a snapshot is taken
 * the way ktrace --flight takes it: tracing off, a reader attached, the
 * buffer read, the reader detached, tracing on.  The model is the
 * producer's sequence 0 .. N-1: the snapshot must be exactly its newest
 * events, whole, numbered without a gap up to N-1, filling the buffer but
 * for less than one event; the kernel's overwritten count must be exactly
 * the records written but not kept; tracing must go on after the snapshot.
 * Then producers on every CPU at once, with every group traced, so that
 * interrupts, system calls and the scheduler write between (and inside)
 * the user events: each CPU's snapshot must still end with that CPU's
 * numbered events without a gap, and account for every record.
 */
#include "ktest.h"

#include <sys/mman.h>
#include <sys/wait.h>

#define SMALL_BUF	256
#define BIG_BUF		16384
#define EVENTS		20000
#define AFTER		10
#define USER_SUB	5

static int set_mode(int fd, uint32_t flags, uint32_t reserved)
{
	struct ktrace_mode m = { .flags = flags, .reserved = reserved };

	return ioctl(fd, KTRACE_IOC_SET_MODE, &m);
}

/* event @seq: 1, 2 or 3 records, every argument its number */
static unsigned int event_records(uint32_t seq)
{
	return 1 + seq % 3;
}

static void produce(int fd, uint32_t first, uint32_t nr)
{
	uint32_t args[6];

	for (uint32_t seq = first; seq < first + nr; seq++) {
		for (int i = 0; i < 6; i++)
			args[i] = seq;
		if (kt_user_event(fd, USER_SUB, args, 2 * event_records(seq)))
			bail("write of a user event");
	}
}

/* Tracing off, read the whole buffer of @cpu, detach. */
static size_t snapshot(int fd, int cpu, struct ktrace_record **recs, size_t *cap)
{
	size_t nr;
	int rfd;

	if (kt_set_mask(fd, 0))
		bail("tracing off");
	rfd = kt_open(O_RDWR | O_NONBLOCK);
	if (kt_attach(rfd, cpu))
		bail("attach for a snapshot");
	nr = kt_drain(rfd, recs, cap, 0);
	close(rfd);
	return nr;
}

/*
 * Walk a snapshot: whole events only; the user events numbered without a
 * gap, the last one @last.  Returns the user events found, -1 if bad;
 * *records gets the event records (lost markers are not counted).
 */
static long check_snapshot(const struct ktrace_record *r, size_t nr, uint32_t last,
			   uint64_t *records, int cpu)
{
	long users = 0;
	uint32_t next = 0;
	size_t i, k, len;

	*records = 0;
	for (i = 0; i < nr; i += len) {
		if (r[i].event == KTRACE_META_LOST) {
			len = 1;
			continue;
		}
		if (r[i].event & KTRACE_EVT_CONT) {
			diag("cpu %d record %zu: a continuation record without its event", cpu, i);
			return -1;
		}
		for (len = 1; i + len < nr && (r[i + len].event & KTRACE_EVT_CONT); len++)
			;
		*records += len;
		if (r[i].event != KTRACE_CODE(KTRACE_GRP_user, USER_SUB))
			continue;
		if ((users && r[i].arg1 != next) || len != event_records(r[i].arg1)) {
			diag("cpu %d record %zu: user event %u (%zu records) after %u", cpu, i,
			     r[i].arg1, len, next - 1);
			return -1;
		}
		for (k = 0; k < len; k++) {
			if (r[i + k].arg1 != r[i].arg1 || r[i + k].arg2 != r[i].arg1 ||
			    r[i + k].tsc != r[i].tsc) {
				diag("cpu %d record %zu: torn user event %u", cpu, i, r[i].arg1);
				return -1;
			}
		}
		next = r[i].arg1 + 1;
		users++;
	}
	if (users && next - 1 != last) {
		diag("cpu %d: the last user event is %u, not %u", cpu, next - 1, last);
		return -1;
	}
	return users;
}

static void test_abi(int fd)
{
	struct ktrace_info info;
	int rfd;

	is_errno(set_mode(fd, 0, 1), EINVAL, "SET_MODE reserved != 0");
	is_errno(set_mode(fd, 2, 0), EINVAL, "SET_MODE with an unknown flag");
	ok(kt_set_mask(fd, KTRACE_GRP_user) == 0, "tracing on");
	is_errno(set_mode(fd, KTRACE_MODE_OVERWRITE, 0), EBUSY, "SET_MODE while tracing");
	ok(kt_set_mask(fd, 0) == 0, "tracing off");
	rfd = kt_open(O_RDWR);
	ok(kt_attach(rfd, 0) == 0, "a reader attached to cpu 0");
	is_errno(set_mode(fd, KTRACE_MODE_OVERWRITE, 0), EBUSY, "SET_MODE with a reader attached");
	close(rfd);
	ok(set_mode(fd, KTRACE_MODE_OVERWRITE, 0) == 0 &&
	   ioctl(fd, KTRACE_IOC_INFO, &info) == 0 && (info.flags & KTRACE_INFO_OVERWRITE),
	   "overwrite mode set, INFO says so");

	rfd = kt_open(O_RDWR);
	ok(kt_set_mask(fd, KTRACE_GRP_user) == 0, "tracing on in overwrite mode");
	is_errno(kt_attach(rfd, 0), EBUSY, "overwrite mode: no reader attaches while tracing");
	ok(kt_set_mask(fd, 0) == 0 && kt_attach(rfd, 0) == 0,
	   "overwrite mode: a reader attaches with tracing off");
	is_errno(kt_set_mask(fd, KTRACE_GRP_user), EBUSY,
		 "overwrite mode: tracing stays off while a reader is attached");
	close(rfd);
	ok(kt_set_mask(fd, KTRACE_GRP_user) == 0 && kt_set_mask(fd, 0) == 0,
	   "tracing on again once the reader is gone");
	ok(set_mode(fd, 0, 0) == 0 && ioctl(fd, KTRACE_IOC_INFO, &info) == 0 &&
	   !(info.flags & KTRACE_INFO_OVERWRITE), "normal mode again");
}

static void test_one_cpu(int fd, int cpu)
{
	struct ktrace_cpu_stats st, st2;
	struct ktrace_record *recs = NULL;
	uint64_t produced = 0, kept;
	size_t cap = 0, nr;
	long users;

	ok(kt_resize(fd, SMALL_BUF) == 0 && set_mode(fd, KTRACE_MODE_OVERWRITE, 0) == 0,
	   "buffers of %d records, overwrite mode", SMALL_BUF);
	pin_to_cpu(cpu);
	ok(kt_set_mask(fd, KTRACE_GRP_user) == 0, "tracing user events");
	produce(fd, 0, EVENTS);
	for (uint32_t seq = 0; seq < EVENTS; seq++)
		produced += event_records(seq);

	nr = snapshot(fd, cpu, &recs, &cap);
	kt_stats(fd, cpu, &st);
	users = check_snapshot(recs, nr, EVENTS - 1, &kept, cpu);
	ok(users > 0 && kept == nr, "snapshot of cpu %d: %zu records, %ld whole events "
	   "numbered without a gap up to %d, no lost marker", cpu, nr, users, EVENTS - 1);
	ok(nr <= SMALL_BUF && nr > SMALL_BUF - 3,
	   "the newest events fill the buffer but for less than one event (%zu of %d)",
	   nr, SMALL_BUF);
	ok(st.written == produced && st.lost == 0,
	   "every record written (%llu of %llu), none lost (%llu)",
	   (unsigned long long)st.written, (unsigned long long)produced,
	   (unsigned long long)st.lost);
	ok(st.overwritten == st.written - kept && st.read == kept,
	   "overwritten %llu = written %llu - kept %llu exactly",
	   (unsigned long long)st.overwritten, (unsigned long long)st.written,
	   (unsigned long long)kept);

	/* tracing goes on: the events after the snapshot are all there */
	ok(kt_set_mask(fd, KTRACE_GRP_user) == 0, "tracing on again after the snapshot");
	produce(fd, EVENTS, AFTER);
	nr = snapshot(fd, cpu, &recs, &cap);
	users = check_snapshot(recs, nr, EVENTS + AFTER - 1, &kept, cpu);
	ok(users == AFTER && recs[0].arg1 == EVENTS,
	   "the next snapshot holds the %d events written after the first, %u..%u",
	   AFTER, EVENTS, EVENTS + AFTER - 1);
	kt_stats(fd, cpu, &st2);
	ok(st2.overwritten == st.overwritten && st2.written == st2.read + st2.overwritten,
	   "nothing more overwritten; written = read + overwritten");
	free(recs);
}

static void test_all_cpus(int fd, int nr_cpus)
{
	struct ktrace_record *recs = NULL;
	size_t cap = 0, nr;
	int cpu, status, failures = 0, bad = 0;
	pid_t pids[64];

	int *running = mmap(NULL, sizeof(*running), PROT_READ | PROT_WRITE,
			    MAP_SHARED | MAP_ANONYMOUS, -1, 0);

	if (running == MAP_FAILED)
		bail("mmap");
	*running = nr_cpus;
	/* room for the noise a CPU records while the others finish */
	ok(kt_resize(fd, BIG_BUF) == 0, "buffers of %d records", BIG_BUF);
	ok(kt_set_mask(fd, KTRACE_GROUP_MASK) == 0, "tracing every group in overwrite mode");
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		pids[cpu] = fork();
		if (pids[cpu] == 0) {
			pin_to_cpu(cpu);
			produce(fd, 0, EVENTS);
			/* the last to finish stops tracing; the others spin till then */
			if (__atomic_sub_fetch(running, 1, __ATOMIC_SEQ_CST) == 0)
				_exit(kt_set_mask(fd, 0) ? 1 : 0);
			while (__atomic_load_n(running, __ATOMIC_SEQ_CST))
				;
			_exit(0);
		}
	}
	for (cpu = 0; cpu < nr_cpus; cpu++)
		failures += waitpid(pids[cpu], &status, 0) != pids[cpu] || status;
	ok(!failures, "%d producers wrote %d events each", nr_cpus, EVENTS);
	if (kt_set_mask(fd, 0))
		bail("tracing off");
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		struct ktrace_cpu_stats before, after;
		uint64_t kept;
		long users;

		kt_stats(fd, cpu, &before);
		nr = snapshot(fd, cpu, &recs, &cap);
		kt_stats(fd, cpu, &after);
		users = check_snapshot(recs, nr, EVENTS - 1, &kept, cpu);
		if (users <= 0 || after.read - before.read != kept ||
		    after.written != after.read + after.overwritten) {
			diag("cpu %d: %ld user events, %llu records kept, written %llu, "
			     "read %llu, overwritten %llu, lost %llu", cpu, users,
			     (unsigned long long)kept, (unsigned long long)after.written,
			     (unsigned long long)after.read,
			     (unsigned long long)after.overwritten,
			     (unsigned long long)after.lost);
			bad++;
		}
	}
	ok(!bad, "every CPU's snapshot ends with its numbered events, no gap, and "
	   "written = read + overwritten exactly");
	munmap(running, sizeof(*running));
	free(recs);
}

int main(void)
{
	int fd = kt_open(O_RDWR);
	int nr_cpus = nr_cpus_online();

	if (nr_cpus > 64)
		nr_cpus = 64;
	kt_set_mask(fd, 0);
	test_abi(fd);
	test_one_cpu(fd, nr_cpus - 1);
	test_all_cpus(fd, nr_cpus);

	kt_set_mask(fd, 0);
	ok(set_mode(fd, 0, 0) == 0, "normal mode restored");
	kt_resize(fd, 65536);
	return done_testing();
}
