// SPDX-License-Identifier: GPL-2.0
/*
 * demo-app: the user-space part of `make demo`.  Built with
 * -finstrument-functions and libktrace, so every call is recorded next to
 * the kernel's events: two worker threads each parse a few "requests"
 * (a recursive checksum and a file write), marked with named user events.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <ktrace_user.h>

enum { EV_REQUEST = 1 };

static unsigned int checksum(const char *s, unsigned int depth)
{
	if (!*s || depth > 64)
		return depth;
	return (unsigned char)*s + 31 * checksum(s + strnlen(s, 8), depth + 1);
}

static void save(const char *dir, unsigned int id, unsigned int sum)
{
	char path[256], line[64];
	int fd, len;

	snprintf(path, sizeof(path), "%s/request-%u", dir, id);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return;
	len = snprintf(line, sizeof(line), "%u\n", sum);
	if (write(fd, line, len) != len)
		perror("demo-app: write");
	close(fd);
}

static void *worker(void *arg)
{
	unsigned int base = (unsigned int)(long)arg;
	char text[48];

	for (unsigned int id = base; id < base + 4; id++) {
		snprintf(text, sizeof(text), "request number %u from the demo", id);
		TRACE(EV_REQUEST, id, (uint32_t)strlen(text));
		save("/tmp", id, checksum(text, 0));
	}
	return NULL;
}

int main(void)
{
	pthread_t threads[2];

	KTRACE_USER_NAME(EV_REQUEST, "request", "request %u, %u bytes");
	for (long i = 0; i < 2; i++)
		pthread_create(&threads[i], NULL, worker, (void *)(i * 100));
	for (int i = 0; i < 2; i++)
		pthread_join(threads[i], NULL);
	return 0;
}
