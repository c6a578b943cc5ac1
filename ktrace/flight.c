// SPDX-License-Identifier: GPL-2.0
/*
 * flight: ktrace --flight, the flight recorder (below); record.c is the
 * recorder, session.c what both do around their files.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "ktfile.h"
#include "ktrace.h"
#include "probe.h"
#include "util.h"

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
	if (!dev_put_mask_back(f->ctl, f->o->dev, old_mask))
		f->failed = true;
}

static void flight_snapshot(struct flight *f, uint32_t mask)
{
	size_t len = strlen(f->o->output) + 32;
	char *base = xmalloc(len), *path = xmalloc(len);
	uint64_t records = 0, overwritten = 0, lost = 0;

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
		snprintf(path, len, "%s.cpu%u%s", base, cpu, f->o->zstd ? KTFILE_ZSTD_SUFFIX : "");
		h.cpu = cpu;
		ret = ktfile_create_as(&w, path, &h, f->o->zstd, f->o->zstd_level);
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
	save_proc_copies(base);
	if (f->o->probes)
		probes_save(f->o->probes, base);
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
	struct session s;
	int ret;

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

	session_begin(&s, o, ctl, true, true);
	dev_set_mode(ctl, o->dev, KTRACE_MODE_OVERWRITE);
	if (!flight_counters(&f, true) || dev_session_mask(ctl, o->dev, mask) < 0) {
		pr_err("%s: another reader holds a CPU: the flight recorder cannot start", o->dev);
		flight_end(&f, info->mask);
		exit(1);
	}
	pr_info("flight recorder on %u CPU%s: kill -USR1 %d writes a snapshot to %s.N.cpu*%s",
		f.nr, f.nr == 1 ? "" : "s", (int)getpid(), o->output,
		o->command || o->duration ? "" : "; ^C stops");
	if (!session_run(&s))
		f.failed = true;

	while (!f.failed && !session_stopped(&s)) {
		if (session_snapshot_asked()) {
			flight_snapshot(&f, mask);
			continue;
		}
		if (!session_sleep(&s, 3600))
			break;
	}

	session_stop(&s);
	/* the end is a trigger too: what led up to it */
	flight_snapshot(&f, 0);
	flight_end(&f, info->mask);
	ret = session_end(&s, f.failed);

	free(cpus);
	free(f.overwritten);
	free(f.lost);
	free(f.buf);
	return ret;
}
