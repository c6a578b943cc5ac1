// SPDX-License-Identifier: GPL-2.0
/*
 * merge: k-way merge of trace files by time stamp, over a binary heap.
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "escape.h"
#include "merge.h"
#include "util.h"

/*
 * Up to SCAN_MAX files (one per CPU of a small machine) the earliest event
 * is found by scanning the files' time stamps, kept side by side: a few
 * compares that compile to conditional moves.  A heap's compares branch,
 * and the files' interleaving makes those branches unpredictable: on
 * bench/dtrace.sh's 4 files the scan took 7% off dtrace -j 1's CPU time.
 * More files go through the heap: log2 of them compares.
 */
#define SCAN_MAX	8

struct kt_merge {
	struct ktfile_reader **files;	/* kept files, in the order given */
	unsigned int nr_files;
	/*
	 * files with an event: a heap, earliest first; when scanning, in
	 * the order given, with their events' time stamps in @tsc
	 */
	struct ktfile_reader **heap;
	unsigned int nr_heap;
	bool scan;
	unsigned int next;		/* scanning: heap[] index of the file handed out */
	uint64_t tsc[SCAN_MAX];
	bool advance;			/* heap[0]'s (scanning: heap[next]'s) event was handed out */
	bool failed;
};

static inline bool before(const struct ktfile_reader *a, const struct ktfile_reader *b)
{
	return a->ev.tsc < b->ev.tsc || (a->ev.tsc == b->ev.tsc && a->index < b->index);
}

static void sift_down(struct kt_merge *m, unsigned int i)
{
	struct ktfile_reader **heap = m->heap, *f = heap[i];

	for (;;) {
		unsigned int c = 2 * i + 1;

		if (c >= m->nr_heap)
			break;
		if (c + 1 < m->nr_heap && before(heap[c + 1], heap[c]))
			c++;
		if (!before(heap[c], f))
			break;
		heap[i] = heap[c];
		i = c;
	}
	heap[i] = f;
}

/* Same boot and host as the first file, where both tell. */
static bool same_origin(struct ktfile_reader *f, struct ktfile_reader *first,
			unsigned int flags)
{
	static const struct {
		const char *what, *means;
		size_t off;
	} fields[] = {
		{ "boot id", "different boots", offsetof(struct ktfile_header, boot_id) },
		{ "hostname", "different hosts", offsetof(struct ktfile_header, hostname) },
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(fields); i++) {
		const char *raw_a = (const char *)&f->hdr + fields[i].off;
		const char *raw_b = (const char *)&first->hdr + fields[i].off;
		char a[KT_ESC_MAX(65) + 1], b[KT_ESC_MAX(65) + 1];

		if (!*raw_a || !*raw_b || !strcmp(raw_a, raw_b))
			continue;
		/* the files' own strings: escaped for the terminal */
		*kt_escape(a, sizeof(a) - 1, raw_a, 65, KT_ESC_TEXT) = '\0';
		*kt_escape(b, sizeof(b) - 1, raw_b, 65, KT_ESC_TEXT) = '\0';
		if (flags & KTFILE_FORCE) {
			pr_warn("%s: offset %zu: %s '%s' differs from %s's '%s': "
				"merging files from %s, times are not comparable",
				f->path, fields[i].off, fields[i].what, a, first->path,
				b, fields[i].means);
			continue;
		}
		pr_err("%s: offset %zu: %s '%s' differs from %s's '%s': "
		       "files from %s (--force merges them anyway)",
		       f->path, fields[i].off, fields[i].what, a, first->path, b,
		       fields[i].means);
		return false;
	}
	return true;
}

/*
 * One clock for all: every file is converted with the rate of the first
 * kernel (CPU) file, else of the first file.  Each writer measured its own
 * (libktrace calibrates when it has no kernel's rate); converting each file
 * with its own would move events against each other by the difference,
 * 200 us a minute at 3 ppm.  More than 1 ppm apart is worth a warning.
 */
static void one_clock(struct kt_merge *m, uint64_t common_hz)
{
	struct ktfile_reader *ref = m->nr_files ? m->files[0] : NULL, *worst = NULL;
	unsigned __int128 worst_diff = 0;
	unsigned int nr_off = 0;

	for (unsigned int i = 0; i < m->nr_files; i++) {
		if (m->files[i]->hdr.cpu >= 0) {
			ref = m->files[i];
			break;
		}
	}
	for (unsigned int i = 0; common_hz && i < m->nr_files; i++)
		ktfile_set_tsc_hz(m->files[i], common_hz);
	for (unsigned int i = 0; !common_hz && i < m->nr_files; i++) {
		struct ktfile_reader *f = m->files[i];
		uint64_t a = f->hdr.tsc_hz, b = ref->hdr.tsc_hz;
		unsigned __int128 diff = a > b ? a - b : b - a;

		ktfile_set_tsc_hz(f, b);
		/* diff / b > 1e-6 */
		if (diff * 1000000 <= b)
			continue;
		nr_off++;
		if (diff > worst_diff) {
			worst_diff = diff;
			worst = f;
		}
	}
	if (worst) {
		char *a = kt_escape_dup(worst->path, SIZE_MAX, KT_ESC_TEXT);
		char *b = kt_escape_dup(ref->path, SIZE_MAX, KT_ESC_TEXT);

		pr_warn("%s: TSC rate %llu Hz differs from %s's %llu Hz by %.1f ppm%s; "
			"all files are converted with %s's", a,
			(unsigned long long)worst->hdr.tsc_hz, b,
			(unsigned long long)ref->hdr.tsc_hz,
			(double)worst_diff * 1e6 / ref->hdr.tsc_hz,
			nr_off > 1 ? " (the most of the files that differ)" : "", b);
		free(a);
		free(b);
	}
}

struct kt_merge *kt_merge_open(char *const *paths, unsigned int nr,
			       unsigned int flags)
{
	return kt_merge_open_machines(paths, nr, flags, NULL);
}

struct kt_merge *kt_merge_open_machines(char *const *paths, unsigned int nr,
					unsigned int flags, const struct kt_merge_machines *mm)
{
	struct kt_merge *m = xcalloc(1, sizeof(*m));

	m->files = xcalloc(nr, sizeof(*m->files));
	m->heap = xcalloc(nr, sizeof(*m->heap));
	for (unsigned int i = 0; i < nr; i++) {
		struct ktfile_reader *f = ktfile_open(paths[i], flags);

		if (!f) {
			if (flags & KTFILE_FORCE) {
				pr_warn("%s: left out", paths[i]);
				continue;
			}
			goto fail;
		}
		f->index = m->nr_files;
		f->machine = mm ? mm->machine[i] : 0;
		m->files[m->nr_files++] = f;
		/* within a machine: the first file of its machine */
		for (unsigned int k = 0; k < m->nr_files; k++) {
			if (m->files[k]->machine != f->machine)
				continue;
			if (!same_origin(f, m->files[k], flags))
				goto fail;
			break;
		}
		if (mm)
			mm->align(mm->ctx, f);
	}
	one_clock(m, mm ? mm->tsc_hz : 0);
	for (unsigned int i = 0; i < m->nr_files; i++) {
		int ret = ktfile_next(m->files[i]);

		/* a bad first record ends that file only, as any bad record does */
		if (ret < 0)
			m->failed = true;
		if (ret > 0)
			m->heap[m->nr_heap++] = m->files[i];
	}
	m->scan = m->nr_heap <= SCAN_MAX;
	for (unsigned int i = 0; m->scan && i < m->nr_heap; i++)
		m->tsc[i] = m->heap[i]->ev.tsc;
	for (unsigned int i = m->nr_heap / 2; !m->scan && i-- > 0; )
		sift_down(m, i);
	return m;
fail:
	kt_merge_close(m);
	return NULL;
}

/* The earliest of the scanned files; the first given of equal time stamps. */
static struct ktfile_reader *scan_next(struct kt_merge *m)
{
	uint64_t best = 0, best_tsc;

	if (m->advance) {
		unsigned int i = m->next;
		int ret = ktfile_next(m->heap[i]);

		m->advance = false;
		if (ret < 0)
			m->failed = true;
		if (ret > 0) {
			m->tsc[i] = m->heap[i]->ev.tsc;
		} else {	/* keep the order given: it breaks ties */
			m->nr_heap--;
			memmove(&m->heap[i], &m->heap[i + 1], (m->nr_heap - i) * sizeof(*m->heap));
			memmove(&m->tsc[i], &m->tsc[i + 1], (m->nr_heap - i) * sizeof(*m->tsc));
		}
	}
	if (!m->nr_heap)
		return NULL;
	/*
	 * Two ?: on the same compare, each alone in its statement: gcc makes
	 * them conditional moves (check the disassembly after a change: an
	 * if () became a branch, mispredicted half the time), 8 instructions
	 * a file where the masks took 13.
	 */
	best_tsc = m->tsc[0];
	for (uint64_t i = 1; i < m->nr_heap; i++) {
		uint64_t tsc = m->tsc[i];

		best = tsc < best_tsc ? i : best;
		best_tsc = tsc < best_tsc ? tsc : best_tsc;
	}
	m->next = best;
	m->advance = true;
	return m->heap[best];
}

struct ktfile_reader *kt_merge_next(struct kt_merge *m)
{
	if (m->scan)
		return scan_next(m);
	if (m->advance) {
		int ret = ktfile_next(m->heap[0]);

		m->advance = false;
		/*
		 * A bad record ends its file (the reader said where and what):
		 * the other files' events are still good and still come.
		 */
		if (ret < 0)
			m->failed = true;
		if (ret <= 0)
			m->heap[0] = m->heap[--m->nr_heap];
		if (m->nr_heap)
			sift_down(m, 0);
	}
	if (!m->nr_heap)
		return NULL;
	m->advance = true;
	return m->heap[0];
}

bool kt_merge_failed(const struct kt_merge *m)
{
	return m->failed;
}

unsigned int kt_merge_nr_files(const struct kt_merge *m)
{
	return m->nr_files;
}

struct ktfile_reader *kt_merge_file(const struct kt_merge *m, unsigned int i)
{
	return i < m->nr_files ? m->files[i] : NULL;
}

void kt_merge_close(struct kt_merge *m)
{
	if (!m)
		return;
	for (unsigned int i = 0; i < m->nr_files; i++)
		ktfile_reader_close(m->files[i]);
	free(m->files);
	free(m->heap);
	free(m);
}
