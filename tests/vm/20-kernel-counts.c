// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace's counts agree with the kernel's own over a traced window with a
 * real workload: context switches with /proc/stat ctxt, forks with
 * processes, page faults with pgfault in /proc/vmstat, device interrupts
 * with /proc/interrupts, softirqs with /proc/softirqs.  System calls,
 * signals, loopback packets and block requests are compared with what the
 * workload itself is known to do.
 *
 * Each counter file is read with one read() between two user-event
 * markers, so the kernel took its values between those two time stamps.
 * Records between the inner markers (after the first read, before the
 * second) are a lower bound of what the kernel counted, records between
 * the outer ones an upper bound.  In every window the kernel's count must
 * lie within the bounds; when nothing happened during the reads the bounds
 * meet and the counts must be equal.  That must happen for every counter
 * in at least one of a few windows.  While the files are read, a thread at
 * SCHED_FIFO 98 spins on every other CPU, so that no task runs there: on
 * PREEMPT_RT the timer softirq and the threaded interrupts switch tasks
 * every few ms, and a read of /proc/stat under TCG can take longer.
 */
#include "ktrace-window.h"

#include <arpa/inet.h>
#include <net/if.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>

#define ATTEMPTS	12	/* at most: the first two are exact, the other CPUs held quiet */
#define CHILDREN	12
#define SYSCALLS	1000
#define SIGNALS		10
#define PACKETS		100
#define BLOCK_READS	64
#define FAULT_PAGES	512
#define NR_COUNTERS	5

enum { F_STAT, F_VMSTAT, F_INTERRUPTS, F_SOFTIRQS, NR_FILES };

static const char *const proc_files[NR_FILES] = {
	"/proc/stat", "/proc/vmstat", "/proc/interrupts", "/proc/softirqs",
};

static const struct {
	const char *name;
	int file;
	uint32_t event;
} counters[NR_COUNTERS] = {
	{ "context switches", F_STAT, KTRACE_sched_switch },
	{ "forks", F_STAT, KTRACE_thread_fork },
	{ "page faults", F_VMSTAT, KTRACE_fault_page },
	{ "device interrupts", F_INTERRUPTS, KTRACE_irq_entry },
	{ "softirqs", F_SOFTIRQS, KTRACE_softirq_entry },
};

/* The sum of the numbers after the colon of a /proc/interrupts-style row. */
static unsigned long long sum_row(const char *line)
{
	unsigned long long sum = 0, v;
	const char *p = strchr(line, ':');
	int used;

	if (!p)
		return 0;
	for (p++; sscanf(p, "%llu%n", &v, &used) == 1; p += used)
		sum += v;
	return sum;
}

static void parse_counters(int file, char *text, unsigned long long *value)
{
	unsigned int irq;
	char name[32];

	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (file == F_STAT) {
			sscanf(line, "ctxt %llu", &value[0]);
			sscanf(line, "processes %llu", &value[1]);
		} else if (file == F_VMSTAT) {
			sscanf(line, "pgfault %llu", &value[2]);
		} else if (file == F_INTERRUPTS) {
			/* numbered rows only: the device interrupts */
			if (sscanf(line, " %u:", &irq) == 1)
				value[3] += sum_row(line);
		} else if (sscanf(line, " %31[A-Z_]:", name) == 1) {
			value[4] += sum_row(line);
		}
	}
}

/*
 * Spinners holding the other CPUs while the counter files are read, at
 * FIFO 98: a task that holds a lock the reader (FIFO 99) waits for is
 * boosted above them on PREEMPT_RT; elsewhere they give up after a second.
 */
struct quiet {
	pthread_t thread[WINDOW_MAX_CPUS];
	int nr, next_cpu, ready, stop;
};

static void set_fifo(int prio)
{
	struct sched_param sp = { .sched_priority = prio };

	if (sched_setscheduler(0, prio ? SCHED_FIFO : SCHED_OTHER, &sp))
		bail("sched_setscheduler");
}

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return t.tv_sec + t.tv_nsec / 1e9;
}

static void *spin(void *arg)
{
	struct quiet *q = arg;
	double until;

	pin_to_cpu(__atomic_add_fetch(&q->next_cpu, 1, __ATOMIC_SEQ_CST));
	set_fifo(98);
	until = now_s() + 1;	/* the clock's first read, before the markers */
	__atomic_add_fetch(&q->ready, 1, __ATOMIC_SEQ_CST);
	while (!__atomic_load_n(&q->stop, __ATOMIC_ACQUIRE) && now_s() < until)
		;
	return NULL;
}

/* CPUs 1.. run a spinner each and this thread, on CPU 0, runs at FIFO 99. */
static void quiet_start(struct quiet *q, int nr_cpus)
{
	q->nr = nr_cpus - 1;
	q->next_cpu = 0;
	q->ready = 0;
	q->stop = 0;
	for (int i = 0; i < q->nr; i++)
		if (pthread_create(&q->thread[i], NULL, spin, q))
			bail("pthread_create");
	while (__atomic_load_n(&q->ready, __ATOMIC_SEQ_CST) < q->nr)
		sched_yield();
	set_fifo(99);
}

static void quiet_end(struct quiet *q)
{
	set_fifo(0);
	__atomic_store_n(&q->stop, 1, __ATOMIC_RELEASE);
	for (int i = 0; i < q->nr; i++)
		pthread_join(q->thread[i], NULL);
}

/*
 * Read every counter file with one read() each, between the markers
 * 10 + 4 * file + 2 * phase (before) and 11 + 4 * file + 2 * phase (after).
 */
static void read_counters(struct window *w, int phase, unsigned long long *value)
{
	static char text[NR_FILES][1 << 17];
	int fd[NR_FILES];
	struct quiet q;
	ssize_t n;

	memset(value, 0, NR_COUNTERS * sizeof(*value));
	/*
	 * The workload's fork() made these pages copy-on-write: a write
	 * fault inside read() would come after the kernel took its counts.
	 */
	memset(text, 0, sizeof(text));
	for (int f = 0; f < NR_FILES; f++) {
		fd[f] = open(proc_files[f], O_RDONLY);
		if (fd[f] < 0)
			bail(proc_files[f]);
	}
	quiet_start(&q, w->nr_cpus);
	for (int f = 0; f < NR_FILES; f++) {
		window_marker(w, 10 + 4 * f + 2 * phase);
		n = read(fd[f], text[f], sizeof(text[f]) - 1);
		window_marker(w, 11 + 4 * f + 2 * phase);
		text[f][n > 0 ? n : 0] = 0;
	}
	quiet_end(&q);
	for (int f = 0; f < NR_FILES; f++) {
		close(fd[f]);
		parse_counters(f, text[f], value);
	}
}

/*
 * Closed bounds that disagree with pgfault: the window's faults taken in
 * kernel mode, which the kernel may handle without counting one (a fault
 * on a kernel address), with their tasks, so that the next failure says
 * which they were.
 */
static void diag_faults(struct window *w, uint64_t after, uint64_t before)
{
	unsigned int shown = 0, kernel_mode = 0;

	window_for_each(w, r, cpu) {
		struct ktrace_record *c;

		if (r->event != KTRACE_fault_page || r->tsc <= after || r->tsc >= before ||
		    (r->arg2 & KTRACE_FAULT_USER))
			continue;
		kernel_mode++;
		c = window_cont(w, cpu, r);
		if (c && shown++ < 20)
			diag("  kernel-mode fault: cpu %d tid %u flags %#x address %#llx", cpu,
			     r->arg1, r->arg2,
			     (unsigned long long)c->arg1 | (unsigned long long)c->arg2 << 32);
	}
	diag("  %u kernel-mode faults in the window", kernel_mode);
}

static int ack_pipe[2];

/* Acknowledge each signal, so the parent never has two pending at once. */
static void on_usr1(int sig __attribute__((unused)))
{
	if (write(ack_pipe[1], "s", 1) != 1)
		_exit(2);
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

	/* Signals delivered to a child's handler, one at a time. */
	if (pipe(ack_pipe))
		bail("pipe");
	sig_child = fork();
	if (sig_child == 0) {
		signal(SIGUSR1, on_usr1);
		if (write(ack_pipe[1], "r", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	for (i = 0; i <= SIGNALS; i++) {
		if (read(ack_pipe[0], msg, 1) != 1)
			break;
		if (i < SIGNALS)
			kill(sig_child, SIGUSR1);
	}
	close(ack_pipe[0]);
	close(ack_pipe[1]);
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
	/*
	 * Fault the buffer in here: O_DIRECT would pin it with
	 * get_user_pages(), a pgfault without a page-fault exception, which
	 * ktrace.ko (tracepoints) does not see.
	 */
	blockbuf[0] = 1;
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
	int exact[NR_COUNTERS] = { 0 }, within[NR_COUNTERS], attempt, good_windows = 0;
	int syscalls_ok = 0, signals_ok = 0, net_ok = 0, block_ok = 0, timers = 0;
	int block_reads = 0, all_exact;
	struct stat nullb;
	struct window w;
	pid_t me = getpid();

	setvbuf(stdout, NULL, _IOLBF, 0);
	loopback_up();
	window_open(&w, 1 << 18);
	pin_to_cpu(0);
	if (stat("/dev/nullb0", &nullb))
		memset(&nullb, 0, sizeof(nullb));
	for (int i = 0; i < NR_COUNTERS; i++)
		within[i] = 1;

	for (attempt = 1; attempt <= ATTEMPTS; attempt++) {
		unsigned long long sys_entry = 0, sys_exit = 0, sigs = 0, xmit = 0, recv = 0;
		unsigned long long issue = 0, complete = 0, before[NR_COUNTERS], after[NR_COUNTERS];

		kt_set_mask(w.fd, mask);
		usleep(20000);
		window_marker(&w, 1);
		read_counters(&w, 0, before);
		workload(&block_reads);
		usleep(20000);
		read_counters(&w, 1, after);
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

		all_exact = 1;
		for (int i = 0; i < NR_COUNTERS; i++) {
			const uint64_t *m = &w.mark[10 + 4 * counters[i].file];
			unsigned long long kernel = after[i] - before[i];
			uint64_t lower = window_count(&w, counters[i].event, m[1], m[2]);
			uint64_t upper = window_count(&w, counters[i].event, m[0], m[3]);

			/*
			 * ktrace.ko on a stock kernel records the page-fault
			 * exception; execve() faults the new stack's argument
			 * page in through get_user_pages(), no exception, and
			 * pgfault counts it: one more per exec here.
			 */
			if (counters[i].event == KTRACE_fault_page &&
			    !access("/sys/module/ktrace/initstate", F_OK)) {
				lower += window_count(&w, KTRACE_thread_exec, m[1], m[2]);
				upper += window_count(&w, KTRACE_thread_exec, m[0], m[3]);
			}

			diag("attempt %d: %s: kernel counted %llu, traced %llu to %llu", attempt,
			     counters[i].name, kernel, (unsigned long long)lower,
			     (unsigned long long)upper);
			/*
			 * ...and a retried fault (VM_FAULT_RETRY) is one
			 * exception but two pgfault counts, a fault that
			 * get_user_pages() resolves is none: on the module the
			 * bounds hold for page faults only where neither
			 * happened, so only the exact window is required.
			 */
			within[i] &= (counters[i].event == KTRACE_fault_page &&
				      !access("/sys/module/ktrace/initstate", F_OK)) ||
				     (lower <= kernel && kernel <= upper);
			exact[i] |= lower == upper && kernel == lower && kernel > 0;
			if (counters[i].event == KTRACE_fault_page && lower == upper &&
			    kernel != lower)
				diag_faults(&w, m[1], m[2]);
			all_exact &= exact[i];
		}

		window_for_each(&w, r, cpu) {
			struct ktrace_record *c;

			switch (r->event) {
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
		diag("attempt %d: getppid %llu/%llu, SIGUSR1 %llu, lo xmit %llu recv %llu, nullb0 issue %llu complete %llu of %d",
		     attempt, sys_entry, sys_exit, sigs, xmit, recv, issue, complete, block_reads);
		syscalls_ok |= sys_entry == SYSCALLS && sys_exit == SYSCALLS;
		signals_ok |= sigs == SIGNALS;
		net_ok |= xmit >= PACKETS && recv >= PACKETS;
		block_ok |= block_reads == BLOCK_READS && issue == BLOCK_READS &&
			    complete == BLOCK_READS;
		if (syscalls_ok && signals_ok && net_ok && block_ok && all_exact && attempt >= 2)
			break;
	}
	ok(good_windows > 0, "%d traced windows with all markers and nothing lost", good_windows);
	for (int i = 0; i < NR_COUNTERS; i++) {
		ok(within[i], "%s: the kernel's count always within the traced bounds",
		   counters[i].name);
		ok(exact[i], "%s agree exactly with the kernel's count", counters[i].name);
	}
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
