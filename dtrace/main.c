// SPDX-License-Identifier: GPL-2.0
/*
 * dtrace: merge ktrace trace files by time stamp and print the events.
 *
 * This file has the options; run.c the loop that merges (lib/merge.c) and
 * filters the events for the output format (struct dtrace_format):
 *
 *   text.c                  one line per event (the default)
 *   summary.c               -S
 *   calltree.c, flat.c,     --calltree, --flat, --callgraph, --folded,
 *   callgraph.c, folded.c,  --stacks, --stack-budget: user threads' calls,
 *   stacks.c                kept by calls.c, named by symbols.c
 *   ctf.c, perfetto.c       --format=ctf, --format=perfetto (fields.c names
 *                           the events' arguments)
 *
 * pipeline.c runs the text format on worker threads; out.c buffers output.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calls.h"
#include "dtrace.h"
#include "ksyms.h"
#include "opts.h"
#include "pager.h"
#include "util.h"

#define MAX_CPUS	65536

enum {
	OPT_FROM = 256,
	OPT_TO,
	OPT_TSC,
	OPT_ABSOLUTE,
	OPT_CALLTREE,
	OPT_CALLGRAPH,
	OPT_FLAT,
	OPT_FOLDED,
	OPT_FOLDED_TIME,
	OPT_STACKS,
	OPT_STACK_BUDGET,
	OPT_SITES,
	OPT_FORMAT,
	OPT_RAW,
	OPT_KALLSYMS,
	OPT_IRQS,
	OPT_NO_PAGER,
};

/* The one options table (lib/opts.h): getopt's tables and --help are made from it. */
static const struct kt_option options[] = {
	{ "events", required_argument, 'e', "MASK",
	  "groups to show: names, numbers, all; +grp/-grp change all" },
	{ "cpu", required_argument, 'c', "CPUS",
	  "CPUs to show: 0-3,6 (user streams are left out)" },
	{ "cpus", required_argument, 'c', "CPUS", NULL },	/* old spelling: hidden */
	{ "pid", required_argument, 'p', "PIDS",
	  "processes to show (all their threads): 42,100-200" },
	{ "tid", required_argument, 't', "TIDS", "thread ids to show: 42,100-200" },
	{ "tids", required_argument, 't', "TIDS", NULL },	/* old spelling: hidden */
	{ "from", required_argument, OPT_FROM, "TIME",
	  "start at TIME after the first event (us; or 10ns 5us 2ms 1s)" },
	{ "to", required_argument, OPT_TO, "TIME",
	  "stop at TIME after the first event" },
	{ "summary", no_argument, 'S', NULL,
	  "counts per event and CPU, lost records, time span, rate" },
	{ "calltree", no_argument, OPT_CALLTREE, NULL,
	  "user threads' function calls, indented, with durations" },
	{ "callgraph", no_argument, OPT_CALLGRAPH, NULL,
	  "the calls as a Graphviz graph: counts and times on the edges" },
	{ "flat", no_argument, OPT_FLAT, NULL,
	  "per function: calls, total and self time" },
	{ "folded", no_argument, OPT_FOLDED, NULL,
	  "folded stacks for flame graphs (flamegraph.pl, speedscope):\n"
	  "one line per call path, weighed by its calls" },
	{ "folded-time", no_argument, OPT_FOLDED_TIME, NULL,
	  "the same, weighed by self time in ns" },
	{ "stacks", no_argument, OPT_STACKS, NULL,
	  "each user thread's call path at its last record (after a crash, a kill)" },
	{ "stack-budget", no_argument, OPT_STACK_BUDGET, NULL,
	  "per thread: the deepest call path, the one using the most stack (bytes)" },
	{ "sites", no_argument, OPT_SITES, NULL,
	  "with --calltree: where each call is, inlined functions too" },
	{ "format", required_argument, OPT_FORMAT, "FMT",
	  "text; ctf (-o DIR: CTF 1.8 for babeltrace2, Trace Compass); perfetto (JSON)" },
	{ "raw", no_argument, OPT_RAW, NULL,
	  "numbers, not names: thread ids, syscall, errno, signal, symbol numbers" },
	{ "kallsyms", required_argument, OPT_KALLSYMS, "FILE",
	  "kernel symbols (default: BASE.kallsyms beside BASE.cpuN)" },
	{ "irqs", required_argument, OPT_IRQS, "FILE",
	  "irq names, /proc/interrupts (default: BASE.irqs beside BASE.cpuN)" },
	{ "tsc", no_argument, OPT_TSC, NULL, "raw time stamps" },
	{ "absolute", no_argument, OPT_ABSOLUTE, NULL,
	  "wall clock time (local) from the files' reference" },
	{ "output", required_argument, 'o', "FILE", "write to FILE" },
	{ "no-pager", no_argument, OPT_NO_PAGER, NULL,
	  "no pager, also when writing to a terminal" },
	{ "force", no_argument, 'f', NULL,
	  "merge files of different boots or hosts, keep what is valid of bad files" },
	{ "jobs", required_argument, 'j', "N",
	  "format on N threads (default: one per idle CPU but one, up to 4; 1: none)" },
	{ "list", no_argument, 'l', NULL, "list groups and events" },
	{ "help", no_argument, 'h', NULL, "show this help and exit" },
	{ "version", no_argument, 'V', NULL, "show the version and exit" },
};

static void usage(FILE *f)
{
	kt_usage(f, &(struct kt_opts)KT_OPTS(options, false), "dtrace",
		 "[OPTION]... FILE...",
		 "Merge ktrace trace files (BASE.cpuN, user streams) by time and print one\n"
		 "line per event: CPU, time in us after the first event, task\n"
		 "(comm-tid), group:event, text.\n",
		 "Output to a terminal goes through a pager: $KTRACE_PAGER, else $PAGER,\n"
		 "else less (LESS=FRX if LESS is not set); empty or cat: none.\n");
}

/* "12", "1.5ms", "250ns": nanoseconds; a plain number is microseconds. */
static uint64_t parse_time(const char *opt, const char *s)
{
	static const struct { const char *unit; uint64_t ns; } units[] = {
		{ "ns", 1 }, { "us", 1000 }, { "", 1000 }, { "ms", 1000000 },
		{ "s", 1000000000 },
	};
	uint64_t whole = 0, frac = 0, scale = 1;
	const char *p = s;

	if (*p < '0' || *p > '9')
		goto bad;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (whole > UINT64_MAX / 10 / 1000000000)
			goto bad;
		whole = whole * 10 + (*p - '0');
	}
	if (*p == '.')
		for (p++; *p >= '0' && *p <= '9'; p++)
			if (scale < 1000000000) {
				frac = frac * 10 + (*p - '0');
				scale *= 10;
			}
	for (unsigned int i = 0; i < ARRAY_SIZE(units); i++)
		if (!strcmp(p, units[i].unit))
			return whole * units[i].ns + frac * units[i].ns / scale;
bad:
	kt_usage_error("bad time '%s' for %s: a number of us, or with ns, us, ms or s", s, opt);
}

static unsigned int parse_jobs(const char *s)
{
	char *end;
	unsigned long n = strtoul(s, &end, 10);

	if (*s < '0' || *s > '9' || *end || n < 1 || n > 64)
		kt_usage_error("bad number of jobs '%s' (1-64)", s);
	return n;
}

/*
 * Formatting threads: one per idle CPU but the one the merge thread needs,
 * at most 4; none with fewer than 3 idle CPUs.  Where the merge thread
 * shares a CPU with workers, the hand-overs cost more than the workers
 * save: bench/dtrace.sh on 2 idle CPUs, 20M events, took 1.93 s (3.4 s of
 * CPU) with two workers and 1.55 s (1.5 s) on one thread; with a build
 * running, 7.5 s against 5.8 s.  Idle: the online CPUs less what
 * /proc/stat's procs_running counts besides this thread, read once.
 */
static unsigned int default_jobs(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), running = 0;
	FILE *f = fopen("/proc/stat", "re");
	char *line = NULL;
	size_t size = 0;

	while (f && getline(&line, &size, f) > 0)
		if (sscanf(line, "procs_running %ld", &running) == 1)
			break;
	free(line);
	if (f)
		fclose(f);
	if (running > 1)
		cpus -= running - 1;
	return cpus < 3 ? 1 : cpus > 5 ? 4 : cpus - 1;
}

/* The ktev_parse_*() say what is wrong: a usage error. */
static uint64_t *parse_list(const char *what, const char *s, unsigned int nbits)
{
	uint64_t *bits = xmalloc((nbits + 63) / 64 * sizeof(*bits));

	if (ktev_parse_list(s, bits, nbits, what) < 0)
		exit(KT_USAGE_EXIT);
	return bits;
}

static const struct dtrace_format *parse_format(const char *s)
{
	static const struct dtrace_format *const formats[] = {
		&dtrace_text, &dtrace_ctf, &dtrace_perfetto,
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(formats); i++)
		if (!strcmp(s, formats[i]->name))
			return formats[i];
	kt_usage_error("unknown format '%s' (text, ctf, perfetto)", s);
}

/* What the trace saved of its machine (ktrace record.c): kallsyms and irqs. */
struct machine_files {
	const char *kallsyms, *irqs;	/* given: --kallsyms, --irqs, or as files */
	char *found_kallsyms, *found_irqs;	/* found beside the trace files */
};

static void parse_options(struct dtrace *dt, const struct dtrace_format **fmt,
			  const char **output, unsigned int *flags, unsigned int *jobs,
			  struct machine_files *mf, bool *pager, int argc, char **argv)
{
	struct kt_opts opts = KT_OPTS(options, false);	/* options and files mix */
	int c;

	while ((c = kt_getopt(&opts, argc, argv)) != -1) {
		switch (c) {
		case 'e':
			if (ktev_parse_mask(optarg, KTRACE_GROUP_MASK, &dt->mask) < 0)
				exit(KT_USAGE_EXIT);
			break;
		case 'c':
			dt->cpus = parse_list("cpu", optarg, MAX_CPUS);
			break;
		case 'p':
			dt->pids = parse_list("pid", optarg, DTRACE_MAX_TIDS);
			break;
		case 't':
			dt->tids = parse_list("tid", optarg, DTRACE_MAX_TIDS);
			break;
		case OPT_FROM:
			dt->from_ns = parse_time("--from", optarg);
			break;
		case OPT_TO:
			dt->to_ns = parse_time("--to", optarg);
			break;
		case 'S':
			*fmt = &dtrace_summary;
			break;
		case OPT_CALLTREE:
			*fmt = &dtrace_calltree;
			break;
		case OPT_CALLGRAPH:
			*fmt = &dtrace_callgraph;
			break;
		case OPT_FLAT:
			*fmt = &dtrace_flat;
			break;
		case OPT_FOLDED:
			*fmt = &dtrace_folded;
			break;
		case OPT_FOLDED_TIME:
			*fmt = &dtrace_folded_time;
			break;
		case OPT_STACKS:
			*fmt = &dtrace_stacks;
			break;
		case OPT_STACK_BUDGET:
			*fmt = &dtrace_stack_budget;
			break;
		case OPT_SITES:
			dt->sites = true;
			break;
		case OPT_FORMAT:
			*fmt = parse_format(optarg);
			break;
		case OPT_RAW:
			dt->decode.raw = true;
			break;
		case OPT_KALLSYMS:
			mf->kallsyms = optarg;
			break;
		case OPT_IRQS:
			mf->irqs = optarg;
			break;
		case OPT_TSC:
			dt->tsc = true;
			break;
		case OPT_ABSOLUTE:
			dt->absolute = true;
			break;
		case 'o':
			*output = optarg;
			break;
		case OPT_NO_PAGER:
			*pager = false;
			break;
		case 'f':
			*flags |= KTFILE_FORCE;
			break;
		case 'j':
			*jobs = parse_jobs(optarg);
			break;
		case 'l':
			ktev_list(stdout);
			exit(0);
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			kt_version("dtrace");
			exit(0);
		}
	}
	if (optind == argc)
		kt_usage_error("no trace files given");
	if (dt->tsc && dt->absolute)
		kt_usage_error("--tsc and --absolute do not go together");
	if (dt->to_ns < dt->from_ns)
		kt_usage_error("--to is before --from");
	if (((*fmt)->flags & DTRACE_FMT_TO_DIR) && !*output)
		kt_usage_error("--format=%s writes a directory: give it with -o DIR", (*fmt)->name);
	if ((*fmt)->flags & DTRACE_FMT_CALL_VIEW)
		dt->mask |= KTRACE_GRP_func;
}

/* One file per CPU or thread: a big trace may need more than the default. */
static void raise_file_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void setup_files(struct dtrace *dt)
{
	unsigned int nr = kt_merge_nr_files(dt->merge);

	dt->files = xcalloc(nr, sizeof(*dt->files));
	for (unsigned int i = 0; i < nr; i++) {
		const struct ktfile_reader *f = kt_merge_file(dt->merge, i);
		struct dtrace_file *df = &dt->files[i];
		int cpu = f->hdr.cpu;

		if (cpu < 0) {
			df->selected = !dt->cpus;
			df->cpu_len = snprintf(df->cpu, sizeof(df->cpu), "%3s", "-");
			df->proc = sym_proc(dt->syms, f->hdr.pid, f->path);
			dt->user_streams = true;
		} else {
			df->selected = !dt->cpus || (cpu < MAX_CPUS && ktev_bit_test(dt->cpus, cpu));
			df->cpu_len = snprintf(df->cpu, sizeof(df->cpu), "%3d", cpu);
		}
	}
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t len = strlen(s), n = strlen(suffix);

	return len > n && !strcmp(s + len - n, suffix);
}

/*
 * BASE.SUFFIX beside the first CPU trace file named BASE.cpuN that has
 * one, or NULL.
 */
static char *find_beside(struct dtrace *dt, const char *suffix)
{
	for (unsigned int i = 0; i < kt_merge_nr_files(dt->merge); i++) {
		const struct ktfile_reader *f = kt_merge_file(dt->merge, i);
		const char *dot = strrchr(f->path, '.');
		struct stat st;
		size_t base;
		char *path;

		if (f->hdr.cpu < 0 || !dot || strncmp(dot, ".cpu", 4) || !dot[4] ||
		    strspn(dot + 4, "0123456789") != strlen(dot + 4))
			continue;
		base = dot - f->path;
		path = xmalloc(base + strlen(suffix) + 1);
		memcpy(path, f->path, base);
		strcpy(path + base, suffix);
		if (lstat(path, &st) == 0)
			return path;
		free(path);
	}
	return NULL;
}

/*
 * The kernel's symbols and irq names, unless --raw: a file given with
 * --kallsyms or --irqs must load; one found beside the trace files (or
 * among them) may fail with a warning.
 */
static void load_machine_files(struct dtrace *dt, struct machine_files *mf)
{
	if (dt->decode.raw)
		return;
	if (!mf->kallsyms)
		mf->kallsyms = mf->found_kallsyms = find_beside(dt, ".kallsyms");
	if (mf->kallsyms) {
		dt->decode.ksyms = ksyms_load(mf->kallsyms);
		if (!dt->decode.ksyms && mf->kallsyms != mf->found_kallsyms)
			die("%s: no kernel symbols to name addresses with", mf->kallsyms);
		pr_debug("%s: %zu text symbols", mf->kallsyms, ksyms_count(dt->decode.ksyms));
	}
	if (!mf->irqs)
		mf->irqs = mf->found_irqs = find_beside(dt, ".irqs");
	if (mf->irqs) {
		dt->decode.irqs = irq_names_load(mf->irqs);
		if (!dt->decode.irqs && mf->irqs != mf->found_irqs)
			die("%s: no irq names", mf->irqs);
	}
}

int main(int argc, char **argv)
{
	struct dtrace dt = { .mask = KTRACE_GROUP_MASK, .to_ns = UINT64_MAX };
	struct machine_files mf = { 0 };
	const struct dtrace_format *fmt = &dtrace_text;
	const char *output = NULL;
	unsigned int flags = 0, jobs = default_jobs(), nr_inputs = 0;
	struct stat *inputs;
	bool pager = true;
	int ret, kept;

	util_set_progname(argv[0]);
	parse_options(&dt, &fmt, &output, &flags, &jobs, &mf, &pager, argc, argv);
	raise_file_limit();
	/*
	 * libktrace's map files and what ktrace saved of the machine (trace.*
	 * names them too) are found beside the streams; a kallsyms or irqs
	 * file among them is used as if found there.
	 */
	inputs = xcalloc(2 * (argc - optind) + 2, sizeof(*inputs));
	for (int i = optind; i < argc; i++)
		if (stat(argv[i], &inputs[nr_inputs]) == 0)
			nr_inputs++;
	kept = optind;
	for (int i = optind; i < argc; i++) {
		size_t len = strlen(argv[i]);

		if (has_suffix(argv[i], ".kallsyms")) {
			if (!mf.kallsyms)
				mf.kallsyms = mf.found_kallsyms = xstrdup(argv[i]);
		} else if (has_suffix(argv[i], ".irqs")) {
			if (!mf.irqs)
				mf.irqs = mf.found_irqs = xstrdup(argv[i]);
		} else if (len <= 5 || strcmp(argv[i] + len - 5, ".maps")) {
			argv[kept++] = argv[i];
		}
	}
	argc = kept;
	if (optind == argc)
		kt_usage_error("no trace files given");
	dt.merge = kt_merge_open(argv + optind, argc - optind, flags);
	if (!dt.merge)
		return 1;
	if (!kt_merge_nr_files(dt.merge))
		die("no readable trace file");
	dt.syms = sym_db_new();
	setup_files(&dt);
	/* -p needs the names: they say which process a thread belongs to */
	if (dt.decode.raw && !dt.pids && (fmt->flags & DTRACE_FMT_RAW_NAMELESS))
		dt.tasks = NULL;
	else
		dt.tasks = tasks_open(dt.merge);
	dt.decode.put_task = tasks_put_ctx;
	dt.decode.tasks = dt.tasks;
	load_machine_files(&dt, &mf);
	if (mf.kallsyms && stat(mf.kallsyms, &inputs[nr_inputs]) == 0)
		nr_inputs++;
	if (mf.irqs && stat(mf.irqs, &inputs[nr_inputs]) == 0)
		nr_inputs++;
	/* the map files dtrace finds beside the user streams are inputs too */
	for (unsigned int i = 0; i < kt_merge_nr_files(dt.merge); i++) {
		const struct ktfile_reader *f = kt_merge_file(dt.merge, i);
		char *maps = f->hdr.cpu < 0 ? sym_maps_path(f->hdr.pid, f->path) : NULL;

		if (maps && stat(maps, &inputs[nr_inputs]) == 0)
			nr_inputs++;
		free(maps);
	}
	dt.output = output;
	/* before the formatting threads start; waited for at exit */
	if (pager && !output && !(fmt->flags & DTRACE_FMT_TO_DIR))
		kt_pager_start();
	out_open(&dt.out, fmt->flags & DTRACE_FMT_TO_DIR ? NULL : output, inputs, nr_inputs);
	ret = dtrace_run(&dt, fmt, jobs);
	out_close(&dt.out);
	kt_merge_close(dt.merge);
	tasks_free(dt.tasks);
	sym_db_free(dt.syms);
	free(dt.files);
	ksyms_free((struct ksyms *)dt.decode.ksyms);
	irq_names_free((struct irq_names *)dt.decode.irqs);
	free(mf.found_kallsyms);
	free(mf.found_irqs);
	free(dt.cpus);
	free(dt.tids);
	free(dt.pids);
	free(inputs);
	return ret;
}
