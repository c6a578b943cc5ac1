// SPDX-License-Identifier: GPL-2.0
/*
 * Sessions (KTRACE_MASK_SESSION) and what one leaves to the next: a
 * session's mask, mode and lost records end with it, through the ioctls, on
 * one CPU.  Ground truth: the kernel's mask and mode (KTRACE_IOC_INFO), its
 * per-CPU counters (written = read + overwritten + discarded + in the
 * buffer) and the raw records read.
 *   - the owner's release puts back the mask before the session and the
 *     normal mode; a call without the flag ends the session (the mask
 *     stays); a second owner, or a session while a reader is attached,
 *     gets EBUSY;
 *   - a new session empties the buffer (counted discarded) and the drops
 *     no marker told of: its first record is its own event, not a lost
 *     marker;
 *   - a reader that attaches after one that took an event but not its
 *     continuation record starts at an event (the orphan counted read);
 *   - in overwrite mode a reader attaches only with CAP_SYS_ADMIN.
 */
#include <sys/syscall.h>
#include "ktest.h"

#define CPU		1
#define CAP_PERFMON_BIT	38

static int session(int fd, uint32_t mask)
{
	struct ktrace_mask m = { .mask = mask, .flags = KTRACE_MASK_SESSION };

	return ioctl(fd, KTRACE_IOC_SET_MASK, &m);
}

static uint32_t cur_mask(int fd, uint32_t *flags)
{
	struct ktrace_info info;

	if (ioctl(fd, KTRACE_IOC_INFO, &info))
		bail("KTRACE_IOC_INFO");
	if (flags)
		*flags = info.flags;
	return info.mask;
}

static void mark(int fd, uint32_t n, unsigned int nr_args)
{
	uint32_t args[4] = { n, CPU, n, n };

	if (kt_user_event(fd, 1, args, nr_args))
		bail("user event");
}

/* written - read - overwritten - discarded: the records in the buffer */
static long long in_buffer(int fd)
{
	struct ktrace_cpu_stats st;

	if (kt_stats(fd, CPU, &st))
		bail("KTRACE_IOC_CPU_STATS");
	return (long long)(st.written - st.read - st.overwritten - st.discarded);
}

int main(void)
{
	struct ktrace_record recs[64];
	struct ktrace_cpu_stats st0, st1;
	int ctl, own, other, rd, status;
	uint32_t flags;
	ssize_t n;
	pid_t child;

	setvbuf(stdout, NULL, _IOLBF, 0);
	pin_to_cpu(CPU);
	ctl = kt_open(O_RDWR);
	kt_set_mask(ctl, 0);
	if (kt_resize(ctl, 64))
		bail("resize");

	/* ownership */
	own = kt_open(O_RDWR);
	other = kt_open(O_RDWR);
	ok(session(own, KTRACE_GRP_user) == 0 && cur_mask(ctl, NULL) == KTRACE_GRP_user,
	   "a session starts: mask set");
	is_errno(session(other, KTRACE_GRP_sched), EBUSY, "a second owner");
	close(own);
	ok(cur_mask(ctl, NULL) == 0, "the owner released: tracing off, as before the session");
	kt_set_mask(ctl, KTRACE_GRP_sched);
	own = kt_open(O_RDWR);
	ok(session(own, KTRACE_GRP_user) == 0, "a session over a mask set for good");
	ok(session(own, 0) == 0 &&
	   ioctl(own, KTRACE_IOC_SET_MODE, &(struct ktrace_mode){ .flags = KTRACE_MODE_OVERWRITE }) == 0 &&
	   session(own, KTRACE_GRP_user) == 0, "... the owner goes to overwrite mode");
	close(own);
	ok(cur_mask(ctl, &flags) == KTRACE_GRP_sched && !(flags & KTRACE_INFO_OVERWRITE),
	   "released: the mask before it again, normal mode");
	own = kt_open(O_RDWR);
	ok(session(own, KTRACE_GRP_user) == 0 && kt_set_mask(other, KTRACE_GRP_irq) == 0,
	   "a mask set without the flag ends the session");
	close(own);
	ok(cur_mask(ctl, NULL) == KTRACE_GRP_irq, "... its mask stays when the old owner goes");
	kt_set_mask(ctl, 0);

	/* leftovers: records and a pending lost count */
	own = kt_open(O_RDWR);
	session(own, KTRACE_GRP_user);
	for (uint32_t i = 0; i < 100; i++)	/* 64 fit, 36 pending lost */
		mark(ctl, i, 2);
	kt_stats(ctl, CPU, &st0);
	close(own);
	ok(st0.lost >= 36 && in_buffer(ctl) == 64, "a session left 64 records and %llu drops",
	   (unsigned long long)st0.lost);
	rd = kt_open(O_RDWR | O_NONBLOCK);
	kt_attach(rd, CPU);
	own = kt_open(O_RDWR);
	is_errno(session(own, KTRACE_GRP_user), EBUSY, "a session while a reader is attached");
	close(rd);
	ok(session(own, KTRACE_GRP_user) == 0, "the next session starts");
	kt_stats(ctl, CPU, &st1);
	ok(st1.discarded - st0.discarded == 64 && in_buffer(ctl) == 0,
	   "... it emptied the buffer: %llu discarded", (unsigned long long)(st1.discarded - st0.discarded));
	mark(ctl, 1000, 2);
	rd = kt_open(O_RDWR | O_NONBLOCK);
	kt_attach(rd, CPU);
	n = read(rd, recs, sizeof(recs));
	ok(n == sizeof(recs[0]) && recs[0].event == KTRACE_CODE(KTRACE_GRP_user, 1) &&
	   recs[0].arg1 == 1000, "... its first record is its own event, no lost marker (%zd bytes, event %#x)",
	   n, n > 0 ? recs[0].event : 0);
	close(rd);

	/* an orphan continuation record (a plain mask: no session needed) */
	kt_set_mask(ctl, KTRACE_GRP_user);
	mark(ctl, 2000, 4);		/* an event and one continuation record */
	rd = kt_open(O_RDWR | O_NONBLOCK);
	kt_attach(rd, CPU);
	n = read(rd, recs, sizeof(recs[0]));
	ok(n == sizeof(recs[0]) && recs[0].arg1 == 2000, "a reader takes the event only");
	close(rd);
	mark(ctl, 3000, 2);
	kt_stats(ctl, CPU, &st0);
	rd = kt_open(O_RDWR | O_NONBLOCK);
	kt_attach(rd, CPU);
	n = read(rd, recs, sizeof(recs));
	kt_stats(ctl, CPU, &st1);
	ok(n == sizeof(recs[0]) && !(recs[0].event & KTRACE_EVT_CONT) && recs[0].arg1 == 3000,
	   "the next reader starts at an event, not the orphan (%zd bytes, event %#x)",
	   n, n > 0 ? recs[0].event : 0);
	ok(st1.read - st0.read == 2 && in_buffer(ctl) == 0, "... the orphan counted read");
	close(rd);
	close(own);
	kt_set_mask(ctl, 0);

	/* overwrite mode: CAP_PERFMON alone cannot attach */
	own = kt_open(O_RDWR);
	session(own, 0);
	ioctl(own, KTRACE_IOC_SET_MODE, &(struct ktrace_mode){ .flags = KTRACE_MODE_OVERWRITE });
	child = fork();
	if (child == 0) {
		struct { uint32_t version; int pid; } hdr = { 0x20080522, 0 };
		struct { uint32_t effective, permitted, inheritable; } data[2] = {
			{ 0, 0, 0 }, { 1u << (CAP_PERFMON_BIT - 32), 1u << (CAP_PERFMON_BIT - 32), 0 },
		};
		int fd;

		if (syscall(SYS_capset, &hdr, data))
			_exit(2);
		fd = open("/dev/ktrace", O_RDWR);
		_exit(fd < 0 ? 3 : kt_attach(fd, CPU) == -1 && errno == EPERM ? 0 : 1);
	}
	waitpid(child, &status, 0);
	ok(WIFEXITED(status) && WEXITSTATUS(status) == 0,
	   "overwrite mode, tracing off: a CAP_PERFMON-only opener cannot attach (EPERM; exit %d)",
	   WIFEXITED(status) ? WEXITSTATUS(status) : -1);
	rd = kt_open(O_RDWR);
	ok(kt_attach(rd, CPU) == 0, "... one with CAP_SYS_ADMIN can");
	close(rd);
	close(own);
	ok(cur_mask(ctl, &flags) == 0 && !(flags & KTRACE_INFO_OVERWRITE), "normal mode again");

	kt_resize(ctl, 65536);
	return done_testing();
}
