// SPDX-License-Identifier: GPL-2.0
/*
 * Probes (KTRACE_IOC_PROBE_ADD/DEL) on this program's own function
 * kt_probed(), against what the program itself knows:
 *  - hits: a child calls kt_probed() N times; the probe's records with the
 *    child's tid number exactly N, and each carries the arguments the child
 *    passed (two registers, a 3-DEREF chain through a list it built, a
 *    string in it); a return probe carries each call's return value;
 *  - faults: a DEREF of an unmapped address, of a page never touched and
 *    of a PROT_NONE guard page marks exactly those values missing (zero
 *    words, mask bit), KTRACE_IOC_INFO's probe_missing grows by exactly
 *    that many, the values after them are still right, the task is
 *    unharmed; touched, the page reads;
 *  - the fetch shapes: 1- and 2-byte loads, signed or not, against C's
 *    casts of the same bytes; an ADD before a DEREF that a fault skips
 *    still moves the accumulator; a REG then an EMIT after a faulted load
 *    of the same value records it missing;
 *  - the process filter: a probe for one pid records that process (and
 *    after its exec), not a fork's child unless KTRACE_PROBE_CHILDREN, not
 *    another process, and the other process has no breakpoint: its own
 *    first byte of kt_probed() is not int3 (0xcc), as it is in a probed one;
 *  - removal: PROBE_DEL while threads call in a loop, and closing the file
 *    that added a probe, leave the threads running (a stray int3 would
 *    kill them with SIGTRAP) and their code byte as it was;
 *  - the filter's address spaces: a probe added for a process whose
 *    leader called pthread_exit() records its other thread's N calls; in
 *    a probed process a vfork() child's call is not recorded and leaves
 *    the breakpoint to its parent, whose N later calls are all recorded;
 *  - a 32-bit program (/tests/probe-m32, -m32): each of its N calls is a
 *    hit with every value missing (its registers are not x86-64's), and
 *    probe_missing grows by exactly the values of those hits;
 *  - the id written back: to a page userfaultfd write-protects, the call
 *    waits for the page (the fault reaches the uffd reader) while another
 *    probe ioctl returns meanwhile; to a read-only page, -EFAULT and no
 *    probe left (the probed byte of this program's own code is not int3);
 *  - ktrace.ko: rmmod refused while a probe's file is open, then clean
 *    while threads call the probed function (they live on), reload works;
 *  - the ABI: every program rule -EINVAL, reserved fields, unknown flags,
 *    -ENOTTY, -EPERM without CAP_SYS_ADMIN, -ENOENT, -ESRCH, -ENOSPC at
 *    the 256th probe.
 * The file offset of kt_probed() comes from /proc/self/maps (its mapping's
 * start and file offset), the binary from /proc/self/exe.
 */
#include "ktest.h"

#include <pthread.h>
#include <signal.h>
#include <stddef.h>
#include <linux/userfaultfd.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>

#define CPU		1
#define NR_CALLS	100
#define CAP_PERFMON_BIT	38

struct node {
	struct node *next;
	int32_t val;
	char name[20];
};

/* The probed function: the probes fetch what it is given. */
__attribute__((noinline)) long kt_probed(long a, long b, struct node *n)
{
	asm volatile("" : : "r"(n) : "memory");
	return a * 3 + b;
}

static uint64_t probed_offset;
static int bin_fd;
static struct node nodes[3];

static void build_list(int32_t val)
{
	nodes[0].next = &nodes[1];
	nodes[1].next = &nodes[2];
	nodes[2].next = NULL;
	nodes[2].val = val;
	snprintf(nodes[0].name, sizeof(nodes[0].name), "call %d", val);
}

/* Call i of a worker: its arguments, which the probes must fetch. */
static long call(int i)
{
	build_list(-1000 - i);
	return kt_probed(i + 1, -7L * (i + 1), nodes);
}

static unsigned char code_byte(void)
{
	return *(volatile unsigned char *)kt_probed;
}

static uint64_t file_offset_of(void *fn)
{
	unsigned long lo, hi, off, addr = (unsigned long)fn;
	char line[512], perms[8];
	FILE *maps = fopen("/proc/self/maps", "r");

	while (maps && fgets(line, sizeof(line), maps)) {
		if (sscanf(line, "%lx-%lx %7s %lx", &lo, &hi, perms, &off) == 4 &&
		    addr >= lo && addr < hi) {
			fclose(maps);
			return addr - lo + off;
		}
	}
	bail("kt_probed in /proc/self/maps");
	return 0;
}

static int probe_add(int fd, uint32_t flags, const struct ktrace_probe_op *ops,
		     unsigned int nr_ops, const int32_t *pids, unsigned int nr_pids,
		     uint32_t *id)
{
	struct ktrace_probe p = {
		.fd = bin_fd, .flags = flags, .offset = probed_offset,
		.ops = (uintptr_t)ops, .nr_ops = nr_ops,
		.pids = (uintptr_t)pids, .nr_pids = nr_pids,
	};
	int rc = ioctl(fd, KTRACE_IOC_PROBE_ADD, &p);

	if (!rc && id)
		*id = p.id;
	return rc;
}

static int probe_del(int fd, uint32_t id)
{
	struct ktrace_probe_del d = { .id = id };

	return ioctl(fd, KTRACE_IOC_PROBE_DEL, &d);
}

static uint64_t probe_missing(int fd)
{
	struct ktrace_info info;

	if (ioctl(fd, KTRACE_IOC_INFO, &info))
		bail("KTRACE_IOC_INFO");
	return info.probe_missing;
}

#define OP(o, s, f, r, i)	{ .op = KTRACE_OP_##o, .size = s, .flags = f, .reg = r, .imm = i }

/* --- the records: probe hits of CPU's stream --------------------------- */

struct hit {
	uint32_t tid;
	uint32_t w[1 + KTRACE_PROBE_MAX_WORDS + 1];	/* mask, words */
	unsigned int nr;
};

static struct ktrace_record *recs;
static size_t nr_recs, cap_recs, phase_start;
static int reader;

/* Ids are reused: a test looks only at the records after its start. */
static void new_phase(void)
{
	nr_recs = kt_drain(reader, &recs, &cap_recs, nr_recs);
	phase_start = nr_recs;
}

/* The hits of probe @id by @tid (0: any) read so far, into @hits. */
static unsigned int hits_of(uint32_t id, uint32_t tid, struct hit *hits,
			    unsigned int max)
{
	unsigned int nr = 0;
	size_t i;

	nr_recs = kt_drain(reader, &recs, &cap_recs, nr_recs);
	for (i = phase_start; i < nr_recs; i++) {
		struct ktrace_record *r = &recs[i];
		struct hit h = { .tid = r->tid };

		if ((r->event & KTRACE_GROUP_MASK) != KTRACE_GRP_probe ||
		    KTRACE_SUB(r->event) != id || (tid && r->tid != tid))
			continue;
		h.w[h.nr++] = r->arg1;
		h.w[h.nr++] = r->arg2;
		while (i + 1 < nr_recs && (recs[i + 1].event & KTRACE_EVT_CONT) &&
		       h.nr + 2 <= sizeof(h.w) / sizeof(h.w[0])) {
			i++;
			h.w[h.nr++] = recs[i].arg1;
			h.w[h.nr++] = recs[i].arg2;
		}
		if (hits && nr < max)
			hits[nr] = h;
		nr++;
	}
	return nr;
}

static pid_t fork_pinned(void)
{
	pid_t pid = fork();

	if (pid < 0)
		bail("fork");
	if (!pid)
		pin_to_cpu(CPU);
	return pid;
}

static int wait_exit(pid_t pid)
{
	int status;

	if (waitpid(pid, &status, 0) != pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* A child that waits for a byte on @go, then calls kt_probed() @n times. */
static pid_t worker(int go[2], int n, int fork_too)
{
	pid_t pid = fork_pinned(), g;
	char c;
	int i;

	if (pid)
		return pid;
	close(go[1]);
	if (read(go[0], &c, 1) != 1)
		_exit(90);
	for (i = 0; i < n; i++)
		call(i);
	if (fork_too) {
		g = fork();
		if (!g) {
			for (i = 0; i < n; i++)
				call(i);
			_exit(0);
		}
		if (wait_exit(g))
			_exit(91);
		/* the same calls after exec: the new image must be probed too */
		execl("/proc/self/exe", "86-probe", "calls", "10", (char *)NULL);
		_exit(92);
	}
	/* exit status: whether kt_probed() holds a breakpoint here */
	_exit(code_byte() == 0xcc ? 1 : 0);
}

/* --- the tests -------------------------------------------------------- */

static void test_abi(int fd)
{
	static const struct { struct ktrace_probe_op op[3]; int nr; uint32_t flags; const char *what; } bad[] = {
		{ { OP(REG, 0, 0, 5, 0), { .op = 0 } }, 2, 0, "op 0" },
		{ { { .op = 7 } }, 1, 0, "unknown op 7" },
		{ { OP(REG, 0, 0, 17, 0), OP(EMIT, 8, 0, 0, 0) }, 2, 0, "REG 17" },
		{ { OP(REG, 8, 0, 5, 0), OP(EMIT, 8, 0, 0, 0) }, 2, 0, "REG with a size" },
		{ { OP(REG, 0, 1, 5, 0), OP(EMIT, 8, 0, 0, 0) }, 2, 0, "REG with flags" },
		{ { OP(REG, 0, 0, 5, 4), OP(EMIT, 8, 0, 0, 0) }, 2, 0, "REG with imm" },
		{ { OP(CFA, 0, 0, 1, 0), OP(EMIT, 8, 0, 0, 0) }, 2, 0, "CFA with a register" },
		{ { OP(CFA, 0, 0, 0, 0), OP(EMIT, 8, 0, 0, 0) }, 2, KTRACE_PROBE_RETURN, "CFA in a return probe" },
		{ { OP(ADD, 0, 0, 3, 8), OP(EMIT, 8, 0, 0, 0) }, 2, 0, "ADD with a register" },
		{ { OP(DEREF, 3, 0, 0, 0), OP(EMIT, 8, 0, 0, 0) }, 2, 0, "DEREF of 3 bytes" },
		{ { OP(DEREF, 16, 0, 0, 0), OP(EMIT, 8, 0, 0, 0) }, 2, 0, "DEREF of 16 bytes" },
		{ { OP(DEREF, 0, 0, 0, 0), OP(EMIT, 8, 0, 0, 0) }, 2, 0, "DEREF of 0 bytes" },
		{ { OP(DEREF, 4, 2, 0, 0), OP(EMIT, 8, 0, 0, 0) }, 2, 0, "DEREF with an unknown flag" },
		{ { OP(DEREF, 4, 0, 0, 8), OP(EMIT, 8, 0, 0, 0) }, 2, 0, "DEREF with imm" },
		{ { OP(REG, 0, 0, 5, 0), OP(DEREF, 8, 0, 0, 0) }, 2, 0, "DEREF never recorded" },
		{ { OP(EMIT, 8, 0, 0, 0), OP(DEREF, 8, 0, 0, 0) }, 2, 0, "DEREF after the last EMIT" },
		{ { OP(EMIT, 3, 0, 0, 0) }, 1, 0, "EMIT of 3 bytes" },
		{ { OP(EMIT, 8, KTRACE_OP_SIGNED, 0, 0) }, 1, 0, "EMIT with a flag" },
		{ { OP(STR, 0, 0, 0, 0) }, 1, 0, "STR of 0 bytes" },
		{ { OP(STR, KTRACE_PROBE_MAX_STR + 1, 0, 0, 0) }, 1, 0, "STR of 65 bytes" },
		{ { OP(EMIT, 8, 0, 0, 0) }, 1, 1U << 2, "unknown probe flag" },
		{ { OP(EMIT, 8, 0, 0, 0) }, 1, KTRACE_PROBE_CHILDREN, "CHILDREN without pids" },
	};
	struct ktrace_probe_op ops[KTRACE_PROBE_MAX_OPS + 1];
	struct ktrace_probe p;
	int32_t pids[KTRACE_PROBE_MAX_PIDS + 1];
	unsigned int i, nr;
	uint32_t id, ids[KTRACE_PROBE_MAX_ID];
	int fd2, rc;
	pid_t pid;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		is_errno(probe_add(fd, bad[i].flags, bad[i].op, bad[i].nr, NULL, 0, NULL),
			 EINVAL, "program: %s", bad[i].what);

	memset(ops, 0, sizeof(ops));
	for (i = 0; i <= KTRACE_PROBE_MAX_OPS; i++)
		ops[i] = (struct ktrace_probe_op)OP(EMIT, 4, 0, 0, 0);
	is_errno(probe_add(fd, 0, ops, KTRACE_PROBE_MAX_OPS + 1, NULL, 0, NULL),
		 EINVAL, "65 ops");
	is_errno(probe_add(fd, 0, ops, KTRACE_PROBE_MAX_VALUES + 1, NULL, 0, NULL),
		 EINVAL, "17 values");
	for (i = 0; i <= KTRACE_PROBE_MAX_DEREFS; i++)
		ops[i] = (struct ktrace_probe_op)OP(DEREF, 8, 0, 0, 0);
	ops[i] = (struct ktrace_probe_op)OP(EMIT, 8, 0, 0, 0);
	is_errno(probe_add(fd, 0, ops, i + 1, NULL, 0, NULL), EINVAL, "17 DEREFs");
	for (i = 0; i < 3; i++)
		ops[i] = (struct ktrace_probe_op)OP(STR, KTRACE_PROBE_MAX_STR, 0, 0, 0);
	is_errno(probe_add(fd, 0, ops, 3, NULL, 0, NULL), EINVAL, "48 words");
	ok(!probe_add(fd, 0, ops, 2, NULL, 0, &id) && !probe_del(fd, id),
	   "32 words (two STRs of 64) are accepted, and deleted");

	memset(&p, 0, sizeof(p));
	p.fd = bin_fd;
	p.offset = probed_offset;
	p.reserved[4] = 1;
	is_errno(ioctl(fd, KTRACE_IOC_PROBE_ADD, &p), EINVAL, "ADD reserved != 0");
	p.reserved[4] = 0;
	p.nr_pids = KTRACE_PROBE_MAX_PIDS + 1;
	p.pids = (uintptr_t)pids;
	is_errno(ioctl(fd, KTRACE_IOC_PROBE_ADD, &p), EINVAL, "65 pids");
	pids[0] = -1;
	is_errno(probe_add(fd, 0, NULL, 0, pids, 1, NULL), EINVAL, "pid -1");
	pids[0] = 999999;
	is_errno(probe_add(fd, 0, NULL, 0, pids, 1, NULL), ESRCH, "a pid nobody has");
	p.nr_pids = 0;
	p.fd = 12345;
	is_errno(ioctl(fd, KTRACE_IOC_PROBE_ADD, &p), EBADF, "a closed fd");
	p.fd = open("/", O_RDONLY);
	is_errno(ioctl(fd, KTRACE_IOC_PROBE_ADD, &p), EINVAL, "a directory");
	close(p.fd);
	is_errno(ioctl(fd, KTRACE_IOC_PROBE_ADD, (void *)16), EFAULT, "ADD from a bad pointer");
	is_errno(ioctl(fd, _IOW(KTRACE_IOC_MAGIC, 99, struct ktrace_probe_del), &p),
		 ENOTTY, "an unknown ioctl");

	{
		struct ktrace_probe_del d = { .id = 1, .reserved = 1 };

		is_errno(ioctl(fd, KTRACE_IOC_PROBE_DEL, &d), EINVAL, "DEL reserved != 0");
	}
	is_errno(probe_del(fd, 0), ENOENT, "DEL of id 0");
	is_errno(probe_del(fd, 77), ENOENT, "DEL of an id nobody has");
	fd2 = kt_open(O_RDWR);
	ok(!probe_add(fd2, 0, NULL, 0, NULL, 0, &id), "another file adds a probe (id %u)", id);
	is_errno(probe_del(fd, id), EPERM, "DEL of another file's probe");
	close(fd2);
	is_errno(probe_del(fd, id), ENOENT, "closing that file deleted it");

	/* CAP_PERFMON opens /dev/ktrace; adding a probe needs CAP_SYS_ADMIN */
	pid = fork();
	if (!pid) {
		struct { uint32_t version; int pid; } hdr = { 0x20080522, 0 };
		struct { uint32_t e, p, i; } data[2] = {
			{ 0, 0, 0 }, { 1U << (CAP_PERFMON_BIT - 32), 1U << (CAP_PERFMON_BIT - 32), 0 },
		};
		int f;

		if (syscall(SYS_capset, &hdr, data))
			_exit(10);
		f = open("/dev/ktrace", O_RDWR);
		if (f < 0)
			_exit(11);
		rc = probe_add(f, 0, NULL, 0, NULL, 0, NULL);
		_exit(rc == -1 && errno == EPERM ? 0 : 12);
	}
	ok(wait_exit(pid) == 0, "ADD with CAP_PERFMON but not CAP_SYS_ADMIN: EPERM");

	for (nr = 0; nr < KTRACE_PROBE_MAX_ID; nr++)
		if (probe_add(fd, 0, NULL, 0, NULL, 0, &ids[nr]))
			break;
	ok(nr == KTRACE_PROBE_MAX_ID, "255 probes added (%u; %s)", nr,
	   nr < KTRACE_PROBE_MAX_ID ? strerror(errno) : "ok");
	is_errno(probe_add(fd, 0, NULL, 0, NULL, 0, NULL), ENOSPC, "the 256th probe");
	for (i = 0, rc = 0; i < nr; i++)
		rc |= probe_del(fd, ids[i]);
	ok(!rc, "all 255 deleted");
}

static void test_values(int fd)
{
	static const struct ktrace_probe_op entry_ops[] = {
		OP(REG, 0, 0, 5, 0), OP(EMIT, 8, 0, 0, 0),		/* rdi: a */
		OP(REG, 0, 0, 4, 0), OP(EMIT, 4, 0, 0, 0),		/* rsi: b, 4 bytes */
		OP(REG, 0, 0, 1, 0),					/* rdx: n */
		OP(DEREF, 8, 0, 0, 0), OP(DEREF, 8, 0, 0, 0),		/* n->next->next */
		OP(ADD, 0, 0, 0, offsetof(struct node, val)),
		OP(DEREF, 4, KTRACE_OP_SIGNED, 0, 0), OP(EMIT, 4, 0, 0, 0),
		OP(REG, 0, 0, 1, 0), OP(ADD, 0, 0, 0, offsetof(struct node, name)),
		OP(STR, 16, 0, 0, 0),					/* n->name */
	};
	static const struct ktrace_probe_op ret_ops[] = {
		OP(REG, 0, 0, 0, 0), OP(EMIT, 8, 0, 0, 0),		/* rax */
	};
	static struct hit hits[NR_CALLS + 10];
	uint32_t id, ret_id;
	int go[2], good = 0, i, rc;
	pid_t pid;

	new_phase();

	ok(!probe_add(fd, 0, entry_ops, sizeof(entry_ops) / sizeof(entry_ops[0]),
		      NULL, 0, &id), "entry probe: 2 registers, a 3-DEREF chain, a string");
	ok(!probe_add(fd, KTRACE_PROBE_RETURN, ret_ops, 2, NULL, 0, &ret_id),
	   "return probe: rax");
	if (pipe(go))
		bail("pipe");
	pid = worker(go, NR_CALLS, 0);
	close(go[0]);
	if (write(go[1], "g", 1) != 1)
		bail("write");
	close(go[1]);
	rc = wait_exit(pid);
	ok(rc == 1, "the worker ran its calls with int3 at kt_probed (exit %d)", rc);

	ok(hits_of(id, pid, hits, NR_CALLS + 10) == NR_CALLS,
	   "entry probe hits = the worker's %d calls (%u)", NR_CALLS, hits_of(id, pid, NULL, 0));
	for (i = 0; i < NR_CALLS; i++) {
		struct hit *h = &hits[i];
		char name[20];

		snprintf(name, sizeof(name), "call %d", -1000 - i);
		if (h->w[0] == 0 && h->w[1] == (uint32_t)(i + 1) && h->w[2] == 0 &&
		    h->w[3] == (uint32_t)(-7 * (i + 1)) &&
		    (int32_t)h->w[4] == -1000 - i &&
		    !strncmp((char *)&h->w[5], name, 16))
			good++;
		else if (good == i)
			diag("hit %d: mask %x a %x:%x b %x val %d name %.16s", i, h->w[0],
			     h->w[1], h->w[2], h->w[3], (int32_t)h->w[4], (char *)&h->w[5]);
	}
	ok(good == NR_CALLS, "every hit has the call's a, b, n->next->next->val and n->name (%d)", good);

	ok(hits_of(ret_id, pid, hits, NR_CALLS + 10) == NR_CALLS,
	   "return probe hits = %d calls", NR_CALLS);
	for (i = 0, good = 0; i < NR_CALLS; i++) {
		uint64_t want = (uint64_t)((i + 1) * 3 - 7L * (i + 1));

		good += hits[i].w[0] == 0 && hits[i].w[1] == (uint32_t)want &&
			hits[i].w[2] == (uint32_t)(want >> 32);
	}
	ok(good == NR_CALLS, "every return hit has the call's return value (%d)", good);
	ok(!probe_del(fd, id) && !probe_del(fd, ret_id), "both deleted");
	ok(code_byte() != 0xcc, "no int3 left in this process");
	i = hits_of(id, 0, NULL, 0);
	call(0);
	ok(hits_of(id, 0, NULL, 0) == (unsigned int)i, "a call after DEL is not recorded");
}

static void test_faults(int fd)
{
	static const struct ktrace_probe_op ops[] = {
		OP(REG, 0, 0, 5, 0), OP(DEREF, 8, 0, 0, 0), OP(EMIT, 8, 0, 0, 0),
		OP(REG, 0, 0, 4, 0), OP(DEREF, 4, 0, 0, 0), OP(ADD, 0, 0, 0, 1),
		OP(EMIT, 4, 0, 0, 0),
		OP(REG, 0, 0, 4, 0), OP(STR, 8, 0, 0, 0),
		OP(REG, 0, 0, 1, 0), OP(ADD, 0, 0, 0, offsetof(struct node, name)),
		OP(STR, 16, 0, 0, 0),
	};
	static struct hit hits[8];
	static volatile uint64_t known = 0x1122334455667788ULL;	/* written: present */
	char *fresh, *guard;
	uint64_t before, after;
	uint32_t id;
	unsigned int n;
	int good = 0;

	new_phase();

	fresh = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (fresh == MAP_FAILED || guard == MAP_FAILED)
		bail("mmap");
	ok(!probe_add(fd, 0, ops, sizeof(ops) / sizeof(ops[0]), NULL, 0, &id),
	   "a probe that loads what the caller points at");
	known = 0x1122334455667788ULL;		/* its page present */
	before = probe_missing(fd);
	build_list(5);
	kt_probed(16, (long)fresh, nodes);		/* unmapped; never touched */
	kt_probed((long)&known, (long)guard, nodes);	/* guard page */
	fresh[0] = 41;					/* now present */
	kt_probed((long)&known, (long)fresh, nodes);
	after = probe_missing(fd);
	n = hits_of(id, getpid(), hits, 8);
	ok(n == 3, "3 hits (%u)", n);
	ok(hits[0].w[0] == 0x7 && !hits[0].w[1] && !hits[0].w[2] && !hits[0].w[3] &&
	   !hits[0].w[4] && !hits[0].w[5] && !strcmp((char *)&hits[0].w[6], "call 5"),
	   "address 16 and a page never touched: values 0-2 missing, zero; the name read (mask %x)",
	   hits[0].w[0]);
	ok(hits[1].w[0] == 0x6 && hits[1].w[1] == 0x55667788 && hits[1].w[2] == 0x11223344 &&
	   !hits[1].w[3] && !hits[1].w[4] && !hits[1].w[5],
	   "guard page: values 1-2 missing, value 0 read (mask %x)", hits[1].w[0]);
	ok(hits[2].w[0] == 0 && hits[2].w[3] == 42 && !strcmp((char *)&hits[2].w[4], ")"),
	   "touched, the page reads: 41 + 1 and the string \")\" (mask %x, %u)",
	   hits[2].w[0], hits[2].w[3]);
	ok(after - before == 5, "probe_missing counts the 5 missing values (%llu)",
	   (unsigned long long)(after - before));
	good = probe_del(fd, id);
	ok(!good, "deleted");
	munmap(fresh, 4096);
	munmap(guard, 4096);
}

/*
 * The shapes the handler runs as one step or through one sized load,
 * against what C makes of the same bytes: 1- and 2-byte loads, signed and
 * not, recorded in 1, 2 and 8-byte values (C's casts are the model); an
 * ADD before a DEREF still moves the accumulator when a fault earlier in
 * the value skips that DEREF (the next EMIT, with no REG between, records
 * the address plus the offset); a REG then an EMIT after a faulted load of
 * the same value records it missing.
 */
static void test_fetch_shapes(int fd)
{
	static const struct ktrace_probe_op ops[] = {
		OP(REG, 0, 0, 5, 0), OP(ADD, 0, 0, 0, 1),		/* 0: (s8)bytes[1] */
		OP(DEREF, 1, KTRACE_OP_SIGNED, 0, 0), OP(EMIT, 8, 0, 0, 0),
		OP(REG, 0, 0, 5, 0), OP(ADD, 0, 0, 0, 2),		/* 1: u16 at bytes + 2 */
		OP(DEREF, 2, 0, 0, 0), OP(EMIT, 2, 0, 0, 0),
		OP(REG, 0, 0, 5, 0), OP(ADD, 0, 0, 0, 2),		/* 2: the same, signed */
		OP(DEREF, 2, KTRACE_OP_SIGNED, 0, 0), OP(EMIT, 2, 0, 0, 0),
		OP(REG, 0, 0, 5, 0),					/* 3: (s8)bytes[0] */
		OP(DEREF, 1, KTRACE_OP_SIGNED, 0, 0), OP(EMIT, 1, 0, 0, 0),
		OP(REG, 0, 0, 4, 0), OP(DEREF, 8, 0, 0, 0),		/* 4: (*rsi)->b */
		OP(ADD, 0, 0, 0, 8), OP(DEREF, 8, 0, 0, 0), OP(EMIT, 8, 0, 0, 0),
		OP(EMIT, 8, 0, 0, 0),					/* 5: the accumulator */
		OP(REG, 0, 0, 4, 0), OP(DEREF, 8, 0, 0, 0),		/* 6: rdi, after *rsi */
		OP(REG, 0, 0, 5, 0), OP(EMIT, 8, 0, 0, 0),
	};
	static const uint8_t bytes[4] = { 0x80, 0xfb, 0xdc, 0xfe };
	static const uint64_t pair[2] = { 7, 0x0123456789abcdefULL };
	static const uint64_t *const holder = pair;
	static struct hit hits[4];
	uint64_t before, after, acc;
	uint16_t u16v;
	char *guard;
	uint32_t id;
	unsigned int n;

	new_phase();
	guard = mmap(NULL, 4096, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guard == MAP_FAILED)
		bail("mmap");
	ok(!probe_add(fd, 0, ops, sizeof(ops) / sizeof(ops[0]), NULL, 0, &id),
	   "a probe of 1- and 2-byte loads, a folded ADD and a REG after a load");
	before = probe_missing(fd);
	kt_probed((long)bytes, (long)guard, nodes);
	kt_probed((long)bytes, (long)&holder, nodes);
	after = probe_missing(fd);
	n = hits_of(id, getpid(), hits, 4);
	ok(n == 2, "2 hits (%u)", n);
	memcpy(&u16v, &bytes[2], sizeof(u16v));
	for (unsigned int i = 0; i < 2 && i < n; i++) {
		const uint32_t *w = &hits[i].w[1];
		uint64_t s8 = (uint64_t)(int64_t)(int8_t)bytes[1];

		ok(w[0] == (uint32_t)s8 && w[1] == (uint32_t)(s8 >> 32),
		   "hit %u: a signed byte, recorded in 8 bytes: %#llx (%#x %#x)", i,
		   (unsigned long long)s8, w[0], w[1]);
		ok(w[2] == u16v, "hit %u: 2 bytes, unsigned: %#x (%#x)", i, u16v, w[2]);
		ok(w[3] == (uint32_t)(int32_t)(int16_t)u16v,
		   "hit %u: 2 bytes, signed: %#x (%#x)", i, (uint32_t)(int32_t)(int16_t)u16v, w[3]);
		ok(w[4] == (uint32_t)(int32_t)(int8_t)bytes[0],
		   "hit %u: a signed byte in 1 byte: %#x (%#x)", i,
		   (uint32_t)(int32_t)(int8_t)bytes[0], w[4]);
	}
	if (n == 2) {
		const uint32_t *w = &hits[0].w[1];

		acc = (uint64_t)(uintptr_t)guard + 8;
		ok(hits[0].w[0] == 0x50 && !w[5] && !w[6] && !w[9] && !w[10],
		   "guard page: values 4 and 6 missing, zero (mask %#x)", hits[0].w[0]);
		ok(w[7] == (uint32_t)acc && w[8] == (uint32_t)(acc >> 32),
		   "... and value 5 is the address + 8: the ADD ran, its DEREF skipped (%#llx)",
		   (unsigned long long)w[8] << 32 | w[7]);
		w = &hits[1].w[1];
		ok(hits[1].w[0] == 0 && w[5] == (uint32_t)pair[1] && w[6] == (uint32_t)(pair[1] >> 32) &&
		   w[7] == w[5] && w[8] == w[6],
		   "present: values 4 and 5 are (*rsi)[1] (mask %#x, %#llx)", hits[1].w[0],
		   (unsigned long long)w[6] << 32 | w[5]);
		acc = (uint64_t)(uintptr_t)bytes;
		ok(w[9] == (uint32_t)acc && w[10] == (uint32_t)(acc >> 32),
		   "... and value 6 is rdi (%#llx)", (unsigned long long)w[10] << 32 | w[9]);
	}
	ok(after - before == 2, "probe_missing counts the 2 missing values (%llu)",
	   (unsigned long long)(after - before));
	ok(!probe_del(fd, id), "deleted");
	munmap(guard, 4096);
}

static void test_filter(int fd)
{
	static struct hit hits[20];
	uint32_t id, id_children;
	int go_a[2], go_b[2], rc_a, rc_b, good;
	unsigned int n, i;
	pid_t a, b;
	int32_t pid;

	new_phase();

	if (pipe(go_a) || pipe(go_b))
		bail("pipe");
	a = worker(go_a, 10, 1);
	b = worker(go_b, 10, 0);
	close(go_a[0]);
	close(go_b[0]);
	pid = a;
	ok(!probe_add(fd, 0, NULL, 0, &pid, 1, &id), "a probe for process %d", a);
	ok(!probe_add(fd, KTRACE_PROBE_CHILDREN, NULL, 0, &pid, 1, &id_children),
	   "a probe for process %d and its descendants", a);
	if (write(go_a[1], "g", 1) != 1 || write(go_b[1], "g", 1) != 1)
		bail("write");
	rc_a = wait_exit(a);
	rc_b = wait_exit(b);
	ok(rc_a == 0, "process %d forked, its child called, it exec'd and called: unharmed (%d)",
	   a, rc_a);
	ok(rc_b == 0, "the other process ran its calls without int3 at kt_probed (exit %d)", rc_b);
	n = hits_of(id, 0, NULL, 0);
	ok(n == 20 && hits_of(id, a, NULL, 0) == 20,
	   "pid probe: 10 calls before exec + 10 after, all by %d (%u)", a, n);
	n = hits_of(id_children, 0, NULL, 0);
	ok(n == 30 && hits_of(id_children, a, NULL, 0) == 20,
	   "CHILDREN probe: the fork's child's 10 calls too (%u)", n);
	ok(!hits_of(id, b, NULL, 0) && !hits_of(id_children, b, NULL, 0),
	   "nothing of the other process");
	n = hits_of(id, a, hits, 20);
	for (i = 0, good = 0; i < n && i < 20; i++)
		good += hits[i].nr == 2 && !hits[i].w[0] && !hits[i].w[1];
	ok(n && good == (int)n, "a hit without values is the record alone, arg1 and arg2 zero");
	ok(!probe_del(fd, id) && !probe_del(fd, id_children), "deleted");
	close(go_a[1]);
	close(go_b[1]);
}

static void *leaderless_thread(void *arg)
{
	int *go = arg, i;
	char c;

	if (read(go[0], &c, 1) != 1)
		_exit(90);
	for (i = 0; i < 10; i++)
		call(i);
	_exit(0);
}

/* Is @pid's leader gone (a zombie while its threads run)? Up to 5 s. */
static int leader_exited(pid_t pid)
{
	char path[64], buf[256], *p;
	int i, fd, n;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", pid, pid);
	for (i = 0; i < 500; i++) {
		fd = open(path, O_RDONLY);
		n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		if (n > 0) {
			buf[n] = 0;
			p = strrchr(buf, ')');
			if (p && p[1] == ' ' && p[2] == 'Z')
				return 1;
		}
		usleep(10000);
	}
	return 0;
}

/* The filter's address spaces: a leaderless process, a vfork() child. */
static void test_filter_mm(int fd)
{
	static struct hit hits[20];
	int go[2], rc;
	unsigned int n;
	pthread_t t;
	pid_t pid, child;
	int32_t want;
	uint32_t id;
	char c;
	int i;

	new_phase();
	if (pipe(go))
		bail("pipe");
	pid = fork_pinned();
	if (!pid) {
		close(go[1]);
		if (pthread_create(&t, NULL, leaderless_thread, go))
			_exit(91);
		pthread_exit(NULL);
	}
	close(go[0]);
	ok(leader_exited(pid), "process %d: its leader called pthread_exit()", pid);
	want = pid;
	ok(!probe_add(fd, 0, NULL, 0, &want, 1, &id), "a probe for process %d", pid);
	if (write(go[1], "g", 1) != 1)
		bail("write");
	rc = wait_exit(pid);
	n = hits_of(id, 0, hits, 20);
	ok(rc == 0 && n == 10 && hits[0].tid != (uint32_t)pid,
	   "its other thread's 10 calls are the probe's 10 hits (%u, exit %d)", n, rc);
	ok(!probe_del(fd, id), "deleted");
	close(go[1]);

	new_phase();
	if (pipe(go))
		bail("pipe");
	pid = fork_pinned();
	if (!pid) {
		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(90);
		child = vfork();
		if (!child) {
			call(0);	/* not wanted: its hit must not remove the breakpoint */
			_exit(0);
		}
		for (i = 0; i < 10; i++)
			call(i);
		_exit(child > 0 && code_byte() == 0xcc ? 0 : 1);
	}
	close(go[0]);
	want = pid;
	ok(!probe_add(fd, 0, NULL, 0, &want, 1, &id), "a probe for process %d", pid);
	if (write(go[1], "g", 1) != 1)
		bail("write");
	rc = wait_exit(pid);
	ok(rc == 0, "after its vfork() child's call, kt_probed() keeps its breakpoint (exit %d)", rc);
	n = hits_of(id, 0, NULL, 0);
	ok(n == 10 && hits_of(id, pid, NULL, 0) == 10,
	   "its 10 later calls are hits, the vfork child's none (%u)", n);
	ok(!probe_del(fd, id), "deleted");
	close(go[1]);
}

/* A 32-bit program's hits: recorded, every value missing, counted. */
static void test_m32(int fd)
{
	static const struct ktrace_probe_op ops[] = {
		OP(REG, 0, 0, 5, 0), OP(EMIT, 8, 0, 0, 0),		/* rdi */
		OP(CFA, 0, 0, 0, 0), OP(DEREF, 4, 0, 0, 0), OP(EMIT, 4, 0, 0, 0),
	};
	static struct hit hits[NR_CALLS];
	int to[2], from[2], bin, rc, good;
	unsigned int n, i;
	uint64_t before;
	char line[64];
	struct ktrace_probe p = { .ops = (uintptr_t)ops, .nr_ops = 5, .nr_pids = 1 };
	int32_t pid;
	ssize_t len;

	bin = open("/tests/probe-m32", O_RDONLY);
	if (bin < 0) {
		printf("ok %d # SKIP no /tests/probe-m32 (built only with gcc-multilib)\n",
		       ++kt_tests);
		return;
	}
	new_phase();
	if (pipe(to) || pipe(from))
		bail("pipe");
	pid = fork_pinned();
	if (!pid) {
		dup2(to[0], 0);
		dup2(from[1], 1);
		execl("/tests/probe-m32", "probe-m32", "20", (char *)NULL);
		dprintf(1, "exec: %s\n", strerror(errno));
		_exit(99);
	}
	close(to[0]);
	close(from[1]);
	len = read(from[0], line, sizeof(line) - 1);
	line[len > 0 ? len : 0] = 0;
	if (!strncmp(line, "exec: ", 6)) {	/* a kernel without CONFIG_IA32_EMULATION */
		wait_exit(pid);
		printf("ok %d # SKIP this kernel runs no 32-bit program (%.*s)\n", ++kt_tests,
		       (int)strcspn(line + 6, "\n"), line + 6);
		close(to[1]);
		close(from[0]);
		close(bin);
		return;
	}
	p.fd = bin;
	p.offset = strtoull(line, NULL, 0);
	p.pids = (uintptr_t)&pid;
	before = probe_missing(fd);
	rc = ioctl(fd, KTRACE_IOC_PROBE_ADD, &p);
	ok(!rc, "a probe in the 32-bit probe-m32 (pid %d) at offset %#llx", pid,
	   (unsigned long long)p.offset);
	if (write(to[1], "g", 1) != 1)
		bail("write");
	rc = wait_exit(pid);
	ok(rc == 0, "probe-m32 ran its 20 calls unharmed (exit %d)", rc);
	n = hits_of(p.id, pid, hits, NR_CALLS);
	ok(n == 20, "20 hits, one a call (%u)", n);
	for (i = 0, good = 0; i < n && i < NR_CALLS; i++)
		good += hits[i].w[0] == 0x3 && !hits[i].w[1] && !hits[i].w[2] && !hits[i].w[3];
	ok(n && good == (int)n,
	   "every hit: both values missing (mask 0x3), their words zero (%d of %u; first mask %#x)",
	   good, n, n ? hits[0].w[0] : 0);
	ok(probe_missing(fd) - before == 2ULL * n, "probe_missing grew by 2 a hit (%llu)",
	   (unsigned long long)(probe_missing(fd) - before));
	ok(!probe_del(fd, p.id), "deleted");
	close(to[1]);
	close(from[0]);
	close(bin);
}

struct add_call {
	int fd;
	struct ktrace_probe *p;
	int rc, done;
};

static void *add_thread(void *arg)
{
	struct add_call *c = arg;

	c->rc = ioctl(c->fd, KTRACE_IOC_PROBE_ADD, c->p);
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

static void *del_thread(void *arg)
{
	struct add_call *c = arg;
	struct ktrace_probe_del d = { .id = KTRACE_PROBE_MAX_ID };

	c->rc = ioctl(c->fd, KTRACE_IOC_PROBE_DEL, &d) ? errno : 0;
	__atomic_store_n(&c->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/* Wait up to @ms for @c to finish. */
static int finished(struct add_call *c, int ms)
{
	while (ms-- > 0 && !__atomic_load_n(&c->done, __ATOMIC_ACQUIRE))
		usleep(1000);
	return __atomic_load_n(&c->done, __ATOMIC_ACQUIRE);
}

/* The id goes out after the probe mutex is dropped, and a failed copy leaves nothing. */
static void test_id_copyout(int fd)
{
	long page = sysconf(_SC_PAGESIZE);
	struct uffdio_api api = { .api = UFFD_API };
	struct uffdio_register reg = { .mode = UFFDIO_REGISTER_MODE_WP };
	struct uffdio_writeprotect wp = { .mode = UFFDIO_WRITEPROTECT_MODE_WP };
	struct add_call add = { .fd = fd }, del = { .fd = fd };
	struct ktrace_probe *p;
	struct uffd_msg msg;
	pthread_t ta, td;
	struct pollfd pfd;
	int32_t self = getpid();
	int uffd, got, err;

	p = mmap(NULL, page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		bail("mmap");
	*p = (struct ktrace_probe){ .fd = bin_fd, .offset = probed_offset,
				    .pids = (uintptr_t)&self, .nr_pids = 1 };
	/* read-only: the ioctl reads the struct, cannot write the id */
	mprotect(p, page, PROT_READ);
	err = ioctl(fd, KTRACE_IOC_PROBE_ADD, p) < 0 ? errno : 0;
	ok(err == EFAULT, "the id to a read-only page: EFAULT (%s)", strerror(err));
	ok(code_byte() != 0xcc, "... and no probe left: kt_probed() has no breakpoint here");
	mprotect(p, page, PROT_READ | PROT_WRITE);

	uffd = syscall(SYS_userfaultfd, O_CLOEXEC | O_NONBLOCK);
	reg.range.start = wp.range.start = (uintptr_t)p;
	reg.range.len = wp.range.len = page;
	if (uffd < 0 || ioctl(uffd, UFFDIO_API, &api) ||
	    ioctl(uffd, UFFDIO_REGISTER, &reg) || ioctl(uffd, UFFDIO_WRITEPROTECT, &wp)) {
		printf("ok %d # SKIP userfaultfd write-protect: %s\n", ++kt_tests,
		       strerror(errno));
		munmap(p, page);
		return;
	}
	add.p = p;
	if (pthread_create(&ta, NULL, add_thread, &add))
		bail("pthread_create");
	pfd = (struct pollfd){ .fd = uffd, .events = POLLIN };
	got = poll(&pfd, 1, 10000) == 1 && read(uffd, &msg, sizeof(msg)) == sizeof(msg) &&
	      msg.event == UFFD_EVENT_PAGEFAULT &&
	      (msg.arg.pagefault.flags & UFFD_PAGEFAULT_FLAG_WP);
	ok(got && !add.done, "the id to a write-protected page: PROBE_ADD waits in its fault");
	if (pthread_create(&td, NULL, del_thread, &del))
		bail("pthread_create");
	ok(finished(&del, 10000) && del.rc == ENOENT,
	   "meanwhile PROBE_DEL of a free id returns, ENOENT (%s)",
	   del.done ? strerror(del.rc) : "still waiting after 10 s");
	wp.mode = 0;		/* lift the protection: the fault resolves */
	ioctl(uffd, UFFDIO_WRITEPROTECT, &wp);
	pthread_join(ta, NULL);
	pthread_join(td, NULL);
	ok(add.rc == 0 && p->id, "then PROBE_ADD returns its id (%u)", p->id);
	ok(code_byte() == 0xcc && !probe_del(fd, p->id), "the probe is in, and deleted");
	close(uffd);
	munmap(p, page);
}

static volatile int stop;

static void *caller(void *arg)
{
	long calls = 0;

	while (!stop) {
		kt_probed(calls, 1, NULL);
		calls++;
	}
	return (void *)calls;
}

/* Threads calling in a loop while the probe goes away: by DEL or close. */
static void test_remove_under_load(int fd, int by_close)
{
	int ctl[2], res[2], fd2, rc;
	unsigned char bytes[2];
	pthread_t t[4];
	uint32_t id;
	pid_t pid;
	char c;
	int i;

	if (pipe(ctl) || pipe(res))
		bail("pipe");
	pid = fork();
	if (!pid) {
		close(ctl[1]);
		for (i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, caller, NULL);
		if (read(ctl[0], &c, 1) != 1)	/* probe added */
			_exit(90);
		bytes[0] = code_byte();
		if (read(ctl[0], &c, 1) != 1)	/* probe removed */
			_exit(91);
		usleep(200000);
		bytes[1] = code_byte();
		stop = 1;
		for (i = 0; i < 4; i++)
			pthread_join(t[i], NULL);
		_exit(write(res[1], bytes, 2) == 2 ? 0 : 92);
	}
	close(ctl[0]);
	fd2 = kt_open(O_RDWR);		/* after the fork: the child must not hold it */
	usleep(200000);
	ok(!probe_add(fd2, 0, NULL, 0, NULL, 0, &id), "%s: a probe on 4 threads in a loop",
	   by_close ? "close" : "DEL");
	if (write(ctl[1], "a", 1) != 1)
		bail("write");
	usleep(300000);
	if (by_close)
		rc = close(fd2);
	else
		rc = probe_del(fd2, id);
	if (write(ctl[1], "d", 1) != 1)
		bail("write");
	rc = rc || wait_exit(pid);
	if (read(res[0], bytes, 2) != 2)
		bytes[0] = bytes[1] = 0;
	ok(!rc, "%s while they call: they run on and exit 0", by_close ? "close" : "DEL");
	ok(bytes[0] == 0xcc && bytes[1] != 0xcc,
	   "int3 at kt_probed while probed, the original byte after (%02x, %02x)",
	   bytes[0], bytes[1]);
	if (!by_close)
		close(fd2);
	close(ctl[1]);
	close(res[0]);
	close(res[1]);
}

/*
 * ktrace.ko: rmmod is refused while the file that added a probe is open;
 * once it is closed, rmmod succeeds while threads call the function, which
 * run on unharmed; insmod again and a probe records.
 */
static void test_module_unload(void)
{
	const char *ko = getenv("KTRACE_KO") ? getenv("KTRACE_KO") : "/stock/ktrace.ko";
	int fd, rc, status;
	char cmd[300];
	uint32_t id;
	pid_t pid;

	if (access("/sys/module/ktrace/initstate", F_OK) || access(ko, R_OK)) {
		printf("ok %d - module unload under hits # SKIP ktrace is not a module here\n",
		       ++kt_tests);
		return;
	}
	pid = fork();
	if (!pid) {
		pthread_t t[4];
		int i;

		for (i = 0; i < 4; i++)
			pthread_create(&t[i], NULL, caller, NULL);
		pause();
		_exit(0);
	}
	fd = kt_open(O_RDWR);
	ok(!probe_add(fd, 0, NULL, 0, NULL, 0, &id), "module: a probe on 4 threads in a loop");
	usleep(300000);
	ok(system("rmmod ktrace 2>/dev/null") != 0, "rmmod refused while its file is open");
	close(fd);
	rc = system("rmmod ktrace");
	ok(rc == 0, "closed: rmmod while the threads call (%d)", rc);
	usleep(300000);
	ok(waitpid(pid, &status, WNOHANG) == 0, "the threads run on");
	kill(pid, SIGTERM);
	ok(waitpid(pid, &status, 0) == pid && WIFSIGNALED(status) &&
	   WTERMSIG(status) == SIGTERM, "and end by our SIGTERM, not a SIGTRAP");
	snprintf(cmd, sizeof(cmd), "insmod %s", ko);
	rc = system(cmd);
	ok(rc == 0, "insmod again");
	fd = kt_open(O_RDWR);
	ok(!probe_add(fd, 0, NULL, 0, NULL, 0, &id) && code_byte() == 0xcc &&
	   !probe_del(fd, id) && code_byte() != 0xcc, "the reloaded module adds and deletes a probe");
	close(fd);
}

int main(int argc, char **argv)
{
	int fd, i;

	if (argc == 3 && !strcmp(argv[1], "calls")) {	/* the exec'd worker */
		for (i = 0; i < atoi(argv[2]); i++)
			call(i);
		return 0;
	}
	if (access("/dev/ktrace", F_OK)) {
		printf("1..0 # SKIP no /dev/ktrace\n");
		return 0;
	}
	bin_fd = open("/proc/self/exe", O_RDONLY);
	if (bin_fd < 0)
		bail("open /proc/self/exe");
	probed_offset = file_offset_of((void *)kt_probed);
	diag("kt_probed at file offset %#llx", (unsigned long long)probed_offset);

	fd = kt_open(O_RDWR);
	{
		struct ktrace_probe p = { .fd = bin_fd, .offset = probed_offset };

		if (ioctl(fd, KTRACE_IOC_PROBE_ADD, &p) && errno == EOPNOTSUPP) {
			printf("1..0 # SKIP probes not built in (no CONFIG_UPROBES)\n");
			return 0;
		}
		probe_del(fd, p.id);
	}
	reader = kt_open(O_RDWR | O_NONBLOCK);
	{
		struct ktrace_mask m = { .mask = KTRACE_GRP_probe, .flags = KTRACE_MASK_SESSION };

		if (ioctl(reader, KTRACE_IOC_SET_MASK, &m) || kt_attach(reader, CPU))
			bail("session and attach");
	}
	pin_to_cpu(CPU);

	test_abi(fd);
	test_values(fd);
	test_faults(fd);
	test_fetch_shapes(fd);
	test_filter(fd);
	test_filter_mm(fd);
	test_m32(fd);
	test_id_copyout(fd);
	test_remove_under_load(fd, 0);
	test_remove_under_load(fd, 1);
	close(reader);
	close(fd);
	test_module_unload();
	return done_testing();
}
