// SPDX-License-Identifier: GPL-2.0
/*
 * The wakeup watermark (KTRACE_IOC_SET_WAKEUP): a reader is not woken by
 * every record, only when the record at the next multiple of the watermark
 * is published; its arguments are checked like every ioctl's.
 */
#include "ktest.h"

#include <stdbool.h>

#define CPU		1
#define WATERMARK	64

static int kt_wakeup(int fd, uint32_t records, uint32_t reserved)
{
	struct ktrace_wakeup w = { .records = records, .reserved = reserved };

	return ioctl(fd, KTRACE_IOC_SET_WAKEUP, &w);
}

static void write_events(int fd, int nr)
{
	uint32_t args[2] = { 0, 0 };

	for (int i = 0; i < nr; i++)
		if (kt_user_event(fd, 1, args, 2))
			bail("write");
}

static int readable(int rfd, int timeout_ms)
{
	struct pollfd pfd = { .fd = rfd, .events = POLLIN };

	return poll(&pfd, 1, timeout_ms) == 1 && (pfd.revents & POLLIN);
}

/* The parent's state in /proc is S (asleep, here in read()). */
static bool parent_sleeps(void)
{
	char path[64], buf[256], *p;
	ssize_t n;
	int fd;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)getppid());
	fd = open(path, O_RDONLY);
	if (fd < 0)
		return false;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return false;
	buf[n] = '\0';
	p = strrchr(buf, ')');
	return p && p[1] == ' ' && p[2] == 'S';
}

int main(void)
{
	struct ktrace_record recs[256];
	int fd, rfd, status, flags;
	ssize_t n;
	pid_t child;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = kt_open(O_RDWR);
	kt_set_mask(fd, 0);
	pin_to_cpu(CPU);
	ok(kt_resize(fd, 1024) == 0, "buffers of 1024 records, empty");
	is_errno(kt_wakeup(fd, 4, 0), EINVAL, "SET_WAKEUP on a file not attached");
	rfd = kt_open(O_RDWR | O_NONBLOCK);
	ok(kt_attach(rfd, CPU) == 0, "reader attached to cpu %d", CPU);
	is_errno(kt_wakeup(rfd, 4, 1), EINVAL, "SET_WAKEUP reserved != 0");
	is_errno(kt_wakeup(rfd, 0, 0), EINVAL, "SET_WAKEUP of 0 records");
	is_errno(kt_wakeup(rfd, 513, 0), EINVAL, "SET_WAKEUP above half the buffer");
	ok(kt_set_mask(fd, KTRACE_GRP_user) == 0, "tracing user events");

	write_events(fd, 1);
	ok(readable(rfd, 0), "watermark 1 (the default): readable after one record");
	ok(read(rfd, recs, sizeof(recs)) == 24, "... which read() returns");

	ok(kt_wakeup(rfd, 50, 0) == 0, "SET_WAKEUP 50, rounded up to %d", WATERMARK);
	/* The window ends at record 63 (1 read, 62 more written below). */
	write_events(fd, 10);
	ok(!readable(rfd, 200), "10 records waiting: not readable (200 ms)");
	write_events(fd, WATERMARK - 1 - 10 - 1);
	ok(!readable(rfd, 200), "62 records waiting, one short of the window: not readable");
	write_events(fd, 1);
	ok(readable(rfd, 0), "the window's last record published: readable");
	n = read(rfd, recs, sizeof(recs));
	ok(n == (WATERMARK - 1) * 24, "read() returns the %d records (%zd bytes)", WATERMARK - 1, n);

	/* A blocking read() sleeps until a whole window is there. */
	flags = fcntl(rfd, F_GETFL);
	fcntl(rfd, F_SETFL, flags & ~O_NONBLOCK);
	child = fork();
	if (child == 0) {
		pin_to_cpu(CPU);
		/*
		 * read() returns what is there at once, so the parent must be
		 * asleep in it before the first record: wait for its state S.
		 */
		for (int i = 0; i < 5000 && !parent_sleeps(); i++)
			usleep(1000);
		for (int i = 0; i < WATERMARK; i++) {
			write_events(fd, 1);
			usleep(1000);
		}
		_exit(0);
	}
	n = read(rfd, recs, sizeof(recs));
	waitpid(child, &status, 0);
	ok(n == WATERMARK * 24, "blocking read() woken once for %d records written one by one (%zd bytes)",
	   WATERMARK, n);

	kt_set_mask(fd, 0);
	close(rfd);
	ok(kt_resize(fd, 65536) == 0, "default buffer size restored");
	close(fd);
	return done_testing();
}
