// SPDX-License-Identifier: GPL-2.0
/*
 * tests/user/sigstress: records as fast as it can (func entry/exit pairs,
 * three records a pair, and user events) while a timer signal every 20 us
 * records more from its handler: many signals land in the middle of a
 * record.  Prints what it recorded; the test checks that the files read
 * cleanly and that every record is in them or counted as lost.
 *
 *   sigstress SECONDS
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

#include "ktrace_user.h"

void __cyg_profile_func_enter(void *fn, void *site);
void __cyg_profile_func_exit(void *fn, void *site);

static volatile unsigned long handler_events;

static void on_alarm(int sig)
{
	/* a call with two user events inside: four events, five records */
	__cyg_profile_func_enter((void *)on_alarm, (void *)0x2000);
	TRACE(2, handler_events / 4, 0);
	TRACE(2, handler_events / 4, 1);
	__cyg_profile_func_exit((void *)on_alarm, (void *)0x2000);
	handler_events += 4;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	struct itimerval it = { { 0, 100 }, { 0, 100 } };	/* 100 us: no signal storm on a loaded machine */
	unsigned long main_events = 0;
	struct timespec now, end;

	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += (time_t)seconds;
	end.tv_nsec += (long)((seconds - (time_t)seconds) * 1e9);
	if (end.tv_nsec >= 1000000000) {
		end.tv_sec++;
		end.tv_nsec -= 1000000000;
	}

	signal(SIGALRM, on_alarm);
	setitimer(ITIMER_REAL, &it, NULL);
	for (;;) {
		clock_gettime(CLOCK_MONOTONIC, &now);
		if (now.tv_sec > end.tv_sec ||
		    (now.tv_sec == end.tv_sec && now.tv_nsec >= end.tv_nsec))
			break;
		for (int i = 0; i < 1000; i++) {
			__cyg_profile_func_enter((void *)main, (void *)0x1000);
			TRACE(1, i, 0);
			__cyg_profile_func_exit((void *)main, (void *)0x1000);
		}
		main_events += 3000;
	}
	it.it_value.tv_usec = it.it_interval.tv_usec = 0;
	setitimer(ITIMER_REAL, &it, NULL);
	printf("main %lu\nhandler %lu\n", main_events, handler_events);
	return 0;
}
