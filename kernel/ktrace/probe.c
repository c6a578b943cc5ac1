// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace: probes, uprobes on user programs that record fetched values.
 *
 * KTRACE_IOC_PROBE_ADD registers a uprobe consumer at a file offset of a
 * binary, with a small fetch program (<uapi/linux/ktrace.h>).  Each hit in
 * a process the probe wants runs the program and writes one event of group
 * "probe" (subevent: the probe's id) with the values, through buffer.c
 * like every TRACE() site: the same TSC clock, the same per-CPU buffers,
 * continuation records for the values past the first.
 *
 * The program is checked once, when the probe is added, so the handler
 * runs a bounded loop: at most KTRACE_PROBE_MAX_OPS steps, no jumps.
 *
 * User memory is read with page faults disabled (get_user() of the size
 * for a DEREF, copy_from_user_nofault() for a STR).
 * A uprobe handler runs in the task and could fault pages in, but a page
 * that is swapped out or backed by a slow file would then hold the traced
 * program inside the probe for the whole I/O, and a page never touched
 * would be allocated by the tracer.  A read that does not find its page
 * present marks the value missing (the missing mask in arg1, counted in
 * ktrace_info.probe_missing); it never sleeps and never retries.
 *
 * x86 instructions: uprobes emulates a probed relative jump, call,
 * conditional branch, nop or push of a register, and copies any other
 * instruction to a slot outside the program and single-steps it there,
 * fixing rip-relative operands; single-stepping costs a second trap.
 * Either way the handler sees the registers from before the instruction.
 * uprobes refuses some instructions (bad prefixes, ones that mask
 * exceptions, opcodes outside its tables, 16-bit branches) with -ENOTSUPP
 * when it first installs the breakpoint: from KTRACE_IOC_PROBE_ADD when a
 * process has the file mapped then, else silently at the next mmap.
 *
 * Process filter: a probe with pids fires only in those processes (with
 * KTRACE_PROBE_CHILDREN also in their descendants, found through the
 * parent chain at the hit: an orphan reparented to init is no longer one).
 * That exact check is the handler's.  The consumer's filter tells uprobes
 * which address spaces get the breakpoint, when the probe is registered
 * and when the file is mapped, with uprobes' dup_mmap_sem held: it must be
 * cheap, so it looks at O(pids) mm pointers, never at every thread:
 *  - the mm each process had when the probe was added, held by mmgrab()
 *    so that no other address space can reuse the pointer (a leader that
 *    called pthread_exit() has no mm of its own to look at later);
 *  - the mm each process's leader has now (after an exec);
 *  - the mapping task's own mm, when the mapping task is wanted (an exec
 *    or mmap in a wanted process or, with CHILDREN, a descendant), or is
 *    the vfork() child of a wanted task.
 * A child of fork inherits its parent's breakpoints without asking, so the
 * handler, on a hit in a process it does not want, asks the filter and has
 * uprobes remove the breakpoint from an address space no wanted process
 * uses (UPROBE_HANDLER_REMOVE).  Not seen by the filter: with
 * CHILDREN, descendants that already had their own mm when the probe was
 * added (they get the breakpoint at their next exec), and a CLONE_VM
 * sharer that is neither a thread nor a vfork child.
 *
 * Only 64-bit processes: the fetch program's registers are DWARF x86-64
 * numbers and CFA is 8 bytes above the stack pointer.  A hit in a 32-bit
 * (ia32 or x32) task is recorded with every value missing, and counted.
 *
 * uprobes changed its API in 6.12: uprobe_register() returns the uprobe,
 * unregistering is split into uprobe_unregister_nosync() and one
 * uprobe_unregister_sync() for many, and the filter lost its context
 * argument.  Makefile (and the module's Kbuild) define
 * KTRACE_UPROBES_BY_INODE for the older API, found in the kernel's
 * <linux/uprobes.h>; the shim is the few functions under it below.
 */

#include <linux/atomic.h>
#include <linux/dcache.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/ktrace.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/path.h>
#include <linux/pid.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/signal.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/uprobes.h>
#include <asm/ptrace.h>

#include "internal.h"

/* Arguments of one hit: the missing mask, then the value words. */
#define KTRACE_PROBE_MAX_ARGS	(1 + KTRACE_PROBE_MAX_WORDS)

/*
 * struct ktrace_uprobe_step - one or two ops of a fetch program as the
 * handler runs them, decoded once when the probe is added
 * (ktrace_probe_decode()), so that a hit does no table look-up or size
 * arithmetic per op, and goes round its loop once for the common pairs:
 * an ADD then a DEREF (a field of a pointed-to struct) is one DEREF step
 * with the ADD's offset, a REG then an EMIT one KTRACE_STEP_REG_EMIT.
 * @op:        KTRACE_OP_* or KTRACE_STEP_REG_EMIT
 * @size:      DEREF, EMIT, STR: the op's size; REG_EMIT: the EMIT's
 * @words:     EMIT, STR, REG_EMIT: the value words it records
 * @is_signed: DEREF: the load is sign-extended (KTRACE_OP_SIGNED)
 * @regs_off:  REG, REG_EMIT: the register's offset in struct pt_regs
 * @imm:       ADD: the offset; DEREF: the folded ADD's offset, or 0
 */
/* REG, then EMIT of the register: one step (the common register argument) */
#define KTRACE_STEP_REG_EMIT	0x80

struct ktrace_uprobe_step {
	u8	op;
	u8	size;
	u8	words;
	bool	is_signed;
	u8	regs_off;
	s32	imm;
};

/*
 * struct ktrace_uprobe - one probe
 * @consumer: what uprobes calls; its list node is uprobes' own
 * @uprobe:   the handle uprobe_register() gave (6.12 API)
 * @path:     the probed file, held so that its inode and mount stay
 * @offset:   file offset of the probed instruction
 * @owner:    the open /dev/ktrace (struct ktrace_reader) that added it
 * @event:    KTRACE_CODE(KTRACE_GRP_probe, id)
 * @flags:    KTRACE_PROBE_*
 * @nr_words: value words of every hit, missing values included
 * @pids:     the wanted processes (tgids), none for every process
 * @mms:      their address spaces when the probe was added (mmgrab()), or NULL
 * @ops:      the fetch program, checked by ktrace_probe_check()
 * @steps:    @ops decoded for the handler, by ktrace_probe_decode()
 * @nr_steps: how many
 *
 * Lifetime: allocated by KTRACE_IOC_PROBE_ADD, freed by
 * KTRACE_IOC_PROBE_DEL or by the release of @owner, in both cases after
 * the consumer is unregistered and no handler can still run it
 * (ktrace_uprobes_remove()).  The file that owns a probe holds the
 * module, so ktrace.ko cannot be unloaded while any probe exists.
 *
 * Locking: everything but @consumer's list node is written before the
 * probe is registered and never changes, so the handlers take no lock.
 * ktrace_uprobes[] (the ids) is under ktrace_uprobe_mutex.
 */
struct ktrace_uprobe {
	struct uprobe_consumer	consumer;
#ifdef KTRACE_UPROBES_BY_INODE
	struct inode		*inode;		/* registered on: held until freed */
#else
	struct uprobe		*uprobe;
#endif
	struct path		path;
	loff_t			offset;
	const void		*owner;
	u32			event;
	u32			flags;
	unsigned int		nr_ops;
	unsigned int		nr_pids;
	unsigned int		nr_words;
	unsigned int		nr_values;
	unsigned int		nr_steps;
	struct pid		*pids[KTRACE_PROBE_MAX_PIDS];
	struct mm_struct	*mms[KTRACE_PROBE_MAX_PIDS];
	struct ktrace_probe_op	ops[KTRACE_PROBE_MAX_OPS];
	struct ktrace_uprobe_step steps[KTRACE_PROBE_MAX_OPS];
};

/* Probes by id; slot 0 is never used.  Under ktrace_uprobe_mutex. */
static struct ktrace_uprobe *ktrace_uprobes[KTRACE_PROBE_MAX_ID + 1];
static DEFINE_MUTEX(ktrace_uprobe_mutex);

/* Values the handlers could not fetch, for KTRACE_IOC_INFO. */
static atomic64_t ktrace_uprobe_missing = ATOMIC64_INIT(0);

/* pt_regs offsets of the DWARF x86-64 registers 0..KTRACE_REG_MAX. */
static const u8 ktrace_dwarf_regs[KTRACE_REG_MAX + 1] = {
	offsetof(struct pt_regs, ax), offsetof(struct pt_regs, dx),
	offsetof(struct pt_regs, cx), offsetof(struct pt_regs, bx),
	offsetof(struct pt_regs, si), offsetof(struct pt_regs, di),
	offsetof(struct pt_regs, bp), offsetof(struct pt_regs, sp),
	offsetof(struct pt_regs, r8), offsetof(struct pt_regs, r9),
	offsetof(struct pt_regs, r10), offsetof(struct pt_regs, r11),
	offsetof(struct pt_regs, r12), offsetof(struct pt_regs, r13),
	offsetof(struct pt_regs, r14), offsetof(struct pt_regs, r15),
	offsetof(struct pt_regs, ip),
};

/* Words one EMIT or STR records, whether or not its value is missing. */
static unsigned int ktrace_op_words(const struct ktrace_probe_op *op)
{
	if (op->op == KTRACE_OP_STR)
		return DIV_ROUND_UP(op->size, sizeof(u32));
	return op->size == 8 ? 2 : 1;
}

/* Is @task's process one of @tu's?  The pids are compared, not read. */
static bool ktrace_uprobe_tgid_wanted(const struct ktrace_uprobe *tu,
				      struct task_struct *task)
{
	struct pid *tgid = task_tgid(task);
	unsigned int i;

	for (i = 0; i < tu->nr_pids; i++)
		if (tgid == tu->pids[i])
			return true;
	return false;
}

/*
 * The process filter: is @task one of @tu's processes or a descendant?
 * @task is current or the caller holds the RCU read lock, so @task itself
 * needs no lock (its tgid is only compared): a hit in a wanted process,
 * the common case, takes none; only the walk up the parents does.
 */
static bool ktrace_uprobe_task_wanted(const struct ktrace_uprobe *tu,
				      struct task_struct *task)
{
	bool wanted = false;

	if (!tu->nr_pids)
		return true;
	if (!task->pid)			/* the idle task: no process */
		return false;
	if (ktrace_uprobe_tgid_wanted(tu, task))
		return true;
	if (!(tu->flags & KTRACE_PROBE_CHILDREN))
		return false;
	rcu_read_lock();
	task = rcu_dereference(task->real_parent);
	while (task->pid) {		/* up to, not into, the idle task */
		if (ktrace_uprobe_tgid_wanted(tu, task)) {
			wanted = true;
			break;
		}
		task = rcu_dereference(task->real_parent);
	}
	rcu_read_unlock();
	return wanted;
}

/*
 * Does a process @tu wants use @mm?  The filter, with uprobes' locks held:
 * O(pids), see the comment at the top.  Several processes may share @mm
 * (vfork): the breakpoint stays while a wanted one does.
 */
static bool ktrace_uprobe_mm_wanted(const struct ktrace_uprobe *tu,
				    struct mm_struct *mm)
{
	struct task_struct *task;
	bool wanted = false;
	unsigned int i;

	if (!tu->nr_pids)
		return true;
	for (i = 0; i < tu->nr_pids; i++)
		if (tu->mms[i] == mm)
			return true;
	rcu_read_lock();
	for (i = 0; i < tu->nr_pids && !wanted; i++) {
		task = pid_task(tu->pids[i], PIDTYPE_TGID);
		wanted = task && READ_ONCE(task->mm) == mm;
	}
	if (!wanted && current->mm == mm) {
		task = current;
		/* a vfork() child runs in its parent's mm until it execs */
		if (!ktrace_uprobe_task_wanted(tu, task) && task->vfork_done)
			task = rcu_dereference(task->real_parent);
		wanted = ktrace_uprobe_task_wanted(tu, task) &&
			 READ_ONCE(task->mm) == mm;
	}
	rcu_read_unlock();
	return wanted;
}

/* The fast path: a hit. */

/*
 * DEREF: @size bytes at *@acc, without faulting pages in.  One get_user()
 * of the size, with page faults disabled as copy_from_user_nofault() does
 * it, at a fraction of its cost (which is a call, access_ok(), a hardened
 * usercopy check of the destination and a copy loop): get_user() checks
 * the address against the user range itself, and a fault, with page faults
 * disabled, never sleeps: the exception table makes it return -EFAULT.
 * No might_fault() warning either: it returns at once when faults are
 * disabled.
 */
static bool ktrace_uprobe_load(u64 *acc, unsigned int size, bool is_signed)
{
	unsigned long addr = (unsigned long)*acc;
	u64 v = 0;
	int err;

	pagefault_disable();
	switch (size) {
	case 1: {
		u8 b;

		err = get_user(b, (const u8 __user *)addr);
		v = is_signed ? (u64)(s8)b : b;
		break;
	}
	case 2: {
		u16 h;

		err = get_user(h, (const u16 __user *)addr);
		v = is_signed ? (u64)(s16)h : h;
		break;
	}
	case 4: {
		u32 w;

		err = get_user(w, (const u32 __user *)addr);
		v = is_signed ? (u64)(s32)w : w;
		break;
	}
	default:
		err = get_user(v, (const u64 __user *)addr);
		break;
	}
	pagefault_enable();
	if (err)
		return false;
	*acc = v;
	return true;
}

/*
 * STR: the string at @uaddr, at most @size bytes, into @words, NUL-padded
 * to whole words.  Read a page at a time, so that a short string just
 * before an unmapped page is found.
 */
static bool ktrace_uprobe_load_str(u32 *words, u64 uaddr, unsigned int size)
{
	unsigned int len = DIV_ROUND_UP(size, sizeof(u32)) * sizeof(u32);
	unsigned int done = 0, chunk;
	char *str = (char *)words, *nul;

	memset(str, 0, len);
	while (done < size) {
		chunk = min_t(unsigned long, size - done,
			      PAGE_SIZE - offset_in_page(uaddr + done));
		if (copy_from_user_nofault(str + done,
					   (const void __user *)(unsigned long)(uaddr + done),
					   chunk))
			return false;
		nul = memchr(str + done, 0, chunk);
		if (nul) {
			memset(nul, 0, str + len - nul);
			break;
		}
		done += chunk;
	}
	return true;
}

/* EMIT: the low @size bytes of @acc, sign-extended after a signed DEREF. */
static void ktrace_uprobe_emit(u32 *word, u64 acc, unsigned int size,
			       bool is_signed)
{
	if (likely(size == 8)) {	/* a long or a pointer: tested first */
		word[0] = lower_32_bits(acc);
		word[1] = upper_32_bits(acc);
		return;
	}
	switch (size) {
	case 1:
		word[0] = is_signed ? (u32)sign_extend32(acc, 7) : (u8)acc;
		break;
	case 2:
		word[0] = is_signed ? (u32)sign_extend32(acc, 15) : (u16)acc;
		break;
	case 4:
		word[0] = lower_32_bits(acc);
		break;
	default:
		word[0] = lower_32_bits(acc);
		word[1] = upper_32_bits(acc);
		break;
	}
}

/* Value @value is missing: its @nr_words words at @args[@word] are zero. */
static void ktrace_uprobe_set_missing(u32 *args, unsigned int word,
				      unsigned int nr_words, unsigned int value)
{
	memset(&args[word], 0, nr_words * sizeof(u32));
	args[0] |= BIT(value);
}

/*
 * Run @tu's program on @regs and write its event.  After a load faults,
 * the ops up to the next EMIT or STR are skipped and that value is
 * recorded missing: zero words, its bit in the mask.
 */
static void ktrace_uprobe_record(const struct ktrace_uprobe *tu,
				 struct pt_regs *regs)
{
	u32 args[KTRACE_PROBE_MAX_ARGS];
	unsigned int i, value = 0, word = 1;	/* args[word]: the next value */
	bool missing = false, is_signed = false;
	u64 acc = 0;

	if (!(READ_ONCE(ktrace_group_mask) & KTRACE_GRP_probe))
		return;
	if (!user_64bit_mode(regs) || test_thread_flag(TIF_ADDR32)) {
		/* ia32 or x32: another register file, 4-byte return addresses */
		memset(args, 0, (1 + tu->nr_words) * sizeof(u32));
		args[0] = (u32)(BIT_ULL(tu->nr_values) - 1);
		atomic64_add(tu->nr_values, &ktrace_uprobe_missing);
		ktrace_write_probe(tu->event, args, 1 + tu->nr_words);
		return;
	}
	args[0] = 0;
	for (i = 0; i < tu->nr_steps; i++) {
		const struct ktrace_uprobe_step *step = &tu->steps[i];

		switch (step->op) {
		case KTRACE_OP_REG:
			/* an offset from ktrace_dwarf_regs[], checked when added */
			acc = *(unsigned long *)((char *)regs + step->regs_off);
			is_signed = false;
			break;
		case KTRACE_OP_CFA:
			acc = regs->sp + sizeof(long);	/* past the return address */
			is_signed = false;
			break;
		case KTRACE_OP_ADD:
			acc += (s64)step->imm;
			is_signed = false;
			break;
		case KTRACE_OP_DEREF:
			acc += (s64)step->imm;		/* a folded ADD, or 0 */
			is_signed = step->is_signed;
			if (!missing)
				missing = !ktrace_uprobe_load(&acc, step->size, is_signed);
			break;
		case KTRACE_STEP_REG_EMIT:
			acc = *(unsigned long *)((char *)regs + step->regs_off);
			is_signed = false;
			fallthrough;
		case KTRACE_OP_EMIT:
			if (likely(!missing))
				ktrace_uprobe_emit(&args[word], acc, step->size, is_signed);
			else
				ktrace_uprobe_set_missing(args, word, step->words, value);
			word += step->words;
			value++;
			missing = false;
			break;
		case KTRACE_OP_STR:
			if (missing || !ktrace_uprobe_load_str(&args[word], acc, step->size))
				ktrace_uprobe_set_missing(args, word, step->words, value);
			word += step->words;
			value++;
			missing = false;
			break;
		}
	}
	if (unlikely(args[0]))
		atomic64_add(hweight32(args[0]), &ktrace_uprobe_missing);
	ktrace_write_probe(tu->event, args, word);
}

static int ktrace_uprobe_handler(struct uprobe_consumer *uc,
				 struct pt_regs *regs)
{
	struct ktrace_uprobe *tu = container_of(uc, struct ktrace_uprobe, consumer);

	/*
	 * A fork's child inherited the breakpoint: remove it there, unless a
	 * wanted process shares the mm.  6.12's uprobes asks the filter
	 * again before removing it; 6.1's does not: ask here.
	 */
	if (!ktrace_uprobe_task_wanted(tu, current))
		return ktrace_uprobe_mm_wanted(tu, current->mm) ?
			0 : UPROBE_HANDLER_REMOVE;
	if (!(tu->flags & KTRACE_PROBE_RETURN))
		ktrace_uprobe_record(tu, regs);
	return 0;
}

/* A return probe: @regs at the return, the return value in rax (REG 0). */
static int ktrace_uprobe_ret_handler(struct uprobe_consumer *uc,
				     unsigned long func, struct pt_regs *regs)
{
	struct ktrace_uprobe *tu = container_of(uc, struct ktrace_uprobe, consumer);

	if (ktrace_uprobe_task_wanted(tu, current))
		ktrace_uprobe_record(tu, regs);
	return 0;
}

/* The slow path: the uprobes API shim, registration, removal. */

#ifdef KTRACE_UPROBES_BY_INODE
static bool ktrace_uprobe_filter(struct uprobe_consumer *uc,
				 enum uprobe_filter_ctx ctx, struct mm_struct *mm)
#else
static bool ktrace_uprobe_filter(struct uprobe_consumer *uc,
				 struct mm_struct *mm)
#endif
{
	return ktrace_uprobe_mm_wanted(container_of(uc, struct ktrace_uprobe,
						    consumer), mm);
}

static int ktrace_uprobe_register(struct ktrace_uprobe *tu)
{
	struct inode *inode = d_real_inode(tu->path.dentry);

#ifdef KTRACE_UPROBES_BY_INODE
	int ret = uprobe_register(inode, tu->offset, &tu->consumer);

	/*
	 * Unregister must name the same inode: d_real_inode() of an overlayfs
	 * file is another one once the file is copied up, and 6.1's
	 * uprobe_unregister() would then leave the consumer linked.
	 */
	if (!ret) {
		ihold(inode);	/* pinned by the path now; iput() when freed */
		tu->inode = inode;
	}
	return ret;
#else
	tu->uprobe = uprobe_register(inode, tu->offset, 0, &tu->consumer);
	return PTR_ERR_OR_ZERO(tu->uprobe);
#endif
}

/*
 * Unregister: no breakpoint of @tu is left in any process when this
 * returns, but until ktrace_uprobe_unregister_sync() a handler may still
 * be running it.
 */
static void ktrace_uprobe_unregister_nosync(struct ktrace_uprobe *tu)
{
#ifdef KTRACE_UPROBES_BY_INODE
	/* Waits for running handlers: they hold uprobe->register_rwsem. */
	uprobe_unregister(tu->inode, tu->offset, &tu->consumer);
#else
	uprobe_unregister_nosync(tu->uprobe, &tu->consumer);
#endif
}

static void ktrace_uprobe_unregister_sync(void)
{
#ifndef KTRACE_UPROBES_BY_INODE
	/* Handlers run under RCU tasks trace: wait for them. */
	uprobe_unregister_sync();
#endif
}

static void ktrace_uprobe_free(struct ktrace_uprobe *tu)
{
	unsigned int i;

	for (i = 0; i < tu->nr_pids; i++) {
		put_pid(tu->pids[i]);
		if (tu->mms[i])
			mmdrop(tu->mms[i]);
	}
#ifdef KTRACE_UPROBES_BY_INODE
	if (tu->inode)
		iput(tu->inode);
#endif
	if (tu->path.dentry)
		path_put(&tu->path);
	kfree(tu);
}

static bool ktrace_uprobe_match(unsigned int i, const void *owner, u32 id)
{
	return ktrace_uprobes[i] && ktrace_uprobes[i]->owner == owner &&
	       (!id || i == id);
}

/*
 * Remove the probes of @owner (only probe @id, if not 0): unregister each,
 * wait once until no handler runs any of them, free them.  The mutex
 * keeps the table as it is between the passes.
 */
static void ktrace_uprobes_remove(const void *owner, u32 id)
{
	unsigned int i, nr = 0;

	lockdep_assert_held(&ktrace_uprobe_mutex);
	for (i = 1; i <= KTRACE_PROBE_MAX_ID; i++) {
		if (ktrace_uprobe_match(i, owner, id)) {
			ktrace_uprobe_unregister_nosync(ktrace_uprobes[i]);
			nr++;
		}
	}
	if (!nr)
		return;
	ktrace_uprobe_unregister_sync();
	for (i = 1; i <= KTRACE_PROBE_MAX_ID; i++) {
		if (ktrace_uprobe_match(i, owner, id)) {
			ktrace_uprobe_free(ktrace_uprobes[i]);
			ktrace_uprobes[i] = NULL;
		}
	}
}

/*
 * The checks of KTRACE_IOC_PROBE_ADD's program (every rule -EINVAL);
 * counts the value words into @tu->nr_words.
 */
static int ktrace_probe_check(struct ktrace_uprobe *tu)
{
	unsigned int i, derefs = 0, values = 0, words = 0;
	bool unrecorded_load = false;

	for (i = 0; i < tu->nr_ops; i++) {
		const struct ktrace_probe_op *op = &tu->ops[i];
		bool ok;

		switch (op->op) {
		case KTRACE_OP_REG:
			ok = !op->size && !op->flags && op->reg <= KTRACE_REG_MAX &&
			     !op->imm;
			break;
		case KTRACE_OP_CFA:
			ok = !op->size && !op->flags && !op->reg && !op->imm &&
			     !(tu->flags & KTRACE_PROBE_RETURN);
			break;
		case KTRACE_OP_ADD:
			ok = !op->size && !op->flags && !op->reg;
			break;
		case KTRACE_OP_DEREF:
			ok = is_power_of_2(op->size) && op->size <= 8 &&
			     !(op->flags & ~KTRACE_OP_SIGNED) && !op->reg && !op->imm;
			derefs++;
			unrecorded_load = true;
			break;
		case KTRACE_OP_EMIT:
			ok = is_power_of_2(op->size) && op->size <= 8 &&
			     !op->flags && !op->reg && !op->imm;
			values++;
			words += ktrace_op_words(op);
			unrecorded_load = false;
			break;
		case KTRACE_OP_STR:
			ok = op->size && op->size <= KTRACE_PROBE_MAX_STR &&
			     !op->flags && !op->reg && !op->imm;
			derefs++;
			values++;
			words += ktrace_op_words(op);
			unrecorded_load = false;
			break;
		default:
			ok = false;
			break;
		}
		if (!ok)
			return -EINVAL;
	}
	/* A faulting DEREF skips to the next value: there must be one. */
	if (unrecorded_load || derefs > KTRACE_PROBE_MAX_DEREFS ||
	    values > KTRACE_PROBE_MAX_VALUES || words > KTRACE_PROBE_MAX_WORDS)
		return -EINVAL;
	tu->nr_words = words;
	tu->nr_values = values;
	return 0;
}

/*
 * Decode @tu's checked program into @tu->steps, folding an ADD into the
 * DEREF right after it and a REG into the EMIT right after it.  Both folds
 * do what the two ops did: the ADD still moves the accumulator when the
 * DEREF is skipped, and the REG_EMIT still records a value missing after a
 * faulted load earlier in the same value.
 */
static void ktrace_probe_decode(struct ktrace_uprobe *tu)
{
	struct ktrace_uprobe_step *prev = NULL, *step;
	unsigned int i, n = 0;

	for (i = 0; i < tu->nr_ops; i++) {
		const struct ktrace_probe_op *op = &tu->ops[i];

		if (op->op == KTRACE_OP_DEREF && prev && prev->op == KTRACE_OP_ADD) {
			step = prev;		/* the ADD's offset stays in @imm */
		} else if (op->op == KTRACE_OP_EMIT && prev &&
			   prev->op == KTRACE_OP_REG) {
			step = prev;		/* @regs_off stays */
			step->op = KTRACE_STEP_REG_EMIT;
		} else {
			step = &tu->steps[n++];
			*step = (struct ktrace_uprobe_step) {
				.op = op->op,
				.imm = op->op == KTRACE_OP_ADD ? op->imm : 0,
			};
		}
		switch (op->op) {
		case KTRACE_OP_REG:
			step->regs_off = ktrace_dwarf_regs[op->reg];
			break;
		case KTRACE_OP_DEREF:
			step->op = KTRACE_OP_DEREF;
			step->size = op->size;
			step->is_signed = op->flags & KTRACE_OP_SIGNED;
			break;
		case KTRACE_OP_EMIT:
		case KTRACE_OP_STR:
			step->size = op->size;
			step->words = ktrace_op_words(op);
			break;
		}
		/* a folded step takes no third op */
		prev = step == prev ? NULL : step;
	}
	tu->nr_steps = n;
}

/*
 * @pid's address space, held by mmgrab() (not mmget(): not kept alive),
 * from any of its threads: a leader that called pthread_exit() has none.
 */
static struct mm_struct *ktrace_pid_mm(struct pid *pid)
{
	struct task_struct *task, *t, *found = NULL;
	struct mm_struct *mm = NULL;

	rcu_read_lock();
	task = pid_task(pid, PIDTYPE_TGID);
	if (task) {
		for_each_thread(task, t) {
			if (READ_ONCE(t->mm)) {
				found = get_task_struct(t);
				break;
			}
		}
	}
	rcu_read_unlock();
	if (found) {
		mm = get_task_mm(found);
		put_task_struct(found);
	}
	if (mm) {
		mmgrab(mm);
		mmput(mm);
	}
	return mm;
}

/*
 * The processes of @upids, in the caller's pid namespace, held, and the
 * address spaces they have now (none for a process exiting).
 */
static int ktrace_probe_get_pids(struct ktrace_uprobe *tu,
				 const s32 __user *upids)
{
	s32 nrs[KTRACE_PROBE_MAX_PIDS];
	struct pid *pid;
	unsigned int i;

	if (copy_from_user(nrs, upids, tu->nr_pids * sizeof(nrs[0])))
		return -EFAULT;
	for (i = 0; i < tu->nr_pids; i++) {
		if (nrs[i] <= 0)
			return -EINVAL;
		pid = find_get_pid(nrs[i]);
		/* Only a process: the pid of a thread group leader. */
		if (pid && !pid_has_task(pid, PIDTYPE_TGID)) {
			put_pid(pid);
			pid = NULL;
		}
		if (!pid)
			return -ESRCH;
		tu->pids[i] = pid;
		tu->mms[i] = ktrace_pid_mm(pid);
	}
	return 0;
}

/* The ioctls, from dev.c. */

/**
 * ktrace_probe_add - KTRACE_IOC_PROBE_ADD
 * @owner: the open file (its struct ktrace_reader), which needs CAP_SYS_ADMIN
 * @uarg:  struct ktrace_probe
 *
 * Return: 0 with the id in @uarg->id, or a negative errno; nothing stays
 * registered on an error (-EFAULT writing the id included).
 */
long ktrace_probe_add(const void *owner, void __user *uarg)
{
	struct ktrace_probe __user *uprobe = uarg;
	struct ktrace_uprobe *tu;
	struct ktrace_probe arg;
	struct file *file;
	unsigned int i;
	long ret;
	u32 id;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags & ~(KTRACE_PROBE_RETURN | KTRACE_PROBE_CHILDREN) ||
	    ((arg.flags & KTRACE_PROBE_CHILDREN) && !arg.nr_pids) ||
	    arg.nr_ops > KTRACE_PROBE_MAX_OPS ||
	    arg.nr_pids > KTRACE_PROBE_MAX_PIDS || arg.offset > LLONG_MAX ||
	    memchr_inv(arg.reserved, 0, sizeof(arg.reserved)))
		return -EINVAL;

	tu = kzalloc(sizeof(*tu), GFP_KERNEL);
	if (!tu)
		return -ENOMEM;
	tu->owner = owner;
	tu->flags = arg.flags;
	tu->offset = arg.offset;
	tu->nr_ops = arg.nr_ops;
	tu->nr_pids = arg.nr_pids;
	ret = -EFAULT;
	if (copy_from_user(tu->ops, u64_to_user_ptr(arg.ops),
			   arg.nr_ops * sizeof(tu->ops[0])))
		goto out_free;
	ret = ktrace_probe_check(tu);
	if (ret)
		goto out_free;
	ktrace_probe_decode(tu);
	ret = ktrace_probe_get_pids(tu, u64_to_user_ptr(arg.pids));
	if (ret)
		goto out_free;

	file = fget_raw(arg.fd);		/* O_PATH too */
	ret = -EBADF;
	if (!file)
		goto out_free;
	ret = -EINVAL;
	if (d_is_reg(file->f_path.dentry)) {
		tu->path = file->f_path;
		path_get(&tu->path);
		ret = 0;
	}
	fput(file);
	if (ret)
		goto out_free;

	tu->consumer.handler = ktrace_uprobe_handler;
	if (tu->flags & KTRACE_PROBE_RETURN)
		tu->consumer.ret_handler = ktrace_uprobe_ret_handler;
	tu->consumer.filter = ktrace_uprobe_filter;

	mutex_lock(&ktrace_uprobe_mutex);
	for (i = 1; i <= KTRACE_PROBE_MAX_ID && ktrace_uprobes[i]; i++)
		;
	ret = -ENOSPC;
	if (i > KTRACE_PROBE_MAX_ID)
		goto out_unlock;
	id = i;
	tu->event = KTRACE_CODE(KTRACE_GRP_probe, id);
	/* Hits may come from here on: @tu is complete. */
	ret = ktrace_uprobe_register(tu);
	if (ret)
		goto out_unlock;
	ktrace_uprobes[id] = tu;
	mutex_unlock(&ktrace_uprobe_mutex);

	/*
	 * The id goes out without the mutex: a page of the caller's that
	 * stalls (userfaultfd) holds this call only, not every probe ioctl.
	 * A caller that cannot learn the id cannot delete the probe: remove
	 * it, unless another thread of the caller already did.
	 */
	if (put_user(id, &uprobe->id)) {
		mutex_lock(&ktrace_uprobe_mutex);
		if (ktrace_uprobes[id] == tu)
			ktrace_uprobes_remove(owner, id);
		mutex_unlock(&ktrace_uprobe_mutex);
		return -EFAULT;
	}
	return 0;

out_unlock:
	mutex_unlock(&ktrace_uprobe_mutex);
out_free:
	ktrace_uprobe_free(tu);
	return ret;
}

/**
 * ktrace_probe_del - KTRACE_IOC_PROBE_DEL
 * @owner: the open file
 * @uarg:  struct ktrace_probe_del
 *
 * Return: 0 once no breakpoint of the probe is left and no handler runs it.
 */
long ktrace_probe_del(const void *owner, void __user *uarg)
{
	struct ktrace_probe_del arg;
	long ret = 0;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.reserved)
		return -EINVAL;
	if (!arg.id || arg.id > KTRACE_PROBE_MAX_ID)
		return -ENOENT;
	mutex_lock(&ktrace_uprobe_mutex);
	if (!ktrace_uprobes[arg.id])
		ret = -ENOENT;
	else if (ktrace_uprobes[arg.id]->owner != owner)
		ret = -EPERM;
	else
		ktrace_uprobes_remove(owner, arg.id);
	mutex_unlock(&ktrace_uprobe_mutex);
	return ret;
}

/* The file @owner is released (closed, or its process killed). */
void ktrace_probe_release(const void *owner)
{
	mutex_lock(&ktrace_uprobe_mutex);
	ktrace_uprobes_remove(owner, 0);
	mutex_unlock(&ktrace_uprobe_mutex);
}

/* Values the handlers found missing (ktrace_info.probe_missing). */
u64 ktrace_probe_missing(void)
{
	return atomic64_read(&ktrace_uprobe_missing);
}
