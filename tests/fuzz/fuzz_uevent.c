// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_uevent: libFuzzer target for the kernel's user-event write()
 * (kernel/ktrace/dev.c, ktrace_write_user()), compiled for user space with
 * kernel/ktrace/buffer.c on the kshim (tests/host/kshim.h, kshim-dev.h), as
 * tests/host/buffer-model.c compiles buffer.c.  The input is
 *
 *   byte 0     bit 0: the group mask leaves "user" out; bit 1: the user
 *              memory faults (memdup_user() fails)
 *   the rest   the bytes write() is given
 *
 * and what the kernel does is checked against a model written from the
 * rule dev.c documents (a user event is one record of group "user" alone,
 * tsc and tid zero, then continuation records numbered 0, 1, ... with END
 * on the last, 8 arguments at most; one write() carries at most 64
 * records): write() returns the count if every event is good, else
 * -EINVAL (-EFAULT for the fault), and records nothing unless it returns
 * the count; then the CPU's ring holds exactly the events, in order,
 * stamped with the task's tid and a time stamp, their continuations
 * renumbered as the kernel numbers them.  Built by tests/fuzz/run.sh uevent.
 */
#include <stdio.h>

#include "../../kernel/ktrace/buffer.c"
#include "../../kernel/ktrace/dev.c"

#define RING		4096		/* records, more than a write() carries */
#define WRITE_MAX	64		/* records a write() may carry (dev.c) */

struct task_struct kshim_task = { .pid = 4242, .tgid = 4242 };
int kshim_cpu;
int kshim_fault_user;
static u64 tsc_now = 1000;

/* One CPU, no other writer: memory is plain memory. */
void kshim_load(const volatile void *p, void *v, size_t size)
{
	memcpy(v, (const void *)p, size);
}

void kshim_store(volatile void *p, const void *v, size_t size)
{
	memcpy((void *)p, v, size);
}

void kshim_mb(void)
{
}

void kshim_yield(void)
{
}

long kshim_local_cmpxchg(long *p, long old, long new)
{
	long cur = *p;

	if (cur == old)
		*p = new;
	return cur;
}

long kshim_local_add_return(long *p, long n)
{
	return *p += n;
}

long kshim_local_xchg(long *p, long n)
{
	long cur = *p;

	*p = n;
	return cur;
}

int kshim_cmpxchg_int(int *p, int old, int new)
{
	int cur = *p;

	if (cur == old)
		*p = new;
	return cur;
}

u64 kshim_rdtsc(void)
{
	return ++tsc_now;
}

void kshim_irq_work_queue(void)
{
}

void *kshim_alloc(size_t size)
{
	return calloc(1, size);
}

/* ---- the model: what write() must do with @recs --------------------------- */

struct model_event {
	u32 code;
	unsigned int nr;		/* records: 1 + continuations */
	const struct ktrace_record *recs;
};

/* The events of @recs, or -EINVAL if any of them breaks the rule. */
static int model_events(const struct ktrace_record *recs, unsigned int nr,
			struct model_event *ev)
{
	unsigned int n = 0;

	for (unsigned int i = 0; i < nr; n++) {
		u32 code = recs[i].event;
		unsigned int len = 1;

		if ((code & KTRACE_GROUP_MASK) != KTRACE_GRP_user ||
		    (code & (KTRACE_EVT_CONT | KTRACE_EVT_END)) || recs[i].tsc || recs[i].tid)
			return -EINVAL;
		while (i + len < nr && (recs[i + len].event & KTRACE_EVT_CONT)) {
			const struct ktrace_record *c = &recs[i + len];

			if ((c->event & KTRACE_GROUP_MASK) || KTRACE_SUB(c->event) != len - 1 ||
			    c->tsc || c->tid || len == 4)	/* 8 arguments: 3 continuations */
				return -EINVAL;
			len++;
			if (c->event & KTRACE_EVT_END)
				break;
		}
		if (len > 1 && !(recs[i + len - 1].event & KTRACE_EVT_END))
			return -EINVAL;
		ev[n] = (struct model_event){ code, len, &recs[i] };
		i += len;
	}
	return n;
}

static void fail(const char *why, long got, long want)
{
	fprintf(stderr, "uevent: %s (got %ld, the model says %ld)\n", why, got, want);
	__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct ktrace_record recs[WRITE_MAX + 2], got[RING];
	static struct model_event ev[WRITE_MAX + 2];
	static bool started;
	struct ktrace_buf *buf = ktrace_cpu_buf(0);
	struct file file = { 0 };
	size_t count;
	ssize_t ret, want;
	long nr_got, n = 0, g = 0;
	bool user_on;

	if (!started) {
		ktrace_init();
		if (ktrace_resize(RING))
			__builtin_trap();
		started = true;
	}
	if (!size)
		return 0;
	user_on = !(data[0] & 1);
	kshim_fault_user = data[0] & 2;
	count = size - 1;
	if (ktrace_set_mask(user_on ? KTRACE_GROUP_MASK : KTRACE_GROUP_MASK & ~KTRACE_GRP_user))
		__builtin_trap();

	/* the model */
	if (!count || count % sizeof(*recs) || count > WRITE_MAX * sizeof(*recs)) {
		want = -EINVAL;
	} else if (kshim_fault_user) {
		want = -EFAULT;
	} else {
		memcpy(recs, data + 1, count);
		n = model_events(recs, count / sizeof(*recs), ev);
		want = n < 0 ? n : (ssize_t)count;
	}

	ret = ktrace_write_user(&file, (const char *)data + 1, count, NULL);
	if (ret != want)
		fail("write() returned another value", ret, want);

	nr_got = ktrace_buf_read(buf, (char *)got, RING);
	if (nr_got < 0)
		fail("the ring could not be read", nr_got, 0);
	if (ret < 0 || !user_on) {
		if (nr_got)
			fail("records in the ring after a write() that recorded nothing",
			     nr_got, 0);
		return 0;
	}
	for (long e = 0; e < n; e++) {
		for (unsigned int i = 0; i < ev[e].nr; i++, g++) {
			const struct ktrace_record *r = &got[g], *u = &ev[e].recs[i];
			u32 code = i ? KTRACE_EVT_CONT | (i - 1) << KTRACE_SUB_SHIFT |
				       (i + 1 == ev[e].nr ? KTRACE_EVT_END : 0) : ev[e].code;

			if (g >= nr_got)
				fail("fewer records in the ring than written", nr_got, g + 1);
			if (r->event != code)
				fail("a record's code differs", r->event, code);
			if (r->arg1 != u->arg1 || r->arg2 != u->arg2)
				fail("a record's arguments differ", r->arg1, u->arg1);
			if (r->tid != (u32)kshim_task.pid)
				fail("a record is not stamped with the writer's tid", r->tid,
				     kshim_task.pid);
			if (!r->tsc || r->tsc != got[g - i].tsc)
				fail("a record is not stamped with its event's time", r->tsc,
				     got[g - i].tsc);
		}
	}
	if (g != nr_got)
		fail("more records in the ring than written", nr_got, g);
	return 0;
}

/*
 * Seeds, when KSTREAM_SEEDS names a directory (run.sh): events of 1 to 4
 * records, several in a write(), and one of each fault.
 */
static void seed(const char *dir, const char *name, uint8_t flags,
		 const struct ktrace_record *r, unsigned int nr)
{
	char path[4200];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	if (!f || fputc(flags, f) == EOF || fwrite(r, sizeof(*r), nr, f) != nr || fclose(f))
		exit(1);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *dir = getenv("KSTREAM_SEEDS");
	struct ktrace_record r[WRITE_MAX + 1];
	unsigned int n = 0;

	(void)argc;
	(void)argv;
	if (!dir)
		return 0;
	for (unsigned int len = 1; len <= 4; len++) {
		r[n++] = (struct ktrace_record){ .event = KTRACE_CODE(KTRACE_GRP_user, len),
						 .arg1 = len, .arg2 = ~len };
		for (unsigned int i = 1; i < len; i++)
			r[n++] = (struct ktrace_record){
				.event = KTRACE_EVT_CONT | (i - 1) << KTRACE_SUB_SHIFT |
					 (i + 1 == len ? KTRACE_EVT_END : 0),
				.arg1 = 100 + i, .arg2 = 200 + i };
	}
	seed(dir, "one", 0, r, 1);
	seed(dir, "four-events", 0, r, n);
	seed(dir, "user-off", 1, r, n);
	seed(dir, "fault", 2, r, n);
	seed(dir, "cont-alone", 0, r + 1, 1);
	/* one continuation too many: 10 arguments */
	r[n] = r[n - 1];
	r[n - 1].event &= ~KTRACE_EVT_END;
	r[n].event += 1u << KTRACE_SUB_SHIFT;
	seed(dir, "too-long", 0, r + n - 4, 5);
	/* as many records as a write() may carry, and one more */
	for (n = 0; n <= WRITE_MAX; n++)
		r[n] = (struct ktrace_record){ .event = KTRACE_user_mark, .arg1 = n };
	seed(dir, "full", 0, r, WRITE_MAX);
	seed(dir, "over-full", 0, r, WRITE_MAX + 1);
	exit(0);
}
