// SPDX-License-Identifier: GPL-2.0
/*
 * A resize whose allocations fail part-way changes nothing: every CPU keeps
 * its buffer, of the old size, with the records in it.  The failures are
 * injected (fail_page_alloc, this process only) after a budget of
 * allocations that grows from one attempt to the next, so some attempts
 * fail on the first CPU, some after a few CPUs got their new buffer, and
 * the last succeed.  Needs CONFIG_FAIL_PAGE_ALLOC (the debug kernel has
 * it); skipped where the kernel has none.
 */
#include "ktest.h"

#define FI	"/sys/kernel/debug/fail_page_alloc/"
#define SMALL	1024
#define LARGE	65536

static int put(const char *path, const char *value)
{
	int fd = open(path, O_WRONLY), ok;

	if (fd < 0)
		return -1;
	ok = write(fd, value, strlen(value)) == (ssize_t)strlen(value);
	close(fd);
	return ok ? 0 : -1;
}

/* One event on each CPU, its argument the attempt number. */
static void mark_cpus(int fd, int nr_cpus, uint32_t attempt)
{
	uint32_t args[2] = { attempt, 0 };

	for (int cpu = 0; cpu < nr_cpus; cpu++) {
		pin_to_cpu(cpu);
		if (kt_user_event(fd, 5, args, 2))
			bail("write");
	}
}

/* Every CPU has SMALL records and its mark of @attempt is still there. */
static int unchanged(int fd, int nr_cpus, uint32_t attempt)
{
	struct ktrace_cpu_stats st;
	struct ktrace_record recs[64];
	int cpu, rfd, found;
	ssize_t n;

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		if (kt_stats(fd, cpu, &st) || st.buf_records != SMALL) {
			diag("cpu %d: %u records after the failed resize", cpu, st.buf_records);
			return 0;
		}
		rfd = kt_open(O_RDWR | O_NONBLOCK);
		if (kt_attach(rfd, cpu))
			bail("attach");
		found = 0;
		while ((n = read(rfd, recs, sizeof(recs))) > 0)
			for (int i = 0; i < n / 24; i++)
				found |= recs[i].event == KTRACE_CODE(KTRACE_GRP_user, 5) &&
					 recs[i].arg1 == attempt;
		close(rfd);
		if (!found) {
			diag("cpu %d: the record written before the failed resize is gone", cpu);
			return 0;
		}
	}
	return 1;
}

int main(void)
{
	int fd, nr_cpus = nr_cpus_online(), failed = 0, succeeded = 0, bad = 0;
	uint32_t space;
	char value[32];
	int rc, err, make_it_fail;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (access(FI "space", W_OK)) {
		printf("1..0 # SKIP no fail_page_alloc in this kernel (KCONFIG=debug has it)\n");
		return 0;
	}
	fd = kt_open(O_RDWR);
	kt_set_mask(fd, 0);
	/* Opened now: an open() with failures on could fail to turn them off. */
	make_it_fail = open("/proc/self/make-it-fail", O_WRONLY);
	if (make_it_fail < 0)
		bail("/proc/self/make-it-fail");
	ok(!put(FI "task-filter", "Y") && !put(FI "ignore-gfp-wait", "N") &&
	   !put(FI "ignore-gfp-highmem", "N") && !put(FI "min-order", "0") &&
	   !put(FI "probability", "100") && !put(FI "interval", "1") &&
	   !put(FI "times", "-1") && !put(FI "verbose", "0"),
	   "fail_page_alloc set up for this process");

	for (space = 0; space <= 120 && !succeeded; space += 3) {
		if (kt_resize(fd, SMALL))
			bail("resize to the small size");
		kt_set_mask(fd, KTRACE_GRP_user);
		mark_cpus(fd, nr_cpus, space);
		kt_set_mask(fd, 0);

		snprintf(value, sizeof(value), "%u", space);
		put(FI "space", value);
		if (pwrite(make_it_fail, "1", 1, 0) != 1)
			bail("make-it-fail");
		rc = kt_resize(fd, LARGE);
		err = errno;
		if (pwrite(make_it_fail, "0", 1, 0) != 1)
			bail("make-it-fail");
		if (rc == 0) {
			succeeded++;
			diag("budget %u: the resize succeeded", space);
		} else if (err != ENOMEM) {
			diag("budget %u: the resize failed with %s, not ENOMEM", space, strerror(err));
			bad++;
		} else {
			failed++;
			bad += !unchanged(fd, nr_cpus, space);
		}
	}
	put(FI "space", "0");
	put(FI "probability", "0");
	ok(failed > 1, "%d resizes failed, with budgets 0 to %d allocations", failed,
	   3 * (failed - 1));
	ok(succeeded, "then one succeeded");
	ok(!bad, "after each failure every CPU kept its buffer, size and records");
	ok(kt_resize(fd, LARGE) == 0, "default buffer size restored");
	close(fd);
	return done_testing();
}
