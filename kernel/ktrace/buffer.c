// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace: per-CPU lock-free event buffers and the TRACE() write path.
 *
 * Each CPU owns a ring of fixed 24-byte records.  Writers are every context
 * that runs on that CPU: task, softirq, hardirq and NMI, nesting on each
 * other.  The one reader is a task on any CPU, attached through /dev/ktrace.
 *
 *            tail                              head
 *             |  committed   | reserved |committed|   free
 *   ... ------+--------------+----------+---------+--------------- ...
 *             |  E  E  E  C  |  0  0    |  E  E   |
 *             +--------------+----------+---------+
 *              reader copies    an interrupted      a nested writer
 *              these out        writer fills these  already finished
 *
 * A writer reserves its records by moving @head forward with
 * local_cmpxchg(), reading the TSC inside the retry loop.  A writer that is
 * interrupted between reading @head and the cmpxchg finds @head moved by the
 * nested writer and retries with a new TSC, so in every CPU's ring the
 * records are in timestamp order, and an event and its continuation
 * records, reserved together, are always adjacent.
 *
 * A writer then fills its records and publishes each one by storing its
 * nonzero event code last (smp_store_release).  The reader copies records
 * from @tail up to the first one whose event code is still zero, so it
 * never sees a record being written, even when a nested writer has already
 * published records after it; those are read on the next pass.  The reader
 * then zeroes the event codes it consumed and releases @tail.
 *
 * A full ring drops the newest event: the writer counts it in @lost and in
 * @lost_pending.  The next writer that finds room takes @lost_pending and
 * writes a KTRACE_META_LOST record, carrying the count, in front of its own
 * event, so the reader learns exactly how many records were lost.  The
 * marker's place is exact when writers do not nest: a context that
 * interrupts a writer after it took @lost_pending and before it reserved
 * puts its own events in front of the marker.
 *
 * Wakeups: a reader sleeps until the last record of its wakeup window is
 * published: the window ends at the first multiple of the watermark
 * (@wakeup_mask + 1 records, a power of two) above @tail.  Only the writer
 * whose reservation holds that record (its range crosses a multiple of the
 * watermark) looks for a sleeping reader, so a reader tracing its own
 * wakeups is woken once per watermark, not once per record.
 *
 * Overwrite mode (a flight recorder, KTRACE_IOC_SET_MODE): no reader is
 * attached while tracing is on, and a writer that finds the ring full
 * frees the oldest whole events itself (ktrace_free_room()).  The reader's
 * invariant must hold for the writers too: every free slot has event code
 * zero, so that a slot reserved by an interrupted writer, not yet
 * published, reads as zero and is never taken for an old event.  Freeing
 * is therefore two steps, claimed first: a writer claims [@tail, new tail)
 * by moving @freeing from @tail with local_cmpxchg(), zeroes the event
 * codes, then moves @tail.  A nested writer that finds a claim in progress
 * (@freeing != @tail), or an unpublished record where it would free, cannot
 * wait for the writer it interrupted: it drops its event, counted as lost,
 * as with a full ring in the normal mode.  A snapshot is read with tracing
 * off, after a grace period, when every reserved record is published.
 *
 * Sessions (KTRACE_MASK_SESSION): tracing is owned by the open file that
 * started it, and goes back to what it was when that file is released, so
 * a tracer that is killed does not leave tracing on (or overwrite mode).
 * A session starts with tracing off after a grace period, with no reader
 * attached, and empties every buffer (ktrace_session_start()): nothing an
 * earlier session left, records or a pending lost count, opens its trace.
 * Turning tracing off always waits for a grace period, so a reader's last
 * drain after it gets whole events.  A reader that attaches while tracing
 * is on (no session of its own) may find the continuation records of an
 * event an earlier reader took at @tail: it skips them (@skip_cont).
 *
 * Nothing here sleeps, allocates, takes a lock or wakes a task directly: a
 * waiting reader is woken through irq_work.
 */

#include <linux/cpu.h>
#include <linux/cpuhotplug.h>
#include <linux/irq_work.h>
#include <linux/ktrace.h>
#include <linux/log2.h>
#include <linux/moduleparam.h>
#include <linux/mm.h>
#include <linux/percpu.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/tsc.h>

#include "internal.h"

/* Built in: ktrace.buf_size=; the module (ktrace.ko) gets that prefix itself. */
#ifndef MODULE
#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "ktrace."
#endif

/* Per-CPU buffer size at boot, in records: 24 bytes each, 1.5 MiB. */
#define KTRACE_BUF_DEFAULT	65536

DEFINE_STATIC_KEY_FALSE(ktrace_enabled);
EXPORT_SYMBOL_GPL(ktrace_enabled);

/* Groups being traced; 0 when tracing is off.  Changed under ktrace_mutex. */
u32 ktrace_group_mask __read_mostly;
EXPORT_SYMBOL_GPL(ktrace_group_mask);

/*
 * Overwrite mode: changed under ktrace_mutex only while tracing is off and
 * no reader is attached, then a grace period passes before tracing can be
 * turned on, so a writer never sees it change.
 */
bool ktrace_overwrite __read_mostly;

/* Serializes mask changes, resizes and reader attach. Taken after cpus_read_lock(). */
DEFINE_MUTEX(ktrace_mutex);

/*
 * struct ktrace_session - who owns tracing (KTRACE_MASK_SESSION)
 * @owner:     the open file (its struct ktrace_reader) that started the
 *             session, NULL when none does
 * @prev_mask: the mask before the session started, put back at its end
 *
 * Under ktrace_mutex.
 */
struct ktrace_session {
	const void	*owner;
	u32		prev_mask;
};

static struct ktrace_session ktrace_session;

unsigned int ktrace_buf_records = KTRACE_BUF_DEFAULT;
module_param_named(buf_size, ktrace_buf_records, uint, 0444);
MODULE_PARM_DESC(buf_size, "per-CPU buffer size in records");

static unsigned int ktrace_boot_mask;
module_param_named(mask, ktrace_boot_mask, uint, 0444);
MODULE_PARM_DESC(mask, "group mask to start tracing with at boot");

static DEFINE_PER_CPU_SHARED_ALIGNED(struct ktrace_buf, ktrace_bufs);

/* CPUHP_BP_PREPARE_DYN gave us this state; the module removes it. */
static int ktrace_cpuhp_state __maybe_unused;

static __always_inline void ktrace_commit(struct ktrace_record *rec, u64 tsc,
					  u32 event, u32 tid, u32 arg1,
					  u32 arg2)
{
	rec->tsc = tsc;
	rec->tid = tid;
	rec->arg1 = arg1;
	rec->arg2 = arg2;
	/* Publish the record: pairs with smp_load_acquire() in ktrace_buf_read(). */
	smp_store_release(&rec->event, event);
}

/*
 * Overwrite mode: free the oldest whole events so that @need records fit
 * after @head, @tail and @head as this writer loaded them.
 *
 * Return: true if @tail may have moved (look again), false if this writer
 * must drop its event: the oldest record is not yet published (a writer we
 * interrupted reserved it), or a writer we interrupted is freeing.
 */
static __always_inline bool ktrace_free_room(struct ktrace_buf *buf,
					     struct ktrace_record *recs,
					     unsigned long tail,
					     unsigned long head,
					     unsigned long need)
{
	unsigned long mask = buf->size - 1, end = tail, freed = 0, i;
	u32 event;

	/*
	 * Writers that interrupted us since we loaded @tail have finished:
	 * if one freed, @freeing and @tail moved on together, and we look
	 * again.  @freeing ahead of a @tail that has not moved is a claim in
	 * progress, that of a writer we interrupted.  @tail is loaded again
	 * after @freeing: a nested writer that freed between the two loads
	 * moved both, and is no claim in progress (the task, which
	 * interrupted nobody, dropped events that way).
	 */
	if (smp_load_acquire(&buf->tail) != tail)
		return true;
	if (local_read(&buf->freeing) != tail)
		return READ_ONCE(buf->tail) != tail;
	while (head - end + need > buf->size) {
		/*
		 * An event, then its continuation records up to the next
		 * event.  A record still zero may be a continuation record
		 * a writer we interrupted has yet to publish: we cannot tell,
		 * so we drop; or a nested writer freed it meanwhile (@tail
		 * moved; it ran on this CPU and is done, so a plain load
		 * sees it): then we look again.
		 */
		event = READ_ONCE(recs[end & mask].event);
		do {
			if (!event)
				return READ_ONCE(buf->tail) != tail;
			if (event != KTRACE_META_LOST)
				freed++;
			end++;
			if (end == head)
				break;
			event = READ_ONCE(recs[end & mask].event);
			if (!event)
				return READ_ONCE(buf->tail) != tail;
		} while (event & KTRACE_EVT_CONT);
	}
	/*
	 * Claim [tail, end).  This fails if a nested writer freed meanwhile
	 * (look again) or a writer we interrupted claimed after we loaded
	 * @tail (looking again finds its claim and drops).
	 */
	if (local_cmpxchg(&buf->freeing, tail, end) != tail)
		return true;
	for (i = tail; i != end; i++)
		WRITE_ONCE(recs[i & mask].event, 0);
	local_add(freed, &buf->overwritten);
	/* The zeroes before the room they make: pairs with the acquire of @tail. */
	smp_store_release(&buf->tail, end);
	return true;
}

/*
 * @any_mask: write while tracing is on even if the mask leaves @event's
 * group out (the state dump a reader asks for); a constant, so the test
 * costs the TRACE() sites nothing.
 */
static __always_inline void ktrace_reserve_write(u32 event, const u32 *args,
						 unsigned int nr_args, bool any_mask)
{
	unsigned long head, tail, need, lost, idx;
	unsigned int nr, i;
	struct ktrace_record *recs;
	struct ktrace_buf *buf;
	bool overwrite;
	u32 tid, mask;
	u64 tsc;

	nr = 1 + (nr_args > 2 ? DIV_ROUND_UP(nr_args - 2, 2) : 0);

	preempt_disable_notrace();
	/* A site where RCU is not watching breaks ktrace_resize()'s grace period. */
	RCU_LOCKDEP_WARN(!rcu_is_watching(), "ktrace: TRACE() where RCU is not watching");
	/*
	 * Checked again with preemption off: ktrace_resize() clears the mask,
	 * then waits for a grace period before it frees any buffer.
	 */
	mask = READ_ONCE(ktrace_group_mask);
	if (unlikely(!(mask & event)) && !(any_mask && mask))
		goto out;

	buf = this_cpu_ptr(&ktrace_bufs);
	/* Pairs with smp_store_release() in ktrace_buf_install(). */
	recs = smp_load_acquire(&buf->recs);
	if (unlikely(!recs)) {
		local_add(nr, &buf->lost);
		goto out;
	}

	/* A plain read first: local_xchg() is a locked instruction on x86. */
	lost = local_read(&buf->lost_pending);
	if (unlikely(lost))
		lost = local_xchg(&buf->lost_pending, 0);
	need = nr + (lost ? 1 : 0);
	overwrite = READ_ONCE(ktrace_overwrite);
	for (;;) {
		/*
		 * @tail before @head: the reader never moves @tail past @head
		 * and @head only grows, so head - tail cannot wrap, even when
		 * an interrupt here reserves records that a reader on another
		 * CPU reads before we load @head.  Slots before @tail are
		 * free: pairs with smp_store_release() in ktrace_buf_read().
		 */
		tail = smp_load_acquire(&buf->tail);
		head = local_read(&buf->head);
		if (unlikely(head - tail + need > buf->size)) {
			if (overwrite &&
			    ktrace_free_room(buf, recs, tail, head, need))
				continue;	/* @tail moved: look again */
			local_add(lost + nr, &buf->lost_pending);
			local_add(nr, &buf->lost);
			goto out;
		}
		tsc = rdtsc();
		if (local_cmpxchg(&buf->head, head, head + need) == head)
			break;
	}

	tid = current->pid;
	idx = head;
	if (lost)
		ktrace_commit(&recs[idx++ & (buf->size - 1)], tsc,
			      KTRACE_META_LOST, 0, lower_32_bits(lost),
			      upper_32_bits(lost));

	ktrace_commit(&recs[idx++ & (buf->size - 1)], tsc, event, tid,
		      nr_args > 0 ? args[0] : 0, nr_args > 1 ? args[1] : 0);
	for (i = 1; i < nr; i++) {
		u32 code = KTRACE_EVT_CONT | ((i - 1) << KTRACE_SUB_SHIFT);

		if (i == nr - 1)
			code |= KTRACE_EVT_END;
		ktrace_commit(&recs[idx++ & (buf->size - 1)], tsc, code, tid,
			      args[2 * i], 2 * i + 1 < nr_args ? args[2 * i + 1] : 0);
	}
	local_add(nr, &buf->written);

	/*
	 * Only the writer of the last record of a wakeup window (its range
	 * crosses a multiple of the watermark) looks for a sleeping reader.
	 * The reader stores @reader_waiting, then loads that record's event
	 * code; we store the event code, then load @reader_waiting: without a
	 * full barrier on both sides each could miss the other's store and the
	 * reader would sleep on a published record.
	 */
	if (unlikely((head ^ (head + need)) & ~READ_ONCE(buf->wakeup_mask))) {
		/* Pairs with the smp_mb() in ktrace_buf_wait_ready(). */
		smp_mb();
		/*
		 * Cleared with cmpxchg(), not a plain store, which could land
		 * after the reader's next "I am waiting" and hide it.
		 */
		if (READ_ONCE(buf->reader_waiting) &&
		    cmpxchg(&buf->reader_waiting, 1, 0))
			irq_work_queue(&buf->wakeup_work);
	}
out:
	preempt_enable_notrace();
}

/**
 * ktrace_write - record an event with two arguments; use TRACE()
 * @event: event code, KTRACE_<group>_<name>
 * @arg1: first argument
 * @arg2: second argument
 */
void notrace ktrace_write(u32 event, u32 arg1, u32 arg2)
{
	const u32 args[2] = { arg1, arg2 };

	ktrace_reserve_write(event, args, 2, false);
}
EXPORT_SYMBOL_GPL(ktrace_write);

/**
 * ktrace_write_args - record an event with continuation records; use TRACE_ARGS()
 * @event: event code, KTRACE_<group>_<name>
 * @args: the arguments
 * @nr_args: how many, at most KTRACE_MAX_ARGS
 */
void notrace ktrace_write_args(u32 event, const u32 *args, unsigned int nr_args)
{
	if (WARN_ON_ONCE(nr_args > KTRACE_MAX_ARGS))
		nr_args = KTRACE_MAX_ARGS;
	ktrace_reserve_write(event, args, nr_args, false);
}
EXPORT_SYMBOL_GPL(ktrace_write_args);

/**
 * ktrace_write_probe - record a probe hit (probe.c)
 * @event: KTRACE_CODE(KTRACE_GRP_probe, id)
 * @args: the missing mask, then the value words
 * @nr_args: how many, at most 1 + KTRACE_PROBE_MAX_WORDS: more than
 *           TRACE_ARGS() allows, so not through ktrace_write_args()
 */
void notrace ktrace_write_probe(u32 event, const u32 *args, unsigned int nr_args)
{
	if (WARN_ON_ONCE(nr_args > 1 + KTRACE_PROBE_MAX_WORDS))
		nr_args = 1 + KTRACE_PROBE_MAX_WORDS;
	ktrace_reserve_write(event, args, nr_args, false);
}

static void notrace ktrace_write_name(struct task_struct *t, const char *comm,
				      bool any_mask)
{
	u32 args[2 + KTRACE_COMM_LEN / sizeof(u32)];
	char *name = (char *)&args[2];

	args[0] = task_pid_nr(t);
	args[1] = task_tgid_nr(t);
	strscpy_pad(name, comm, KTRACE_COMM_LEN);
	ktrace_reserve_write(KTRACE_thread_name, args, ARRAY_SIZE(args), any_mask);
}

/**
 * __ktrace_task_name - record a thread:name event; use ktrace_task_name()
 * @t: the task
 * @comm: its name: @t->comm, or the new name a rename is about to set
 *
 * @comm may change under us (another thread writing /proc/PID/comm): the
 * record then holds a mix of both names, as the kernel's own tracepoints
 * would; it is always terminated.
 */
void notrace __ktrace_task_name(struct task_struct *t, const char *comm)
{
	ktrace_write_name(t, comm, false);
}
EXPORT_SYMBOL_GPL(__ktrace_task_name);

/**
 * ktrace_name_tasks - record the name of every task
 *
 * Written while tracing is on, even if the mask leaves the thread group
 * out: a reader that attaches to boot-time tracing asks for the names of
 * what runs then.
 *
 * Return: the number of tasks named, 0 when tracing is off.
 */
int ktrace_name_tasks(void)
{
	struct task_struct *g, *t;
	int nr = 0;

	/*
	 * Pairs with smp_store_release() in ktrace_apply_mask(): a session's
	 * emptied buffers before its mask.
	 */
	if (!smp_load_acquire(&ktrace_group_mask))
		return 0;
	/*
	 * Tasks forked or renamed meanwhile are named by their own
	 * thread:name events; under RCU we see each thread at most once.
	 */
	rcu_read_lock();
	for_each_process_thread(g, t) {
		ktrace_write_name(t, t->comm, true);
		nr++;
	}
	rcu_read_unlock();
	return nr;
}

struct ktrace_buf *ktrace_cpu_buf(unsigned int cpu)
{
	return per_cpu_ptr(&ktrace_bufs, cpu);
}

bool ktrace_buf_empty(struct ktrace_buf *buf)
{
	struct ktrace_record *rec = &buf->recs[buf->tail & (buf->size - 1)];

	/* Pairs with smp_store_release() in ktrace_commit(). */
	return !smp_load_acquire(&rec->event);
}

/**
 * ktrace_buf_wait_ready - say the reader is about to sleep, then look again
 * @buf: a buffer this reader is attached to
 *
 * Return: true if the last record of the reader's wakeup window is
 * published (the reader must not sleep), false if the writer of that record
 * will wake the reader.
 */
bool ktrace_buf_wait_ready(struct ktrace_buf *buf)
{
	unsigned long last = buf->tail | READ_ONCE(buf->wakeup_mask);

	WRITE_ONCE(buf->reader_waiting, 1);
	/* Pairs with the smp_mb() in ktrace_reserve_write(). */
	smp_mb();
	/* Pairs with smp_store_release() in ktrace_commit(). */
	if (!smp_load_acquire(&buf->recs[last & (buf->size - 1)].event))
		return false;
	WRITE_ONCE(buf->reader_waiting, 0);
	return true;
}

/**
 * ktrace_buf_read - copy published records out and free their slots
 * @buf: a buffer this reader is attached to
 * @ubuf: user memory for @nr_max records
 * @nr_max: most records to copy, cut to KTRACE_READ_MAX
 *
 * Return: records copied, 0 if none is published yet, or -EFAULT.
 */
ssize_t ktrace_buf_read(struct ktrace_buf *buf, char __user *ubuf,
			size_t nr_max)
{
	unsigned long tail = buf->tail, mask = buf->size - 1;
	unsigned long nr, first, i, meta = 0;
	u32 event;

	/*
	 * A new reader starts at an event: continuation records at @tail are
	 * the rest of an event an earlier reader took (it read the event
	 * before they were published).  They count as read, as that event.
	 */
	while (unlikely(buf->skip_cont)) {
		/* Pairs with smp_store_release() in ktrace_commit(). */
		event = smp_load_acquire(&buf->recs[tail & mask].event);
		if (!event)
			break;
		if (!(event & KTRACE_EVT_CONT)) {
			buf->skip_cont = false;
			break;
		}
		WRITE_ONCE(buf->recs[tail & mask].event, 0);
		WRITE_ONCE(buf->read, buf->read + 1);
		tail++;
	}
	if (tail != buf->tail) {
		local_set(&buf->freeing, tail);
		/* Pairs with smp_load_acquire() in ktrace_reserve_write(). */
		smp_store_release(&buf->tail, tail);
	}

	nr_max = min3(nr_max, (size_t)buf->size, (size_t)KTRACE_READ_MAX);
	for (nr = 0; nr < nr_max; nr++) {
		/* Pairs with smp_store_release() in ktrace_commit(). */
		event = smp_load_acquire(&buf->recs[(tail + nr) & mask].event);
		if (!event)
			break;
		if (event == KTRACE_META_LOST)
			meta++;
	}
	if (!nr)
		return 0;

	first = min(nr, buf->size - (tail & mask));
	if (copy_to_user(ubuf, &buf->recs[tail & mask],
			 first * sizeof(struct ktrace_record)))
		return -EFAULT;
	if (copy_to_user(ubuf + first * sizeof(struct ktrace_record),
			 buf->recs, (nr - first) * sizeof(struct ktrace_record)))
		return -EFAULT;

	for (i = 0; i < nr; i++)
		WRITE_ONCE(buf->recs[(tail + i) & mask].event, 0);
	/* Like @written, @read counts event records, not lost markers. */
	WRITE_ONCE(buf->read, buf->read + nr - meta);
	/* No writer runs while we read in overwrite mode: no claim pending. */
	local_set(&buf->freeing, tail + nr);
	/* Hand the slots back: pairs with smp_load_acquire() in ktrace_reserve_write(). */
	smp_store_release(&buf->tail, tail + nr);
	return nr;
}

static void ktrace_wakeup(struct irq_work *work)
{
	struct ktrace_buf *buf = container_of(work, struct ktrace_buf, wakeup_work);

	wake_up_interruptible(&buf->wait);
}

static struct ktrace_record *
ktrace_recs_alloc(unsigned int records, unsigned int cpu)
{
	return kvzalloc_node(array_size(records, sizeof(struct ktrace_record)),
			     GFP_KERNEL | __GFP_RETRY_MAYFAIL | __GFP_NOWARN,
			     cpu_to_node(cpu));
}

/* Give @buf the empty ring @recs; returns the ring it had, for kvfree(). */
static struct ktrace_record *
ktrace_buf_install(struct ktrace_buf *buf, struct ktrace_record *recs,
		   unsigned int records)
{
	struct ktrace_record *old = buf->recs;

	buf->size = records;
	buf->wakeup_mask = records - 1;
	local_set(&buf->head, 0);
	local_set(&buf->lost_pending, 0);
	local_set(&buf->written, 0);
	local_set(&buf->lost, 0);
	local_set(&buf->freeing, 0);
	local_set(&buf->overwritten, 0);
	buf->tail = 0;
	buf->read = 0;
	buf->discarded = 0;
	buf->skip_cont = false;
	/* Publish the ring after its size: pairs with smp_load_acquire() in
	 * ktrace_reserve_write().
	 */
	smp_store_release(&buf->recs, recs);
	return old;
}

/* CPU hotplug: a CPU gets its buffer before it first runs; it keeps it when it goes. */
static int ktrace_cpu_prepare(unsigned int cpu)
{
	struct ktrace_buf *buf = per_cpu_ptr(&ktrace_bufs, cpu);
	struct ktrace_record *recs;

	if (buf->recs)
		return 0;
	recs = ktrace_recs_alloc(ktrace_buf_records, cpu);
	if (recs)
		ktrace_buf_install(buf, recs, ktrace_buf_records);
	else
		pr_warn("ktrace: no buffer for cpu %u, its events are counted as lost\n",
			cpu);
	return 0;
}

/* Whether any CPU's buffer has a reader; under ktrace_mutex. */
bool ktrace_reader_attached(void)
{
	unsigned int cpu;

	lockdep_assert_held(&ktrace_mutex);
	for_each_possible_cpu(cpu)
		if (atomic_read(&per_cpu_ptr(&ktrace_bufs, cpu)->reader))
			return true;
	return false;
}

/*
 * Set the mask; under cpus_read_lock() and ktrace_mutex.  Return: 0, or
 * -EBUSY to turn tracing on in overwrite mode while a reader is attached.
 */
static int ktrace_apply_mask(u32 mask)
{
	lockdep_assert_held(&ktrace_mutex);
	if (mask && ktrace_overwrite && ktrace_reader_attached())
		return -EBUSY;
	if (mask && !ktrace_group_mask) {
		/*
		 * What was done with tracing off before what turns it on.
		 * Pairs with smp_load_acquire() in ktrace_name_tasks(); a
		 * TRACE() site or a probe of the module reads the mask with
		 * READ_ONCE() and the buffer after it, in order on x86 (the
		 * one architecture ktrace builds for), and the static key's
		 * text_poke_sync() syncs every CPU as well.
		 */
		smp_store_release(&ktrace_group_mask, mask);
		static_branch_enable_cpuslocked(&ktrace_enabled);
	} else if (!mask && ktrace_group_mask) {
		static_branch_disable_cpuslocked(&ktrace_enabled);
		WRITE_ONCE(ktrace_group_mask, 0);
		/*
		 * Writers that saw the old mask are done and every record
		 * they reserved is published: a reader's last drain (or a
		 * snapshot) gets whole events, and a new session may empty
		 * the buffers.  Pairs with the preempt_disable_notrace()
		 * section of ktrace_reserve_write().
		 */
		synchronize_rcu();
	} else {
		WRITE_ONCE(ktrace_group_mask, mask);
	}
	return 0;
}

/*
 * Empty @buf of what an earlier session left and of its pending lost
 * count.  Tracing is off after a grace period (no writer, every reserved
 * record published) and no reader is attached: nobody else touches it.
 */
static void ktrace_buf_reset(struct ktrace_buf *buf)
{
	unsigned long head = local_read(&buf->head), mask = buf->size - 1, i;

	for (i = buf->tail; i != head; i++) {
		if (READ_ONCE(buf->recs[i & mask].event) != KTRACE_META_LOST)
			buf->discarded++;
		WRITE_ONCE(buf->recs[i & mask].event, 0);
	}
	local_set(&buf->lost_pending, 0);
	local_set(&buf->freeing, head);
	/* Pairs with smp_load_acquire() in ktrace_reserve_write(). */
	smp_store_release(&buf->tail, head);
}

/* Under cpus_read_lock() and ktrace_mutex, with no reader attached. */
static int ktrace_session_start(u32 mask, const void *file)
{
	struct ktrace_buf *buf;
	unsigned int cpu;

	ktrace_session.prev_mask = ktrace_group_mask;
	/* Already off: off since a grace period, that of turning it off. */
	ktrace_apply_mask(0);
	for_each_possible_cpu(cpu) {
		buf = per_cpu_ptr(&ktrace_bufs, cpu);
		if (buf->recs)
			ktrace_buf_reset(buf);
	}
	ktrace_session.owner = file;
	return ktrace_apply_mask(mask);
}

/**
 * ktrace_set_session_mask - choose the traced groups, 0 to turn tracing off
 * @mask: group bits
 * @session: KTRACE_MASK_SESSION: @file owns tracing (see the uapi header)
 * @file: the open file asking
 *
 * Return: 0, -EINVAL for bits that are not groups, or -EBUSY to turn
 * tracing on in overwrite mode while a reader is attached, or to start a
 * session while another file owns one or a reader is attached.
 */
int ktrace_set_session_mask(u32 mask, bool session, const void *file)
{
	struct ktrace_session *s = &ktrace_session;
	int ret;

	if (mask & ~KTRACE_GROUP_MASK)
		return -EINVAL;

	cpus_read_lock();
	mutex_lock(&ktrace_mutex);
	if (!session) {
		s->owner = NULL;
		ret = ktrace_apply_mask(mask);
	} else if (s->owner == file) {
		ret = ktrace_apply_mask(mask);
	} else if (s->owner || ktrace_reader_attached()) {
		ret = -EBUSY;
	} else {
		ret = ktrace_session_start(mask, file);
	}
	mutex_unlock(&ktrace_mutex);
	cpus_read_unlock();
	return ret;
}

/**
 * ktrace_set_mask - choose the traced groups, 0 to turn tracing off
 * @mask: group bits
 *
 * Ends a session, if a file owns one.
 *
 * Return: as ktrace_set_session_mask().
 */
int ktrace_set_mask(u32 mask)
{
	return ktrace_set_session_mask(mask, false, NULL);
}

/**
 * ktrace_session_release - @file is released: end its session, if it owns one
 * @file: the open file
 *
 * Tracing goes back to the mask it had before the session, in the normal
 * mode.  The mode changes with tracing off after a grace period, so no
 * writer sees it change, even while a reader of the dying owner is still
 * attached (its files are released one by one): the normal mode allows it.
 */
void ktrace_session_release(const void *file)
{
	struct ktrace_session *s = &ktrace_session;

	cpus_read_lock();
	mutex_lock(&ktrace_mutex);
	if (s->owner == file) {
		s->owner = NULL;
		ktrace_apply_mask(0);
		WRITE_ONCE(ktrace_overwrite, false);
		ktrace_apply_mask(s->prev_mask);
	}
	mutex_unlock(&ktrace_mutex);
	cpus_read_unlock();
}

/**
 * ktrace_set_overwrite - choose overwrite mode (a flight recorder) or not
 * @overwrite: true for overwrite mode
 *
 * Return: 0, or -EBUSY while tracing is on or a reader is attached.
 */
int ktrace_set_overwrite(bool overwrite)
{
	int ret = 0;

	mutex_lock(&ktrace_mutex);
	if (ktrace_group_mask || ktrace_reader_attached()) {
		ret = -EBUSY;
	} else if (overwrite != ktrace_overwrite) {
		/* Writers that saw the old mask, and the old mode, are done. */
		synchronize_rcu();
		WRITE_ONCE(ktrace_overwrite, overwrite);
	}
	mutex_unlock(&ktrace_mutex);
	return ret;
}

/**
 * ktrace_set_wakeup - set the wakeup watermark of an attached buffer
 * @buf: the buffer, its reader attached, under ktrace_mutex
 * @records: the watermark, a power of two, 1 to half the buffer
 *
 * A writer that still uses the old, larger watermark could skip the wakeup
 * that the reader expects from the new one; the grace period waits for
 * every writer that may have loaded it (writers run with preemption off).
 */
void ktrace_set_wakeup(struct ktrace_buf *buf, unsigned long records)
{
	lockdep_assert_held(&ktrace_mutex);
	if (records - 1 == buf->wakeup_mask)
		return;
	WRITE_ONCE(buf->wakeup_mask, records - 1);
	synchronize_rcu();
}

/**
 * ktrace_resize - give every CPU a new, empty buffer
 * @records: size in records, KTRACE_BUF_MIN to KTRACE_BUF_MAX, rounded up
 *           to a power of two
 *
 * Every new buffer is allocated before any old one is replaced, so a
 * failure leaves all buffers, and the records in them, as they were.
 *
 * Return: 0, -EINVAL for a bad size, -EBUSY while tracing is on or a reader
 * is attached, -ENOMEM when the buffers would not fit in the memory
 * available or an allocation fails, -EINTR on a fatal signal.
 */
int ktrace_resize(unsigned int records)
{
	struct ktrace_record **new;
	struct ktrace_buf *buf;
	unsigned long pages;
	unsigned int cpu;
	int ret = 0;

	if (records < KTRACE_BUF_MIN || records > KTRACE_BUF_MAX)
		return -EINVAL;
	records = roundup_pow_of_two(records);

	new = kcalloc(nr_cpu_ids, sizeof(*new), GFP_KERNEL);
	if (!new)
		return -ENOMEM;

	cpus_read_lock();
	mutex_lock(&ktrace_mutex);
	if (ktrace_group_mask) {
		ret = -EBUSY;
		goto out_unlock;
	}
	pages = 0;
	for_each_possible_cpu(cpu) {
		buf = per_cpu_ptr(&ktrace_bufs, cpu);
		if (atomic_read(&buf->reader)) {
			ret = -EBUSY;
			goto out_unlock;
		}
		if (buf->recs || cpu_online(cpu))
			pages += DIV_ROUND_UP(array_size(records, sizeof(**new)),
					      PAGE_SIZE);
	}
	/* Like ftrace: never take the memory the rest of the system needs. */
	if (pages > (unsigned long)si_mem_available()) {
		ret = -ENOMEM;
		goto out_unlock;
	}
	for_each_possible_cpu(cpu) {
		buf = per_cpu_ptr(&ktrace_bufs, cpu);
		if (!buf->recs && !cpu_online(cpu))
			continue;
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto out_unlock;
		}
		new[cpu] = ktrace_recs_alloc(records, cpu);
		if (!new[cpu]) {
			ret = -ENOMEM;
			goto out_unlock;
		}
	}
	/* Writers that saw the old mask are done after this. */
	synchronize_rcu();
	for_each_possible_cpu(cpu)
		if (new[cpu])
			new[cpu] = ktrace_buf_install(per_cpu_ptr(&ktrace_bufs, cpu),
						      new[cpu], records);
	ktrace_buf_records = records;
out_unlock:
	mutex_unlock(&ktrace_mutex);
	cpus_read_unlock();
	/* The old buffers after a swap, the new ones after a failure. */
	for_each_possible_cpu(cpu)
		kvfree(new[cpu]);
	kfree(new);
	return ret;
}

bool ktrace_tsc_invariant(void)
{
	return boot_cpu_has(X86_FEATURE_CONSTANT_TSC) &&
	       boot_cpu_has(X86_FEATURE_NONSTOP_TSC) && !check_tsc_unstable();
}

static int __init ktrace_init(void)
{
	struct ktrace_buf *buf;
	unsigned int cpu;
	int ret;

	ktrace_buf_records = clamp(ktrace_buf_records, KTRACE_BUF_MIN,
				   KTRACE_BUF_MAX);
	ktrace_buf_records = roundup_pow_of_two(ktrace_buf_records);

	for_each_possible_cpu(cpu) {
		buf = per_cpu_ptr(&ktrace_bufs, cpu);
		buf->cpu = cpu;
		atomic_set(&buf->reader, 0);
		init_irq_work(&buf->wakeup_work, ktrace_wakeup);
		init_waitqueue_head(&buf->wait);
	}

	ret = cpuhp_setup_state(CPUHP_BP_PREPARE_DYN, "ktrace:prepare",
				ktrace_cpu_prepare, NULL);
	if (ret < 0) {
		pr_err("ktrace: cannot register for CPU hotplug: %d\n", ret);
		return ret;
	}
	ktrace_cpuhp_state = ret;

	if (ktrace_boot_mask) {
		ret = ktrace_set_mask(ktrace_boot_mask);
		if (ret)
			pr_err("ktrace: bad ktrace.mask=%#x\n", ktrace_boot_mask);
	}
	return 0;
}

#ifdef MODULE
/* ktrace.ko: module.c calls these around its probes and the device. */
int __init ktrace_buffer_module_init(void)
{
	return ktrace_init();
}

/* Tracing is off and no probe runs any more (module.c). */
void ktrace_buffer_module_exit(void)
{
	struct ktrace_buf *buf;
	unsigned int cpu;

	cpuhp_remove_state_nocalls(ktrace_cpuhp_state);
	for_each_possible_cpu(cpu) {
		buf = per_cpu_ptr(&ktrace_bufs, cpu);
		irq_work_sync(&buf->wakeup_work);
		kvfree(buf->recs);
		buf->recs = NULL;
	}
}
#else
early_initcall(ktrace_init);
#endif
