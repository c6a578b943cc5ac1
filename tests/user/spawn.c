// SPDX-License-Identifier: GPL-2.0
/*
 * spawn: children started with an environment of the program's own, and
 * by vfork(), for tests/host/83-user-spawn.sh.  Built with
 * -finstrument-functions.  Each process prints "PID FUNCTION CALLS" for
 * the functions it called (the ground truth), and its environment
 * ("parent-env", "child-env" lines).
 *
 *   spawn leaf N          leaf() N times
 *   spawn posix_spawn N   posix_spawn() of "spawn leaf N" with envp
 *                         {"PATH=/usr/bin:/bin", NULL}; waits for it
 *   spawn execve N        fork(), and the child execve()s "spawn leaf N"
 *                         with that envp
 *   spawn vfork N         vfork(); the child calls in_child() N times and
 *                         execve()s "spawn leaf N" (its environment); the
 *                         parent calls in_parent() N times after
 *   spawn thread-exec N   a second thread execve()s "spawn leaf N" while
 *                         main waits in pthread_join() (uftrace's
 *                         s-thread-exec shape)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;
static volatile int sink;

void leaf(void)
{
	sink++;
}

void in_child(void)
{
	sink++;
}

void in_parent(void)
{
	sink++;
}

static char **exec_argv;

void *exec_thread(void *arg)
{
	execve(exec_argv[0], exec_argv, environ);
	return arg;
}

static int wait_for(pid_t pid)
{
	int status;

	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return 1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int main(int argc, char **argv)
{
	char *own_env[] = { "PATH=/usr/bin:/bin", NULL };
	char *child[] = { argv[0], "leaf", argc > 2 ? argv[2] : "10", NULL };
	int n = argc > 2 ? atoi(argv[2]) : 10;
	pid_t pid;

	if (argc < 2)
		return 2;
	if (!strcmp(argv[1], "leaf")) {
		for (int i = 0; i < n; i++)
			leaf();
		printf("%d leaf %d\n", (int)getpid(), n);
		for (char **e = environ; *e; e++)
			printf("child-env %s\n", *e);
		return 0;
	}
	for (char **e = environ; *e; e++)
		printf("parent-env %s\n", *e);
	fflush(stdout);
	if (!strcmp(argv[1], "posix_spawn")) {
		if (posix_spawn(&pid, argv[0], NULL, NULL, child, own_env))
			return 1;
		return wait_for(pid);
	}
	if (!strcmp(argv[1], "execve")) {
		pid = fork();
		if (pid == 0) {
			execve(argv[0], child, own_env);
			_exit(127);
		}
		return wait_for(pid);
	}
	if (!strcmp(argv[1], "thread-exec")) {
		pthread_t t;

		exec_argv = child;
		if (pthread_create(&t, NULL, exec_thread, NULL))
			return 1;
		pthread_join(t, NULL);
		return 1;	/* the exec failed */
	}
	if (!strcmp(argv[1], "vfork")) {
		pid = vfork();
		if (pid == 0) {
			for (int i = 0; i < n; i++)
				in_child();
			execve(argv[0], child, environ);
			_exit(127);
		}
		for (int i = 0; i < n; i++)
			in_parent();
		printf("%d in_parent %d\n", (int)getpid(), n);
		return wait_for(pid);
	}
	return 2;
}
