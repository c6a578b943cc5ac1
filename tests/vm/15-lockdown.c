// SPDX-License-Identifier: GPL-2.0
/*
 * Under lockdown=confidentiality /dev/ktrace cannot be opened, as tracefs
 * cannot: its records hold kernel addresses.  Needs the lockdown LSM
 * (the debug kernel has it); skipped where the kernel has none.
 *
 * vm-append: lockdown=confidentiality
 */
#include "ktest.h"

#include <sys/mount.h>

int main(void)
{
	char mode[256] = "";
	FILE *f;
	int fd;

	setvbuf(stdout, NULL, _IOLBF, 0);
	mount("securityfs", "/sys/kernel/security", "securityfs", 0, NULL);
	f = fopen("/sys/kernel/security/lockdown", "r");
	if (!f || !fgets(mode, sizeof(mode), f)) {
		printf("1..0 # SKIP no lockdown LSM in this kernel (KCONFIG=debug has one)\n");
		return 0;
	}
	fclose(f);
	ok(strstr(mode, "[confidentiality]") != NULL, "kernel locked down: %s", mode);
	fd = open("/dev/ktrace", O_RDWR);
	is_errno(fd, EPERM, "open /dev/ktrace under lockdown=confidentiality");
	return done_testing();
}
