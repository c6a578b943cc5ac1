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
 * --send (send.c) hands the records to a collector instead of the files:
 * the same drain, the same counts and the same last lost marker, sent.
 *
 * --flight (flight.c) reads nothing while tracing and writes snapshots of
 * the kernel's overwrite-mode buffers instead.  session.c has what both
 * do around their files (signals, the command, the stop sequence),
 * procfiles.c the /proc copies.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "ktfile.h"
#include "ktrace.h"
#include "util.h"

#define SELF_RECORDS_MAX 512	/* more than one drain's own records */
#define EVENT_RECORDS_MAX 16	/* more than an event and its continuations */

/*
 * One recorded CPU.  Between the start and the join of its thread only that
 * thread touches it; before and after, the main thread.
 */
struct cpu_rec {
	struct recorder *r;
	unsigned int idx;		/* in recorder.cpus: its stream with --send */
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
	struct sender *send;		/* --send: frames to a collector, no files */
};

/*
 * Append to the CPU's file, or with --send hand to the sender, which never
 * refuses: what its spool cannot keep it counts in a lost marker itself.
 */
static int stream_append(struct cpu_rec *c, const struct ktrace_record *recs, size_t nr)
{
	if (!c->r->send)
		return ktfile_append(&c->file, recs, nr);
	sender_put(c->r->send, c->idx, recs, nr);
	c->file.records += nr;
	return 0;
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
/*
 * BASE.cpuN of the other kind (uncompressed beside a new .zst, or the
 * reverse) is an earlier recording's that "dtrace BASE.cpu*" would merge
 * with this one: said once, with the first such file.
 */
static void warn_other_kind(struct recorder *r)
{
	size_t len = strlen(r->o->output) + 20;
	char *other = xmalloc(len), *first = NULL;
	unsigned int nr = 0;
	struct stat st;

	for (unsigned int i = 0; i < r->nr; i++) {
		snprintf(other, len, "%s.cpu%u%s", r->o->output, r->cpus[i].cpu,
			 r->o->zstd ? "" : KTFILE_ZSTD_SUFFIX);
		if (lstat(other, &st) == 0 && !nr++)
			first = xstrdup(other);
	}
	if (nr)
		pr_warn("%s%s: %s of an earlier recording: \"dtrace %s.cpu*\" would merge "
			"%s with this one's %s files; remove %s", first,
			nr > 1 ? " and more" : "", nr > 1 ? "files" : "a file", r->o->output,
			nr > 1 ? "them" : "it", r->o->zstd ? ".zst" : "uncompressed",
			nr > 1 ? "them" : "it");
	free(first);
	free(other);
}

static void create_files(struct recorder *r, const struct ktfile_header *tmpl)
{
	struct ktfile_header h = *tmpl;
	size_t len = strlen(r->o->output) + 20;	/* .cpuN.zst */

	for (unsigned int i = 0; i < r->nr; i++) {
		struct cpu_rec *c = &r->cpus[i];
		int ret;

		c->path = xmalloc(len);
		snprintf(c->path, len, "%s.cpu%u%s", r->o->output, c->cpu,
			 r->o->zstd ? KTFILE_ZSTD_SUFFIX : "");
		h.cpu = c->cpu;
		ret = ktfile_create_as(&c->file, c->path, &h, r->o->zstd, r->o->zstd_level);
		if (ret < 0) {
			while (i--)
				unlink(r->cpus[i].path);
			die("%s: %s", c->path, kt_create_strerror(ret));
		}
	}
	warn_other_kind(r);
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

			ret = stream_append(c, c->buf, nr);
			/* compressed, a failed frame takes records of earlier reads with it */
			if (c->file.records < before) {
				c->unwritten += before - c->file.records;
				before = c->file.records;
			}
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

	if (!k || c->file.codec)	/* a compressed frame is not rewritten */
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

	if (owed <= c->markers || (c->file.fd < 0 && !r->send))
		return;
	owed -= c->markers;
	m.tsc = c->nr_last ? c->last[c->nr_last - 1].tsc : 0;
	m.arg1 = (uint32_t)owed;
	m.arg2 = (uint32_t)(owed >> 32);
	if (!c->write_failed && (ret = stream_append(c, &m, 1)) == 0) {
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

static void summary(struct recorder *r, double seconds)
{
	uint64_t records = 0, lost = 0, bytes = 0;

	for (unsigned int i = 0; i < r->nr; i++) {
		struct cpu_rec *c = &r->cpus[i];

		uint64_t c_lost = c->lost - c->lost_start + c->unwritten;

		if (c->markers > c_lost)
			c_lost = c->markers;
		pr_info("cpu %u: %llu records, %llu lost, %llu bytes %s %s", c->cpu,
			(unsigned long long)c->file.records, (unsigned long long)c_lost,
			(unsigned long long)ktfile_file_bytes(&c->file), r->send ? "to" : "in",
			r->send ? r->o->send : c->path);
		records += c->file.records;
		lost += c_lost;
		bytes += ktfile_file_bytes(&c->file);
	}
	pr_info("%u CPU%s, %.3f s: %llu records, %llu lost, %llu bytes", r->nr,
		r->nr == 1 ? "" : "s", seconds, (unsigned long long)records,
		(unsigned long long)lost, (unsigned long long)bytes);
}

int record(const struct ktrace_opts *given, int ctl, const struct ktrace_info *info,
	   bool set_mask, uint32_t mask)
{
	struct ktrace_opts send_opts = *given;	/* --send: BASE in the spool */
	const struct ktrace_opts *o = given;
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
	struct session s;
	int ret;

	r.cpus = xcalloc(o->nr_cpus, sizeof(*r.cpus));
	for (unsigned int n = 0; n < o->nr_cpus; n++)
		if (o->cpus[n])
			r.cpus[r.nr++].cpu = n;
	if (!r.nr)
		die("no online CPU to record");
	for (unsigned int i = 0; i < r.nr; i++) {
		r.cpus[i].r = &r;
		r.cpus[i].idx = i;
		r.cpus[i].file.fd = -1;
		r.cpus[i].buf = xmalloc(CHUNK_RECORDS * sizeof(struct ktrace_record));
	}

	session_begin(&s, o, ctl, set_mask, false);
	for (unsigned int i = 0; i < r.nr; i++)
		attach_cpu(&r, &r.cpus[i]);
	ktfile_header_init(&tmpl, 0, info->tsc_khz * 1000,
			   info->flags & KTRACE_INFO_TSC_INVARIANT, recorded_mask);
	if (o->send) {
		unsigned int *ids = xcalloc(r.nr, sizeof(*ids));

		for (unsigned int i = 0; i < r.nr; i++)
			ids[i] = r.cpus[i].cpu;
		r.send = sender_open(o, &tmpl, ids, r.nr);
		free(ids);
		send_opts.output = sender_base(r.send);
		o = r.o = s.o = &send_opts;
		sender_start(r.send);
	} else {
		create_files(&r, &tmpl);
	}
	save_proc_copies(o->output);
	if (!recorded_mask)
		pr_warn("tracing is off (mask 0): nothing will be recorded until a mask is set");
	start_threads(&r);
	if (set_mask)
		dev_session_mask(ctl, o->dev, mask);
	if (recorded_mask)
		dev_name_tasks(ctl, o->dev);
	pr_info("recording %u CPU%s %s %s%s%s", r.nr, r.nr == 1 ? "" : "s",
		r.send ? "to" : "into", r.send ? o->send : o->output, r.send ? "" : ".cpu*",
		o->command || o->duration ? "" : "; ^C stops");
	if (!session_run(&s))
		r.failed = true;

	/* a thread that failed is seen within -w ms */
	while (!__atomic_load_n(&r.failed, __ATOMIC_RELAXED) && !session_stopped(&s) &&
	       session_sleep(&s, o->wait_ms / 1000.0))
		;

	session_stop(&s);
	/* off, every record reserved written: the last drain gets whole events */
	if (set_mask)
		dev_session_mask(ctl, o->dev, 0);
	stop_threads(&r);
	/* ends the session: the mask stays */
	if (set_mask)
		dev_put_mask_back(ctl, o->dev, info->mask);
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
	if (r.send && sender_finish(r.send, o->send_wait) < 0)
		r.failed = true;
	summary(&r, now() - s.start);
	ret = session_end(&s, r.failed);

	for (unsigned int i = 0; i < r.nr; i++) {
		free(r.cpus[i].path);
		free(r.cpus[i].buf);
	}
	if (r.stop_fd >= 0)
		close(r.stop_fd);
	free(r.cpus);
	return ret;
}
