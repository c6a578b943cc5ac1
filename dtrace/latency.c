// SPDX-License-Identifier: GPL-2.0
/*
 * latency: --latency A,B [--key VALUE] [--slowest N]: the time from each
 * hit of probe A to the hit of probe B that ends it, for every pair, as
 * counts, percentiles, a log2 histogram and the slowest pairs.
 *
 * A and B are probe names (probes.h: "OSD::enqueue_op", "enqueue_op",
 * "fn%return"); every probe of BASE.probes that matches a name is that
 * side.  A pair is an A hit and the next B hit with the same key: the
 * value --key names (a number both A and B record), or without --key the
 * thread, so that B = A's function%return measures its calls.  What does
 * not pair is counted, never guessed: an A whose key is taken by an A not
 * yet ended replaces it (the earlier one counts as "A again before B"), a
 * B with no A pending counts as "B without A", the A still pending at the
 * end as "A without B", a hit whose key could not be fetched as "no key".
 *
 * It streams: memory is the pending A hits (a hash map by key), the
 * histogram and the N slowest pairs, whatever the length of the trace.
 * Percentiles are nearest-rank (the ceil(p * n)-th smallest latency),
 * reported as the upper end of the histogram bucket that holds it (but
 * never above the maximum): buckets are exact below 128 ns, then 64 per
 * power of two, so a percentile is at most 1/64 above the latency it
 * stands for.  Times print as the listing prints them (us after the first
 * event, --absolute, --tsc), so a slow pair can be found there.
 */
#include <stdlib.h>
#include <string.h>

#include "amap.h"
#include "dtrace.h"
#include "util.h"

#define EXACT_BELOW	128	/* latencies in ns kept exactly */
#define SUB_BITS	6	/* 64 buckets per power of two above */
#define NR_BUCKETS	(EXACT_BELOW + (64 - 7) * (1 << SUB_BITS))
#define HIST_BAR	52	/* bpftrace's hist() width */

/* One side of a pair, as the slowest list shows it. */
struct lat_hit {
	uint64_t ns, tsc;
	uint64_t key;
	uint32_t tid;
	unsigned int file;
};

struct lat_pair {
	struct lat_hit a, b;
	uint64_t lat;
};

struct latency {
	/* by probe id: 1 A, 2 B; the index of the key value in its values */
	uint8_t side[KTRACE_PROBE_MAX_ID + 1];
	uint8_t key_index[KTRACE_PROBE_MAX_ID + 1];
	const char *key;		/* NULL: the thread */
	uint8_t key_type;		/* enum probe_type: how it prints */
	char a_name[PROBE_NAME_MAX + 16], b_name[PROBE_NAME_MAX + 16];
	struct amap pending;		/* by key: struct lat_hit *, xmalloc'd */
	uint64_t pairs, sum, min, max;
	uint64_t a_unmatched, b_unmatched, a_again, no_key, lost;
	bool lost_unknown;		/* a marker of KTEV_LOST_UNKNOWN seen */
	uint64_t buckets[NR_BUCKETS];
	struct lat_pair *slowest;	/* a heap, the least slow first */
	unsigned int nr_slowest, max_slowest;
};

static unsigned int bucket_of(uint64_t v)
{
	unsigned int e;

	if (v < EXACT_BELOW)
		return v;
	e = 63 - __builtin_clzll(v);		/* >= 7 */
	return EXACT_BELOW + (e - 7) * (1 << SUB_BITS) +
	       (v >> (e - SUB_BITS) & ((1 << SUB_BITS) - 1));
}

/* The smallest and largest latency of bucket @b. */
static uint64_t bucket_low(unsigned int b)
{
	unsigned int e, sub;

	if (b < EXACT_BELOW)
		return b;
	e = (b - EXACT_BELOW) / (1 << SUB_BITS) + 7;
	sub = (b - EXACT_BELOW) % (1 << SUB_BITS);
	return (uint64_t)((1 << SUB_BITS) + sub) << (e - SUB_BITS);
}

static uint64_t bucket_high(unsigned int b)
{
	if (b < EXACT_BELOW)
		return b;
	return bucket_low(b) + (1ull << ((b - EXACT_BELOW) / (1 << SUB_BITS) + 7 - SUB_BITS)) - 1;
}

/* @x is slower than @y: longer, else earlier (A, then B, then thread) */
static bool slower(const struct lat_pair *x, const struct lat_pair *y)
{
	if (x->lat != y->lat)
		return x->lat > y->lat;
	if (x->a.ns != y->a.ns)
		return x->a.ns < y->a.ns;
	if (x->b.ns != y->b.ns)
		return x->b.ns < y->b.ns;
	return x->a.tid < y->a.tid;
}

static void heap_down(struct lat_pair *h, unsigned int n, unsigned int i)
{
	for (;;) {
		unsigned int l = 2 * i + 1, m = i;
		struct lat_pair t;

		if (l < n && slower(&h[m], &h[l]))
			m = l;
		if (l + 1 < n && slower(&h[m], &h[l + 1]))
			m = l + 1;
		if (m == i)
			return;
		t = h[i];
		h[i] = h[m];
		h[m] = t;
		i = m;
	}
}

static void keep_slowest(struct latency *lt, const struct lat_pair *p)
{
	struct lat_pair *h = lt->slowest;
	unsigned int i;

	if (!lt->max_slowest)
		return;
	if (lt->nr_slowest == lt->max_slowest) {
		if (!slower(p, &h[0]))
			return;
		h[0] = *p;
		heap_down(h, lt->nr_slowest, 0);
		return;
	}
	/* up: the least slow stays at the root */
	for (i = lt->nr_slowest++; i && slower(&h[(i - 1) / 2], p); i = (i - 1) / 2)
		h[i] = h[(i - 1) / 2];
	h[i] = *p;
}

/* The probes named @name, as side @side; false if none. */
static bool find_side(struct latency *lt, const struct probes *ps, const char *name,
		      unsigned int side, char *shown, size_t size)
{
	bool found = false;

	if (!strncmp(name, "probe:", 6))
		name += 6;
	for (unsigned int id = 1; ps && id <= KTRACE_PROBE_MAX_ID; id++) {
		const struct probe *pr = ps->by_id[id];
		int k = -1;

		if (!pr || !probe_matches(pr, name))
			continue;
		if (lt->side[id])
			die("--latency: probe %u (%s) is both A and B", id, pr->shown);
		for (unsigned int i = 0; lt->key && i < pr->nr_values; i++)
			if (!strcmp(pr->values[i].name, lt->key))
				k = i;
		if (lt->key && k < 0)
			die("--key %s: %s has no value of that name", lt->key, pr->shown);
		if (k >= 0 && pr->values[k].type == PROBE_STR)
			die("--key %s: a string in %s: the key is a number", lt->key, pr->shown);
		lt->side[id] = side;
		lt->key_index[id] = k < 0 ? 0 : k;
		if (k >= 0 && side == 1)
			lt->key_type = pr->values[k].type;
		if (!found)
			snprintf(shown, size, "%s", pr->shown);
		else if (!strstr(shown, " ..."))
			strncat(shown, " ...", size - strlen(shown) - 1);
		found = true;
	}
	return found;
}

static void *latency_start(struct dtrace *dt, struct outbuf *o)
{
	struct latency *lt = xcalloc(1, sizeof(*lt));
	const struct latency_opts *opt = dt->latency;
	const char *comma = strchr(opt->pair, ',');	/* main.c checked: A,B */
	char *a;

	if (!dt->probes)
		die("--latency: no probe names: %s not found (--probes FILE names it)",
		    dt->probes_expected ? dt->probes_expected : "BASE.probes");
	lt->key = opt->key;
	a = xstrndup(opt->pair, comma - opt->pair);
	if (!find_side(lt, dt->probes, a, 1, lt->a_name, sizeof(lt->a_name)))
		die("--latency: no probe named '%s' in BASE.probes", a);
	if (!find_side(lt, dt->probes, comma + 1, 2, lt->b_name, sizeof(lt->b_name)))
		die("--latency: no probe named '%s' in BASE.probes", comma + 1);
	free(a);
	lt->min = UINT64_MAX;
	lt->max_slowest = opt->slowest;
	lt->slowest = xcalloc(opt->slowest + 1, sizeof(*lt->slowest));
	return lt;
}

static void latency_event(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e)
{
	struct latency *lt = dt->fmt_state;
	const struct ktfile_event *ev = e->ev;
	const struct probe *pr = probes_get(dt->probes, ev->code);
	struct lat_hit hit = { e->ns, ev->tsc, ev->tid, ev->tid, e->file }, *a;
	struct lat_pair p;
	unsigned int side;
	uint64_t lost;

	if (ktev_lost_count(ev->code, ev->args, ev->nr_args, &lost)) {
		lt->lost += lost == KTEV_LOST_UNKNOWN ? 0 : lost;
		lt->lost_unknown |= lost == KTEV_LOST_UNKNOWN;
		return;
	}
	if (!pr || !(side = lt->side[pr->id]))
		return;
	if (lt->key && !probe_value(pr, ev, lt->key_index[pr->id], &hit.key, NULL)) {
		lt->no_key++;
		return;
	}
	a = amap_get(&lt->pending, hit.key);
	if (side == 1) {
		if (a) {
			lt->a_again++;		/* the latest A starts the pair */
		} else {
			a = xmalloc(sizeof(*a));
			amap_put(&lt->pending, hit.key, a);
		}
		*a = hit;
		return;
	}
	if (!a) {
		lt->b_unmatched++;
		return;
	}
	p = (struct lat_pair){ *a, hit, hit.ns - a->ns };
	amap_del(&lt->pending, hit.key);
	free(a);
	lt->pairs++;
	lt->sum += p.lat;
	if (p.lat < lt->min)
		lt->min = p.lat;
	if (p.lat > lt->max)
		lt->max = p.lat;
	lt->buckets[bucket_of(p.lat)]++;
	keep_slowest(lt, &p);
}

/* A latency in us, ns precision, as the listing's durations. */
static void put_lat(struct outbuf *o, const char *what, uint64_t ns)
{
	char *p = out_reserve(o);

	p += sprintf(p, "%-12s", what);
	p = dtrace_put_us(p, ns, 14);
	out_commit(o, stpcpy(p, " us\n"));
}

/* The nearest-rank percentile @permille, as the bucket's upper end. */
static uint64_t percentile(const struct latency *lt, unsigned int permille)
{
	uint64_t rank = (lt->pairs * permille + 999) / 1000, seen = 0;

	if (!rank)
		rank = 1;
	for (unsigned int b = 0; b < NR_BUCKETS; b++) {
		seen += lt->buckets[b];
		if (seen >= rank)
			return bucket_high(b) < lt->max ? bucket_high(b) : lt->max;
	}
	return lt->max;
}

/* bpftrace's labels: 1K is 1024 */
static char *put_size(char *p, uint64_t v)
{
	static const char units[] = "KMGTPE";
	unsigned int u = 0;

	while (v >= 1024 && !(v & 1023) && u < sizeof(units) - 1) {
		v >>= 10;
		u++;
	}
	p = ktev_put_u64(p, v);
	if (u)
		*p++ = units[u - 1];
	return p;
}

/* A log2 histogram in ns, as bpftrace's hist(): [0], [1], [2, 4), ... */
static void put_histogram(const struct latency *lt, struct outbuf *o)
{
	uint64_t log2[65] = { 0 }, top = 0;
	int first = -1, last = -1;

	for (unsigned int b = 0; b < NR_BUCKETS; b++) {
		uint64_t low = bucket_low(b);
		unsigned int k = low ? 64 - __builtin_clzll(low) : 0;

		log2[k] += lt->buckets[b];
	}
	for (int k = 0; k < 65; k++) {
		if (!log2[k])
			continue;
		if (first < 0)
			first = k;
		last = k;
		if (log2[k] > top)
			top = log2[k];
	}
	out_printf(o, "\nlatency (ns), log2 buckets:\n");
	for (int k = first; k >= 0 && k <= last; k++) {
		char label[64], *p = label;
		unsigned int bar = top ? log2[k] * HIST_BAR / top : 0;

		if (k == 0) {
			p = stpcpy(p, "[0]");
		} else if (k == 1) {
			p = stpcpy(p, "[1]");
		} else {
			*p++ = '[';
			p = put_size(p, 1ull << (k - 1));
			p = stpcpy(p, ", ");
			p = k < 64 ? put_size(p, 1ull << k) : stpcpy(p, "...");
			*p++ = ')';
		}
		*p = '\0';
		p = out_reserve(o);
		p += sprintf(p, "%-16s %8llu |", label, (unsigned long long)log2[k]);
		memset(p, '@', bar);
		memset(p + bar, ' ', HIST_BAR - bar);
		p += HIST_BAR;
		out_commit(o, stpcpy(p, "|\n"));
	}
}

static int by_slowness(const void *x, const void *y)
{
	return slower(x, y) ? -1 : slower(y, x) ? 1 : 0;
}

static void put_slowest(struct dtrace *dt, struct latency *lt, struct outbuf *o)
{
	qsort(lt->slowest, lt->nr_slowest, sizeof(*lt->slowest), by_slowness);
	out_printf(o, "\nslowest %u pair%s:\n%14s %12s %12s %7s %7s%s\n", lt->nr_slowest,
		   lt->nr_slowest == 1 ? "" : "s", "latency(us)", "A", "B", "A tid", "B tid",
		   lt->key ? "  key" : "");
	for (unsigned int i = 0; i < lt->nr_slowest; i++) {
		const struct lat_pair *pr = &lt->slowest[i];
		const struct lat_hit *h[2] = { &pr->a, &pr->b };
		char *p = out_reserve(o);

		p = dtrace_put_us(p, pr->lat, 14);
		for (int j = 0; j < 2; j++) {
			struct ktfile_event ev = { .tsc = h[j]->tsc, .tid = h[j]->tid };
			struct dtrace_event e = { .ns = h[j]->ns, .file = h[j]->file, .ev = &ev };

			*p++ = ' ';
			p = dtrace_put_time(dt, p, o, &e);
		}
		*p++ = ' ';
		p = ktev_put_u64_width(p, pr->a.tid, 7);
		*p++ = ' ';
		p = ktev_put_u64_width(p, pr->b.tid, 7);
		/* as the listing prints the value: "tid=42" */
		if (lt->key) {
			p = stpcpy(stpcpy(stpcpy(p, "  "), lt->key), "=");
			if (lt->key_type == PROBE_HEX)
				p = ktev_put_hex(stpcpy(p, "0x"), pr->a.key);
			else if (lt->key_type == PROBE_SIGNED && (int64_t)pr->a.key < 0)
				p = ktev_put_u64(stpcpy(p, "-"), -pr->a.key);
			else
				p = ktev_put_u64(p, pr->a.key);
		}
		*p++ = '\n';
		out_commit(o, p);
	}
}

static void latency_end(struct dtrace *dt, struct outbuf *o)
{
	struct latency *lt = dt->fmt_state;

	lt->a_unmatched = lt->pending.nr;
	out_printf(o, "latency from %s to %s, paired by %s%s\n", lt->a_name, lt->b_name,
		   lt->key ? "value " : "thread", lt->key ? lt->key : "");
	out_printf(o, "%-12s %14llu\n", "pairs", (unsigned long long)lt->pairs);
	if (lt->pairs) {
		put_lat(o, "min", lt->min);
		put_lat(o, "p50", percentile(lt, 500));
		put_lat(o, "p90", percentile(lt, 900));
		put_lat(o, "p99", percentile(lt, 990));
		put_lat(o, "max", lt->max);
		put_lat(o, "mean", lt->sum / lt->pairs);
	}
	out_printf(o, "%-12s %14llu  A hits still waiting for a B at the end\n",
		   "A without B", (unsigned long long)lt->a_unmatched);
	out_printf(o, "%-12s %14llu  B hits with no A waiting\n", "B without A",
		   (unsigned long long)lt->b_unmatched);
	out_printf(o, "%-12s %14llu  A hits while an A of the key waited: the earlier "
		   "one is dropped\n", "A again", (unsigned long long)lt->a_again);
	if (lt->key)
		out_printf(o, "%-12s %14llu  hits whose key was not fetched\n", "no key",
			   (unsigned long long)lt->no_key);
	if (lt->lost)
		out_printf(o, "%-12s %14llu  records lost in the trace: pairs may be missing\n",
			   "lost", (unsigned long long)lt->lost);
	if (lt->lost_unknown)
		out_printf(o, "%-12s %14s  records lost in the trace: pairs may be missing\n",
			   "lost", "(how many not known)");
	if (lt->pairs)
		put_histogram(lt, o);
	if (lt->nr_slowest)
		put_slowest(dt, lt, o);
	for (size_t i = 0; i < lt->pending.cap; i++)
		if (lt->pending.keys[i])
			free(lt->pending.vals[i]);
	free(lt->pending.keys);
	free(lt->pending.vals);
	free(lt->slowest);
	free(lt);
}

const struct dtrace_format dtrace_latency = {
	.name = "latency",
	.start = latency_start,
	.event = latency_event,
	.end = latency_end,
};
