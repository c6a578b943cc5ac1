// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace: the kernel side as a loadable module for stock kernels.
 *
 * The patch puts TRACE() sites into the scheduler, fork, faults, interrupts
 * and so on.  A stock kernel has tracepoints at nearly all of those places;
 * this file attaches a probe to each and writes the same event with the
 * same arguments as the patch's TRACE site, through the same buffer.c and
 * dev.c, so /dev/ktrace, ktrace and dtrace work unchanged.  Only the module
 * build compiles this file (module/Kbuild); the patch never does.
 *
 * Tracepoints are found by name with for_each_kernel_tracepoint(), since
 * most __tracepoint_* symbols are not exported.  Each probe is still checked
 * at compile time against the prototype in the kernel's own headers (see
 * KTRACE_PROBE_CHECK()), so a tracepoint whose arguments change breaks the build
 * instead of the kernel.  The prototypes used here are the same in 6.1 and
 * 6.12; a difference would be handled with LINUX_VERSION_CODE at the probe.
 *
 * Where the module differs from the patch (Documentation/trace/ktrace-module.rst):
 *  - fault:trap has no tracepoint: patch only.
 *  - fault:page comes from x86's page_fault_user/kernel tracepoints, one per
 *    page fault exception; the patch counts handle_mm_fault() calls, as
 *    pgfault in /proc/vmstat does.  They differ for faults that get_user_pages()
 *    resolves without an exception (execve's argument copy, ptrace, O_DIRECT),
 *    for retried faults (VM_FAULT_RETRY: one exception, two handle_mm_fault())
 *    and for kernel-address faults that never reach handle_mm_fault().
 *  - irq:entry/exit come from irq_handler_entry/exit: one per handler, so a
 *    shared interrupt line records one pair per handler it calls.
 *  - irq:nmi comes from nmi_handler: one per NMI handler run (arg2 is what
 *    the handler returned, the address is the handler's), not one per NMI
 *    with its back-to-back flag and interrupted ip.
 *  - syscall:entry/exit also record 32-bit system calls.
 *
 * Locking: the probe table is written only by module init and exit.  The
 * probes run wherever their tracepoint does (any context, NMI included)
 * and only call TRACE(), which is safe there.
 */

#include <linux/irq.h>
#include <linux/kernel.h>
#include <linux/ktrace.h>
#include <linux/module.h>
#include <linux/netdevice.h>
#include <linux/blkdev.h>
#include <linux/blk-mq.h>
#include <linux/sched.h>
#include <linux/tracepoint.h>
#include <linux/utsname.h>
#include <linux/version.h>
#include <generated/utsrelease.h>
#include <generated/utsversion.h>		/* since 6.0 */
#include <asm/hw_irq.h>
#include <asm/syscall.h>
#include <asm/trap_pf.h>

#include <trace/events/block.h>
#include <trace/events/irq.h>
#include <trace/events/net.h>
#include <trace/events/nmi.h>
#include <trace/events/sched.h>
#include <trace/events/signal.h>
#include <trace/events/syscalls.h>
#include <trace/events/task.h>
#include <trace/events/timer.h>
#include <asm/trace/exceptions.h>

#include "internal.h"

/*
 * A probe runs only while attached, so the static key that TRACE() tests
 * first buys nothing here, and patching it on every mask change inside
 * code that runs in page-fault and NMI context made the stock 6.12 kernels
 * oops on an int3 no text_poke claimed, under QEMU TCG (tests/vm/85-module:
 * "Oops: int3" at ktrace_probe_page_fault+0x19).  TRACE(), TRACE_ARGS()
 * and TRACE64() here test the mask alone; buffer.c tests it again with
 * preemption off.
 */
#define ktrace_on(event)	(READ_ONCE(ktrace_group_mask) & (event))

/* --- probes: one per tracepoint, the patch's TRACE site in each comment --- */

/*
 * kernel/sched/core.c __schedule(): TRACE_ARGS(sched_switch, prev->pid,
 * next->pid, ktrace_switch_state(...), next->prio)
 */
static void notrace ktrace_probe_sched_switch(void *data, bool preempt,
					      struct task_struct *prev,
					      struct task_struct *next,
					      unsigned int prev_state)
{
	TRACE_ARGS(KTRACE_sched_switch, prev->pid, next->pid,
		   ktrace_switch_state(preempt, prev_state, prev), next->prio);
}

/* ttwu_do_wakeup(): TRACE(sched_wakeup, p->pid, task_cpu(p)) */
static void notrace ktrace_probe_sched_wakeup(void *data, struct task_struct *p)
{
	TRACE(KTRACE_sched_wakeup, p->pid, task_cpu(p));
}

/* set_task_cpu(): TRACE(sched_migrate, p->pid, new_cpu) */
static void notrace ktrace_probe_sched_migrate(void *data, struct task_struct *p,
					       int dest_cpu)
{
	TRACE(KTRACE_sched_migrate, p->pid, dest_cpu);
}

/*
 * copy_process(), where total_forks (processes in /proc/stat) is counted:
 * TRACE(thread_fork, current->pid, p->pid).  task_newtask fires in the same
 * success path of copy_process(), so io_uring workers and idle threads are
 * counted too; sched_process_fork (kernel_clone() only) would miss them.
 */
static void notrace ktrace_probe_task_newtask(void *data, struct task_struct *p,
					      unsigned long clone_flags)
{
	TRACE(KTRACE_thread_fork, current->pid, p->pid);
	if (ktrace_on(KTRACE_thread_name))
		__ktrace_task_name(p, p->comm);
}

/*
 * __set_task_comm(): ktrace_task_name(tsk, tsk->comm) after the copy; the
 * tracepoint fires before it, with the new name in @comm.
 */
static void notrace ktrace_probe_task_rename(void *data, struct task_struct *p,
					     const char *comm)
{
	if (ktrace_on(KTRACE_thread_name))
		__ktrace_task_name(p, comm);
}

/* exec_binprm(): TRACE(thread_exec, current->pid, old_pid) */
static void notrace ktrace_probe_exec(void *data, struct task_struct *p,
				      pid_t old_pid, struct linux_binprm *bprm)
{
	TRACE(KTRACE_thread_exec, p->pid, old_pid);
}

/* do_exit(): TRACE(thread_exit, tsk->pid, code); exit_code is code by now. */
static void notrace ktrace_probe_exit(void *data, struct task_struct *p)
{
	TRACE(KTRACE_thread_exit, p->pid, p->exit_code);
	if (ktrace_on(KTRACE_thread_name))	/* as do_exit() in the patch */
		__ktrace_task_name(p, p->comm);
}

/* handle_mm_fault(): TRACE64(fault_page, pid, flags, address); see above. */
static void notrace ktrace_probe_page_fault(void *data, unsigned long address,
					    struct pt_regs *regs,
					    unsigned long error_code)
{
	TRACE64(KTRACE_fault_page, current->pid,
		(error_code & X86_PF_USER ? KTRACE_FAULT_USER : 0) |
		(error_code & X86_PF_WRITE ? KTRACE_FAULT_WRITE : 0), address);
}

/* The vector an irq arrives on, as common_interrupt() knows it. */
static u32 ktrace_irq_vector(int irq)
{
	struct irq_cfg *cfg = irqd_cfg(irq_get_irq_data(irq));

	return cfg ? cfg->vector : 0;
}

/* common_interrupt(): TRACE(irq_entry, irq, vector) around handle_irq() */
static void notrace ktrace_probe_irq_entry(void *data, int irq,
					   struct irqaction *action)
{
	if (ktrace_on(KTRACE_irq_entry))
		ktrace_write(KTRACE_irq_entry, irq, ktrace_irq_vector(irq));
}

static void notrace ktrace_probe_irq_exit(void *data, int irq,
					  struct irqaction *action, int ret)
{
	if (ktrace_on(KTRACE_irq_exit))
		ktrace_write(KTRACE_irq_exit, irq, ktrace_irq_vector(irq));
}

/* exc_nmi(): TRACE64(irq_nmi, cpu, b2b, regs->ip); here per handler. */
static void notrace ktrace_probe_nmi(void *data, void *handler, s64 delta_ns,
				     int handled)
{
	TRACE64(KTRACE_irq_nmi, smp_processor_id(), handled,
		(unsigned long)handler);
}

/* handle_softirqs(), next to kstat_incr_softirqs_this_cpu() */
static void notrace ktrace_probe_softirq_entry(void *data, unsigned int vec_nr)
{
	TRACE(KTRACE_softirq_entry, vec_nr, 0);
}

static void notrace ktrace_probe_softirq_exit(void *data, unsigned int vec_nr)
{
	TRACE(KTRACE_softirq_exit, vec_nr, 0);
}

static void notrace ktrace_probe_softirq_raise(void *data, unsigned int vec_nr)
{
	TRACE(KTRACE_softirq_raise, vec_nr, 0);
}

/* do_syscall_64(): TRACE(syscall_entry, nr, regs->di) */
static void notrace ktrace_probe_sys_enter(void *data, struct pt_regs *regs,
					   long id)
{
	TRACE(KTRACE_syscall_entry, id, regs->di);
}

/* do_syscall_64(): TRACE(syscall_exit, nr, regs->ax) */
static void notrace ktrace_probe_sys_exit(void *data, struct pt_regs *regs,
					  long ret)
{
	TRACE(KTRACE_syscall_exit, syscall_get_nr(current, regs), ret);
}

/* dev_hard_start_xmit path: TRACE(net_xmit, len, dev->ifindex) */
static void notrace ktrace_probe_net_xmit(void *data, const struct sk_buff *skb,
					  const struct net_device *dev)
{
	TRACE(KTRACE_net_xmit, skb->len, dev->ifindex);
}

/* __netif_receive_skb_core(): TRACE(net_recv, skb->len, skb->dev->ifindex) */
static void notrace ktrace_probe_net_recv(void *data, struct sk_buff *skb)
{
	TRACE(KTRACE_net_recv, skb->len, skb->dev->ifindex);
}

static u32 ktrace_rq_devt(struct request *rq)
{
	return rq->q->disk ? disk_devt(rq->q->disk) : 0;
}

/* blk_mq_start_request(): TRACE64(block_issue, devt, bytes, sector) */
static void notrace ktrace_probe_block_issue(void *data, struct request *rq)
{
	TRACE64(KTRACE_block_issue, ktrace_rq_devt(rq), blk_rq_bytes(rq),
		blk_rq_pos(rq));
}

/* blk_update_request() and blk_mq_end_request_batch() */
static void notrace ktrace_probe_block_complete(void *data, struct request *rq,
						blk_status_t error,
						unsigned int nr_bytes)
{
	TRACE64(KTRACE_block_complete, ktrace_rq_devt(rq), nr_bytes,
		blk_rq_pos(rq));
}

/* get_signal(): TRACE(signal_deliver, signr, current->pid) */
static void notrace ktrace_probe_signal(void *data, int sig,
					struct kernel_siginfo *info,
					struct k_sigaction *ka)
{
	TRACE(KTRACE_signal_deliver, sig, current->pid);
}

/* call_timer_fn(): TRACE64(timer_expire, flags, cpu, fn) */
static void notrace ktrace_probe_timer(void *data, struct timer_list *timer,
				       unsigned long baseclk)
{
	TRACE64(KTRACE_timer_expire, timer->flags, smp_processor_id(),
		(unsigned long)timer->function);
}

/* --- the probe table ------------------------------------------------------ */

struct ktrace_tp_probe {
	const char		*name;		/* the tracepoint's */
	void			*func;
	struct tracepoint	*tp;		/* found and registered, or NULL */
};

/*
 * register_trace_<tp>() is the kernel's typed wrapper of the tracepoint;
 * calling it inside sizeof() checks a probe of @type against the
 * tracepoint's prototype in this kernel's headers without referencing its
 * (unexported) symbol.  It is 0, or the build fails.
 */
#define KTRACE_PROBE_CHECK(tp, type) \
	BUILD_BUG_ON_ZERO(sizeof(register_trace_##tp((type *)NULL, NULL)) != sizeof(int))

/* One entry, checked where it is listed (adding 0 to the name). */
#define KTRACE_PROBE(tp, fn) \
	{ .name = #tp + KTRACE_PROBE_CHECK(tp, typeof(fn)), .func = fn }

static struct ktrace_tp_probe ktrace_probes[] = {
	KTRACE_PROBE(sched_switch, ktrace_probe_sched_switch),
	KTRACE_PROBE(sched_wakeup, ktrace_probe_sched_wakeup),
	KTRACE_PROBE(sched_migrate_task, ktrace_probe_sched_migrate),
	KTRACE_PROBE(task_newtask, ktrace_probe_task_newtask),
	KTRACE_PROBE(task_rename, ktrace_probe_task_rename),
	KTRACE_PROBE(sched_process_exec, ktrace_probe_exec),
	KTRACE_PROBE(sched_process_exit, ktrace_probe_exit),
	KTRACE_PROBE(page_fault_user, ktrace_probe_page_fault),
	KTRACE_PROBE(page_fault_kernel, ktrace_probe_page_fault),
	KTRACE_PROBE(irq_handler_entry, ktrace_probe_irq_entry),
	KTRACE_PROBE(irq_handler_exit, ktrace_probe_irq_exit),
	KTRACE_PROBE(nmi_handler, ktrace_probe_nmi),
	KTRACE_PROBE(softirq_entry, ktrace_probe_softirq_entry),
	KTRACE_PROBE(softirq_exit, ktrace_probe_softirq_exit),
	KTRACE_PROBE(softirq_raise, ktrace_probe_softirq_raise),
	KTRACE_PROBE(sys_enter, ktrace_probe_sys_enter),
	KTRACE_PROBE(sys_exit, ktrace_probe_sys_exit),
	KTRACE_PROBE(net_dev_start_xmit, ktrace_probe_net_xmit),
	KTRACE_PROBE(netif_receive_skb, ktrace_probe_net_recv),
	KTRACE_PROBE(block_rq_issue, ktrace_probe_block_issue),
	KTRACE_PROBE(block_rq_complete, ktrace_probe_block_complete),
	KTRACE_PROBE(signal_deliver, ktrace_probe_signal),
	KTRACE_PROBE(timer_expire_entry, ktrace_probe_timer),
};

static void ktrace_probe_find(struct tracepoint *tp, void *priv)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ktrace_probes); i++)
		if (!ktrace_probes[i].tp && !strcmp(tp->name, ktrace_probes[i].name))
			ktrace_probes[i].tp = tp;
}

static void ktrace_probes_unregister(void)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ktrace_probes); i++) {
		if (!ktrace_probes[i].tp)
			continue;
		tracepoint_probe_unregister(ktrace_probes[i].tp,
					    ktrace_probes[i].func, NULL);
		ktrace_probes[i].tp = NULL;
	}
	/* No probe runs after this: they may be freed with the module. */
	tracepoint_synchronize_unregister();
}

static int __init ktrace_probes_register(void)
{
	unsigned int i;
	int ret;

	for_each_kernel_tracepoint(ktrace_probe_find, NULL);
	for (i = 0; i < ARRAY_SIZE(ktrace_probes); i++) {
		if (!ktrace_probes[i].tp) {
			/* a kernel built without it (e.g. no CONFIG_BLOCK) */
			pr_info("ktrace: no tracepoint %s in this kernel, its event is not recorded\n",
				ktrace_probes[i].name);
			continue;
		}
		ret = tracepoint_probe_register(ktrace_probes[i].tp,
						ktrace_probes[i].func, NULL);
		if (ret) {
			pr_err("ktrace: cannot attach to tracepoint %s: %d\n",
			       ktrace_probes[i].name, ret);
			ktrace_probes[i].tp = NULL;
			ktrace_probes_unregister();
			return ret;
		}
	}
	return 0;
}

/* --- module init and exit ------------------------------------------------- */

/*
 * vermagic and (Debian) CONFIG_MODVERSIONS already refuse another release
 * or changed symbol CRCs.  Tracepoint prototypes and the struct layouts the
 * probes read can change within one release string (a new Debian upload of
 * the same ABI), so refuse any build of the kernel but the one whose headers
 * compiled us: its UTS_VERSION names the package version and build date.
 */
static int __init ktrace_check_kernel(void)
{
#ifdef UTS_VERSION
	if (strcmp(init_utsname()->release, UTS_RELEASE) ||
	    strcmp(init_utsname()->version, UTS_VERSION)) {
		pr_err("ktrace: module built for %s %s, but this kernel is %s %s; rebuild it against this kernel's headers (make module, or dkms)\n",
		       UTS_RELEASE, UTS_VERSION, init_utsname()->release,
		       init_utsname()->version);
		return -ENOEXEC;
	}
#endif
	return 0;
}

static int __init ktrace_module_init(void)
{
	int ret;

	ret = ktrace_check_kernel();
	if (ret)
		return ret;
	ret = ktrace_buffer_module_init();
	if (ret)
		return ret;
	ret = ktrace_probes_register();
	if (ret)
		goto out_buffer;
	ret = ktrace_dev_module_init();
	if (ret)
		goto out_probes;
	pr_info("ktrace: module loaded, %zu tracepoints\n", ARRAY_SIZE(ktrace_probes));
	return 0;

out_probes:
	ktrace_set_mask(0);
	ktrace_probes_unregister();
out_buffer:
	ktrace_buffer_module_exit();
	return ret;
}
module_init(ktrace_module_init);

/*
 * An open /dev/ktrace holds a reference (fops.owner), so no reader or
 * user-event writer is left here; tracing may still be on.
 */
static void __exit ktrace_module_exit(void)
{
	ktrace_dev_module_exit();
	ktrace_set_mask(0);
	ktrace_probes_unregister();
	ktrace_buffer_module_exit();
}
module_exit(ktrace_module_exit);

MODULE_DESCRIPTION("ktrace: low-overhead event tracing on existing tracepoints");
MODULE_LICENSE("GPL");
