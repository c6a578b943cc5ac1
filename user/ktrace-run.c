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
 * descriptor or signal handler in the program.  See user/libktrace.h.
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
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "files.h"
#include "ktevents.h"
#include "ktfile.h"
#include "libktrace.h"
#include "opts.h"
#include "util.h"

#define DRAIN_PERIOD_MS	5	/* a round at least this often: exits, new rings */

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

/**
 * struct ring - a thread's ring, taken from the ring directory
 * @name:    its file there, ring.<pid>.<tid>.<n>
 * @r:       mapped shared with the thread (trusted in nothing)
 * @done:    records written; ours, copied to r->done for the thread
 * @out:     the thread's trace file
 * Lives from the first round that finds the ring whole until its thread
 * ended or its process was reaped, and the rest was written.
 */
struct ring {
	char name[64];
	struct kt_ring *r;
	size_t bytes;
	uint64_t records, done;
	uint64_t last_tsc;		/* of the last record written */
	uint32_t pid;
	struct ktfile_header hdr;	/* copied once, then checked */
	struct ktfile_writer out;
	char out_name[80];
	bool failed;
	struct ring *next;
};

/* What a run is: the command, its directories, the rings being drained. */
struct run {
	const char *dir;		/* trace files, absolute */
	int dir_fd;
	char rings_dir[PATH_MAX];	/* ring files and the control page */
	int rings_fd;
	struct kt_control *control;
	struct ring *rings;
	pid_t child;			/* the command (or ktrace) */
	int child_status;
	bool child_done;
	unsigned long files, records, lost;
	unsigned long failed;		/* rings given up: their files are incomplete */
};

static volatile sig_atomic_t child_pid;

/* SIGTERM, SIGHUP to ktrace-run are for the command: it ends, we drain. */
static void forward_signal(int sig)
{
	if (child_pid > 0)
		kill(child_pid, sig);
}

static bool ring_known(struct run *run, const char *name)
{
	for (struct ring *g = run->rings; g; g = g->next)
		if (!strcmp(g->name, name))
			return true;
	return false;
}

/* The thread's trace file: trace.pid<P>.tid<T>, .1 ... after an exec. */
static int create_output(struct run *run, struct ring *g)
{
	const struct ktfile_header *h = &g->hdr;
	int fd = -1;

	for (unsigned int n = 0; n < 1000 && fd < 0; n++) {
		if (n)
			snprintf(g->out_name, sizeof(g->out_name), "trace.pid%u.tid%u.%u",
				 h->pid, h->tid, n);
		else
			snprintf(g->out_name, sizeof(g->out_name), "trace.pid%u.tid%u",
				 h->pid, h->tid);
		fd = openat(run->dir_fd, g->out_name,
			    O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		pr_err("%s/%s: %s", run->dir, g->out_name, strerror(errno));
		return -1;
	}
	g->out.fd = fd;
	g->out.records = 0;
	errno = ENOSPC;		/* what a short write means */
	if (write(fd, h, sizeof(*h)) != sizeof(*h)) {
		pr_err("%s/%s: cannot write the header: %s", run->dir, g->out_name,
		       strerror(errno));
		return -1;
	}
	run->files++;
	return 0;
}

/*
 * No more of @g is written (what was, stays): the caller said why.  The
 * thread is told, so that it stops recording and never waits for us (a
 * thread waiting for room looks every 10 ms).
 */
static void give_up_ring(struct run *run, struct ring *g)
{
	g->failed = true;
	run->failed++;
	__atomic_store_n(&g->r->abandoned, 1, __ATOMIC_RELEASE);
}

/* Take ring @name if it is whole; false: not yet (try again next round). */
static bool take_ring(struct run *run, const char *name)
{
	unsigned int pid, tid, n;
	struct kt_ring *r;
	struct ring *g;
	struct stat st;
	size_t bytes;
	uint64_t records;
	int fd;

	if (strlen(name) >= sizeof(g->name) ||
	    sscanf(name, KT_RING_PREFIX "%u.%u.%u", &pid, &tid, &n) != 3)
		return true;		/* not a ring: leave it */
	fd = openat(run->rings_fd, name, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) ||
	    st.st_size < KT_RING_HEADER) {
		if (fd >= 0)
			close(fd);
		return false;
	}
	r = mmap(NULL, KT_RING_HEADER, PROT_READ, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED) {
		close(fd);
		return false;
	}
	if (__atomic_load_n(&r->magic, __ATOMIC_ACQUIRE) != KT_RING_MAGIC) {
		munmap(r, KT_RING_HEADER);
		close(fd);
		return false;		/* being made */
	}
	records = r->records;		/* set before the magic */
	munmap(r, KT_RING_HEADER);
	bytes = KT_RING_HEADER + records * sizeof(struct ktrace_record);
	if (records < 2 || (records & (records - 1)) || records > (1u << 24) ||
	    (uint64_t)st.st_size != bytes) {
		pr_warn("%s/%s: not a ring of this libktrace; ignored", run->rings_dir, name);
		close(fd);
		return true;
	}
	r = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (r == MAP_FAILED)
		die("%s/%s: mmap: %s", run->rings_dir, name, strerror(errno));
	g = xcalloc(1, sizeof(*g));
	snprintf(g->name, sizeof(g->name), "%s", name);
	g->r = r;
	g->bytes = bytes;
	g->records = records;
	g->pid = pid;
	g->out.fd = -1;
	memcpy(&g->hdr, &r->file, sizeof(g->hdr));
	if (r->version != KT_RING_VERSION || g->hdr.pid != pid || g->hdr.tid != tid ||
	    g->hdr.cpu != -1 || memcmp(g->hdr.magic, KTFILE_MAGIC, 8) ||
	    g->hdr.header_size != KTFILE_HEADER_SIZE) {
		pr_warn("%s/%s: bad ring header; ignored", run->rings_dir, name);
		give_up_ring(run, g);
	} else if (create_output(run, g) < 0) {
		give_up_ring(run, g);
	}
	g->done = 0;
	g->last_tsc = g->hdr.ref_tsc;
	g->next = run->rings;
	run->rings = g;
	return true;
}

/* New rings in the ring directory. */
static void scan_rings(struct run *run)
{
	int fd = dup(run->rings_fd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;

	if (!d)
		die("%s: %s", run->rings_dir, strerror(errno));
	rewinddir(d);
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, KT_RING_PREFIX, strlen(KT_RING_PREFIX)) &&
		    !ring_known(run, e->d_name))
			take_ring(run, e->d_name);
	closedir(d);
}

static void wake_owner(struct kt_ring *r)
{
	__atomic_fetch_add(&r->done_seq, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->waiting, __ATOMIC_RELAXED))
		syscall(SYS_futex, &r->done_seq, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

/* Append what the thread published since the last time. */
static void drain_ring(struct run *run, struct ring *g)
{
	struct ktrace_record *recs = kt_ring_records(g->r);
	uint64_t end = __atomic_load_n(&g->r->committed, __ATOMIC_ACQUIRE);

	if (g->failed)
		return;
	if (end < g->done || end - g->done > g->records) {
		pr_warn("%s/%s: ring out of order (%llu after %llu); the rest of it is dropped",
			run->dir, g->out_name, (unsigned long long)end,
			(unsigned long long)g->done);
		give_up_ring(run, g);
		return;
	}
	while (g->done < end) {
		uint64_t first = g->done & (g->records - 1);
		uint64_t nr = end - g->done;
		int ret;

		if (nr > g->records - first)
			nr = g->records - first;
		if (nr > g->records / 8)	/* a piece at a time: the thread goes on early */
			nr = g->records / 8;
		ret = ktfile_append(&g->out, recs + first, nr);
		if (ret < 0) {
			pr_err("%s/%s: %s; the rest of this thread is dropped", run->dir,
			       g->out_name, strerror(-ret));
			give_up_ring(run, g);
			return;
		}
		for (uint64_t i = 0; i < nr; i++)
			if (recs[first + i].event == KTRACE_META_LOST)
				run->lost += recs[first + i].arg1 |
					     (uint64_t)recs[first + i].arg2 << 32;
		run->records += nr;
		g->last_tsc = recs[first + nr - 1].tsc;
		g->done += nr;
		__atomic_store_n(&g->r->done, g->done, __ATOMIC_RELEASE);
		wake_owner(g->r);
	}
}

/* Drained for good: close the file, forget the ring and remove it. */
static void close_ring(struct run *run, struct ring **link)
{
	struct ring *g = *link;
	uint64_t lost;

	drain_ring(run, g);
	lost = __atomic_load_n(&g->r->lost, __ATOMIC_ACQUIRE);
	if (lost && !g->failed) {
		/* dropped after the thread's last marker: the process is gone */
		struct ktrace_record m = { .tsc = g->last_tsc, .event = KTRACE_META_LOST,
					   .arg1 = (uint32_t)lost, .arg2 = (uint32_t)(lost >> 32) };

		if (ktfile_append(&g->out, &m, 1) == 0)
			run->lost += lost;
	}
	if (g->out.fd >= 0 && ktfile_close(&g->out) < 0)
		pr_err("%s/%s: close: %s", run->dir, g->out_name, strerror(errno));
	/* a thread still waiting for room (its ring is gone) must not hang */
	__atomic_store_n(&g->r->done, g->done + g->records, __ATOMIC_RELEASE);
	wake_owner(g->r);
	munmap(g->r, g->bytes);
	unlinkat(run->rings_fd, g->name, 0);
	*link = g->next;
	free(g);
}

/* Drain every ring; close those whose thread ended, or all of process @dead. */
static void drain_all(struct run *run, pid_t dead, bool all)
{
	for (struct ring **link = &run->rings; *link; ) {
		struct ring *g = *link;

		drain_ring(run, g);
		if (all || g->pid == (uint32_t)dead ||
		    (__atomic_load_n(&g->r->ended, __ATOMIC_ACQUIRE) &&
		     __atomic_load_n(&g->r->committed, __ATOMIC_ACQUIRE) == g->done))
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

static void drain_loop(struct run *run)
{
	struct kt_control *c = run->control;

	uint32_t rings_seen = 0;

	do {
		uint32_t kick = __atomic_load_n(&c->kick, __ATOMIC_SEQ_CST);
		uint32_t rings = __atomic_load_n(&c->rings_made, __ATOMIC_SEQ_CST);
		struct timespec ts = { 0, DRAIN_PERIOD_MS * 1000000 };

		/* a ring counted is made before it is counted: read the count first */
		if (rings != rings_seen || !run->rings) {
			scan_rings(run);
			rings_seen = rings;
		}
		drain_all(run, 0, false);
		__atomic_fetch_add(&c->heartbeat, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&c->sleeping, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&c->kick, __ATOMIC_SEQ_CST) == kick)
			syscall(SYS_futex, &c->kick, FUTEX_WAIT, kick, &ts, NULL, 0);
		__atomic_store_n(&c->sleeping, 0, __ATOMIC_RELAXED);
	} while (reap(run));
	scan_rings(run);
	drain_all(run, 0, true);
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
	close(fd);
	c->version = KT_RING_VERSION;
	c->drainer_pid = getpid();
	__atomic_store_n(&c->magic, KT_CONTROL_MAGIC, __ATOMIC_RELEASE);
	run->control = c;
}

static void remove_rings_dir(struct run *run)
{
	unlinkat(run->rings_fd, "control", 0);
	close(run->rings_fd);
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
static bool dir_has_maps(const struct run *run)
{
	int fd = dup(run->dir_fd);
	DIR *d = fd < 0 ? NULL : fdopendir(fd);
	struct dirent *e;
	bool found = false;

	if (!d) {
		if (fd >= 0)
			close(fd);
		return false;
	}
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
static void say_if_nothing(const struct run *run, const char *command)
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
	struct run run = { .child_status = 0 };
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
	mkdir_p(dir);
	abs_dir = realpath(dir, NULL);
	if (!abs_dir)
		die("%s: %s", dir, strerror(errno));
	run.dir = abs_dir;
	run.dir_fd = open_checked_dir(abs_dir);
	/* one clock rate for every process of the run: the kernel's, or ours once */
	tsc_hz = kernel_mask ? kernel_tsc_hz() : 0;
	if (!tsc_hz)
		tsc_hz = ktfile_tsc_hz();
	snprintf(hz, sizeof(hz), "%llu", (unsigned long long)tsc_hz);
	make_rings_dir(&run);
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

	args = xcalloc(argc + 8, sizeof(*args));
	if (kernel_mask) {
		char *ktrace = beside_me("ktrace", NULL);

		base = xmalloc(strlen(abs_dir) + 8);
		sprintf(base, "%s/trace", abs_dir);
		args[n++] = ktrace ? ktrace : "ktrace";
		args[n++] = "-e";
		args[n++] = (char *)kernel_mask;
		args[n++] = "-o";
		args[n++] = base;
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
		fprintf(stderr, "ktrace-run: %lu files, %lu records, %lu lost, in %s (rings in %s)\n",
			run.files, run.records, run.lost, run.dir, run.rings_dir);
	/* the command's status if it failed; else ours, if the trace did */
	if (run.failed && WIFEXITED(run.child_status) && WEXITSTATUS(run.child_status) == 0) {
		pr_err("%lu thread%s not traced to the end (see above)", run.failed,
		       run.failed == 1 ? "" : "s");
		return 1;
	}
	return exit_like(run.child_status);
}
