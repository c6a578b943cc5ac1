// SPDX-License-Identifier: GPL-2.0
/*
 * dtrace: merge ktrace trace files by time stamp and print the events.
 *
 * This file has the options; run.c the loop that merges (lib/merge.c) and
 * filters the events for the output format (struct dtrace_format):
 *
 *   text.c                  one line per event (the default)
 *   summary.c               -S
 *   calltree.c, report.c,   --calltree, --report (--flat, --diff),
 *   callgraph.c, folded.c,  --callgraph, --folded, --stacks,
 *   callpaths.c             --stack-budget: user threads' calls, kept by
 *                           calls.c, named by symbols.c
 *   offcpu.c, svg.c         --folded-offcpu's stacks; --format=svg draws
 *                           the folded views' stacks (stacks.c)
 *   ctf.c, perfetto_pb.c,   --format=ctf, --format=perfetto (protobuf),
 *   perfetto.c              --format=perfetto-json (fields.c names the
 *                           events' arguments)
 *
 * pipeline.c runs the text format on worker threads; out.c buffers output.
 */
#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "callfilter.h"
#include "calls.h"
#include "dtrace.h"
#include "ksyms.h"
#include "opts.h"
#include "pager.h"
#include "stacks.h"
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
	OPT_REPORT,
	OPT_SORT,
	OPT_PER_THREAD,
	OPT_DIFF,
	OPT_FOLDED,
	OPT_FOLDED_TIME,
	OPT_FOLDED_OFFCPU,
	OPT_STACKS,
	OPT_STACK_BUDGET,
	OPT_SITES,
	OPT_FORMAT,
	OPT_RAW,
	OPT_KALLSYMS,
	OPT_IRQS,
	OPT_PROBES,
	OPT_LATENCY,
	OPT_KEY,
	OPT_SLOWEST,
	OPT_NO_PAGER,
	OPT_MIN_TIME,
	OPT_EXCLUDE_LIB,
	OPT_DEPTH,
	OPT_MACHINE,
	OPT_MACHINES,
};

/* The one options table (lib/opts.h): getopt's tables and --help are made from it. */
static const struct kt_option options[] = {
	{ "events", required_argument, 'e', "MASK",
	  "groups to show: names, numbers, all; +grp/-grp change all" },
	{ "cpu", required_argument, 'c', "CPUS",
	  "CPUs to show: 0-3,6 (user streams are left out)" },
	{ "cpus", required_argument, 'c', "CPUS", NULL },	/* old spelling: hidden */
	{ "machine", required_argument, OPT_MACHINE, "NAME",
	  "with machine directories (ktrace --listen's): NAME's events only" },
	{ "machines", no_argument, OPT_MACHINES, NULL,
	  "list the machine directories' clock alignment: offset, drift,\n"
	  "error bound" },
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
	{ "report", no_argument, OPT_REPORT, NULL,
	  "per function: calls, total and self time, average, min and max\n"
	  "call (--format=csv: as CSV, times in ns)" },
	{ "sort", required_argument, OPT_SORT, "KEYS",
	  "--report's order: total self calls avg min max name, several:\n"
	  "self,name (default total; --flat: self,calls)" },
	{ "per-thread", no_argument, OPT_PER_THREAD, NULL,
	  "--report per thread, not summed over the threads" },
	{ "diff", required_argument, OPT_DIFF, "OLD",
	  "--report of OLD (a directory or file) and FILE... side by side,\n"
	  "with the difference, largest first" },
	{ "folded", no_argument, OPT_FOLDED, NULL,
	  "folded stacks for flame graphs (flamegraph.pl, speedscope):\n"
	  "one line per call path, weighed by its calls" },
	{ "folded-time", no_argument, OPT_FOLDED_TIME, NULL,
	  "the same, weighed by self time in ns" },
	{ "folded-offcpu", no_argument, OPT_FOLDED_OFFCPU, NULL,
	  "folded stacks of the threads' time off CPU in ns (sched:switch):\n"
	  "comm-tid;user calls;sys_NAME;[blocked] or [preempted]" },
	{ "filter", required_argument, 'F', "FUNC",
	  "call views: only FUNC's calls and their callees (name, glob, /regex/)" },
	{ "notrace", required_argument, 'N', "FUNC",
	  "call views: not FUNC's calls, nor their callees" },
	{ "depth", required_argument, OPT_DEPTH, "N", "call views: only calls less than N deep" },
	{ "min-time", required_argument, OPT_MIN_TIME, "TIME",
	  "call views: only calls that last TIME or more (1us, 250ns)" },
	{ "exclude-lib", required_argument, OPT_EXCLUDE_LIB, "OBJ",
	  "call views: not the calls of functions in OBJ (libc.so.6, a path, a glob)" },
	{ "stacks", no_argument, OPT_STACKS, NULL,
	  "each user thread's call path at its last record (after a crash, a kill)" },
	{ "stack-budget", no_argument, OPT_STACK_BUDGET, NULL,
	  "per thread: the deepest call path, the one using the most stack (bytes)" },
	{ "sites", no_argument, OPT_SITES, NULL,
	  "with --calltree: where each call is, inlined functions too" },
	{ "format", required_argument, OPT_FORMAT, "FMT",
	  "text; ctf (-o DIR: CTF 1.8 for babeltrace2, Trace Compass); perfetto "
	  "(Perfetto's protobuf trace); perfetto-json (Chrome's JSON);\n"
	  "csv (--report's table); svg: a flame graph of --folded, --folded-time\n"
	  "or --folded-offcpu; parquet (-o FILE: a table for SQL, DuckDB, Spark)" },
	{ "raw", no_argument, OPT_RAW, NULL,
	  "numbers, not names: thread ids, syscall, errno, signal, symbol numbers" },
	{ "kallsyms", required_argument, OPT_KALLSYMS, "FILE",
	  "kernel symbols (default: BASE.kallsyms beside BASE.cpuN)" },
	{ "irqs", required_argument, OPT_IRQS, "FILE",
	  "irq names, /proc/interrupts (default: BASE.irqs beside BASE.cpuN)" },
	{ "probes", required_argument, OPT_PROBES, "FILE",
	  "probe names and values (default: BASE.probes beside BASE.cpuN)" },
	{ "latency", required_argument, OPT_LATENCY, "A,B",
	  "time from each hit of probe A to its hit of B: percentiles,\n"
	  "histogram, slowest pairs (B may be NAME%return)" },
	{ "key", required_argument, OPT_KEY, "VALUE",
	  "with --latency: pair A and B by this value of both (default: thread)" },
	{ "slowest", required_argument, OPT_SLOWEST, "N",
	  "with --latency: list the N slowest pairs (default 10)" },
	{ "tsc", no_argument, OPT_TSC, NULL, "raw time stamps" },
	{ "absolute", no_argument, OPT_ABSOLUTE, NULL,
	  "wall clock time (local) from the files' reference" },
	{ "output", required_argument, 'o', "FILE", "write to FILE" },
	{ "no-pager", no_argument, OPT_NO_PAGER, NULL,
	  "no pager, also when writing to a terminal" },
	{ "force", no_argument, 'f', NULL,
	  "merge files of different boots or hosts, keep what is valid of bad files" },
	{ "jobs", required_argument, 'j', "N",
	  "N threads, N-1 of them formatting (default: one per idle CPU, up to 5)" },
	{ "list", no_argument, 'l', NULL, "list groups and events" },
	{ "help", no_argument, 'h', NULL, "show this help and exit" },
	{ "version", no_argument, 'V', NULL, "show the version and exit" },
};

static void usage(FILE *f)
{
	kt_usage(f, &(struct kt_opts)KT_OPTS(options, false), "dtrace",
		 "[OPTION]... FILE...",
		 "Merge ktrace trace files (BASE.cpuN, user streams; .zst compressed ones;\n"
		 "- for standard input; ktrace --listen's machine directories) by time and\n"
		 "print one line per event: CPU, time in us after the first event, task\n"
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

static unsigned int parse_depth(const char *s)
{
	char *end;
	unsigned long n = strtoul(s, &end, 10);

	if (*s < '0' || *s > '9' || *end || n < 1 || n > 1000000)
		kt_usage_error("bad depth '%s' for --depth (1-1000000)", s);
	return n;
}

static unsigned int parse_jobs(const char *s)
{
	char *end;
	unsigned long n = strtoul(s, &end, 10);

	if (*s < '0' || *s > '9' || *end || n < 1 || n > 64)
		kt_usage_error("bad number of jobs '%s' (1-64)", s);
	return n;
}

/* What /proc/stat's procs_running says now, 0 if it cannot be read. */
static long procs_running(void)
{
	FILE *f = fopen("/proc/stat", "re");
	char *line = NULL;
	size_t size = 0;
	long running = 0;

	while (f && getline(&line, &size, f) > 0)
		if (sscanf(line, "procs_running %ld", &running) == 1)
			break;
	free(line);
	if (f)
		fclose(f);
	return running;
}

/*
 * Threads in all (-j): one per idle CPU, the merging one included, at most
 * 5; only this one with fewer than 2 idle CPUs.  Where the merge thread
 * shares a CPU with workers, the hand-overs cost more than the workers
 * save: bench/dtrace.sh on 2 idle CPUs, 20M events, took 1.93 s (3.4 s of
 * CPU) with two workers and 1.55 s (1.5 s) on one thread; with a build
 * running, 7.5 s against 5.8 s.  One worker (-j 2), the main thread
 * formatting a batch whenever it is ahead (pipeline.c), 4M events: on 2
 * idle CPUs 0.28 s against 0.45-0.50 s on one thread; with a busy loop on
 * the other CPU 0.52 s against 0.45-0.48 s.  Idle: the online CPUs less
 * what /proc/stat's procs_running counts besides this thread, read up to
 * 3 times 1 ms apart, the least kept: the parent that started dtrace (a
 * shell, time(1)) often still runs for an instant before it waits, and
 * read once it counted as a busy CPU (bench/dtrace.sh got one thread in
 * each of 3 rounds on a machine at load 0.6).
 */
static unsigned int default_jobs(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN), running = procs_running();

	for (int i = 0; i < 2 && running > 1; i++) {
		long again;

		usleep(1000);
		again = procs_running();
		if (again < running)
			running = again;
	}
	if (running > 1)
		cpus -= running - 1;
	return cpus < 2 ? 1 : cpus > 5 ? 5 : cpus;
}

/* The ktev_parse_*() say what is wrong: a usage error. */
static uint64_t *parse_list(const char *what, const char *s, unsigned int nbits)
{
	uint64_t *bits = xmalloc((nbits + 63) / 64 * sizeof(*bits));

	if (ktev_parse_list(s, bits, nbits, what) < 0)
		exit(KT_USAGE_EXIT);
	return bits;
}

#define LATENCY_SLOWEST	10

static unsigned int parse_slowest(const char *s)
{
	char *end;
	unsigned long n = strtoul(s, &end, 10);

	if (*s < '0' || *s > '9' || *end || n > 10000)
		kt_usage_error("bad number of pairs '%s' for --slowest (0-10000)", s);
	return n;
}

static const struct dtrace_format *parse_format(const char *s)
{
	static const struct dtrace_format *const formats[] = {
		&dtrace_text, &dtrace_ctf, &dtrace_perfetto_pb, &dtrace_perfetto,
		&dtrace_report_csv, &dtrace_svg, &dtrace_parquet,
	};

	char names[128] = "";

	for (unsigned int i = 0; i < ARRAY_SIZE(formats); i++) {
		if (!strcmp(s, formats[i]->name))
			return formats[i];
		snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s",
			 i ? ", " : "", formats[i]->name);
	}
	kt_usage_error("unknown format '%s' (%s)", s, names);
}

/* What the trace saved of its machine (ktrace record.c): kallsyms and irqs. */
struct machine_files {
	const char *kallsyms, *irqs, *probes;	/* given: --kallsyms, --irqs, --probes, or as files */
	char *found_kallsyms, *found_irqs, *found_probes;	/* found beside the trace files */
	char *expected_probes;	/* where BASE.probes was looked for, not found */
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
		case OPT_REPORT:
			/* --format=csv is the report's table: the view stays */
			if (*fmt != &dtrace_report_csv)
				*fmt = c == OPT_FLAT ? &dtrace_flat : &dtrace_report;
			break;
		case OPT_SORT:
			report_parse_sort(dt->report, optarg);
			break;
		case OPT_PER_THREAD:
			dt->report->per_thread = true;
			break;
		case OPT_DIFF:
			dt->report->old_path = optarg;
			break;
		case OPT_FOLDED:
		case OPT_FOLDED_TIME:
		case OPT_FOLDED_OFFCPU:
			/* which stacks; --format=svg draws them, else folded lines */
			dt->stacks = c == OPT_FOLDED ? STACKS_CALLS :
				     c == OPT_FOLDED_TIME ? STACKS_CALL_TIME : STACKS_OFFCPU;
			if (*fmt != &dtrace_svg)
				*fmt = &dtrace_folded;
			break;
		case 'F':
			call_filter_add(dt->call_filter, CALL_FILTER_KEEP, "--filter", optarg);
			break;
		case 'N':
			call_filter_add(dt->call_filter, CALL_FILTER_DROP, "--notrace", optarg);
			break;
		case OPT_EXCLUDE_LIB:
			call_filter_add(dt->call_filter, CALL_FILTER_LIB, "--exclude-lib", optarg);
			break;
		case OPT_DEPTH:
			dt->call_filter->max_depth = parse_depth(optarg);
			break;
		case OPT_MIN_TIME:
			dt->call_filter->min_ns = parse_time("--min-time", optarg);
			break;
		case OPT_MACHINE:
			dt->only_machine = optarg;
			break;
		case OPT_MACHINES:
			dt->machines_report = true;
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
		case OPT_PROBES:
			mf->probes = optarg;
			break;
		case OPT_LATENCY:
			*fmt = &dtrace_latency;
			dt->latency->pair = optarg;
			break;
		case OPT_KEY:
			dt->latency->key = optarg;
			break;
		case OPT_SLOWEST:
			dt->latency->slowest = parse_slowest(optarg);
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
	if (((*fmt)->flags & DTRACE_FMT_TO_FILE) && !*output)
		kt_usage_error("--format=%s writes a binary file: give it with -o FILE", (*fmt)->name);
	if (dt->report->old_path && *fmt == &dtrace_text)
		*fmt = &dtrace_report;
	if ((dt->report->nr_keys || dt->report->per_thread || dt->report->old_path) &&
	    !report_format(*fmt))
		kt_usage_error("--sort, --per-thread and --diff go with --report, --flat or "
			       "--format=csv");
	if (dt->report->per_thread && dt->report->old_path)
		kt_usage_error("--per-thread and --diff do not go together: threads differ "
			       "from run to run");
	if ((*fmt)->flags & DTRACE_FMT_CALL_VIEW)
		dt->mask |= KTRACE_GRP_func;
	if (call_filter_active(dt->call_filter) && !((*fmt)->flags & DTRACE_FMT_CALLS))
		kt_usage_error("-F, -N, --depth, --min-time and --exclude-lib filter calls: "
			       "give them with --calltree, --flat, --report, --callgraph, --folded "
			       "or --format=perfetto");
	if ((dt->latency->key || dt->latency->slowest != LATENCY_SLOWEST) &&
	    *fmt != &dtrace_latency)
		kt_usage_error("--key and --slowest go with --latency");
	if (*fmt == &dtrace_latency) {
		const char *comma = strchr(dt->latency->pair, ',');

		if (!comma || comma == dt->latency->pair || !comma[1] || strchr(comma + 1, ','))
			kt_usage_error("bad --latency '%s': two probe names, A,B",
				       dt->latency->pair);
		if (dt->decode.raw)
			kt_usage_error("--latency names probes: not with --raw");
		dt->mask |= KTRACE_GRP_probe;
	}
	if ((*fmt)->flags & DTRACE_FMT_STACKS)
		dt->mask |= stacks_groups(dt->stacks);
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
		if (dt->machines)
			machines_setup_file(dt, df, f);
	}
}

static bool has_suffix(const char *s, const char *suffix)
{
	size_t len = strlen(s), n = strlen(suffix);

	return len > n && !strcmp(s + len - n, suffix);
}

/*
 * BASE.SUFFIX beside the first CPU trace file named BASE.cpuN that has
 * one, or NULL; then *@expected (if given) is where it was first looked
 * for, or NULL.
 */
static char *find_beside(struct dtrace *dt, const char *suffix, char **expected)
{
	if (expected)
		*expected = NULL;
	for (unsigned int i = 0; i < kt_merge_nr_files(dt->merge); i++) {
		const struct ktfile_reader *f = kt_merge_file(dt->merge, i);
		/* BASE.cpuN or, compressed, BASE.cpuN.zst */
		char *stem = xstrndup(f->path, strlen(f->path) -
				      (has_suffix(f->path, KTFILE_ZSTD_SUFFIX) ?
				       strlen(KTFILE_ZSTD_SUFFIX) : 0));
		const char *dot = strrchr(stem, '.');
		bool cpu_file = f->hdr.cpu >= 0 && dot && !strncmp(dot, ".cpu", 4) && dot[4] &&
				strspn(dot + 4, "0123456789") == strlen(dot + 4);
		struct stat st;
		size_t base = dot ? (size_t)(dot - stem) : 0;
		char *path;

		free(stem);
		if (!cpu_file)
			continue;
		path = xmalloc(base + strlen(suffix) + 1);
		memcpy(path, f->path, base);
		strcpy(path + base, suffix);
		if (lstat(path, &st) == 0) {
			if (expected) {
				free(*expected);
				*expected = NULL;
			}
			return path;
		}
		if (expected && !*expected)
			*expected = path;
		else
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
	if (!mf->kallsyms && !dt->machines)
		mf->kallsyms = mf->found_kallsyms = find_beside(dt, ".kallsyms", NULL);
	if (mf->kallsyms) {
		dt->decode.ksyms = ksyms_load(mf->kallsyms);
		if (!dt->decode.ksyms && mf->kallsyms != mf->found_kallsyms)
			die("%s: no kernel symbols to name addresses with", mf->kallsyms);
		pr_debug("%s: %zu text symbols", mf->kallsyms, ksyms_count(dt->decode.ksyms));
	}
	if (!mf->irqs && !dt->machines)
		mf->irqs = mf->found_irqs = find_beside(dt, ".irqs", NULL);
	if (mf->irqs) {
		dt->decode.irqs = irq_names_load(mf->irqs);
		if (!dt->decode.irqs && mf->irqs != mf->found_irqs)
			die("%s: no irq names", mf->irqs);
	}
	/* a bad BASE.probes is an error even where found: hits would print wrong */
	if (!mf->probes)
		mf->probes = mf->found_probes = find_beside(dt, ".probes", &mf->expected_probes);
	if (mf->probes)
		dt->probes = probes_load(mf->probes);
	else
		dt->probes_expected = mf->expected_probes;
}

static int no_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/*
 * @paths with each directory among them replaced by the files in it (not
 * those whose names start with '.'), in the order of their names: what
 * ktrace-run writes is a directory, and --report and --diff compare runs.
 * Every path is a copy of its own.
 */
static char **expand_dirs(char *const *paths, int nr, int *nr_out)
{
	char **out = NULL;
	int n = 0, alloc = 0;

	for (int i = 0; i < nr; i++) {
		struct dirent **names = NULL;
		struct stat st;
		int nr_names = 1;

		if (stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			nr_names = scandir(paths[i], &names, no_dot, alphasort);
			if (nr_names < 0)
				die("%s: %s", paths[i], strerror(errno));
			if (!nr_names)
				die("%s: a directory without trace files", paths[i]);
		}
		if (n + nr_names > alloc) {
			alloc = 2 * (n + nr_names);
			out = xrealloc(out, alloc * sizeof(*out));
		}
		if (!names)
			out[n++] = xstrdup(paths[i]);
		for (int j = 0; names && j < nr_names; j++) {
			out[n] = xmalloc(strlen(paths[i]) + strlen(names[j]->d_name) + 2);
			sprintf(out[n++], "%s/%s", paths[i], names[j]->d_name);
			free(names[j]);
		}
		free(names);
	}
	*nr_out = n;
	return out;
}

/* What dtrace reads, by device and inode: -o must not name one of them. */
struct inputs {
	struct stat *st;
	unsigned int nr, alloc;
};

static void add_input(struct inputs *in, const char *path)
{
	if (in->nr == in->alloc) {
		in->alloc = in->alloc ? 2 * in->alloc : 64;
		in->st = xrealloc(in->st, in->alloc * sizeof(*in->st));
	}
	if ((strcmp(path, "-") ? stat(path, &in->st[in->nr]) :
				 fstat(STDIN_FILENO, &in->st[in->nr])) == 0)
		in->nr++;
}

/*
 * Open the trace files @paths (@nr, directories expanded) for a run of
 * @fmt: the merge, the symbols, the names of the tasks, the machine's
 * files; the files read go into @in.
 */
static void open_trace(struct dtrace *dt, const struct dtrace_format *fmt, char **paths,
		       int nr, unsigned int flags, struct machine_files *mf, struct inputs *in)
{
	char **traces = xcalloc(nr + 1, sizeof(*traces));
	struct stat *kept_st = xcalloc(nr + 1, sizeof(*kept_st));
	int kept = 0;

	/*
	 * libktrace's map files and what ktrace saved of the machine (trace.*
	 * names them too) are found beside the streams; a kallsyms or irqs
	 * file among them is used as if found there.
	 */
	for (int i = 0; i < nr; i++) {
		add_input(in, paths[i]);
		if (has_suffix(paths[i], ".kallsyms")) {
			/* with machines, each has its own (machines.c) */
			if (!mf->kallsyms && !dt->machines)
				mf->kallsyms = mf->found_kallsyms = xstrdup(paths[i]);
		} else if (has_suffix(paths[i], ".irqs")) {
			if (!mf->irqs && !dt->machines)
				mf->irqs = mf->found_irqs = xstrdup(paths[i]);
		} else if (has_suffix(paths[i], ".probes")) {
			if (!mf->probes)
				mf->probes = mf->found_probes = xstrdup(paths[i]);
		} else if (!has_suffix(paths[i], ".maps") && !has_suffix(paths[i], ".clock")) {
			/* .clock: a machine directory's clock probes (machines.c) */
			int dup = -1;

			/* a file given twice (t.cpu0 t.*) is read once: its events are */
			memset(&kept_st[kept], 0, sizeof(kept_st[kept]));
			if (strcmp(paths[i], "-") && !stat(paths[i], &kept_st[kept]))
				for (int j = 0; j < kept && dup < 0; j++)
					if (kept_st[j].st_ino == kept_st[kept].st_ino &&
					    kept_st[j].st_dev == kept_st[kept].st_dev)
						dup = j;
			if (dup >= 0)
				pr_warn("%s: the same file as %s, given before: read once",
					paths[i], traces[dup]);
			else
				traces[kept++] = paths[i];
		}
	}
	free(kept_st);
	if (!kept)
		kt_usage_error("no trace files given");
	dt->merge = dt->machines ? machines_merge_open(dt, traces, kept, flags) :
				   kt_merge_open(traces, kept, flags);
	free(traces);
	if (!dt->merge)
		exit(1);
	if (!kt_merge_nr_files(dt->merge))
		die("no readable trace file");
	dt->syms = sym_db_new();
	dt->user_streams = false;
	setup_files(dt);
	/* -p needs the names: they say which process a thread belongs to */
	if (dt->decode.raw && !dt->pids && (fmt->flags & DTRACE_FMT_RAW_NAMELESS))
		dt->tasks = NULL;
	else
		dt->tasks = tasks_open(dt->merge);
	dt->decode.put_task = tasks_put_ctx;
	dt->decode.tasks = dt->tasks;
	load_machine_files(dt, mf);
	if (mf->kallsyms)
		add_input(in, mf->kallsyms);
	if (mf->irqs)
		add_input(in, mf->irqs);
	if (mf->probes)
		add_input(in, mf->probes);
	/* the map files dtrace finds beside the user streams are inputs too */
	for (unsigned int i = 0; i < kt_merge_nr_files(dt->merge); i++) {
		const struct ktfile_reader *f = kt_merge_file(dt->merge, i);
		char *maps = f->hdr.cpu < 0 ? sym_maps_path(f->hdr.pid, f->path) : NULL;

		if (maps)
			add_input(in, maps);
		free(maps);
	}
}

static void close_trace(struct dtrace *dt, struct machine_files *mf)
{
	kt_merge_close(dt->merge);
	tasks_free(dt->tasks);
	sym_db_free(dt->syms);
	free(dt->files);
	ksyms_free((struct ksyms *)dt->decode.ksyms);
	irq_names_free((struct irq_names *)dt->decode.irqs);
	dt->decode.ksyms = NULL;
	dt->decode.irqs = NULL;
	probes_free(dt->probes);
	dt->probes = NULL;
	dt->probes_expected = NULL;
	dt->probes_warned = false;	/* --diff: the next trace's file is another */
	free(mf->found_kallsyms);
	free(mf->found_irqs);
	free(mf->found_probes);
	free(mf->expected_probes);
}

/*
 * --diff OLD: the report of OLD first, kept (dt->report->old) for the run
 * of the files given to write the difference; nothing written.
 */
static int read_old_trace(struct dtrace *dt, const struct dtrace_format *fmt,
			  unsigned int flags, const struct machine_files *given,
			  struct inputs *in)
{
	struct machine_files mf = { .kallsyms = given->kallsyms, .irqs = given->irqs,
				    .probes = given->probes };
	int nr, ret;
	char **paths = expand_dirs((char **)&dt->report->old_path, 1, &nr);

	open_trace(dt, fmt, paths, nr, flags, &mf, in);
	dt->report->keep_old = true;
	ret = dtrace_run(dt, fmt, 1);
	dt->report->keep_old = false;
	close_trace(dt, &mf);
	for (int i = 0; i < nr; i++)
		free(paths[i]);
	free(paths);
	return ret;
}

int main(int argc, char **argv)
{
	struct report_opts report = { 0 };
	struct latency_opts latency = { .slowest = LATENCY_SLOWEST };
	struct dtrace dt = { .mask = KTRACE_GROUP_MASK, .to_ns = UINT64_MAX, .report = &report,
			     .latency = &latency };
	struct machine_files mf = { 0 };
	struct call_filter call_filter = { 0 };
	const struct dtrace_format *fmt = &dtrace_text;
	const char *output = NULL;
	unsigned int flags = 0, jobs = default_jobs();
	struct inputs in = { 0 };
	bool pager = true;
	char **paths, *new_path = NULL;
	int ret = 0, nr;

	util_set_progname(argv[0]);
	dt.call_filter = &call_filter;
	parse_options(&dt, &fmt, &output, &flags, &jobs, &mf, &pager, argc, argv);
	raise_file_limit();
	if (report.old_path) {
		report.new_path = argv[optind];
		if (argc - optind > 1) {
			new_path = xmalloc(strlen(argv[optind]) + 64);
			sprintf(new_path, "%s ... (%d paths)", argv[optind], argc - optind);
			report.new_path = new_path;
		}
		ret = read_old_trace(&dt, fmt, flags, &mf, &in);
	}
	/* elsewhere a directory is refused: it is no trace file, or a machine's */
	paths = machines_expand(&dt, argv + optind, argc - optind, &nr);
	if (!paths && (dt.only_machine || dt.machines_report))
		kt_usage_error("--machine, --machines: give machine directories (ktrace --listen's)");
	if (paths) {
	} else if (report_format(fmt)) {
		paths = expand_dirs(argv + optind, argc - optind, &nr);
	} else {
		nr = argc - optind;
		paths = xcalloc(nr, sizeof(*paths));
		for (int i = 0; i < nr; i++)
			paths[i] = xstrdup(argv[optind + i]);
	}
	open_trace(&dt, fmt, paths, nr, flags, &mf, &in);
	if (dt.machines_report) {
		machines_report(&dt, stdout);
		return 0;
	}
	dt.output = output;
	/* before the formatting threads start; waited for at exit */
	if (pager && !output && !(fmt->flags & DTRACE_FMT_TO_DIR))
		kt_pager_start();
	out_open(&dt.out, fmt->flags & DTRACE_FMT_TO_DIR ? NULL : output, in.st, in.nr);
	ret |= dtrace_run(&dt, fmt, jobs);
	out_close(&dt.out);
	close_trace(&dt, &mf);
	machines_free(&dt);
	report_table_free(report.old);
	for (int i = 0; i < nr; i++)
		free(paths[i]);
	free(paths);
	free(new_path);
	free(dt.cpus);
	free(dt.tids);
	free(dt.pids);
	call_filter_free(&call_filter);
	free(in.st);
	return ret;
}
