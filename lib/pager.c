// SPDX-License-Identifier: GPL-2.0
/*
 * pager: long output to a terminal through a pager (see pager.h).
 *
 * The pager is a child reading a pipe that becomes our standard output.
 * Whether its exec worked is told by a second pipe, close-on-exec: a
 * successful exec closes it (we read EOF), a failed one writes errno to it.
 * So a pager that does not exist is a warning and the output goes to the
 * terminal directly, complete, rather than into a pipe nobody reads.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pager.h"
#include "util.h"

/*
 * One pager per process.  Global because the signal handlers and the
 * atexit() handler, which get no argument, need it.
 */
static const int pager_signals[] = { SIGPIPE, SIGINT, SIGQUIT, SIGTERM, SIGHUP };

static struct {
	pid_t pid;		/* the pager, 0 when none runs */
	int tty_out;		/* standard output before the pager, to give back */
	int tty_err;		/* standard error before, -1 if it stayed as it was */
	struct sigaction old[ARRAY_SIZE(pager_signals)];	/* put back at the end */
} pager = { .tty_out = -1, .tty_err = -1 };

/* A shell command rather than a program's name: spaces, quotes, redirections... */
static bool needs_shell(const char *cmd)
{
	return cmd[strcspn(cmd, " \t\n\"'\\$`|&;<>()*?[]{}~#=%!")] != '\0';
}

static const char *pager_command(void)
{
	const char *cmd = getenv("KTRACE_PAGER");

	/* set, even empty, it decides: KTRACE_PAGER= turns the pager off */
	if (!cmd)
		cmd = getenv("PAGER");
	if (!cmd)
		cmd = "less";
	if (!*cmd || !strcmp(cmd, "cat"))
		return NULL;
	return cmd;
}

/* Our standard output and error go back to the terminal: the pager sees EOF. */
static void give_back_terminal(void)
{
	if (pager.tty_out >= 0)
		dup2(pager.tty_out, STDOUT_FILENO);
	if (pager.tty_err >= 0)
		dup2(pager.tty_err, STDERR_FILENO);
}

static void wait_pager(void)
{
	while (pager.pid > 0 && waitpid(pager.pid, NULL, 0) < 0 && errno == EINTR)
		;
}

/* SIGPIPE: the user quit the pager; what is left to write, nobody wants. */
static void pager_quit(int sig)
{
	give_back_terminal();
	wait_pager();
	_exit(0);
}

/*
 * A signal that ends us (^C reaches the pager too, which stays): the pager
 * gets EOF and keeps the terminal until the user quits it, then we die of
 * the signal; otherwise the shell would take the terminal back from under
 * the pager.
 */
static void pager_killed(int sig)
{
	struct sigaction dfl = { .sa_handler = SIG_DFL };

	give_back_terminal();
	wait_pager();
	sigaction(sig, &dfl, NULL);
	raise(sig);
}

static void exec_pager(const char *cmd, int data, int status)
{
	int err;

	/* dup2() clears close-on-exec, but not when the pipe already is fd 0 */
	if (data == STDIN_FILENO ? fcntl(data, F_SETFD, 0) < 0 : dup2(data, STDIN_FILENO) < 0)
		goto fail;
	/* quit if it fits, colours as they are, leave the screen alone (as git) */
	if (!getenv("LESS"))
		setenv("LESS", "FRX", 1);
	if (needs_shell(cmd))
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
	else
		execlp(cmd, cmd, (char *)NULL);
fail:
	err = errno;
	if (write(status, &err, sizeof(err)) < 0)
		_exit(126);
	_exit(127);
}

bool kt_pager_start(void)
{
	struct sigaction sa = { .sa_handler = pager_killed };
	int data[2], status[2], err;
	const char *cmd;
	ssize_t n;

	/* set-id: the caller's environment must not choose what we run */
	if (pager.pid || !isatty(STDOUT_FILENO) || getauxval(AT_SECURE))
		return false;
	cmd = pager_command();
	if (!cmd)
		return false;
	if (pipe2(data, O_CLOEXEC) < 0 || pipe2(status, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	fflush(NULL);
	pager.pid = fork();
	if (pager.pid < 0)
		die("fork: %s", strerror(errno));
	if (pager.pid == 0) {
		close(data[1]);
		close(status[0]);
		exec_pager(cmd, data[0], status[1]);
	}
	close(data[0]);
	close(status[1]);
	do
		n = read(status[0], &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(status[0]);
	if (n > 0) {
		/* no pager: the output goes to the terminal as it would without one */
		close(data[1]);
		wait_pager();
		pager.pid = 0;
		pr_warn("cannot run pager '%s': %s", cmd, strerror(err));
		return false;
	}

	pager.tty_out = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 3);
	if (pager.tty_out < 0 || dup2(data[1], STDOUT_FILENO) < 0)
		die("pager: %s", strerror(errno));
	/* messages too, where they would have gone to the terminal: the pager's
	 * screen would hide them or they would break it */
	if (isatty(STDERR_FILENO)) {
		pager.tty_err = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
		if (pager.tty_err >= 0 && dup2(data[1], STDERR_FILENO) < 0)
			die("pager: %s", strerror(errno));
	}
	close(data[1]);

	for (unsigned int i = 0; i < ARRAY_SIZE(pager_signals); i++) {
		sa.sa_handler = pager_signals[i] == SIGPIPE ? pager_quit : pager_killed;
		sigaction(pager_signals[i], &sa, &pager.old[i]);
	}
	atexit(kt_pager_finish);
	return true;
}

void kt_pager_finish(void)
{
	struct sigaction ign = { .sa_handler = SIG_IGN };

	if (!pager.pid)
		return;
	fflush(stdout);		/* a quit pager: SIGPIPE, exit 0 */
	fflush(stderr);
	/* the work is done; ^C now is for the pager only */
	sigaction(SIGINT, &ign, NULL);
	sigaction(SIGQUIT, &ign, NULL);
	give_back_terminal();
	wait_pager();
	pager.pid = 0;
	for (unsigned int i = 0; i < ARRAY_SIZE(pager_signals); i++)
		sigaction(pager_signals[i], &pager.old[i], NULL);
}

void kt_pager_write_failed(int err)
{
	if (err == EPIPE && pager.pid)
		pager_quit(SIGPIPE);
}
