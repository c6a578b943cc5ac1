/* SPDX-License-Identifier: GPL-2.0 */
/*
 * pager: a tool's long output to a terminal goes through a pager, as git's
 * and perf's do; output to a pipe or a file never does.
 *
 * The pager is $KTRACE_PAGER, else $PAGER, else less (with LESS=FRX when
 * LESS is not set: quit at once if the output fits the screen, colours
 * as they are, no clearing of the screen).  An empty value or "cat" means
 * none.  A plain command name is run directly, anything with spaces or
 * shell syntax by "sh -c".  A set-id process runs none.
 *
 * The tool writes to standard output as usual; at exit it waits for the
 * pager.  When the user quits the pager before the end, the next write
 * fails (SIGPIPE, EPIPE) and the tool exits 0 without a message, as git
 * does: the user asked for no more.
 */
#ifndef KT_PAGER_H
#define KT_PAGER_H

#include <stdbool.h>

/*
 * Start the pager if standard output is a terminal, and point standard
 * output (and standard error, if it is a terminal too) at it.  Call it
 * before any thread starts and before anything is written to stdout.
 * Returns whether a pager runs; when it cannot be started, warns and
 * leaves standard output as it was.
 */
bool kt_pager_start(void);

/*
 * The end of the output: flush, give standard output and error back to
 * the terminal and wait for the pager to exit.  Also run at exit.
 */
void kt_pager_finish(void);

/*
 * A write to standard output failed with @err: if it is EPIPE and a pager
 * runs, the user quit the pager: wait for it and exit 0.  Returns otherwise.
 */
void kt_pager_write_failed(int err);

#endif /* KT_PAGER_H */
