// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace's context switches against ftrace's sched_switch over the same
 * window: ftrace runs with the x86-tsc trace clock, so both tracers' time
 * stamps are TSC values and the window bounded by two ktrace markers
 * applies to both.  Each CPU's sequence of (prev pid, next pid, prev
 * state, next prio) must be the same in both: the state as ftrace prints it
 * (prev_state=S, R+, ...), from the number ktrace recorded.
 */
#include "ktrace-window.h"

#include <sys/wait.h>

#define TRACEFS		"/sys/kernel/tracing"
#define ATTEMPTS	3
#define MAX_SWITCHES	200000

struct sw {
	uint64_t tsc;
	uint32_t prev, next;
	char state[16];		/* as ftrace prints prev_state */
	int prio;		/* next_prio */
};

/*
 * ftrace's letters for a sched_switch prev_state: TASK_REPORT bits, "R"
 * for none, "+" for TASK_REPORT_MAX (preempted), as Linux 4.14 and later
 * print them (include/trace/events/sched.h).
 */
static void state_letters(char *out, uint32_t state)
{
	static const char letters[] = "SDTtXZPI";
	char *p = out;

	for (int i = 0; i < 8; i++)
		if (state & (1u << i)) {
			if (p != out)
				*p++ = '|';
			*p++ = letters[i];
		}
	if (p == out)
		*p++ = 'R';
	if (state & 0x100)
		*p++ = '+';
	*p = '\0';
}

static int tracefs_write(const char *file, const char *value)
{
	char path[256];
	int fd, rc;

	snprintf(path, sizeof(path), TRACEFS "/%s", file);
	fd = open(path, O_WRONLY | O_TRUNC);
	if (fd < 0)
		return -1;
	rc = write(fd, value, strlen(value)) == (ssize_t)strlen(value) ? 0 : -1;
	close(fd);
	return rc;
}

static void workload(void)
{
	pid_t pids[16];
	int status;

	for (int i = 0; i < 16; i++) {
		pids[i] = fork();
		if (pids[i] == 0) {
			pin_to_cpu(i % nr_cpus_online());
			for (int j = 0; j < 5; j++)
				usleep(500);
			_exit(0);
		}
	}
	for (int i = 0; i < 16; i++)
		waitpid(pids[i], &status, 0);
}

/* ftrace's switches on @cpu inside the window, in order. */
static size_t ftrace_switches(int cpu, const struct window *w, struct sw *out)
{
	char path[128], line[1024];
	size_t nr = 0;
	FILE *f;

	snprintf(path, sizeof(path), TRACEFS "/per_cpu/cpu%d/trace", cpu);
	f = fopen(path, "r");
	while (f && fgets(line, sizeof(line), f) && nr < MAX_SWITCHES) {
		unsigned long long ts;
		char *p = strstr(line, ": sched_switch: "), *q;

		if (!p)
			continue;
		q = p;
		while (q > line && q[-1] != ' ')
			q--;
		if (sscanf(q, "%llu", &ts) != 1 || ts <= w->tsc_begin || ts >= w->tsc_end)
			continue;
		if (sscanf(strstr(p, "prev_pid=") + 9, "%u", &out[nr].prev) == 1 &&
		    sscanf(strstr(p, "prev_state=") + 11, "%15s", out[nr].state) == 1 &&
		    sscanf(strstr(p, "next_pid=") + 9, "%u", &out[nr].next) == 1 &&
		    sscanf(strstr(p, "next_prio=") + 10, "%d", &out[nr].prio) == 1)
			out[nr++].tsc = ts;
	}
	if (f)
		fclose(f);
	return nr;
}

static int overruns(void)
{
	char path[128], line[256];
	unsigned long long n, total = 0;
	FILE *f;

	for (int cpu = 0; cpu < nr_cpus_online(); cpu++) {
		snprintf(path, sizeof(path), TRACEFS "/per_cpu/cpu%d/stats", cpu);
		f = fopen(path, "r");
		while (f && fgets(line, sizeof(line), f))
			if (sscanf(line, "overrun: %llu", &n) == 1)
				total += n;
		if (f)
			fclose(f);
	}
	return total;
}

int main(void)
{
	static struct sw ours[MAX_SWITCHES], theirs[MAX_SWITCHES];
	int attempt, same = 0, checked = 0;
	struct window w;

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (!ok(tracefs_write("trace_clock", "x86-tsc") == 0, "ftrace uses the x86-tsc clock"))
		return done_testing();
	tracefs_write("buffer_size_kb", "4096");
	window_open(&w, 1 << 18);
	pin_to_cpu(0);

	for (attempt = 1; attempt <= ATTEMPTS && !same; attempt++) {
		int cpus_same = 0;
		size_t total = 0;

		tracefs_write("trace", "");
		tracefs_write("events/sched/sched_switch/enable", "1");
		tracefs_write("tracing_on", "1");
		kt_set_mask(w.fd, KTRACE_GRP_sched | KTRACE_GRP_user);
		usleep(10000);
		window_marker(&w, 1);
		workload();
		window_marker(&w, 2);
		kt_set_mask(w.fd, 0);
		tracefs_write("tracing_on", "0");
		window_collect(&w);
		if (!w.tsc_begin || !w.tsc_end || w.lost || overruns()) {
			diag("attempt %d: markers missing or records lost", attempt);
			continue;
		}
		checked++;
		for (int cpu = 0; cpu < w.nr_cpus; cpu++) {
			size_t n_ours = 0, n_theirs = ftrace_switches(cpu, &w, theirs);

			for (struct ktrace_record *r = w.recs[cpu]; r < w.recs[cpu] + w.nr[cpu]; r++) {
				struct sw *o = &ours[n_ours];

				if (r->event != KTRACE_sched_switch || r->tsc <= w.tsc_begin ||
				    r->tsc >= w.tsc_end || n_ours == MAX_SWITCHES)
					continue;
				*o = (struct sw){ r->tsc, r->arg1, r->arg2, "?", -1 };
				/* its continuation record: state and priority */
				if (r + 1 < w.recs[cpu] + w.nr[cpu] &&
				    r[1].event == (KTRACE_EVT_CONT | KTRACE_EVT_END)) {
					state_letters(o->state, r[1].arg1);
					o->prio = (int)r[1].arg2;
				}
				n_ours++;
			}
			size_t i = 0;

			while (i < n_ours && i < n_theirs && ours[i].prev == theirs[i].prev &&
			       ours[i].next == theirs[i].next &&
			       !strcmp(ours[i].state, theirs[i].state) && ours[i].prio == theirs[i].prio)
				i++;
			if (i < n_ours && i < n_theirs)
				diag("cpu %d switch %zu: ktrace %u -> %u state %s prio %d, ftrace %u -> %u "
				     "state %s prio %d", cpu, i, ours[i].prev, ours[i].next, ours[i].state,
				     ours[i].prio, theirs[i].prev, theirs[i].next, theirs[i].state,
				     theirs[i].prio);
			diag("attempt %d cpu %d: ktrace %zu switches, ftrace %zu, same up to %zu",
			     attempt, cpu, n_ours, n_theirs, i);
			cpus_same += i == n_ours && n_ours == n_theirs;
			total += n_ours;
		}
		same = cpus_same == w.nr_cpus && total > 0;
	}
	tracefs_write("events/sched/sched_switch/enable", "0");
	tracefs_write("trace_clock", "local");
	ok(checked > 0, "windows with nothing lost by either tracer");
	ok(same, "every CPU's context switches, with the previous task's state and the next "
	   "one's priority, are the same in ktrace and ftrace");
	window_close(&w);
	return done_testing();
}
