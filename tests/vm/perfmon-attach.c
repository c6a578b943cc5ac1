// SPDX-License-Identifier: GPL-2.0
/*
 * perfmon-attach: with CAP_PERFMON alone (uid 0 stays, so the node's mode
 * does not matter), keep trying to attach a reader to every CPU for
 * SECONDS, holding each attach 20 ms; for tests/vm/38-flight-perfmon.sh.
 * Prints "attached N refused M last-error E".
 *
 *   perfmon-attach SECONDS
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>
#include <linux/ktrace.h>

#define CAP_PERFMON_BIT	38

static int set_caps(uint64_t caps)
{
	struct { uint32_t version; int pid; } hdr = { 0x20080522, 0 };
	struct { uint32_t effective, permitted, inheritable; } data[2] = {
		{ (uint32_t)caps, (uint32_t)caps, 0 },
		{ (uint32_t)(caps >> 32), (uint32_t)(caps >> 32), 0 },
	};

	return syscall(SYS_capset, &hdr, data);
}

int main(int argc, char **argv)
{
	unsigned long attached = 0, refused = 0;
	int last_err = 0, ncpu = sysconf(_SC_NPROCESSORS_CONF);
	time_t end;

	if (argc != 2) {
		fprintf(stderr, "usage: perfmon-attach SECONDS\n");
		return 2;
	}
	if (set_caps(1ull << CAP_PERFMON_BIT)) {
		perror("perfmon-attach: capset");
		return 1;
	}
	end = time(NULL) + atoi(argv[1]);
	while (time(NULL) < end) {
		for (int cpu = 0; cpu < ncpu; cpu++) {
			struct ktrace_attach at = { .cpu = cpu };
			int fd = open("/dev/ktrace", O_RDWR | O_NONBLOCK);

			if (fd < 0) {
				perror("perfmon-attach: open");
				return 1;
			}
			if (ioctl(fd, KTRACE_IOC_ATTACH_CPU, &at) == 0) {
				attached++;
				usleep(20000);
			} else {
				refused++;
				last_err = errno;
			}
			close(fd);
		}
	}
	printf("attached %lu refused %lu last-error %s\n", attached, refused,
	       last_err ? strerror(last_err) : "none");
	return 0;
}
