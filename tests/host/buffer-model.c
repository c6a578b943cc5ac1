// SPDX-License-Identifier: GPL-2.0
/*
 * buffer-model: kernel/ktrace/buffer.c itself, compiled for user space on
 * a model of x86 memory (see kshim.h), driven through random interleavings
 * of a writer CPU and a reader CPU:
 *
 *   CPU 0  a task writes events; at any shared-memory access an interrupt
 *          (and an NMI inside it) may write events of its own;
 *   CPU 1  the reader copies records out (ktrace_buf_read()) and, when it
 *          finds none, goes to sleep the way read() and poll() do
 *          (ktrace_buf_wait_ready()).
 *
 * Each CPU has a FIFO store buffer that drains at random moments, as on
 * x86, so loads may pass earlier stores.  After each run every store is
 * drained and the run is checked against what must hold:
 *
 *   no-false-full  the events never outnumber the free slots, so none may
 *                  be dropped, and the reader gets every one, in order;
 *   no-lost-wakeup a reader that went to sleep was woken, or the record it
 *                  sleeps on (the last of its wakeup window) is unpublished.
 *
 * The overwrite scenario (the flight recorder) has no reader
 * while CPU 0 writes far more than the ring holds in overwrite mode, its
 * interrupts writing bursts long enough to wrap the ring above a writer
 * they interrupted.  The model notes which events reserved records (the
 * cmpxchg on @head that succeeded) with their time stamps; the snapshot
 * read afterwards must hold exactly the newest of them, whole and in
 * order, and the overwritten and lost counts must add up to the records
 * of the others.  A writer may drop its event only while a context it
 * interrupted holds a claim or records it has not published (the task
 * never may), and the lost markers with the count still pending must
 * add up to the lost count.
 *
 * Usage: buffer-model SCENARIO RUNS SEED; prints TAP for one scenario.
 * Scenarios: full (no false full), wakeup1 and wakeup4 (no lost wakeup,
 * with a wakeup watermark of 1 and of 4 records), overwrite.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <ucontext.h>

#include "../../kernel/ktrace/buffer.c"

#define RING		16
#define TASK_EVENTS	2
#define MAX_IRQS	3
#define SB_SIZE		64
#define STACK_SIZE	(64 * 1024)

struct sb_entry {
	volatile void *p;
	size_t size;
	u64 v;
};

struct model_cpu {
	struct sb_entry sb[SB_SIZE];
	int nr_sb;
	ucontext_t ctx;
	bool done;
};

struct task_struct kshim_task = { .pid = 100 };
int kshim_cpu;

static struct model_cpu cpus[KSHIM_NR_CPUS];
static ucontext_t main_ctx;
static char stacks[KSHIM_NR_CPUS][STACK_SIZE];
static unsigned int rng_state;
static int irq_depth, irqs_left, stickiness;
static u64 tsc_now;
static bool woken;
static bool running;		/* in run(): the CPUs take turns */
static u32 next_seq;		/* sequence number of the next event written */
static bool overwrite;		/* the overwrite scenario */
/* per context (task, irq, nested irq): its last time stamp and its reservation */
static u64 ctx_tsc[3], ctx_resv[3];
/*
 * Overwrite: per context, its records reserved and not yet published, and
 * whether it holds a claim (@freeing moved, @tail not yet released).  A
 * writer may drop its event only while a context it interrupted is in one
 * of those windows; any other drop is noted in bad_drop.  marker_lost
 * adds up the counts the KTRACE_META_LOST records carried.
 */
static long ctx_unpublished[3];
static bool ctx_claim[3];
static const char *bad_drop;
static u64 marker_lost;

static unsigned int rnd(unsigned int n)
{
	rng_state = rng_state * 1103515245u + 12345u;
	return (rng_state >> 8) % n;
}

/* --- the memory model ----------------------------------------------------- */

static struct model_cpu *me(void)
{
	return &cpus[kshim_cpu];
}

static void drain_one(struct model_cpu *c)
{
	struct sb_entry *e = &c->sb[0];

	memcpy((void *)e->p, &e->v, e->size);
	memmove(&c->sb[0], &c->sb[1], --c->nr_sb * sizeof(c->sb[0]));
}

static void drain_all(struct model_cpu *c)
{
	while (c->nr_sb)
		drain_one(c);
}

static void load(const volatile void *p, void *v, size_t size)
{
	struct model_cpu *c = me();
	int i;

	for (i = c->nr_sb - 1; i >= 0; i--) {
		if (c->sb[i].p == p) {	/* store forwarding */
			memcpy(v, &c->sb[i].v, size);
			return;
		}
	}
	memcpy(v, (const void *)p, size);
}

static void store(volatile void *p, const void *v, size_t size)
{
	struct model_cpu *c = me();

	if (!running) {		/* setup and checks: one CPU, no buffering */
		memcpy((void *)p, v, size);
		return;
	}
	if (c->nr_sb == SB_SIZE)
		drain_one(c);
	c->sb[c->nr_sb].p = p;
	c->sb[c->nr_sb].size = size;
	c->sb[c->nr_sb].v = 0;
	memcpy(&c->sb[c->nr_sb].v, v, size);
	c->nr_sb++;
}

void kshim_load(const volatile void *p, void *v, size_t size)
{
	kshim_yield();
	load(p, v, size);
}

/* overwrite: a record published, or a claim released, by CPU 0's writer */
static void note_store(volatile void *p, const void *v)
{
	struct ktrace_buf *buf = ktrace_cpu_buf(0);
	struct ktrace_record *rec;
	size_t off = (char *)p - (char *)buf->recs;
	u32 event, a1, a2;

	if (p == &buf->tail) {
		ctx_claim[irq_depth] = false;
		return;
	}
	if ((char *)p < (char *)buf->recs || off >= buf->size * sizeof(*rec) ||
	    off % sizeof(*rec) != offsetof(struct ktrace_record, event))
		return;
	memcpy(&event, v, sizeof(event));
	if (!event)		/* freeing, not publishing */
		return;
	ctx_unpublished[irq_depth]--;
	rec = (struct ktrace_record *)((char *)p - offsetof(struct ktrace_record, event));
	if (event == KTRACE_META_LOST) {
		load(&rec->arg1, &a1, sizeof(a1));
		load(&rec->arg2, &a2, sizeof(a2));
		marker_lost += a1 | (u64)a2 << 32;
	}
}

void kshim_store(volatile void *p, const void *v, size_t size)
{
	kshim_yield();
	if (overwrite && running && kshim_cpu == 0)
		note_store(p, v);
	store(p, v, size);
}

void kshim_mb(void)
{
	kshim_yield();
	drain_all(me());
}

/* local_t: one instruction, so never interrupted half-way */
long kshim_local_cmpxchg(long *p, long old, long new)
{
	long cur;

	kshim_yield();
	load(p, &cur, sizeof(cur));
	if (cur == old)
		store(p, &new, sizeof(new));
	/* the model's ground truth: this context's event got its records */
	if (cur == old && p == &ktrace_cpu_buf(0)->head.a) {
		ctx_resv[irq_depth] = ctx_tsc[irq_depth];
		ctx_unpublished[irq_depth] = new - old;
	}
	if (cur == old && p == &ktrace_cpu_buf(0)->freeing.a)
		ctx_claim[irq_depth] = true;
	return cur;
}

/* overwrite: a drop, with no window of an interrupted writer below it */
static bool drop_unexplained(void)
{
	for (int d = 0; d < irq_depth; d++)
		if (ctx_unpublished[d] > 0 || ctx_claim[d])
			return false;
	return true;
}

long kshim_local_add_return(long *p, long n)
{
	long cur;

	kshim_yield();
	if (overwrite && running && kshim_cpu == 0 && p == &ktrace_cpu_buf(0)->lost.a &&
	    drop_unexplained() && !bad_drop)
		bad_drop = irq_depth ? "an interrupt dropped an event, with no claim or "
				       "unpublished reservation below it" :
				       "the task dropped an event, with no claim or "
				       "reservation below it";
	load(p, &cur, sizeof(cur));
	cur += n;
	store(p, &cur, sizeof(cur));
	return cur;
}

/* xchg and cmpxchg are locked on x86: full barriers */
long kshim_local_xchg(long *p, long n)
{
	long cur;

	kshim_mb();
	memcpy(&cur, p, sizeof(cur));
	memcpy(p, &n, sizeof(n));
	return cur;
}

int kshim_cmpxchg_int(int *p, int old, int new)
{
	int cur;

	kshim_mb();
	memcpy(&cur, p, sizeof(cur));
	if (cur == old)
		memcpy(p, &new, sizeof(new));
	return cur;
}

u64 kshim_rdtsc(void)
{
	kshim_yield();
	ctx_tsc[irq_depth] = ++tsc_now;
	return tsc_now;
}

void kshim_irq_work_queue(void)
{
	woken = true;
}

void *kshim_alloc(size_t size)
{
	return calloc(1, size);
}

/* --- the two CPUs --------------------------------------------------------- */

/* overwrite: every event written, with its reservation's time stamp (0: dropped) */
#define OW_TASK_EVENTS	24
#define OW_BURST	12
#define OW_MAX_EVENTS	(OW_TASK_EVENTS + MAX_IRQS * OW_BURST)
static struct { u32 seq, nr; u64 tsc; } events[OW_MAX_EVENTS];

/* 1, 2 or 4 records, each carrying the event's number */
static void write_event_ow(void)
{
	u32 seq = next_seq++, args[8] = { seq, 1, seq, 2, seq, 3, seq, 4 };
	u32 nr = seq % 3 == 0 ? 1 : seq % 3 == 1 ? 2 : 4;
	int depth = irq_depth;

	ctx_resv[depth] = 0;
	if (nr == 1)
		ktrace_write(KTRACE_user_mark, seq, 1);
	else
		ktrace_write_args(KTRACE_user_mark, args, 2 * nr);
	events[seq] = (typeof(events[0])){ seq, nr, ctx_resv[depth] };
}

static void write_event(void)
{
	u32 args[4] = { next_seq++, 7, 8, 9 };

	if (overwrite) {
		next_seq--;
		write_event_ow();
		return;
	}
	/* one record, or an event with a continuation record */
	if (args[0] % 2)
		ktrace_write(KTRACE_user_mark, args[0], 7);
	else
		ktrace_write_args(KTRACE_user_mark, args, 4);
}

/* Where CPU 0 may be interrupted, and where the model may switch CPUs. */
void kshim_yield(void)
{
	int cpu = kshim_cpu;

	if (!running)
		return;
	if (cpu == 0 && irq_depth < 2 && irqs_left && !rnd(6)) {
		/* overwrite: a burst that may wrap the ring above its writer */
		int burst = overwrite ? 1 + rnd(OW_BURST) : 1;

		irqs_left--;
		irq_depth++;
		while (burst--)
			write_event();
		irq_depth--;
	}
	if (!stickiness || !rnd(stickiness)) {
		swapcontext(&cpus[cpu].ctx, &main_ctx);
		kshim_cpu = cpu;
	}
}

static void writer_main(void)
{
	int i;

	for (i = 0; i < (overwrite ? OW_TASK_EVENTS : TASK_EVENTS); i++)
		write_event();
	cpus[0].done = true;
}

static struct ktrace_record got[64];
static size_t nr_got;
static bool reader_sleeps;

static void reader_main(void)
{
	struct ktrace_buf *buf = ktrace_cpu_buf(0);
	int round;
	ssize_t nr;

	for (round = 0; round < 12; round++) {
		/*
		 * The reader loads @tail with plain loads, which on x86 see its
		 * own buffered stores and here would not: its store buffer is
		 * drained between calls (each is a system call in the kernel).
		 */
		drain_all(&cpus[1]);
		nr = ktrace_buf_read(buf, (char *)&got[nr_got], 64 - nr_got);
		if (nr > 0) {
			nr_got += nr;
			continue;
		}
		woken = false;	/* on the wait queue from here on */
		drain_all(&cpus[1]);
		if (!ktrace_buf_wait_ready(buf)) {
			reader_sleeps = true;
			break;
		}
	}
	cpus[1].done = true;
}

static void start(int cpu, void (*fn)(void))
{
	getcontext(&cpus[cpu].ctx);
	cpus[cpu].ctx.uc_stack.ss_sp = stacks[cpu];
	cpus[cpu].ctx.uc_stack.ss_size = STACK_SIZE;
	cpus[cpu].ctx.uc_link = &main_ctx;
	makecontext(&cpus[cpu].ctx, fn, 0);
}

/* --- one run -------------------------------------------------------------- */

static void setup(unsigned long wakeup)
{
	struct ktrace_buf *buf = ktrace_cpu_buf(0);

	memset(cpus, 0, sizeof(cpus));
	kshim_cpu = 0;
	atomic_set(&buf->reader, 0);
	ktrace_set_mask(0);
	if (ktrace_resize(RING) || ktrace_set_overwrite(overwrite))
		abort();
	ktrace_set_mask(KTRACE_GRP_user);
	/* overwrite: no reader until the snapshot */
	atomic_set(&buf->reader, !overwrite);
	ktrace_set_wakeup(buf, wakeup);
	drain_all(&cpus[0]);
	nr_got = 0;
	next_seq = 0;
	reader_sleeps = false;
	woken = false;
	irq_depth = 0;
	memset(ctx_unpublished, 0, sizeof(ctx_unpublished));
	memset(ctx_claim, 0, sizeof(ctx_claim));
	bad_drop = NULL;
	marker_lost = 0;
	irqs_left = rnd(MAX_IRQS + 1);
	stickiness = rnd(4) ? 0 : 2 + rnd(6);
}

static void run(void)
{
	int cpu;

	start(0, writer_main);
	start(1, reader_main);
	cpus[1].done = overwrite;
	running = true;
	while (!cpus[0].done || !cpus[1].done) {
		cpu = rnd(4);
		if (cpu >= 2) {		/* drain a store */
			if (cpus[cpu - 2].nr_sb)
				drain_one(&cpus[cpu - 2]);
			continue;
		}
		if (cpus[cpu].done)
			continue;
		kshim_cpu = cpu;
		swapcontext(&main_ctx, &cpus[cpu].ctx);
	}
	running = false;
	drain_all(&cpus[0]);
	drain_all(&cpus[1]);
}

/* Every event read once, whole, in time stamp order; nothing dropped. */
static const char *check_full(void)
{
	struct ktrace_buf *buf = ktrace_cpu_buf(0);
	struct ktrace_record rest[64];
	bool seen[64] = { false };
	u64 last_tsc = 0;
	u32 seq, nr_seen = 0;
	size_t i;
	ssize_t nr;

	kshim_cpu = 1;
	nr = ktrace_buf_read(buf, (char *)rest, 64);
	if (nr > 0) {
		memcpy(&got[nr_got], rest, nr * sizeof(rest[0]));
		nr_got += nr;
	}
	if (local_read(&buf->lost) || local_read(&buf->lost_pending))
		return "an event was dropped from a ring with room for it";
	for (i = 0; i < nr_got; i++) {
		if (got[i].event == KTRACE_META_LOST)
			return "a lost marker in a ring that never filled";
		if (got[i].tsc < last_tsc)
			return "time stamps go backwards";
		last_tsc = got[i].tsc;
		seq = got[i].arg1;
		if (got[i].event != KTRACE_user_mark || seq >= 64 || seen[seq])
			return "a record that is no event written, or one read twice";
		seen[seq] = true;
		nr_seen++;
		if (seq % 2 == 0 &&
		    (i + 1 >= nr_got || got[i + 1].arg1 != 8 || got[i + 1].tsc != got[i].tsc ||
		     got[i + 1].event != (KTRACE_EVT_CONT | KTRACE_EVT_END)))
			return "an event without its continuation record";
		i += seq % 2 == 0;
	}
	if (nr_seen != next_seq)
		return "the reader did not get every event";
	return NULL;
}

static int by_tsc(const void *a, const void *b)
{
	const typeof(events[0]) *x = a, *y = b;

	return x->tsc < y->tsc ? -1 : x->tsc > y->tsc;
}

static long runs_dropped, runs_overwrote;

/*
 * The snapshot: tracing off, a reader attached, everything read.  It must
 * be the newest reserved events, whole, in order; the others are counted
 * as overwritten or (those that reserved nothing) lost, exactly.
 */
static const char *check_overwrite(void)
{
	struct ktrace_buf *buf = ktrace_cpu_buf(0);
	struct ktrace_record snap[RING + 1];
	u64 overwritten = 0, dropped = 0;
	size_t i, j, nr_kept = 0, nr_reserved = 0, used;
	ssize_t nr;

	kshim_cpu = 1;
	ktrace_set_mask(0);
	atomic_set(&buf->reader, 1);
	if (ktrace_set_mask(KTRACE_GRP_user) != -EBUSY)
		return "tracing turned on in overwrite mode with a reader attached";
	if (ktrace_set_overwrite(false) != -EBUSY)
		return "the mode changed with a reader attached";
	nr = ktrace_buf_read(buf, (char *)snap, RING + 1);
	used = nr > 0 ? nr : 0;
	if (local_read(&buf->freeing) != buf->tail)
		return "a claim left pending after the snapshot";

	/* the reserved events, oldest first: the model's stream */
	qsort(events, next_seq, sizeof(events[0]), by_tsc);
	for (i = 0; i < next_seq; i++) {
		if (!events[i].tsc) {
			dropped += events[i].nr;
			continue;
		}
		events[nr_reserved++] = events[i];
	}
	/* match the snapshot, event by event, against the newest of them */
	for (i = 0; i < used; i++)
		nr_kept += snap[i].event == KTRACE_user_mark;
	if (nr_kept > nr_reserved)
		return "more events in the snapshot than were written";
	j = nr_reserved - nr_kept;
	for (i = 0; i < j; i++)
		overwritten += events[i].nr;
	for (i = 0; i < used; i++) {
		u32 k;

		if (snap[i].event == KTRACE_META_LOST)
			continue;
		if (snap[i].event != KTRACE_user_mark || snap[i].arg1 != events[j].seq ||
		    snap[i].tsc != events[j].tsc)
			return "the snapshot is not the newest events in order";
		for (k = 1; k < events[j].nr; k++) {
			u32 code = KTRACE_EVT_CONT | ((k - 1) << KTRACE_SUB_SHIFT);

			if (k == events[j].nr - 1)
				code |= KTRACE_EVT_END;
			if (++i >= used || snap[i].event != code || snap[i].arg1 != events[j].seq)
				return "an event in the snapshot is not whole";
		}
		j++;
	}
	if (local_read(&buf->overwritten) != overwritten)
		return "the overwritten count is not the records of the older events";
	if (local_read(&buf->lost) != dropped)
		return "the lost count is not the records of the dropped events";
	if (bad_drop)
		return bad_drop;
	if (marker_lost + local_read(&buf->lost_pending) != dropped)
		return "the lost markers and the pending count are not the lost count";
	if (!dropped && used + 3 < RING)
		return "more was overwritten than the room needed";
	runs_dropped += dropped != 0;
	runs_overwrote += overwritten != 0;
	atomic_set(&buf->reader, 0);
	return NULL;
}

static const char *check_wakeup(void)
{
	kshim_cpu = 1;
	if (reader_sleeps && !woken && ktrace_buf_wait_ready(ktrace_cpu_buf(0)))
		return "the reader sleeps on a published record and nobody wakes it";
	return NULL;
}

int main(int argc, char **argv)
{
	const char *scenario = argc > 1 ? argv[1] : "full";
	long runs = argc > 2 ? atol(argv[2]) : 100000, i;
	unsigned int seed = argc > 3 ? atoi(argv[3]) : 1;
	unsigned long wakeup = !strcmp(scenario, "wakeup4") ? 4 : 1;
	const char *(*check)(void) = !strcmp(scenario, "full") ? check_full :
				     !strcmp(scenario, "overwrite") ? check_overwrite :
				     check_wakeup;
	const char *why = NULL;
	long failed = 0, first = -1;

	rng_state = seed;
	overwrite = !strcmp(scenario, "overwrite");
	ktrace_init();
	for (i = 0; i < runs; i++) {
		setup(wakeup);
		run();
		why = check();
		if (why) {
			if (!failed++)
				printf("# run %ld: %s\n", i, why);
			first = first < 0 ? i : first;
		}
	}
	if (overwrite)	/* the paths the scenario is for were taken */
		printf("# %ld runs overwrote, %ld dropped an event\n", runs_overwrote,
		       runs_dropped);
	if (overwrite && (!runs_overwrote || !runs_dropped) && !failed++)
		printf("# the runs never overwrote or never dropped\n");
	printf("%sok 1 - %s: %ld random interleavings, %ld bad%s\n",
	       failed ? "not " : "", scenario, runs, failed,
	       failed ? " (first shown above)" : "");
	printf("1..1\n");
	return failed ? 1 : 0;
}
