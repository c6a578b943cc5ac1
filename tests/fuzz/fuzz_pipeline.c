// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_pipeline: libFuzzer target for dtrace's parallel pipeline
 * (dtrace/pipeline.c, -j N): the text of a kernel trace (kstream.h says
 * how the input makes one) is formatted once on this thread, as -j 1
 * does, and once through the pipeline on 2 to 5 workers (bits 5-6 of the
 * options byte); the two outputs must be the same bytes, else the target
 * traps.  run.sh builds it with small batches (BATCH_BYTES) so that an
 * input of a few hundred events makes many of them, and the main thread
 * waits for free batches as it does on a big trace.
 */
#define _GNU_SOURCE
#include <sys/mman.h>

#include "kstream.h"

static struct kstream ks;

static char *slurp(int fd, size_t *len)
{
	off_t n = lseek(fd, 0, SEEK_END);
	char *buf;

	if (n < 0)
		__builtin_trap();
	buf = malloc(n + 1);
	if (!buf || pread(fd, buf, n, 0) != n)
		__builtin_trap();
	*len = n;
	return buf;
}

/* The text of the trace, through @workers threads (0: on this one). */
static char *format(unsigned int workers, size_t *len, bool *opened)
{
	int fd = memfd_create("out", MFD_CLOEXEC);
	struct dtrace dt;
	char *text;

	if (fd < 0)
		__builtin_trap();
	*opened = kstream_open(&ks, &dt);
	if (!*opened) {
		close(fd);
		return NULL;
	}
	out_open_fd(&dt.out, fd, "out", DTRACE_OUT_SIZE);
	dtrace_run(&dt, &dtrace_text, workers + 1);	/* and this thread */
	out_flush(&dt.out);
	free(dt.out.buf);
	kstream_close(&dt);
	text = slurp(fd, len);
	close(fd);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t one_len, par_len;
	char *one, *par;
	bool one_opened, par_opened;

	if (!ks.dir[0])
		kstream_init(&ks, "fuzz_pipeline");
	if (!kstream_write(&ks, data, size))
		return 0;
	one = format(0, &one_len, &one_opened);
	par = format(1 + (ks.options >> 5 & 3), &par_len, &par_opened);
	if (one_opened != par_opened)
		__builtin_trap();
	if (one && (one_len != par_len || memcmp(one, par, one_len))) {
		size_t i = 0;

		while (i < one_len && i < par_len && one[i] == par[i])
			i++;
		fprintf(stderr, "pipeline: -j 1 wrote %zu bytes, the pipeline %zu; first "
			"difference at %zu\n", one_len, par_len, i);
		__builtin_trap();
	}
	free(one);
	free(par);
	return 0;
}
