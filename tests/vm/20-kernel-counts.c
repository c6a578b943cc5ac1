// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace's counts agree with the kernel's own over a traced window with a
 * real workload: context switches with /proc/stat ctxt, forks with
 * processes, page faults with pgfault in /proc/vmstat, device interrupts
 * with /proc/interrupts, softirqs with /proc/softirqs.  System calls,
 * signals, loopback packets and block requests are compared with what the
 * workload itself is known to do.
 *
 * The window is bounded by two user events written right around the reads
 * of the counters.  A CPU other than ours can still count an event between
 * a read and its marker; so the window is repeated a few times, and each
 * counter must agree exactly in at least one of them.
 */
#include "ktrace-window.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#define ATTEMPTS	5
#define CHILDREN	12
#define SYSCALLS	1000
#define SIGNALS		10
#define PACKETS		100
#define BLOCK_READS	64
#define FAULT_PAGES	512
#define NR_IRQS		256
#define NR_SOFTIRQS	10

struct counters {
	unsigned long long ctxt, processes, pgfault;
	unsigned long long irq[NR_IRQS], softirq[NR_SOFTIRQS];
};

static const char *const counter_names[] = {
	"context switches", "forks", "page faults", "device interrupts", "softirqs",
};
#define NR_COUNTERS	5

static unsigned long long sum_row(const char *line)
{
	unsigned long long sum = 0, v;
	const char *p = strchr(line, ':') + 1;
	int used;

	while (sscanf(p, "%llu%n", &v, &used) == 1) {
		sum += v;
		p += used;
	}
	return sum;
}

static void read_counters(struct counters *c)
{
	static const char *const softirq_names[NR_SOFTIRQS] = {
		"HI:", "TIMER:", "NET_TX:", "NET_RX:", "BLOCK:", "IRQ_POLL:",
		"TASKLET:", "SCHED:", "HRTIMER:", "RCU:",
	};
	char line[4096], name[32];
	unsigned int irq;
	FILE *f;

	memset(c, 0, sizeof(*c));
	f = fopen("/proc/stat", "r");
	while (f && fgets(line, sizeof(line), f)) {
		sscanf(line, "ctxt %llu", &c->ctxt);
		sscanf(line, "processes %llu", &c->processes);
	}
	fclose(f);
	f = fopen("/proc/vmstat", "r");
	while (f && fgets(line, sizeof(line), f))
		sscanf(line, "pgfault %llu", &c->pgfault);
	fclose(f);
	f = fopen("/proc/interrupts", "r");
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, " %u:", &irq) == 1 && irq < NR_IRQS)
			c->irq[irq] = sum_row(line);
	fclose(f);
	f = fopen("/proc/softirqs", "r");
	while (f && fgets(line, sizeof(line), f)) {
		if (sscanf(line, " %31s", name) != 1)
			continue;
		for (int v = 0; v < NR_SOFTIRQS; v++)
			if (!strcmp(name, softirq_names[v]))
				c->softirq[v] = sum_row(line);
	}
	fclose(f);
}

static void on_usr1(int sig __attribute__((unused)))
{
}

static void loopback_up(void)
{
	struct ifreq ifr = { .ifr_name = "lo" };
	int s = socket(AF_INET, SOCK_DGRAM, 0);

	if (s >= 0 && ioctl(s, SIOCGIFFLAGS, &ifr) == 0) {
		ifr.ifr_flags |= IFF_UP;
		ioctl(s, SIOCSIFFLAGS, &ifr);
	}
	close(s);
}

/* Known work in this process; the rest from children on every CPU. */
static void workload(int *block_fd_reads)
{
	struct sockaddr_in addr = { .sin_family = AF_INET, .sin_port = htons(9999) };
	static char blockbuf[4096] __attribute__((aligned(4096)));
	pid_t pids[CHILDREN], sig_child;
	int i, status, rx, tx, bfd;
	char *mem, msg[64];

	for (i = 0; i < CHILDREN; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			pin_to_cpu(i % nr_cpus_online());
			for (int j = 0; j < 3; j++) {
				usleep(1000);
				sched_yield();
			}
			execl("/bin/true", "true", NULL);
			_exit(1);
		}
	}

	/* SYSCALLS getppid() calls, counted in the trace by this tid. */
	for (i = 0; i < SYSCALLS; i++)
		syscall(SYS_getppid);

	/* Page faults on fresh anonymous memory. */
	mem = mmap(NULL, FAULT_PAGES * 4096, PROT_READ | PROT_WRITE,
		   MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	for (i = 0; i < FAULT_PAGES; i++)
		mem[i * 4096] = 1;
	munmap(mem, FAULT_PAGES * 4096);

	/* Signals delivered to a child's handler. */
	sig_child = fork();
	if (sig_child == 0) {
		signal(SIGUSR1, on_usr1);
		for (;;)
			pause();
	}
	usleep(20000);
	for (i = 0; i < SIGNALS; i++) {
		kill(sig_child, SIGUSR1);
		usleep(5000);
	}
	kill(sig_child, SIGKILL);
	waitpid(sig_child, &status, 0);

	/* Loopback UDP packets. */
	addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	rx = socket(AF_INET, SOCK_DGRAM, 0);
	tx = socket(AF_INET, SOCK_DGRAM, 0);
	bind(rx, (struct sockaddr *)&addr, sizeof(addr));
	for (i = 0; i < PACKETS; i++) {
		sendto(tx, "ktrace", 6, 0, (struct sockaddr *)&addr, sizeof(addr));
		recv(rx, msg, sizeof(msg), MSG_DONTWAIT);
	}
	close(rx);
	close(tx);

	/* Block requests: O_DIRECT reads of null_blk, one request each. */
	*block_fd_reads = 0;
	bfd = open("/dev/nullb0", O_RDONLY | O_DIRECT);
	for (i = 0; bfd >= 0 && i < BLOCK_READS; i++)
		*block_fd_reads += pread(bfd, blockbuf, 4096, (off_t)i * 4096) == 4096;
	if (bfd >= 0)
		close(bfd);

	/* Device interrupts: the serial port, as a TAP comment. */
	dprintf(1, "# workload writing to the console for serial interrupts\n");

	for (i = 0; i < CHILDREN; i++)
		waitpid(pids[i], &status, 0);
}

int main(void)
{
	const uint32_t mask = KTRACE_GRP_sched | KTRACE_GRP_thread | KTRACE_GRP_fault |
			      KTRACE_GRP_irq | KTRACE_GRP_softirq | KTRACE_GRP_syscall |
			      KTRACE_GRP_signal | KTRACE_GRP_net | KTRACE_GRP_block |
			      KTRACE_GRP_timer | KTRACE_GRP_user;
	int exact[NR_COUNTERS] = { 0 }, attempt, good_windows = 0, block_reads = 0;
	int syscalls_ok = 0, signals_ok = 0, net_ok = 0, block_ok = 0, timers = 0;
	struct stat nullb;
	struct window w;
	pid_t me = getpid();

	setvbuf(stdout, NULL, _IOLBF, 0);
	loopback_up();
	signal(SIGUSR1, SIG_IGN);
	window_open(&w, 1 << 18);
	pin_to_cpu(0);
	if (stat("/dev/nullb0", &nullb))
		memset(&nullb, 0, sizeof(nullb));

	for (attempt = 1; attempt <= ATTEMPTS; attempt++) {
		unsigned long long trace[NR_COUNTERS] = { 0 }, kernel[NR_COUNTERS];
		unsigned long long sys_entry = 0, sys_exit = 0, sigs = 0, xmit = 0, recv = 0;
		unsigned long long issue = 0, complete = 0;
		struct counters a, b;

		kt_set_mask(w.fd, mask);
		usleep(20000);
		window_marker(&w, 1);
		read_counters(&a);
		workload(&block_reads);
		usleep(20000);
		read_counters(&b);
		window_marker(&w, 2);
		kt_set_mask(w.fd, 0);
		window_collect(&w);
		if (!w.tsc_begin || !w.tsc_end || w.lost) {
			diag("attempt %d: markers %s, %llu records lost", attempt,
			     w.tsc_begin && w.tsc_end ? "found" : "missing",
			     (unsigned long long)w.lost);
			continue;
		}
		good_windows++;

		window_for_each(&w, r, cpu) {
			struct ktrace_record *c;

			switch (r->event) {
			case KTRACE_sched_switch:
				trace[0]++;
				break;
			case KTRACE_thread_fork:
				trace[1]++;
				break;
			case KTRACE_fault_page:
				trace[2]++;
				break;
			case KTRACE_irq_entry:
				trace[3]++;
				break;
			case KTRACE_softirq_entry:
				trace[4]++;
				break;
			case KTRACE_syscall_entry:
				sys_entry += r->tid == (uint32_t)me && r->arg1 == SYS_getppid;
				break;
			case KTRACE_syscall_exit:
				sys_exit += r->tid == (uint32_t)me && r->arg1 == SYS_getppid &&
					    r->arg2 == (uint32_t)getppid();
				break;
			case KTRACE_signal_deliver:
				sigs += r->arg1 == SIGUSR1;
				break;
			case KTRACE_net_xmit:
				xmit += r->arg2 == 1 && r->arg1 >= 6;
				break;
			case KTRACE_net_recv:
				recv += r->arg2 == 1 && r->arg1 >= 6;
				break;
			case KTRACE_block_issue:
			case KTRACE_block_complete:
				c = window_cont(&w, cpu, r);
				if (r->arg1 >> 20 == major(nullb.st_rdev) &&
				    (r->arg1 & 0xfffff) == minor(nullb.st_rdev) && c &&
				    r->arg2 == 4096 && c->arg1 < BLOCK_READS * 8)
					*(r->event == KTRACE_block_issue ? &issue : &complete) += 1;
				break;
			case KTRACE_timer_expire:
				timers++;
				break;
			}
		}
		kernel[0] = b.ctxt - a.ctxt;
		kernel[1] = b.processes - a.processes;
		kernel[2] = b.pgfault - a.pgfault;
		kernel[3] = kernel[4] = 0;
		for (int i = 0; i < NR_IRQS; i++)
			kernel[3] += b.irq[i] - a.irq[i];
		for (int i = 0; i < NR_SOFTIRQS; i++)
			kernel[4] += b.softirq[i] - a.softirq[i];
		for (int i = 0; i < NR_COUNTERS; i++) {
			diag("attempt %d: %s: %llu traced, kernel counted %llu", attempt,
			     counter_names[i], trace[i], kernel[i]);
			exact[i] |= trace[i] == kernel[i] && trace[i] > 0;
		}
		diag("attempt %d: getppid %llu/%llu, SIGUSR1 %llu, lo xmit %llu recv %llu, nullb0 issue %llu complete %llu of %d",
		     attempt, sys_entry, sys_exit, sigs, xmit, recv, issue, complete, block_reads);
		syscalls_ok |= sys_entry == SYSCALLS && sys_exit == SYSCALLS;
		signals_ok |= sigs == SIGNALS;
		net_ok |= xmit >= PACKETS && recv >= PACKETS;
		block_ok |= block_reads == BLOCK_READS && issue == BLOCK_READS &&
			    complete == BLOCK_READS;
		if (syscalls_ok && signals_ok && net_ok && block_ok &&
		    exact[0] && exact[1] && exact[2] && exact[3] && exact[4])
			break;
	}
	ok(good_windows > 0, "%d traced windows with both markers and nothing lost", good_windows);
	for (int i = 0; i < NR_COUNTERS; i++)
		ok(exact[i], "%s agree exactly with the kernel's count", counter_names[i]);
	ok(syscalls_ok, "%d getppid() calls: as many syscall entry and exit records, with the return value",
	   SYSCALLS);
	ok(signals_ok, "%d SIGUSR1 deliveries traced", SIGNALS);
	ok(net_ok, "%d loopback packets: transmit and receive traced", PACKETS);
	ok(block_ok, "%d O_DIRECT reads of /dev/nullb0: issue and completion of each request",
	   BLOCK_READS);
	ok(timers > 0, "timer expiries traced (%d)", timers);
	window_close(&w);
	return done_testing();
}
