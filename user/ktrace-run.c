// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace-run: run a program with libktrace preloaded, so that its function
 * calls (if it was built with -finstrument-functions) and its TRACE()
 * events are recorded, one file per thread; with -e also the kernel's
 * events, by running it under ktrace.  Then dtrace --calltree DIR/trace.*
 *
 * ktrace-run drains the threads' rings itself, from outside the program:
 * each thread's ring is a file of a private directory on tmpfs (the ring
 * directory, KTRACE_RUN_RINGS), which the thread maps shared; ktrace-run
 * maps it too and appends what the thread published to the thread's trace
 * file.  So whatever ends a process (_exit, exec, abort, a crash, SIGKILL),
 * what it recorded is in the trace, and the library needs no thread, file
 * descriptor or signal handler in the program.  See user/ring.h.
 *
 * ktrace-run is the subreaper of what it runs: it drains until the last
 * process of the command is gone, then exits as the command did (its exit
 * status, or killed by the same signal).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <linux/futex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <stddef.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "funcpat.h"
#include "ktevents.h"
#include "ktfile.h"
#include "opts.h"
#include "ring.h"
#include "ring_drain.h"
#include "util.h"

#define DRAIN_PERIOD_MS	5	/* a round at least this often: exits, new rings */

enum { OPT_DEPTH = 256, OPT_ZSTD_LEVEL };

/* The one options table (lib/opts.h), as ktrace's and dtrace's */
static const struct kt_option options[] = {
	{ "output", required_argument, 'o', "DIR",
	  "where the trace files go (default ktrace.data)" },
	{ "buffer", required_argument, 'b', "RECORDS",
	  "ring size per thread, a power of two (default 65536)" },
	{ "events", required_argument, 'e', "MASK",
	  "trace the kernel's events too: ktrace -e MASK -o DIR/trace" },
	{ "kernel", required_argument, 'k', "MASK", NULL },	/* old spelling: hidden */
	{ "list", no_argument, 'l', NULL, "list the groups and their events (for -e)" },
	{ "drop", no_argument, 'D', NULL,
	  "drop records when a ring is full instead of waiting" },
	{ "filter", required_argument, 'F', "FUNC",
	  "record only FUNC's calls and their callees (name, glob, /regex/)" },
	{ "notrace", required_argument, 'N', "FUNC",
	  "do not record FUNC's calls, nor their callees" },
	{ "zstd", no_argument, 'z', NULL,
	  "compress the trace files with zstd (NAME.zst; -e: ktrace -z)" },
	{ "zstd-level", required_argument, OPT_ZSTD_LEVEL, "LEVEL",
	  "zstd level for -z (default 1; negative: faster)" },
	{ "depth", required_argument, OPT_DEPTH, "N",
	  "record only calls less than N deep (from the outermost -F call)" },
	{ "help", no_argument, 'h', NULL, "show this help and exit" },
	{ "version", no_argument, 'V', NULL, "show the version and exit" },
};

static void usage(FILE *f)
{
	kt_usage(f, &(struct kt_opts)KT_OPTS(options, true), "ktrace-run",
		 "[OPTION]... [--] COMMAND [ARG]...",
		 "Run COMMAND with libktrace preloaded: function entries and exits of code\n"
		 "built with -finstrument-functions and TRACE() events go to\n"
		 "DIR/trace.pid<PID>.tid<TID>, the memory map to DIR/trace.pid<PID>.maps.\n"
		 "Then: dtrace --calltree DIR/trace.*\n",
		 "Environment: KTRACE_LIB names libktrace.so (default: next to ktrace-run,\n"
		 "or ../lib).  See ktrace_user.h for the variables the library reads.\n");
}

/* A file next to this program, or in ../lib (an installed tree). */
static char *beside_me(const char *name, const char *libdir_name)
{
	char self[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *dir;

	if (n <= 0)
		return NULL;
	self[n] = '\0';
	dir = dirname(self);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (access(path, R_OK) == 0)
		return xstrdup(path);
	if (libdir_name) {
		snprintf(path, sizeof(path), "%s/../lib/%s", dir, libdir_name);
		if (access(path, R_OK) == 0)
			return realpath(path, NULL);
	}
	return NULL;
}

/* -o DIR: no symbolic link of another user as DIR or on the way (see main()). */
static void refuse_foreign_links(const char *dir)
{
	char link[PATH_MAX];
	unsigned int uid;

	if (kt_foreign_link(dir, link, sizeof(link), &uid))
		die("%s: a symbolic link of another user (uid %u): not followed; "
		    "give the directory it names", link, uid);
}

/* Missing directories of @dir, created 0700: trace files are private. */
static void mkdir_p(const char *dir)
{
	char *p = xstrdup(dir);

	for (char *s = p + 1; ; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, 0700) < 0 && errno != EEXIST)
			die("%s: %s", p, strerror(errno));
		refuse_foreign_links(p);	/* planted since the check: before going in */
		*s = c;
		if (!c)
			break;
	}
	free(p);
}

/* A directory to write trace files in (kt_open_checked_dir()), or die saying why. */
static int open_checked_dir(const char *dir)
{
	int fd = kt_open_checked_dir(dir);
	struct stat st;

	if (fd >= 0)
		return fd;
	if (errno != EPERM || stat(dir, &st) < 0)
		die("%s: %s", dir, strerror(errno));
	if (st.st_uid != geteuid() && st.st_uid != 0)
		die("%s: belongs to another user (uid %u); trace files go in a directory of yours",
		    dir, (unsigned int)st.st_uid);
	die("%s: writable by others; trace files go in a directory only you can write", dir);
}

static void set_env(const char *name, const char *value)
{
	if (setenv(name, value, 1) < 0)
		die("setenv %s: %s", name, strerror(errno));
}

/*
 * -F, -N: the library's variable @name gets @pattern, after a ';'; checked
 * here (libktrace only warns) so that a mistake stops before anything runs.
 */
static void add_pattern(const char *name, const char *opt, const char *pattern)
{
	const char *old = getenv(name);
	struct kt_funcpat p;
	char err[256], *all;

	if (strchr(pattern, ';'))
		kt_usage_error("%s '%s': a pattern has no ';' (give the option again)",
			       opt, pattern);
	if (!kt_funcpat_compile(&p, pattern, err, sizeof(err)))
		kt_usage_error("%s: %s", opt, err);
	kt_funcpat_free(&p);
	if (old && *old) {
		all = xmalloc(strlen(old) + strlen(pattern) + 2);
		sprintf(all, "%s;%s", old, pattern);
		set_env(name, all);
		free(all);
	} else {
		set_env(name, pattern);
	}
}

/* The device -e records through: missing, ktrace would die and run nothing. */
static void check_kernel_dev(void)
{
	const char *dev = getenv("KTRACE_DEV");
	int fd;

	if (!dev || !*dev)
		dev = "/dev/ktrace";
	fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd >= 0) {
		close(fd);
		return;
	}
	if (errno == ENOENT || errno == ENOTDIR || errno == ENODEV || errno == ENXIO)
		die("-e: " KTRACE_DEV_MISSING_FMT "; or run without -e to record only "
		    "the program's calls", dev);
	if (errno == EACCES || errno == EPERM)
		die("-e: %s: %s: recording the kernel needs root (CAP_SYS_ADMIN); or run "
		    "without -e to record only the program's calls", dev, strerror(errno));
}

/* The kernel's TSC rate, so that user and kernel files convert alike. */
static uint64_t kernel_tsc_hz(void)
{
	const char *dev = getenv("KTRACE_DEV");
	struct ktrace_info info;
	int fd = open(dev && *dev ? dev : "/dev/ktrace", O_RDONLY | O_CLOEXEC);
	uint64_t hz = 0;

	if (fd >= 0 && ioctl(fd, KTRACE_IOC_INFO, &info) == 0)
		hz = info.tsc_khz * 1000;
	if (fd >= 0)
		close(fd);
	return hz;
}

/* ---- draining -------------------------------------------------------------- */

#define PENDING_MS	2000	/* without its magic that long, and its maker gone: none */
#define RESCAN_MS	100	/* look for rings nobody announced this often */

enum ring_state { RING_PENDING, RING_LIVE, RING_BAD };

/**
 * struct ring - a file of the ring directory named as a ring
 * @name:     its name there, ring.<pid>.<tid>.<n>
 * @state:    PENDING until it is whole (its magic set), LIVE while drained,
 *            BAD once refused (said once, then only remembered)
 * @d:        the draining (ring_drain.h), LIVE only
 * @out_name: the thread's trace file in the run's directory
 * Found in run->table by name; LIVE ones also on run->rings.
 */
struct ring {
	char name[64];
	uint32_t pid, tid;
	enum ring_state state;
	uint64_t seen_ms;		/* first found */
	bool said;			/* a transient error was reported */
	bool write_said;
	bool removed;			/* BAD, and its file unlinked: forgotten */
	struct ring_drain d;
	char out_name[80];
	struct ring *next;		/* run->rings */
	struct ring *hnext;		/* run->table chain */
};

/* What a run is: the command, its directories, the rings being drained. */
struct run {
	const char *dir;		/* trace files, absolute */
	int dir_fd;
	char rings_dir[PATH_MAX];	/* ring files and the control page */
	int rings_fd;
	int spare_fd[2];		/* held for a scan and a ring open past EMFILE */
	struct ring_src control;	/* the control page, guarded: the program can cut it */
	int control_fd;
	bool control_said;
	struct ktfile_header tmpl;	/* the trace files' header: ring_check() */
	struct ring *rings;		/* LIVE */
	struct ring **table;		/* every ring by name: one scan is O(files) */
	size_t table_size, nr_rings;
	unsigned int pending;
	struct ktrace_record *buf;	/* RING_CHUNK records: every ring is copied through it */
	uint64_t last_scan_ms;
	pid_t child;			/* the command (or ktrace) */
	int child_status;
	bool child_done;
	struct rlimit nofile;		/* the command's, as it was given to us */
	bool nofile_raised;		/* ours is the hard limit: nofile goes back for it */
	bool zstd;			/* -z: compressed files, NAME.zst */
	int zstd_level;			/* --zstd-level */
	const char *zstd_level_arg;	/* as given, for ktrace */
	unsigned long files, records, failed;
	uint64_t lost, unmarked;	/* lost records; of them, not marked in a file */
};

static volatile sig_atomic_t child_pid;

/* SIGTERM, SIGHUP to ktrace-run are for the command: it ends, we drain. */
static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static size_t name_hash(const char *name)
{
	size_t h = 2166136261u;

	for (; *name; name++)
		h = (h ^ (unsigned char)*name) * 16777619u;
	return h;
}

static struct ring **ring_slot(struct run *run, const char *name)
{
	struct ring **p = &run->table[name_hash(name) & (run->table_size - 1)];

	while (*p && strcmp((*p)->name, name))
		p = &(*p)->hnext;
	return p;
}

static struct ring *ring_add(struct run *run, const char *name)
{
	struct ring *g;

	if (run->nr_rings >= run->table_size) {
		size_t old = run->table_size;
		struct ring **t = run->table;

		run->table_size = old * 2;
		run->table = xcalloc(run->table_size, sizeof(*run->table));
		for (size_t i = 0; i < old; i++)
			for (struct ring *e = t[i], *n; e; e = n) {
				struct ring **slot = ring_slot(run, e->name);

				n = e->hnext;
				e->hnext = *slot;
				*slot = e;
			}
		free(t);
	}
	g = xcalloc(1, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->seen_ms = now_ms();
	g->d.out.fd = -1;
	g->d.src.fd = -1;
	*ring_slot(run, name) = g;
	run->nr_rings++;
	return g;
}

static void ring_forget(struct run *run, struct ring *g)
{
	struct ring **slot = ring_slot(run, g->name);

	*slot = g->hnext;
	run->nr_rings--;
	free(g);
}

/*
 * Refused for good: said once, the file removed (it is in our directory);
 * remembered only if it could not be removed (not to say it again).
 */
static void ring_bad(struct run *run, struct ring *g, const char *why)
{
	pr_warn("%s/%s: %s; ignored", run->rings_dir, g->name, why);
	g->state = RING_BAD;
	g->removed = unlinkat(run->rings_fd, g->name, 0) == 0;
}

/*
 * A ring named as a thread's that never became whole: that thread's records,
 * if it was one, are lost; the exit status says so (counted as a failure).
 */
static void ring_lost(struct run *run, struct ring *g, const char *why)
{
	ring_bad(run, g, why);
	run->failed++;
}

/*
 * Whether the thread named in @g's name still lives: a big ring is reserved
 * and written before its magic is set, seconds on a loaded machine, and
 * a stopped thread finishes it only once continued.  EPERM: alive too.
 */
static bool maker_alive(const struct ring *g)
{
	return syscall(SYS_tgkill, g->pid, g->tid, 0) == 0 || errno == EPERM;
}

/*
 * The thread's trace file: trace.pid<P>.tid<T>, .1 ... after an exec (a
 * name in use is never replaced), made by ktfile_create(): 0600, never
 * through a link, and no file is left behind without a whole header.
 */
static int create_output(struct run *run, struct ring *g, const struct ktfile_header *h)
{
	char path[PATH_MAX + 96];
	int ret = -EEXIST;

	for (unsigned int n = 0; n < 1000 && ret == -EEXIST; n++) {
		const char *zst = run->zstd ? KTFILE_ZSTD_SUFFIX : "";

		if (n)
			snprintf(g->out_name, sizeof(g->out_name), "trace.pid%u.tid%u.%u%s",
				 h->pid, h->tid, n, zst);
		else
			snprintf(g->out_name, sizeof(g->out_name), "trace.pid%u.tid%u%s",
				 h->pid, h->tid, zst);
		if (faccessat(run->dir_fd, g->out_name, F_OK, AT_SYMLINK_NOFOLLOW) == 0)
			continue;
		snprintf(path, sizeof(path), "%s/%s", run->dir, g->out_name);
		ret = ktfile_create_as(&g->d.out, path, h, run->zstd, run->zstd_level);
	}
	if (ret < 0) {
		pr_err("%s/%s: %s; the records of thread %u are not written (counted as lost)",
		       run->dir, g->out_name, kt_create_strerror(ret), h->tid);
		run->failed++;
		return -1;
	}
	run->files++;
	return g->d.out.fd;
}

/*
 * Out of descriptors (EMFILE): the spare one is let go for this open, so
 * that a ring is still found and taken (its thread then drained, what has
 * no file counted), never left unseen with its records uncounted.
 */
static bool spare_release(struct run *run)
{
	if (errno != EMFILE)
		return false;
	for (int i = 0; i < 2; i++)
		if (run->spare_fd[i] >= 0) {
			close(run->spare_fd[i]);
			run->spare_fd[i] = -1;
			return true;
		}
	return false;
}

static void spare_keep(struct run *run)
{
	for (int i = 0; i < 2; i++)
		if (run->spare_fd[i] < 0)
			run->spare_fd[i] = fcntl(run->rings_fd, F_DUPFD_CLOEXEC, 0);
}

/*
 * A stream of directory @dir_fd's entries from its start, on a descriptor
 * of its own (a spare one let go where there is none); NULL: errno says.
 */
static DIR *read_dir(struct run *run, int dir_fd)
{
	int fd = dup(dir_fd);
	DIR *d;

	if (fd < 0 && spare_release(run))
		fd = dup(dir_fd);
	d = fd < 0 ? NULL : fdopendir(fd);
	if (!d && fd >= 0) {
		int err = errno;

		close(fd);
		errno = err;
	}
	if (d)
		rewinddir(d);
	return d;
}

/* Take ring @g if it is whole now; else it stays PENDING, or is BAD. */
static void take_ring(struct run *run, struct ring *g)
{
	struct ring_src src = { .fd = -1 };
	struct ktfile_writer out;
	struct ktfile_header hdr;
	struct kt_ring page;
	uint64_t records;
	const char *why;
	struct stat st;
	int fd, ok, out_fd;

	fd = openat(run->rings_fd, g->name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && spare_release(run))
		fd = openat(run->rings_fd, g->name, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		g->state = RING_BAD;	/* gone already: nothing to say, forgotten */
		g->removed = true;
		return;
	}
	if (fd < 0) {
		/* EMFILE, ENOMEM ...: the next round tries again */
		if (!g->said)
			pr_warn("%s/%s: %s; trying again", run->rings_dir, g->name, strerror(errno));
		g->said = true;
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		ring_bad(run, g, "not a regular file");
		return;
	}
	/* pread, not a load from a mapping: the file may be cut meanwhile */
	if (pread(fd, &page, sizeof(page), 0) != sizeof(page))
		ok = 0;
	else
		ok = ring_check(&page, st.st_size, g->pid, g->tid, &run->tmpl, &hdr, &records, &why);
	if (ok <= 0) {
		close(fd);
		if (ok < 0)
			ring_bad(run, g, why);
		else if (now_ms() - g->seen_ms > PENDING_MS && !maker_alive(g))
			ring_lost(run, g, "never became a ring (no magic, or too short, for 2 s, "
				  "and its thread is gone)");
		return;
	}
	src.size = st.st_size;
	src.map = mmap(NULL, src.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	src.mapped = src.size;
	if (src.map == MAP_FAILED) {
		/* RLIMIT_AS, vm.max_map_count: the records are read through the file */
		pr_warn("%s/%s: mmap: %s; its records are read through its file instead",
			run->rings_dir, g->name, strerror(errno));
		src.map = mmap(NULL, KT_RING_HEADER, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		src.mapped = src.map == MAP_FAILED ? 0 : KT_RING_HEADER;
		if (src.map == MAP_FAILED)
			src.map = NULL;
		src.fd = fd;
	} else {
		close(fd);
		spare_keep(run);
	}
	out_fd = create_output(run, g, &hdr);
	out = g->d.out;
	ring_drain_init(&g->d, src, records, out_fd, g->tid, hdr.ref_tsc, run->buf);
	g->d.out = out;		/* the whole writer: -z's codec with its descriptor */
	g->state = RING_LIVE;
	g->next = run->rings;
	run->rings = g;
}

/* New rings in the ring directory; those not yet whole tried again. */
static void scan_rings(struct run *run)
{
	DIR *d = read_dir(run, run->rings_fd);
	struct dirent *e;

	run->last_scan_ms = now_ms();
	if (!d) {
		/* EMFILE: the next round tries again */
		pr_warn("%s: %s", run->rings_dir, strerror(errno));
		return;
	}
	run->pending = 0;
	while ((e = readdir(d))) {
		unsigned int pid, tid, n;
		struct ring *g;

		if (strncmp(e->d_name, KT_RING_PREFIX, strlen(KT_RING_PREFIX)))
			continue;
		g = *ring_slot(run, e->d_name);
		if (!g) {
			if (strlen(e->d_name) >= sizeof(g->name) ||
			    sscanf(e->d_name, KT_RING_PREFIX "%u.%u.%u", &pid, &tid, &n) != 3)
				continue;		/* not a ring: leave it */
			g = ring_add(run, e->d_name);
			g->pid = pid;
			g->tid = tid;
		}
		if (g->state == RING_PENDING)
			take_ring(run, g);
		if (g->state == RING_PENDING)
			run->pending++;
		else if (g->state == RING_BAD && g->removed)
			ring_forget(run, g);
	}
	closedir(d);
	spare_keep(run);
}

/* Said once per ring: its file failed, or the ring did. */
static void ring_report(struct run *run, struct ring *g)
{
	if (g->d.write_err && !g->write_said) {
		pr_err("%s/%s: %s; the rest of thread %u is counted as lost, not written",
		       run->dir, g->out_name, strerror(g->d.write_err), g->tid);
		g->write_said = true;
		run->failed++;
	}
}

/* Drained for good: end the file, forget the ring and remove it. */
static void close_ring(struct run *run, struct ring **link)
{
	struct ring *g = *link;
	bool had_file = g->d.out.fd >= 0;
	int ret;

	ring_drain(&g->d);
	ring_report(run, g);
	if (g->d.why) {
		pr_err("%s/%s: %s; nothing more is taken from it (%s/%s has what came before)",
		       run->rings_dir, g->name, g->d.why, run->dir, g->out_name);
		run->failed++;
	}
	ret = ring_finish(&g->d);
	if (ret < 0)
		pr_err("%s/%s: the lost marker of %llu records: %s", run->dir, g->out_name,
		       (unsigned long long)g->d.lost, strerror(-ret));
	else if (!had_file && g->d.lost)
		ret = -1;
	run->records += g->d.written;
	run->lost += g->d.marked + g->d.lost;
	if (ret < 0)
		run->unmarked += g->d.lost;
	if (g->d.src.map)
		munmap(g->d.src.map, g->d.src.mapped);
	if (g->d.src.fd >= 0)
		close(g->d.src.fd);
	unlinkat(run->rings_fd, g->name, 0);
	*link = g->next;
	ring_forget(run, g);
}

/* Drain every ring; close those whose thread ended, or all of process @dead. */
static void drain_all(struct run *run, pid_t dead, bool all)
{
	for (struct ring **link = &run->rings; *link; ) {
		struct ring *g = *link;

		if (ring_drain(&g->d) >= 0)
			ring_report(run, g);
		if (all || g->pid == (uint32_t)dead || g->d.why || ring_ended(&g->d))
			close_ring(run, link);
		else
			link = &g->next;
	}
}

/* Reap what ended; false once nothing of the command is left. */
static bool reap(struct run *run)
{
	for (;;) {
		int status;
		pid_t pid = waitpid(-1, &status, WNOHANG | __WALL);

		if (pid == 0)
			return true;
		if (pid < 0)
			return errno != ECHILD;
		if (pid == run->child) {
			run->child_status = status;
			run->child_done = true;
			child_pid = 0;
		}
		/* its last rings may be new: take them, then write all of them */
		scan_rings(run);
		drain_all(run, pid, false);
	}
}

/*
 * The control page is the program's to write, and to cut: a fault in it
 * puts its size back (our descriptor), said once.
 */
static bool control_access(struct run *run, enum ring_op op, size_t off, void *v, size_t len)
{
	if (ring_access(&run->control, op, off, v, len))
		return true;
	if (!run->control_said)
		pr_warn("%s/control: cut under ktrace-run; its size is put back", run->rings_dir);
	run->control_said = true;
	if (ftruncate(run->control_fd, KT_RING_HEADER) < 0)
		return false;
	return ring_access(&run->control, op, off, v, len);
}

#define CONTROL_OFF(field)	offsetof(struct kt_control, field)

static void drain_loop(struct run *run)
{
	uint32_t rings_seen = 0;

	do {
		uint32_t kick = 0, now_kick, rings = 0, one = 1, zero = 0;
		uint64_t beat = 0;
		struct timespec ts = { 0, DRAIN_PERIOD_MS * 1000000 };

		/* a ring counted is made before it is counted: read the count first */
		control_access(run, G_LOAD32, CONTROL_OFF(kick), &kick, 4);
		control_access(run, G_LOAD32, CONTROL_OFF(rings_made), &rings, 4);
		if (rings != rings_seen || !run->rings || run->pending ||
		    now_ms() - run->last_scan_ms >= RESCAN_MS) {
			scan_rings(run);
			rings_seen = rings;
		}
		drain_all(run, 0, false);
		control_access(run, G_LOAD64, CONTROL_OFF(heartbeat), &beat, 8);
		beat++;
		control_access(run, G_STORE64, CONTROL_OFF(heartbeat), &beat, 8);
		control_access(run, G_STORE32, CONTROL_OFF(sleeping), &one, 4);
		if (!control_access(run, G_LOAD32, CONTROL_OFF(kick), &now_kick, 4))
			nanosleep(&ts, NULL);
		else if (now_kick == kick)
			syscall(SYS_futex, run->control.map + CONTROL_OFF(kick), FUTEX_WAIT, kick,
				&ts, NULL, 0);
		control_access(run, G_STORE32, CONTROL_OFF(sleeping), &zero, 4);
	} while (reap(run));
	scan_rings(run);
	drain_all(run, 0, true);
	for (size_t i = 0; i < run->table_size; i++)
		for (struct ring *g = run->table[i]; g; g = g->hnext)
			if (g->state == RING_PENDING) {
				struct stat st;

				/* removed by its maker (no room for it): nothing to say */
				if (fstatat(run->rings_fd, g->name, &st, AT_SYMLINK_NOFOLLOW) < 0 &&
				    errno == ENOENT)
					continue;
				ring_lost(run, g, "never became a ring (no magic, or too short)");
			}
}

/* The ring directory: private, on tmpfs if there is one; the control page in it. */
static void make_rings_dir(struct run *run)
{
	const char *shm = "/dev/shm/ktrace-run.XXXXXX";
	struct kt_control *c;
	int fd;

	snprintf(run->rings_dir, sizeof(run->rings_dir), "%s", shm);
	if (!mkdtemp(run->rings_dir)) {
		snprintf(run->rings_dir, sizeof(run->rings_dir), "%s/.rings.XXXXXX", run->dir);
		if (!mkdtemp(run->rings_dir))
			die("%s: %s", run->rings_dir, strerror(errno));
	}
	run->rings_fd = open_checked_dir(run->rings_dir);
	run->spare_fd[0] = run->spare_fd[1] = -1;
	spare_keep(run);
	fd = openat(run->rings_fd, "control", O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC,
		    0600);
	/* its page allocated: a sparse one that tmpfs has no room for is a SIGBUS */
	if (fd < 0 || (errno = posix_fallocate(fd, 0, KT_RING_HEADER)) != 0) {
		int err = errno;

		unlinkat(run->rings_fd, "control", 0);
		rmdir(run->rings_dir);
		die("%s/control: %s", run->rings_dir, strerror(err));
	}
	c = mmap(NULL, KT_RING_HEADER, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (c == MAP_FAILED)
		die("%s/control: mmap: %s", run->rings_dir, strerror(errno));
	run->control_fd = fd;		/* to put its size back if it is cut */
	c->version = KT_RING_VERSION;
	c->drainer_pid = getpid();
	__atomic_store_n(&c->magic, KT_CONTROL_MAGIC, __ATOMIC_RELEASE);
	run->control = (struct ring_src){ .map = (char *)c, .mapped = KT_RING_HEADER, .fd = -1,
					  .size = KT_RING_HEADER };
}

/* Everything in it is ours: what the program left there too. */
static void remove_rings_dir(struct run *run)
{
	DIR *d = read_dir(run, run->rings_fd);
	struct dirent *e;

	while (d && (e = readdir(d)))
		if (strcmp(e->d_name, ".") && strcmp(e->d_name, ".."))
			unlinkat(run->rings_fd, e->d_name, 0);
	if (d)
		closedir(d);
	close(run->rings_fd);
	close(run->control_fd);
	for (int i = 0; i < 2; i++)
		if (run->spare_fd[i] >= 0)
			close(run->spare_fd[i]);
	if (rmdir(run->rings_dir) < 0)
		pr_warn("%s: %s", run->rings_dir, strerror(errno));
}

/* End as the command did: its exit status, or its signal (without a core of ours). */
static int exit_like(int status)
{
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);
		struct rlimit no_core = { 0, 0 };
		sigset_t set;

		setrlimit(RLIMIT_CORE, &no_core);
		signal(sig, SIG_DFL);
		sigemptyset(&set);
		sigaddset(&set, sig);
		sigprocmask(SIG_UNBLOCK, &set, NULL);
		raise(sig);
		return 128 + sig;
	}
	return WEXITSTATUS(status);
}

/* A map file in the output directory: libktrace was loaded and started recording. */
static bool dir_has_maps(struct run *run)
{
	DIR *d = read_dir(run, run->dir_fd);
	struct dirent *e;
	bool found = false;

	if (!d)
		return false;
	while (!found && (e = readdir(d))) {
		size_t len = strlen(e->d_name);

		found = len > 5 && !strcmp(e->d_name + len - 5, ".maps");
	}
	closedir(d);
	return found;
}

/*
 * Nothing recorded: say so, or the run looks like a success that wrote no
 * file.  Not where the command could not be run (126, 127: said already),
 * nor where libktrace started and found no room for a ring (it said why).
 */
static void say_if_nothing(struct run *run, const char *command)
{
	if (run->files || (WIFEXITED(run->child_status) &&
			   (WEXITSTATUS(run->child_status) == 126 ||
			    WEXITSTATUS(run->child_status) == 127)) || dir_has_maps(run))
		return;
	pr_warn("%s recorded nothing, no trace file in %s: none of its code was built with "
		"-finstrument-functions and it made no TRACE() event, or libktrace was not "
		"loaded (a static program needs libktrace.a linked in; a setuid program "
		"records only for root)", command, run->dir);
}

int main(int argc, char **argv)
{
	struct kt_opts opts = KT_OPTS(options, true);	/* the command's options are its own */
	const char *dir = "ktrace.data", *kernel_mask = NULL, *lib;
	char *preload, *abs_dir, *base, hz[32], **args;
	struct run run = { .child_status = 0, .zstd_level = KTFILE_ZSTD_LEVEL };
	uint64_t tsc_hz;
	int c, n = 0;

	util_set_progname(argv[0]);
	while ((c = kt_getopt(&opts, argc, argv)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				kt_usage_error("-o: empty directory name");
			dir = optarg;
			break;
		case 'b': {
			char *end;
			unsigned long n = strtoul(optarg, &end, 0);

			if (*end || n < 1024 || n > (1ul << 24) || (n & (n - 1)))
				kt_usage_error("-b %s: not a power of two from 1024 to 16777216",
					       optarg);
			set_env("KTRACE_USER_BUF", optarg);
			break;
		}
		case 'e':
		case 'k': {
			uint32_t mask;

			/* ktrace checks it again: a mistake is a usage error before anything runs */
			if (ktev_parse_mask(optarg, 0, &mask) < 0)
				exit(KT_USAGE_EXIT);
			kernel_mask = optarg;
			break;
		}
		case 'l':
			ktev_list(stdout);
			return 0;
		case 'D':
			set_env("KTRACE_USER_DROP", "1");
			break;
		case 'z':
			run.zstd = true;
			break;
		case OPT_ZSTD_LEVEL: {
			int min, max;

			if (!ktfile_zstd_parse_level(optarg, &run.zstd_level, &min, &max))
				kt_usage_error("--zstd-level %s: not a zstd level (%d-%d)",
					       optarg, min, max);
			run.zstd = true;
			run.zstd_level_arg = optarg;
			break;
		}
		case 'F':
			add_pattern("KTRACE_USER_FILTER", "--filter", optarg);
			break;
		case 'N':
			add_pattern("KTRACE_USER_NOTRACE", "--notrace", optarg);
			break;
		case OPT_DEPTH: {
			char *end;
			unsigned long n = strtoul(optarg, &end, 10);

			if (*optarg < '0' || *optarg > '9' || *end || n < 1 || n > 1000000)
				kt_usage_error("--depth %s: not a depth from 1 to 1000000", optarg);
			set_env("KTRACE_USER_DEPTH", optarg);
			break;
		}
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			kt_version("ktrace-run");
			return 0;
		}
	}
	if (optind == argc)
		kt_usage_error("no command given");

	lib = getenv("KTRACE_LIB");
	if (!lib || !*lib)
		lib = beside_me("libktrace.so.0", "libktrace.so.0");
	if (!lib)
		die("libktrace.so.0 not found next to ktrace-run or in ../lib; set KTRACE_LIB");
	if (access(lib, R_OK) < 0)
		die("%s: %s", lib, strerror(errno));
	/*
	 * As root in /tmp: a link another user planted as DIR or on the way is
	 * not followed.  mkdir_p() checks each component again once it exists:
	 * a name planted meanwhile is a link by then (ours cannot be replaced).
	 */
	refuse_foreign_links(dir);
	mkdir_p(dir);
	abs_dir = realpath(dir, NULL);
	if (!abs_dir)
		die("%s: %s", dir, strerror(errno));
	run.dir = abs_dir;
	run.dir_fd = open_checked_dir(abs_dir);
	/* -e runs ktrace, which needs the device: say so before the command runs */
	if (kernel_mask)
		check_kernel_dev();
	/* one clock rate for every process of the run: the kernel's, or ours once */
	tsc_hz = kernel_mask ? kernel_tsc_hz() : 0;
	if (!tsc_hz)
		tsc_hz = ktfile_tsc_hz();
	snprintf(hz, sizeof(hz), "%llu", (unsigned long long)tsc_hz);
	make_rings_dir(&run);
	run.table_size = 256;
	run.table = xcalloc(run.table_size, sizeof(*run.table));
	run.buf = xmalloc(RING_CHUNK * sizeof(*run.buf));
	/* the trace files' header: ring_check() takes the rest from each ring */
	ktfile_header_init(&run.tmpl, -1, tsc_hz, true, 0);
	ring_guard_install();
	/* a descriptor per live thread: as many as we may (the command keeps its limit) */
	run.nofile_raised = getrlimit(RLIMIT_NOFILE, &run.nofile) == 0 &&
			    setrlimit(RLIMIT_NOFILE, &(struct rlimit){ run.nofile.rlim_max,
								   run.nofile.rlim_max }) == 0;
	set_env("KTRACE_TSC_HZ", hz);
	set_env("KTRACE_USER_DIR", abs_dir);
	set_env("KTRACE_RUN_RINGS", run.rings_dir);
	if (getenv("LD_PRELOAD") && *getenv("LD_PRELOAD")) {
		preload = xmalloc(strlen(lib) + strlen(getenv("LD_PRELOAD")) + 2);
		sprintf(preload, "%s:%s", lib, getenv("LD_PRELOAD"));
	} else {
		preload = xstrdup(lib);
	}
	set_env("LD_PRELOAD", preload);

	args = xcalloc(argc + 11, sizeof(*args));
	if (kernel_mask) {
		char *ktrace = beside_me("ktrace", NULL);

		base = xmalloc(strlen(abs_dir) + 8);
		sprintf(base, "%s/trace", abs_dir);
		args[n++] = ktrace ? ktrace : "ktrace";
		args[n++] = "-e";
		args[n++] = (char *)kernel_mask;
		args[n++] = "-o";
		args[n++] = base;
		if (run.zstd)
			args[n++] = "-z";
		if (run.zstd_level_arg) {
			args[n++] = "--zstd-level";
			args[n++] = (char *)run.zstd_level_arg;
		}
		args[n++] = "--";
	}
	for (int i = optind; i < argc; i++)
		args[n++] = argv[i];

	/* every process of the command is ours to reap, orphans included */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
		die("PR_SET_CHILD_SUBREAPER: %s", strerror(errno));
	fflush(NULL);
	run.child = fork();
	if (run.child < 0)
		die("fork: %s", strerror(errno));
	if (run.child == 0) {
		close(run.dir_fd);
		close(run.rings_fd);
		close(run.control_fd);
		if (run.nofile_raised)
			setrlimit(RLIMIT_NOFILE, &run.nofile);
		execvp(args[0], args);
		c = errno;
		pr_err("%s: %s", args[0], strerror(c));
		_exit(c == ENOENT ? 127 : 126);
	}
	child_pid = run.child;
	/* the terminal's ^C and ^\ go to the command too: it decides, we drain */
	signal(SIGINT, SIG_IGN);
	signal(SIGQUIT, SIG_IGN);
	{
		struct sigaction sa = { .sa_handler = forward_signal, .sa_flags = SA_RESTART };

		sigaction(SIGTERM, &sa, NULL);
		sigaction(SIGHUP, &sa, NULL);
	}
	drain_loop(&run);
	remove_rings_dir(&run);
	say_if_nothing(&run, argv[optind]);
	if (getenv("KTRACE_RUN_VERBOSE"))
		fprintf(stderr, "ktrace-run: %lu files, %lu records, %llu lost, in %s (rings in %s)\n",
			run.files, run.records, (unsigned long long)run.lost, run.dir, run.rings_dir);
	/* the trace is incomplete: say it always, and never exit 0 (ktrace-run.1) */
	if (run.lost || run.failed) {
		pr_err("%llu records lost (%llu of them not marked in a trace file: no room, or no "
		       "file); %lu errors; dtrace -S %s/trace.* counts the marked ones",
		       (unsigned long long)run.lost, (unsigned long long)run.unmarked,
		       run.failed, run.dir);
		if (WIFEXITED(run.child_status) && WEXITSTATUS(run.child_status) == 0)
			return 1;
	}
	return exit_like(run.child_status);
}
