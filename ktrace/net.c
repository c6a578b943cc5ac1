// SPDX-License-Identifier: GPL-2.0
/*
 * net: the TCP sockets of --send and --listen (ktnet.h has the protocol).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ktnet.h"
#include "util.h"

bool ktnet_parse_addr(const char *arg, struct ktnet_addr *a, bool port_only_ok)
{
	const char *colon = strrchr(arg, ':');
	const char *host = arg, *port;
	size_t hlen;

	memset(a, 0, sizeof(*a));
	if (!colon) {
		if (!port_only_ok)
			return false;
		hlen = 0;
		port = arg;
	} else {
		hlen = colon - arg;
		port = colon + 1;
		if (hlen >= 2 && arg[0] == '[' && arg[hlen - 1] == ']') {
			host++;
			hlen -= 2;
		}
	}
	if (hlen >= sizeof(a->host) || !*port || strlen(port) >= sizeof(a->port) ||
	    strspn(port, "0123456789") != strlen(port) || (colon && !hlen && !port_only_ok))
		return false;
	memcpy(a->host, host, hlen);
	strcpy(a->port, port);
	return true;
}

static int try_addrs(const struct ktnet_addr *a, bool passive, const char **why)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM,
				  .ai_flags = passive ? AI_PASSIVE : 0 }, *res, *ai;
	int fd = -1, err = 0, one = 1, ret;

	ret = getaddrinfo(*a->host ? a->host : NULL, a->port, &hints, &res);
	if (ret) {
		*why = gai_strerror(ret);
		return -EHOSTUNREACH;
	}
	for (ai = res; ai; ai = ai->ai_next) {
		fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
		if (fd < 0) {
			err = errno;
			continue;
		}
		if (passive) {
			setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
			if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 64) == 0)
				break;
		} else if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0) {
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			break;
		}
		err = errno;
		close(fd);
		fd = -1;
	}
	freeaddrinfo(res);
	if (fd < 0) {
		*why = strerror(err ? err : ECONNREFUSED);
		return -(err ? err : ECONNREFUSED);
	}
	return fd;
}

int ktnet_connect(const struct ktnet_addr *a, const char **why)
{
	return try_addrs(a, false, why);
}

int ktnet_listen(const struct ktnet_addr *a, const char *arg)
{
	const char *why = NULL;
	int fd = try_addrs(a, true, &why);

	if (fd < 0)
		die("--listen %s: %s", arg, why);
	return fd;
}

int ktnet_write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len) {
		ssize_t n = send(fd, p, len, MSG_NOSIGNAL);

		if (n < 0 && errno == ENOTSOCK)	/* a file: the spool's, a shipped one */
			n = write(fd, p, len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		p += n;
		len -= n;
	}
	return 0;
}

int ktnet_read_all(int fd, void *buf, size_t len)
{
	char *p = buf;

	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			return -EPIPE;
		p += n;
		len -= n;
	}
	return 0;
}

int ktnet_send(int fd, const struct ktnet_hdr *h, const void *payload)
{
	uint8_t wire[KTNET_HDR_SIZE];
	int ret;

	ktnet_encode(wire, h);
	ret = ktnet_write_all(fd, wire, sizeof(wire));
	if (!ret && h->len)
		ret = ktnet_write_all(fd, payload, h->len);
	return ret;
}

void ktnet_to_columns(void *cols, const struct ktrace_record *recs, size_t nr)
{
	uint8_t *tsc = cols, *u32 = tsc + 8 * nr;
	uint64_t prev = 0;

	for (size_t i = 0; i < nr; i++) {
		uint64_t d = htole64(recs[i].tsc - prev);
		uint32_t v[4] = { htole32(recs[i].event), htole32(recs[i].tid),
				  htole32(recs[i].arg1), htole32(recs[i].arg2) };

		prev = recs[i].tsc;
		memcpy(tsc + 8 * i, &d, 8);
		for (int k = 0; k < 4; k++)
			memcpy(u32 + 4 * (k * nr + i), &v[k], 4);
	}
}

void ktnet_from_columns(struct ktrace_record *recs, const void *cols, size_t nr)
{
	const uint8_t *tsc = cols, *u32 = tsc + 8 * nr;
	uint64_t prev = 0;

	for (size_t i = 0; i < nr; i++) {
		uint64_t d;
		uint32_t v[4];

		memcpy(&d, tsc + 8 * i, 8);
		for (int k = 0; k < 4; k++)
			memcpy(&v[k], u32 + 4 * (k * nr + i), 4);
		prev += le64toh(d);
		recs[i] = (struct ktrace_record){ .tsc = prev, .event = le32toh(v[0]),
			.tid = le32toh(v[1]), .arg1 = le32toh(v[2]), .arg2 = le32toh(v[3]) };
	}
}

uint64_t ktnet_mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + ts.tv_nsec;
}

bool ktnet_name_ok(const char *name)
{
	size_t len = strnlen(name, KTNET_NAME_MAX);

	return len && len < KTNET_NAME_MAX && name[0] != '.' &&
	       strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
			    "0123456789._-") == len;
}
