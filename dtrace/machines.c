// SPDX-License-Identifier: GPL-2.0
/*
 * machines: the traces of several machines on one timeline.
 *
 * A machine directory is what `ktrace --listen` writes for each sender,
 * DIR/NAME (trace.cpuN, trace.kallsyms, ..., trace.clock); a collector's
 * DIR holds one per machine.  Given such directories, dtrace merges all
 * their files, names each event's machine in a column before the CPU and
 * keeps --machine's alone.
 *
 * The common clock is the collector's CLOCK_MONOTONIC, in ns.  trace.clock
 * has the sender's clock probes, one line "t1 t2 t3 t4" each: t1 the
 * sender sent it, t2 the collector got it, t3 answered, t4 the sender got
 * the answer.  Each says the offset (collector minus sender) is
 * ((t2 - t1) + (t3 - t4)) / 2, give or take half its round trip
 * (t4 - t1) - (t3 - t2).  Of every 8 probes in a row the one with the
 * shortest round trip is kept (a delayed one says little), and a line
 * through the kept ones gives the offset at any time and the drift.  The
 * error bound reported is the largest distance, over the kept probes, of
 * the line from the far end of the probe's interval: how far the line may
 * be from the truth where it was measured.  A machine's TSC becomes its
 * CLOCK_MONOTONIC through its files' headers (ref_tsc, ref_mono_ns,
 * tsc_hz), then the collector's through the line.
 */
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dtrace.h"
#include "files.h"
#include "ksyms.h"
#include "probes.h"
#include "util.h"

#define KTNET_NAME_MAX_COLUMN	64	/* ktrace's machine names are shorter */
#define PROBE_WINDOW	8	/* probes of which the shortest round trip is kept */
#define CLOCK_LINE_MAX	256	/* four numbers below 2^63 and blanks fit */

struct machine {
	char *name;		/* the directory's name */
	char *dir;
	dev_t dev;		/* the directory's: given twice, read once */
	ino_t ino;
	unsigned int nr_files;
	unsigned int probes, kept;	/* in trace.clock; kept by the filter */
	double mid;		/* the line: offset(m) = offset + drift * (m - mid) */
	double offset, drift;
	double bound;		/* ns */
	double drift_bound;	/* of the drift; 0: no drift measured */
	double min_rtt;
	/* its own: the same addresses, irqs, probe ids mean other things elsewhere */
	struct ksyms *ksyms;
	struct irq_names *irqs;
	struct probes *probe_names;
};

struct machines {
	struct machine *m;
	unsigned int nr;
	unsigned int *of_trace;	/* the machine of each trace given to the merge */
	const char *only;	/* --machine */
	unsigned int width;	/* of the column */
	unsigned int nr_strays;	/* files in machine directories that are none of theirs */
	char *first_stray;
};

struct clock_probe {
	double m, offset, rtt;
};

static int by_time(const void *a, const void *b)
{
	const struct clock_probe *x = a, *y = b;

	return (x->m > y->m) - (x->m < y->m);
}

/*
 * One line of trace.clock: four CLOCK_MONOTONIC times in ns (below 2^63).
 * 1: a probe in *@p; 0: a probe of no real exchange (t4 before t1, t3
 * before t2, the answer longer than the round trip), left out; -1: no probe.
 */
static int parse_probe(const char *line, struct clock_probe *p)
{
	uint64_t t[4];
	const char *s = line;

	for (int i = 0; i < 4; i++) {
		char *end;

		while (*s == ' ' || *s == '\t')
			s++;
		if (*s < '0' || *s > '9')
			return -1;	/* strtoull takes "-1" */
		errno = 0;
		t[i] = strtoull(s, &end, 10);
		if (errno || t[i] > INT64_MAX)
			return -1;
		s = end;
	}
	if (s[strspn(s, " \t\n")])
		return -1;
	if (t[3] < t[0] || t[2] < t[1] || t[3] - t[0] < t[2] - t[1])
		return 0;
	*p = (struct clock_probe){
		.m = ((double)t[0] + (double)t[3]) / 2,
		.offset = (((double)t[1] - (double)t[0]) + ((double)t[2] - (double)t[3])) / 2,
		.rtt = (double)(t[3] - t[0]) - (double)(t[2] - t[1]),
	};
	return 1;
}

/*
 * The next line of @f into @buf, without its '\n'; false at the end.  A
 * line longer than any probe, or with a NUL in it (a crash can leave a
 * block of zeros where a line was being written), comes back empty, no
 * probe: it is read to its own end, so the line after stays whole.
 */
static bool read_line(FILE *f, char buf[CLOCK_LINE_MAX])
{
	size_t len = 0;
	bool bad = false;
	int c;

	while ((c = getc(f)) != EOF && c != '\n') {
		if (!c || len == CLOCK_LINE_MAX - 1)
			bad = true;
		else
			buf[len++] = c;
	}
	buf[bad ? 0 : len] = '\0';
	return c != EOF || len || bad;
}

static void fit_clock(struct machine *mc)
{
	char *path = xmalloc(strlen(mc->dir) + 16);
	struct clock_probe *p = NULL, *kept;
	unsigned int n = 0, alloc = 0, k = 0, bad = 0, first_bad = 0, line_nr = 0;
	double sm = 0, so = 0, smm = 0, smo = 0;
	char buf[CLOCK_LINE_MAX];
	FILE *f;
	int got, fd;

	sprintf(path, "%s/trace.clock", mc->dir);
	/* a regular file only: a FIFO or a device there would never end */
	fd = kt_open_regular(path);
	if (fd == -ENOENT) {
		free(path);
		return;
	}
	if (fd == -EINVAL)
		die("%s: not a regular file", path);
	f = fd < 0 ? NULL : fdopen(fd, "r");
	if (!f)
		die("%s: %s", path, strerror(fd < 0 ? -fd : errno));
	/*
	 * A line that is no probe (a collector's write cut short by a full
	 * disk leaves one) is left out, said once: the others still align.
	 */
	while (read_line(f, buf)) {
		line_nr++;
		if (n == alloc) {
			alloc = alloc ? 2 * alloc : 64;
			p = xrealloc(p, alloc * sizeof(*p));
		}
		got = parse_probe(buf, &p[n]);
		n += got > 0;
		if (got < 0 && !bad++)
			first_bad = line_nr;
	}
	if (ferror(f))
		die("%s: read error: %s", path, strerror(errno));
	if (bad)
		pr_warn("%s: %u of %u lines are not clock probes \"t1 t2 t3 t4\" (ns), the first "
			"line %u: left out", path, bad, line_nr, first_bad);
	fclose(f);
	mc->probes = n;
	if (!n) {
		free(p);
		free(path);
		return;
	}
	qsort(p, n, sizeof(*p), by_time);
	kept = xcalloc(n, sizeof(*kept));
	mc->min_rtt = INFINITY;
	for (unsigned int i = 0; i < n; i += PROBE_WINDOW) {
		struct clock_probe *best = &p[i];

		for (unsigned int j = i; j < n && j < i + PROBE_WINDOW; j++)
			if (p[j].rtt < best->rtt)
				best = &p[j];
		kept[k++] = *best;
		if (best->rtt < mc->min_rtt)
			mc->min_rtt = best->rtt;
	}
	for (unsigned int i = 0; i < k; i++)
		sm += kept[i].m;
	mc->mid = sm / k;
	for (unsigned int i = 0; i < k; i++) {
		double dm = kept[i].m - mc->mid;

		so += kept[i].offset;
		smm += dm * dm;
		smo += dm * kept[i].offset;
	}
	mc->offset = so / k;
	/* a drift needs probes a second apart at least */
	mc->drift = k >= 2 && smm > 1e18 / k ? smo / smm : 0;
	/*
	 * Round trips as long as the recording could make any drift; one of
	 * 50 % or more is none that probes measured (and at -100 % time would
	 * stand still): the file is damaged.
	 */
	if (!(fabs(mc->drift) < 0.5))
		die("%s: its clock probes give a drift of %.0f ppm, no clock's: not the "
		    "probes of a recording (damaged?)", path, mc->drift * 1e6);
	for (unsigned int i = 0; i < k; i++) {
		double line = mc->offset + mc->drift * (kept[i].m - mc->mid);
		double d = fabs(line - kept[i].offset) + kept[i].rtt / 2;

		if (d > mc->bound)
			mc->bound = d;
	}
	/*
	 * Two lines within the bound of every kept probe, the first and the
	 * last kept @span apart, differ in slope by 2 * bound / span at most.
	 */
	if (mc->drift)
		mc->drift_bound = 2 * mc->bound / (kept[k - 1].m - kept[0].m);
	mc->kept = k;
	free(kept);
	free(p);
	free(path);
}

/* A directory ktrace --listen made for a machine: it has .session. */
static bool is_machine_dir(const char *dir)
{
	char *p = xmalloc(strlen(dir) + 16);
	struct stat st;
	bool yes;

	sprintf(p, "%s/.session", dir);
	yes = stat(p, &st) == 0 && S_ISREG(st.st_mode);
	free(p);
	return yes;
}

static bool is_dir(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

static int no_dot(const struct dirent *d)
{
	return d->d_name[0] != '.';
}

/* What a name in a machine directory is to dtrace. */
enum machine_name {
	NAME_TRACE,	/* a stream: trace.cpuN, a user thread's trace.pidP.tidT[.N] */
	NAME_SIDE,	/* trace.kallsyms, .irqs, .probes, trace.pidP.maps: read with them */
	NAME_CLOCK,	/* trace.clock: read here (fit_clock()) */
	NAME_STRAY,	/* anything else (notes, an editor's backup): not ours, left alone */
	NAME_BAD,	/* trace.cpu and then no CPU number (trace.cpuX): a damaged name */
};

/* @s past "<digits>" (at least one), or NULL */
static const char *digits(const char *s)
{
	const char *d = s;

	while (*d >= '0' && *d <= '9')
		d++;
	return d > s ? d : NULL;
}

/* @s is "" or ".zst": the end of a stream's name */
static bool stream_end(const char *s)
{
	return s && (!*s || !strcmp(s, KTFILE_ZSTD_SUFFIX));
}

static enum machine_name machine_name(const char *name)
{
	static const char *const side[] = { "trace.kallsyms", "trace.irqs", "trace.probes" };
	const char *s;

	if (!strcmp(name, "trace.clock"))
		return NAME_CLOCK;
	for (unsigned int i = 0; i < ARRAY_SIZE(side); i++)
		if (!strcmp(name, side[i]))
			return NAME_SIDE;
	/* trace.cpu0~, trace.cpu0.orig: a copy someone kept, not the stream */
	if (!strncmp(name, "trace.cpu", 9))
		return !(s = digits(name + 9)) ? NAME_BAD : stream_end(s) ? NAME_TRACE : NAME_STRAY;
	if (strncmp(name, "trace.pid", 9) || !(s = digits(name + 9)))
		return NAME_STRAY;
	if (!strcmp(s, ".maps"))
		return NAME_SIDE;
	if (strncmp(s, ".tid", 4) || !(s = digits(s + 4)))
		return NAME_STRAY;
	if (*s == '.' && digits(s + 1))
		s = digits(s + 1);	/* a later process with the same ids */
	return stream_end(s) ? NAME_TRACE : NAME_STRAY;
}

/* DIR/trace.SUFFIX, if the machine has one */
static char *machine_file(const struct machine *mc, const char *suffix)
{
	char *p = xmalloc(strlen(mc->dir) + strlen(suffix) + 8);

	sprintf(p, "%s/trace%s", mc->dir, suffix);
	if (access(p, F_OK) == 0)
		return p;
	free(p);
	return NULL;
}

static void load_machine_files(const struct dtrace *dt, struct machine *mc)
{
	char *p;

	if (dt->decode.raw)
		return;
	if ((p = machine_file(mc, ".kallsyms")))
		mc->ksyms = ksyms_load(p);
	free(p);
	if ((p = machine_file(mc, ".irqs")))
		mc->irqs = irq_names_load(p);
	free(p);
	if ((p = machine_file(mc, ".probes")))
		mc->probe_names = probes_load(p);
	free(p);
}


/*
 * The collector keeps .trace.cpuN.state beside each trace.cpuN it writes:
 * a state without its file is a CPU's records gone (removed, moved).
 */
static void check_cpu_files(const struct machine *mc)
{
	struct dirent **names;
	int k = scandir(mc->dir, &names, NULL, alphasort);

	for (int i = 0; i < k; i++) {
		const char *name = names[i]->d_name;
		size_t len = strlen(name);
		char *path;
		struct stat st;

		if (!strncmp(name, ".trace.cpu", 10) && len > 16 &&
		    !strcmp(name + len - 6, ".state")) {
			path = xmalloc(strlen(mc->dir) + len + 2);
			sprintf(path, "%s/%.*s", mc->dir, (int)len - 7, name + 1);
			if (lstat(path, &st))
				pr_warn("%s: %s: that CPU's events are missing (%s is there)",
					path, strerror(errno), name);
			free(path);
		}
		free(names[i]);
	}
	if (k >= 0)
		free(names);
}

static void add_machine(const struct dtrace *dt, struct machines *ms, const char *dir)
{
	const char *slash;
	size_t len = strlen(dir);
	struct machine *mc;
	struct stat st;

	/*
	 * The same directory under two names (given twice, through a link,
	 * and in its collector's directory) would merge its events twice.
	 */
	if (stat(dir, &st))
		die("%s: %s", dir, strerror(errno));
	for (unsigned int i = 0; i < ms->nr; i++)
		if (ms->m[i].dev == st.st_dev && ms->m[i].ino == st.st_ino) {
			pr_warn("%s: the same directory as %s, given before: read once", dir,
				ms->m[i].dir);
			return;
		}
	ms->m = xrealloc(ms->m, (ms->nr + 1) * sizeof(*ms->m));
	mc = &ms->m[ms->nr++];
	memset(mc, 0, sizeof(*mc));
	mc->dev = st.st_dev;
	mc->ino = st.st_ino;
	mc->dir = xstrdup(dir);
	while (len > 1 && mc->dir[len - 1] == '/')
		mc->dir[--len] = '\0';
	slash = strrchr(mc->dir, '/');
	mc->name = xstrdup(slash ? slash + 1 : mc->dir);
	/* the column has room for the longest name the collector makes */
	if (strlen(mc->name) >= KTNET_NAME_MAX_COLUMN)
		mc->name[KTNET_NAME_MAX_COLUMN - 1] = '\0';
	if (strlen(mc->name) > ms->width)
		ms->width = strlen(mc->name);
	fit_clock(mc);
	load_machine_files(dt, mc);
	check_cpu_files(mc);
}

char **machines_expand(struct dtrace *dt, char *const *args, int nr, int *nr_out)
{
	struct machines *ms;
	char **out = NULL;
	int n = 0;
	bool any = false;

	for (int i = 0; i < nr && !any; i++)
		any = is_dir(args[i]) && is_machine_dir(args[i]);
	for (int i = 0; i < nr && !any; i++) {
		struct dirent **names;
		int k = is_dir(args[i]) ? scandir(args[i], &names, no_dot, alphasort) : -1;

		for (int j = 0; j < k; j++) {
			char *sub = xmalloc(strlen(args[i]) + strlen(names[j]->d_name) + 2);

			sprintf(sub, "%s/%s", args[i], names[j]->d_name);
			any |= is_dir(sub) && is_machine_dir(sub);
			free(sub);
			free(names[j]);
		}
		if (k >= 0)
			free(names);
	}
	if (!any)
		return NULL;

	ms = xcalloc(1, sizeof(*ms));
	ms->only = dt->only_machine;
	dt->machines = ms;
	for (int i = 0; i < nr; i++) {
		struct dirent **names;
		int k;

		if (!is_dir(args[i]))
			die("%s: not a machine directory: with machines (ktrace --listen's "
			    "directories) give directories only", args[i]);
		/* a collector's directory: each machine in it */
		if (!is_machine_dir(args[i])) {
			k = scandir(args[i], &names, no_dot, alphasort);
			if (k < 0)
				die("%s: %s", args[i], strerror(errno));
			for (int j = 0; j < k; j++) {
				char *sub = xmalloc(strlen(args[i]) + strlen(names[j]->d_name) + 2);

				sprintf(sub, "%s/%s", args[i], names[j]->d_name);
				if (is_dir(sub) && is_machine_dir(sub))
					add_machine(dt, ms, sub);
				free(sub);
				free(names[j]);
			}
			free(names);
			continue;
		}
		add_machine(dt, ms, args[i]);
	}
	for (unsigned int i = 0; i < ms->nr; i++) {
		struct dirent **names;
		int k = scandir(ms->m[i].dir, &names, no_dot, alphasort);

		if (k < 0)
			die("%s: %s", ms->m[i].dir, strerror(errno));
		out = xrealloc(out, (n + k + 1) * sizeof(*out));
		for (int j = 0; j < k; j++) {
			const char *name = names[j]->d_name;

			switch (machine_name(name)) {
			case NAME_TRACE:
			case NAME_SIDE:
				out[n] = xmalloc(strlen(ms->m[i].dir) + strlen(name) + 2);
				sprintf(out[n++], "%s/%s", ms->m[i].dir, name);
				break;
			case NAME_CLOCK:	/* the clock probes are read here */
				break;
			case NAME_STRAY:
				if (!ms->nr_strays++) {
					ms->first_stray = xmalloc(strlen(ms->m[i].dir) +
								  strlen(name) + 2);
					sprintf(ms->first_stray, "%s/%s", ms->m[i].dir, name);
				}
				break;
			case NAME_BAD:
				die("%s/%s: not a trace file's name: a machine's CPU streams are "
				    "trace.cpuN or trace.cpuN%s", ms->m[i].dir, name,
				    KTFILE_ZSTD_SUFFIX);
			}
			free(names[j]);
		}
		free(names);
	}
	/* a person's notes beside the traces are theirs: said once, not fatal */
	if (ms->nr_strays == 1)
		pr_info("note: %s: not a trace file (trace.*): left out", ms->first_stray);
	else if (ms->nr_strays)
		pr_info("note: %s and %u more files in the machine directories: not trace "
			"files (trace.*): left out", ms->first_stray, ms->nr_strays - 1);
	if (ms->only) {
		bool found = false;

		for (unsigned int i = 0; i < ms->nr; i++)
			found |= !strcmp(ms->m[i].name, ms->only);
		if (!found)
			die("--machine %s: no such machine among the directories given", ms->only);
	}
	*nr_out = n;
	return out;
}

/* The machine of trace file @path: the one whose directory holds it. */
static unsigned int machine_of(const struct machines *ms, const char *path)
{
	const char *slash = strrchr(path, '/');
	size_t len = slash ? (size_t)(slash - path) : 0;

	for (unsigned int i = 0; i < ms->nr; i++)
		if (strlen(ms->m[i].dir) == len && !strncmp(ms->m[i].dir, path, len))
			return i;
	return 0;
}

/* A time on the common clock as ns: what uint64_t holds of it. */
static uint64_t clock_ns(double at)
{
	return !(at > 0) ? 0 : at >= 0x1p64 ? UINT64_MAX : (uint64_t)at;
}

static void align(void *ctx, struct ktfile_reader *f)
{
	struct machine *mc = &((struct machines *)ctx)->m[f->machine];
	const struct ktfile_header *h = &f->hdr;
	double mono = (double)h->ref_mono_ns;
	double at = mono + mc->offset + mc->drift * (mono - mc->mid);

	if (!h->tsc_hz)
		return;		/* the merge says what is wrong with it */
	mc->nr_files++;
	ktfile_set_tsc_map(f, h->ref_tsc, clock_ns(at), 1e9 / (double)h->tsc_hz * (1 + mc->drift));
	/* --absolute: the machine's own wall clock at its reference */
	f->hdr.ref_tsc = clock_ns(at);
}

struct kt_merge *machines_merge_open(struct dtrace *dt, char **traces, unsigned int nr,
				     unsigned int flags)
{
	struct machines *ms = dt->machines;
	struct kt_merge_machines mm = { .align = align, .ctx = ms, .tsc_hz = 1000000000u };
	unsigned int *of = xcalloc(nr + 1, sizeof(*of));
	struct kt_merge *m;

	for (unsigned int i = 0; i < nr; i++)
		of[i] = machine_of(ms, traces[i]);
	mm.machine = of;
	for (unsigned int i = 0; i < ms->nr; i++)
		if (!ms->m[i].probes)
			pr_warn("%s: no clock probes (trace.clock): its times are taken as "
				"the collector's", ms->m[i].dir);
	m = kt_merge_open_machines(traces, nr, flags, &mm);
	free(of);
	return m;
}

void machines_setup_file(const struct dtrace *dt, struct dtrace_file *df,
			 const struct ktfile_reader *f)
{
	const struct machines *ms = dt->machines;
	const struct machine *mc = &ms->m[f->machine];

	df->machine = mc->name;
	df->machine_len = strlen(mc->name);
	df->machine_nr = f->machine;
	df->ksyms = mc->ksyms;
	df->irqs = mc->irqs;
	df->probes = mc->probe_names;
	if (ms->only && strcmp(ms->only, mc->name))
		df->selected = false;
}

unsigned int machines_width(const struct dtrace *dt)
{
	return dt->machines->width;
}

void machines_report(const struct dtrace *dt, FILE *out)
{
	const struct machines *ms = dt->machines;

	fprintf(out, "%-*s %6s %8s %18s %12s %14s %10s %18s %14s\n", (int)ms->width, "machine",
		"files", "probes", "offset(ns)", "drift(ppm)", "bound(+-ns)", "minrtt(ns)",
		"at(ns)", "drift(+-ppm)");
	for (unsigned int i = 0; i < ms->nr; i++) {
		const struct machine *mc = &ms->m[i];

		if (!mc->probes) {
			fprintf(out, "%-*s %6u %8s %18s %12s %14s %10s %18s %14s\n",
				(int)ms->width, mc->name, mc->nr_files, "0", "-", "-", "unknown",
				"-", "-", "-");
			continue;
		}
		fprintf(out, "%-*s %6u %4u/%-3u %18.0f %12.3f %14.0f %10.0f %18.0f ", (int)ms->width,
			mc->name, mc->nr_files, mc->kept, mc->probes, mc->offset,
			mc->drift * 1e6, mc->bound, mc->min_rtt, mc->mid);
		if (mc->drift_bound)
			fprintf(out, "%14.3f\n", mc->drift_bound * 1e6);
		else
			fprintf(out, "%14s\n", "-");
	}
}

void machines_free(struct dtrace *dt)
{
	struct machines *ms = dt->machines;

	if (!ms)
		return;
	for (unsigned int i = 0; i < ms->nr; i++) {
		free(ms->m[i].name);
		free(ms->m[i].dir);
		ksyms_free(ms->m[i].ksyms);
		irq_names_free(ms->m[i].irqs);
		probes_free(ms->m[i].probe_names);
	}
	free(ms->m);
	free(ms->first_stray);
	free(ms);
	dt->machines = NULL;
}
