// SPDX-License-Identifier: GPL-2.0
/*
 * session: the main thread's side of a recording, the same for record()
 * and flight(): the signals, the command, -d, and the stop sequence.
 *
 *   session_begin()      signals caught, tracing owned (with -e)
 *   session_run()        the command started, -d's clock started
 *   session_stopped(), session_sleep()   until a signal, -d or the command's end
 *   session_stop()       the command gets the signal that stopped ktrace
 *   ... the caller completes its files ...
 *   session_end()        signals given back, the command waited for: exit status
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ktrace.h"
#include "probe.h"
#include "util.h"

static volatile sig_atomic_t stop_sig, child_changed, snapshot_asked;
static bool flight_mode;		/* --flight: SIGUSR1 takes a snapshot */
/*
 * Signals that stop the recording (passed on to the command): every one
 * whose default would kill ktrace with its mask still set, and SIGCHLD.
 */
static const int handled_signals[] = {
	SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGALRM, SIGCHLD,
};
/* the dispositions ktrace was given, given back to the command */
static struct sigaction orig_actions[ARRAY_SIZE(handled_signals)], orig_sigpipe;

static void on_signal(int sig)
{
	if (sig == SIGCHLD)
		child_changed = 1;
	else if (sig == SIGUSR1 && flight_mode)
		snapshot_asked = 1;
	else
		stop_sig = sig;
}

/*
 * The signals stay blocked except inside ppoll(), so none can slip in
 * between a check of the flags and going to sleep.  *orig gets the mask to
 * sleep with (and to give the command).  Even one that ktrace was started
 * with ignored (`ktrace ... &` ignores SIGINT) stops it: that is how a
 * recording in the background is stopped.  The command gets the
 * dispositions ktrace was given (nohup's ignored SIGHUP stays ignored).
 *
 * SIGPIPE is ignored while recording: `ktrace ... 2>&1 | head -1` must not
 * kill ktrace between setting the mask and putting it back (tracing would
 * stay on); a write to a closed pipe fails with EPIPE instead, which the
 * messages ignore.
 */
static void catch_signals(sigset_t *orig)
{
	struct sigaction sa = { .sa_handler = on_signal };
	struct sigaction ign = { .sa_handler = SIG_IGN };
	sigset_t block;

	sigaction(SIGPIPE, &ign, &orig_sigpipe);
	sigemptyset(&block);
	for (size_t i = 0; i < ARRAY_SIZE(handled_signals); i++)
		sigaddset(&block, handled_signals[i]);
	sigprocmask(SIG_BLOCK, &block, orig);
	for (size_t i = 0; i < ARRAY_SIZE(handled_signals); i++)
		sigaction(handled_signals[i], &sa, &orig_actions[i]);
}

static void release_signals(const sigset_t *orig)
{
	for (size_t i = 0; i < ARRAY_SIZE(handled_signals); i++)
		sigaction(handled_signals[i], &orig_actions[i], NULL);
	sigaction(SIGPIPE, &orig_sigpipe, NULL);
	sigprocmask(SIG_SETMASK, orig, NULL);
}

double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

struct timespec to_timespec(double s)
{
	if (s < 0)
		s = 0;
	return (struct timespec){ (time_t)s, (long)((s - (time_t)s) * 1e9) };
}

/*
 * With probes the child waits, before its exec, for one byte on a pipe:
 * the probes name it (its pid) and must be in before its first
 * instruction; if ktrace dies adding them, the pipe closes without the
 * byte and the command never runs unprobed.
 */
/* BASE.probes beside a recording; --flight writes BASE.N.probes with each snapshot */
static const char *probes_base(const struct session *s)
{
	return s->o->flight ? NULL : s->o->output;
}

static pid_t start_command(struct session *s, char **argv, const sigset_t *orig)
{
	bool hold = s->o->probes != NULL;
	int go[2] = { -1, -1 };
	pid_t pid;

	fflush(NULL);
	if (hold && pipe2(go, O_CLOEXEC) < 0)
		die("pipe: %s", strerror(errno));
	pid = fork();
	if (pid < 0) {
		pr_err("fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		int err;
		char byte;

		release_signals(orig);
		if (hold) {
			close(go[1]);
			while ((err = read(go[0], &byte, 1)) < 0 && errno == EINTR)
				;
			if (err != 1)
				_exit(127);
			close(go[0]);
		}
		execvp(argv[0], argv);
		err = errno;
		/* one write: ktrace's own messages go to the same stderr */
		dprintf(STDERR_FILENO, "ktrace: %s: %s\n", argv[0], strerror(err));
		_exit(err == ENOENT ? 127 : 126);
	}
	pr_debug("started %s, pid %d", argv[0], (int)pid);
	if (hold) {
		close(go[0]);
		probes_add(s->o->probes, s->ctl, s->o->dev, pid, probes_base(s));
		if (write(go[1], "", 1) != 1)
			die("pipe: %s", strerror(errno));
		close(go[1]);
	}
	return pid;
}

static int exit_status(int status)
{
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}

void session_begin(struct session *s, const struct ktrace_opts *o, int ctl, bool own,
		   bool snapshots)
{
	*s = (struct session){ .o = o, .ctl = ctl };
	flight_mode = snapshots;
	catch_signals(&s->orig);
	/* owned from here: tracing off and the buffers empty until the mask is set */
	if (own && dev_session_mask(ctl, o->dev, 0) < 0)
		die("%s: tracing is in use: another ktrace owns it or reads a CPU "
		    "(is another ktrace recording?)", o->dev);
}

bool session_run(struct session *s)
{
	bool ok;

	if (!s->o->command && s->o->probes)
		probes_add(s->o->probes, s->ctl, s->o->dev, 0, probes_base(s));
	ok = !s->o->command || (s->child = start_command(s, s->o->command, &s->orig)) >= 0;

	s->start = now();
	if (s->o->duration)
		s->deadline = s->start + s->o->duration;
	return ok;
}

bool session_stopped(const struct session *s)
{
	return stop_sig || (s->deadline && now() >= s->deadline);
}

bool session_sleep(struct session *s, double wait)
{
	struct timespec ts;

	if (child_changed) {
		child_changed = 0;
		if (s->child > 0 && waitpid(s->child, &s->status, WNOHANG) == s->child) {
			s->child = 0;
			return false;
		}
	}
	if (s->deadline && s->deadline - now() < wait)
		wait = s->deadline - now();
	ts = to_timespec(wait);
	ppoll(NULL, 0, &ts, &s->orig);
	return true;
}

bool session_snapshot_asked(void)
{
	if (!snapshot_asked)
		return false;
	snapshot_asked = 0;
	return true;
}

void session_stop(struct session *s)
{
	if (stop_sig && s->child > 0)
		kill(s->child, stop_sig);
}

int session_end(struct session *s, bool failed)
{
	/* the files are complete: a second ^C may now end ktrace at once */
	release_signals(&s->orig);
	if (s->child > 0) {
		pr_debug("waiting for %s (pid %d) to end", s->o->command[0], (int)s->child);
		while (waitpid(s->child, &s->status, 0) < 0 && errno == EINTR)
			;
	}
	if (failed)
		return 1;
	return s->o->command ? exit_status(s->status) : 0;
}
