// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace-run: run a program with libktrace preloaded, so that its function
 * calls (if it was built with -finstrument-functions) and its TRACE()
 * events are recorded, one file per thread; with -k also the kernel's
 * events, by running it under ktrace.  Then dtrace --calltree DIR/trace.*
 *
 * It only sets up the environment and execs: the exit status is the
 * program's (or ktrace's).
 */
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "ktfile.h"
#include "opts.h"
#include "util.h"

/* The one options table (lib/opts.h), as ktrace's and dtrace's */
static const struct kt_option options[] = {
	{ "output", required_argument, 'o', "DIR",
	  "where the trace files go (default ktrace.data)" },
	{ "buffer", required_argument, 'b', "RECORDS",
	  "ring size per thread, a power of two (default 65536)" },
	{ "kernel", required_argument, 'k', "MASK",
	  "trace the kernel too: ktrace -e MASK -o DIR/trace" },
	{ "drop", no_argument, 'D', NULL,
	  "drop records when a ring is full instead of waiting" },
	{ "help", no_argument, 'h', NULL, "this help" },
	{ "version", no_argument, 'V', NULL, "print the version" },
};

static void usage(FILE *f)
{
	fprintf(f, "usage: ktrace-run [options] [--] COMMAND [ARG]...\n"
		"Run COMMAND with libktrace preloaded: function entries and exits of code\n"
		"built with -finstrument-functions and TRACE() events go to\n"
		"DIR/trace.pid<PID>.tid<TID>, the memory map to DIR/trace.pid<PID>.maps.\n"
		"Then: dtrace --calltree DIR/trace.*\n\n");
	kt_opts_help(f, &(struct kt_opts)KT_OPTS(options, true));
	fprintf(f, "\nEnvironment: KTRACE_LIB names libktrace.so (default: next to ktrace-run,\n"
		"or ../lib).  See ktrace_user.h for the variables the library reads.\n");
}

/* A file next to this program, or in ../lib (an installed tree). */
static char *beside_me(const char *name, const char *libdir_name)
{
	char self[PATH_MAX], path[PATH_MAX + 64];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *dir;

	if (n <= 0)
		return NULL;
	self[n] = '\0';
	dir = dirname(self);
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (access(path, R_OK) == 0)
		return xstrdup(path);
	if (libdir_name) {
		snprintf(path, sizeof(path), "%s/../lib/%s", dir, libdir_name);
		if (access(path, R_OK) == 0)
			return realpath(path, NULL);
	}
	return NULL;
}

static void mkdir_p(const char *dir)
{
	char *p = xstrdup(dir);

	for (char *s = p + 1; ; s++) {
		if (*s && *s != '/')
			continue;
		char c = *s;

		*s = '\0';
		if (mkdir(p, 0755) < 0 && errno != EEXIST)
			die("%s: %s", p, strerror(errno));
		*s = c;
		if (!c)
			break;
	}
	free(p);
}

static void set_env(const char *name, const char *value)
{
	if (setenv(name, value, 1) < 0)
		die("setenv %s: %s", name, strerror(errno));
}

/* The kernel's TSC rate, so that user and kernel files convert alike. */
static uint64_t kernel_tsc_hz(void)
{
	const char *dev = getenv("KTRACE_DEV");
	struct ktrace_info info;
	int fd = open(dev && *dev ? dev : "/dev/ktrace", O_RDONLY | O_CLOEXEC);
	uint64_t hz = 0;

	if (fd >= 0 && ioctl(fd, KTRACE_IOC_INFO, &info) == 0)
		hz = info.tsc_khz * 1000;
	if (fd >= 0)
		close(fd);
	return hz;
}

int main(int argc, char **argv)
{
	struct kt_opts opts = KT_OPTS(options, true);	/* the command's options are its own */
	const char *dir = "ktrace.data", *kernel_mask = NULL, *lib;
	char *preload, *abs_dir, *base, hz[32];
	uint64_t tsc_hz;
	int c;

	util_set_progname(argv[0]);
	while ((c = kt_getopt(&opts, argc, argv)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				kt_usage_error("-o: empty directory name");
			dir = optarg;
			break;
		case 'b': {
			char *end;
			unsigned long n = strtoul(optarg, &end, 0);

			if (*end || n < 1024 || n > (1ul << 24) || (n & (n - 1)))
				kt_usage_error("-b %s: not a power of two from 1024 to 16777216",
					       optarg);
			set_env("KTRACE_USER_BUF", optarg);
			break;
		}
		case 'k':
			kernel_mask = optarg;
			break;
		case 'D':
			set_env("KTRACE_USER_DROP", "1");
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("ktrace-run (ktrace) %s\n", KTRACE_VERSION);
			return 0;
		}
	}
	if (optind == argc)
		kt_usage_error("no command given");

	lib = getenv("KTRACE_LIB");
	if (!lib || !*lib)
		lib = beside_me("libktrace.so.0", "libktrace.so.0");
	if (!lib)
		die("libktrace.so.0 not found next to ktrace-run or in ../lib; set KTRACE_LIB");
	if (access(lib, R_OK) < 0)
		die("%s: %s", lib, strerror(errno));
	mkdir_p(dir);
	abs_dir = realpath(dir, NULL);
	if (!abs_dir)
		die("%s: %s", dir, strerror(errno));
	/* one clock rate for every process of the run: the kernel's, or ours once */
	tsc_hz = kernel_mask ? kernel_tsc_hz() : 0;
	if (!tsc_hz)
		tsc_hz = ktfile_tsc_hz();
	snprintf(hz, sizeof(hz), "%llu", (unsigned long long)tsc_hz);
	set_env("KTRACE_TSC_HZ", hz);
	set_env("KTRACE_USER_DIR", abs_dir);
	if (getenv("LD_PRELOAD") && *getenv("LD_PRELOAD")) {
		preload = xmalloc(strlen(lib) + strlen(getenv("LD_PRELOAD")) + 2);
		sprintf(preload, "%s:%s", lib, getenv("LD_PRELOAD"));
	} else {
		preload = xstrdup(lib);
	}
	set_env("LD_PRELOAD", preload);

	if (kernel_mask) {
		char *ktrace = beside_me("ktrace", NULL);
		char **args = xcalloc(argc + 8, sizeof(*args));
		int n = 0;

		base = xmalloc(strlen(abs_dir) + 8);
		sprintf(base, "%s/trace", abs_dir);
		args[n++] = ktrace ? ktrace : "ktrace";
		args[n++] = "-e";
		args[n++] = (char *)kernel_mask;
		args[n++] = "-o";
		args[n++] = base;
		args[n++] = "--";
		for (int i = optind; i < argc; i++)
			args[n++] = argv[i];
		execvp(args[0], args);
		die("%s: %s", args[0], strerror(errno));
	}
	execvp(argv[optind], argv + optind);
	c = errno;
	pr_err("%s: %s", argv[optind], strerror(c));
	return c == ENOENT ? 127 : 126;
}
