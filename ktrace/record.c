// SPDX-License-Identifier: GPL-2.0
/*
 * record: copy the kernel's per-CPU buffers into trace files.
 *
 * Every recorded CPU has its own /dev/ktrace file, attached to that CPU, its
 * own trace file and its own thread, which sleeps in ppoll() until the
 * CPU's buffer is a quarter full (the kernel's wakeup watermark,
 * KTRACE_IOC_SET_WAKEUP) or -w ms have passed, then drains it with
 * non-blocking reads of whole records, appending them to the file, and,
 * after a drain of little more than its own records, pauses 1 ms before it
 * sleeps again.  A flood fills 16384 records in a few
 * ms: a fixed pause of -w ms lost most of it, and one thread draining every
 * CPU in turn lost more than the peers' per-CPU readers.  The watermark
 * alone is not enough either: with sched or syscall tracing on, ktrace's
 * own wakeups and reads write records, more than a quarter of a small
 * buffer; the pause bounds that to a thousand drains a second per CPU.  A
 * drain of SELF_RECORDS_MAX or more skips the pause: that is no longer
 * ktrace's own records, and 4096 records fill in about 1 ms in a flood,
 * less than a late timer can keep the reader away (skipping it only after
 * half a buffer, ktrace lost three times as much in a flood at 4096
 * records a CPU).
 * The main thread starts the command, waits for it, a signal or the end of
 * -d, puts the mask back, stops the threads and drains what is left.
 *
 * Before tracing starts, /proc/kallsyms and /proc/interrupts are saved
 * beside the files, for dtrace to name kernel addresses and irqs with.
 *
 * With -e, ktrace owns tracing (a session, KTRACE_MASK_SESSION): it starts
 * one before it attaches, which empties the buffers of what an earlier
 * session left, and if ktrace is killed the kernel puts the mask back.
 *
 * Stopping (signal, end of -d, end of the command): with -e, tracing is
 * turned off (the kernel waits until every record reserved is written),
 * everything left in the buffers is drained, so the files hold every
 * record written up to then, and the mask is put back.
 *
 * Nothing is lost without being counted in the file: records the kernel
 * dropped (buffer full) and records read but not written (a full disk: the
 * file keeps what fit, ktrace goes on reading) that no lost marker of the
 * kernel's counts are told of by a lost marker at the end of the file, in
 * place of the file's last event if even that does not fit (mark_lost()).
 *
 * --flight (flight() at the end of this file) reads nothing while tracing
 * and writes snapshots of the kernel's overwrite-mode buffers instead.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "ktfile.h"
#include "ktrace.h"
#include "util.h"

#define CHUNK_RECORDS	10922	/* 256 KiB per read(), a buffer per CPU */
#define SELF_RECORDS_MAX 512	/* more than one drain's own records */
#define EVENT_RECORDS_MAX 16	/* more than an event and its continuations */

/*
 * One recorded CPU.  Between the start and the join of its thread only that
 * thread touches it; before and after, the main thread.
 */
struct cpu_rec {
	struct recorder *r;
	unsigned int cpu;
	int fd;				/* attached to cpu; -1 once given up */
	char *path;
	struct ktfile_writer file;
	struct ktrace_record *buf;	/* CHUNK_RECORDS, for read() */
	uint64_t lost_start;		/* kernel's lost count when we began */
	uint64_t lost;			/* ... and when we last looked */
	uint64_t markers;		/* records the file's lost markers count */
	uint64_t unwritten;		/* event records read but not in the file */
	struct ktrace_record last[EVENT_RECORDS_MAX];	/* the file's last records */
	unsigned int nr_last;
	bool write_failed;		/* the file takes no more: count, do not write */
	uint32_t buf_records;		/* the size of its buffer */
	pthread_t thread;
	bool running;			/* thread started */
};

struct recorder {
	const struct ktrace_opts *o;
	int ctl;
	struct cpu_rec *cpus;
	unsigned int nr;
	int stop_fd;			/* eventfd: readable once the threads must end */
	bool failed;			/* a read or write error: exit 1 (atomic) */
	bool lost_hint;			/* said how to lose fewer records (atomic) */
	bool rt_warned;			/* said it cannot run SCHED_FIFO (atomic) */
};

static volatile sig_atomic_t stop_sig, child_changed, snapshot_asked;
static bool flight_mode;		/* --flight: SIGUSR1 takes a snapshot */
/*
 * Signals that stop the recording (passed on to the command): every one
 * whose default would kill ktrace with its mask still set, and SIGCHLD.
 */
static const int handled_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD,
};
/* the dispositions ktrace was given, given back to the command */
static struct sigaction orig_actions[ARRAY_SIZE(handled_signals)], orig_sigpipe;

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		child_changed = 1;
	else if (sig == SIGUSR1 && flight_mode)
		snapshot_asked = 1;
	else
		stop_sig = sig;
}

/*
 * The signals stay blocked except inside ppoll(), so none can slip in
 * between a check of the flags and going to sleep.  *orig gets the mask to
 * sleep with (and to give the command).  Even one that ktrace was started
 * with ignored (`ktrace ... &` ignores SIGINT) stops it: that is how a
 * recording in the background is stopped.  The command gets the
 * dispositions ktrace was given (nohup's ignored SIGHUP stays ignored).
 *
 * SIGPIPE is ignored while recording: `ktrace ... 2>&1 | head -1` must not
 * kill ktrace between setting the mask and putting it back (tracing would
 * stay on); a write to a closed pipe fails with EPIPE instead, which the
 * messages ignore.
 */
static void catch_signals(sigset_t *orig)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction ign = { .sa_handler = SIG_IGN };
	sigset_t block;

	sigaction(SIGPIPE, &ign, &orig_sigpipe);
	sigemptyset(&block);
	for (size_t i = 0; i < ARRAY_SIZE(handled_signals); i++)
		sigaddset(&block, handled_signals[i]);
	sigprocmask(SIG_BLOCK, &block, orig);
	for (size_t i = 0; i < ARRAY_SIZE(handled_signals); i++)
		sigaction(handled_signals[i], &sa, &orig_actions[i]);
}

static void release_signals(const sigset_t *orig)
{
	for (size_t i = 0; i < ARRAY_SIZE(handled_signals); i++)
		sigaction(handled_signals[i], &orig_actions[i], NULL);
	sigaction(SIGPIPE, &orig_sigpipe, NULL);
	sigprocmask(SIG_SETMASK, orig, NULL);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

static struct timespec to_timespec(double s)
{
	if (s < 0)
		s = 0;
	return (struct timespec){ (time_t)s, (long)((s - (time_t)s) * 1e9) };
}

static void attach_cpu(struct recorder *r, struct cpu_rec *c)
{
	struct ktrace_attach at = { .cpu = c->cpu };
	struct ktrace_wakeup wake = { 0 };
	struct ktrace_cpu_stats st;

	c->fd = dev_open(r->o->dev);
	if (fcntl(c->fd, F_SETFL, O_NONBLOCK) < 0)
		die("%s: %s", r->o->dev, strerror(errno));
	if (ioctl(c->fd, KTRACE_IOC_ATTACH_CPU, &at) < 0) {
		if (errno == EBUSY)
			die("cpu %u: already has a reader (is another ktrace recording?)",
			    c->cpu);
		if (errno == ENODEV)
			die("cpu %u: has no buffer (never online)", c->cpu);
		die("cpu %u: attaching a reader: %s", c->cpu, strerror(errno));
	}
	if (dev_cpu_stats(r->ctl, c->cpu, &st) < 0)
		die("cpu %u: KTRACE_IOC_CPU_STATS: %s", c->cpu, strerror(errno));
	c->lost_start = c->lost = st.lost;
	c->buf_records = st.buf_records;
	wake.records = st.buf_records / 4;
	if (ioctl(c->fd, KTRACE_IOC_SET_WAKEUP, &wake) < 0)
		die("cpu %u: KTRACE_IOC_SET_WAKEUP %u: %s", c->cpu, wake.records,
		    strerror(errno));
}

/* All files are created before tracing starts: a bad -o fails early. */
static void create_files(struct recorder *r, const struct ktfile_header *tmpl)
{
	struct ktfile_header h = *tmpl;
	size_t len = strlen(r->o->output) + 16;

	for (unsigned int i = 0; i < r->nr; i++) {
		struct cpu_rec *c = &r->cpus[i];
		int ret;

		c->path = xmalloc(len);
		snprintf(c->path, len, "%s.cpu%u", r->o->output, c->cpu);
		h.cpu = c->cpu;
		ret = ktfile_create(&c->file, c->path, &h);
		if (ret < 0) {
			while (i--)
				unlink(r->cpus[i].path);
			die("%s: %s", c->path, kt_create_strerror(ret));
		}
	}
}

/* Most of a /proc file we copy: a kallsyms with many modules is ~20 MiB. */
#define PROC_COPY_MAX	(256u << 20)

/* All of /proc file @path, in *len bytes; NULL (after a message) if not. */
static char *read_proc(const char *path, size_t *len)
{
	int fd = kt_open_regular(path);
	size_t cap = 1 << 20;
	char *buf;

	*len = 0;
	if (fd < 0) {
		/* a kernel without CONFIG_KALLSYMS has none: nothing to say */
		if (fd == -ENOENT)
			pr_debug("%s: %s", path, strerror(-fd));
		else
			pr_warn("%s: %s", path, strerror(-fd));
		return NULL;
	}
	buf = xmalloc(cap);
	for (;;) {
		ssize_t n;

		if (*len == cap) {
			if (cap == PROC_COPY_MAX) {
				pr_warn("%s: larger than %u MiB: not copied", path,
					PROC_COPY_MAX >> 20);
				break;
			}
			cap *= 2;
			buf = xrealloc(buf, cap);
		}
		n = read(fd, buf + *len, cap - *len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			pr_warn("reading %s: %s", path, strerror(errno));
		if (n <= 0) {
			close(fd);
			if (!n)
				return buf;
			break;
		}
		*len += n;
	}
	close(fd);
	free(buf);
	return NULL;
}

/* Whether a kallsyms copy has real addresses: kptr_restrict makes them all 0. */
static bool has_addresses(const char *buf, size_t len)
{
	for (const char *line = buf; line < buf + len; ) {
		const char *nl = memchr(line, '\n', buf + len - line);
		size_t zeros = strspn(line, "0");

		if (line + zeros < buf + len && line[zeros] != ' ')
			return true;
		if (!nl)
			break;
		line = nl + 1;
	}
	return false;
}

/*
 * What dtrace needs to name kernel addresses and irqs once the machine is
 * gone: /proc/kallsyms as BASE.kallsyms and /proc/interrupts as BASE.irqs,
 * created like the trace files (0600, never through a link).  Taken before
 * tracing starts; a copy that cannot be made costs only the names.
 */
static void save_proc(const struct ktrace_opts *o, const char *proc, const char *suffix)
{
	size_t len, plen = strlen(o->output) + strlen(suffix) + 1;
	char *buf = read_proc(proc, &len), *path;
	int fd;

	if (!buf)
		return;
	if (!strcmp(suffix, ".kallsyms") && !has_addresses(buf, len)) {
		pr_warn("%s shows no addresses (kernel.kptr_restrict, or not root): "
			"no %s%s, dtrace prints kernel addresses in hex", proc, o->output, suffix);
		free(buf);
		return;
	}
	path = xmalloc(plen);
	snprintf(path, plen, "%s%s", o->output, suffix);
	fd = kt_create_file(path);
	if (fd < 0) {
		pr_warn("%s: %s", path, kt_create_strerror(fd));
	} else {
		size_t done = 0;

		while (done < len) {
			ssize_t n = write(fd, buf + done, len - done);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0) {
				pr_warn("%s: %s: not kept", path, n < 0 ? strerror(errno) : "short write");
				unlink(path);
				break;
			}
			done += n;
		}
		if (close(fd) < 0 && done == len) {
			pr_warn("%s: %s: not kept", path, strerror(errno));
			unlink(path);
		}
	}
	free(path);
	free(buf);
}

static void give_up(struct recorder *r, struct cpu_rec *c)
{
	close(c->fd);
	c->fd = -1;
	__atomic_store_n(&r->failed, true, __ATOMIC_RELAXED);
}

/* Count @nr records read, the first @kept of which are in the file. */
static void count_records(struct cpu_rec *c, const struct ktrace_record *recs,
			  size_t nr, size_t kept)
{
	for (size_t i = 0; i < nr; i++) {
		bool marker = recs[i].event == KTRACE_META_LOST;

		if (i < kept && marker)
			c->markers += recs[i].arg1 | (uint64_t)recs[i].arg2 << 32;
		else if (i >= kept && !marker)
			c->unwritten++;
	}
	/* the file's last records, for mark_lost(): the file is write-only */
	if (kept >= EVENT_RECORDS_MAX) {
		memcpy(c->last, recs + kept - EVENT_RECORDS_MAX, sizeof(c->last));
		c->nr_last = EVENT_RECORDS_MAX;
	} else if (kept) {
		unsigned int keep = c->nr_last + kept > EVENT_RECORDS_MAX ?
				    EVENT_RECORDS_MAX - kept : c->nr_last;

		memmove(c->last, c->last + c->nr_last - keep, keep * sizeof(*recs));
		memcpy(c->last + keep, recs, kept * sizeof(*recs));
		c->nr_last = keep + kept;
	}
}

/* Read until the CPU's buffer is empty (a short read says so). */
static void drain_cpu(struct recorder *r, struct cpu_rec *c)
{
	const size_t chunk = CHUNK_RECORDS * sizeof(struct ktrace_record);

	while (c->fd >= 0) {
		ssize_t n = read(c->fd, c->buf, chunk);
		size_t nr = n > 0 ? n / sizeof(struct ktrace_record) : 0;
		int ret;

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			return;
		if (n < 0) {
			pr_err("cpu %u: reading %s: %s", c->cpu, r->o->dev, strerror(errno));
			give_up(r, c);
			return;
		}
		if (!c->write_failed) {
			uint64_t before = c->file.records;

			ret = ktfile_append(&c->file, c->buf, nr);
			count_records(c, c->buf, nr, c->file.records - before);
			if (ret < 0) {
				pr_err("%s: %s; the file keeps its first %llu records (%llu bytes), "
				       "the records after them are counted lost", c->path,
				       strerror(-ret), (unsigned long long)c->file.records,
				       (unsigned long long)ktfile_bytes(&c->file));
				c->write_failed = true;
				__atomic_store_n(&r->failed, true, __ATOMIC_RELAXED);
			}
		} else {
			count_records(c, c->buf, nr, 0);
		}
		if (n % sizeof(struct ktrace_record)) {
			pr_err("cpu %u: read %zd bytes, not whole records", c->cpu, n);
			give_up(r, c);
			return;
		}
		if ((size_t)n < chunk)
			return;
	}
}

/*
 * The lost marker that takes the place of the file's last event (and of
 * the continuation records after it) when not even one more record fits:
 * it counts @owed and those records.  Returns 0, or -errno.
 */
static int replace_last_event(struct cpu_rec *c, uint64_t owed)
{
	const struct ktrace_record *tail = c->last;
	struct ktrace_record m = { .event = KTRACE_META_LOST };
	size_t k = c->nr_last, j = k - 1;
	off_t off = ktfile_bytes(&c->file) - k * sizeof(*tail);

	if (!k)
		return -ENOSPC;
	while (j > 0 && (tail[j].event & KTRACE_EVT_CONT))
		j--;
	for (size_t i = j; i < k; i++) {
		if (tail[i].event != KTRACE_META_LOST) {
			owed++;
			continue;
		}
		owed += tail[i].arg1 | (uint64_t)tail[i].arg2 << 32;
		c->markers -= tail[i].arg1 | (uint64_t)tail[i].arg2 << 32;
	}
	m.tsc = tail[j].tsc;
	m.arg1 = (uint32_t)owed;
	m.arg2 = (uint32_t)(owed >> 32);
	off += j * sizeof(m);
	if (pwrite(c->file.fd, &m, sizeof(m), off) != sizeof(m) ||
	    ftruncate(c->file.fd, off + sizeof(m)) < 0)
		return errno ? -errno : -EIO;
	c->file.records -= k - j - 1;
	c->markers += owed;
	return 0;
}

/*
 * At the end, with the buffer drained and the kernel's count final: the
 * records of this CPU that are neither in the file nor counted by a lost
 * marker in it, the kernel's drops since we attached and the records we
 * could not write, go into one more lost marker, stamped like the last
 * record.  The kernel's markers may count drops from before we attached:
 * nothing is owed then.
 */
static void mark_lost(struct recorder *r, struct cpu_rec *c)
{
	uint64_t owed = c->lost - c->lost_start + c->unwritten;
	struct ktrace_record m = { .event = KTRACE_META_LOST };
	int ret = -ENOSPC;

	if (owed <= c->markers || c->file.fd < 0)
		return;
	owed -= c->markers;
	m.tsc = c->nr_last ? c->last[c->nr_last - 1].tsc : 0;
	m.arg1 = (uint32_t)owed;
	m.arg2 = (uint32_t)(owed >> 32);
	if (!c->write_failed && (ret = ktfile_append(&c->file, &m, 1)) == 0) {
		c->markers += owed;
		return;
	}
	if (replace_last_event(c, owed) == 0) {
		pr_warn("%s: the lost marker at its end takes the place of its last event", c->path);
		return;
	}
	pr_err("%s: %s: no room for a lost marker; %llu records lost are not counted in it",
	       c->path, strerror(-ret), (unsigned long long)owed);
	__atomic_store_n(&r->failed, true, __ATOMIC_RELAXED);
}

/* Lost records are reported as they happen, with the kernel's exact count. */
static void check_lost(struct recorder *r, struct cpu_rec *c)
{
	struct ktrace_cpu_stats st;

	if (dev_cpu_stats(r->ctl, c->cpu, &st) < 0 || st.lost <= c->lost)
		return;
	pr_warn("cpu %u: %llu records lost (buffer full)%s", c->cpu,
		(unsigned long long)(st.lost - c->lost),
		__atomic_exchange_n(&r->lost_hint, true, __ATOMIC_RELAXED) ? "" :
		"; a larger -b or a shorter -w loses fewer");
	c->lost = st.lost;
}

/*
 * The calling thread at SCHED_FIFO priority 1, on its CPU: woken by that
 * CPU's writers, it runs when they do and before them, whatever the other
 * CPUs are doing.  A CPU that goes offline unpins it (its records stay to
 * be read).  The command, forked before, runs at normal priority.
 */
static void set_rt_priority(struct recorder *r, unsigned int cpu)
{
	struct sched_param sp = { .sched_priority = 1 };
	size_t size = CPU_ALLOC_SIZE(cpu + 1);
	cpu_set_t *set = CPU_ALLOC(cpu + 1);

	if (set) {
		CPU_ZERO_S(size, set);
		CPU_SET_S(cpu, size, set);
		sched_setaffinity(0, size, set);
		CPU_FREE(set);
	}
	if (sched_setscheduler(0, SCHED_FIFO, &sp) < 0 &&
	    !__atomic_exchange_n(&r->rt_warned, true, __ATOMIC_RELAXED))
		pr_warn("cannot run SCHED_FIFO priority 1 (%s); recording at normal priority",
			strerror(errno));
}

/*
 * A CPU's thread: sleep until its buffer is a quarter full, or for -w ms,
 * drain it, pause 1 ms (only after a drain of ktrace's own records); until
 * the main thread says stop.  Every signal stays blocked here: the main
 * thread takes them.
 *
 * The wait is also cut to the time a quarter of the buffer took to fill at
 * the last interval's rate (1 ms at the least): a backstop for a late
 * wakeup.  On PREEMPT_RT the watermark's irq_work runs from a kthread
 * woken by the tick, and a stock 6.1 RT kernel under QEMU once lost a
 * fifth of a flood's records on three CPUs of four without it.
 */
static void *cpu_thread(void *arg)
{
	struct cpu_rec *c = arg;
	struct recorder *r = c->r;
	const struct timespec pause = to_timespec(0.001);
	double wait = r->o->wait_ms / 1000.0, last = now();

	set_rt_priority(r, c->cpu);
	while (c->fd >= 0) {
		struct pollfd pfd[2] = {
			{ .fd = c->fd, .events = POLLIN },
			{ .fd = r->stop_fd, .events = POLLIN },
		};
		struct timespec ts = to_timespec(wait);
		uint64_t before, got;
		double t;

		if (ppoll(pfd, 2, &ts, NULL) < 0 && errno != EINTR) {
			pr_err("cpu %u: ppoll: %s", c->cpu, strerror(errno));
			give_up(r, c);
			break;
		}
		if (pfd[1].revents)
			break;
		before = c->file.records + c->lost;
		drain_cpu(r, c);
		check_lost(r, c);
		got = c->file.records + c->lost - before;
		t = now();
		wait = r->o->wait_ms / 1000.0;
		if (got && (t - last) * c->buf_records / 4 / got < wait)
			wait = (t - last) * c->buf_records / 4 / got;
		if (wait < 0.001)
			wait = 0.001;
		last = t;
		/*
		 * The pause is for drains of little more than ktrace's own
		 * records; after any larger one the reader goes straight
		 * back to the watermark.
		 */
		if (got < SELF_RECORDS_MAX && ppoll(&pfd[1], 1, &pause, NULL) > 0)
			break;
	}
	return NULL;
}

static void start_threads(struct recorder *r)
{
	r->stop_fd = eventfd(0, EFD_CLOEXEC);
	if (r->stop_fd < 0)
		die("eventfd: %s", strerror(errno));
	for (unsigned int i = 0; i < r->nr; i++) {
		struct cpu_rec *c = &r->cpus[i];
		int err = pthread_create(&c->thread, NULL, cpu_thread, c);

		if (err)
			die("cpu %u: starting its thread: %s", c->cpu, strerror(err));
		c->running = true;
	}
}

/* Stop the threads, then drain what is left from the main thread. */
static void stop_threads(struct recorder *r)
{
	uint64_t one = 1;

	if (r->stop_fd >= 0 && write(r->stop_fd, &one, sizeof(one)) != sizeof(one))
		die("eventfd: %s", strerror(errno));
	for (unsigned int i = 0; i < r->nr; i++) {
		struct cpu_rec *c = &r->cpus[i];

		if (c->running)
			pthread_join(c->thread, NULL);
		c->running = false;
		drain_cpu(r, c);
		check_lost(r, c);
	}
}

static pid_t start_command(char **argv, const sigset_t *orig)
{
	pid_t pid;

	fflush(NULL);
	pid = fork();
	if (pid < 0) {
		pr_err("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int err;

		release_signals(orig);
		execvp(argv[0], argv);
		err = errno;
		/* one write: ktrace's own messages go to the same stderr */
		dprintf(STDERR_FILENO, "ktrace: %s: %s\n", argv[0], strerror(err));
		_exit(err == ENOENT ? 127 : 126);
	}
	pr_debug("started %s, pid %d", argv[0], (int)pid);
	return pid;
}

static int exit_status(int status)
{
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

static void summary(struct recorder *r, double seconds)
{
	uint64_t records = 0, lost = 0, bytes = 0;

	for (unsigned int i = 0; i < r->nr; i++) {
		struct cpu_rec *c = &r->cpus[i];

		uint64_t c_lost = c->lost - c->lost_start + c->unwritten;

		if (c->markers > c_lost)
			c_lost = c->markers;
		pr_info("cpu %u: %llu records, %llu lost, %llu bytes in %s", c->cpu,
			(unsigned long long)c->file.records, (unsigned long long)c_lost,
			(unsigned long long)ktfile_bytes(&c->file), c->path);
		records += c->file.records;
		lost += c_lost;
		bytes += ktfile_bytes(&c->file);
	}
	pr_info("%u CPU%s, %.3f s: %llu records, %llu lost, %llu bytes", r->nr,
		r->nr == 1 ? "" : "s", seconds, (unsigned long long)records,
		(unsigned long long)lost, (unsigned long long)bytes);
}

int record(const struct ktrace_opts *o, int ctl, const struct ktrace_info *info,
	   bool set_mask, uint32_t mask)
{
	struct recorder r = { .o = o, .ctl = ctl, .stop_fd = -1 };
	uint32_t recorded_mask;

	if (info->flags & KTRACE_INFO_OVERWRITE)
		die("%s: the kernel is in overwrite mode: a ktrace --flight is running, or one "
		    "ended without putting it back (then ktrace -e 0 does)", o->dev);

	/* thread events name the tasks, as perf always records comm and fork */
	if (set_mask && mask)
		mask |= KTRACE_GRP_thread;
	recorded_mask = set_mask ? mask : info->mask;
	struct ktfile_header tmpl;
	double start, deadline = 0;
	int status = 0, ret;
	sigset_t orig;
	pid_t child = 0;

	r.cpus = xcalloc(o->nr_cpus, sizeof(*r.cpus));
	for (unsigned int n = 0; n < o->nr_cpus; n++)
		if (o->cpus[n])
			r.cpus[r.nr++].cpu = n;
	if (!r.nr)
		die("no online CPU to record");
	for (unsigned int i = 0; i < r.nr; i++) {
		r.cpus[i].r = &r;
		r.cpus[i].buf = xmalloc(CHUNK_RECORDS * sizeof(struct ktrace_record));
	}

	catch_signals(&orig);
	/* owned from here: tracing off and the buffers empty until the mask is set */
	if (set_mask && dev_session_mask(ctl, o->dev, 0) < 0)
		die("%s: tracing is in use: another ktrace owns it or reads a CPU "
		    "(is another ktrace recording?)", o->dev);
	for (unsigned int i = 0; i < r.nr; i++)
		attach_cpu(&r, &r.cpus[i]);
	ktfile_header_init(&tmpl, 0, info->tsc_khz * 1000,
			   info->flags & KTRACE_INFO_TSC_INVARIANT, recorded_mask);
	create_files(&r, &tmpl);
	save_proc(o, "/proc/kallsyms", ".kallsyms");
	save_proc(o, "/proc/interrupts", ".irqs");
	if (!recorded_mask)
		pr_warn("tracing is off (mask 0): nothing will be recorded until a mask is set");
	start_threads(&r);
	if (set_mask)
		dev_session_mask(ctl, o->dev, mask);
	if (recorded_mask)
		dev_name_tasks(ctl, o->dev);
	pr_info("recording %u CPU%s into %s.cpu*%s", r.nr, r.nr == 1 ? "" : "s",
		o->output, o->command || o->duration ? "" : "; ^C stops");
	if (o->command && (child = start_command(o->command, &orig)) < 0)
		r.failed = true;

	start = now();
	if (o->duration)
		deadline = start + o->duration;
	while (!stop_sig && !__atomic_load_n(&r.failed, __ATOMIC_RELAXED) &&
	       (!deadline || now() < deadline)) {
		/* a thread that failed is seen within -w ms */
		double wait = o->wait_ms / 1000.0;
		struct timespec ts;

		if (child_changed) {
			child_changed = 0;
			if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
				child = 0;
				break;
			}
		}
		if (deadline && deadline - now() < wait)
			wait = deadline - now();
		ts = to_timespec(wait);
		ppoll(NULL, 0, &ts, &orig);
	}

	if (stop_sig && child > 0)
		kill(child, stop_sig);
	/* off, every record reserved written: the last drain gets whole events */
	if (set_mask)
		dev_session_mask(ctl, o->dev, 0);
	stop_threads(&r);
	if (set_mask) {
		/* ends the session: the mask stays */
		struct ktrace_mask m = { .mask = info->mask };

		if (ioctl(ctl, KTRACE_IOC_SET_MASK, &m) < 0)
			pr_err("%s: putting the mask back to 0x%x: %s", o->dev,
			       info->mask, strerror(errno));
	}
	for (unsigned int i = 0; i < r.nr; i++) {
		struct cpu_rec *c = &r.cpus[i];

		if (c->fd >= 0)
			close(c->fd);
		mark_lost(&r, c);
		ret = ktfile_close(&c->file);
		if (ret < 0) {
			pr_err("%s: %s", c->path, strerror(-ret));
			r.failed = true;
		}
	}
	summary(&r, now() - start);

	/* the files are complete: a second ^C may now end ktrace at once */
	release_signals(&orig);
	if (child > 0) {
		pr_debug("waiting for %s (pid %d) to end", o->command[0], (int)child);
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
	}
	for (unsigned int i = 0; i < r.nr; i++) {
		free(r.cpus[i].path);
		free(r.cpus[i].buf);
	}
	if (r.stop_fd >= 0)
		close(r.stop_fd);
	free(r.cpus);
	if (r.failed)
		return 1;
	return o->command ? exit_status(status) : 0;
}

/*
 * --flight: the kernel keeps the newest records of every CPU in its
 * buffers (overwrite mode) and nothing is read until a trigger (SIGUSR1),
 * which writes a snapshot: BASE.N.cpuK for N = 1, 2, ...  A snapshot names
 * every task (a state dump just before tracing stops), turns tracing off
 * (the kernel waits until no writer is left inside the buffers), reads
 * every CPU's buffer, and turns tracing on again: events of the few
 * milliseconds this takes are not recorded.  Each file starts with a lost
 * marker of the records overwritten in that CPU since the last snapshot
 * (and of any a new session emptied: one that another process started
 * after it ended ktrace's by setting the mask).
 * The end (a stopping signal, -d, the command's end) takes a last snapshot,
 * then puts back the normal mode and the mask.  ktrace owns tracing
 * throughout (a session): killed, the kernel puts them back itself.
 *
 * Another reader (root: in overwrite mode the kernel lets only openers
 * with CAP_SYS_ADMIN attach) can hold a CPU while tracing is off for a
 * snapshot, and tracing cannot be turned on again until it goes: ktrace
 * waits for it up to a second, then says which CPU and ends, as the end
 * does.
 */
#define FLIGHT_TRIES	100		/* 10 ms apart */
struct flight {
	const struct ktrace_opts *o;
	int ctl;
	const unsigned int *cpus;
	unsigned int nr;
	uint64_t *overwritten;		/* per CPU: kernel's count at the last snapshot,
					   overwritten + discarded */
	uint64_t *lost;
	struct ktfile_header tmpl;
	struct ktrace_record *buf;
	unsigned int snapshots;
	bool failed;
};

/*
 * Copy one CPU's buffer (tracing is off) into @w, after a lost marker of
 * @overwritten records if not 0, stamped like the first record; -1 on an
 * error.  @w NULL: empty the buffer.
 */
static int flight_read_cpu(struct flight *f, unsigned int cpu, struct ktfile_writer *w,
			   const char *path, uint64_t overwritten)
{
	const size_t chunk = CHUNK_RECORDS * sizeof(struct ktrace_record);
	struct ktrace_attach at = { .cpu = cpu };
	int fd = dev_open(f->o->dev), ret = 0, tries = 0;

	while (ioctl(fd, KTRACE_IOC_ATTACH_CPU, &at) < 0) {
		if (errno == EBUSY && ++tries < FLIGHT_TRIES) {
			nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
			continue;
		}
		pr_err("cpu %u: attaching a reader: %s%s", cpu, strerror(errno),
		       errno == EBUSY ? " (another reader holds it)" : "");
		close(fd);
		return -1;
	}
	if (fcntl(fd, F_SETFL, O_NONBLOCK) < 0)
		die("%s: %s", f->o->dev, strerror(errno));
	for (;;) {
		ssize_t n = read(fd, f->buf, chunk);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && errno == EAGAIN)
			n = 0;		/* empty: the lost marker still goes in */
		else if (n < 0 || n % sizeof(struct ktrace_record)) {
			pr_err("cpu %u: reading %s: %s", cpu, f->o->dev,
			       n < 0 ? strerror(errno) : "not whole records");
			ret = -1;
			break;
		}
		if (w && overwritten) {
			struct ktrace_record m = {
				.tsc = n ? f->buf[0].tsc : 0, .event = KTRACE_META_LOST,
				.arg1 = (uint32_t)overwritten,
				.arg2 = (uint32_t)(overwritten >> 32),
			};

			overwritten = 0;
			if ((ret = ktfile_append(w, &m, 1)) < 0) {
				pr_err("%s: %s", path, strerror(-ret));
				ret = -1;
				break;
			}
		}
		if (w && (ret = ktfile_append(w, f->buf, n / sizeof(struct ktrace_record))) < 0) {
			pr_err("%s: %s", path, strerror(-ret));
			ret = -1;
			break;
		}
		if ((size_t)n < chunk)
			break;
	}
	close(fd);
	return ret;
}

/*
 * The counters a snapshot starts from, and @empty: the buffers emptied of
 * what was there before --flight started (tracing is off).  False if a
 * buffer could not be emptied (said why).
 */
static bool flight_counters(struct flight *f, bool empty)
{
	for (unsigned int i = 0; i < f->nr; i++) {
		struct ktrace_cpu_stats st;

		if (empty && flight_read_cpu(f, f->cpus[i], NULL, NULL, 0) < 0) {
			pr_err("cpu %u: cannot empty its buffer", f->cpus[i]);
			return false;
		}
		if (dev_cpu_stats(f->ctl, f->cpus[i], &st) < 0)
			die("cpu %u: KTRACE_IOC_CPU_STATS: %s", f->cpus[i], strerror(errno));
		f->overwritten[i] = st.overwritten + st.discarded;
		f->lost[i] = st.lost;
	}
	return true;
}

/* Tracing on again after a snapshot: false if another reader kept it off. */
static bool flight_resume(struct flight *f, uint32_t mask)
{
	for (int tries = 0; tries < FLIGHT_TRIES; tries++) {
		if (dev_session_mask(f->ctl, f->o->dev, mask) == 0)
			return true;
		nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
	}
	for (unsigned int i = 0; i < f->nr; i++) {
		struct ktrace_cpu_stats st;

		if (dev_cpu_stats(f->ctl, f->cpus[i], &st) == 0 && (st.flags & KTRACE_CPU_READER))
			pr_err("cpu %u: another reader is attached: tracing cannot go on in "
			       "overwrite mode", f->cpus[i]);
	}
	pr_err("%s: tracing stays off; ending", f->o->dev);
	f->failed = true;
	return false;
}

/*
 * The end: the normal mode and the mask from before.  If another reader
 * keeps the mode from changing, ktrace's exit ends its session, and the
 * kernel puts both back then.
 */
static void flight_end(struct flight *f, uint32_t old_mask)
{
	struct ktrace_mode m = { 0 };
	struct ktrace_mask km = { .mask = old_mask };
	int tries = 0;

	while (ioctl(f->ctl, KTRACE_IOC_SET_MODE, &m) < 0) {
		if (errno == EBUSY && ++tries < FLIGHT_TRIES) {
			nanosleep(&(struct timespec){ 0, 10000000 }, NULL);
			continue;
		}
		pr_err("%s: putting the normal mode back: %s; it is put back as ktrace exits",
		       f->o->dev, strerror(errno));
		f->failed = true;
		return;
	}
	if (ioctl(f->ctl, KTRACE_IOC_SET_MASK, &km) < 0) {
		pr_err("%s: putting the mask back to 0x%x: %s", f->o->dev, old_mask,
		       strerror(errno));
		f->failed = true;
	}
}

static void flight_snapshot(struct flight *f, uint32_t mask)
{
	size_t len = strlen(f->o->output) + 32;
	char *base = xmalloc(len), *path = xmalloc(len);
	uint64_t records = 0, overwritten = 0, lost = 0;
	struct ktrace_opts po = *f->o;

	f->snapshots++;
	snprintf(base, len, "%s.%u", f->o->output, f->snapshots);
	/* a state dump, so that the snapshot names every task */
	dev_name_tasks(f->ctl, f->o->dev);
	dev_session_mask(f->ctl, f->o->dev, 0);
	for (unsigned int i = 0; i < f->nr; i++) {
		unsigned int cpu = f->cpus[i];
		struct ktfile_header h = f->tmpl;
		struct ktrace_cpu_stats st;
		struct ktfile_writer w;
		int ret;

		if (dev_cpu_stats(f->ctl, cpu, &st) < 0)
			die("cpu %u: KTRACE_IOC_CPU_STATS: %s", cpu, strerror(errno));
		snprintf(path, len, "%s.cpu%u", base, cpu);
		h.cpu = cpu;
		ret = ktfile_create(&w, path, &h);
		if (ret < 0) {
			pr_err("%s: %s", path, kt_create_strerror(ret));
			f->failed = true;
			continue;
		}
		/* what the buffer no longer holds: a lost marker, as dtrace counts them */
		if (flight_read_cpu(f, cpu, &w, path,
				    st.overwritten + st.discarded - f->overwritten[i]) < 0)
			f->failed = true;
		records += w.records;
		overwritten += st.overwritten + st.discarded - f->overwritten[i];
		lost += st.lost - f->lost[i];
		f->overwritten[i] = st.overwritten + st.discarded;
		f->lost[i] = st.lost;
		ret = ktfile_close(&w);
		if (ret < 0) {
			pr_err("%s: %s", path, strerror(-ret));
			f->failed = true;
		}
	}
	if (mask)
		flight_resume(f, mask);
	po.output = base;
	save_proc(&po, "/proc/kallsyms", ".kallsyms");
	save_proc(&po, "/proc/interrupts", ".irqs");
	pr_info("snapshot %u: %llu records in %s.cpu*, %llu overwritten before them",
		f->snapshots, (unsigned long long)records, base,
		(unsigned long long)overwritten);
	if (lost)
		pr_warn("snapshot %u: %llu records lost (an interrupt found its buffer "
			"being written or freed)", f->snapshots, (unsigned long long)lost);
	free(path);
	free(base);
}

int flight(const struct ktrace_opts *o, int ctl, const struct ktrace_info *info,
	   bool set_mask, uint32_t mask)
{
	struct flight f = { .o = o, .ctl = ctl };
	unsigned int *cpus = xcalloc(o->nr_cpus, sizeof(*cpus));
	double deadline = 0;
	int status = 0;
	sigset_t orig;
	pid_t child = 0;

	if (set_mask && mask)
		mask |= KTRACE_GRP_thread;
	if (!set_mask)
		mask = info->mask;
	if (!mask)
		die("--flight: tracing is off: give -e with the groups to record");
	for (unsigned int n = 0; n < o->nr_cpus; n++)
		if (o->cpus[n])
			cpus[f.nr++] = n;
	if (!f.nr)
		die("no online CPU to record");
	f.cpus = cpus;
	f.overwritten = xcalloc(f.nr, sizeof(*f.overwritten));
	f.lost = xcalloc(f.nr, sizeof(*f.lost));
	f.buf = xmalloc(CHUNK_RECORDS * sizeof(struct ktrace_record));
	ktfile_header_init(&f.tmpl, 0, info->tsc_khz * 1000,
			   info->flags & KTRACE_INFO_TSC_INVARIANT, mask);

	flight_mode = true;
	catch_signals(&orig);
	/* owned from here: tracing off, the buffers empty */
	if (dev_session_mask(ctl, o->dev, 0) < 0)
		die("%s: tracing is in use: another ktrace owns it or reads a CPU "
		    "(is another ktrace recording?)", o->dev);
	dev_set_mode(ctl, o->dev, KTRACE_MODE_OVERWRITE);
	if (!flight_counters(&f, true) || dev_session_mask(ctl, o->dev, mask) < 0) {
		pr_err("%s: another reader holds a CPU: the flight recorder cannot start", o->dev);
		flight_end(&f, info->mask);
		exit(1);
	}
	pr_info("flight recorder on %u CPU%s: kill -USR1 %d writes a snapshot to %s.N.cpu*%s",
		f.nr, f.nr == 1 ? "" : "s", (int)getpid(), o->output,
		o->command || o->duration ? "" : "; ^C stops");
	if (o->command && (child = start_command(o->command, &orig)) < 0)
		f.failed = true;

	if (o->duration)
		deadline = now() + o->duration;
	while (!stop_sig && !f.failed && (!deadline || now() < deadline)) {
		struct timespec ts = to_timespec(deadline ? deadline - now() : 3600);

		if (snapshot_asked) {
			snapshot_asked = 0;
			flight_snapshot(&f, mask);
			continue;
		}
		if (child_changed) {
			child_changed = 0;
			if (child > 0 && waitpid(child, &status, WNOHANG) == child) {
				child = 0;
				break;
			}
		}
		ppoll(NULL, 0, &ts, &orig);
	}
	if (stop_sig && child > 0)
		kill(child, stop_sig);
	/* the end is a trigger too: what led up to it */
	flight_snapshot(&f, 0);
	flight_end(&f, info->mask);

	release_signals(&orig);
	if (child > 0) {
		while (waitpid(child, &status, 0) < 0 && errno == EINTR)
			;
	}
	free(cpus);
	free(f.overwritten);
	free(f.lost);
	free(f.buf);
	if (f.failed)
		return 1;
	return o->command ? exit_status(status) : 0;
}
