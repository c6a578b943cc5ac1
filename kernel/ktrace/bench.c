// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace: an in-kernel benchmark of the TRACE() fast path.
 *
 * Writing a loop count to /sys/kernel/debug/ktrace/benchmark runs that many
 * TRACE(KTRACE_user_mark, ...) calls on the current CPU, timed with the
 * TSC, with preemption off in chunks; reading the file gives the result of
 * the last run.  What is measured depends on the state the caller set up:
 * tracing off (the static-key NOP), on without group "user" (the mask
 * test), or on with it (a record written).
 */

#include <linux/debugfs.h>
#include <linux/fs.h>
#include <linux/kernel.h>
#include <linux/ktrace.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/uaccess.h>
#include <asm/tsc.h>

/* Loops per preemption-off chunk, and per run. */
#define KTRACE_BENCH_CHUNK	10000
#define KTRACE_BENCH_MAX	100000000ULL

/* The last run's result; written and read under ktrace_bench_mutex. */
static DEFINE_MUTEX(ktrace_bench_mutex);
static u64 ktrace_bench_loops;
static u64 ktrace_bench_cycles;

static u64 ktrace_bench_run(u64 loops)
{
	u64 done = 0, cycles = 0, start, i, n;

	while (done < loops) {
		n = min_t(u64, loops - done, KTRACE_BENCH_CHUNK);
		preempt_disable();
		start = rdtsc_ordered();
		for (i = 0; i < n; i++)
			TRACE(KTRACE_user_mark, i, done);
		cycles += rdtsc_ordered() - start;
		preempt_enable();
		done += n;
		cond_resched();
	}
	return cycles;
}

static ssize_t ktrace_bench_write(struct file *file, const char __user *ubuf,
				  size_t count, loff_t *ppos)
{
	u64 loops;
	int ret;

	ret = kstrtoull_from_user(ubuf, count, 0, &loops);
	if (ret)
		return ret;
	if (!loops || loops > KTRACE_BENCH_MAX)
		return -EINVAL;

	mutex_lock(&ktrace_bench_mutex);
	ktrace_bench_cycles = ktrace_bench_run(loops);
	ktrace_bench_loops = loops;
	mutex_unlock(&ktrace_bench_mutex);
	return count;
}

static ssize_t ktrace_bench_read(struct file *file, char __user *ubuf,
				 size_t count, loff_t *ppos)
{
	u64 loops, cycles, milli_cycles, pico_sec;
	char buf[128];
	int len;

	mutex_lock(&ktrace_bench_mutex);
	loops = ktrace_bench_loops;
	cycles = ktrace_bench_cycles;
	mutex_unlock(&ktrace_bench_mutex);

	/* cycles / (tsc_khz * 1000) seconds, in picoseconds */
	milli_cycles = loops ? div64_u64(cycles * 1000, loops) : 0;
	pico_sec = tsc_khz ? div64_u64(milli_cycles * 1000000, tsc_khz) : 0;
	len = scnprintf(buf, sizeof(buf),
			"loops %llu cycles %llu cycles_per_event %llu.%03llu ns_per_event %llu.%03llu\n",
			loops, cycles, milli_cycles / 1000, milli_cycles % 1000,
			pico_sec / 1000, pico_sec % 1000);
	return simple_read_from_buffer(ubuf, count, ppos, buf, len);
}

static const struct file_operations ktrace_bench_fops = {
	.owner	= THIS_MODULE,
	.read	= ktrace_bench_read,
	.write	= ktrace_bench_write,
	.llseek	= default_llseek,
};

static int __init ktrace_bench_init(void)
{
	struct dentry *dir = debugfs_create_dir("ktrace", NULL);

	debugfs_create_file("benchmark", 0600, dir, NULL, &ktrace_bench_fops);
	return 0;
}
late_initcall(ktrace_bench_init);
