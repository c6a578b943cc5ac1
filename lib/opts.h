/* SPDX-License-Identifier: GPL-2.0 */
/*
 * opts: the one options table of ktrace, dtrace and ktrace-run.  Each tool
 * describes its options once, in a table; getopt_long's tables, --help's
 * list and the usage errors are made from it, alike in the three tools:
 * a usage error says "TOOL: what is wrong (TOOL -h for help)" and exits
 * with KT_USAGE_EXIT, and --help has one layout (kt_usage()).
 *
 * An entry without help text is a hidden alias: an old spelling kept
 * working (dtrace --cpus for --cpu), accepted but not listed.
 *
 *	static const struct kt_option options[] = {
 *		{ "output", required_argument, 'o', "FILE", "write to FILE" },
 *		{ "tsc",    no_argument,  OPT_TSC,  NULL,   "raw time stamps" },
 *	};
 *	struct kt_opts o = KT_OPTS(options, false);
 *
 *	while ((c = kt_getopt(&o, argc, argv)) != -1)
 *		switch (c) { case 'o': ... optarg ... }
 */
#ifndef KT_OPTS_H
#define KT_OPTS_H

#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>

#define KT_USAGE_EXIT	2

/* One option; @val below 256 is also its short option. */
struct kt_option {
	const char *name;	/* --name */
	int has_arg;		/* no_argument or required_argument */
	int val;		/* what kt_getopt() returns for it */
	const char *arg;	/* the argument's name in --help, NULL if none */
	const char *help;	/* what it does; '\n' starts another line; NULL: hidden */
};

struct kt_opts {
	const struct kt_option *table;
	unsigned int nr;
	bool stop_at_operand;	/* options end at the first operand (a command follows) */
	struct option *longopts;	/* made by the first kt_getopt() */
	char *shortopts;
};

#define KT_OPTS(table, stop)	{ (table), sizeof(table) / sizeof((table)[0]), (stop), NULL, NULL }

/*
 * The next option (its val; optarg as getopt's), or -1 after the last one
 * (optind is the first operand).  An unknown option or a missing argument
 * is a usage error.
 */
int kt_getopt(struct kt_opts *o, int argc, char **argv);

/* The options' lines for --help: "  -o, --output=FILE      write to FILE". */
void kt_opts_help(FILE *f, const struct kt_opts *o);

/*
 * --help, alike in every tool:
 *
 *	Usage: TOOL ARGS
 *	ABOUT (lines, each ending in '\n')
 *
 *	Options:
 *	  -o, --output=FILE       ...
 *
 *	TRAILER (environment...; may be NULL)
 *	See TOOL(1).
 */
void kt_usage(FILE *f, const struct kt_opts *o, const char *tool, const char *args,
	      const char *about, const char *trailer);

/*
 * --version, alike in every tool: "TOOL (ktrace) VERSION".  A macro so that
 * the string is a literal in each binary: make install recognises ktrace's
 * dtrace by it (scripts/install-dtrace-check.sh).
 */
#define kt_version(tool)	fputs(tool " (ktrace) " KTRACE_VERSION "\n", stdout)

/* "TOOL: <message> (TOOL -h for help)" on stderr, exit KT_USAGE_EXIT. */
void kt_usage_error(const char *fmt, ...) __attribute__((format(printf, 1, 2), noreturn));

#endif /* KT_OPTS_H */
