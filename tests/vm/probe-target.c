// SPDX-License-Identifier: GPL-2.0
/*
 * probe-target: a program that knows what ktrace -P must fetch from it.
 * It calls work() N times with a request whose fields it chose (an id, a
 * type two pointers away) and prints, for each call, the values and what
 * work() returned: the ground truth of tests/vm/87-probe-e2e.sh.  Built
 * static, -O2 -g (tests/tests.mk): ktrace reads its DWARF in the VM.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

struct hdr {
	uint32_t magic;
	uint16_t type;
};

struct msg {
	long pad[3];
	struct hdr hdr;
};

struct req {
	int id;
	struct msg *msg;
};

__attribute__((noinline)) int work(struct req *r, int n)
{
	__asm__ volatile("" ::: "memory");
	return r->id * 2 + n + r->msg->hdr.type;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;

	for (int i = 0; i < n; i++) {
		struct msg m = { .hdr = { 0xabcd, (uint16_t)(i % 7) } };
		struct req r = { 1000 + 3 * i, &m };
		int ret = work(&r, i);

		printf("call %d %d %d %d\n", r.id, m.hdr.type, i, ret);
	}
	return 0;
}
