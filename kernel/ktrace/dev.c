// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace: the /dev/ktrace character device.
 *
 * ioctls get and set the group mask, report per-CPU statistics, resize the
 * buffers, choose overwrite mode (a flight recorder) and attach an open
 * file to one CPU's buffer; read() then returns that CPU's records, whole
 * records only, and poll() waits for them.
 * write() lets user space add events of group "user" to the current CPU's
 * stream, stamped by the kernel.
 *
 * Permissions are checked once, at open(), as for a perf event: the file
 * keeps what its opener could do, so it can be passed on.  Opening needs
 * CAP_PERFMON (or CAP_SYS_ADMIN) and is refused under
 * lockdown=confidentiality, since records hold kernel addresses (timer
 * functions, NMI instruction pointers); changing the group mask or the
 * buffer size needs CAP_SYS_ADMIN at open().
 */

#include <linux/capability.h>
#include <linux/cpumask.h>
#include <linux/fs.h>
#include <linux/log2.h>
#include <linux/miscdevice.h>
#include <linux/poll.h>
#include <linux/security.h>
#include <linux/sched/signal.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <asm/tsc.h>

#include "internal.h"

/* Records one write() may carry: several events with their continuations. */
#define KTRACE_WRITE_MAX	64

/*
 * struct ktrace_reader - an open /dev/ktrace
 *
 * Lifetime: open() to release().  @buf is set once, by KTRACE_IOC_ATTACH_CPU
 * under ktrace_mutex, and owns that buffer's reader slot until release().
 * A file that started a session (KTRACE_MASK_SESSION) owns tracing until
 * release() too, which ends the session.
 * read() and poll() on one file are serialized by @lock.
 */
struct ktrace_reader {
	struct ktrace_buf	*buf;
	struct mutex		lock;		/* serializes read() */
	bool			admin;		/* opener had CAP_SYS_ADMIN */
};

static ssize_t ktrace_read(struct file *file, char __user *ubuf, size_t count,
			   loff_t *ppos)
{
	struct ktrace_reader *reader = file->private_data;
	/* Pairs with smp_store_release() in ktrace_ioc_attach_cpu(). */
	struct ktrace_buf *buf = smp_load_acquire(&reader->buf);
	ssize_t nr;

	if (!buf || count < sizeof(struct ktrace_record))
		return -EINVAL;

	if (mutex_lock_interruptible(&reader->lock))
		return -ERESTARTSYS;
	for (;;) {
		nr = ktrace_buf_read(buf, ubuf, count / sizeof(struct ktrace_record));
		if (nr)
			break;
		if (file->f_flags & O_NONBLOCK) {
			nr = -EAGAIN;
			break;
		}
		/*
		 * The window's last record is published but an earlier one is
		 * not: its writer, interrupted on its CPU, finishes soon.
		 */
		if (ktrace_buf_wait_ready(buf)) {
			schedule_timeout_interruptible(1);
		} else if (wait_event_interruptible(buf->wait,
						    ktrace_buf_wait_ready(buf))) {
			nr = -ERESTARTSYS;
			break;
		}
		if (signal_pending(current)) {
			nr = -ERESTARTSYS;
			break;
		}
	}
	mutex_unlock(&reader->lock);
	return nr < 0 ? nr : nr * sizeof(struct ktrace_record);
}

static __poll_t ktrace_poll(struct file *file, poll_table *wait)
{
	struct ktrace_reader *reader = file->private_data;
	/* Pairs with smp_store_release() in ktrace_ioc_attach_cpu(). */
	struct ktrace_buf *buf = smp_load_acquire(&reader->buf);

	if (!buf)
		return EPOLLERR;
	poll_wait(file, &buf->wait, wait);
	return ktrace_buf_wait_ready(buf) ? EPOLLIN | EPOLLRDNORM : 0;
}

/*
 * A user event is one record of group "user" alone, followed by its
 * continuation records numbered 0, 1, ... with END on the last.  User
 * space leaves tsc and tid zero; the kernel stamps them.
 */
static int ktrace_user_event_len(const struct ktrace_record *recs,
				 unsigned int nr)
{
	unsigned int len = 1, i;
	u32 event;

	if ((recs[0].event & ~(0xffU << KTRACE_SUB_SHIFT)) != KTRACE_GRP_user)
		return -EINVAL;
	while (len < nr && (recs[len].event & KTRACE_EVT_CONT)) {
		event = recs[len].event;
		if ((event & KTRACE_GROUP_MASK) || KTRACE_SUB(event) != len - 1 ||
		    2 * (len + 1) > KTRACE_MAX_ARGS)
			return -EINVAL;
		len++;
		if (event & KTRACE_EVT_END)
			break;
	}
	if (len > 1 && !(recs[len - 1].event & KTRACE_EVT_END))
		return -EINVAL;
	for (i = 0; i < len; i++)
		if (recs[i].tsc || recs[i].tid)
			return -EINVAL;
	return len;
}

static ssize_t ktrace_write_user(struct file *file, const char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	struct ktrace_record *recs;
	u32 args[KTRACE_MAX_ARGS];
	unsigned int nr, i, j;
	int len, ret;

	if (!count || count % sizeof(*recs) ||
	    count > KTRACE_WRITE_MAX * sizeof(*recs))
		return -EINVAL;
	nr = count / sizeof(*recs);

	recs = memdup_user(ubuf, count);
	if (IS_ERR(recs))
		return PTR_ERR(recs);

	/* Check everything before recording anything. */
	for (i = 0; i < nr; i += len) {
		len = ktrace_user_event_len(&recs[i], nr - i);
		if (len < 0) {
			ret = len;
			goto out_free_recs;
		}
	}
	for (i = 0; i < nr; i += len) {
		len = ktrace_user_event_len(&recs[i], nr - i);
		for (j = 0; j < len; j++) {
			args[2 * j] = recs[i + j].arg1;
			args[2 * j + 1] = recs[i + j].arg2;
		}
		if (ktrace_on(recs[i].event))
			ktrace_write_args(recs[i].event, args, 2 * len);
	}
	ret = count;
out_free_recs:
	kfree(recs);
	return ret;
}

static long ktrace_ioc_info(void __user *uarg)
{
	struct ktrace_info info;

	memset(&info, 0, sizeof(info));
	info.version = KTRACE_ABI_VERSION;
	info.record_size = sizeof(struct ktrace_record);
	info.nr_cpu_ids = nr_cpu_ids;
	info.flags = ktrace_tsc_invariant() ? KTRACE_INFO_TSC_INVARIANT : 0;
	if (READ_ONCE(ktrace_overwrite))
		info.flags |= KTRACE_INFO_OVERWRITE;
	info.tsc_khz = tsc_khz;
	info.mask = READ_ONCE(ktrace_group_mask);
	info.buf_records = READ_ONCE(ktrace_buf_records);
	info.probe_missing = ktrace_probe_missing();
	return copy_to_user(uarg, &info, sizeof(info)) ? -EFAULT : 0;
}

static long ktrace_ioc_set_mask(struct ktrace_reader *reader, void __user *uarg)
{
	struct ktrace_mask arg;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags & ~KTRACE_MASK_SESSION)
		return -EINVAL;
	return ktrace_set_session_mask(arg.mask, arg.flags & KTRACE_MASK_SESSION,
				       reader);
}

static long ktrace_ioc_cpu_stats(void __user *uarg)
{
	struct ktrace_cpu_stats stats;
	struct ktrace_buf *buf;
	u32 cpu;

	if (copy_from_user(&stats, uarg, sizeof(stats)))
		return -EFAULT;
	if (stats.flags || stats.pad || stats.overwritten || stats.discarded)
		return -EINVAL;
	cpu = stats.cpu;
	if (cpu >= nr_cpu_ids || !cpu_possible(cpu))
		return -EINVAL;

	buf = ktrace_cpu_buf(cpu);
	memset(&stats, 0, sizeof(stats));
	stats.cpu = cpu;
	mutex_lock(&ktrace_mutex);
	if (cpu_online(cpu))
		stats.flags |= KTRACE_CPU_ONLINE;
	if (atomic_read(&buf->reader))
		stats.flags |= KTRACE_CPU_READER;
	/* A CPU without a buffer still counts what it lost. */
	stats.written = local_read(&buf->written);
	stats.lost = local_read(&buf->lost);
	stats.read = READ_ONCE(buf->read);
	stats.overwritten = local_read(&buf->overwritten);
	stats.discarded = buf->discarded;
	stats.buf_records = buf->recs ? buf->size : 0;
	mutex_unlock(&ktrace_mutex);
	return copy_to_user(uarg, &stats, sizeof(stats)) ? -EFAULT : 0;
}

static long ktrace_ioc_set_buf_size(void __user *uarg)
{
	struct ktrace_buf_size arg;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.reserved)
		return -EINVAL;
	return ktrace_resize(arg.records);
}

static long ktrace_ioc_attach_cpu(struct ktrace_reader *reader,
				  void __user *uarg)
{
	struct ktrace_attach arg;
	struct ktrace_buf *buf;
	long ret = 0;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.reserved || arg.cpu >= nr_cpu_ids || !cpu_possible(arg.cpu))
		return -EINVAL;

	buf = ktrace_cpu_buf(arg.cpu);
	mutex_lock(&ktrace_mutex);
	if (reader->buf) {
		ret = -EBUSY;		/* one CPU per open file */
		goto out_unlock;
	}
	if (!buf->recs) {
		ret = -ENODEV;		/* never online, so it has no buffer */
		goto out_unlock;
	}
	/*
	 * Overwrite mode: writers move @tail, so no reader while they run;
	 * a reader holds tracing off, so only one who may turn it on reads.
	 */
	if (ktrace_overwrite && !reader->admin) {
		ret = -EPERM;
		goto out_unlock;
	}
	if (ktrace_overwrite && ktrace_group_mask) {
		ret = -EBUSY;
		goto out_unlock;
	}
	if (atomic_cmpxchg(&buf->reader, 0, 1)) {
		ret = -EBUSY;
		goto out_unlock;
	}
	ktrace_set_wakeup(buf, 1);
	buf->skip_cont = true;
	/* The buffer's state before it: pairs with smp_load_acquire() in ktrace_read(). */
	smp_store_release(&reader->buf, buf);
out_unlock:
	mutex_unlock(&ktrace_mutex);
	return ret;
}

static long ktrace_ioc_set_wakeup(struct ktrace_reader *reader,
				  void __user *uarg)
{
	struct ktrace_buf *buf = READ_ONCE(reader->buf);
	struct ktrace_wakeup arg;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	/* The buffer cannot be resized while we are attached to it. */
	if (arg.reserved || !buf || !arg.records ||
	    arg.records > buf->size / 2)
		return -EINVAL;
	mutex_lock(&ktrace_mutex);
	ktrace_set_wakeup(buf, roundup_pow_of_two(arg.records));
	mutex_unlock(&ktrace_mutex);
	return 0;
}

static long ktrace_ioc_name_tasks(void __user *uarg)
{
	struct ktrace_name_tasks arg;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if (arg.flags || arg.reserved)
		return -EINVAL;
	return ktrace_name_tasks();
}

static long ktrace_ioc_set_mode(void __user *uarg)
{
	struct ktrace_mode arg;

	if (copy_from_user(&arg, uarg, sizeof(arg)))
		return -EFAULT;
	if ((arg.flags & ~KTRACE_MODE_OVERWRITE) || arg.reserved)
		return -EINVAL;
	return ktrace_set_overwrite(arg.flags & KTRACE_MODE_OVERWRITE);
}

static long ktrace_ioctl(struct file *file, unsigned int cmd, unsigned long arg)
{
	struct ktrace_reader *reader = file->private_data;
	void __user *uarg = (void __user *)arg;

	switch (cmd) {
	case KTRACE_IOC_INFO:
		return ktrace_ioc_info(uarg);
	case KTRACE_IOC_SET_MASK:
		return reader->admin ? ktrace_ioc_set_mask(reader, uarg) : -EPERM;
	case KTRACE_IOC_CPU_STATS:
		return ktrace_ioc_cpu_stats(uarg);
	case KTRACE_IOC_SET_BUF_SIZE:
		return reader->admin ? ktrace_ioc_set_buf_size(uarg) : -EPERM;
	case KTRACE_IOC_ATTACH_CPU:
		return ktrace_ioc_attach_cpu(reader, uarg);
	case KTRACE_IOC_SET_WAKEUP:
		return ktrace_ioc_set_wakeup(reader, uarg);
	case KTRACE_IOC_NAME_TASKS:
		return reader->admin ? ktrace_ioc_name_tasks(uarg) : -EPERM;
	case KTRACE_IOC_SET_MODE:
		return reader->admin ? ktrace_ioc_set_mode(uarg) : -EPERM;
	case KTRACE_IOC_PROBE_ADD:
		return reader->admin ? ktrace_probe_add(reader, uarg) : -EPERM;
	case KTRACE_IOC_PROBE_DEL:
		return reader->admin ? ktrace_probe_del(reader, uarg) : -EPERM;
	default:
		return -ENOTTY;
	}
}

static int ktrace_open(struct inode *inode, struct file *file)
{
	struct ktrace_reader *reader;
	int ret;

	/* Records hold kernel addresses: refused where ftrace is. */
	ret = security_locked_down(LOCKDOWN_TRACEFS);
	if (ret)
		return ret;
	if (!perfmon_capable())
		return -EPERM;

	reader = kzalloc(sizeof(*reader), GFP_KERNEL);
	if (!reader)
		return -ENOMEM;
	mutex_init(&reader->lock);
	reader->admin = capable(CAP_SYS_ADMIN);
	file->private_data = reader;
	return stream_open(inode, file);
}

static int ktrace_release(struct inode *inode, struct file *file)
{
	struct ktrace_reader *reader = file->private_data;
	struct ktrace_buf *buf = reader->buf;

	/* A killed tracer leaves neither tracing on nor probes behind. */
	if (reader->admin) {
		ktrace_session_release(reader);
		ktrace_probe_release(reader);
	}
	if (buf) {
		/* No reader waits: wakeup checks once per lap of the ring. */
		WRITE_ONCE(buf->wakeup_mask, buf->size - 1);
		/* Pairs with atomic_cmpxchg() in ktrace_ioc_attach_cpu(). */
		atomic_set_release(&buf->reader, 0);
	}
	kfree(reader);
	return 0;
}

static const struct file_operations ktrace_fops = {
	.owner		= THIS_MODULE,
	.open		= ktrace_open,
	.release	= ktrace_release,
	.read		= ktrace_read,
	.write		= ktrace_write_user,
	.poll		= ktrace_poll,
	.unlocked_ioctl	= ktrace_ioctl,
	.compat_ioctl	= compat_ptr_ioctl,
};

static struct miscdevice ktrace_misc = {
	.minor	= MISC_DYNAMIC_MINOR,
	.name	= "ktrace",
	.fops	= &ktrace_fops,
	.mode	= 0600,
};

static int __init ktrace_dev_init(void)
{
	return misc_register(&ktrace_misc);
}

#ifdef MODULE
/* ktrace.ko: module.c registers the device last and removes it first. */
int __init ktrace_dev_module_init(void)
{
	return ktrace_dev_init();
}

void ktrace_dev_module_exit(void)
{
	misc_deregister(&ktrace_misc);
}
#else
device_initcall(ktrace_dev_init);
#endif
