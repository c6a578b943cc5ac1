/* SPDX-License-Identifier: GPL-2.0 */
/*
 * ktrace: low-overhead kernel event tracing, in-kernel API.
 *
 * A trace site is one line:
 *
 *	TRACE(KTRACE_sched_switch, prev->pid, next->pid);
 *
 * With CONFIG_KTRACE=n it compiles to nothing.  With it built in and tracing
 * off it is a static-key NOP.  With tracing on it tests the event's group
 * against the group mask with one AND and writes a 24-byte record into this
 * CPU's buffer, without locks, from any context including NMI.
 *
 * TRACE_ARGS() records up to KTRACE_MAX_ARGS 32-bit arguments through
 * continuation records; TRACE64() records two 32-bit values and a 64-bit one.
 * Events and groups are defined once, in <uapi/linux/ktrace.h>.
 */
#ifndef _LINUX_KTRACE_H
#define _LINUX_KTRACE_H

#include <uapi/linux/ktrace.h>

/* One event and its continuation records never exceed this many args. */
#define KTRACE_MAX_ARGS		8

#ifdef CONFIG_KTRACE

#include <linux/compiler.h>
#include <linux/jump_label.h>
#include <linux/kernel.h>
#include <linux/types.h>

DECLARE_STATIC_KEY_FALSE(ktrace_enabled);
extern u32 ktrace_group_mask;

void ktrace_write(u32 event, u32 arg1, u32 arg2);
void ktrace_write_args(u32 event, const u32 *args, unsigned int nr_args);

struct task_struct;
void __ktrace_task_name(struct task_struct *t, const char *comm);

static __always_inline bool ktrace_on(u32 event)
{
	return static_branch_unlikely(&ktrace_enabled) &&
	       (READ_ONCE(ktrace_group_mask) & event);
}

/* Record the name @comm of @t: a thread:name event, as TRACE() would. */
static __always_inline void ktrace_task_name(struct task_struct *t,
					     const char *comm)
{
	if (ktrace_on(KTRACE_thread_name))
		__ktrace_task_name(t, comm);
}

#define TRACE(event, arg1, arg2)					\
do {									\
	const u32 __kt_event = (event);					\
									\
	if (ktrace_on(__kt_event))					\
		ktrace_write(__kt_event, (u32)(arg1), (u32)(arg2));	\
} while (0)

#define TRACE_ARGS(event, ...)						\
do {									\
	const u32 __kt_event = (event);					\
									\
	if (ktrace_on(__kt_event)) {					\
		const u32 __kt_args[] = { __VA_ARGS__ };		\
									\
		BUILD_BUG_ON(ARRAY_SIZE(__kt_args) > KTRACE_MAX_ARGS);	\
		ktrace_write_args(__kt_event, __kt_args,		\
				  ARRAY_SIZE(__kt_args));		\
	}								\
} while (0)

/* @val64 too is evaluated only while the event is traced. */
#define TRACE64(event, arg1, arg2, val64)				\
do {									\
	const u32 __kt_event = (event);					\
									\
	if (ktrace_on(__kt_event)) {					\
		const u64 __kt_val64 = (val64);				\
		const u32 __kt_args[] = { (u32)(arg1), (u32)(arg2),	\
					  lower_32_bits(__kt_val64),	\
					  upper_32_bits(__kt_val64) };	\
									\
		ktrace_write_args(__kt_event, __kt_args,		\
				  ARRAY_SIZE(__kt_args));		\
	}								\
} while (0)

/*
 * What a context switch records of the task that stops running: its state
 * as the kernel's sched_switch tracepoint reports it (ftrace's prev_state):
 * 0 (running), one TASK_REPORT bit, or TASK_REPORT_MAX when it was
 * preempted.  A macro: only the sites in __schedule() and the module's
 * sched_switch probe use it, and they have <linux/sched.h>.
 */
#define ktrace_switch_state(preempt, prev_state, prev)			\
	((preempt) ? TASK_REPORT_MAX :					\
	 ({ unsigned int __kt_i = __task_state_index((prev_state),	\
						     (prev)->exit_state); \
	    __kt_i ? 1U << (__kt_i - 1) : 0; }))

#else /* !CONFIG_KTRACE */

struct task_struct;
static inline void ktrace_task_name(struct task_struct *t, const char *comm) { }

/* Never evaluated, but still type-checked and counted as used. */
#define TRACE(event, arg1, arg2)					\
do {									\
	if (0)								\
		((void)(u32)(event), (void)(u32)(arg1), (void)(u32)(arg2)); \
} while (0)
#define TRACE_ARGS(event, ...)						\
do {									\
	if (0) {							\
		const u32 __kt_args[] = { __VA_ARGS__ };		\
									\
		(void)(u32)(event);					\
		(void)__kt_args;					\
	}								\
} while (0)
#define TRACE64(event, arg1, arg2, val64)				\
do {									\
	if (0)								\
		((void)(u32)(event), (void)(u32)(arg1), (void)(u32)(arg2), \
		 (void)(u64)(val64));					\
} while (0)

#endif /* CONFIG_KTRACE */

#endif /* _LINUX_KTRACE_H */
