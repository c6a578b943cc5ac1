// SPDX-License-Identifier: GPL-2.0
/*
 * tests/host/user-ring-bad: a traced program that breaks its own ring, as
 * a buggy or hostile one may (for 65-user-ring-failed).  Under ktrace-run:
 * records one event, flushes it (ktrace_user_flush(): exits 4 if that
 * fails), sets its ring's @committed far past anything
 * recorded, gives ktrace-run time to see it (a few of its rounds), then
 * records N more events (filling the ring many times) and prints
 * "recorded N+1".  Exits 3 if it finds no ring of its own mapped.
 *
 *	user-ring-bad N
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktrace_user.h"
#include "ring.h"

int main(int argc, char **argv)
{
	const char *rings = getenv("KTRACE_RUN_RINGS");
	long n = argc > 1 ? atol(argv[1]) : 100000;
	struct kt_ring *ring = NULL;
	char line[4096];
	FILE *maps;

	TRACE(1, 0, 0);
	if (ktrace_user_flush() < 0)
		return 4;
	maps = fopen("/proc/self/maps", "r");
	while (rings && maps && fgets(line, sizeof(line), maps)) {
		char *path = strchr(line, '/');
		unsigned long start;

		if (path && !strncmp(path, rings, strlen(rings)) &&
		    strstr(path, "/" KT_RING_PREFIX) && sscanf(line, "%lx-", &start) == 1)
			ring = (struct kt_ring *)start;
	}
	if (!ring)
		return 3;
	__atomic_store_n(&ring->committed, ring->committed + (1ull << 40), __ATOMIC_RELEASE);
	usleep(200000);
	for (long i = 1; i <= n; i++)
		TRACE(1, 0, (uint32_t)i);
	printf("recorded %ld\n", n + 1);
	return 0;
}
