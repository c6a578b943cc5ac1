// SPDX-License-Identifier: GPL-2.0
/*
 * CPU hotplug while tracing: the records of a CPU that goes offline stay
 * readable, nothing recorded is lost, and the CPU is traced again once it
 * is back.
 */
#include "ktest.h"

#include <sys/wait.h>

#define CPU	2

static int set_online(int cpu, int online)
{
	char path[64];
	int fd, rc;

	snprintf(path, sizeof(path), "/sys/devices/system/cpu/cpu%d/online", cpu);
	fd = open(path, O_WRONLY);
	if (fd < 0)
		return -1;
	rc = write(fd, online ? "1" : "0", 1) == 1 ? 0 : -1;
	close(fd);
	return rc;
}

/* Write a numbered user event from a child pinned to @cpu. */
static void event_on(int fd, int cpu, uint32_t seq)
{
	uint32_t args[2] = { seq, cpu };
	int status;
	pid_t pid = fork();

	if (pid == 0) {
		pin_to_cpu(cpu);
		_exit(kt_user_event(fd, 5, args, 2) ? 1 : 0);
	}
	waitpid(pid, &status, 0);
}

static int count_seq(const struct ktrace_record *recs, size_t nr, uint32_t seq)
{
	int found = 0;

	for (size_t i = 0; i < nr; i++)
		found += recs[i].event == KTRACE_CODE(KTRACE_GRP_user, 5) && recs[i].arg1 == seq;
	return found;
}

int main(void)
{
	struct ktrace_record *recs = NULL;
	struct ktrace_cpu_stats st;
	size_t cap = 0, nr;
	int fd, rfd, i;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = kt_open(O_RDWR);
	kt_set_mask(fd, 0);
	rfd = kt_open(O_RDWR | O_NONBLOCK);
	ok(kt_attach(rfd, CPU) == 0, "reader attached to cpu %d", CPU);
	kt_drain(rfd, &recs, &cap, 0);
	ok(kt_set_mask(fd, KTRACE_GRP_user | KTRACE_GRP_sched | KTRACE_GRP_timer) == 0,
	   "tracing user, sched and timer events");

	for (i = 0; i < 10; i++)
		event_on(fd, CPU, 100 + i);
	if (!ok(set_online(CPU, 0) == 0, "cpu %d taken offline while tracing", CPU)) {
		diag("no CPU hotplug here: %s", strerror(errno));
		return done_testing();
	}
	kt_stats(fd, CPU, &st);
	ok(!(st.flags & KTRACE_CPU_ONLINE) && st.buf_records > 0,
	   "cpu %d offline, its buffer kept (%u records)", CPU, st.buf_records);
	nr = kt_drain(rfd, &recs, &cap, 0);
	for (i = 0; i < 10; i++)
		if (count_seq(recs, nr, 100 + i) != 1)
			break;
	ok(i == 10, "the offline CPU's records are all readable (%zu records)", nr);
	ok(st.lost == 0, "nothing lost on cpu %d", CPU);

	ok(set_online(CPU, 1) == 0, "cpu %d back online", CPU);
	usleep(100000);
	event_on(fd, CPU, 200);
	nr = kt_drain(rfd, &recs, &cap, 0);
	ok(count_seq(recs, nr, 200) == 1, "cpu %d traced again after it came back", CPU);
	kt_stats(fd, CPU, &st);
	ok((st.flags & KTRACE_CPU_ONLINE) && st.lost == 0, "cpu %d online, nothing lost", CPU);

	/* Twice more, with the reader not draining in between. */
	for (int round = 0; round < 2; round++) {
		event_on(fd, CPU, 300 + round);
		set_online(CPU, 0);
		set_online(CPU, 1);
	}
	event_on(fd, CPU, 302);
	nr = kt_drain(rfd, &recs, &cap, 0);
	ok(count_seq(recs, nr, 300) == 1 && count_seq(recs, nr, 301) == 1 &&
	   count_seq(recs, nr, 302) == 1, "records survive repeated offline/online cycles");
	kt_set_mask(fd, 0);
	close(rfd);
	close(fd);
	free(recs);
	return done_testing();
}
