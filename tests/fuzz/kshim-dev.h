/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kshim-dev: what kernel/ktrace/dev.c needs of the kernel beyond
 * tests/host/kshim.h, for tests/fuzz/fuzz_uevent.c: one task on CPU 0,
 * user memory that is the fuzzer's (memdup_user() fails on demand), and
 * the device's registration as nothing.  Every dev.c header but
 * <linux/ktrace.h> is this file (tests/fuzz/run.sh makes them).
 */
#ifndef KSHIM_DEV_H
#define KSHIM_DEV_H

#include <asm-generic/ioctl.h>
#include <sys/types.h>		/* loff_t */

#include "../host/kshim.h"

typedef unsigned int __poll_t;
typedef struct { int unused; } poll_table;
struct inode { int unused; };
struct file { void *private_data; unsigned int f_flags; };
struct module;
#define THIS_MODULE		((struct module *)0)

struct file_operations {
	struct module *owner;
	int (*open)(struct inode *, struct file *);
	int (*release)(struct inode *, struct file *);
	ssize_t (*read)(struct file *, char *, size_t, loff_t *);
	ssize_t (*write)(struct file *, const char *, size_t, loff_t *);
	__poll_t (*poll)(struct file *, poll_table *);
	long (*unlocked_ioctl)(struct file *, unsigned int, unsigned long);
	long (*compat_ioctl)(struct file *, unsigned int, unsigned long);
};
struct miscdevice {
	int minor;
	const char *name;
	const struct file_operations *fops;
	unsigned short mode;
};
#define MISC_DYNAMIC_MINOR	255
#define misc_register(m)	((void)(m), 0)
#define misc_deregister(m)	((void)(m))
#define device_initcall(fn)
#define compat_ptr_ioctl	NULL
#define stream_open(i, f)	((void)(i), (void)(f), 0)

#define EPERM			1
#define EAGAIN			11
#define ENOTTY			25
#define ENODEV			19
#define ERESTARTSYS		512
#define O_NONBLOCK		04000
#define EPOLLIN			0x1
#define EPOLLERR		0x8
#define EPOLLRDNORM		0x40
#define poll_wait(f, q, w)	((void)(f), (void)(q), (void)(w))

#define MAX_ERRNO		4095
#define IS_ERR(p)		((unsigned long)(p) >= (unsigned long)-MAX_ERRNO)
#define PTR_ERR(p)		((long)(p))
#define ERR_PTR(e)		((void *)(long)(e))

/* The fuzzer's: nonzero makes the next memdup_user() fail with -EFAULT. */
extern int kshim_fault_user;

static inline void *memdup_user(const void *src, size_t len)
{
	void *p;

	if (kshim_fault_user)
		return ERR_PTR(-EFAULT);
	p = malloc(len);
	if (!p)
		return ERR_PTR(-ENOMEM);
	return memcpy(p, src, len);
}

#define copy_from_user(to, from, n)	(memcpy(to, from, n), 0UL)
#define kzalloc(size, gfp)		calloc(1, size)
#define mutex_init(m)			((void)(m))
#define mutex_lock_interruptible(m)	((void)(m), 0)
#define schedule_timeout_interruptible(t)	((void)(t))
#define wait_event_interruptible(q, c)	((void)(q), !(c))
#define signal_pending(t)		((void)(t), 0)
#define cpu_possible(cpu)		((cpu) < KSHIM_NR_CPUS)
#define atomic_cmpxchg(v, o, n)		kshim_cmpxchg_int(&(v)->counter, (o), (n))
#define atomic_set_release(v, i)	atomic_set(v, i)
#define security_locked_down(what)	0
#define LOCKDOWN_TRACEFS		0
#define perfmon_capable()		1
#define capable(cap)			1
#define CAP_SYS_ADMIN			21
static const unsigned int tsc_khz = 2400000;

#endif /* KSHIM_DEV_H */
