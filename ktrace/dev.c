// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace: the control file, /dev/ktrace: one wrapper per ioctl, which
 * says in the user's terms why the kernel refused (declared in ktrace.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <string.h>
#include <sys/ioctl.h>

#include "ktrace.h"
#include "util.h"

int dev_open(const char *dev)
{
	int fd = open(dev, O_RDWR | O_CLOEXEC);

	if (fd >= 0)
		return fd;
	switch (errno) {
	case ENOENT:
	case ENODEV:
	case ENXIO:
		die(KTRACE_DEV_MISSING_FMT, dev);
	case EACCES:
	case EPERM:
		die("%s: %s: ktrace needs root (CAP_SYS_ADMIN)", dev, strerror(errno));
	default:
		die("%s: %s", dev, strerror(errno));
	}
}

void dev_info(int ctl, const char *dev, struct ktrace_info *info)
{
	if (ioctl(ctl, KTRACE_IOC_INFO, info) < 0) {
		if (errno == ENOTTY || errno == EINVAL)
			die("%s: not a ktrace device", dev);
		die("%s: KTRACE_IOC_INFO: %s", dev, strerror(errno));
	}
	if (info->version != KTRACE_ABI_VERSION ||
	    info->record_size != sizeof(struct ktrace_record))
		die("%s: ktrace ABI version %u, record size %u; this ktrace knows "
		    "version %u, record size %zu", dev, info->version,
		    info->record_size, KTRACE_ABI_VERSION, sizeof(struct ktrace_record));
	if (!info->nr_cpu_ids)
		die("%s: the kernel reports no CPUs", dev);
}

void dev_set_mask(int ctl, const char *dev, uint32_t mask)
{
	struct ktrace_mask m = { .mask = mask };

	if (ioctl(ctl, KTRACE_IOC_SET_MASK, &m) < 0) {
		if (errno == EINVAL)
			die("mask 0x%x: the kernel does not know all of these groups", mask);
		die("%s: setting the mask to 0x%x: %s", dev, mask, strerror(errno));
	}
}

/*
 * KTRACE_MASK_SESSION: this ktrace owns tracing until it exits or is
 * killed (the kernel then puts back the mask before it, in the normal
 * mode); the first call empties the buffers of what an earlier session
 * left.  Returns 0, or -errno for EBUSY (said why, as for a second
 * recording ktrace); a kernel without sessions gets the plain mask, with
 * a warning.
 */
int dev_session_mask(int ctl, const char *dev, uint32_t mask)
{
	struct ktrace_mask m = { .mask = mask, .flags = KTRACE_MASK_SESSION };
	static bool warned;

	if (ioctl(ctl, KTRACE_IOC_SET_MASK, &m) == 0)
		return 0;
	if (errno == EBUSY)
		return -EBUSY;
	if (errno != EINVAL)
		die("%s: setting the mask to 0x%x: %s", dev, mask, strerror(errno));
	if (!warned)
		pr_warn("%s: this kernel's ktrace has no sessions: if ktrace is killed, "
			"tracing stays on (ktrace -e 0 turns it off)", dev);
	warned = true;
	dev_set_mask(ctl, dev, mask);
	return 0;
}

void dev_set_mode(int ctl, const char *dev, uint32_t flags)
{
	struct ktrace_mode m = { .flags = flags };

	if (ioctl(ctl, KTRACE_IOC_SET_MODE, &m) == 0)
		return;
	if (errno == ENOTTY)
		die("%s: this kernel's ktrace has no overwrite mode (--flight)", dev);
	if (errno == EBUSY)
		die("%s: the buffers are in use (another ktrace is recording?)", dev);
	die("%s: KTRACE_IOC_SET_MODE: %s", dev, strerror(errno));
}

/*
 * -b: the kernel resizes only while tracing is off, so turn it off for the
 * resize and then on with @then_mask (the old mask, or -e's).  The buffers
 * start empty.
 */
void dev_set_buf_size(int ctl, const char *dev, struct ktrace_info *info,
		      uint32_t records, uint32_t then_mask)
{
	struct ktrace_buf_size bs = { .records = records };
	int ret, err;

	if (info->mask) {
		pr_debug("turning tracing off to resize the buffers");
		dev_set_mask(ctl, dev, 0);
	}
	ret = ioctl(ctl, KTRACE_IOC_SET_BUF_SIZE, &bs);
	err = errno;
	if (ret < 0 && info->mask)
		dev_set_mask(ctl, dev, info->mask);
	if (ret < 0) {
		switch (err) {
		case EBUSY:
			die("-b %u: the buffers are in use (another ktrace is recording?)",
			    records);
		case ENOMEM:
			die("-b %u: not enough memory for %u records on each of %u CPUs",
			    records, records, info->nr_cpu_ids);
		case EINVAL:
			die("-b %u: the kernel refuses this size (%u-%u records)",
			    records, KTRACE_BUF_MIN, KTRACE_BUF_MAX);
		default:
			die("-b %u: %s", records, strerror(err));
		}
	}
	if (then_mask)
		dev_set_mask(ctl, dev, then_mask);
	dev_info(ctl, dev, info);
	if (info->buf_records != records)
		pr_info("buffer size rounded up to %u records per CPU", info->buf_records);
}

/*
 * Have the kernel name every task in the trace (thread:name events), so
 * that dtrace names the tasks that were there before we started.
 */
void dev_name_tasks(int ctl, const char *dev)
{
	struct ktrace_name_tasks nt = { 0 };
	int nr = ioctl(ctl, KTRACE_IOC_NAME_TASKS, &nt);

	if (nr >= 0)
		pr_debug("%s: named %d tasks", dev, nr);
	else if (errno == ENOTTY)
		pr_warn("%s: this kernel's ktrace cannot name the tasks that exist now: "
			"dtrace shows them as <...>-TID until they are renamed", dev);
	else
		pr_warn("%s: naming the tasks that exist now: %s", dev, strerror(errno));
}

int dev_cpu_stats(int ctl, unsigned int cpu, struct ktrace_cpu_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->cpu = cpu;
	return ioctl(ctl, KTRACE_IOC_CPU_STATS, st);
}

bool dev_put_mask_back(int ctl, const char *dev, uint32_t mask)
{
	struct ktrace_mask m = { .mask = mask };

	if (ioctl(ctl, KTRACE_IOC_SET_MASK, &m) == 0)
		return true;
	pr_err("%s: putting the mask back to 0x%x: %s", dev, mask, strerror(errno));
	return false;
}
