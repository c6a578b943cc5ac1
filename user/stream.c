// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * stream: per-thread streams of libktrace, who drains their rings, and
 * what happens at fork, thread exit, exit() and fatal signals.
 *
 * The library records in one of three modes, chosen once per program from
 * the environment (ring.h says why):
 *   drained     KTRACE_RUN_RINGS: rings are files of ktrace-run's ring
 *               directory, mapped shared; ktrace-run writes the trace
 *               files.  The library keeps no thread, no file descriptor,
 *               no signal handler; it opens files only to create a ring
 *               (and closes them at once) and to append to the map file.
 *   standalone  KTRACE_USER_DIR only: private rings, a writer thread, one
 *               open file per thread, handlers for SIGINT, SIGTERM, SIGHUP
 *               that flush and then do what the program's disposition says.
 *   off         neither, or a setuid/setcap (AT_SECURE) process whose real
 *               user is not root: nothing is recorded.
 *
 * Streams are never freed: a thread that exits leaves its stream to the
 * next thread that starts recording (standalone: with its ring and its
 * pages; drained: the ring goes to ktrace-run, the next thread maps a new
 * one).  So the list of streams only grows, without locks, and the writer
 * and a flush can walk it at any moment.
 *
 * Who writes a stream's file (standalone) or unmaps its ring (drained)
 * holds the stream's @lock (the holder's tid): the writer thread normally,
 * the owner when its ring is full and the writer is behind (or absent:
 * after fork, until the child's own writer starts), the exiting thread,
 * and a flush.  A thread never waits for a lock it holds itself (a signal
 * handler that interrupted its own write).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "libktrace.h"
#include "filter.h"

#define DEFAULT_DIR		"ktrace.data"
#define DEFAULT_RECORDS		65536
#define MIN_RECORDS		1024
#define MAX_RECORDS		(1u << 24)
#define WRITER_PERIOD_MS	100	/* low-rate streams reach the file this often */
#define LOCK_WAIT_MS		2000	/* a flush gives up on a stuck stream */
#define DRAINER_GONE_MS		2000	/* a wait with @done unmoved that long: drop */
#define FD_OUT_OF_THE_WAY	4096	/* standalone: trace files from this fd up */
#define TSC_HZ_MIN		1000000ull	/* KTRACE_TSC_HZ outside: calibrate */
#define TSC_HZ_MAX		100000000000ull

__thread struct kt_stream *kt_self __attribute__((tls_model("initial-exec")));
__thread bool kt_thread_off __attribute__((tls_model("initial-exec")));
/* starting its stream: records of signal handlers now are counted as lost */
static __thread bool thread_starting __attribute__((tls_model("initial-exec")));
static __thread uint64_t start_lost __attribute__((tls_model("initial-exec")));
/* in a vfork() child (on its parent's thread state): the parent's stream */
static __thread struct kt_stream *vfork_parent __attribute__((tls_model("initial-exec")));
/* the rounds of thread-specific destructors end_thread() has let pass */
static __thread unsigned char end_rounds __attribute__((tls_model("initial-exec")));

enum kt_mode { KT_OFF, KT_STANDALONE, KT_DRAINED };

static struct {
	pthread_once_t once;
	enum kt_mode mode;
	char dir[PATH_MAX];		/* absolute: the program may chdir() */
	char rings[PATH_MAX];		/* drained: ktrace-run's ring directory */
	struct kt_control *control;	/* drained: its control page */
	uint64_t records;		/* ring size */
	bool drop;			/* KTRACE_USER_DROP */
	uint64_t tsc_hz;
	bool tsc_invariant;
	pthread_key_t key;		/* its destructor ends a thread's stream */
	pid_t pid;			/* the process that set up the below */
	struct kt_stream *streams;	/* list head */
	unsigned int ring_seq;		/* drained: rings this process named */
	pthread_t writer;
	bool writer_running;
	int kick;			/* futex: records to write */
	int writer_sleeping;
	int final;			/* the process is going: writer, stop */
	/* said once per process, on stderr */
	bool told_no_ring, told_stall, told_fd, told_fsize;
} kt = { .once = PTHREAD_ONCE_INIT };

static KT_NOTRACE pid_t gettid_raw(void)
{
	return syscall(SYS_gettid);
}

static KT_NOTRACE void futex_wake(void *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE_PRIVATE, INT_MAX, NULL, NULL, 0);
}

static KT_NOTRACE void futex_wait(void *addr, int val, long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	syscall(SYS_futex, addr, FUTEX_WAIT_PRIVATE, val, &ts, NULL, 0);
}

/* The same on memory shared with ktrace-run (not private to the process). */
static KT_NOTRACE void futex_wake_shared(void *addr)
{
	syscall(SYS_futex, addr, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
}

static KT_NOTRACE void futex_wait_shared(void *addr, int val, long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	syscall(SYS_futex, addr, FUTEX_WAIT, val, &ts, NULL, 0);
}

static KT_NOTRACE uint64_t monotonic_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

static KT_NOTRACE void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	nanosleep(&ts, NULL);
}

/*
 * How many of @len bytes written at @start stay under RLIMIT_FSIZE.  A
 * write past it raises SIGXFSZ, which kills the program by default, and
 * the library does not change the program's signal dispositions: so no
 * such write is tried.  Read each time: the program may change it.
 */
KT_NOTRACE size_t kt_fsize_room(off_t start, size_t len)
{
	struct rlimit lim;

	if (getrlimit(RLIMIT_FSIZE, &lim) < 0 || lim.rlim_cur == RLIM_INFINITY ||
	    (rlim_t)start + len <= lim.rlim_cur)
		return len;
	return (rlim_t)start >= lim.rlim_cur ? 0 : (size_t)(lim.rlim_cur - start);
}

/*
 * A message on stderr, in one write() (this may run in a signal handler);
 * not written where it would take a regular file past RLIMIT_FSIZE.
 */
KT_NOTRACE void kt_say(const char *msg, int len)
{
	struct stat st;
	off_t at;

	if (fstat(STDERR_FILENO, &st) == 0 && S_ISREG(st.st_mode)) {
		at = lseek(STDERR_FILENO, 0, SEEK_CUR);
		if (at < st.st_size)
			at = st.st_size;	/* where O_APPEND writes */
		if (kt_fsize_room(at, len) < (size_t)len)
			return;
	}
	if (write(STDERR_FILENO, msg, len) < 0)
		return;
}

static KT_NOTRACE void warn(const char *what, const char *path, int err)
{
	char buf[PATH_MAX + 128];
	int len = snprintf(buf, sizeof(buf), "libktrace: %s%s%s%s%s\n", path ? path : "",
			   path ? ": " : "", what, err ? ": " : "", err ? strerror(err) : "");

	kt_say(buf, len > (int)sizeof(buf) ? (int)sizeof(buf) : len);
}

/* True for the one caller, of all threads, that says a once-only warning. */
static KT_NOTRACE bool first_to_tell(bool *told)
{
	return !__atomic_exchange_n(told, true, __ATOMIC_RELAXED);
}

/* ---- the file side ------------------------------------------------------- */

/*
 * Standalone, the trace files are descriptors of the program, which may
 * close descriptors it did not open (closefrom(), close_range(), dup2()
 * over them) and open files of its own under the same numbers.  So the
 * library keeps its descriptors high, where opening files does not reach,
 * and before each write (and before it cuts a file, or closes it) checks
 * that the descriptor is still its file: same device and inode.  If not,
 * the file is opened again by its name, if that is still the same file;
 * else the thread's recording stops.  A file of the program is never
 * written, cut or closed.
 */
static KT_NOTRACE int fd_out_of_the_way(int fd)
{
	struct rlimit lim;
	rlim_t low = FD_OUT_OF_THE_WAY;
	int high;

	if (getrlimit(RLIMIT_NOFILE, &lim) == 0 && lim.rlim_cur / 2 < low)
		low = lim.rlim_cur / 2;
	if (fd < 0 || (rlim_t)fd >= low)
		return fd;
	high = fcntl(fd, F_DUPFD_CLOEXEC, (int)low);
	if (high < 0)
		return fd;	/* no room up there: checked all the same */
	close(fd);
	return high;
}

static KT_NOTRACE bool fd_is_file(int fd, const struct kt_stream *s)
{
	struct stat st;

	return fd >= 0 && fstat(fd, &st) == 0 && st.st_dev == s->file_dev &&
	       st.st_ino == s->file_ino;
}

/* @s->file.fd is the thread's file, or is made so again; false: it cannot be. */
static KT_NOTRACE bool file_is_ours(struct kt_stream *s)
{
	int fd = s->file.fd, dfd, err;

	if (fd_is_file(fd, s))
		return true;
	s->file.fd = -1;	/* the program's now, or closed: not ours to close */
	dfd = kt_open_checked_dir(kt.dir);
	fd = dfd < 0 ? -1 : openat(dfd, strrchr(s->path, '/') + 1,
				   O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	err = errno;
	if (dfd >= 0)
		close(dfd);
	if (fd >= 0 && !fd_is_file(fd, s)) {
		close(fd);
		fd = -1;
		err = ESTALE;	/* another file by that name now */
	}
	if (fd < 0) {
		warn("the program closed or replaced this thread's trace file descriptor and the "
		     "file cannot be opened again; recording of this thread stops", s->path, err);
		return false;
	}
	s->file.fd = fd_out_of_the_way(fd);
	if (first_to_tell(&kt.told_fd)) {
		warn("the program closed or replaced a trace file descriptor; "
		     "the file was opened again", s->path, 0);
	}
	return true;
}

/*
 * Append @nr records to @s's file, after its last whole record; a torn
 * record that a failed write leaves is cut off.  Returns 0 or -errno.
 */
static KT_NOTRACE int append_file(struct kt_stream *s, const struct ktrace_record *recs,
				  size_t nr)
{
	size_t len = nr * sizeof(*recs), done = 0, room;
	off_t start = ktfile_bytes(&s->file);
	int ret = 0;

	if (!file_is_ours(s))
		return -EBADF;
	room = kt_fsize_room(start, len);
	if (room < len) {
		/* the whole records under RLIMIT_FSIZE, then the file ends */
		len = room - room % sizeof(*recs);
		ret = -EFBIG;
	}
	while (done < len) {
		ssize_t n = pwrite(s->file.fd, (const char *)recs + done, len - done,
				   start + done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			ret = n < 0 ? -errno : -ENOSPC;
			break;
		}
		done += n;
	}
	s->file.records += done / sizeof(*recs);
	if (done % sizeof(*recs) && fd_is_file(s->file.fd, s) &&
	    ftruncate(s->file.fd, ktfile_bytes(&s->file)) < 0)
		ret = -errno;
	return ret;
}

/* Close @s's file, if the descriptor is still its. */
static KT_NOTRACE int close_file(struct kt_stream *s)
{
	if (!fd_is_file(s->file.fd, s))
		s->file.fd = -1;
	return ktfile_close(&s->file);
}

static KT_NOTRACE bool stream_trylock(struct kt_stream *s, int tid)
{
	int unlocked = 0;

	return __atomic_compare_exchange_n(&s->lock, &unlocked, tid, false,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static KT_NOTRACE void stream_unlock(struct kt_stream *s)
{
	__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

/* Wait for the lock, unless this thread holds it: then false. */
static KT_NOTRACE bool stream_lock(struct kt_stream *s, int tid)
{
	for (int ms = 0; !stream_trylock(s, tid); ms++) {
		if (__atomic_load_n(&s->lock, __ATOMIC_RELAXED) == tid || ms > LOCK_WAIT_MS)
			return false;
		sleep_ms(1);
	}
	return true;
}

/* A file reached RLIMIT_FSIZE: said once per process, its records counted. */
static KT_NOTRACE void tell_fsize(struct kt_stream *s)
{
	struct rlimit lim;
	char what[160];

	if (!first_to_tell(&kt.told_fsize))
		return;
	getrlimit(RLIMIT_FSIZE, &lim);
	snprintf(what, sizeof(what), "RLIMIT_FSIZE (%llu bytes) reached; a thread whose file "
		 "reaches it stops recording, its records counted", (unsigned long long)lim.rlim_cur);
	warn(what, s->path, EFBIG);
}

/* Records the file misses: @nr from @first, a lost marker for those it counts. */
static KT_NOTRACE void count_unwritten(struct kt_stream *s, uint64_t first, uint64_t nr)
{
	for (uint64_t i = first; i < first + nr; i++)
		s->unwritten += s->ring[i].event == KTRACE_META_LOST ?
			(s->ring[i].arg1 | (uint64_t)s->ring[i].arg2 << 32) : 1;
}

/*
 * Write the committed records to the file, at most @max; the lock is
 * held.  In pieces of an eighth of the ring, each freed as soon as it is
 * written: a thread waiting for room goes on early.
 */
static KT_NOTRACE int write_out(struct kt_stream *s, uint64_t max)
{
	struct kt_ring *r = s->shm;
	uint64_t end = __atomic_load_n(&r->committed, __ATOMIC_ACQUIRE);
	uint64_t pos = r->done, size = s->mask + 1;
	int ret;

	if (end - pos > max)
		end = pos + max;

	while (pos < end) {
		uint64_t first = pos & s->mask;
		uint64_t nr = end - pos < size - first ? end - pos : size - first;

		if (nr > size / 8)
			nr = size / 8;
		if (s->failed) {
			count_unwritten(s, first, nr);
		} else {
			uint64_t before = s->file.records;

			ret = append_file(s, s->ring + first, nr);
			if (ret < 0) {
				/* -EBADF: file_is_ours() said why; RLIMIT_FSIZE: said once */
				if (ret == -EFBIG)
					tell_fsize(s);
				else if (ret != -EBADF)
					warn("cannot write; recording of this thread stops",
					     s->path, -ret);
				s->failed = true;
				before = s->file.records - before;
				count_unwritten(s, first + before, nr - before);
			}
		}
		pos += nr;
		__atomic_store_n(&r->done, pos, __ATOMIC_RELEASE);
		__atomic_fetch_add(&r->done_seq, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&r->waiting, __ATOMIC_RELAXED))
			futex_wake(&r->done_seq);
	}
	return s->failed ? -1 : 0;
}

/* ---- the writer thread -------------------------------------------------- */

/* Records to write: wake the writer thread, or ktrace-run. */
static KT_NOTRACE void kick_writer(void)
{
	struct kt_control *c = kt.control;

	if (kt.mode == KT_DRAINED) {
		__atomic_fetch_add(&c->kick, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&c->sleeping, __ATOMIC_RELAXED))
			futex_wake_shared(&c->kick);
		return;
	}
	__atomic_fetch_add(&kt.kick, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&kt.writer_sleeping, __ATOMIC_RELAXED))
		futex_wake(&kt.kick);
}

static KT_NOTRACE void *writer_main(void *arg)
{
	int tid = gettid_raw();

	prctl(PR_SET_NAME, "ktrace-writer");
	while (!__atomic_load_n(&kt.final, __ATOMIC_ACQUIRE)) {
		int kick = __atomic_load_n(&kt.kick, __ATOMIC_SEQ_CST);

		for (struct kt_stream *s = __atomic_load_n(&kt.streams, __ATOMIC_ACQUIRE);
		     s && !__atomic_load_n(&kt.final, __ATOMIC_ACQUIRE); s = s->next) {
			struct kt_ring *r = __atomic_load_n(&s->shm, __ATOMIC_ACQUIRE);

			if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != KT_LIVE || !r ||
			    __atomic_load_n(&r->committed, __ATOMIC_RELAXED) == r->done ||
			    !stream_trylock(s, tid))
				continue;
			if (s->state == KT_LIVE && s->shm)
				write_out(s, UINT64_MAX);
			stream_unlock(s);
		}
		/* a library loaded since the last map: it gets one before it is gone */
		if (kt_maps_changed())
			kt_maps_snapshot(kt.dir, kt_rdtsc());
		__atomic_store_n(&kt.writer_sleeping, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&kt.kick, __ATOMIC_SEQ_CST) == kick)
			futex_wait(&kt.kick, kick, WRITER_PERIOD_MS);
		__atomic_store_n(&kt.writer_sleeping, 0, __ATOMIC_RELAXED);
	}
	return arg;
}

/* The writer gets no signals: the process's handlers run in its threads. */
static KT_NOTRACE void start_writer(void)
{
	sigset_t all, old;

	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	kt.writer_running = pthread_create(&kt.writer, NULL, writer_main, NULL) == 0;
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (kt.writer_running)
		pthread_detach(kt.writer);
}

/* ---- the slow path --------------------------------------------------------- */

/*
 * Whether @done of ring @r has not moved (@done_seq still *@seq) for
 * DRAINER_GONE_MS of waiting, since *@since_ns (0: starts now): the
 * drainer is gone, stopped or stuck, or never took the ring.  Then the
 * thread drops its records (counted) until it moves, rather than hang the
 * program.  The clock, not the TSC: KTRACE_TSC_HZ is the user's.
 */
static KT_NOTRACE bool stalled(struct kt_ring *r, uint64_t *since_ns, uint32_t *seq)
{
	uint32_t now_seq = __atomic_load_n(&r->done_seq, __ATOMIC_ACQUIRE);
	uint64_t now = monotonic_ns();

	if (!*since_ns || now_seq != *seq) {
		*since_ns = now;
		*seq = now_seq;
		return false;
	}
	return now - *since_ns > DRAINER_GONE_MS * 1000000ull;
}

/* Drained: ktrace-run gave up on this ring; the thread stops recording. */
static KT_NOTRACE bool abandoned(struct kt_stream *s)
{
	if (!s->failed && __atomic_load_n(&s->shm->abandoned, __ATOMIC_ACQUIRE))
		s->failed = true;
	return s->failed;
}

/*
 * The ring is full: write it ourselves, or wait for the writer to.  False:
 * do not wait for it any more (see stalled() and abandoned()).
 */
static KT_NOTRACE bool wait_for_room(struct kt_stream *s)
{
	struct kt_ring *r = s->shm;
	uint32_t seq = __atomic_load_n(&r->done_seq, __ATOMIC_SEQ_CST);

	if (abandoned(s) || stalled(r, &s->wait_since_ns, &s->wait_seq))
		return false;

	/*
	 * One piece, then back to recording: the writer, kicked, writes the
	 * rest meanwhile on another CPU, where writing it all here would
	 * leave that CPU idle and this thread not recording.
	 */
	if (kt.mode == KT_STANDALONE && stream_trylock(s, s->tid)) {
		write_out(s, (s->mask + 1) / 8);
		stream_unlock(s);
		kick_writer();
		return true;
	}
	kick_writer();
	/* the writer frees a piece in tens of microseconds: spin that long first */
	for (uint64_t until = kt_rdtsc() + kt.tsc_hz / 20000; kt_rdtsc() < until; ) {
		if (__atomic_load_n(&r->done_seq, __ATOMIC_ACQUIRE) != seq)
			goto moved;
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	}
	__atomic_store_n(&r->waiting, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&r->done_seq, __ATOMIC_SEQ_CST) == seq) {
		if (kt.mode == KT_DRAINED)
			futex_wait_shared(&r->done_seq, seq, 10);
		else
			futex_wait(&r->done_seq, seq, 10);
	}
	__atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
	if (__atomic_load_n(&r->done_seq, __ATOMIC_ACQUIRE) != seq)
		goto moved;
	if (abandoned(s))
		return false;
	if (stalled(r, &s->wait_since_ns, &s->wait_seq)) {
		if (first_to_tell(&kt.told_stall)) {
			warn(kt.mode == KT_DRAINED ?
			     "ktrace-run has not drained a full ring for 2 s; its thread drops "
			     "records (counted) until it does" :
			     "the writer thread has not written a full ring for 2 s; its thread "
			     "drops records (counted) until it does", NULL, 0);
		}
		return false;
	}
	return true;
moved:
	s->wait_since_ns = 0;
	return true;
}

KT_NOTRACE bool kt_slow_path(struct kt_stream *s, uint64_t h, unsigned int n)
{
	uint64_t size = s->mask + 1, done, lost, tsc;

	for (;;) {
		h = s->head;
		done = __atomic_load_n(&s->shm->done, __ATOMIC_ACQUIRE);
		if (h + n + (s->shm->lost ? 1 : 0) > done + size) {
			/*
			 * Full.  Wait only where the records below head are
			 * whole (we interrupted no record of this thread) and
			 * can be written.
			 */
			if (kt.drop || s->nest > 1 || s->failed) {
				__atomic_fetch_add(&s->shm->lost, n, __ATOMIC_RELAXED);
				return false;
			}
			__atomic_store_n(&s->shm->committed, s->head, __ATOMIC_RELEASE);
			if (!wait_for_room(s)) {
				__atomic_fetch_add(&s->shm->lost, n, __ATOMIC_RELAXED);
				return false;
			}
			continue;
		}
		if (!s->shm->lost)
			break;
		/* the lost marker first, reserved like a record */
		lost = __atomic_exchange_n(&s->shm->lost, 0, __ATOMIC_RELAXED);
		tsc = kt_rdtsc();
		if (tsc < s->last_tsc)
			tsc = s->last_tsc;
		if (!kt_cas_local(&s->head, h, h + 1)) {
			__atomic_fetch_add(&s->shm->lost, lost, __ATOMIC_RELAXED);
			continue;	/* a handler came in between: again */
		}
		s->last_tsc = tsc;
		kt_put(&s->ring[h & s->mask], tsc, KTRACE_META_LOST, 0, (uint32_t)lost,
		       (uint32_t)(lost >> 32));
		h++;
		break;
	}
	/* the writer starts when half the ring waits, the wait when it is full */
	if (h + n > done + size / 2) {
		if (kt.writer_running || kt.mode == KT_DRAINED)
			kick_writer();
		s->limit = done + size;
	} else {
		s->limit = done + size / 2;
	}
	return true;
}

/* ---- files and directories ----------------------------------------------- */

static KT_NOTRACE uint64_t env_number(const char *name, uint64_t dflt)
{
	const char *v = kt_getenv(name);
	char *end;
	unsigned long long n;

	if (!v || !*v)
		return dflt;
	errno = 0;
	n = strtoull(v, &end, 0);
	if (errno || *end) {
		warn("not a number, ignored", name, 0);
		return dflt;
	}
	return n;
}

static KT_NOTRACE bool tsc_is_invariant(void)
{
	char buf[16384];
	int fd = open("/proc/cpuinfo", O_RDONLY | O_CLOEXEC);
	ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);

	if (fd >= 0)
		close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	return strstr(buf, " constant_tsc") && strstr(buf, " nonstop_tsc");
}

/* Missing directories of @path, created 0700: trace files are private. */
static KT_NOTRACE int mkdir_p(char *path)
{
	for (char *p = path + 1; ; p++) {
		if (*p && *p != '/')
			continue;
		char c = *p;

		*p = '\0';
		if (mkdir(path, 0700) < 0 && errno != EEXIST) {
			*p = c;
			return -1;
		}
		*p = c;
		if (!c)
			return 0;
	}
}

/* ---- fatal signals (standalone) ------------------------------------------ */

static const int fatal_signals[] = { SIGINT, SIGTERM, SIGHUP };
static struct sigaction old_actions[3];

static KT_NOTRACE void on_fatal_signal(int sig, siginfo_t *info, void *uc)
{
	unsigned int i;
	int saved_errno = errno;

	for (i = 0; i < 3 && fatal_signals[i] != sig; i++)
		;
	if (i == 3)
		return;
	if (old_actions[i].sa_handler == SIG_DFL) {
		/* we die of it: flush, then let the default action happen */
		kt_flush_all(true);
		sigaction(sig, &old_actions[i], NULL);
		raise(sig);		/* blocked in here: delivered on return */
	} else {
		kt_flush_all(false);
		if (old_actions[i].sa_flags & SA_SIGINFO)
			old_actions[i].sa_sigaction(sig, info, uc);
		else
			old_actions[i].sa_handler(sig);
	}
	errno = saved_errno;
}

/*
 * Our handler, with the flags and mask of the program's: a handler it
 * installed without SA_RESTART still interrupts system calls.
 */
static KT_NOTRACE void catch_fatal_signals(void)
{
	for (unsigned int i = 0; i < 3; i++) {
		struct sigaction sa;

		if (sigaction(fatal_signals[i], NULL, &old_actions[i]) < 0 ||
		    old_actions[i].sa_handler == SIG_IGN)
			continue;	/* ignored: it will not end the process */
		sa = old_actions[i];
		sa.sa_sigaction = on_fatal_signal;
		sa.sa_flags |= SA_SIGINFO;
		sa.sa_flags &= ~(SA_RESETHAND | SA_NODEFER);
		if (old_actions[i].sa_handler == SIG_DFL)
			sa.sa_flags |= SA_RESTART;	/* the program has none: no EINTR */
		/* one flush at a time */
		for (unsigned int j = 0; j < 3; j++)
			sigaddset(&sa.sa_mask, fatal_signals[j]);
		sigaction(fatal_signals[i], &sa, NULL);
	}
}

/* ---- process set-up ------------------------------------------------------ */

static KT_NOTRACE void end_thread(void *arg);
static KT_NOTRACE void at_exit(void);
static KT_NOTRACE void at_fork_child(void);

/* Drained: map ktrace-run's control page; false if it is not one. */
static KT_NOTRACE bool map_control(void)
{
	int dfd = kt_open_checked_dir(kt.rings), fd;
	struct kt_control *c;
	struct stat st;

	if (dfd < 0)
		return false;
	fd = openat(dfd, "control", O_RDWR | O_NOFOLLOW | O_CLOEXEC);
	close(dfd);
	if (fd < 0)
		return false;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(*c)) {
		close(fd);
		errno = EINVAL;
		return false;
	}
	c = mmap(NULL, sizeof(*c), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (c == MAP_FAILED)
		return false;
	if (c->magic != KT_CONTROL_MAGIC || c->version != KT_RING_VERSION) {
		munmap(c, sizeof(*c));
		errno = EINVAL;
		return false;
	}
	kt.control = c;
	return true;
}

/* Once per program (not per fork: the child inherits all of it). */
static KT_NOTRACE void setup_program(void)
{
	const char *dir = kt_getenv("KTRACE_USER_DIR");
	const char *rings = kt_getenv("KTRACE_RUN_RINGS");
	uint64_t records;
	char abs_dir[PATH_MAX];

	/*
	 * A setuid or setcap program runs with rights its user has not: its
	 * environment must not make it write files.  Root, running it
	 * itself, may.
	 */
	if (getauxval(AT_SECURE) && getuid() != 0)
		return;
	if (!dir || !*dir)
		return;			/* not asked to record */
	snprintf(kt.dir, sizeof(kt.dir), "%s", dir);
	records = env_number("KTRACE_USER_BUF", DEFAULT_RECORDS);
	if (records < MIN_RECORDS || records > MAX_RECORDS) {
		warn("out of range (1024-16777216), using 65536", "KTRACE_USER_BUF", 0);
		records = DEFAULT_RECORDS;
	}
	kt.records = 1;
	while (kt.records < records)
		kt.records <<= 1;
	kt.drop = env_number("KTRACE_USER_DROP", 0) != 0;
	kt.tsc_hz = env_number("KTRACE_TSC_HZ", 0);
	if (kt.tsc_hz && (kt.tsc_hz < TSC_HZ_MIN || kt.tsc_hz > TSC_HZ_MAX)) {
		/* it bounds the spin of a full ring */
		warn("out of range (1 MHz to 100 GHz), measuring it", "KTRACE_TSC_HZ", 0);
		kt.tsc_hz = 0;
	}
	if (!kt.tsc_hz)
		kt.tsc_hz = ktfile_tsc_hz();
	kt.tsc_invariant = tsc_is_invariant();
	if (mkdir_p(kt.dir) < 0 || !realpath(kt.dir, abs_dir) || !kt.tsc_hz ||
	    pthread_key_create(&kt.key, end_thread) != 0) {
		warn("cannot record", kt.dir, errno);
		return;
	}
	strcpy(kt.dir, abs_dir);
	if (rings && *rings) {
		snprintf(kt.rings, sizeof(kt.rings), "%s", rings);
		if (!map_control()) {
			warn("not ktrace-run's ring directory; cannot record", kt.rings, errno);
			return;
		}
		kt.mode = KT_DRAINED;
	} else {
		int fd = kt_open_checked_dir(kt.dir);

		if (fd < 0) {
			warn("cannot record (a directory of another user, or writable by others)",
			     kt.dir, errno);
			return;
		}
		close(fd);
		kt.mode = KT_STANDALONE;
		catch_fatal_signals();
	}
	atexit(at_exit);
	pthread_atfork(NULL, NULL, at_fork_child);
}

/* Once per process: its map file and (standalone) its writer. */
static KT_NOTRACE void setup_process(void)
{
	kt.pid = getpid();
	kt.ring_seq = 0;
	kt_maps_snapshot(kt.dir, kt_rdtsc());
	if (kt.mode == KT_STANDALONE)
		start_writer();
}

/* ---- streams ----------------------------------------------------------------- */

/*
 * The pages of a new ring file, allocated now: a sparse file that tmpfs
 * has no room for kills the thread (SIGBUS) at its first store to such a
 * page.  Past RLIMIT_FSIZE the kernel sends SIGXFSZ instead of an error:
 * not tried.  Returns 0 or an errno.
 */
static KT_NOTRACE int reserve_file(int fd, off_t bytes)
{
	struct rlimit fsize;
	char zeros[4096];
	int err;

	if (getrlimit(RLIMIT_FSIZE, &fsize) == 0 && fsize.rlim_cur != RLIM_INFINITY &&
	    (rlim_t)bytes > fsize.rlim_cur)
		return EFBIG;
	do
		err = posix_fallocate(fd, 0, bytes);
	while (err == EINTR);
	if (err != EOPNOTSUPP)
		return err;
	/* a file system without fallocate: write the zeros */
	memset(zeros, 0, sizeof(zeros));
	for (off_t off = 0; off < bytes; ) {
		ssize_t n = pwrite(fd, zeros, bytes - off < (off_t)sizeof(zeros) ?
				   (size_t)(bytes - off) : sizeof(zeros), off);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? errno : ENOSPC;
		off += n;
	}
	return 0;
}

/*
 * Drained: a new ring file in ktrace-run's directory, ring.<pid>.<tid>.<n>
 * (n: a name an earlier image of this process, before exec, did not take),
 * mapped shared, its space reserved, its descriptor closed at once; on
 * failure removed (ktrace-run would wait for it to be made).
 */
static KT_NOTRACE struct kt_ring *map_shared_ring(size_t bytes, uint32_t pid, uint32_t tid)
{
	int dfd = kt_open_checked_dir(kt.rings), fd = -1, err;
	struct kt_ring *r;
	char name[64];

	if (dfd < 0)
		return NULL;
	for (int try = 0; try < 1000 && fd < 0; try++) {
		snprintf(name, sizeof(name), KT_RING_PREFIX "%u.%u.%u", pid, tid,
			 __atomic_fetch_add(&kt.ring_seq, 1, __ATOMIC_RELAXED));
		fd = openat(dfd, name, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno != EEXIST)
			break;
	}
	if (fd < 0) {
		err = errno;
		close(dfd);
		errno = err;
		return NULL;
	}
	/* mapped first (not touched yet): no memory taken for a ring that cannot be mapped */
	r = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	err = r == MAP_FAILED ? errno : reserve_file(fd, bytes);
	if (err && r != MAP_FAILED) {
		munmap(r, bytes);
		r = MAP_FAILED;
	}
	close(fd);
	if (err)
		unlinkat(dfd, name, 0);
	close(dfd);
	errno = err;
	return r == MAP_FAILED ? NULL : r;
}

static KT_NOTRACE void list_stream(struct kt_stream *s)
{
	s->next = __atomic_load_n(&kt.streams, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&kt.streams, &s->next, s, false,
					    __ATOMIC_RELEASE, __ATOMIC_RELAXED))
		;
}

static KT_NOTRACE struct kt_stream *claim_stream(const struct ktfile_header *h)
{
	size_t ring_bytes = KT_RING_HEADER + kt.records * sizeof(struct ktrace_record);
	struct kt_stream *s;
	struct kt_ring *r;
	bool fresh = false;

	for (s = __atomic_load_n(&kt.streams, __ATOMIC_ACQUIRE); s; s = s->next) {
		int free_state = KT_FREE;

		if ((kt.mode == KT_DRAINED || s->mask + 1 == kt.records) &&
		    __atomic_compare_exchange_n(&s->state, &free_state, KT_LIVE, false,
						__ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
	}
	if (!s) {
		/* mmap, not malloc: the first record may be in a signal handler */
		s = mmap(NULL, sizeof(*s), PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
			 -1, 0);
		if (s == MAP_FAILED)
			return NULL;
		s->state = KT_LIVE;
		fresh = true;		/* listed once it has its ring: walkers need one */
	}
	if (kt.mode == KT_STANDALONE && s->shm) {
		r = s->shm;		/* the ring of a thread that ended */
	} else {
		r = kt.mode == KT_DRAINED ? map_shared_ring(ring_bytes, h->pid, h->tid) :
			mmap(NULL, ring_bytes, PROT_READ | PROT_WRITE,
			     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (!r || r == MAP_FAILED) {
			__atomic_store_n(&s->state, KT_FREE, __ATOMIC_RELEASE);
			if (fresh)
				list_stream(s);
			return NULL;
		}
		/*
		 * Written now, not when recording: a page fault per 170
		 * records costs more than they do (and MAP_POPULATE is not
		 * enough where a virtual machine's host backs a page only when
		 * it is first written).
		 */
		memset(r, 0, ring_bytes);
	}
	r->records = kt.records;
	r->committed = r->done = 0;
	r->lost = 0;
	r->ended = 0;
	r->abandoned = 0;
	r->file = *h;
	r->version = KT_RING_VERSION;
	s->ring = kt_ring_records(r);
	s->mask = kt.records - 1;
	/* the magic last: ktrace-run takes the ring once it is there */
	__atomic_store_n(&r->magic, KT_RING_MAGIC, __ATOMIC_RELEASE);
	__atomic_store_n(&s->shm, r, __ATOMIC_RELEASE);
	if (fresh)
		list_stream(s);
	return s;
}

static KT_NOTRACE struct kt_stream *open_stream(void)
{
	struct ktfile_header h;
	struct kt_stream *s;
	struct stat st;
	char name[48];
	bool fits;
	int fd;

	ktfile_header_init(&h, -1, kt.tsc_hz, kt.tsc_invariant,
			   KTRACE_GRP_user | KTRACE_GRP_func);
	s = claim_stream(&h);
	if (!s) {
		/* no memory, no room in the ring directory: once, not per thread */
		int err = errno;

		if (first_to_tell(&kt.told_no_ring)) {
			char what[160];

			snprintf(what, sizeof(what), "no room for a thread's ring (%llu bytes); "
				 "threads without one are not recorded",
				 (unsigned long long)(KT_RING_HEADER +
						      kt.records * sizeof(struct ktrace_record)));
			warn(what, kt.mode == KT_DRAINED ? kt.rings : NULL, err);
		}
		return NULL;
	}
	s->tid = h.tid;
	s->head = 0;
	s->last_tsc = h.ref_tsc;
	s->nest = 0;
	s->wait_since_ns = 0;
	/* a stream of a thread that ended: none of its frames */
	s->stack.depth = 0;
	for (unsigned int i = 0; i < KT_STACK_OUTER; i++)
		s->stack.outer[i].depth = ULONG_MAX;
	s->limit = (s->mask + 1) / 2;
	s->failed = false;
	s->unwritten = 0;
	s->lock = 0;
	snprintf(name, sizeof(name), "trace.pid%u.tid%u", h.pid, h.tid);
	snprintf(s->path, sizeof(s->path), "%.*s/%s", PATH_MAX - 64, kt.dir, name);
	if (kt.mode == KT_DRAINED) {
		/* a new ring: ktrace-run, take it */
		__atomic_fetch_add(&kt.control->rings_made, 1, __ATOMIC_SEQ_CST);
		kick_writer();
		return s;
	}
	fd = fd_out_of_the_way(kt_create_file_in(kt.dir, name, false));
	fits = kt_fsize_room(0, sizeof(h)) == sizeof(h);
	if (fd < 0 || !fits || pwrite(fd, &h, sizeof(h), 0) != sizeof(h) ||
	    fstat(fd, &st) < 0) {
		warn("cannot create", s->path, fd >= 0 && !fits ? EFBIG : errno);
		if (fd >= 0) {
			close(fd);
			unlink(s->path);	/* ours (O_EXCL), header-less: no trace */
		}
		__atomic_store_n(&s->state, KT_FREE, __ATOMIC_RELEASE);
		return NULL;
	}
	s->file.fd = fd;
	s->file.records = 0;
	s->file_dev = st.st_dev;
	s->file_ino = st.st_ino;
	return s;
}

KT_NOTRACE struct kt_stream *kt_stream_start(unsigned int n)
{
	struct kt_stream *s;

	if (kt_thread_off)
		return NULL;
	if (thread_starting) {	/* a signal handler, or what we call, records */
		start_lost += n;
		return NULL;
	}
	thread_starting = true;
	kt_barrier();
	/* a signal handler may have started it since our caller looked */
	s = kt_self;
	if (!s) {
		pthread_once(&kt.once, setup_program);
		if (kt.mode != KT_OFF && kt.pid != getpid())
			setup_process();
		s = kt.mode == KT_OFF ? NULL : open_stream();
		if (s) {
			pthread_setspecific(kt.key, s);
			kt_self = s;
		} else {
			kt_thread_off = true;	/* no retry at every record */
		}
	}
	kt_barrier();
	thread_starting = false;
	kt_barrier();
	if (s && start_lost) {
		/* the next record takes the slow path, which marks them */
		__atomic_fetch_add(&s->shm->lost, __atomic_exchange_n(&start_lost, 0, __ATOMIC_RELAXED),
				   __ATOMIC_RELAXED);
		s->limit = 0;
	}
	return s;
}

/*
 * Records dropped since the last marker, when no record will follow to
 * carry it: straight to the file, after the rest.  The lock is held.
 */
static KT_NOTRACE void write_lost(struct kt_stream *s)
{
	uint64_t lost = __atomic_exchange_n(&s->shm->lost, 0, __ATOMIC_RELAXED);
	struct ktrace_record r;
	uint64_t tsc = kt_rdtsc();
	int ret = 0;

	if (!lost)
		return;
	kt_put(&r, tsc < s->last_tsc ? s->last_tsc : tsc, KTRACE_META_LOST, 0,
	       (uint32_t)lost, (uint32_t)(lost >> 32));
	if (s->failed || (ret = append_file(s, &r, 1)) < 0) {
		if (ret == -EFBIG)
			tell_fsize(s);
		s->failed = true;
		s->unwritten += lost;
	}
}

/* Standalone: how many records its file misses, once its thread or the process ends. */
static KT_NOTRACE void tell_unwritten(struct kt_stream *s)
{
	char what[96];

	if (!s->unwritten)
		return;
	snprintf(what, sizeof(what), "%llu records of this thread are not in it",
		 (unsigned long long)s->unwritten);
	warn(what, s->path, 0);
	s->unwritten = 0;
}

/* Standalone: write what is left of @s and free it for another thread; lock held. */
static KT_NOTRACE void close_stream(struct kt_stream *s)
{
	int ret;

	write_out(s, UINT64_MAX);
	write_lost(s);
	ret = close_file(s);
	if (ret < 0 && !s->failed)
		warn("close", s->path, -ret);
	tell_unwritten(s);
	__atomic_store_n(&s->state, KT_FREE, __ATOMIC_RELEASE);
}

/*
 * Drained: the ring goes to ktrace-run, which writes the rest and closes
 * the file; records dropped since the last marker get one in the ring if
 * there is room.  Lock held.
 */
static KT_NOTRACE void release_ring(struct kt_stream *s)
{
	struct kt_ring *r = s->shm;

	if (s->shm->lost && s->nest == 0) {
		bool full;

		/*
		 * Room for the marker: wait for it even with KTRACE_USER_DROP
		 * (not for ever: else ktrace-run marks what the ring says)
		 */
		while ((full = s->head + 1 > __atomic_load_n(&r->done, __ATOMIC_ACQUIRE) +
			       s->mask + 1) && wait_for_room(s))
			;
		if (!full && !abandoned(s)) {
			s->nest = 1;
			kt_slow_path(s, s->head, 0);
			s->nest = 0;
			__atomic_store_n(&r->committed, s->head, __ATOMIC_RELEASE);
		}
	}
	__atomic_store_n(&r->ended, 1, __ATOMIC_RELEASE);
	kick_writer();
	s->shm = NULL;
	munmap(r, KT_RING_HEADER + (s->mask + 1) * sizeof(struct ktrace_record));
	__atomic_store_n(&s->state, KT_FREE, __ATOMIC_RELEASE);
}

/* Thread exit (the key's destructor): its file is complete when it is joined. */
static KT_NOTRACE void end_thread(void *arg)
{
	struct kt_stream *s = arg;

	/*
	 * The destructors of the program's own keys (made after ours) run
	 * after this one, and call its functions: keep the stream through
	 * the rounds of destructors (a key set again gets another round) and
	 * end it in the last.  Records of destructors after that are not kept.
	 */
	if (++end_rounds < PTHREAD_DESTRUCTOR_ITERATIONS) {
		pthread_setspecific(kt.key, s);
		return;
	}
	kt_thread_off = true;
	kt_self = NULL;
	if (s->nest == 0)	/* else the thread left from a signal handler mid-record */
		__atomic_store_n(&s->shm->committed, s->head, __ATOMIC_RELEASE);
	if (!stream_lock(s, s->tid)) {
		warn("stream busy at thread exit; its last records are lost", s->path, 0);
		return;
	}
	if (kt.mode == KT_DRAINED)
		release_ring(s);
	else
		close_stream(s);
	stream_unlock(s);
}

/*
 * Drained: wait until ktrace-run has written @s's ring up to @end; -1 if
 * it gave up on the ring, or @done did not move for DRAINER_GONE_MS (or,
 * @no_wait, at all).
 */
static KT_NOTRACE int wait_drained(struct kt_stream *s, uint64_t end, bool no_wait)
{
	struct kt_ring *r = s->shm;
	uint64_t since_ns = 0;		/* not the owner's: it may be waiting too */
	uint32_t wait_seq;

	stalled(r, &since_ns, &wait_seq);
	for (;;) {
		uint32_t seq = __atomic_load_n(&r->done_seq, __ATOMIC_SEQ_CST);

		if (__atomic_load_n(&r->done, __ATOMIC_ACQUIRE) >= end)
			return 0;
		if (abandoned(s) || no_wait)
			return -1;
		kick_writer();
		__atomic_store_n(&r->waiting, 1, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&r->done_seq, __ATOMIC_SEQ_CST) == seq)
			futex_wait_shared(&r->done_seq, seq, 10);
		__atomic_store_n(&r->waiting, 0, __ATOMIC_RELAXED);
		if (stalled(r, &since_ns, &wait_seq))
			return -1;
	}
}

KT_NOTRACE int kt_flush_all(bool final)
{
	struct kt_stream *me = kt_self;
	int tid = gettid_raw(), ret = 0;
	bool drainer_stalled = false;	/* one flush waits DRAINER_GONE_MS at most once */

	if (!kt.pid || kt.pid != getpid())
		return 0;		/* nothing recorded in this process */
	/* drained: what is in the rings reaches the trace whatever happens now */
	if (kt.mode == KT_DRAINED && final)
		return 0;
	if (final)
		__atomic_store_n(&kt.final, 1, __ATOMIC_RELEASE);
	/* our own records are whole unless a signal interrupted one */
	if (me && me->nest == 0)
		__atomic_store_n(&me->shm->committed, me->head, __ATOMIC_RELEASE);
	for (struct kt_stream *s = __atomic_load_n(&kt.streams, __ATOMIC_ACQUIRE); s; s = s->next) {
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) != KT_LIVE)
			continue;
		if (!stream_lock(s, tid)) {
			ret = -1;
			continue;
		}
		if (s->state != KT_LIVE || !s->shm) {
			stream_unlock(s);
			continue;	/* being claimed: no records yet */
		}
		if (kt.mode == KT_DRAINED) {
			if (wait_drained(s, __atomic_load_n(&s->shm->committed, __ATOMIC_ACQUIRE),
					 drainer_stalled) < 0) {
				ret = -1;
				drainer_stalled |= !s->failed;
			}
		} else if (write_out(s, UINT64_MAX) < 0) {
			ret = -1;
		}
		if (final) {
			write_lost(s);
			tell_unwritten(s);
		}
		stream_unlock(s);
	}
	return ret;
}

static KT_NOTRACE void at_exit(void)
{
	kt_flush_all(true);
	if (kt.pid == getpid())
		kt_maps_snapshot(kt.dir, kt_rdtsc());
}

/* Records after the atexit handlers (destructors of other objects). */
static KT_NOTRACE __attribute__((destructor)) void at_unload(void)
{
	kt_flush_all(true);
}

/*
 * The child has one thread, this one, and a copy of the parent's streams
 * (files, rings, locks held by threads that are not here): drop them all;
 * the child's records go to new files (standalone: written by its own
 * writer; drained: new rings, the parent's unmapped here, not written).
 */
static KT_NOTRACE void at_fork_child(void)
{
	for (struct kt_stream *s = kt.streams; s; s = s->next) {
		if (kt.mode == KT_DRAINED) {
			if (s->shm)
				munmap(s->shm, KT_RING_HEADER +
				       (s->mask + 1) * sizeof(struct ktrace_record));
			s->shm = NULL;
		} else if (s->state == KT_LIVE) {
			close_file(s);
		}
		s->lock = 0;
		s->state = KT_FREE;
	}
	kt_maps_fork_child();
	kt_self = NULL;
	kt_thread_off = false;
	thread_starting = false;
	start_lost = 0;
	kt.pid = 0;
	kt.writer_running = false;
	kt.final = 0;
	kt.kick = 0;
	kt.writer_sleeping = 0;
}

/* ---- the API -------------------------------------------------------------- */

__attribute__((visibility("default"))) KT_NOTRACE
void ktrace_user_event(unsigned int sub, uint32_t arg1, uint32_t arg2)
{
	kt_record(KTRACE_CODE(KTRACE_GRP_user, sub & 0xff), arg1, arg2, false, 0, 0);
}

__attribute__((visibility("default"))) KT_NOTRACE
int ktrace_user_name(unsigned int sub, const char *name, const char *format)
{
	if (sub < 1 || sub > 255 || !name || !*name || strpbrk(name, " \t\n:"))
		return -1;
	pthread_once(&kt.once, setup_program);
	if (kt.mode == KT_OFF)
		return -1;
	return kt_maps_add_name(kt.dir, sub, name, format ? format : "");
}

__attribute__((visibility("default"))) KT_NOTRACE
int ktrace_user_flush(void)
{
	int ret = kt_flush_all(false);

	if (kt.pid == getpid())
		kt_maps_snapshot(kt.dir, kt_rdtsc());
	return ret;
}

/* ---- for dlwrap.c: children of posix_spawn(), exec() and vfork() ------------ */

/*
 * The variables a program this process starts needs to record as it
 * does, NAME=value, into @e; false if this process does not record.
 */
KT_NOTRACE bool kt_tracing_env(struct kt_env *e)
{
	pthread_once(&kt.once, setup_program);
	e->nr = 0;
	if (kt.mode == KT_OFF)
		return false;
	snprintf(e->var[e->nr++], sizeof(e->var[0]), "KTRACE_USER_DIR=%s", kt.dir);
	if (kt.mode == KT_DRAINED)
		snprintf(e->var[e->nr++], sizeof(e->var[0]), "KTRACE_RUN_RINGS=%s", kt.rings);
	/* what ktrace-run or the user set: the defaults are not added */
	if (kt.mode == KT_DRAINED)	/* one clock rate for the whole run */
		snprintf(e->var[e->nr++], sizeof(e->var[0]), "KTRACE_TSC_HZ=%llu",
			 (unsigned long long)kt.tsc_hz);
	if (kt.records != DEFAULT_RECORDS)
		snprintf(e->var[e->nr++], sizeof(e->var[0]), "KTRACE_USER_BUF=%llu",
			 (unsigned long long)kt.records);
	if (kt.drop)
		snprintf(e->var[e->nr++], sizeof(e->var[0]), "KTRACE_USER_DROP=1");
	e->nr += kt_filter_env(e->var + e->nr, KT_ENV_MAX - e->nr);
	return true;
}

/*
 * vfork(): the child runs on the parent's memory, its thread's stream and
 * all, until it execs or exits; what it recorded went to the parent's
 * trace, under the parent's tid.  So the child records nothing (the
 * program it execs records on its own), and the parent, once it runs
 * again, takes its stream back.  The state is kept in a register by the
 * caller (dlwrap.c): the child may overwrite the parent's stack below
 * vfork()'s caller.
 */
KT_NOTRACE uintptr_t kt_vfork_save(void)
{
	return (uintptr_t)kt_self | kt_thread_off;
}

KT_NOTRACE void kt_vfork_child(void)
{
	vfork_parent = kt_self;
	kt_self = NULL;
	kt_thread_off = true;
}

KT_NOTRACE void kt_vfork_parent(uintptr_t saved)
{
	kt_self = (struct kt_stream *)(saved & ~(uintptr_t)1);
	kt_thread_off = saved & 1;
	vfork_parent = NULL;
}

/*
 * The parent is suspended until the child execs or exits, and its stream
 * is in the memory they share: the count goes into its ring's lost
 * records, and its next record takes the slow path, which marks them.
 */
KT_NOTRACE void kt_not_recorded(void)
{
	struct kt_stream *s = vfork_parent;

	if (!s)
		return;
	__atomic_fetch_add(&s->shm->lost, 1, __ATOMIC_RELAXED);
	s->limit = 0;
}
