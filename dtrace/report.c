// SPDX-License-Identifier: GPL-2.0
/*
 * report (--report, --flat, --format=csv): per function, the user threads'
 * calls, total time, self time and the average, shortest and longest call;
 * summed over the threads, or per thread (--per-thread); sorted by --sort's
 * keys.  --flat is the same table with its first three columns.
 *
 *        CALLS      TOTAL(us)       SELF(us)        AVG(us)        MIN(us)        MAX(us)  FUNCTION  (FILE:LINE)
 *           17          1.082          0.641          0.147          0.040          0.320  rec  rep.c:8
 *
 * Total time is entry to exit, counted for a recursive function's
 * outermost calls only (uftrace report's rule: the time it ran, not the
 * same nanoseconds once per level); average, min and max are of each
 * call, inner calls too, so a recursive function's average times its
 * calls exceeds its total.  Self time is the total less the callees'.
 *
 * --diff OLD: the same table of two traces joined by function (name and
 * file), each value of both and the difference, NEW less OLD, absolute
 * and in percent of OLD, largest difference of the first sort key first.
 * The old trace is read first, by its own run of the format (keep_old:
 * its table is kept, nothing written); the new one's run writes the diff.
 */
#define _GNU_SOURCE		/* qsort_r() */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "opts.h"
#include "util.h"

enum layout { LAYOUT_TEXT, LAYOUT_FLAT, LAYOUT_CSV };

/* A line of the table: one function, of one thread with --per-thread. */
struct report_row {
	struct call_totals t;
	const char *name, *file;	/* t.fn's, or copies in a kept table */
	unsigned int line;
	const struct call_thread *thread;	/* --per-thread: whose; else NULL */
	unsigned int thread_index;	/* order of the thread's first event */
};

struct report_table {
	struct report_row *rows;
	size_t nr, alloc;
	uint64_t calls, repairs;
	unsigned int nr_threads, nr_fns;	/* nr_fns: rows but for --per-thread */
	bool copied;			/* names are copies (report_table_free()) */
};

/* The columns, in this order, and the --sort keys: each a value of a row. */
static const struct {
	const char *key, *head, *csv;
	bool time;
} columns[] = {
	[REPORT_CALLS] = { "calls", "CALLS", "calls", false },
	[REPORT_TOTAL] = { "total", "TOTAL(us)", "total_ns", true },
	[REPORT_SELF] = { "self", "SELF(us)", "self_ns", true },
	[REPORT_AVG] = { "avg", "AVG(us)", "avg_ns", true },
	[REPORT_MIN] = { "min", "MIN(us)", "min_ns", true },
	[REPORT_MAX] = { "max", "MAX(us)", "max_ns", true },
	[REPORT_NAME] = { "name", NULL, NULL, false },
};
#define NR_VALUES	REPORT_NAME	/* the columns that are numbers */

static uint64_t value(const struct call_totals *t, enum report_key k)
{
	switch (k) {
	case REPORT_CALLS: return t->calls;
	case REPORT_TOTAL: return t->total;
	case REPORT_SELF: return t->self;
	case REPORT_AVG: return t->calls ? t->all / t->calls : 0;
	case REPORT_MIN: return t->min;
	case REPORT_MAX: return t->max;
	default: return 0;
	}
}

void report_parse_sort(struct report_opts *opts, const char *keys)
{
	const char *p = keys;

	opts->nr_keys = 0;
	do {
		size_t len = strcspn(p, ",");
		unsigned int k;

		for (k = 0; k < ARRAY_SIZE(columns); k++)
			if (strlen(columns[k].key) == len && !strncmp(p, columns[k].key, len))
				break;
		if (k == ARRAY_SIZE(columns))
			kt_usage_error("bad --sort key '%.*s' in '%s' (total, self, calls, avg, "
				       "min, max, name; several: total,name)", (int)len, p, keys);
		if (opts->nr_keys == REPORT_MAX_KEYS)
			kt_usage_error("--sort '%s': more than %d keys", keys, REPORT_MAX_KEYS);
		opts->keys[opts->nr_keys++] = k;
		p += len;
	} while (*p++);
}

/* ---- the table ------------------------------------------------------------ */

struct report_walk {
	struct report_table *table;
	const struct calls *calls;
	struct call_totals *fns;	/* by sym_func id, for the threads walked so far */
	unsigned int nr_fns;
	uint8_t *seen;			/* by sym_func id: in a row already */
	unsigned int nr_seen;
};

static void report_step(void *ctx, struct call_thread *t, const struct call_step *s)
{
	struct report_walk *w = ctx;

	if (s->kind == STEP_NOTE || s->repair)
		w->table->repairs++;
	if (s->kind == STEP_EXIT)
		calls_add_totals(w->calls, &w->fns, &w->nr_fns, s);
}

/* Rows for what @w added up since the last harvest, of @thread or all. */
static void harvest(struct report_walk *w, const struct call_thread *thread, unsigned int index)
{
	struct report_table *table = w->table;

	for (unsigned int i = 0; i < w->nr_fns; i++) {
		struct call_totals *t = &w->fns[i];
		struct report_row *r;

		if (!t->fn)
			continue;
		if (table->nr == table->alloc) {
			table->alloc = table->alloc ? 2 * table->alloc : 256;
			table->rows = xrealloc(table->rows, table->alloc * sizeof(*table->rows));
		}
		if (t->fn->id >= w->nr_seen) {
			w->seen = xrealloc(w->seen, w->nr_fns);
			memset(w->seen + w->nr_seen, 0, w->nr_fns - w->nr_seen);
			w->nr_seen = w->nr_fns;
		}
		if (!w->seen[t->fn->id]) {
			w->seen[t->fn->id] = 1;
			table->nr_fns++;
		}
		r = &table->rows[table->nr++];
		*r = (struct report_row){ .t = *t, .name = t->fn->name, .file = t->fn->file,
					  .line = t->fn->line, .thread = thread,
					  .thread_index = index };
		table->calls += t->calls;
		memset(t, 0, sizeof(*t));
	}
}

static struct report_table *report_table(struct dtrace *dt, bool per_thread)
{
	struct report_table *table = xcalloc(1, sizeof(*table));
	struct report_walk w = { .table = table, .calls = dt->calls };
	struct call_thread **threads = calls_threads(dt->calls, &table->nr_threads);

	for (unsigned int i = 0; i < table->nr_threads; i++) {
		calls_walk(dt->calls, threads[i], report_step, &w);
		if (per_thread)
			harvest(&w, threads[i], i);
	}
	if (!per_thread)
		harvest(&w, NULL, 0);
	free(w.fns);
	free(w.seen);
	return table;
}

/* The table, its names its own: the old trace's symbols are freed after its run. */
static void table_copy_names(struct report_table *table)
{
	for (size_t i = 0; i < table->nr; i++) {
		struct report_row *r = &table->rows[i];

		r->name = xstrdup(r->name);
		r->file = r->file ? xstrdup(r->file) : NULL;
		r->t.fn = NULL;
		r->thread = NULL;
	}
	table->copied = true;
}

void report_table_free(struct report_table *table)
{
	if (!table)
		return;
	if (table->copied)
		for (size_t i = 0; i < table->nr; i++) {
			free((char *)table->rows[i].name);
			free((char *)table->rows[i].file);
		}
	free(table->rows);
	free(table);
}

/* ---- sorting -------------------------------------------------------------- */

/* What sorts the rows (qsort_r()'s context): the keys, then the name. */
struct sort_keys {
	const enum report_key *keys;
	unsigned int nr;
};

static int cmp_u64_desc(uint64_t x, uint64_t y)
{
	return x == y ? 0 : x > y ? -1 : 1;
}

static int cmp_name(const struct report_row *x, const struct report_row *y)
{
	int c = strcmp(x->name, y->name);

	if (c)
		return c;
	if (!x->file || !y->file)
		return !!x->file - !!y->file;
	return strcmp(x->file, y->file);
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct report_row *x = a, *y = b;
	const struct sort_keys *sk = ctx;
	int c;

	if (x->thread_index != y->thread_index)
		return x->thread_index < y->thread_index ? -1 : 1;
	for (unsigned int i = 0; i < sk->nr; i++) {
		c = sk->keys[i] == REPORT_NAME ? cmp_name(x, y) :
			cmp_u64_desc(value(&x->t, sk->keys[i]), value(&y->t, sk->keys[i]));
		if (c)
			return c;
	}
	return cmp_name(x, y);
}

/* (no rows: no array, which qsort_r() must not be given) */
static void sort_table(struct report_table *table, struct sort_keys *sk)
{
	if (table->nr)
		qsort_r(table->rows, table->nr, sizeof(*table->rows), cmp_rows, sk);
}

/* ---- writing -------------------------------------------------------------- */

/* A CSV field: quoted where it has a comma, quote or line break (RFC 4180). */
static void csv_put(struct outbuf *o, const char *s)
{
	bool quote = s[strcspn(s, ",\"\r\n")] != '\0';
	char *p = out_reserve(o);

	if (quote)
		*p++ = '"';
	for (; *s; s++) {
		if (p - o->p > DTRACE_LINE_MAX / 2) {
			out_commit(o, p);
			p = out_reserve(o);
		}
		if (*s == '"')
			*p++ = '"';
		*p++ = *s;
	}
	if (quote)
		*p++ = '"';
	out_commit(o, p);
}

static void put_summary(struct outbuf *o, const struct report_table *t)
{
	out_printf(o, "%u functions, %llu calls in %u threads", t->nr_fns,
		   (unsigned long long)t->calls, t->nr_threads);
	if (t->repairs)
		out_printf(o, "; %llu repairs of unbalanced calls (see --calltree)",
			   (unsigned long long)t->repairs);
}

static void put_function(struct outbuf *o, const struct report_row *r)
{
	out_printf(o, "  %s", r->name);
	if (r->file)
		out_printf(o, "  %s:%u", r->file, r->line);
	out_printf(o, "\n");
}

static void write_text(struct outbuf *o, const struct report_table *t, unsigned int nr_cols)
{
	const struct call_thread *thread = NULL;

	out_printf(o, "# ");
	put_summary(o, t);
	out_printf(o, "\n%12s", columns[0].head);
	for (unsigned int c = 1; c < nr_cols; c++)
		out_printf(o, " %14s", columns[c].head);
	out_printf(o, "  FUNCTION  (FILE:LINE)\n");
	for (size_t i = 0; i < t->nr; i++) {
		const struct report_row *r = &t->rows[i];
		char *p;

		if (r->thread && r->thread != thread) {
			thread = r->thread;
			out_printf(o, "# thread %s-%u (pid %u)\n", thread->comm, thread->tid,
				   thread->pid);
		}
		p = out_reserve(o);
		p = ktev_put_u64_width(p, r->t.calls, 12);
		for (unsigned int c = 1; c < nr_cols; c++) {
			*p++ = ' ';
			p = dtrace_put_us(p, value(&r->t, c), 14);
		}
		out_commit(o, p);
		put_function(o, r);
	}
}

static void write_csv(struct outbuf *o, const struct report_table *t, bool per_thread)
{
	out_printf(o, "%sfunction,file,line", per_thread ? "pid,tid,comm," : "");
	for (unsigned int c = 0; c < NR_VALUES; c++)
		out_printf(o, ",%s", columns[c].csv);
	out_printf(o, "\n");
	for (size_t i = 0; i < t->nr; i++) {
		const struct report_row *r = &t->rows[i];

		if (per_thread) {
			out_printf(o, "%u,%u,", r->thread->pid, r->thread->tid);
			csv_put(o, r->thread->comm);
			out_printf(o, ",");
		}
		csv_put(o, r->name);
		out_printf(o, ",");
		if (r->file) {
			csv_put(o, r->file);
			out_printf(o, ",%u", r->line);
		} else {
			out_printf(o, ",");
		}
		for (unsigned int c = 0; c < NR_VALUES; c++)
			out_printf(o, ",%llu", (unsigned long long)value(&r->t, c));
		out_printf(o, "\n");
	}
}

/* ---- --diff --------------------------------------------------------------- */

/* A function of either trace: its rows in both (zeros where it is not). */
struct diff_row {
	struct report_row row;		/* the new trace's, or the old one's if gone */
	struct call_totals old;
};

static int64_t diff_of(const struct diff_row *d, enum report_key k)
{
	return (int64_t)(value(&d->row.t, k) - value(&d->old, k));
}

/* By the size of the difference, either way (uftrace's "abs" policy). */
static int cmp_diff(const void *pa, const void *pb, void *ctx)
{
	const struct diff_row *a = pa, *b = pb;
	const struct report_row *x = &a->row, *y = &b->row;
	const struct sort_keys *sk = ctx;

	for (unsigned int i = 0; i < sk->nr; i++) {
		int64_t da, db;
		int c;

		if (sk->keys[i] == REPORT_NAME) {
			c = cmp_name(x, y);
		} else {
			da = diff_of(a, sk->keys[i]);
			db = diff_of(b, sk->keys[i]);
			c = cmp_u64_desc(da < 0 ? -(uint64_t)da : (uint64_t)da,
					 db < 0 ? -(uint64_t)db : (uint64_t)db);
		}
		if (c)
			return c;
	}
	return cmp_name(x, y);
}

/* Join @old and @new by function: both sorted by name first. */
static struct diff_row *join(struct report_table *old, struct report_table *new, size_t *nr)
{
	struct diff_row *d = xcalloc(old->nr + new->nr + 1, sizeof(*d));
	struct sort_keys by_name = { NULL, 0 };
	size_t i = 0, j = 0, n = 0;

	sort_table(old, &by_name);
	sort_table(new, &by_name);
	while (i < old->nr || j < new->nr) {
		int c = i == old->nr ? 1 : j == new->nr ? -1 :
			cmp_name(&old->rows[i], &new->rows[j]);

		if (c < 0) {
			d[n].row = old->rows[i];
			memset(&d[n].row.t, 0, sizeof(d[n].row.t));
			d[n++].old = old->rows[i++].t;
		} else {
			d[n].row = new->rows[j++];
			if (!c)
				d[n].old = old->rows[i++].t;
			n++;
		}
	}
	*nr = n;
	return d;
}

/* "+1.250", "-0.010": signed ns as us; or a count */
static void put_signed(char *buf, size_t size, int64_t v, bool time)
{
	uint64_t a = v < 0 ? -(uint64_t)v : (uint64_t)v;

	if (time)
		snprintf(buf, size, "%c%llu.%03llu", v < 0 ? '-' : '+',
			 (unsigned long long)(a / 1000), (unsigned long long)(a % 1000));
	else
		snprintf(buf, size, "%c%llu", v < 0 ? '-' : '+', (unsigned long long)a);
}

/* The difference in percent of the old value; false where that is 0. */
static bool percent(const struct diff_row *d, enum report_key k, double *pct)
{
	uint64_t old = value(&d->old, k);

	if (!old)
		return false;
	*pct = 100.0 * (double)diff_of(d, k) / (double)old;
	return true;
}

static void write_diff_text(struct outbuf *o, const struct report_opts *opts,
			    const struct report_table *old, const struct report_table *new,
			    const struct diff_row *d, size_t nr, const enum report_key *cols,
			    unsigned int nr_cols)
{
	char buf[64];
	double pct;

	out_printf(o, "# old: %s: ", opts->old_path);
	put_summary(o, old);
	out_printf(o, "\n# new: %s: ", opts->new_path);
	put_summary(o, new);
	out_printf(o, "\n# DIFF: new less old; DIFF%%: of old\n");
	for (unsigned int c = 0; c < nr_cols; c++)
		out_printf(o, c + 1 < nr_cols ? "%-51s" : "%s\n", columns[cols[c]].head);
	for (unsigned int c = 0; c < nr_cols; c++)
		out_printf(o, "%s%12s %12s %12s %11s", c ? " " : "", "OLD", "NEW", "DIFF",
			   "DIFF%");
	out_printf(o, "  FUNCTION  (FILE:LINE)\n");
	for (size_t i = 0; i < nr; i++) {
		for (unsigned int c = 0; c < nr_cols; c++) {
			enum report_key k = cols[c];
			char *p = out_reserve(o);

			if (c)
				*p++ = ' ';
			if (columns[k].time) {
				p = dtrace_put_us(p, value(&d[i].old, k), 12);
				*p++ = ' ';
				p = dtrace_put_us(p, value(&d[i].row.t, k), 12);
			} else {
				p = ktev_put_u64_width(p, value(&d[i].old, k), 12);
				*p++ = ' ';
				p = ktev_put_u64_width(p, value(&d[i].row.t, k), 12);
			}
			out_commit(o, p);
			put_signed(buf, sizeof(buf), diff_of(&d[i], k), columns[k].time);
			out_printf(o, " %12s", buf);
			if (percent(&d[i], k, &pct))
				out_printf(o, " %+10.1f%%", pct);
			else
				out_printf(o, " %11s", "-");
		}
		put_function(o, &d[i].row);
	}
}

static void write_diff_csv(struct outbuf *o, const struct diff_row *d, size_t nr)
{
	double pct;

	out_printf(o, "function,file,line");
	for (unsigned int c = 0; c < NR_VALUES; c++)
		out_printf(o, ",old_%s,new_%s,diff_%s,diff_%s_pct", columns[c].csv,
			   columns[c].csv, columns[c].csv, columns[c].csv);
	out_printf(o, "\n");
	for (size_t i = 0; i < nr; i++) {
		const struct report_row *r = &d[i].row;

		csv_put(o, r->name);
		out_printf(o, ",");
		if (r->file) {
			csv_put(o, r->file);
			out_printf(o, ",%u", r->line);
		} else {
			out_printf(o, ",");
		}
		for (unsigned int c = 0; c < NR_VALUES; c++) {
			out_printf(o, ",%llu,%llu,%lld,", (unsigned long long)value(&d[i].old, c),
				   (unsigned long long)value(&r->t, c),
				   (long long)diff_of(&d[i], c));
			if (percent(&d[i], c, &pct))
				out_printf(o, "%.3f", pct);
		}
		out_printf(o, "\n");
	}
}

/* ---- the formats ---------------------------------------------------------- */

struct report {
	enum layout layout;
};

bool report_format(const struct dtrace_format *fmt)
{
	return fmt == &dtrace_report || fmt == &dtrace_flat || fmt == &dtrace_report_csv;
}

static void report_end(struct dtrace *dt, struct outbuf *o)
{
	static const enum report_key by_total[] = { REPORT_TOTAL };
	static const enum report_key by_self_calls[] = { REPORT_SELF, REPORT_CALLS };
	static const struct report_opts defaults;
	const struct report_opts *opts = dt->report ? dt->report : &defaults;
	struct report *r = dt->fmt_state;
	struct sort_keys sk = { opts->keys, opts->nr_keys };
	struct report_table *table = report_table(dt, opts->per_thread);

	if (!sk.nr && r->layout == LAYOUT_FLAT)
		sk = (struct sort_keys){ by_self_calls, ARRAY_SIZE(by_self_calls) };
	else if (!sk.nr)
		sk = (struct sort_keys){ by_total, ARRAY_SIZE(by_total) };
	if (opts->keep_old) {
		table_copy_names(table);
		dt->report->old = table;
		free(r);
		return;
	}
	if (opts->old) {
		enum report_key cols[NR_VALUES];
		unsigned int nr_cols = 0;
		struct diff_row *d;
		size_t nr;

		/* the first key's values first, then total, self and calls */
		static const enum report_key shown[] = { REPORT_TOTAL, REPORT_SELF, REPORT_CALLS };

		if (sk.keys[0] != REPORT_NAME)
			cols[nr_cols++] = sk.keys[0];
		for (unsigned int c = 0; c < ARRAY_SIZE(shown); c++)
			if (shown[c] != sk.keys[0])
				cols[nr_cols++] = shown[c];
		d = join(opts->old, table, &nr);
		qsort_r(d, nr, sizeof(*d), cmp_diff, &sk);
		if (r->layout == LAYOUT_CSV)
			write_diff_csv(o, d, nr);
		else
			write_diff_text(o, opts, opts->old, table, d, nr, cols, nr_cols);
		free(d);
	} else {
		sort_table(table, &sk);
		if (r->layout == LAYOUT_CSV)
			write_csv(o, table, opts->per_thread);
		else
			write_text(o, table, r->layout == LAYOUT_FLAT ? 3 : NR_VALUES);
	}
	report_table_free(table);
	free(r);
}

/* --report, --flat and --format=csv: one format but for the layout */
#define REPORT_FORMAT(var, fmt_name, fmt_layout)				\
	static void *var##_start(struct dtrace *dt, struct outbuf *o)		\
	{									\
		struct report *r = xcalloc(1, sizeof(*r));			\
										\
		r->layout = fmt_layout;						\
		return r;							\
	}									\
	const struct dtrace_format var = {					\
		.name = fmt_name,						\
		.flags = DTRACE_FMT_CALLS | DTRACE_FMT_CALL_VIEW,		\
		.start = var##_start,						\
		.event = calls_event,						\
		.end = report_end,						\
	}

REPORT_FORMAT(dtrace_report, "report", LAYOUT_TEXT);
REPORT_FORMAT(dtrace_flat, "flat", LAYOUT_FLAT);
REPORT_FORMAT(dtrace_report_csv, "csv", LAYOUT_CSV);
