// SPDX-License-Identifier: GPL-2.0
/*
 * probe-bench: in the VM (bench/probe.sh boots it), ns per call of a
 * probed function, in interleaved rounds, each way of probing it:
 *   none           no probe: the call alone
 *   ktrace_masked  a ktrace probe while the mask leaves the probe group
 *                  out: the trap, uprobes' path and our handler's filter
 *                  check, nothing fetched or written (the floor)
 *   uprobe_floor   a tracefs uprobe (uprobe_events) with no fetch args,
 *                  enabled: the trap and the kernel's own uprobe path
 *   tracefs_fetch  the same with two registers and a 3-deref chain
 *                  (what `perf probe` sets up; perf is not in the VM)
 *   ktrace_empty   a ktrace probe, empty program, recording
 *   ktrace_fetch   a ktrace probe with two registers and a 3-deref chain,
 *                  recording (3 records a hit)
 * Prints "BENCH probe_MODE NS ns", the median of ROUNDS rounds.
 *
 *   probe-bench ROUNDS CALLS
 *   probe-bench loop CALLS [PROCS [ktrace_masked]]
 * The second form (bench/probe-peers.sh, where the probe belongs to another
 * program: perf, bpftrace, ktrace -P) calls the function CALLS times once,
 * in PROCS processes at once (one a CPU, for a burst; default 1), with no
 * probe of its own or with the masked ktrace probe, and prints
 * "LOOP NS_PER_CALL CPU_NS_PER_CALL CALLS_MADE" (the slowest process's
 * time, and its CPU time: what the probe cost the traced thread itself,
 * without the consumers' time when they ran on its CPU).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/ktrace.h>

#define TRACEFS	"/sys/kernel/tracing"

struct node {
	struct node *next;
	int32_t val;
};

__attribute__((noinline)) long bench_probed(long a, long b, struct node *n)
{
	asm volatile("" : : "r"(n) : "memory");
	return a + b;
}

enum mode { NONE, KTRACE_MASKED, FLOOR, TRACEFS_FETCH, KTRACE_EMPTY, KTRACE_FETCH, NR_MODES };
static const char *const names[NR_MODES] = {
	"none", "ktrace_masked", "uprobe_floor", "tracefs_fetch", "ktrace_empty", "ktrace_fetch",
};

static char exe[256];
static unsigned long offset;
static int kt, bin;

static void die(const char *what)
{
	fprintf(stderr, "probe-bench: %s: %s\n", what, strerror(errno));
	exit(1);
}

static void put(const char *path, const char *text, int append)
{
	int fd = open(path, O_WRONLY | (append ? O_APPEND : O_TRUNC));

	if (fd < 0 || write(fd, text, strlen(text)) != (ssize_t)strlen(text))
		die(path);
	close(fd);
}

static unsigned long file_offset_of(void *fn)
{
	unsigned long lo, hi, off, addr = (unsigned long)fn;
	char line[512], perms[8];
	FILE *maps = fopen("/proc/self/maps", "r");

	while (maps && fgets(line, sizeof(line), maps))
		if (sscanf(line, "%lx-%lx %7s %lx", &lo, &hi, perms, &off) == 4 &&
		    addr >= lo && addr < hi)
			return addr - lo + off;
	die("/proc/self/maps");
	return 0;
}

static double now_ns(clockid_t clock)
{
	struct timespec ts;

	clock_gettime(clock, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

#define OP(o, s, f, r, i)	{ .op = KTRACE_OP_##o, .size = s, .flags = f, .reg = r, .imm = i }

static uint32_t ktrace_probe(int full, uint32_t mask)
{
	static const struct ktrace_probe_op ops[] = {
		OP(REG, 0, 0, 5, 0), OP(EMIT, 8, 0, 0, 0),
		OP(REG, 0, 0, 4, 0), OP(EMIT, 8, 0, 0, 0),
		OP(REG, 0, 0, 1, 0), OP(DEREF, 8, 0, 0, 0), OP(DEREF, 8, 0, 0, 0),
		OP(ADD, 0, 0, 0, offsetof(struct node, val)),
		OP(DEREF, 4, KTRACE_OP_SIGNED, 0, 0), OP(EMIT, 4, 0, 0, 0),
	};
	struct ktrace_probe p = {
		.fd = bin, .offset = offset, .ops = (uintptr_t)ops,
		.nr_ops = full ? sizeof(ops) / sizeof(ops[0]) : 0,
	};
	struct ktrace_mask m = { .mask = mask, .flags = KTRACE_MASK_SESSION };

	/* a new session empties the buffers: every round records */
	if (ioctl(kt, KTRACE_IOC_SET_MASK, &m) || ioctl(kt, KTRACE_IOC_PROBE_ADD, &p))
		die("ktrace probe");
	return p.id;
}

/* ns a call, on the clock; *cpu_ns, if asked, in the thread's CPU time */
static double round_ns(enum mode mode, long calls, double *cpu_ns)
{
	static struct node nodes[3] = { { &nodes[1], 0 }, { &nodes[2], 0 }, { NULL, 42 } };
	struct ktrace_probe_del del = { 0 };
	struct ktrace_mask off = { 0 };
	double start, cpu_start, ns;
	long i;

	switch (mode) {
	case FLOOR:
		put(TRACEFS "/events/ktbench/floor/enable", "1", 0);
		break;
	case TRACEFS_FETCH:
		put(TRACEFS "/events/ktbench/fetch/enable", "1", 0);
		break;
	case KTRACE_MASKED:
		del.id = ktrace_probe(1, KTRACE_GRP_user);
		break;
	case KTRACE_EMPTY:
	case KTRACE_FETCH:
		del.id = ktrace_probe(mode == KTRACE_FETCH, KTRACE_GRP_probe);
		break;
	default:
		break;
	}
	cpu_start = now_ns(CLOCK_THREAD_CPUTIME_ID);
	start = now_ns(CLOCK_MONOTONIC);
	for (i = 0; i < calls; i++)
		bench_probed(i, 2, nodes);
	ns = (now_ns(CLOCK_MONOTONIC) - start) / calls;
	if (cpu_ns)
		*cpu_ns = (now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu_start) / calls;
	switch (mode) {
	case FLOOR:
		put(TRACEFS "/events/ktbench/floor/enable", "0", 0);
		break;
	case TRACEFS_FETCH:
		put(TRACEFS "/events/ktbench/fetch/enable", "0", 0);
		break;
	case KTRACE_MASKED:
	case KTRACE_EMPTY:
	case KTRACE_FETCH:
		if (ioctl(kt, KTRACE_IOC_PROBE_DEL, &del) ||
		    ioctl(kt, KTRACE_IOC_SET_MASK, &off))
			die("ktrace probe del");
		break;
	default:
		break;
	}
	return ns;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* PROCS processes, each on its own CPU, start their loops together */
static int loop(long calls, int procs, enum mode mode)
{
	int go[2], res[2], p, status;
	double ns[2], slowest[2] = { 0, 0 };
	cpu_set_t cpu;
	char c = 0;

	if (pipe(go) || pipe(res))
		die("pipe");
	for (p = 0; p < procs; p++) {
		if (fork() == 0) {
			CPU_ZERO(&cpu);
			CPU_SET(p % CPU_SETSIZE, &cpu);
			if (procs > 1)
				sched_setaffinity(0, sizeof(cpu), &cpu);
			if (read(go[0], &c, 1) != 1)
				_exit(1);
			ns[0] = round_ns(NONE, calls, &ns[1]);
			_exit(write(res[1], ns, sizeof(ns)) != sizeof(ns));
		}
	}
	/* the masked probe, added once for every process (it is the file's) */
	if (mode == KTRACE_MASKED)
		ktrace_probe(1, KTRACE_GRP_user);
	for (p = 0; p < procs; p++)
		if (write(go[1], &c, 1) != 1)
			die("pipe");
	for (p = 0; p < procs; p++) {
		if (read(res[0], ns, sizeof(ns)) != sizeof(ns))
			die("a looping process died");
		slowest[0] = ns[0] > slowest[0] ? ns[0] : slowest[0];
		slowest[1] = ns[1] > slowest[1] ? ns[1] : slowest[1];
	}
	while (wait(&status) > 0)
		;
	printf("LOOP %.1f %.1f %ld\n", slowest[0], slowest[1], calls * procs);
	return 0;
}

int main(int argc, char **argv)
{
	int looping = argc > 2 && !strcmp(argv[1], "loop");
	int rounds = argc > 1 ? atoi(argv[1]) : 5, r, m;
	long calls = argc > 2 ? atol(argv[2]) : 10000;
	double *ns[NR_MODES];
	char def[1024];
	ssize_t n;

	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n < 0)
		die("/proc/self/exe");
	exe[n] = '\0';
	offset = file_offset_of((void *)bench_probed);
	bin = open(exe, O_RDONLY);
	if (bin < 0)
		die(exe);
	if (looping && (argc < 5 || strcmp(argv[4], names[KTRACE_MASKED])))
		return loop(calls, argc > 3 ? atoi(argv[3]) : 1, NONE);
	kt = open("/dev/ktrace", O_RDWR);
	if (kt < 0)
		die("/dev/ktrace");
	if (looping)
		return loop(calls, argc > 3 ? atoi(argv[3]) : 1, KTRACE_MASKED);
	snprintf(def, sizeof(def),
		 "p:ktbench/floor %s:0x%lx\n"
		 "p:ktbench/fetch %s:0x%lx a=%%di:u64 b=%%si:u64 c=+%zu(+0(+0(%%dx))):s32\n",
		 exe, offset, exe, offset, offsetof(struct node, val));
	put(TRACEFS "/uprobe_events", def, 1);

	for (m = 0; m < NR_MODES; m++)
		ns[m] = calloc(rounds, sizeof(double));
	for (r = 0; r < rounds; r++)
		for (m = 0; m < NR_MODES; m++)
			ns[m][r] = round_ns(m, calls, NULL);
	for (m = 0; m < NR_MODES; m++) {
		qsort(ns[m], rounds, sizeof(double), cmp);
		printf("BENCH probe_%s %.0f ns\n", names[m], ns[m][rounds / 2]);
	}
	put(TRACEFS "/uprobe_events", "-:ktbench/floor\n", 1);
	put(TRACEFS "/uprobe_events", "-:ktbench/fetch\n", 1);
	return 0;
}
