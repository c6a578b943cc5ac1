// SPDX-License-Identifier: GPL-2.0
/*
 * Context-switch and fork records over a traced window agree exactly with
 * the change of "ctxt" and "processes" in /proc/stat, when nothing is lost.
 *
 * The window is bounded by two user events written by this process, pinned
 * to CPU 0, right around the reads of /proc/stat.  Another CPU can still
 * switch between a read and its marker; then the counts differ by that
 * switch, so the measurement is repeated a few times and must match exactly
 * at least once, and must never be off by more than a few.
 */
#include "ktest.h"

#include <sys/wait.h>

#define ATTEMPTS	5
#define CHILDREN	20

struct stream {
	struct ktrace_record *recs;
	size_t nr, cap;
};

static void read_stat(unsigned long long *ctxt, unsigned long long *processes)
{
	char line[4096];
	FILE *f = fopen("/proc/stat", "r");

	if (!f)
		bail("/proc/stat");
	while (fgets(line, sizeof(line), f)) {
		sscanf(line, "ctxt %llu", ctxt);
		sscanf(line, "processes %llu", processes);
	}
	fclose(f);
}

/* Children that sleep, yield, fork and exec: switches and forks on all CPUs. */
static void workload(void)
{
	pid_t pids[CHILDREN];
	int i, status;

	for (i = 0; i < CHILDREN; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			pin_to_cpu(i % nr_cpus_online());
			for (int j = 0; j < 5; j++) {
				usleep(1000);
				sched_yield();
			}
			execl("/bin/true", "true", NULL);
			_exit(1);
		}
	}
	for (i = 0; i < CHILDREN; i++)
		waitpid(pids[i], &status, 0);
}

int main(void)
{
	struct stream streams[64] = { 0 };
	unsigned long long ctxt_a = 0, ctxt_b = 0, proc_a = 0, proc_b = 0;
	uint32_t marker[2] = { 0, 0 };
	int fd, rfd[64], nr_cpus = nr_cpus_online(), cpu, attempt, exact = 0;
	long long worst = 0;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (nr_cpus > 64)
		nr_cpus = 64;
	fd = kt_open(O_RDWR);
	kt_set_mask(fd, 0);
	ok(kt_resize(fd, 1 << 18) == 0, "buffers of %d records", 1 << 18);
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		rfd[cpu] = kt_open(O_RDWR | O_NONBLOCK);
		if (kt_attach(rfd[cpu], cpu))
			bail("attach");
	}
	pin_to_cpu(0);

	for (attempt = 1; attempt <= ATTEMPTS && !exact; attempt++) {
		uint64_t tsc_a = 0, tsc_b = 0, lost = 0;
		long long switches = 0, forks = 0;

		kt_set_mask(fd, KTRACE_GRP_sched | KTRACE_GRP_thread | KTRACE_GRP_user);
		usleep(20000);
		marker[0] = 1;
		kt_user_event(fd, 1, marker, 2);
		read_stat(&ctxt_a, &proc_a);
		workload();
		usleep(20000);
		read_stat(&ctxt_b, &proc_b);
		marker[0] = 2;
		kt_user_event(fd, 1, marker, 2);
		kt_set_mask(fd, 0);

		for (cpu = 0; cpu < nr_cpus; cpu++) {
			streams[cpu].nr = kt_drain(rfd[cpu], &streams[cpu].recs, &streams[cpu].cap, 0);
			for (size_t i = 0; i < streams[cpu].nr; i++) {
				struct ktrace_record *r = &streams[cpu].recs[i];

				if (r->event == KTRACE_user_mark && r->tid == (uint32_t)getpid())
					*(r->arg1 == 1 ? &tsc_a : &tsc_b) = r->tsc;
				if (r->event == KTRACE_META_LOST)
					lost += r->arg1;
			}
		}
		for (cpu = 0; cpu < nr_cpus; cpu++) {
			for (size_t i = 0; i < streams[cpu].nr; i++) {
				struct ktrace_record *r = &streams[cpu].recs[i];

				if (r->tsc <= tsc_a || r->tsc >= tsc_b)
					continue;
				switches += r->event == KTRACE_sched_switch;
				forks += r->event == KTRACE_thread_fork;
			}
		}
		diag("attempt %d: %lld switch records, ctxt +%llu; %lld fork records, processes +%llu; %llu lost",
		     attempt, switches, ctxt_b - ctxt_a, forks, proc_b - proc_a,
		     (unsigned long long)lost);
		if (!tsc_a || !tsc_b || lost)
			continue;
		if (llabs(switches - (long long)(ctxt_b - ctxt_a)) > worst)
			worst = llabs(switches - (long long)(ctxt_b - ctxt_a));
		exact = switches == (long long)(ctxt_b - ctxt_a) && forks == (long long)(proc_b - proc_a) &&
			forks >= 2 * CHILDREN;
	}
	ok(exact, "switch and fork records agree exactly with /proc/stat ctxt and processes");
	ok(worst <= 8, "never off by more than a few boundary switches (worst %lld)", worst);
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		close(rfd[cpu]);
		free(streams[cpu].recs);
	}
	kt_resize(fd, 65536);
	close(fd);
	return done_testing();
}
