// SPDX-License-Identifier: GPL-2.0
/*
 * A flood from every CPU into deliberately small buffers while interrupts,
 * softirqs, timers and NMIs (sysrq-l backtraces, sent as NMIs to all CPUs)
 * trace too.  Checks every record against the event table: well formed,
 * continuation records complete and right after their event, time stamps
 * never backwards on a CPU, the producers' numbered events untorn and
 * never duplicated, and the records read plus those the lost markers count
 * equal to what the kernel says was written and lost.  Then the same flood
 * in overwrite mode: what stays in the buffers is just as well formed.
 */
#include "ktest.h"

#include <sys/mman.h>
#include <sys/wait.h>

#define EVENTS_PER_CPU	4000
#define SMALL_BUF	256
#define NMI_ROUNDS	20
#define MAX_CPUS	64

struct event_info {
	uint32_t code;
	int nr_cont;
};

static const struct event_info events[] = {
#define KTRACE_GROUP(g)
#define KTRACE_EVENT(g, n, c, f) { KTRACE_##g##_##n, c },
#include <linux/ktrace_events.h>
#undef KTRACE_EVENT
#undef KTRACE_GROUP
};

static int expected_cont(uint32_t code)
{
	if ((code & KTRACE_GROUP_MASK) == KTRACE_GRP_user)
		return KTRACE_SUB(code) == 9 ? 2 : 0;
	for (size_t i = 0; i < sizeof(events) / sizeof(events[0]); i++)
		if (events[i].code == code)
			return events[i].nr_cont;
	return -1;
}

static void produce(int fd, int cpu)
{
	uint32_t args[6];
	char *mem;

	pin_to_cpu(cpu);
	mem = mmap(NULL, 64 << 12, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (uint32_t seq = 0; seq < EVENTS_PER_CPU; seq++) {
		args[0] = seq;
		args[1] = cpu;
		args[2] = seq * 2654435761u;
		args[3] = ~seq;
		args[4] = seq ^ 0x5a5a5a5a;
		args[5] = cpu + 1000;
		if (kt_user_event(fd, 9, args, 6))
			_exit(1);
		if (seq % 64 == 0)
			mem[(seq / 64 % 64) << 12] = 1;		/* a page fault now and then */
	}
	_exit(0);
}

static void send_nmis(void)
{
	int fd = open("/proc/sysrq-trigger", O_WRONLY);

	for (int i = 0; fd >= 0 && i < NMI_ROUNDS; i++) {
		if (write(fd, "l", 1) != 1)
			break;
		usleep(20000);
	}
	_exit(0);
}

/* Check one CPU's stream; returns the number of problems. */
static int check_stream(const struct stream *s, int cpu, uint64_t *lost, uint64_t *nmis,
			uint64_t *kernel_events)
{
	uint32_t last_seq[MAX_CPUS];
	uint64_t last_tsc = 0;
	int bad = 0;

	memset(last_seq, 0xff, sizeof(last_seq));
	for (size_t i = 0; i < s->nr; i++) {
		const struct ktrace_record *r = &s->recs[i];
		int nr_cont;

		if (r->tsc < last_tsc && bad++ < 5)
			diag("cpu %d record %zu: time stamp goes backwards", cpu, i);
		last_tsc = r->tsc;
		if (r->event == KTRACE_META_LOST) {
			*lost += r->arg1 | (uint64_t)r->arg2 << 32;
			continue;
		}
		nr_cont = expected_cont(r->event);
		if (nr_cont < 0 || __builtin_popcount(r->event & KTRACE_GROUP_MASK) != 1) {
			if (bad++ < 5)
				diag("cpu %d record %zu: unknown or malformed event %#x", cpu, i, r->event);
			continue;
		}
		for (int c = 0; c < nr_cont; c++) {
			uint32_t want = KTRACE_EVT_CONT | (uint32_t)c << KTRACE_SUB_SHIFT |
					(c == nr_cont - 1 ? KTRACE_EVT_END : 0);

			if (i + 1 + c >= s->nr || s->recs[i + 1 + c].event != want ||
			    s->recs[i + 1 + c].tsc != r->tsc || s->recs[i + 1 + c].tid != r->tid) {
				if (bad++ < 5)
					diag("cpu %d record %zu: event %#x without its continuation %d",
					     cpu, i, r->event, c);
				break;
			}
		}
		if (r->event == KTRACE_irq_nmi)
			(*nmis)++;
		if ((r->event & KTRACE_GROUP_MASK) != KTRACE_GRP_user)
			(*kernel_events)++;
		if (r->event == KTRACE_CODE(KTRACE_GRP_user, 9) && i + 2 < s->nr) {
			uint32_t seq = r->arg1, producer = r->arg2;

			if (producer >= MAX_CPUS || s->recs[i + 1].arg1 != seq * 2654435761u ||
			    s->recs[i + 1].arg2 != ~seq || s->recs[i + 2].arg1 != (seq ^ 0x5a5a5a5a) ||
			    s->recs[i + 2].arg2 != producer + 1000) {
				if (bad++ < 5)
					diag("cpu %d record %zu: torn producer event", cpu, i);
			} else if (last_seq[producer] != 0xffffffff && seq <= last_seq[producer]) {
				if (bad++ < 5)
					diag("cpu %d record %zu: event %u after %u: duplicated or reordered",
					     cpu, i, seq, last_seq[producer]);
			} else {
				last_seq[producer] = seq;
			}
		}
		i += nr_cont;
	}
	return bad;
}

/*
 * The same flood in overwrite mode (the flight recorder), no reader while
 * it runs: then each CPU's buffer, read whole, holds well-formed records
 * in order, untorn, and what was read plus what was overwritten is what
 * was written.
 */
static void flood_overwrite(int fd, uint32_t mask, int nr_cpus)
{
	struct ktrace_mode overwrite = { .flags = KTRACE_MODE_OVERWRITE }, normal = { 0 };
	uint64_t nmis = 0, lost = 0, kernel_events = 0, overwritten = 0;
	struct ktrace_cpu_stats before[MAX_CPUS];
	struct stream s = { 0 };
	pid_t pids[MAX_CPUS], nmi_pid;
	int cpu, status, bad = 0, counted = 1;

	/* the counters run on from the first flood: this one is the difference */
	for (cpu = 0; cpu < nr_cpus; cpu++)
		kt_stats(fd, cpu, &before[cpu]);
	ok(ioctl(fd, KTRACE_IOC_SET_MODE, &overwrite) == 0, "overwrite mode");
	ok(kt_set_mask(fd, mask) == 0, "the flood again, in overwrite mode, no reader");
	nmi_pid = fork();
	if (nmi_pid == 0)
		send_nmis();
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		pids[cpu] = fork();
		if (pids[cpu] == 0)
			produce(fd, cpu);
	}
	for (cpu = 0; cpu < nr_cpus; cpu++)
		waitpid(pids[cpu], &status, 0);
	waitpid(nmi_pid, &status, 0);
	kt_set_mask(fd, 0);	/* waits for the writers: the buffers are still */

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		struct ktrace_cpu_stats st;
		uint64_t markers = 0;
		int rfd = kt_open(O_RDWR | O_NONBLOCK);

		if (kt_attach(rfd, cpu))
			bail("attach");
		s.nr = kt_drain(rfd, &s.recs, &s.cap, 0);
		close(rfd);
		bad += check_stream(&s, cpu, &lost, &nmis, &kernel_events);
		for (size_t i = 0; i < s.nr; i++)
			markers += s.recs[i].event == KTRACE_META_LOST;
		kt_stats(fd, cpu, &st);
		st.written -= before[cpu].written;
		st.read -= before[cpu].read;
		st.overwritten -= before[cpu].overwritten;
		overwritten += st.overwritten;
		if (st.read != s.nr - markers || st.written != st.read + st.overwritten) {
			diag("cpu %d: read %llu of %zu records, written %llu, overwritten %llu", cpu,
			     (unsigned long long)st.read, s.nr - (size_t)markers,
			     (unsigned long long)st.written, (unsigned long long)st.overwritten);
			counted = 0;
		}
	}
	ok(bad == 0, "overwrite mode under the flood and NMIs: every record well formed, "
	   "continuations in place, time stamps in order, nothing torn or duplicated");
	ok(counted, "every CPU: written = read + overwritten");
	ok(overwritten > 0 && kernel_events > 0,
	   "the rings wrapped (%llu records overwritten), kernel events among the newest",
	   (unsigned long long)overwritten);
	ok(ioctl(fd, KTRACE_IOC_SET_MODE, &normal) == 0, "normal mode again");
	free(s.recs);
}

int main(void)
{
	const uint32_t mask = KTRACE_GRP_sched | KTRACE_GRP_thread | KTRACE_GRP_fault |
			      KTRACE_GRP_irq | KTRACE_GRP_softirq | KTRACE_GRP_syscall |
			      KTRACE_GRP_timer | KTRACE_GRP_signal | KTRACE_GRP_user;
	struct stream streams[MAX_CPUS] = { 0 };
	struct pollfd pfd[MAX_CPUS];
	pid_t pids[MAX_CPUS], nmi_pid;
	uint64_t nmis = 0, total_lost = 0, kernel_events = 0;
	int fd, cpu, status, failures, bad = 0, printk_fd;
	int nr_cpus = nr_cpus_online() > MAX_CPUS ? MAX_CPUS : nr_cpus_online();
	char printk_level[64] = "7";
	uint32_t flush_args[2] = { 0, 0 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	/* Keep the NMI backtraces off the console that carries our TAP. */
	printk_fd = open("/proc/sys/kernel/printk", O_RDWR);
	if (printk_fd >= 0 && read(printk_fd, printk_level, sizeof(printk_level) - 1) > 0 &&
	    pwrite(printk_fd, "1", 1, 0) != 1)
		diag("cannot quiet the console");

	fd = kt_open(O_RDWR);
	kt_set_mask(fd, 0);
	ok(kt_resize(fd, SMALL_BUF) == 0, "buffers of %d records", SMALL_BUF);
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		pfd[cpu].fd = kt_open(O_RDWR | O_NONBLOCK);
		pfd[cpu].events = POLLIN;
		if (kt_attach(pfd[cpu].fd, cpu))
			bail("attach");
	}
	ok(kt_set_mask(fd, mask) == 0, "tracing sched, thread, fault, irq, softirq, syscall, timer, signal, user");
	nmi_pid = fork();
	if (nmi_pid == 0)
		send_nmis();
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		pids[cpu] = fork();
		if (pids[cpu] == 0)
			produce(fd, cpu);
	}

	failures = kt_read_while_running(pfd, streams, nr_cpus, pids, 64);
	waitpid(nmi_pid, &status, 0);
	ok(!failures, "%d producers wrote %d events each", nr_cpus, EVENTS_PER_CPU);

	/* Only user events now: one per CPU turns pending losses into markers. */
	kt_set_mask(fd, KTRACE_GRP_user);
	for (cpu = 0; cpu < nr_cpus; cpu++) {
		streams[cpu].nr = kt_drain(pfd[cpu].fd, &streams[cpu].recs, &streams[cpu].cap,
					   streams[cpu].nr);
		pin_to_cpu(cpu);
		kt_user_event(fd, 1, flush_args, 2);
	}
	kt_set_mask(fd, 0);

	for (cpu = 0; cpu < nr_cpus; cpu++) {
		struct stream *s = &streams[cpu];
		struct ktrace_cpu_stats st;
		uint64_t lost = 0, markers = 0;

		s->nr = kt_drain(pfd[cpu].fd, &s->recs, &s->cap, s->nr);
		bad += check_stream(s, cpu, &lost, &nmis, &kernel_events);
		for (size_t i = 0; i < s->nr; i++)
			markers += s->recs[i].event == KTRACE_META_LOST;
		kt_stats(fd, cpu, &st);
		ok(s->nr - markers == st.written && lost == st.lost,
		   "cpu %d: %zu records read + %llu lost = %llu written + %llu lost", cpu,
		   s->nr - (size_t)markers, (unsigned long long)lost,
		   (unsigned long long)st.written, (unsigned long long)st.lost);
		total_lost += lost;
		close(pfd[cpu].fd);
		free(s->recs);
	}
	ok(bad == 0, "every record well formed, continuations in place, time stamps in order, nothing torn or duplicated");
	ok(total_lost > 0, "the small buffers overflowed (%llu records lost)",
	   (unsigned long long)total_lost);
	ok(nmis > 0, "NMIs traced during the flood (%llu)", (unsigned long long)nmis);
	ok(kernel_events > 0, "kernel events traced during the flood (%llu)",
	   (unsigned long long)kernel_events);
	flood_overwrite(fd, mask, nr_cpus);
	kt_resize(fd, 65536);
	close(fd);
	if (printk_fd >= 0) {
		if (pwrite(printk_fd, printk_level, strcspn(printk_level, " \t\n"), 0) < 0)
			diag("cannot restore the console level");
		close(printk_fd);
	}
	return done_testing();
}
