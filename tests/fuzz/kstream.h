/* SPDX-License-Identifier: GPL-2.0 */
/*
 * kstream: a fuzz input as a kernel trace, shared by fuzz_kformats.c and
 * fuzz_pipeline.c.  The input is
 *
 *   byte 0       options: bit 0 two CPU files (else one), bit 1 --raw,
 *                bit 2 --tsc, bit 3 --absolute, bit 4 a 2.4 GHz TSC (else
 *                1 GHz), bits 5-7 for the target
 *   2 bytes      length K (little endian), then K bytes: BASE.kallsyms
 *   2 bytes      length I, then I bytes: BASE.irqs (0: no such file)
 *   the rest     events, 16 bytes each:
 *     byte 0       bit 0 the CPU file, bits 1-2 continuations: 0 as the
 *                  event table says, 1 one fewer, 2 one more, 3 byte 14 % 9
 *     byte 1       the event: an entry of the event table (modulo its
 *                  size + 4; the 4 past it: a lost marker, or a raw code
 *                  of bytes 14-15 in the group and sub fields)
 *     bytes 2-3    time to this event
 *     bytes 4-5    thread id: byte 4 % 32 if byte 5 is 0, else both
 *     bytes 6-13   the first two arguments
 *                  each continuation takes 8 more bytes (or zeros)
 *
 * kstream_write() writes DIR/trace.cpu0 (and .cpu1), DIR/trace.kallsyms and
 * DIR/trace.irqs as ktrace would; kstream_open() opens them as dtrace's
 * main() does (merge, files, task names, kernel symbols, irq names).
 */
#ifndef FUZZ_KSTREAM_H
#define FUZZ_KSTREAM_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "dtrace.h"
#include "ksyms.h"
#include "ktevents.h"
#include "ktfile.h"
#include "merge.h"
#include "util.h"

#define KSTREAM_MAX_RECS	8192

struct kstream {
	char dir[96];
	char paths[2][160];
	char kallsyms[160], irqs[160];
	unsigned int nr_files;
	uint8_t options;
	bool has_kallsyms, has_irqs;
	struct ktrace_record recs[2][KSTREAM_MAX_RECS];
	size_t nr[2];
};

/* Once per process: a directory of its own under $TMPDIR (run.sh removes it). */
static inline void kstream_init(struct kstream *ks, const char *name)
{
	snprintf(ks->dir, sizeof(ks->dir), "%.40s/%s.XXXXXX",
		 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", name);
	if (!mkdtemp(ks->dir))
		__builtin_trap();
	for (int i = 0; i < 2; i++)
		snprintf(ks->paths[i], sizeof(ks->paths[i]), "%s/trace.cpu%d", ks->dir, i);
	snprintf(ks->kallsyms, sizeof(ks->kallsyms), "%s/trace.kallsyms", ks->dir);
	snprintf(ks->irqs, sizeof(ks->irqs), "%s/trace.irqs", ks->dir);
	verbose = -1;		/* warnings are expected, and many */
}

static inline uint32_t kstream_le32(const uint8_t *d)
{
	return d[0] | d[1] << 8 | d[2] << 16 | (uint32_t)d[3] << 24;
}

static inline void kstream_side_file(const char *path, const uint8_t *d, size_t len, bool *has)
{
	int fd;

	unlink(path);
	*has = len > 0;
	if (!len)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0 || write(fd, d, len) != (ssize_t)len)
		__builtin_trap();
	close(fd);
}

/* Turn @data into the files; false if it is too short to be one. */
static inline bool kstream_write(struct kstream *ks, const uint8_t *data, size_t size)
{
	const uint8_t *d = data, *end = data + size;
	uint64_t tsc = 1000000;
	size_t len;

	if (size < 5)
		return false;
	ks->options = *d++;
	ks->nr_files = 1 + (ks->options & 1);
	len = d[0] | d[1] << 8;
	d += 2;
	len = len < (size_t)(end - d) ? len : (size_t)(end - d);
	kstream_side_file(ks->kallsyms, d, len, &ks->has_kallsyms);
	d += len;
	len = end - d >= 2 ? (size_t)(d[0] | d[1] << 8) : 0;
	d += end - d >= 2 ? 2 : end - d;
	len = len < (size_t)(end - d) ? len : (size_t)(end - d);
	kstream_side_file(ks->irqs, d, len, &ks->has_irqs);
	d += len;

	ks->nr[0] = ks->nr[1] = 0;
	while (end - d >= 16) {
		const uint8_t *r = d;
		unsigned int file = (r[0] & 1) % ks->nr_files, sel = r[1] % (ktev_nr_events + 4);
		uint32_t tid = r[5] ? (uint32_t)(r[4] | r[5] << 8) : r[4] % 32u, code;
		unsigned int nr_cont = 0;
		struct ktrace_record *recs = ks->recs[file];
		size_t *n = &ks->nr[file];

		d += 16;
		tsc += r[2] | r[3] << 8;
		if (sel < ktev_nr_events) {
			code = ktev_events[sel].code;
			nr_cont = ktev_events[sel].nr_cont;
		} else if (sel == ktev_nr_events) {
			code = KTRACE_META_LOST;
		} else {
			code = ((uint32_t)r[15] << KTRACE_SUB_SHIFT | r[14] << 8 | r[14]) &
			       ~(KTRACE_EVT_CONT | KTRACE_EVT_END);
		}
		switch (r[0] >> 1 & 3) {
		case 1:
			nr_cont = nr_cont ? nr_cont - 1 : 0;
			break;
		case 2:
			nr_cont++;
			break;
		case 3:
			nr_cont = r[14] % 9;
			break;
		}
		if (!(code & KTRACE_GROUP_MASK))
			nr_cont = 0;	/* meta records have none */
		if (*n + 1 + nr_cont > KSTREAM_MAX_RECS)
			break;
		recs[(*n)++] = (struct ktrace_record){ tsc, code, tid, kstream_le32(r + 6),
						       kstream_le32(r + 10) };
		for (unsigned int i = 0; i < nr_cont; i++) {
			uint32_t a1 = 0, a2 = 0;

			if (end - d >= 8) {
				a1 = kstream_le32(d);
				a2 = kstream_le32(d + 4);
				d += 8;
			}
			recs[(*n)++] = (struct ktrace_record){
				tsc, KTRACE_EVT_CONT | i << KTRACE_SUB_SHIFT |
				     (i + 1 == nr_cont ? KTRACE_EVT_END : 0), tid, a1, a2 };
		}
	}
	for (unsigned int i = 0; i < 2; i++) {
		struct ktfile_header h;
		struct ktfile_writer w;

		unlink(ks->paths[i]);
		if (i >= ks->nr_files)
			continue;
		if (ktfile_header_init(&h, i, ks->options & 16 ? 2400000000u : 1000000000u,
				       true, KTRACE_GROUP_MASK) < 0)
			__builtin_trap();
		if (ktfile_create(&w, ks->paths[i], &h) < 0 ||
		    ktfile_append(&w, ks->recs[i], ks->nr[i]) < 0 || ktfile_close(&w) < 0)
			__builtin_trap();
	}
	return true;
}

/* As dtrace's main() sets up for a format: NULL if the merge failed to open. */
static inline bool kstream_open(struct kstream *ks, struct dtrace *dt)
{
	char *paths[2] = { ks->paths[0], ks->paths[1] };

	*dt = (struct dtrace){ .mask = KTRACE_GROUP_MASK, .to_ns = UINT64_MAX };
	dt->merge = kt_merge_open(paths, ks->nr_files, 0);
	if (!dt->merge)
		return false;
	dt->decode.raw = ks->options & 2;
	dt->tsc = ks->options & 4;
	dt->absolute = !dt->tsc && (ks->options & 8);
	dt->files = xcalloc(kt_merge_nr_files(dt->merge) + 1, sizeof(*dt->files));
	for (unsigned int i = 0; i < kt_merge_nr_files(dt->merge); i++) {
		struct dtrace_file *df = &dt->files[i];

		df->selected = true;
		df->cpu_len = snprintf(df->cpu, sizeof(df->cpu), "%3d",
				       kt_merge_file(dt->merge, i)->hdr.cpu);
	}
	dt->tasks = tasks_open(dt->merge);
	dt->decode.put_task = tasks_put_ctx;
	dt->decode.tasks = dt->tasks;
	if (!dt->decode.raw) {
		dt->decode.ksyms = ks->has_kallsyms ? ksyms_load(ks->kallsyms) : NULL;
		dt->decode.irqs = ks->has_irqs ? irq_names_load(ks->irqs) : NULL;
	}
	return true;
}

static inline void kstream_close(struct dtrace *dt)
{
	kt_merge_close(dt->merge);
	tasks_free(dt->tasks);
	free(dt->files);
	ksyms_free((struct ksyms *)dt->decode.ksyms);
	irq_names_free((struct irq_names *)dt->decode.irqs);
}

/*
 * Seeds, written by the fuzz binary itself when KSTREAM_SEEDS names a
 * directory (run.sh does): each event of the table once, with its
 * continuations, and with the machine's own kallsyms and interrupts (or
 * a few lines like them), on one CPU file and on two, with each option, three times over.
 */
static inline void kstream_put16(uint8_t **p, unsigned int v)
{
	*(*p)++ = v;
	*(*p)++ = v >> 8;
}

static inline size_t kstream_read_head(const char *path, char *buf, size_t max,
				       const char *fallback)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	ssize_t n = fd >= 0 ? read(fd, buf, max) : -1;
	size_t len;

	if (fd >= 0)
		close(fd);
	if (n <= 0 || (path[6] == 'k' && !strncmp(buf, "0000000000000000", 16))) {
		len = strlen(fallback);
		memcpy(buf, fallback, len);
		return len;
	}
	len = n;
	while (len && buf[len - 1] != '\n')	/* whole lines */
		len--;
	return len;
}

static inline void kstream_seeds(const char *dir)
{
	static char ksyms[1500], irqs[1500];
	static uint8_t seed[16384];
	size_t kl = kstream_read_head("/proc/kallsyms", ksyms, sizeof(ksyms),
				      "ffffffff81000000 T _stext\nffffffff81001000 t do_one [mod]\n"
				      "ffffffff81002000 W weak_fn\n");
	size_t il = kstream_read_head("/proc/interrupts", irqs, sizeof(irqs),
				      "           CPU0       CPU1\n  0:   10   0  IO-APIC 2-edge timer\n"
				      " 24:    1   0  PCI-MSI 0-edge  virtio0-input.0\n");
	uint64_t addr = strtoull(ksyms, NULL, 16) + 0x20;

	for (unsigned int opt = 0; opt < 32; opt += opt < 2 ? 1 : opt == 2 ? 2 : opt) {
		uint8_t *p = seed;
		char path[4200];
		int fd;

		*p++ = opt | (opt > 1);
		kstream_put16(&p, kl);
		memcpy(p, ksyms, kl);
		p += kl;
		kstream_put16(&p, il);
		memcpy(p, irqs, il);
		p += il;
		/* three laps: a few pipeline batches (fuzz_pipeline.c) */
		for (unsigned int n = 0; n < 3 * (ktev_nr_events + 4); n++) {
			unsigned int i = n % (ktev_nr_events + 4);
			uint32_t a1 = i % 2 ? (uint32_t)addr : i % 30, a2 = i % 2 ? addr >> 32 : 1;
			unsigned int tid = i % 5;

			*p++ = i & 1;
			*p++ = i;
			kstream_put16(&p, 100 + i);
			*p++ = tid;
			*p++ = 0;
			memcpy(p, &a1, 4);
			memcpy(p + 4, &a2, 4);
			p += 8;
			*p++ = i;
			*p++ = i;
			for (unsigned int c = 0; i < ktev_nr_events && c < ktev_events[i].nr_cont; c++) {
				/* a task name where the event has one (thread:name: args 2-5) */
				snprintf((char *)p, 9, "%s", c == 0 ? "task-" : c == 1 ? "name" : "");
				p[0] += c == 0 ? tid : 0;
				p += 8;
			}
		}
		snprintf(path, sizeof(path), "%s/seed-%u", dir, opt);
		fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		if (fd < 0 || write(fd, seed, p - seed) != p - seed)
			exit(1);
		close(fd);
	}
	exit(0);
}

/* libFuzzer's hook: the seeds, if asked for. */
int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	if (getenv("KSTREAM_SEEDS"))
		kstream_seeds(getenv("KSTREAM_SEEDS"));
	return 0;
}

#endif /* FUZZ_KSTREAM_H */
