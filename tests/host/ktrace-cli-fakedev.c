// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace-cli-fakedev: a stand-in for /dev/ktrace, preloaded (LD_PRELOAD)
 * into the dynamic ktrace by tests/host/40-ktrace-cli.sh, so the recording
 * path (attach, ppoll, drain, lost reports, mask restore, files, disk full)
 * is tested on a host without the patched kernel.
 *
 * It answers for the path in $KTFAKE_PATH (give ktrace the same path in
 * $KTRACE_DEV) with the device semantics ktrace relies on: the ioctls of
 * <linux/ktrace.h>, one reader per CPU (EBUSY), read() of whole records
 * only (EINVAL below 24 bytes, EAGAIN when empty and O_NONBLOCK), POLLIN
 * when the wakeup watermark's worth of records wait.  While the mask is set, each CPU writes $KTFAKE_RATE
 * records a second into a buffer of the set size; what does not fit is
 * counted lost and a KTRACE_META_LOST marker is written.  KTRACE_MASK_SESSION
 * is accepted and sets the mask; ownership (the kernel puts the mask back
 * when the owner is released) is not modelled: tests/vm checks it.  In overwrite mode
 * (KTRACE_IOC_SET_MODE) nothing is lost: the oldest records are counted
 * overwritten, and a reader gets the newest.  Record number i of a CPU's
 * stream has arg1 = i, so a test can tell which records it got.  ktrace
 * reads each CPU from its own thread: one lock serializes the fake's state.
 *
 *   KTFAKE_STATE    file keeping "mask buf_records overwrite" between runs
 *                   (required)
 *   KTFAKE_CPUS     nr_cpu_ids (4)     KTFAKE_OFFLINE  an offline CPU
 *   KTFAKE_BUSY     a CPU that has another reader: in overwrite mode it
 *                   also keeps tracing from being turned on and the mode
 *                   from changing (EBUSY), as the kernel does
 *   KTFAKE_BUSY_TRIES  that reader goes after this many calls it refused
 *   KTFAKE_RATE     records per second per CPU (1000)
 *   KTFAKE_STATS    file to write "CPU WRITTEN LOST" lines to at exit (the
 *                   counters live in the process, not in KTFAKE_STATE)
 *   KTFAKE_EACCES   set: open fails with EACCES (not root)
 *   KTFAKE_PROC     directory whose kallsyms and interrupts files stand in
 *                   for /proc's (unset: ktrace finds none, as on a kernel
 *                   without them), so the tests do not depend on the host
 *   KTFAKE_PROBES   file to append each KTRACE_IOC_PROBE_ADD to, one line:
 *                   "probe ID FLAGS 0xOFFSET PIDS OPS PATH", PIDS "1,2" or
 *                   "-", OPS "op,size,flags,reg,imm/..." or "-", PATH the
 *                   binary the fd names (tests/probe/probe-eval.c runs them)
 *   KTFAKE_PROBE_ERR  an errno number PROBE_ADD fails with
 *   KTFAKE_PROBE_IDS  ids the fake has (255): ENOSPC after them
 *   KTFAKE_MARKS    file of lines "TSC ARG1 ARG2" (ktnet-pingpong.c writes
 *                   them) that CPU 0 reads out as user:mark records, the
 *                   real TSC's time stamps: with it the fake's TSC rate is
 *                   the real one, measured (give KTFAKE_RATE=0 too)
 *   KTFAKE_CLOCK_PPM, KTFAKE_CLOCK_OFFSET
 *                   a machine whose clock is off: the process's
 *                   CLOCK_MONOTONIC reads real * (1 + PPM / 1e6) + OFFSET
 *                   (ns), so its clock probes, its files' reference times
 *                   and the TSC rate measured against it (KTFAKE_MARKS, over
 *                   0.2 s) all drift as one machine's would; the TSC the
 *                   marks carry stays the real one.  The ground truth of
 *                   the offset and drift dtrace --machines measures.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/ktrace.h>
#include <x86intrin.h>

#define MAX_CPUS	64
#define MAX_FDS		1024

struct fake_cpu {
	double on_seconds;	/* time the mask was set, up to on_since */
	uint64_t written, lost, read, overwritten;
	uint64_t marker;	/* lost count a META_LOST record still owes */
	uint64_t lost_told;	/* lost records the markers told of */
	uint32_t wakeup;	/* KTRACE_IOC_SET_WAKEUP, 1 at attach */
	bool attached;
};

static struct fake_cpu cpus[MAX_CPUS];
static int fake_fd[MAX_FDS];	/* 0: not ours; 1: ours; 2 + cpu: attached */
static uint32_t mask, buf_records = 4096;
static double on_since;		/* when the mask was set, 0 while off */
static unsigned int nr_cpus = 4;
static int offline_cpu = -1, busy_cpu = -1, busy_tries = -1;
static double rate = 1000;
static FILE *marks;		/* KTFAKE_MARKS */
static uint64_t marks_read, tsc_khz = 1000000;	/* "tsc" counts ns unless marks */
static bool loaded, overwrite;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static double clock_ppm, clock_offset;	/* KTFAKE_CLOCK_PPM, _OFFSET */

int clock_gettime(clockid_t clk, struct timespec *ts)
{
	static int (*real)(clockid_t, struct timespec *);
	static bool drift_read;
	long double ns;
	int ret;

	if (!real)
		real = dlsym(RTLD_NEXT, "clock_gettime");
	if (!drift_read) {
		const char *ppm = getenv("KTFAKE_CLOCK_PPM"), *off = getenv("KTFAKE_CLOCK_OFFSET");

		clock_ppm = ppm ? atof(ppm) : 0;
		clock_offset = off ? atof(off) : 0;
		drift_read = true;
	}
	ret = real(clk, ts);
	if (ret || clk != CLOCK_MONOTONIC || (!clock_ppm && !clock_offset))
		return ret;
	ns = (long double)ts->tv_sec * 1e9L + ts->tv_nsec;
	ns = ns * (1 + clock_ppm / 1e6L) + clock_offset;
	ts->tv_sec = (time_t)(ns / 1e9L);
	ts->tv_nsec = (long)(ns - (long double)ts->tv_sec * 1e9L);
	return 0;
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* The TSC and the clock at one moment: the read of 8 bracketed most tightly. */
static void tsc_clock_pair(uint64_t *tsc, double *t)
{
	uint64_t best = UINT64_MAX;

	for (int i = 0; i < 8; i++) {
		uint64_t a = __rdtsc();
		double n = now();
		uint64_t b = __rdtsc();

		if (b - a < best) {
			best = b - a;
			*tsc = a + (b - a) / 2;
			*t = n;
		}
	}
}

static int env_int(const char *name, int dflt)
{
	const char *s = getenv(name);

	return s && *s ? atoi(s) : dflt;
}

static void load(void)
{
	const char *state = getenv("KTFAKE_STATE");
	FILE *f;

	if (loaded)
		return;
	loaded = true;
	nr_cpus = env_int("KTFAKE_CPUS", 4);
	if (nr_cpus > MAX_CPUS)
		nr_cpus = MAX_CPUS;
	offline_cpu = env_int("KTFAKE_OFFLINE", -1);
	busy_cpu = env_int("KTFAKE_BUSY", -1);
	busy_tries = env_int("KTFAKE_BUSY_TRIES", -1);
	rate = env_int("KTFAKE_RATE", 1000);
	if (getenv("KTFAKE_MARKS") && (marks = fopen(getenv("KTFAKE_MARKS"), "a+"))) {
		/*
		 * The rate a kernel would give, to well under a ppm: each end
		 * is the tightest of a few TSC-clock-TSC reads (a preemption
		 * between them would be a few microseconds, 100 ppm of a
		 * short nap), 200 ms apart.
		 */
		struct timespec nap = { 0, 200 * 1000 * 1000 };
		double t0, t1;
		uint64_t c0, c1;

		tsc_clock_pair(&c0, &t0);
		nanosleep(&nap, NULL);
		tsc_clock_pair(&c1, &t1);
		tsc_khz = (uint64_t)((c1 - c0) / (t1 - t0) / 1000);
	}
	if (state && (f = fopen(state, "r"))) {
		int ow = 0;

		if (fscanf(f, "%x %u %d", &mask, &buf_records, &ow) < 2)
			mask = 0, buf_records = 4096;
		overwrite = ow;
		fclose(f);
	}
	if (mask)
		on_since = now();
}

static void save(void)
{
	const char *state = getenv("KTFAKE_STATE");
	FILE *f = state ? fopen(state, "w") : NULL;

	if (f) {
		fprintf(f, "%x %u %d\n", mask, buf_records, overwrite);
		fclose(f);
	}
}

/* Bring a CPU's buffer up to now: what the rate owes, as far as it fits. */
static void produce(struct fake_cpu *c)
{
	double on = c->on_seconds + (on_since ? now() - on_since : 0);
	uint64_t due = (uint64_t)(on * rate), have = c->written + c->lost;
	uint64_t room = buf_records - (c->written - c->read - c->overwritten);

	if (due <= have)
		return;
	if (overwrite) {
		c->written += due - have;
		if (c->written - c->read - c->overwritten > buf_records)
			c->overwritten = c->written - c->read - buf_records;
	} else if (due - have > room) {
		c->lost += due - have - room;
		c->marker += due - have - room;
		c->written += room;
	} else {
		c->written += due - have;
	}
}

static void set_mask(uint32_t m)
{
	for (unsigned int n = 0; n < nr_cpus; n++) {
		produce(&cpus[n]);
		if (on_since)
			cpus[n].on_seconds += now() - on_since;
	}
	mask = m;
	on_since = m ? now() : 0;
	save();
}

static __attribute__((destructor)) void dump_stats(void)
{
	const char *path = getenv("KTFAKE_STATS");
	FILE *f = path && loaded ? fopen(path, "w") : NULL;

	if (!f)
		return;
	for (unsigned int n = 0; n < nr_cpus; n++)
		fprintf(f, "%u %llu %llu\n", n, (unsigned long long)cpus[n].written + (n ? 0 : marks_read),
			(unsigned long long)cpus[n].lost);
	fclose(f);
}

static bool is_fake_path(const char *path)
{
	const char *fake = getenv("KTFAKE_PATH");

	return fake && path && !strcmp(path, fake);
}

static int fake(int fd)
{
	return fd >= 0 && fd < MAX_FDS ? fake_fd[fd] : 0;
}

static int fake_open(const char *path, int flags, mode_t mode,
		     int (*real)(const char *, int, ...))
{
	int fd;

	if (path && (!strcmp(path, "/proc/kallsyms") || !strcmp(path, "/proc/interrupts"))) {
		const char *dir = getenv("KTFAKE_PROC");
		char proc[4096];

		snprintf(proc, sizeof(proc), "%s/%s", dir ? dir : "/nonexistent-ktfake-proc",
			 path + 6);
		return real(proc, flags, mode);
	}
	if (!is_fake_path(path))
		return real(path, flags, mode);
	load();
	if (getenv("KTFAKE_EACCES")) {
		errno = EACCES;
		return -1;
	}
	fd = real("/dev/null", flags & (O_NONBLOCK | O_CLOEXEC | O_RDWR));
	if (fd >= 0 && fd < MAX_FDS)
		fake_fd[fd] = 1;
	return fd;
}

#define OPEN_WRAPPER(name)						\
int name(const char *path, int flags, ...)				\
{									\
	static int (*real)(const char *, int, ...);			\
	mode_t mode = 0;						\
	va_list ap;							\
									\
	if (!real)							\
		real = dlsym(RTLD_NEXT, #name);				\
	va_start(ap, flags);						\
	if (flags & (O_CREAT | __O_TMPFILE))				\
		mode = va_arg(ap, mode_t);				\
	va_end(ap);							\
	return fake_open(path, flags, mode, real);			\
}
OPEN_WRAPPER(open)
OPEN_WRAPPER(open64)

int close(int fd)
{
	static int (*real)(int);

	if (!real)
		real = dlsym(RTLD_NEXT, "close");
	pthread_mutex_lock(&lock);
	if (fake(fd) >= 2)
		cpus[fake(fd) - 2].attached = false;
	if (fd >= 0 && fd < MAX_FDS)
		fake_fd[fd] = 0;
	pthread_mutex_unlock(&lock);
	return real(fd);
}

static int fail(int err)
{
	errno = err;
	return -1;
}

/* The other reader refuses one more call: it goes after KTFAKE_BUSY_TRIES. */
static int busy(void)
{
	if (busy_tries > 0 && !--busy_tries)
		busy_cpu = -1;
	return fail(EBUSY);
}

/* The checks the kernel makes before it registers anything (ktrace.h). */
static bool probe_ok(const struct ktrace_probe *kp)
{
	const struct ktrace_probe_op *ops = (const void *)(uintptr_t)kp->ops;
	unsigned int derefs = 0, values = 0;
	bool loaded = false;

	if (kp->nr_ops > KTRACE_PROBE_MAX_OPS || kp->nr_pids > KTRACE_PROBE_MAX_PIDS ||
	    (kp->flags & ~(KTRACE_PROBE_RETURN | KTRACE_PROBE_CHILDREN)) || kp->id)
		return false;
	for (unsigned int i = 0; i < 5; i++)
		if (kp->reserved[i])
			return false;
	for (unsigned int i = 0; i < kp->nr_ops; i++) {
		const struct ktrace_probe_op *op = &ops[i];

		switch (op->op) {
		case KTRACE_OP_REG:
			if (op->reg > KTRACE_REG_MAX || op->size || op->flags || op->imm)
				return false;
			break;
		case KTRACE_OP_CFA:
			if ((kp->flags & KTRACE_PROBE_RETURN) || op->size || op->flags || op->reg ||
			    op->imm)
				return false;
			break;
		case KTRACE_OP_ADD:
			if (op->size || op->flags || op->reg)
				return false;
			break;
		case KTRACE_OP_DEREF:
			if ((op->size != 1 && op->size != 2 && op->size != 4 && op->size != 8) ||
			    (op->flags & ~KTRACE_OP_SIGNED) || op->reg || op->imm)
				return false;
			derefs++;
			loaded = true;
			break;
		case KTRACE_OP_EMIT:
		case KTRACE_OP_STR:
			if (op->op == KTRACE_OP_EMIT ? (op->size != 1 && op->size != 2 &&
			    op->size != 4 && op->size != 8) :
			    (!op->size || op->size > KTRACE_PROBE_MAX_STR))
				return false;
			if (op->flags || op->reg || op->imm)
				return false;
			derefs += op->op == KTRACE_OP_STR;
			values++;
			loaded = false;
			break;
		default:
			return false;
		}
	}
	return !loaded && derefs <= KTRACE_PROBE_MAX_DEREFS && values <= KTRACE_PROBE_MAX_VALUES;
}

static int probe_add(struct ktrace_probe *kp)
{
	static unsigned int next_id;
	const char *log = getenv("KTFAKE_PROBES");
	const struct ktrace_probe_op *ops = (const void *)(uintptr_t)kp->ops;
	const int32_t *pids = (const void *)(uintptr_t)kp->pids;
	char link[64], path[4096];
	ssize_t n;
	FILE *f;

	if (env_int("KTFAKE_PROBE_ERR", 0))
		return fail(env_int("KTFAKE_PROBE_ERR", 0));
	snprintf(link, sizeof(link), "/proc/self/fd/%d", kp->fd);
	n = readlink(link, path, sizeof(path) - 1);
	if (n < 0)
		return fail(EBADF);
	path[n] = '\0';
	if (!probe_ok(kp))
		return fail(EINVAL);
	if (next_id >= (unsigned int)env_int("KTFAKE_PROBE_IDS", KTRACE_PROBE_MAX_ID))
		return fail(ENOSPC);
	kp->id = ++next_id;
	f = log ? fopen(log, "a") : NULL;
	if (!f)
		return 0;
	fprintf(f, "probe %u %u 0x%llx ", kp->id, kp->flags, (unsigned long long)kp->offset);
	for (unsigned int i = 0; i < kp->nr_pids; i++)
		fprintf(f, "%s%d", i ? "," : "", pids[i]);
	fprintf(f, "%s ", kp->nr_pids ? "" : "-");
	for (unsigned int i = 0; i < kp->nr_ops; i++)
		fprintf(f, "%s%u,%u,%u,%u,%d", i ? "/" : "", ops[i].op, ops[i].size, ops[i].flags,
			ops[i].reg, ops[i].imm);
	fprintf(f, "%s %s\n", kp->nr_ops ? "" : "-", path);
	fclose(f);
	return 0;
}

static int fake_ioctl(int fd, unsigned long req, void *arg)
{
	switch (req) {
	case KTRACE_IOC_INFO: {
		struct ktrace_info *info = arg;

		memset(info, 0, sizeof(*info));
		info->version = KTRACE_ABI_VERSION;
		info->record_size = sizeof(struct ktrace_record);
		info->nr_cpu_ids = nr_cpus;
		info->flags = KTRACE_INFO_TSC_INVARIANT | (overwrite ? KTRACE_INFO_OVERWRITE : 0);
		info->tsc_khz = tsc_khz;
		info->mask = mask;
		info->buf_records = buf_records;
		return 0;
	}
	case KTRACE_IOC_SET_MASK: {
		struct ktrace_mask *m = arg;

		if ((m->flags & ~KTRACE_MASK_SESSION) || (m->mask & ~KTRACE_GROUP_MASK))
			return fail(EINVAL);
		for (unsigned int c = 0; overwrite && m->mask && c < nr_cpus; c++)
			if (cpus[c].attached)
				return fail(EBUSY);
		if (overwrite && m->mask && busy_cpu >= 0)
			return busy();
		set_mask(m->mask);
		return 0;
	}
	case KTRACE_IOC_CPU_STATS: {
		struct ktrace_cpu_stats *st = arg;
		unsigned int cpu = st->cpu;

		if (cpu >= nr_cpus || st->overwritten || st->discarded)
			return fail(EINVAL);
		produce(&cpus[cpu]);
		memset(st, 0, sizeof(*st));
		st->cpu = cpu;
		st->flags = ((int)cpu != offline_cpu ? KTRACE_CPU_ONLINE : 0) |
			    (cpus[cpu].attached || (int)cpu == busy_cpu ? KTRACE_CPU_READER : 0);
		st->written = cpus[cpu].written;
		st->lost = cpus[cpu].lost;
		st->read = cpus[cpu].read;
		st->overwritten = cpus[cpu].overwritten;
		st->buf_records = buf_records;
		return 0;
	}
	case KTRACE_IOC_SET_BUF_SIZE: {
		struct ktrace_buf_size *bs = arg;
		uint32_t n = KTRACE_BUF_MIN;

		if (bs->reserved || bs->records < KTRACE_BUF_MIN || bs->records > KTRACE_BUF_MAX)
			return fail(EINVAL);
		if (mask)
			return fail(EBUSY);
		for (unsigned int c = 0; c < nr_cpus; c++)
			if (cpus[c].attached)
				return fail(EBUSY);
		while (n < bs->records)
			n *= 2;
		buf_records = n;
		memset(cpus, 0, sizeof(cpus));
		save();
		return 0;
	}
	case KTRACE_IOC_ATTACH_CPU: {
		struct ktrace_attach *at = arg;

		if (at->reserved || at->cpu >= nr_cpus || fake(fd) >= 2)
			return fail(EINVAL);
		if ((int)at->cpu == offline_cpu)
			return fail(ENODEV);
		if ((int)at->cpu == busy_cpu)
			return busy();
		if (cpus[at->cpu].attached || (overwrite && mask))
			return fail(EBUSY);
		cpus[at->cpu].attached = true;
		cpus[at->cpu].wakeup = 1;
		fake_fd[fd] = 2 + at->cpu;
		return 0;
	}
	case KTRACE_IOC_SET_MODE: {
		struct ktrace_mode *m = arg;

		if (m->reserved || (m->flags & ~KTRACE_MODE_OVERWRITE))
			return fail(EINVAL);
		if (mask)
			return fail(EBUSY);
		for (unsigned int c = 0; c < nr_cpus; c++)
			if (cpus[c].attached)
				return fail(EBUSY);
		if (busy_cpu >= 0 && overwrite)
			return busy();
		overwrite = m->flags & KTRACE_MODE_OVERWRITE;
		save();
		return 0;
	}
	case KTRACE_IOC_PROBE_ADD:
		return probe_add(arg);
	case KTRACE_IOC_SET_WAKEUP: {
		struct ktrace_wakeup *w = arg;

		if (w->reserved || fake(fd) < 2 || !w->records || w->records > buf_records / 2)
			return fail(EINVAL);
		cpus[fake(fd) - 2].wakeup = w->records;
		return 0;
	}
	}
	return fail(ENOTTY);
}

int ioctl(int fd, unsigned long req, ...)
{
	static int (*real)(int, unsigned long, ...);
	void *arg;
	va_list ap;

	if (!real)
		real = dlsym(RTLD_NEXT, "ioctl");
	va_start(ap, req);
	arg = va_arg(ap, void *);
	va_end(ap);
	if (fake(fd)) {
		int ret;

		pthread_mutex_lock(&lock);
		ret = fake_ioctl(fd, req, arg);
		pthread_mutex_unlock(&lock);
		return ret;
	}
	return real(fd, req, arg);
}

static ssize_t fake_read(int fd, struct ktrace_record *rec, size_t n)
{
	struct fake_cpu *c;
	size_t max = n / sizeof(*rec), got = 0;

	if (fake(fd) < 2 || !max)
		return fail(EINVAL);
	c = &cpus[fake(fd) - 2];
	produce(c);
	/* KTFAKE_MARKS: the lines written since, as CPU 0's records */
	while (marks && c == &cpus[0] && mask && got < max) {
		unsigned long long tsc;
		unsigned int a1, a2;
		long pos = ftell(marks);
		char line[128];

		if (!fgets(line, sizeof(line), marks) || !strchr(line, '\n') ||
		    sscanf(line, "%llu %u %u", &tsc, &a1, &a2) != 3) {
			fseek(marks, pos, SEEK_SET);	/* a line half written: later */
			break;
		}
		rec[got++] = (struct ktrace_record){ .tsc = tsc, .event = KTRACE_user_mark,
						     .tid = 1, .arg1 = a1, .arg2 = a2 };
		marks_read++;
	}
	/* "tsc" counts ns at the rate; lost records took their time too */
	while (got < max && c->read + c->overwritten < c->written) {
		uint64_t i = c->read + c->overwritten;	/* in the stream */

		rec[got++] = (struct ktrace_record){
			.tsc = (i + c->lost_told) * (uint64_t)(1e9 / rate),
			.event = KTRACE_sched_switch, .tid = 100 + fake(fd),
			.arg1 = (uint32_t)i, .arg2 = fake(fd) - 2 };
		c->read++;
	}
	if (got < max && c->marker) {
		rec[got++] = (struct ktrace_record){ .event = KTRACE_META_LOST,
			.tsc = (c->read + c->overwritten + c->lost_told) * (uint64_t)(1e9 / rate),
			.arg1 = (uint32_t)c->marker, .arg2 = c->marker >> 32 };
		c->lost_told += c->marker;
		c->marker = 0;
	}
	if (!got)
		return fail(EAGAIN);
	return got * sizeof(*rec);
}

ssize_t read(int fd, void *buf, size_t n)
{
	static ssize_t (*real)(int, void *, size_t);
	ssize_t ret;

	if (!real)
		real = dlsym(RTLD_NEXT, "read");
	if (!fake(fd))
		return real(fd, buf, n);
	pthread_mutex_lock(&lock);
	ret = fake_read(fd, buf, n);
	pthread_mutex_unlock(&lock);
	return ret;
}

static bool records_wait(int fd)
{
	struct fake_cpu *c = &cpus[fake(fd) - 2];

	produce(c);
	return c->read + c->overwritten + c->wakeup <= c->written || c->marker;
}

int ppoll(struct pollfd *fds, nfds_t nfds, const struct timespec *timeout,
	  const sigset_t *sigmask)
{
	static int (*real)(struct pollfd *, nfds_t, const struct timespec *,
			   const sigset_t *);
	double end = timeout ? now() + timeout->tv_sec + timeout->tv_nsec / 1e9 : 0;
	struct timespec tick = { 0, 5 * 1000 * 1000 };

	bool any = false;

	if (!real)
		real = dlsym(RTLD_NEXT, "ppoll");
	for (nfds_t i = 0; i < nfds; i++)
		any |= fake(fds[i].fd) != 0;
	if (!any)
		return real(fds, nfds, timeout, sigmask);
	for (;;) {
		struct timespec zero = { 0, 0 };
		int ready = 0;

		for (nfds_t i = 0; i < nfds; i++) {
			if (!fake(fds[i].fd)) {		/* ktrace's stop eventfd */
				if (real(&fds[i], 1, &zero, NULL) < 0)
					return -1;
			} else {
				pthread_mutex_lock(&lock);
				fds[i].revents = fake(fds[i].fd) >= 2 &&
						 records_wait(fds[i].fd) ? POLLIN : 0;
				pthread_mutex_unlock(&lock);
			}
			ready += !!fds[i].revents;
		}
		if (ready || (timeout && now() >= end))
			return ready;
		if (real(NULL, 0, &tick, sigmask) < 0)
			return -1;
	}
}
