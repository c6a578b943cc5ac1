// SPDX-License-Identifier: GPL-2.0
/*
 * ktrace: control kernel event tracing and record it into trace files.
 *
 * This file reads the command line and does the control side (-e, -b, -s,
 * -l); record.c records, flight.c is --flight, dev.c talks to /dev/ktrace.
 * See ktrace.1 for the user's view.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktevents.h"
#include "ktfile.h"
#include "ktnet.h"
#include "ktrace.h"
#include "opts.h"
#include "probe.h"
#include "util.h"

#define CPU_NR_MAX	8192	/* the kernel's largest NR_CPUS */
#define OPT_FLIGHT	256	/* --flight: long only */
#define OPT_DEBUG_DIR	257	/* --debug-dir: long only */
#define OPT_SEND	258	/* --send and the rest: long only */
#define OPT_LISTEN	259
#define OPT_SPOOL	260
#define OPT_SPOOL_SIZE	261
#define OPT_NAME	262
#define OPT_SEND_WAIT	263
#define OPT_ZSTD_LEVEL	264	/* --zstd-level: long only */
#define OPT_KEY		265	/* --key: long only */

/* The one options table (lib/opts.h): getopt_long's tables and --help come from it. */
static const struct kt_option options[] = {
	{ "events",   required_argument, 'e', "MASK",
	  "set the group mask: group names (sched,fault),\n"
	  "all, +GROUP, -GROUP or a number; 0 turns tracing off" },
	{ "status",   no_argument,       's', NULL,
	  "show the mask and every CPU's buffer state" },
	{ "cpu",      required_argument, 'c', "CPUS",
	  "record these CPUs into BASE.cpuN: N, ranges and\n"
	  "lists (0-3,6) or all; repeatable" },
	{ "wait",     required_argument, 'w', "MS",
	  "drain every MS ms (default 100), sooner when a\n"
	  "buffer is a quarter full" },
	{ "output",   required_argument, 'o', "BASE",
	  "trace file base name (default trace); with\n"
	  "--listen the directory (default .)" },
	{ "list",     no_argument,       'l', NULL,
	  "list the groups and their events" },
	{ "duration", required_argument, 'd', "SECONDS",
	  "stop recording after SECONDS (fractions allowed)" },
	{ "flight",   no_argument,       OPT_FLIGHT, NULL,
	  "flight recorder: keep the newest records in the\n"
	  "kernel; SIGUSR1 (and the end) writes them to\n"
	  "BASE.N.cpuK, N = 1, 2, ...; tracing goes on" },
	{ "zstd",     no_argument,       'z', NULL,
	  "compress the trace files with zstd: BASE.cpuN.zst,\n"
	  "read by dtrace as they are" },
	{ "zstd-level", required_argument, OPT_ZSTD_LEVEL, "LEVEL",
	  "zstd level for -z (default 1; negative: faster)" },
	{ "buffer",   required_argument, 'b', "RECORDS",
	  "per-CPU buffer size in records (16-16777216,\n"
	  "rounded up to a power of two); empties the buffers" },
	{ "probe",    required_argument, 'P', "SPEC",
	  "probe a user function: 'BINARY:FUNCTION[%return]\n"
	  "[[ALIAS=]FIELD[:TYPE]]...' (ktrace.1); repeatable" },
	{ "list-probes", required_argument, 'L', "SPEC",
	  "list 'BINARY[:FUNCTION-GLOB [FIELD]...]': functions,\n"
	  "parameters and the fields' fetch chains" },
	{ "debug-dir", required_argument, OPT_DEBUG_DIR, "DIR",
	  "look for debug files in DIR too\n"
	  "(DIR/.build-id/xx/yyyy.debug, DIR/DEBUGLINK)" },
	{ "pid",      required_argument, 'p', "PID",
	  "probes only in process PID (repeatable; default:\n"
	  "the COMMAND and its children, else every process)" },
	{ "send",     required_argument, OPT_SEND, "HOST:PORT",
	  "stream the recording to a collector (ktrace\n"
	  "--listen) over TCP instead of writing files" },
	{ "spool",    required_argument, OPT_SPOOL, "DIR",
	  "--send: keep unacknowledged frames in DIR\n"
	  "(default: a temporary directory)" },
	{ "spool-size", required_argument, OPT_SPOOL_SIZE, "BYTES",
	  "--send: at most BYTES (K, M, G) in the spool;\n"
	  "more is dropped and counted lost (default 256M)" },
	{ "name",     required_argument, OPT_NAME, "NAME",
	  "--send: the machine's name, its directory at\n"
	  "the collector (default: the hostname)" },
	{ "send-wait", required_argument, OPT_SEND_WAIT, "SECONDS",
	  "--send: at the end, wait this long for the\n"
	  "collector to acknowledge everything (default 30)" },
	{ "listen",   required_argument, OPT_LISTEN, "[ADDR:]PORT",
	  "be the collector: receive --send streams into\n"
	  "-o DIR/NAME/trace.cpuN, one directory a machine;\n"
	  "PORT alone binds 127.0.0.1 only, unless --key" },
	{ "key",      required_argument, OPT_KEY, "FILE",
	  "--send, --listen: the key (64 hex digits, mode\n"
	  "0600) the sender proves and the stream is\n"
	  "encrypted with; --listen --key DIR: DIR/NAME.key\n"
	  "a machine (ktrace-remote.rst)" },
	{ "quiet",    no_argument,       'q', NULL,
	  "print errors only" },
	{ "verbose",  no_argument,       'v', NULL,
	  "print more" },
	{ "help",     no_argument,       'h', NULL,
	  "show this help and exit" },
	{ "version",  no_argument,       'V', NULL,
	  "show the version and exit" },
};

static void usage(FILE *f)
{
	kt_usage(f, &(struct kt_opts)KT_OPTS(options, true), "ktrace",
		 "[OPTION]... [--] [COMMAND [ARG]...]",
		 "Control kernel event tracing and record it into trace files, one per CPU.\n"
		 "With -c, -d or a COMMAND it records (all online CPUs unless -c names\n"
		 "some) until interrupted, for -d SECONDS or while COMMAND runs, and a mask\n"
		 "given with -e holds for the recording only.  Without them it sets -e/-b.\n"
		 "--flight keeps recording in memory and writes a snapshot on SIGUSR1.\n",
		 "Environment: KTRACE_DEV names the device (default /dev/ktrace).\n");
}

/* --spool-size: a number of bytes with an optional K, M or G. */
static uint64_t parse_size(const char *arg)
{
	unsigned long long n;
	char *end;

	errno = 0;
	n = strtoull(arg, &end, 10);
	if (*end == 'K' || *end == 'k')
		n <<= 10, end++;
	else if (*end == 'M' || *end == 'm')
		n <<= 20, end++;
	else if (*end == 'G' || *end == 'g')
		n <<= 30, end++;
	if (!isdigit((unsigned char)*arg) || *end || errno || n < (64u << 10) || n > (1ull << 44))
		kt_usage_error("--spool-size %s: not a size from 64K to 16T", arg);
	return n;
}

static unsigned long parse_number(int opt, const char *arg, unsigned long min,
				  unsigned long max, const char *what)
{
	unsigned long n;
	char *end;

	errno = 0;
	n = strtoul(arg, &end, 10);
	if (!isdigit((unsigned char)*arg) || *end || errno || n < min || n > max)
		kt_usage_error("-%c %s: not %s (%lu-%lu)", opt, arg, what, min, max);
	return n;
}

static bool cpu_online(int ctl, unsigned int cpu)
{
	struct ktrace_cpu_stats st;

	return dev_cpu_stats(ctl, cpu, &st) == 0 && (st.flags & KTRACE_CPU_ONLINE);
}

/*
 * -c: "all" or a list of N and N-M.  Checked when the option is read (there
 * is no device yet, so against the most CPUs a kernel can have), then marked
 * in cpus[nr] once the kernel has said how many there are: each must exist
 * and be online; "all" is the online ones.
 */
static void parse_cpus(const char *arg, int ctl, bool *cpus, unsigned int nr)
{
	unsigned int nbits = cpus ? nr : CPU_NR_MAX;
	uint64_t *bits = xcalloc((nbits + 63) / 64, sizeof(*bits));
	bool all = !strcmp(arg, "all");

	if (ktev_parse_list(arg, bits, nbits, "cpu") < 0)
		exit(cpus ? 1 : KT_USAGE_EXIT);	/* said why; a usage error when read */
	for (unsigned int n = 0; cpus && n < nr; n++) {
		if (!ktev_bit_test(bits, n))
			continue;
		if (cpu_online(ctl, n))
			cpus[n] = true;
		else if (!all)
			die("-c %s: CPU %u is offline", arg, n);
	}
	free(bits);
}

static uint32_t parse_mask(const char *arg, uint32_t cur)
{
	uint32_t mask;

	if (ktev_parse_mask(arg, cur, &mask) < 0)
		exit(1);
	return mask;
}

/* "sched,fault", bits without a name in hex */
static void mask_names(uint32_t mask, char *buf, size_t size)
{
	size_t len = 0;

	buf[0] = '\0';
	for (unsigned int bit = 0; bit < 32 && len < size; bit++) {
		const char *name = ktev_group_name(bit);

		if (!(mask & (1u << bit)))
			continue;
		if (name)
			len += snprintf(buf + len, size - len, "%s%s", len ? "," : "", name);
		else
			len += snprintf(buf + len, size - len, "%s0x%x", len ? "," : "",
					1u << bit);
	}
}

static void show_status(int ctl, const struct ktrace_info *info)
{
	char names[256];

	mask_names(info->mask, names, sizeof(names));
	printf("mask    0x%08x %s\n", info->mask, info->mask ? names : "(tracing off)");
	printf("buffer  %u records per CPU (%u KiB)\n", info->buf_records,
	       (unsigned int)(info->buf_records * sizeof(struct ktrace_record) / 1024));
	if (info->flags & KTRACE_INFO_OVERWRITE)
		printf("mode    overwrite (flight recorder: nothing is read until a snapshot)\n");
	printf("tsc     %llu kHz%s\n", (unsigned long long)info->tsc_khz,
	       info->flags & KTRACE_INFO_TSC_INVARIANT ? ", invariant" : ", not invariant");
	printf("%-5s %-8s %-6s %10s %14s %14s %14s\n", "cpu", "state", "reader",
	       "buffer", "written", "lost", "read");
	for (unsigned int n = 0; n < info->nr_cpu_ids; n++) {
		struct ktrace_cpu_stats st;

		if (dev_cpu_stats(ctl, n, &st) < 0) {
			printf("%-5u %s\n", n, strerror(errno));
			continue;
		}
		printf("%-5u %-8s %-6s %10u %14llu %14llu %14llu\n", n,
		       st.flags & KTRACE_CPU_ONLINE ? "online" : "offline",
		       st.flags & KTRACE_CPU_READER ? "yes" : "no", st.buf_records,
		       (unsigned long long)st.written, (unsigned long long)st.lost,
		       (unsigned long long)st.read);
	}
}

int main(int argc, char **argv)
{
	struct kt_opts opts = KT_OPTS(options, true);	/* a command follows */
	struct ktrace_opts o = { .output = "trace", .wait_ms = 100, .spool_size = 256u << 20,
				 .send_wait = 30, .zstd_level = KTFILE_ZSTD_LEVEL };
	const char **cpu_args = xcalloc(argc, sizeof(*cpu_args));
	unsigned int nr_cpu_args = 0;
	bool list = false, recording, output_given = false;
	struct ktrace_info info;
	uint32_t mask = 0;
	int ctl, ret = 0, c;
	const char **probe_specs = xcalloc(argc, sizeof(*probe_specs));
	unsigned int nr_probe_specs = 0;
	const char *list_probes = NULL;
	struct probe_set probes;

	util_set_progname("ktrace");
	probe_set_init(&probes);
	while ((c = kt_getopt(&opts, argc, argv)) != -1) {
		switch (c) {
		case 'e':
			if (ktev_parse_mask(optarg, 0, &mask) < 0)	/* checked now, applied later */
				exit(KT_USAGE_EXIT);
			o.events = optarg;
			break;
		case 's':
			o.status = true;
			break;
		case OPT_FLIGHT:
			o.flight = true;
			break;
		case 'z':
			o.zstd = true;
			break;
		case OPT_ZSTD_LEVEL: {
			int min, max;

			if (!ktfile_zstd_parse_level(optarg, &o.zstd_level, &min, &max))
				kt_usage_error("--zstd-level %s: not a zstd level (%d-%d)",
					       optarg, min, max);
			o.zstd = true;
			break;
		}
		case 'c':
			parse_cpus(optarg, -1, NULL, 0);
			cpu_args[nr_cpu_args++] = optarg;
			break;
		case 'w':
			o.wait_ms = parse_number('w', optarg, 1, 3600000,
						 "a number of milliseconds");
			break;
		case 'o':
			if (!*optarg)
				kt_usage_error("-o: empty file name");
			o.output = optarg;
			output_given = true;
			break;
		case 'l':
			list = true;
			break;
		case 'd': {
			char *end;

			o.duration = strtod(optarg, &end);
			if (end == optarg || *end || !isfinite(o.duration) ||
			    o.duration <= 0 || o.duration > 1e9)
				kt_usage_error("-d %s: not a number of seconds above 0", optarg);
			break;
		}
		case 'b':
			o.buf_records = parse_number('b', optarg, KTRACE_BUF_MIN,
						     KTRACE_BUF_MAX, "a number of records");
			break;
		case 'P':
			probe_specs[nr_probe_specs++] = optarg;
			break;
		case 'L':
			list_probes = optarg;
			break;
		case OPT_DEBUG_DIR:
			if (!*optarg)
				kt_usage_error("--debug-dir: empty directory name");
			probes.debug_dir = optarg;
			break;
		case 'p':
			if (probes.nr_pids == KTRACE_PROBE_MAX_PIDS)
				kt_usage_error("-p: more than %d processes", KTRACE_PROBE_MAX_PIDS);
			probes.pids[probes.nr_pids++] = parse_number('p', optarg, 1, 0x7fffffff,
								     "a process id");
			break;
		case OPT_SEND:
			o.send = optarg;
			break;
		case OPT_LISTEN:
			o.listen = optarg;
			break;
		case OPT_KEY:
			if (!*optarg)
				kt_usage_error("--key: empty file name");
			o.key = optarg;
			break;
		case OPT_SPOOL:
			if (!*optarg)
				kt_usage_error("--spool: empty directory name");
			o.spool = optarg;
			break;
		case OPT_SPOOL_SIZE:
			o.spool_size = parse_size(optarg);
			break;
		case OPT_NAME:
			if (!ktnet_name_ok(optarg))
				kt_usage_error("--name %s: a machine name is 1-63 of A-Z a-z 0-9 . _ - "
					       "(not . first)", optarg);
			o.name = optarg;
			break;
		case OPT_SEND_WAIT: {
			char *end;

			o.send_wait = strtod(optarg, &end);
			if (end == optarg || *end || !isfinite(o.send_wait) || o.send_wait < 0 ||
			    o.send_wait > 1e6)
				kt_usage_error("--send-wait %s: not a number of seconds", optarg);
			break;
		}
		case 'q':
			verbose = -1;
			break;
		case 'v':
			verbose = verbose < 0 ? 1 : verbose + 1;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			kt_version("ktrace");
			return 0;
		}
	}
	if (optind < argc)
		o.command = argv + optind;
	if (list) {
		ktev_list(stdout);
		return 0;
	}
	if (list_probes)
		return probe_list(list_probes, probes.debug_dir, stdout);
	if (o.listen) {
		if (o.send || o.command || nr_cpu_args || o.events || o.flight || nr_probe_specs)
			kt_usage_error("--listen: the collector records nothing itself "
				       "(no --send, -e, -c, --flight, -P or command)");
		if (!output_given)
			o.output = ".";
		return collect(&o);
	}
	if ((o.spool || o.name || o.key) && !o.send)
		kt_usage_error("--spool, --spool-size, --name, --key: only with --send "
			       "(--key: or --listen)");
	if (o.send && output_given)
		kt_usage_error("-o: not with --send (the collector names the files)");
	if (o.send && o.zstd)
		kt_usage_error("-z: not with --send (frames are compressed on the wire; "
			       "the collector writes the files)");
	if (o.send && o.flight)
		kt_usage_error("--send: not with --flight (its snapshots are files)");
	if (probes.nr_pids && !nr_probe_specs)
		kt_usage_error("-p: only with -P (the processes to probe)");
	if (probes.nr_pids && o.command)
		kt_usage_error("-p: not with a COMMAND (its probes are in the COMMAND)");
	/* every spec resolved before the device is touched: a bad one costs nothing */
	for (unsigned int i = 0; i < nr_probe_specs; i++)
		probe_parse(&probes, probe_specs[i]);
	if (probes.nr > KTRACE_PROBE_MAX_ID)
		die("-P: %u probes; the kernel has ids for %d", probes.nr, KTRACE_PROBE_MAX_ID);
	if (probes.nr)
		o.probes = &probes;
	recording = nr_cpu_args || o.duration || o.command || o.flight || probes.nr || o.send;
	if (!recording && !o.events && !o.status && !o.buf_records)
		kt_usage_error("nothing to do: give -e, -s, -b, -c, -d or a command");

	o.dev = getenv("KTRACE_DEV");
	if (!o.dev || !*o.dev)
		o.dev = "/dev/ktrace";
	ctl = dev_open(o.dev);
	dev_info(ctl, o.dev, &info);
	if (o.events)
		mask = parse_mask(o.events, info.mask);
	/* probes record into their group: the mask as it is (or -e's) and it */
	if (probes.nr) {
		mask = (o.events ? mask : info.mask) | KTRACE_GRP_probe;
		o.events = o.events ? o.events : "+probe";
	}
	if (o.buf_records)
		dev_set_buf_size(ctl, o.dev, &info, o.buf_records,
				 o.events && !recording ? mask : info.mask);

	if (recording) {
		o.nr_cpus = info.nr_cpu_ids;
		o.cpus = xcalloc(o.nr_cpus, sizeof(*o.cpus));
		for (unsigned int i = 0; i < nr_cpu_args; i++)
			parse_cpus(cpu_args[i], ctl, o.cpus, o.nr_cpus);
		if (!nr_cpu_args)
			parse_cpus("all", ctl, o.cpus, o.nr_cpus);
		ret = o.flight ? flight(&o, ctl, &info, o.events != NULL, mask) :
				 record(&o, ctl, &info, o.events != NULL, mask);
	} else if (o.events && !o.buf_records) {
		dev_set_mask(ctl, o.dev, mask);
		/* off, and no flight recorder reading: the normal mode again */
		if (!mask && (info.flags & KTRACE_INFO_OVERWRITE))
			dev_set_mode(ctl, o.dev, 0);
	}
	if (o.status) {
		dev_info(ctl, o.dev, &info);
		show_status(ctl, &info);
	}
	return ret;
}
