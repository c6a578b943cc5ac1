/* SPDX-License-Identifier: GPL-2.0 WITH Linux-syscall-note */
/*
 * ktrace: low-overhead kernel event tracing, user-space ABI.
 *
 * This header is the one definition of the ktrace record, the event codes
 * and the /dev/ktrace ioctls.  The kernel, the ktrace/dtrace tools, the
 * user-space library and the tests all include it; nothing here is defined
 * anywhere else.
 *
 * Record (24 bytes, naturally aligned, host byte order):
 *
 *   0      8        12     16     20     24
 *   +------+--------+------+------+------+
 *   | tsc  | event  | tid  | arg1 | arg2 |
 *   +------+--------+------+------+------+
 *
 * Event code (32 bits):
 *
 *   31      24 23  22  21                  0
 *   +---------+---+----+--------------------+
 *   | subevent|END|CONT| group bits (22)    |
 *   +---------+---+----+--------------------+
 *
 * An ordinary event has exactly one group bit set, so the group mask is
 * tested with one AND.  A CONT record carries two more arguments for the
 * event immediately before it in the same CPU (or thread) stream; its
 * subevent field is its index in the chain (0, 1, ...) and the last CONT
 * record of a chain also has END set.  A record with neither a group bit nor
 * CONT is a meta record written by the tracer itself (lost records).
 *
 * Tools get the names and print formats of the groups and events from the
 * table in <linux/ktrace_events.h>.
 */
#ifndef _UAPI_LINUX_KTRACE_H
#define _UAPI_LINUX_KTRACE_H

#include <linux/ioctl.h>
#include <linux/types.h>

/**
 * struct ktrace_record - one trace record
 * @tsc:   raw time stamp counter of the CPU that wrote the record
 * @event: event code: group bit, flags and subevent, see KTRACE_EVT_*
 * @tid:   thread id (the kernel's pid) of the task that was current, 0 for
 *         the idle task and for meta records
 * @arg1:  first argument, meaning given by the event table
 * @arg2:  second argument
 */
struct ktrace_record {
	__u64 tsc;
	__u32 event;
	__u32 tid;
	__u32 arg1;
	__u32 arg2;
};

#define KTRACE_NR_GROUPS	22
#define KTRACE_GROUP_MASK	((1U << KTRACE_NR_GROUPS) - 1)
#define KTRACE_EVT_CONT		(1U << 22)
#define KTRACE_EVT_END		(1U << 23)
#define KTRACE_SUB_SHIFT	24
#define KTRACE_SUB(code)	((__u32)(code) >> KTRACE_SUB_SHIFT)

/* The groups: one bit each.  Bits 19-21 are free for new groups. */
#define KTRACE_GRP_sched	(1U << 0)
#define KTRACE_GRP_thread	(1U << 1)
#define KTRACE_GRP_fault	(1U << 2)
#define KTRACE_GRP_irq		(1U << 3)
#define KTRACE_GRP_softirq	(1U << 4)
#define KTRACE_GRP_syscall	(1U << 5)
#define KTRACE_GRP_net		(1U << 6)
#define KTRACE_GRP_block	(1U << 7)
#define KTRACE_GRP_fs		(1U << 8)
#define KTRACE_GRP_signal	(1U << 9)
#define KTRACE_GRP_timer	(1U << 10)
#define KTRACE_GRP_user		(1U << 11)
#define KTRACE_GRP_func		(1U << 12)
#define KTRACE_GRP_mm		(1U << 13)
#define KTRACE_GRP_ipc		(1U << 14)
#define KTRACE_GRP_lock		(1U << 15)
#define KTRACE_GRP_power	(1U << 16)
#define KTRACE_GRP_workqueue	(1U << 17)
#define KTRACE_GRP_probe	(1U << 18)

#define KTRACE_CODE(group, sub)	((group) | ((__u32)(sub) << KTRACE_SUB_SHIFT))

/*
 * The events.  Subevent 0 is never used, so every event code has a bit of
 * the subevent field or a group bit set and a zero code means "no record".
 * Names and print formats are in <linux/ktrace_events.h>.
 */
#define KTRACE_sched_switch	KTRACE_CODE(KTRACE_GRP_sched, 1)
#define KTRACE_sched_wakeup	KTRACE_CODE(KTRACE_GRP_sched, 2)
#define KTRACE_sched_migrate	KTRACE_CODE(KTRACE_GRP_sched, 3)
#define KTRACE_thread_fork	KTRACE_CODE(KTRACE_GRP_thread, 1)
#define KTRACE_thread_exec	KTRACE_CODE(KTRACE_GRP_thread, 2)
#define KTRACE_thread_exit	KTRACE_CODE(KTRACE_GRP_thread, 3)
#define KTRACE_thread_name	KTRACE_CODE(KTRACE_GRP_thread, 4)
#define KTRACE_fault_page	KTRACE_CODE(KTRACE_GRP_fault, 1)
#define KTRACE_fault_trap	KTRACE_CODE(KTRACE_GRP_fault, 2)
#define KTRACE_irq_entry	KTRACE_CODE(KTRACE_GRP_irq, 1)
#define KTRACE_irq_exit		KTRACE_CODE(KTRACE_GRP_irq, 2)
#define KTRACE_irq_nmi		KTRACE_CODE(KTRACE_GRP_irq, 3)
#define KTRACE_softirq_entry	KTRACE_CODE(KTRACE_GRP_softirq, 1)
#define KTRACE_softirq_exit	KTRACE_CODE(KTRACE_GRP_softirq, 2)
#define KTRACE_softirq_raise	KTRACE_CODE(KTRACE_GRP_softirq, 3)
#define KTRACE_syscall_entry	KTRACE_CODE(KTRACE_GRP_syscall, 1)
#define KTRACE_syscall_exit	KTRACE_CODE(KTRACE_GRP_syscall, 2)
#define KTRACE_net_xmit		KTRACE_CODE(KTRACE_GRP_net, 1)
#define KTRACE_net_recv		KTRACE_CODE(KTRACE_GRP_net, 2)
#define KTRACE_block_issue	KTRACE_CODE(KTRACE_GRP_block, 1)
#define KTRACE_block_complete	KTRACE_CODE(KTRACE_GRP_block, 2)
#define KTRACE_signal_deliver	KTRACE_CODE(KTRACE_GRP_signal, 1)
#define KTRACE_timer_expire	KTRACE_CODE(KTRACE_GRP_timer, 1)
#define KTRACE_user_mark	KTRACE_CODE(KTRACE_GRP_user, 1)
#define KTRACE_func_entry	KTRACE_CODE(KTRACE_GRP_func, 1)
#define KTRACE_func_exit	KTRACE_CODE(KTRACE_GRP_func, 2)
#define KTRACE_func_enter	KTRACE_CODE(KTRACE_GRP_func, 3)
#define KTRACE_func_leave	KTRACE_CODE(KTRACE_GRP_func, 4)

/*
 * KTRACE_thread_name names a task: arg1 its thread id, arg2 its process id
 * (tgid), then its name (comm), KTRACE_COMM_LEN bytes padded with NULs, in
 * two CONT records: at fork (the child's name), at every change of a name
 * (exec, prctl(PR_SET_NAME), /proc/PID/comm), at exit (a flight snapshot
 * that kept a task's last events but not its fork still names it), and
 * for every task when asked by KTRACE_IOC_NAME_TASKS (then whatever the
 * mask).
 */
#define KTRACE_COMM_LEN		16

/* Flags of KTRACE_fault_page. */
#define KTRACE_FAULT_USER	(1U << 0)	/* fault in user mode */
#define KTRACE_FAULT_WRITE	(1U << 1)	/* write access */

/*
 * Meta records (no group bit, no CONT): written by the tracer, never by a
 * TRACE site.  KTRACE_META_LOST says that arg1 | (u64)arg2 << 32 records of
 * this stream were dropped, because its buffer was full, just before here.
 */
#define KTRACE_META_LOST	(1U << KTRACE_SUB_SHIFT)

/* Largest and smallest per-CPU buffer, in records. */
#define KTRACE_BUF_MIN		16
#define KTRACE_BUF_MAX		(1U << 24)

/* Most records one read() returns (it copies them without rescheduling). */
#define KTRACE_READ_MAX		16384

/**
 * struct ktrace_info - KTRACE_IOC_INFO
 * @version:     ABI version, KTRACE_ABI_VERSION
 * @record_size: sizeof(struct ktrace_record)
 * @nr_cpu_ids:  CPU numbers are below this
 * @flags:       KTRACE_INFO_*
 * @tsc_khz:     TSC frequency the kernel calibrated
 * @mask:        current group mask, 0 when tracing is off
 * @buf_records: per-CPU buffer size in records
 * @probe_missing: probe values that could not be fetched (a user read that
 *               found no page, see KTRACE_IOC_PROBE_ADD), since boot or
 *               since the module was loaded
 * @reserved:    zero
 */
struct ktrace_info {
	__u32 version;
	__u32 record_size;
	__u32 nr_cpu_ids;
	__u32 flags;
	__u64 tsc_khz;
	__u32 mask;
	__u32 buf_records;
	__u64 probe_missing;
	__u64 reserved[3];
};

#define KTRACE_ABI_VERSION		1
#define KTRACE_INFO_TSC_INVARIANT	(1U << 0)
#define KTRACE_INFO_OVERWRITE		(1U << 1)	/* KTRACE_MODE_OVERWRITE is set */

/**
 * struct ktrace_mask - KTRACE_IOC_SET_MASK
 * @mask:  groups to trace, bits 0-21; 0 turns tracing off
 * @flags: KTRACE_MASK_SESSION or 0
 *
 * KTRACE_MASK_SESSION: this open file owns tracing (a session).  The call
 * that starts a session turns tracing off, waits until no writer is left
 * inside the buffers, and empties every buffer: the records left in them
 * (counted in ktrace_cpu_stats.discarded) and the drops no lost record
 * told of yet; then it sets @mask.  So a session's records start at an
 * event, after nothing of an earlier one.  It fails with -EBUSY while
 * another file owns a session or a reader is attached.  The owner's later
 * calls with the flag only set the mask.  When the owner is released
 * (closed for the last time, or its process killed) the session ends:
 * tracing goes back to the mask it had before the session started, in the
 * normal mode.  A call without the flag, from any file, also ends the
 * session: the mask it sets stays.
 */
struct ktrace_mask {
	__u32 mask;
	__u32 flags;
};

#define KTRACE_MASK_SESSION	(1U << 0)

/**
 * struct ktrace_cpu_stats - KTRACE_IOC_CPU_STATS
 * @cpu:         in: the CPU to report on
 * @flags:       in: must be zero; out: KTRACE_CPU_*
 * @written:     records of events written since the buffer was allocated
 *               (lost markers are not counted)
 * @lost:        records of events dropped because the buffer was full, or
 *               because this CPU has no buffer
 * @read:        records of events handed to readers (lost markers are not
 *               counted), so @read <= @written
 * @buf_records: size of this CPU's buffer in records, 0 if it has none
 * @pad:         in: must be zero; out: zero
 * @overwritten: in: must be zero; out: records of events that overwrite
 *               mode (KTRACE_IOC_SET_MODE) freed to make room for newer
 *               ones
 * @discarded:   in: must be zero; out: records of events a new session
 *               (KTRACE_MASK_SESSION) found left in the buffer and emptied,
 *               so @written = @read + @overwritten + @discarded + the
 *               records of events in the buffer
 */
struct ktrace_cpu_stats {
	__u32 cpu;
	__u32 flags;
	__u64 written;
	__u64 lost;
	__u64 read;
	__u32 buf_records;
	__u32 pad;
	__u64 overwritten;
	__u64 discarded;
};

#define KTRACE_CPU_ONLINE	(1U << 0)
#define KTRACE_CPU_READER	(1U << 1)

/**
 * struct ktrace_buf_size - KTRACE_IOC_SET_BUF_SIZE
 * @records:  new per-CPU buffer size in records, rounded up to a power of
 *            two, KTRACE_BUF_MIN to KTRACE_BUF_MAX; only while tracing is off
 * @reserved: must be zero
 */
struct ktrace_buf_size {
	__u32 records;
	__u32 reserved;
};

/**
 * struct ktrace_attach - KTRACE_IOC_ATTACH_CPU
 * @cpu:      the CPU whose records read() on this file returns; one reader
 *            per CPU, a second gets -EBUSY.  The wakeup watermark starts
 *            at 1 record.  The first record read is an event or a lost
 *            record: continuation records at the front of the buffer,
 *            the rest of an event an earlier reader took, are skipped
 *            (counted in ktrace_cpu_stats.read).
 * @reserved: must be zero
 */
struct ktrace_attach {
	__u32 cpu;
	__u32 reserved;
};

/**
 * struct ktrace_wakeup - KTRACE_IOC_SET_WAKEUP, on an attached file
 * @records:  the wakeup watermark: 1 to half the buffer, rounded up to a
 *            power of two.  poll() reports the file readable, and a
 *            blocking read() with nothing to return sleeps, until the
 *            record at the next multiple of @records in the CPU's stream is
 *            published: at most @records records after the oldest unread
 *            one.  Fewer records than that may wait unreported: poll with
 *            a timeout and read with O_NONBLOCK to collect them.
 * @reserved: must be zero
 */
struct ktrace_wakeup {
	__u32 records;
	__u32 reserved;
};

/**
 * struct ktrace_name_tasks - KTRACE_IOC_NAME_TASKS
 * @flags:    must be zero
 * @reserved: must be zero
 *
 * Writes a KTRACE_thread_name record for every task that exists, into the
 * calling CPU's buffer, while tracing is on even if the mask leaves the
 * thread group out: what a trace needs to name the tasks that were there
 * before it started.  Returns the number of tasks named, 0 when tracing
 * is off (nothing is written then).
 */
struct ktrace_name_tasks {
	__u32 flags;
	__u32 reserved;
};

/**
 * struct ktrace_mode - KTRACE_IOC_SET_MODE
 * @flags:    KTRACE_MODE_*; 0 is the normal mode
 * @reserved: must be zero
 *
 * KTRACE_MODE_OVERWRITE makes every CPU's buffer a flight recorder: a
 * writer that finds its buffer full frees the oldest whole events to make
 * room, counting their records in ktrace_cpu_stats.overwritten, so the
 * buffer always holds the newest events.  It drops its own event (counted
 * as lost) only when the oldest record belongs to a writer it interrupted
 * that has not finished writing, or a writer it interrupted is freeing.
 * In this mode a reader may attach only while tracing is off (-EBUSY),
 * through a file opened with CAP_SYS_ADMIN (-EPERM), and tracing cannot be
 * turned on while one is attached (-EBUSY): a snapshot turns tracing off,
 * reads each CPU's buffer, detaches and turns tracing on, and a reader
 * that could not also turn tracing on again must not hold it off.
 * The mode changes only while tracing is off and no reader is attached
 * (-EBUSY); the buffers keep their records.
 */
struct ktrace_mode {
	__u32 flags;
	__u32 reserved;
};

#define KTRACE_MODE_OVERWRITE	(1U << 0)

/*
 * Probes: uprobes on user programs (KTRACE_IOC_PROBE_ADD).  A hit writes
 * one record KTRACE_CODE(KTRACE_GRP_probe, id), id 1..KTRACE_PROBE_MAX_ID,
 * on the CPU it happened on, through the same buffers and clock as every
 * other event, if the mask has KTRACE_GRP_probe.  arg1 is the missing
 * mask: bit i set when value i could not be fetched (its words are then
 * zero).  arg2 and then two words a CONT record are the values in the
 * order of the program's EMIT and STR ops: a 1, 2 or 4-byte value is one
 * word (sign-extended when the DEREF that loaded it was signed), an 8-byte
 * value two words, low first, a string of up to N bytes N/4 words rounded
 * up, NUL-padded.  A hit with no value is the record alone (arg2 zero).
 * The names, types and the function of each id are not in the record:
 * ktrace saves them with the trace (BASE.probes,
 * Documentation/trace/ktrace-probes.rst).
 */
#define KTRACE_PROBE_MAX_ID	255	/* ids are subevents: 8 bits, never 0 */
#define KTRACE_PROBE_MAX_OPS	64	/* ops in one fetch program */
#define KTRACE_PROBE_MAX_DEREFS	16	/* DEREF and STR ops in one program */
#define KTRACE_PROBE_MAX_VALUES	16	/* EMIT and STR ops in one program */
#define KTRACE_PROBE_MAX_WORDS	32	/* value words of one hit */
#define KTRACE_PROBE_MAX_STR	64	/* bytes of one STR */
#define KTRACE_PROBE_MAX_PIDS	64

/**
 * struct ktrace_probe_op - one step of a fetch program
 * @op:    KTRACE_OP_*
 * @size:  DEREF: bytes to load, 1, 2, 4 or 8; EMIT: bytes of the
 *         accumulator to record, 1, 2, 4 or 8; STR: the most bytes to copy,
 *         1..KTRACE_PROBE_MAX_STR; otherwise zero
 * @flags: DEREF: KTRACE_OP_SIGNED or 0; otherwise zero
 * @reg:   REG: the register, DWARF x86-64 numbering (0 rax, 1 rdx, 2 rcx,
 *         3 rbx, 4 rsi, 5 rdi, 6 rbp, 7 rsp, 8-15 r8-r15, 16 the return
 *         address column: rip); otherwise zero
 * @imm:   ADD: the signed offset; otherwise zero
 *
 * A program runs on one 64-bit accumulator, zero at the start:
 *   REG    acc = the register's value at the probed instruction
 *   CFA    acc = the canonical frame address at a function's first
 *          instruction: rsp + 8 (entry probes only)
 *   ADD    acc += imm
 *   DEREF  acc = size bytes of user memory at acc
 *   EMIT   record acc as the next value
 *   STR    record the NUL-terminated string at acc as the next value
 * A DEREF or STR that faults records the value as missing and skips to
 * the op after the next EMIT or STR: it never sleeps, never retries.
 */
struct ktrace_probe_op {
	__u8 op;
	__u8 size;
	__u8 flags;
	__u8 reg;
	__s32 imm;
};

#define KTRACE_OP_REG		1
#define KTRACE_OP_CFA		2
#define KTRACE_OP_ADD		3
#define KTRACE_OP_DEREF		4
#define KTRACE_OP_EMIT		5
#define KTRACE_OP_STR		6
#define KTRACE_OP_SIGNED	(1U << 0)
#define KTRACE_REG_MAX		16

/**
 * struct ktrace_probe - KTRACE_IOC_PROBE_ADD
 * @fd:       in: an open file of the binary (O_RDONLY or O_PATH)
 * @flags:    in: KTRACE_PROBE_*
 * @offset:   in: file offset of the instruction to probe (the function's
 *            first instruction for a return probe)
 * @ops:      in: user pointer to @nr_ops struct ktrace_probe_op
 * @nr_ops:   in: 0..KTRACE_PROBE_MAX_OPS
 * @nr_pids:  in: 0 (every process) or up to KTRACE_PROBE_MAX_PIDS
 * @pids:     in: user pointer to @nr_pids __s32 process ids (tgids)
 * @id:       out: the probe's id, the subevent of its records
 * @reserved: must be zero
 *
 * Needs CAP_SYS_ADMIN; refused under lockdown like the rest of the device.
 * The program is checked before anything is registered: an unknown op,
 * size, flag or register, a nonzero unused field, too many ops, derefs,
 * values or words, an EMIT or STR missing after the last load, CFA in a
 * return probe, KTRACE_PROBE_CHILDREN without pids: -EINVAL.  A pid that
 * names no process: -ESRCH.  No free id: -ENOSPC.  The probe lives until
 * KTRACE_IOC_PROBE_DEL, or until the file that added it is released
 * (closed for the last time, or its process killed), or the module is
 * unloaded; after any of them no hit of it is written and no breakpoint
 * of it is left in any process.
 */
struct ktrace_probe {
	__s32 fd;
	__u32 flags;
	__u64 offset;
	__u64 ops;
	__u32 nr_ops;
	__u32 nr_pids;
	__u64 pids;
	__u32 id;
	__u32 reserved[5];
};

#define KTRACE_PROBE_RETURN	(1U << 0)	/* fire when the function returns */
#define KTRACE_PROBE_CHILDREN	(1U << 1)	/* and in the descendants of @pids */

/**
 * struct ktrace_probe_del - KTRACE_IOC_PROBE_DEL
 * @id:       a probe this file added; another file's: -EPERM; none: -ENOENT
 * @reserved: must be zero
 */
struct ktrace_probe_del {
	__u32 id;
	__u32 reserved;
};

#define KTRACE_IOC_MAGIC	0xbb	/* Documentation/userspace-api/ioctl/ioctl-number.rst */
#define KTRACE_IOC_INFO		_IOR(KTRACE_IOC_MAGIC, 0, struct ktrace_info)
#define KTRACE_IOC_SET_MASK	_IOW(KTRACE_IOC_MAGIC, 1, struct ktrace_mask)
#define KTRACE_IOC_CPU_STATS	_IOWR(KTRACE_IOC_MAGIC, 2, struct ktrace_cpu_stats)
#define KTRACE_IOC_SET_BUF_SIZE	_IOW(KTRACE_IOC_MAGIC, 3, struct ktrace_buf_size)
#define KTRACE_IOC_ATTACH_CPU	_IOW(KTRACE_IOC_MAGIC, 4, struct ktrace_attach)
#define KTRACE_IOC_SET_WAKEUP	_IOW(KTRACE_IOC_MAGIC, 5, struct ktrace_wakeup)
#define KTRACE_IOC_NAME_TASKS	_IOW(KTRACE_IOC_MAGIC, 6, struct ktrace_name_tasks)
#define KTRACE_IOC_SET_MODE	_IOW(KTRACE_IOC_MAGIC, 7, struct ktrace_mode)
#define KTRACE_IOC_PROBE_ADD	_IOWR(KTRACE_IOC_MAGIC, 8, struct ktrace_probe)
#define KTRACE_IOC_PROBE_DEL	_IOW(KTRACE_IOC_MAGIC, 9, struct ktrace_probe_del)

#endif /* _UAPI_LINUX_KTRACE_H */
