// SPDX-License-Identifier: GPL-2.0
/*
 * name-task: a task that is switched out and in under known names, for
 * tests/vm/55-names.sh.
 *
 *   name-task spin SECONDS   name itself "kt-preexist" (prctl), then sleep
 *                            1 ms at a time for SECONDS: a task that was
 *                            there before ktrace started
 *   name-task rename         print its pid, sleep 10 x 5 ms, rename itself
 *                            "kt-renamed" with prctl(PR_SET_NAME), sleep
 *                            10 x 5 ms more
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

static void nap(long ns, int times)
{
	struct timespec ts = { 0, ns };

	while (times--)
		nanosleep(&ts, NULL);
}

int main(int argc, char **argv)
{
	if (argc == 3 && !strcmp(argv[1], "spin")) {
		long ms = atol(argv[2]) * 1000;

		prctl(PR_SET_NAME, "kt-preexist");
		nap(1000000, ms);
		return 0;
	}
	if (argc == 2 && !strcmp(argv[1], "rename")) {
		printf("%d\n", (int)getpid());
		fflush(stdout);
		nap(5000000, 10);
		prctl(PR_SET_NAME, "kt-renamed");
		nap(5000000, 10);
		return 0;
	}
	fprintf(stderr, "usage: name-task spin SECONDS | name-task rename\n");
	return 2;
}
