// SPDX-License-Identifier: GPL-2.0
/*
 * user-events: write numbered user events from one CPU, for
 * tests/vm/36-flight-tool.sh.
 *
 *   user-events CPU FIRST COUNT [hold]
 *	pin to CPU, then write the user:mark events FIRST .. FIRST+COUNT-1
 *	(arg1 the number, arg2 CPU), one record each, into $KTRACE_DEV or
 *	/dev/ktrace; with "hold", print "done" and wait to be killed (a task
 *	alive at a snapshot is named by its state dump)
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/ktrace.h>

int main(int argc, char **argv)
{
	const char *dev = getenv("KTRACE_DEV");
	struct ktrace_record rec;
	unsigned long first, count, n;
	cpu_set_t set;
	int cpu, fd;

	if (argc != 4 && argc != 5) {
		fprintf(stderr, "usage: user-events CPU FIRST COUNT [hold]\n");
		return 2;
	}
	cpu = atoi(argv[1]);
	first = strtoul(argv[2], NULL, 10);
	count = strtoul(argv[3], NULL, 10);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set)) {
		perror("user-events: sched_setaffinity");
		return 1;
	}
	fd = open(dev && *dev ? dev : "/dev/ktrace", O_WRONLY);
	if (fd < 0) {
		perror("user-events: open");
		return 1;
	}
	for (n = first; n < first + count; n++) {
		memset(&rec, 0, sizeof(rec));
		rec.event = KTRACE_user_mark;
		rec.arg1 = n;
		rec.arg2 = cpu;
		if (write(fd, &rec, sizeof(rec)) != sizeof(rec)) {
			perror("user-events: write");
			return 1;
		}
	}
	if (argc == 5) {
		printf("done\n");
		fflush(stdout);
		for (;;)
			pause();
	}
	return 0;
}
