// SPDX-License-Identifier: GPL-2.0
/*
 * opts: one table-driven option parser for the ktrace tools (see opts.h).
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "opts.h"
#include "util.h"

static void make_tables(struct kt_opts *o)
{
	char *s;

	o->longopts = xcalloc(o->nr + 1, sizeof(*o->longopts));
	/* "+:" then up to "c:" per option */
	o->shortopts = s = xmalloc(2 * o->nr + 3);
	if (o->stop_at_operand)
		*s++ = '+';
	*s++ = ':';		/* a missing argument returns ':' */
	for (unsigned int i = 0; i < o->nr; i++) {
		const struct kt_option *t = &o->table[i];

		o->longopts[i] = (struct option){ t->name, t->has_arg, NULL, t->val };
		/* an alias of a long name has the short letter of its option */
		if (t->val > 0 && t->val < 256 && !memchr(o->shortopts, t->val, s - o->shortopts)) {
			*s++ = t->val;
			if (t->has_arg == required_argument)
				*s++ = ':';
		}
	}
	*s = '\0';
}

void kt_usage_error(const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pr_err("%s (%s -h for help)", msg, progname);
	exit(KT_USAGE_EXIT);
}

int kt_getopt(struct kt_opts *o, int argc, char **argv)
{
	int c;

	if (!o->longopts)
		make_tables(o);
	opterr = 0;		/* getopt's messages would not start with the tool's name */
	c = getopt_long(argc, argv, o->shortopts, o->longopts, NULL);
	if (c == -1) {
		free(o->longopts);
		free(o->shortopts);
		o->longopts = NULL;
		o->shortopts = NULL;
		return -1;
	}
	if (c == ':')
		kt_usage_error("option '%s' needs an argument", argv[optind - 1]);
	if (c == '?') {
		if (optopt > 0 && optopt < 256)
			kt_usage_error("unknown option '-%c'", optopt);
		kt_usage_error("unknown option '%s'", argv[optind - 1]);
	}
	return c;
}

void kt_opts_help(FILE *f, const struct kt_opts *o)
{
	for (unsigned int i = 0; i < o->nr; i++) {
		const struct kt_option *t = &o->table[i];
		const char *help = t->help;
		char head[48];

		if (!help)		/* a hidden alias */
			continue;
		if (t->val > 0 && t->val < 256)
			snprintf(head, sizeof(head), "-%c, --%s%s%s", t->val, t->name,
				 t->arg ? "=" : "", t->arg ? t->arg : "");
		else
			snprintf(head, sizeof(head), "    --%s%s%s", t->name,
				 t->arg ? "=" : "", t->arg ? t->arg : "");
		fprintf(f, "  %-24s", head);
		/* continuation lines of the help text line up under its start */
		while (help) {
			const char *nl = strchr(help, '\n');

			fprintf(f, "%s%.*s\n", strlen(head) >= 24 && help == t->help ? " " : "",
				nl ? (int)(nl - help) : (int)strlen(help), help);
			help = nl ? nl + 1 : NULL;
			if (help)
				fprintf(f, "  %-24s", "");
		}
	}
}

void kt_usage(FILE *f, const struct kt_opts *o, const char *tool, const char *args,
	      const char *about, const char *trailer)
{
	fprintf(f, "Usage: %s %s\n%s\nOptions:\n", tool, args, about);
	kt_opts_help(f, o);
	fprintf(f, "\n%sSee %s(1).\n", trailer ? trailer : "", tool);
}
