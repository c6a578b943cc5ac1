// SPDX-License-Identifier: GPL-2.0
/*
 * KTRACE_IOC_NAME_TASKS against /proc: with a mask that leaves the thread
 * group out, the ioctl writes one thread:name event per task into the
 * calling CPU's buffer, each with the tid, tgid and comm /proc shows for
 * it (for a kernel thread, the start of it: /proc adds the workqueue), and
 * returns how many; a fork under that mask names nobody (the mask
 * is obeyed everywhere else); bad arguments get -EINVAL, tracing off 0.
 */
#include "ktest.h"

#include <dirent.h>

#define CPU	1

struct proc_task {
	int tid, tgid;
	char comm[17];
	int named;		/* thread:name records seen for it */
	int user;		/* not a kernel thread: /proc's comm is the comm */
};

static struct proc_task tasks[4096];
static int nr_tasks;

static int read_line(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	int ok = f && fgets(buf, size, f);

	if (f)
		fclose(f);
	if (ok)
		buf[strcspn(buf, "\n")] = '\0';
	return ok ? 0 : -1;
}

/* Every thread /proc lists now, with its tgid and comm. */
static void list_tasks(void)
{
	DIR *proc = opendir("/proc"), *task;
	struct dirent *p, *t;
	char path[600], line[64];

	nr_tasks = 0;
	while (proc && (p = readdir(proc))) {
		if (p->d_name[0] < '1' || p->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/task", p->d_name);
		task = opendir(path);
		while (task && (t = readdir(task)) && nr_tasks < 4096) {
			struct proc_task *pt = &tasks[nr_tasks];

			if (t->d_name[0] < '1' || t->d_name[0] > '9')
				continue;
			snprintf(path, sizeof(path), "/proc/%s/task/%s/comm", p->d_name, t->d_name);
			if (read_line(path, pt->comm, sizeof(pt->comm)))
				continue;
			pt->tid = atoi(t->d_name);
			/* a kernel thread has no command line */
			snprintf(path, sizeof(path), "/proc/%s/cmdline", p->d_name);
			pt->user = !read_line(path, line, sizeof(line)) && line[0];
			pt->tgid = atoi(p->d_name);
			pt->named = 0;
			nr_tasks++;
		}
		if (task)
			closedir(task);
	}
	if (proc)
		closedir(proc);
}

static int name_tasks(int fd, uint32_t flags, uint32_t reserved)
{
	struct ktrace_name_tasks nt = { .flags = flags, .reserved = reserved };

	return ioctl(fd, KTRACE_IOC_NAME_TASKS, &nt);
}

/* thread:name events in @recs; each one's task in tasks[] counted, or *strays */
static int count_names(const struct ktrace_record *recs, size_t nr, int *strays, int *bad)
{
	int names = 0;

	for (size_t i = 0; i < nr; i++) {
		char comm[17] = "";
		int found = 0;

		if (recs[i].event != KTRACE_thread_name)
			continue;
		names++;
		if (i + 2 >= nr || recs[i + 1].event != KTRACE_EVT_CONT ||
		    recs[i + 2].event != (KTRACE_EVT_CONT | KTRACE_EVT_END | 1 << KTRACE_SUB_SHIFT)) {
			(*bad)++;
			continue;
		}
		memcpy(comm, &recs[i + 1].arg1, 4);
		memcpy(comm + 4, &recs[i + 1].arg2, 4);
		memcpy(comm + 8, &recs[i + 2].arg1, 4);
		memcpy(comm + 12, &recs[i + 2].arg2, 4);
		for (int t = 0; t < nr_tasks; t++) {
			if (tasks[t].tid != (int)recs[i].arg1)
				continue;
			found = 1;
			/* /proc adds to a kernel thread's comm: "kworker/0:1-events" */
			if (tasks[t].tgid == (int)recs[i].arg2 && comm[0] &&
			    !strncmp(tasks[t].comm, comm, strlen(comm)) &&
			    (!tasks[t].user || !strcmp(tasks[t].comm, comm)))
				tasks[t].named++;
			else
				(*bad)++;
		}
		if (!found)
			(*strays)++;
	}
	return names;
}

int main(void)
{
	struct ktrace_record *recs = NULL;
	size_t cap = 0, nr;
	int fd, rfd, ret, names, strays = 0, bad = 0, once = 0, gone = 0, status;
	pid_t child;

	setvbuf(stdout, NULL, _IOLBF, 0);
	fd = kt_open(O_RDWR);
	kt_set_mask(fd, 0);
	is_errno(name_tasks(fd, 1, 0), EINVAL, "NAME_TASKS with flags");
	is_errno(name_tasks(fd, 0, 1), EINVAL, "NAME_TASKS with reserved set");
	ok(name_tasks(fd, 0, 0) == 0, "NAME_TASKS while tracing is off: 0 named");

	pin_to_cpu(CPU);
	rfd = kt_open(O_RDWR | O_NONBLOCK);
	if (kt_attach(rfd, CPU))
		bail("attach");
	kt_drain(rfd, &recs, &cap, 0);
	ok(kt_set_mask(fd, KTRACE_GRP_user) == 0, "tracing on, thread group off");

	list_tasks();
	ret = name_tasks(fd, 0, 0);
	nr = kt_drain(rfd, &recs, &cap, 0);
	names = count_names(recs, nr, &strays, &bad);
	for (int t = 0; t < nr_tasks; t++) {
		char path[64];

		snprintf(path, sizeof(path), "/proc/%d", tasks[t].tid);
		if (tasks[t].named == 1)
			once++;
		else if (!tasks[t].named && access(path, F_OK))
			gone++;		/* it exited in between */
	}
	ok(ret > 0 && names == ret, "NAME_TASKS: returns %d, %d thread:name events on its CPU",
	   ret, names);
	ok(once + gone == nr_tasks && once > 0 && !bad,
	   "every task of /proc named once, with its tgid and comm (%d of %d, %d gone; %d wrong)",
	   once, nr_tasks, gone, bad);
	diag("%d named tasks /proc did not list (kernel threads come and go)", strays);

	child = fork();
	if (!child)
		_exit(0);
	waitpid(child, &status, 0);
	nr = kt_drain(rfd, &recs, &cap, 0);
	strays = bad = 0;
	names = count_names(recs, nr, &strays, &bad);
	ok(names == 0, "a fork under a mask without the thread group names nobody (%d)", names);

	kt_set_mask(fd, 0);
	free(recs);
	return done_testing();
}
