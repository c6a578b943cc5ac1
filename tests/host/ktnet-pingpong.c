// SPDX-License-Identifier: GPL-2.0
/*
 * ktnet-pingpong: causally linked events on two machines, for
 * tests/host/106-dtrace-machines.sh.  "send" stamps packet N with the TSC
 * just before it sends it, "recv" just after it got it, each as a line
 * "TSC KIND N" (KIND 1 sent, 2 received) appended to a file that the fake
 * device (KTFAKE_MARKS) turns into user:mark records: in any correct merge
 * of the two machines' traces, "received N" comes after "sent N".
 *
 *   ktnet-pingpong recv PORT COUNT MARKS
 *   ktnet-pingpong send ADDR PORT COUNT MARKS
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>
#include <x86intrin.h>

static void mark(int fd, unsigned long long tsc, int kind, unsigned int n)
{
	char line[64];
	int len = snprintf(line, sizeof(line), "%llu %d %u\n", tsc, kind, n);

	if (write(fd, line, len) != len) {
		perror("ktnet-pingpong: marks");
		exit(1);
	}
}

int main(int argc, char **argv)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	int s = socket(AF_INET, SOCK_DGRAM, 0), fd;
	unsigned int count, n;

	if (argc == 5 && !strcmp(argv[1], "recv")) {
		struct timeval tv = { 10, 0 };

		sa.sin_port = htons(atoi(argv[2]));
		count = atoi(argv[3]);
		fd = open(argv[4], O_WRONLY | O_APPEND | O_CREAT, 0600);
		if (s < 0 || fd < 0 || bind(s, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
			perror("ktnet-pingpong recv");
			return 1;
		}
		setsockopt(s, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
		for (unsigned int i = 0; i < count; i++) {
			if (recv(s, &n, sizeof(n), 0) != sizeof(n))
				return 1;
			mark(fd, __rdtsc(), 2, n);
		}
		return 0;
	}
	if (argc == 6 && !strcmp(argv[1], "send")) {
		struct timespec gap = { 0, 20 * 1000 * 1000 };

		inet_pton(AF_INET, argv[2], &sa.sin_addr);
		sa.sin_port = htons(atoi(argv[3]));
		count = atoi(argv[4]);
		fd = open(argv[5], O_WRONLY | O_APPEND | O_CREAT, 0600);
		if (s < 0 || fd < 0) {
			perror("ktnet-pingpong send");
			return 1;
		}
		for (n = 1; n <= count; n++) {
			mark(fd, __rdtsc(), 1, n);
			if (sendto(s, &n, sizeof(n), 0, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
				perror("ktnet-pingpong send");
				return 1;
			}
			nanosleep(&gap, NULL);
		}
		return 0;
	}
	fprintf(stderr, "usage: ktnet-pingpong recv PORT COUNT MARKS | send ADDR PORT COUNT MARKS\n");
	return 2;
}
