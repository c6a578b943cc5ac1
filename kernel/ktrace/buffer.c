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
 * event, so the reader learns exactly how many records were lost and where.
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
#include <linux/percpu.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>
#include <asm/tsc.h>

#include "internal.h"

#undef MODULE_PARAM_PREFIX
#define MODULE_PARAM_PREFIX "ktrace."

/* Per-CPU buffer size at boot, in records: 24 bytes each, 1.5 MiB. */
#define KTRACE_BUF_DEFAULT	65536

DEFINE_STATIC_KEY_FALSE(ktrace_enabled);
EXPORT_SYMBOL_GPL(ktrace_enabled);

/* Groups being traced; 0 when tracing is off.  Changed under ktrace_mutex. */
u32 ktrace_group_mask __read_mostly;
EXPORT_SYMBOL_GPL(ktrace_group_mask);

/* Serializes mask changes, resizes and reader attach. Taken after cpus_read_lock(). */
DEFINE_MUTEX(ktrace_mutex);

unsigned int ktrace_buf_records = KTRACE_BUF_DEFAULT;
module_param_named(buf_size, ktrace_buf_records, uint, 0444);
MODULE_PARM_DESC(buf_size, "per-CPU buffer size in records");

static unsigned int ktrace_boot_mask;
module_param_named(mask, ktrace_boot_mask, uint, 0444);
MODULE_PARM_DESC(mask, "group mask to start tracing with at boot");

static DEFINE_PER_CPU(struct ktrace_buf, ktrace_bufs);

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

static __always_inline void ktrace_reserve_write(u32 event, const u32 *args,
						 unsigned int nr_args)
{
	unsigned long head, tail, need, lost, idx;
	unsigned int nr, i;
	struct ktrace_record *recs;
	struct ktrace_buf *buf;
	u32 tid;
	u64 tsc;

	nr = 1 + (nr_args > 2 ? DIV_ROUND_UP(nr_args - 2, 2) : 0);

	preempt_disable_notrace();
	/*
	 * Checked again with preemption off: ktrace_resize() clears the mask,
	 * then waits for a grace period before it frees any buffer.
	 */
	if (unlikely(!(READ_ONCE(ktrace_group_mask) & event)))
		goto out;

	buf = this_cpu_ptr(&ktrace_bufs);
	/* Pairs with smp_store_release() in ktrace_buf_alloc(). */
	recs = smp_load_acquire(&buf->recs);
	if (unlikely(!recs)) {
		local_add(nr, &buf->lost);
		goto out;
	}

	lost = local_xchg(&buf->lost_pending, 0);
	need = nr + (lost ? 1 : 0);
	do {
		head = local_read(&buf->head);
		/* Slots before @tail are free: pairs with smp_store_release() in
		 * ktrace_buf_read().
		 */
		tail = smp_load_acquire(&buf->tail);
		if (unlikely(head - tail + need > buf->size)) {
			local_add(lost + nr, &buf->lost_pending);
			local_add(nr, &buf->lost);
			goto out;
		}
		tsc = rdtsc();
	} while (local_cmpxchg(&buf->head, head, head + need) != head);

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
	 * No barrier between the publish above and this check: a reader that
	 * goes to sleep just now misses this record's wakeup and is woken by
	 * the next one, or by its read() timeout.  Pairs with the smp_mb() in
	 * ktrace_reader_wait_prepare().
	 */
	if (unlikely(READ_ONCE(buf->reader_waiting))) {
		WRITE_ONCE(buf->reader_waiting, false);
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

	ktrace_reserve_write(event, args, 2);
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
	ktrace_reserve_write(event, args, nr_args);
}
EXPORT_SYMBOL_GPL(ktrace_write_args);

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
 * ktrace_buf_read - copy published records out and free their slots
 * @buf: a buffer this reader is attached to
 * @ubuf: user memory for @nr_max records
 * @nr_max: most records to copy
 *
 * Return: records copied, 0 if none is published yet, or -EFAULT.
 */
ssize_t ktrace_buf_read(struct ktrace_buf *buf, char __user *ubuf,
			size_t nr_max)
{
	unsigned long tail = buf->tail, mask = buf->size - 1;
	unsigned long nr, first, i;

	nr_max = min_t(size_t, nr_max, buf->size);
	for (nr = 0; nr < nr_max; nr++) {
		/* Pairs with smp_store_release() in ktrace_commit(). */
		if (!smp_load_acquire(&buf->recs[(tail + nr) & mask].event))
			break;
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
	buf->read += nr;
	/* Hand the slots back: pairs with smp_load_acquire() in ktrace_reserve_write(). */
	smp_store_release(&buf->tail, tail + nr);
	return nr;
}

static void ktrace_wakeup(struct irq_work *work)
{
	struct ktrace_buf *buf = container_of(work, struct ktrace_buf, wakeup_work);

	wake_up_interruptible(&buf->wait);
}

static int ktrace_buf_alloc(struct ktrace_buf *buf, unsigned int records)
{
	struct ktrace_record *recs;

	recs = vzalloc(array_size(records, sizeof(*recs)));
	if (!recs)
		return -ENOMEM;

	vfree(buf->recs);
	buf->size = records;
	local_set(&buf->head, 0);
	local_set(&buf->lost_pending, 0);
	local_set(&buf->written, 0);
	local_set(&buf->lost, 0);
	buf->tail = 0;
	buf->read = 0;
	/* Publish the ring after its size: pairs with smp_load_acquire() in
	 * ktrace_reserve_write().
	 */
	smp_store_release(&buf->recs, recs);
	return 0;
}

/* CPU hotplug: a CPU gets its buffer before it first runs; it keeps it when it goes. */
static int ktrace_cpu_prepare(unsigned int cpu)
{
	struct ktrace_buf *buf = per_cpu_ptr(&ktrace_bufs, cpu);

	if (buf->recs)
		return 0;
	if (ktrace_buf_alloc(buf, ktrace_buf_records))
		pr_warn("ktrace: no buffer for cpu %u, its events are counted as lost\n",
			cpu);
	return 0;
}

/**
 * ktrace_set_mask - choose the traced groups, 0 to turn tracing off
 * @mask: group bits
 *
 * Return: 0, or -EINVAL for bits that are not groups.
 */
int ktrace_set_mask(u32 mask)
{
	if (mask & ~KTRACE_GROUP_MASK)
		return -EINVAL;

	cpus_read_lock();
	mutex_lock(&ktrace_mutex);
	if (mask && !ktrace_group_mask) {
		WRITE_ONCE(ktrace_group_mask, mask);
		static_branch_enable_cpuslocked(&ktrace_enabled);
	} else if (!mask && ktrace_group_mask) {
		static_branch_disable_cpuslocked(&ktrace_enabled);
		WRITE_ONCE(ktrace_group_mask, 0);
	} else {
		WRITE_ONCE(ktrace_group_mask, mask);
	}
	mutex_unlock(&ktrace_mutex);
	cpus_read_unlock();
	return 0;
}

/**
 * ktrace_resize - give every CPU a new, empty buffer
 * @records: size in records, KTRACE_BUF_MIN to KTRACE_BUF_MAX, rounded up
 *           to a power of two
 *
 * Return: 0, -EINVAL for a bad size, -EBUSY while tracing is on or a reader
 * is attached, or -ENOMEM (the old buffers are then kept as they were).
 */
int ktrace_resize(unsigned int records)
{
	struct ktrace_buf *buf;
	unsigned int cpu;
	int ret = 0;

	if (records < KTRACE_BUF_MIN || records > KTRACE_BUF_MAX)
		return -EINVAL;
	records = roundup_pow_of_two(records);

	cpus_read_lock();
	mutex_lock(&ktrace_mutex);
	if (ktrace_group_mask) {
		ret = -EBUSY;
		goto out_unlock;
	}
	for_each_possible_cpu(cpu) {
		if (atomic_read(&per_cpu_ptr(&ktrace_bufs, cpu)->reader)) {
			ret = -EBUSY;
			goto out_unlock;
		}
	}
	/* Writers that saw the old mask are done after this. */
	synchronize_rcu();
	for_each_possible_cpu(cpu) {
		buf = per_cpu_ptr(&ktrace_bufs, cpu);
		if (!buf->recs && !cpu_online(cpu))
			continue;
		ret = ktrace_buf_alloc(buf, records);
		if (ret)
			goto out_unlock;
	}
	ktrace_buf_records = records;
out_unlock:
	mutex_unlock(&ktrace_mutex);
	cpus_read_unlock();
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

	if (ktrace_boot_mask) {
		ret = ktrace_set_mask(ktrace_boot_mask);
		if (ret)
			pr_err("ktrace: bad ktrace.mask=%#x\n", ktrace_boot_mask);
	}
	return 0;
}
early_initcall(ktrace_init);
