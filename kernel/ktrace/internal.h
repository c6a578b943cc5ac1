/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrace: what the buffer code (buffer.c) offers the device (dev.c).
 */
#ifndef _KERNEL_KTRACE_INTERNAL_H
#define _KERNEL_KTRACE_INTERNAL_H

#include <linux/cache.h>
#include <linux/irq_work.h>
#include <linux/ktrace.h>
#include <asm/local.h>
#include <linux/mutex.h>
#include <linux/wait.h>

/*
 * struct ktrace_buf - one CPU's ring of records
 *
 * Lifetime: allocated when its CPU first comes online (or at boot), freed
 * only by a resize; a CPU that goes offline keeps its buffer so its records
 * can still be read.
 *
 * Locking: none on the write side.  @head, @lost_pending, @written and
 * @lost are changed only by writers on the owning CPU (task, softirq,
 * hardirq and NMI context nesting on each other) with local_t operations.
 * @tail and @read are changed only by the one attached reader (@reader
 * set), on any CPU; they sit on a cache line of their own so that the
 * reader does not take the writers' line away on every read.
 * @skip_cont is set at attach and cleared by the reader once it finds an
 * event at @tail; @discarded is changed only by a new session, with
 * tracing off and no reader attached (ktrace_session_start()).
 * @reader_waiting is set by the reader and cleared by the writer that
 * wakes it.  @wakeup_mask is set under ktrace_mutex, then a grace period
 * passes before the reader relies on it (see ktrace_set_wakeup()).
 * @recs and @size change only under ktrace_mutex with tracing off and no
 * reader attached.
 *
 * Overwrite mode (ktrace_overwrite) is the other way round: no reader is
 * attached while tracing is on, and the writers themselves move @tail
 * forward, past whole old events, to make room.  @freeing is then their
 * claim on the records they free: equal to @tail when no writer frees,
 * else where that writer will move @tail once it has zeroed the event
 * codes (see ktrace_free_room()).  @overwritten counts the event records
 * freed that way.
 */
struct ktrace_buf {
	/* the writers' cache line */
	struct ktrace_record	*recs;
	unsigned long		size;		/* records, a power of two */
	unsigned long		wakeup_mask;	/* wakeup window - 1, see buffer.c */
	local_t			head;		/* next record to reserve */
	local_t			lost_pending;	/* dropped, not yet marked */
	local_t			written;	/* event records committed */
	local_t			lost;		/* event records dropped */
	local_t			freeing;	/* overwrite: @tail once freed */
	local_t			overwritten;	/* overwrite: event records freed */
	int			cpu;

	/* the reader's cache line */
	unsigned long		tail ____cacheline_aligned_in_smp;
	u64			read;		/* event records handed out */
	u64			discarded;	/* left over, emptied by a new session */
	bool			skip_cont;	/* a new reader: skip to an event */
	int			reader_waiting;	/* reader sleeps in read/poll */
	atomic_t		reader;		/* 1 while a file reads us */
	struct irq_work		wakeup_work;
	wait_queue_head_t	wait;
};

extern struct mutex ktrace_mutex;
extern unsigned int ktrace_buf_records;
extern bool ktrace_overwrite;

struct ktrace_buf *ktrace_cpu_buf(unsigned int cpu);
bool ktrace_buf_empty(struct ktrace_buf *buf);
bool ktrace_buf_wait_ready(struct ktrace_buf *buf);
ssize_t ktrace_buf_read(struct ktrace_buf *buf, char __user *ubuf,
			size_t nr_max);
void ktrace_set_wakeup(struct ktrace_buf *buf, unsigned long records);
int ktrace_set_mask(u32 mask);
int ktrace_set_session_mask(u32 mask, bool session, const void *file);
void ktrace_session_release(const void *file);
int ktrace_set_overwrite(bool overwrite);
bool ktrace_reader_attached(void);
int ktrace_name_tasks(void);
int ktrace_resize(unsigned int records);
bool ktrace_tsc_invariant(void);
void ktrace_write_probe(u32 event, const u32 *args, unsigned int nr_args);

/* Probes (probe.c): uprobes on user programs, KTRACE_IOC_PROBE_ADD/DEL. */
#ifdef CONFIG_KTRACE_PROBES
long ktrace_probe_add(const void *owner, void __user *uarg);
long ktrace_probe_del(const void *owner, void __user *uarg);
void ktrace_probe_release(const void *owner);
u64 ktrace_probe_missing(void);
#else
static inline long ktrace_probe_add(const void *owner, void __user *uarg)
{
	return -EOPNOTSUPP;	/* a kernel without uprobes */
}

static inline long ktrace_probe_del(const void *owner, void __user *uarg)
{
	return -EOPNOTSUPP;
}

static inline void ktrace_probe_release(const void *owner) { }
static inline u64 ktrace_probe_missing(void) { return 0; }
#endif

/* The module build only (module.c): buffer.c's and dev.c's initcalls. */
int ktrace_buffer_module_init(void);
void ktrace_buffer_module_exit(void);
int ktrace_dev_module_init(void);
void ktrace_dev_module_exit(void);

#endif /* _KERNEL_KTRACE_INTERNAL_H */
