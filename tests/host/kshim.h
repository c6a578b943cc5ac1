/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kshim: just enough of the kernel's headers to compile kernel/ktrace/buffer.c
 * as a user program, for tests/host/buffer-model.c.  Every shared-memory
 * access buffer.c makes through READ_ONCE(), WRITE_ONCE(), the acquire and
 * release helpers, local_t and smp_mb() goes through the model's memory
 * (buffer-model.c): x86's TSO, a FIFO store buffer per CPU, and a point
 * where the model may switch CPUs, drain a store buffer or interrupt the
 * writer.  Plain accesses go straight to memory (stronger than TSO; buffer.c
 * only uses them for data the reader reads after an acquire).
 *
 * tests/host/kshim.sh makes every <linux/...> and <asm/...> header
 * buffer.c includes (but <linux/ktrace.h>) a one-line file including this.
 * With KSHIM_NO_KTRACE, <linux/ktrace.h> is that of a kernel without ktrace.
 */
#ifndef KSHIM_H
#define KSHIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#ifndef KSHIM_NO_KTRACE
#define CONFIG_KTRACE	1
#endif
#define CONFIG_SMP	1
#define KSHIM_NR_CPUS	2

typedef uint8_t u8;
typedef uint16_t u16;
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
typedef uint32_t __u32;
typedef int32_t __s32;
typedef uint64_t __u64;
typedef uint16_t __u16;
typedef uint8_t __u8;
typedef long ssize_t;
typedef unsigned int gfp_t;

#define __user
#define __init
#define notrace
#define __read_mostly
#define __maybe_unused		__attribute__((unused))
#undef __always_inline
#define __always_inline		inline __attribute__((always_inline))
#define ____cacheline_aligned_in_smp __attribute__((aligned(64)))
#define likely(x)		__builtin_expect(!!(x), 1)
#define unlikely(x)		__builtin_expect(!!(x), 0)
#define EXPORT_SYMBOL_GPL(sym)
#define module_param_named(name, var, type, perm)
#define MODULE_PARM_DESC(name, desc)
#define early_initcall(fn)
#define pr_warn(...)		((void)0)
#define pr_err(...)		((void)0)
#define WARN_ON_ONCE(c)		(c)
#define RCU_LOCKDEP_WARN(c, s)	((void)0)
#define BUILD_BUG_ON(c)		_Static_assert(!(c), #c)
#define ARRAY_SIZE(a)		(sizeof(a) / sizeof((a)[0]))
#define DIV_ROUND_UP(n, d)	(((n) + (d) - 1) / (d))
#define min(a, b)		((a) < (b) ? (a) : (b))
#define min_t(t, a, b)		min((t)(a), (t)(b))
#define min3(a, b, c)		min(min(a, b), c)
#define clamp(v, lo, hi)	min(((v) > (lo) ? (v) : (lo)), (hi))
#define array_size(a, b)	((size_t)(a) * (b))
#define lower_32_bits(v)	((u32)(v))
#define upper_32_bits(v)	((u32)((u64)(v) >> 32))
#define container_of(p, type, member) \
	((type *)((char *)(p) - offsetof(type, member)))
#define PAGE_SIZE		4096UL
#define GFP_KERNEL		1u
#define __GFP_RETRY_MAYFAIL	2u
#define __GFP_NOWARN		4u
#define EINVAL			22
#define EBUSY			16
#define ENOMEM			12
#define EINTR			4
#define EFAULT			14
#define EOPNOTSUPP		95

static inline unsigned long roundup_pow_of_two(unsigned long n)
{
	unsigned long p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

/* the model's memory, in buffer-model.c */
void kshim_load(const volatile void *p, void *v, size_t size);
void kshim_store(volatile void *p, const void *v, size_t size);
void kshim_mb(void);
void kshim_yield(void);
long kshim_local_cmpxchg(long *p, long old, long new);
long kshim_local_add_return(long *p, long n);
long kshim_local_xchg(long *p, long n);
int kshim_cmpxchg_int(int *p, int old, int new);
u64 kshim_rdtsc(void);
void kshim_irq_work_queue(void);
void *kshim_alloc(size_t size);
extern int kshim_cpu;

#define READ_ONCE(x) ({ __typeof__(x) __v; kshim_load(&(x), &__v, sizeof(x)); __v; })
#define WRITE_ONCE(x, val) do {						\
	__typeof__(x) __v = (val);					\
	kshim_store(&(x), &__v, sizeof(x));				\
} while (0)
#define smp_load_acquire(p)	READ_ONCE(*(p))
#define smp_store_release(p, v)	WRITE_ONCE(*(p), v)
#define smp_mb()		kshim_mb()

typedef struct { long a; } local_t;
#define local_read(l)		READ_ONCE((l)->a)
#define local_set(l, v)		WRITE_ONCE((l)->a, (v))
#define local_add(n, l)		((void)kshim_local_add_return(&(l)->a, (n)))
#define local_cmpxchg(l, o, n)	kshim_local_cmpxchg(&(l)->a, (o), (n))
#define local_xchg(l, n)	kshim_local_xchg(&(l)->a, (n))

typedef struct { int counter; } atomic_t;
#define atomic_read(v)		((v)->counter)
#define atomic_set(v, i)	((v)->counter = (i))
#define cmpxchg(p, o, n)	kshim_cmpxchg_int((p), (o), (n))

struct mutex { int unused; };
#define DEFINE_MUTEX(name)	struct mutex name
#define mutex_lock(m)		((void)(m))
#define mutex_unlock(m)		((void)(m))
#define lockdep_assert_held(m)	((void)(m))
#define cpus_read_lock()	((void)0)
#define cpus_read_unlock()	((void)0)
#define synchronize_rcu()	((void)0)
#define preempt_disable_notrace()	((void)0)
#define preempt_enable_notrace()	((void)0)

struct static_key_false { int enabled; };
#define DEFINE_STATIC_KEY_FALSE(name)	struct static_key_false name
#define DECLARE_STATIC_KEY_FALSE(name)	extern struct static_key_false name
#define static_branch_unlikely(k)	((k)->enabled)
#define static_branch_enable_cpuslocked(k)	((k)->enabled = 1)
#define static_branch_disable_cpuslocked(k)	((k)->enabled = 0)

struct irq_work { void (*func)(struct irq_work *work); };
#define init_irq_work(w, f)	((w)->func = (f))
#define irq_work_queue(w)	((void)(w), kshim_irq_work_queue())
typedef struct { int unused; } wait_queue_head_t;
#define init_waitqueue_head(q)	((void)(q))
#define wake_up_interruptible(q)	((void)(q))

#define DEFINE_PER_CPU_SHARED_ALIGNED(type, name) type name[KSHIM_NR_CPUS]
#define this_cpu_ptr(p)		(&(*(p))[kshim_cpu])
#define per_cpu_ptr(p, cpu)	(&(*(p))[cpu])
#define for_each_possible_cpu(cpu) for ((cpu) = 0; (cpu) < KSHIM_NR_CPUS; (cpu)++)
#define cpu_online(cpu)		1
#define cpu_to_node(cpu)	0
static const unsigned int nr_cpu_ids = KSHIM_NR_CPUS;
#define CPUHP_BP_PREPARE_DYN	0
#define cpuhp_setup_state(st, name, up, down) 0

struct task_struct { int pid, tgid; char comm[16]; };
extern struct task_struct kshim_task;
#define current			(&kshim_task)
#define task_pid_nr(t)		((t)->pid)
#define task_tgid_nr(t)		((t)->tgid)
#define strscpy_pad(d, s, n)	strncpy(d, s, n)	/* (d)[n - 1] is NUL here */
#define rcu_read_lock()		((void)0)
#define rcu_read_unlock()	((void)0)
/* the model has one task: current */
#define for_each_process_thread(g, t) \
	for ((g) = (t) = &kshim_task; (t); (g) = (t) = NULL)
#define fatal_signal_pending(t)	0
#define si_mem_available()	(1L << 30)

#define kvzalloc_node(size, gfp, node)	kshim_alloc(size)
#define kvfree(p)		free(p)
#define kcalloc(n, size, gfp)	calloc(n, size)
#define kfree(p)		free(p)
#define copy_to_user(to, from, n)	(memcpy(to, from, n), 0UL)

#define rdtsc()			kshim_rdtsc()
#define boot_cpu_has(f)		1
#define check_tsc_unstable()	0

#endif /* KSHIM_H */
