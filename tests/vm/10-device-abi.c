// SPDX-License-Identifier: GPL-2.0
/*
 * The /dev/ktrace ABI: every rule of Documentation/trace/ktrace.rst that a
 * caller can break, checked for its errno, and the good paths of read(),
 * write() and poll().
 */
#include "ktest.h"

#include <poll.h>
#include <termios.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

/* Unmapped, and hidden from the compiler's buffer-size checks. */
static void *volatile bad_pointer = (void *)8;

static void test_info(int fd)
{
	struct ktrace_info info;

	memset(&info, 0xff, sizeof(info));
	ok(ioctl(fd, KTRACE_IOC_INFO, &info) == 0, "KTRACE_IOC_INFO");
	ok(info.version == KTRACE_ABI_VERSION, "ABI version %u", info.version);
	ok(info.record_size == sizeof(struct ktrace_record) && info.record_size == 24,
	   "record size %u", info.record_size);
	ok(info.nr_cpu_ids >= 4, "nr_cpu_ids %u", info.nr_cpu_ids);
	ok(info.tsc_khz > 0, "tsc_khz %llu", (unsigned long long)info.tsc_khz);
	ok(!info.reserved[0] && !info.reserved[1] && !info.reserved[2] &&
	   !(info.flags & ~KTRACE_INFO_TSC_INVARIANT),
	   "info: reserved fields and unknown flags are zero");
	is_errno(ioctl(fd, KTRACE_IOC_INFO, bad_pointer), EFAULT, "INFO to a bad pointer");
}

static void test_bad_ioctls(int fd)
{
	struct ktrace_mask mask = { .mask = KTRACE_GRP_user, .flags = 1U << 31 };
	struct ktrace_cpu_stats st;
	struct ktrace_buf_size bs = { .records = 64, .reserved = 1 };
	struct ktrace_attach at = { .cpu = 0, .reserved = 1 };

	is_errno(ioctl(fd, _IO(KTRACE_IOC_MAGIC, 99)), ENOTTY, "unknown ioctl");
	is_errno(ioctl(fd, _IOR(KTRACE_IOC_MAGIC, 0, int), NULL), ENOTTY,
		 "INFO number with the wrong size");
	is_errno(ioctl(fd, TCGETS, &st), ENOTTY, "a terminal's ioctl");
	is_errno(ioctl(fd, KTRACE_IOC_SET_MASK, &mask), EINVAL, "SET_MASK with an unknown flag");
	mask.flags = 0;
	mask.mask = KTRACE_EVT_CONT;
	is_errno(ioctl(fd, KTRACE_IOC_SET_MASK, &mask), EINVAL, "SET_MASK with a non-group bit");
	is_errno(ioctl(fd, KTRACE_IOC_SET_MASK, NULL), EFAULT, "SET_MASK from NULL");

	is_errno(kt_stats(fd, 100000, &st), EINVAL, "CPU_STATS of cpu 100000");
	memset(&st, 0, sizeof(st));
	st.discarded = 5;
	is_errno(ioctl(fd, KTRACE_IOC_CPU_STATS, &st), EINVAL, "CPU_STATS discarded != 0 on input");
	memset(&st, 0, sizeof(st));
	st.overwritten = 5;
	is_errno(ioctl(fd, KTRACE_IOC_CPU_STATS, &st), EINVAL, "CPU_STATS overwritten != 0 on input");
	memset(&st, 0, sizeof(st));
	st.pad = 1;
	is_errno(ioctl(fd, KTRACE_IOC_CPU_STATS, &st), EINVAL, "CPU_STATS padding != 0");
	memset(&st, 0, sizeof(st));
	st.flags = KTRACE_CPU_ONLINE;
	is_errno(ioctl(fd, KTRACE_IOC_CPU_STATS, &st), EINVAL, "CPU_STATS flags != 0 on input");
	memset(&st, 0xaa, sizeof(st));
	st.cpu = 0;
	st.flags = 0;
	st.pad = 0;
	st.overwritten = st.discarded = 0;
	ok(ioctl(fd, KTRACE_IOC_CPU_STATS, &st) == 0 && (st.flags & KTRACE_CPU_ONLINE) &&
	   st.buf_records >= KTRACE_BUF_MIN && !st.pad && !st.overwritten,
	   "CPU_STATS of cpu 0: online, %u records, padding zeroed, only the written fields kept", st.buf_records);

	is_errno(ioctl(fd, KTRACE_IOC_SET_BUF_SIZE, &bs), EINVAL, "SET_BUF_SIZE reserved != 0");
	is_errno(kt_resize(fd, 0), EINVAL, "SET_BUF_SIZE of 0 records");
	is_errno(kt_resize(fd, KTRACE_BUF_MIN - 1), EINVAL, "SET_BUF_SIZE below the minimum");
	is_errno(kt_resize(fd, KTRACE_BUF_MAX + 1), EINVAL, "SET_BUF_SIZE above the maximum");
	ok(kt_set_mask(fd, KTRACE_GRP_user) == 0, "tracing on (user)");
	is_errno(kt_resize(fd, 1024), EBUSY, "SET_BUF_SIZE while tracing");
	ok(kt_set_mask(fd, 0) == 0, "tracing off");
	ok(kt_resize(fd, 1000) == 0 && kt_stats(fd, 0, &st) == 0 && st.buf_records == 1024,
	   "SET_BUF_SIZE 1000 rounds up to %u", st.buf_records);

	is_errno(ioctl(fd, KTRACE_IOC_ATTACH_CPU, &at), EINVAL, "ATTACH reserved != 0");
	is_errno(kt_attach(fd, 100000), EINVAL, "ATTACH cpu 100000");
}

static void test_read_write(int fd)
{
	struct ktrace_record recs[4], bad[3];
	uint32_t args[6] = { 11, 22, 33, 44, 55, 66 };
	int rfd, rfd2, cpu = 1;
	char small[23];
	ssize_t n;

	pin_to_cpu(cpu);
	rfd = kt_open(O_RDWR | O_NONBLOCK);
	is_errno(read(rfd, recs, sizeof(recs)), EINVAL, "read before ATTACH");
	ok(kt_attach(rfd, cpu) == 0, "ATTACH cpu %d", cpu);
	is_errno(kt_attach(rfd, 0), EBUSY, "second ATTACH on the same file");
	rfd2 = kt_open(O_RDWR);
	is_errno(kt_attach(rfd2, cpu), EBUSY, "second reader of cpu %d", cpu);
	close(rfd2);
	is_errno(read(rfd, small, sizeof(small)), EINVAL, "read of less than one record");

	/* Empty the buffer of whatever the CPU had. */
	while (read(rfd, recs, sizeof(recs)) > 0)
		;
	is_errno(read(rfd, recs, sizeof(recs)), EAGAIN, "O_NONBLOCK read of an empty buffer");

	ok(kt_set_mask(fd, KTRACE_GRP_user) == 0, "tracing on (user)");
	memset(bad, 0, sizeof(bad));
	bad[0].event = KTRACE_user_mark;
	is_errno(write(fd, bad, 23), EINVAL, "write of 23 bytes");
	is_errno(write(fd, bad, 0), EINVAL, "write of 0 bytes");
	bad[0].event = KTRACE_sched_switch;
	is_errno(write(fd, bad, 24), EINVAL, "write of a sched event");
	bad[0].event = KTRACE_user_mark | KTRACE_GRP_sched;
	is_errno(write(fd, bad, 24), EINVAL, "write with two group bits");
	bad[0].event = KTRACE_user_mark;
	bad[0].tsc = 1;
	is_errno(write(fd, bad, 24), EINVAL, "write with tsc != 0");
	bad[0].tsc = 0;
	bad[0].tid = 1;
	is_errno(write(fd, bad, 24), EINVAL, "write with tid != 0");
	bad[0].tid = 0;
	bad[1].event = KTRACE_EVT_CONT;
	is_errno(write(fd, bad, 48), EINVAL, "continuation without END");
	bad[1].event = KTRACE_EVT_CONT | KTRACE_EVT_END | (1U << KTRACE_SUB_SHIFT);
	is_errno(write(fd, bad, 48), EINVAL, "continuation with the wrong index");
	bad[1].event = KTRACE_EVT_END;
	is_errno(write(fd, bad, 48), EINVAL, "END without CONT");
	bad[0].event = KTRACE_EVT_CONT | KTRACE_EVT_END;
	is_errno(write(fd, bad, 24), EINVAL, "continuation without its event");
	is_errno(write(fd, bad_pointer, 24), EFAULT, "write from a bad pointer");
	n = read(rfd, recs, sizeof(recs));
	is_errno(n, EAGAIN, "rejected writes recorded nothing");

	ok(kt_user_event(fd, 7, args, 6) == 0, "write of a user event with 6 args");
	n = read(rfd, recs, 50);
	ok(n == 48, "read of 50 bytes returns 2 whole records (%zd)", n);
	n += read(rfd, recs + 2, sizeof(recs) - 48);
	ok(n == 72, "the event and its 2 continuation records (%zd bytes)", n);
	ok(recs[0].event == KTRACE_CODE(KTRACE_GRP_user, 7) && recs[0].tid == (uint32_t)getpid() &&
	   recs[0].tsc && recs[0].arg1 == 11 && recs[0].arg2 == 22,
	   "event stamped with tsc and tid %u", recs[0].tid);
	ok(recs[1].event == KTRACE_EVT_CONT && recs[1].arg1 == 33 && recs[1].arg2 == 44 &&
	   recs[2].event == (KTRACE_EVT_CONT | KTRACE_EVT_END | (1U << KTRACE_SUB_SHIFT)) &&
	   recs[2].arg1 == 55 && recs[2].arg2 == 66, "continuation records follow, END on the last");
	ok(recs[1].tsc == recs[0].tsc && recs[2].tsc == recs[0].tsc,
	   "continuation records carry the event's time stamp");

	ok(kt_set_mask(fd, KTRACE_GRP_sched) == 0, "tracing sched only");
	ok(kt_user_event(fd, 1, args, 2) == 0, "user event while user is not traced is accepted");
	n = read(rfd, recs, sizeof(recs));
	while (n > 0) {		/* sched events may be there: no user event may */
		for (int i = 0; i < n / 24; i++)
			if (recs[i].event & KTRACE_GRP_user)
				n = -2;
		if (n > 0)
			n = read(rfd, recs, sizeof(recs));
	}
	ok(n == -1 && errno == EAGAIN, "... and not recorded");
	ok(kt_set_mask(fd, 0) == 0, "tracing off");
	close(rfd);
}

static void test_poll(int fd)
{
	uint32_t args[2] = { 1, 2 };
	struct ktrace_record rec;
	struct pollfd pfd;
	int rfd, rc, status;
	pid_t child;

	pin_to_cpu(2);
	rfd = kt_open(O_RDWR | O_NONBLOCK);
	ok(kt_attach(rfd, 2) == 0, "ATTACH cpu 2");
	while (read(rfd, &rec, sizeof(rec)) > 0)
		;
	pfd.fd = rfd;
	pfd.events = POLLIN;
	ok(poll(&pfd, 1, 0) == 0, "poll of an empty buffer: nothing");
	ok(kt_set_mask(fd, KTRACE_GRP_user) == 0, "tracing on (user)");

	child = fork();
	if (child == 0) {
		pin_to_cpu(2);
		usleep(200 * 1000);
		_exit(kt_user_event(fd, 3, args, 2) ? 1 : 0);
	}
	rc = poll(&pfd, 1, 5000);
	ok(rc == 1 && (pfd.revents & POLLIN), "poll woken by a record written later (rc %d)", rc);
	waitpid(child, &status, 0);
	ok(read(rfd, &rec, sizeof(rec)) == sizeof(rec) && rec.event == KTRACE_CODE(KTRACE_GRP_user, 3),
	   "... and read() returns it");

	/* A blocking read() is woken the same way. */
	close(rfd);
	rfd = kt_open(O_RDWR);
	ok(kt_attach(rfd, 2) == 0, "blocking reader on cpu 2");
	child = fork();
	if (child == 0) {
		pin_to_cpu(2);
		usleep(200 * 1000);
		_exit(kt_user_event(fd, 4, args, 2) ? 1 : 0);
	}
	ok(read(rfd, &rec, sizeof(rec)) == sizeof(rec) && rec.event == KTRACE_CODE(KTRACE_GRP_user, 4),
	   "blocking read() returns a record written later");
	waitpid(child, &status, 0);
	ok(kt_set_mask(fd, 0) == 0, "tracing off");
	close(rfd);
}

/* Set the capability sets of this process to exactly @caps (a bit mask). */
static int set_caps(uint64_t caps)
{
	struct { uint32_t version; int pid; } hdr = { 0x20080522, 0 };
	struct { uint32_t effective, permitted, inheritable; } data[2] = {
		{ (uint32_t)caps, (uint32_t)caps, 0 },
		{ (uint32_t)(caps >> 32), (uint32_t)(caps >> 32), 0 },
	};

	return syscall(SYS_capset, &hdr, data);
}

#define CAP_SYS_ADMIN_BIT	21
#define CAP_PERFMON_BIT		38

/*
 * In a child with capabilities @caps (uid 0 keeps the file's mode from
 * mattering): open(), INFO, SET_MASK, SET_BUF_SIZE and read() on its own
 * file, and SET_MASK on @inherited, opened by the full-powered parent.
 */
static void run_with_caps(int inherited, uint64_t caps, int res[6])
{
	struct ktrace_info info;
	struct ktrace_record rec;
	int pipefd[2], status, own;
	pid_t child;

	if (pipe(pipefd))
		bail("pipe");
	child = fork();
	if (child == 0) {
		if (set_caps(caps))
			_exit(2);
		own = open("/dev/ktrace", O_RDWR | O_NONBLOCK);
		res[0] = own < 0 ? errno : 0;
		res[1] = ioctl(own, KTRACE_IOC_INFO, &info) < 0 ? errno : 0;
		res[2] = kt_set_mask(own, 0) < 0 ? errno : 0;
		res[3] = kt_resize(own, 65536) < 0 ? errno : 0;
		res[4] = kt_attach(own, 0) < 0 || (read(own, &rec, sizeof(rec)) < 0 &&
						  errno != EAGAIN) ? errno : 0;
		res[5] = kt_set_mask(inherited, 0) < 0 ? errno : 0;
		if (write(pipefd[1], res, 6 * sizeof(int)) != 6 * sizeof(int))
			_exit(3);
		_exit(0);
	}
	close(pipefd[1]);
	waitpid(child, &status, 0);
	if (read(pipefd[0], res, 6 * sizeof(int)) != 6 * sizeof(int))
		bail("child with fewer capabilities");
	close(pipefd[0]);
}

static void test_permissions(int fd)
{
	int res[6];

	run_with_caps(fd, 0, res);
	ok(res[0] == EPERM, "no capability: open refused (%s)", strerror(res[0]));
	ok(res[5] == 0, "no capability: a file opened with CAP_SYS_ADMIN keeps it (%s)",
	   strerror(res[5]));

	run_with_caps(fd, 1ull << CAP_PERFMON_BIT, res);
	ok(res[0] == 0 && res[1] == 0, "CAP_PERFMON: open and INFO (%s, %s)",
	   strerror(res[0]), strerror(res[1]));
	ok(res[4] == 0, "CAP_PERFMON: attach and read (%s)", strerror(res[4]));
	ok(res[2] == EPERM && res[3] == EPERM,
	   "CAP_PERFMON: SET_MASK and SET_BUF_SIZE need CAP_SYS_ADMIN (%s, %s)",
	   strerror(res[2]), strerror(res[3]));

	run_with_caps(fd, 1ull << CAP_SYS_ADMIN_BIT, res);
	ok(res[0] == 0 && res[1] == 0 && res[2] == 0 && res[3] == 0 && res[4] == 0,
	   "CAP_SYS_ADMIN: open, INFO, SET_MASK, SET_BUF_SIZE, read");
}

int main(void)
{
	struct stat st;
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	ok(stat("/dev/ktrace", &st) == 0 && S_ISCHR(st.st_mode) &&
	   (st.st_mode & 0777) == 0600, "/dev/ktrace is a char device, mode 0600");
	fd = kt_open(O_RDWR);
	kt_set_mask(fd, 0);
	test_info(fd);
	test_bad_ioctls(fd);
	test_read_write(fd);
	test_poll(fd);
	test_permissions(fd);
	close(fd);
	return done_testing();
}
