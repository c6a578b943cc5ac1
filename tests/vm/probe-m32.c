// SPDX-License-Identifier: GPL-2.0
/*
 * A 32-bit (-m32, ia32) program for 86-probe: it prints the file offset
 * of m32_probed() (from /proc/self/maps), waits for a byte on stdin, calls
 * m32_probed() argv[1] times and exits 0.  Built by tests/tests.mk only
 * where the compiler links -m32 (gcc-multilib).
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

__attribute__((noinline)) int m32_probed(int a, int b)
{
	asm volatile("" : : "r"(a) : "memory");
	return a * 3 + b;
}

int main(int argc, char **argv)
{
	unsigned long lo, hi, off, addr = (unsigned long)m32_probed;
	int i, n = argc > 1 ? atoi(argv[1]) : 10, sum = 0;
	char line[512], perms[8], c;
	FILE *maps = fopen("/proc/self/maps", "r");

	while (maps && fgets(line, sizeof(line), maps))
		if (sscanf(line, "%lx-%lx %7s %lx", &lo, &hi, perms, &off) == 4 &&
		    addr >= lo && addr < hi)
			break;
	if (!maps || addr < lo || addr >= hi)
		return 2;
	printf("%#lx\n", addr - lo + off);
	fflush(stdout);
	if (read(0, &c, 1) != 1)
		return 3;
	for (i = 0; i < n; i++)
		sum += m32_probed(i, 7);
	return sum == 3 * n * (n - 1) / 2 + 7 * n ? 0 : 4;
}
