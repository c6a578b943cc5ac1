// SPDX-License-Identifier: GPL-2.0
/*
 * tests/user/hostile-ring: a traced program that attacks ktrace-run through
 * its ring directory (KTRACE_RUN_RINGS), for tests/host/67-run-hostile-ring.
 * Besides the fake ring, its main thread records N real events (user:1)
 * through libktrace before and after the attack: those must all reach its
 * trace file whatever the fake ring does.  Exits 7 (the test checks that
 * ktrace-run reports it unchanged).
 *
 *   hostile-ring shrink N    a whole ring with 10 records, then, once
 *                            ktrace-run has written them, cut to 0 bytes
 *   hostile-ring grow N      the same, made twice as large; 10 more records
 *   hostile-ring order N     the same, then @committed goes back
 *                            (shrink, order: then prints "mapped M", how
 *                            many mappings of it ktrace-run still has)
 *   hostile-ring fake N      files named as rings that never become one: no
 *                            magic, a bad size, records not a power of two
 *   hostile-ring badhdr N    a whole ring whose trace file header is bad
 *                            (version 7, byte order, tsc_hz 0, comm without
 *                            NUL), 10 records
 *   hostile-ring control N   garbage in the control page, then cut to 0
 *                            bytes and put back after 200 ms
 *   hostile-ring vanish N    a file named as a ring, no magic yet, removed
 *                            once ktrace-run has looked at it (as libktrace
 *                            removes a ring it finds no room for)
 *   hostile-ring live T      T threads alive at once, one event each
 *
 * The fake ring is ring.<pid>.<pid + 1000000>.0: its trace file is
 * trace.pid<pid>.tid<pid + 1000000>.  Prints "fake TRACEFILE" first.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <linux/futex.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "ktrace_user.h"
#include "ring.h"

#define FAKE_RECORDS	1024

static const char *rings_dir, *out_dir;

static void sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, ms % 1000 * 1000000 };

	nanosleep(&ts, NULL);
}

/* Tell ktrace-run to look: a new ring, records to drain. */
static void kick(void)
{
	char path[PATH_MAX];
	struct kt_control *c;
	int fd;

	snprintf(path, sizeof(path), "%s/control", rings_dir);
	fd = open(path, O_RDWR);
	if (fd < 0)
		return;
	c = mmap(NULL, KT_RING_HEADER, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	if (c == MAP_FAILED)
		return;
	__atomic_fetch_add(&c->rings_made, 1, __ATOMIC_SEQ_CST);
	__atomic_fetch_add(&c->kick, 1, __ATOMIC_SEQ_CST);
	syscall(SYS_futex, &c->kick, FUTEX_WAKE, INT_MAX, NULL, NULL, 0);
	munmap(c, KT_RING_HEADER);
}

static void real_events(unsigned long n, unsigned int first)
{
	for (unsigned long i = 0; i < n; i++)
		ktrace_user_event(1, first + i, 0);
}

/* How big the fake ring's trace file is, -1 while there is none. */
static long fake_file_size(void)
{
	char path[PATH_MAX];
	struct stat st;

	snprintf(path, sizeof(path), "%s/trace.pid%d.tid%d", out_dir, (int)getpid(),
		 (int)getpid() + 1000000);
	return stat(path, &st) < 0 ? -1 : (long)st.st_size;
}

static bool wait_fake_size(long want)
{
	for (int i = 0; i < 1000; i++) {
		if (fake_file_size() == want)
			return true;
		sleep_ms(5);
	}
	fprintf(stderr, "hostile-ring: the fake file never got to %ld bytes (%ld)\n", want,
		fake_file_size());
	return false;
}

/* Create a fake ring of @records, its header from @bad; returns it mapped. */
static struct kt_ring *make_ring(int *fdp, uint64_t records, uint64_t size, bool bad_header)
{
	uint32_t pid = getpid(), tid = getpid() + 1000000;
	char path[PATH_MAX];
	struct kt_ring *r;
	int fd;

	snprintf(path, sizeof(path), "%s/" KT_RING_PREFIX "%u.%u.0", rings_dir, pid, tid);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, size) < 0) {
		perror(path);
		exit(1);
	}
	r = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (r == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	r->version = KT_RING_VERSION;
	r->records = records;
	ktfile_header_init(&r->file, -1, 0, true, 0);
	r->file.tid = tid;
	if (bad_header) {
		r->file.version = 7;
		r->file.byte_order = 0xdeadbeef;
		r->file.tsc_hz = 0;
		r->file.flags = 0;
		memset(r->file.comm, 'A', sizeof(r->file.comm));
		memset(r->file.release, 'B', sizeof(r->file.release));
		memset(r->file.reserved, 0xff, sizeof(r->file.reserved));
	}
	__atomic_store_n(&r->magic, KT_RING_MAGIC, __ATOMIC_RELEASE);
	*fdp = fd;
	return r;
}

static void fake_records(struct kt_ring *r, uint64_t from, uint64_t n)
{
	struct ktrace_record *recs = kt_ring_records(r);
	uint64_t tsc = r->file.ref_tsc;

	for (uint64_t i = from; i < from + n; i++)
		recs[i & (r->records - 1)] = (struct ktrace_record){
			.tsc = tsc + i, .event = KTRACE_CODE(KTRACE_GRP_user, 2),
			.tid = getpid() + 1000000, .arg1 = i,
		};
	__atomic_store_n(&r->committed, from + n, __ATOMIC_RELEASE);
}

/* How many mappings ktrace-run (the parent) has of the fake ring's file */
static int parent_maps(void)
{
	char path[64], name[64], line[PATH_MAX + 128];
	int n = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)getppid());
	snprintf(name, sizeof(name), "/" KT_RING_PREFIX "%u.%u.0", (unsigned int)getpid(),
		 (unsigned int)getpid() + 1000000);
	f = fopen(path, "r");
	if (!f)
		return -1;
	while (fgets(line, sizeof(line), f))
		n += strstr(line, name) != NULL;
	fclose(f);
	return n;
}

/* Files named as rings that never become one */
static void fakes(void)
{
	static const struct { const char *name; uint64_t records, size; bool magic; } f[] = {
		{ "no-magic", 1024, KT_RING_HEADER + 1024 * 24, false },
		{ "bad-size", 1024, KT_RING_HEADER + 1000 * 24, true },
		{ "not-pow2", 1000, KT_RING_HEADER + 1000 * 24, true },
		{ "short", 1024, 100, true },
	};

	for (unsigned int i = 0; i < sizeof(f) / sizeof(f[0]); i++) {
		char path[PATH_MAX];
		struct kt_ring r = { .version = KT_RING_VERSION, .records = f[i].records };
		int fd;

		if (f[i].magic)
			r.magic = KT_RING_MAGIC;
		snprintf(path, sizeof(path), "%s/" KT_RING_PREFIX "%d.%u.%u", rings_dir,
			 (int)getpid(), 2000000 + i, i);
		fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
		if (fd < 0 || ftruncate(fd, f[i].size) < 0 ||
		    pwrite(fd, &r, f[i].size < sizeof(r) ? f[i].size : sizeof(r), 0) < 0) {
			perror(path);
			exit(1);
		}
		close(fd);
		printf("fake %s %s\n", f[i].name, path);
	}
	fflush(stdout);
	for (int i = 0; i < 60; i++) {
		kick();
		sleep_ms(5);
	}
}

/* A ring file removed before it became one (libktrace: no room for it) */
static void vanish(void)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/" KT_RING_PREFIX "%d.%u.0", rings_dir,
		 (int)getpid(), 3000000);
	fd = open(path, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (fd < 0 || ftruncate(fd, KT_RING_HEADER + 1024 * 24) < 0) {
		perror(path);
		exit(1);
	}
	close(fd);
	printf("vanish %s\n", path);
	fflush(stdout);
	for (int i = 0; i < 20; i++) {
		kick();
		sleep_ms(5);
	}
	unlink(path);
}

static void control(void)
{
	char path[PATH_MAX];
	struct kt_control *c;
	int fd;

	snprintf(path, sizeof(path), "%s/control", rings_dir);
	fd = open(path, O_RDWR);
	c = fd < 0 ? MAP_FAILED : mmap(NULL, KT_RING_HEADER, PROT_READ | PROT_WRITE,
				       MAP_SHARED, fd, 0);
	if (c == MAP_FAILED) {
		perror(path);
		exit(1);
	}
	for (int i = 0; i < 20; i++) {
		c->rings_made = rand();
		c->kick = rand();
		c->sleeping = rand();
		c->drainer_pid = 1;
		sleep_ms(5);
	}
	memset(c, 0xff, KT_RING_HEADER);
	munmap(c, KT_RING_HEADER);
	if (ftruncate(fd, 0) < 0)
		perror("ftruncate");
	sleep_ms(200);
	if (ftruncate(fd, KT_RING_HEADER) < 0)
		perror("ftruncate");
	close(fd);
}

static pthread_barrier_t barrier;

static void *live_thread(void *arg)
{
	ktrace_user_event(1, (uintptr_t)arg, 0);
	pthread_barrier_wait(&barrier);
	return NULL;
}

static int live(unsigned long nr)
{
	pthread_t *t = calloc(nr, sizeof(*t));
	pthread_attr_t attr;

	pthread_barrier_init(&barrier, NULL, nr + 1);
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 << 10);
	for (unsigned long i = 0; i < nr; i++)
		if (pthread_create(&t[i], &attr, live_thread, (void *)i)) {
			fprintf(stderr, "hostile-ring: thread %lu: cannot start\n", i);
			exit(1);
		}
	pthread_barrier_wait(&barrier);
	for (unsigned long i = 0; i < nr; i++)
		pthread_join(t[i], NULL);
	printf("live %lu\n", nr);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 2 ? argv[1] : "";
	unsigned long n = argc > 2 ? strtoul(argv[2], NULL, 0) : 0;
	uint64_t size = KT_RING_HEADER + FAKE_RECORDS * sizeof(struct ktrace_record);
	struct kt_ring *r;
	int fd;

	rings_dir = getenv("KTRACE_RUN_RINGS");
	out_dir = getenv("KTRACE_USER_DIR");
	if (!rings_dir || !out_dir) {
		fprintf(stderr, "hostile-ring: not under ktrace-run\n");
		return 1;
	}
	if (!strcmp(mode, "live"))
		return live(n);
	printf("fake trace.pid%d.tid%d\n", (int)getpid(), (int)getpid() + 1000000);
	fflush(stdout);
	real_events(n, 0);
	if (!strcmp(mode, "fake")) {
		fakes();
	} else if (!strcmp(mode, "vanish")) {
		vanish();
	} else if (!strcmp(mode, "control")) {
		ktrace_user_flush();
		control();
	} else if (!strcmp(mode, "shrink") || !strcmp(mode, "grow") ||
		   !strcmp(mode, "order") || !strcmp(mode, "badhdr")) {
		r = make_ring(&fd, FAKE_RECORDS, size, !strcmp(mode, "badhdr"));
		fake_records(r, 0, 10);
		kick();
		if (!wait_fake_size(KTFILE_HEADER_SIZE + 10 * sizeof(struct ktrace_record)))
			return 1;
		if (!strcmp(mode, "shrink")) {
			if (ftruncate(fd, 0) < 0)
				perror("ftruncate");
		} else if (!strcmp(mode, "grow")) {
			if (ftruncate(fd, 2 * size) < 0)
				perror("ftruncate");
			fake_records(r, 10, 10);
		} else if (!strcmp(mode, "order")) {
			fake_records(r, 0, 5);
		}
		kick();
		sleep_ms(100);
		if (!strcmp(mode, "shrink") || !strcmp(mode, "order"))
			printf("mapped %d\n", parent_maps());
		if (!strcmp(mode, "grow") &&
		    !wait_fake_size(KTFILE_HEADER_SIZE + 20 * sizeof(struct ktrace_record)))
			return 1;
		if (strcmp(mode, "shrink"))
			r->ended = 1;
	} else {
		fprintf(stderr, "hostile-ring: unknown mode %s\n", mode);
		return 1;
	}
	real_events(n, n);
	return 7;
}
