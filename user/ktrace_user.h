/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * libktrace: trace events and function calls of a user program into ktrace
 * trace files, on the same clock (the TSC) as the kernel's records, so that
 * dtrace shows both on one timeline.
 *
 *	#include <ktrace_user.h>		(pkg-config --cflags --libs libktrace)
 *
 *	KTRACE_USER_NAME(REQ_START, "req_start", "request %u, %u bytes");
 *	TRACE(REQ_START, id, len);
 *
 * Each thread records into a buffer of its own, without locks or system
 * calls; every thread's records go to a file of its own,
 * $KTRACE_USER_DIR/trace.pid<PID>.tid<TID>, in the ktrace trace file
 * format, and the process's memory map and build ids to
 * $KTRACE_USER_DIR/trace.pid<PID>.maps so that dtrace can put names on
 * addresses after the process is gone.  A program compiled with
 * -finstrument-functions and linked with (or LD_PRELOADed with)
 * libktrace.so has every function entry and exit recorded (the func group).
 *
 * Under ktrace-run(1) the buffers are shared memory that ktrace-run drains
 * from outside the program: every event recorded is in the trace however
 * the process ends (exit, _exit, exec, abort, a crash, SIGKILL), and the
 * library adds no thread, file descriptor or signal handler to the program.
 * Run without ktrace-run, a program records only if KTRACE_USER_DIR is
 * set, then with a writer thread of its own ("standalone": what it had not
 * written yet is lost on _exit, exec, SIGKILL and crashes; see
 * libktrace(3)); otherwise it records nothing.  A setuid or setcap program
 * records only when run by root.
 *
 * Environment (read once, when a process records its first event; from
 * /proc/self/environ if that is before the C library has set environ, in a
 * function of .preinit_array):
 *   KTRACE_USER_DIR   output directory, created (0700) if missing; it must
 *                     be the user's (or root's) and not writable by others
 *   KTRACE_USER_BUF   buffer size per thread in records, a power of two,
 *                     1024 to 16777216 (65536 = 1.5 MiB)
 *   KTRACE_USER_DROP  1: when a buffer is full, drop records (counted,
 *                     and marked in the file) instead of waiting for the
 *                     writer
 *   KTRACE_TSC_HZ     TSC frequency (1 MHz to 100 GHz), skips the 15 ms calibration
 *                     (ktrace-run passes it on to the processes it runs)
 *   KTRACE_RUN_RINGS  set by ktrace-run: its ring directory
 */
#ifndef KTRACE_USER_H
#define KTRACE_USER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * Record user event @sub (1-255: the program chooses what each means) with
 * two 32-bit arguments.  Safe in signal handlers; one rdtsc and some 25
 * instructions.
 */
void ktrace_user_event(unsigned int sub, uint32_t arg1, uint32_t arg2);

/*
 * Give user event @sub a name and a print format (arguments as in the
 * event table: %u %d %x for one argument), saved with the process's map so
 * that dtrace prints "user:req_start request 12, 512 bytes".  Returns 0 or
 * -1 (bad @sub or name).
 */
int ktrace_user_name(unsigned int sub, const char *name, const char *format);

/*
 * Write everything recorded so far, by every thread, and the memory map
 * (under ktrace-run: wait until ktrace-run has).  Standalone, call it
 * before exec.  Returns 0 or -1 if a file could not be written.
 */
int ktrace_user_flush(void);

/*
 * The calling thread's call path, as the -finstrument-functions hooks
 * keep it while the thread records (from its own code or a signal or
 * crash handler): up to @max function addresses, innermost first (the
 * function that calls this), NULL for a frame not kept (the outermost 64
 * and the innermost 256 are).  Returns the call depth (main at depth 1 when
 * main is the outermost instrumented function), or -1 if the thread
 * records no calls (tracing off, or no instrumented call yet).
 * Async-signal-safe.
 */
int ktrace_user_stack(void **fns, int max);

/*
 * Write the call path to @fd as one line, outermost first, each function
 * after as many dashes as its depth: "main - parse -- expr --- term".
 * Names come from the table ktrace_user_stack_symbols() made, else the
 * addresses in hex.  Async-signal-safe (write() alone).  Returns the
 * depth, or -1 (no call path, or write failed).
 */
int ktrace_user_stack_print(int fd);

/*
 * Read the function names of the program and its loaded libraries (their
 * ELF symbol tables) for ktrace_user_stack_print(): call it before the
 * handler may run (not async-signal-safe), again after dlopen().
 * Returns how many names, or -1.
 */
int ktrace_user_stack_symbols(void);

#ifndef TRACE
#define TRACE(sub, a1, a2)	ktrace_user_event((sub), (a1), (a2))
#endif
#define KTRACE_USER_NAME(sub, name, format)	ktrace_user_name((sub), (name), (format))

#ifdef __cplusplus
}
#endif

#endif /* KTRACE_USER_H */
