// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace.mask= and ktrace.buf_size= on the kernel command line: tracing
 * starts at boot and the early events wait in the buffers for the reader.
 *
 * vm-append: ktrace.mask=0x3 ktrace.buf_size=100000
 */
#include "ktest.h"

int main(void)
{
	struct ktrace_info info;
	struct ktrace_record *recs = NULL;
	size_t cap = 0, nr = 0, forks_of_init = 0, execs = 0;
	int fd, rfd, cpu;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = kt_open(O_RDWR);
	ok(ioctl(fd, KTRACE_IOC_INFO, &info) == 0 && info.mask == 0x3,
	   "tracing on since boot with mask %#x", info.mask);
	ok(info.buf_records == 131072, "buffer size 100000 rounded up to %u", info.buf_records);
	kt_set_mask(fd, 0);
	for (cpu = 0; cpu < nr_cpus_online(); cpu++) {
		rfd = kt_open(O_RDWR | O_NONBLOCK);
		if (kt_attach(rfd, cpu))
			bail("attach");
		nr = kt_drain(rfd, &recs, &cap, nr);
		close(rfd);
	}
	for (size_t i = 0; i < nr; i++) {
		forks_of_init += recs[i].event == KTRACE_thread_fork && recs[i].arg1 == 1;
		execs += recs[i].event == KTRACE_thread_exec;
	}
	ok(forks_of_init > 0, "init's forks since boot are in the buffers (%zu)", forks_of_init);
	ok(execs > 0, "execs since boot are in the buffers (%zu)", execs);
	kt_resize(fd, 65536);
	close(fd);
	free(recs);
	return done_testing();
}
