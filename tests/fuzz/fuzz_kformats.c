// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_kformats: libFuzzer target for dtrace's formats on kernel streams:
 * the text (with the kernel's symbols, irq names and task names, or
 * --raw, --tsc, --absolute), the summary (-S), CTF, Perfetto, and the
 * off-CPU stacks (--folded-offcpu, folded and SVG).  The
 * input is one or two CPU files with their BASE.kallsyms and BASE.irqs
 * (kstream.h says how it is laid out).  Besides the sanitizers, it checks
 * what text and summary print for a terminal: no control character but
 * the newline, no line over DTRACE_LINE_MAX; and that Perfetto's JSON, the
 * folded lines and the SVG have no raw control character.  Built and run by tests/fuzz/run.sh kformats.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "kstream.h"
#include "stacks.h"

static struct kstream ks;
static char ctf_dir[160];
static char *text;
static size_t text_size;

/* @fd's whole content into text[]; returns its length. */
static size_t slurp(int fd)
{
	off_t len = lseek(fd, 0, SEEK_END);

	if (len < 0)
		__builtin_trap();
	if ((size_t)len + 1 > text_size) {
		text_size = len + 1;
		text = realloc(text, text_size);
	}
	if (pread(fd, text, len, 0) != len)
		__builtin_trap();
	return len;
}

static void check_terminal_text(size_t len, bool lines_bounded)
{
	size_t line = 0;

	for (size_t i = 0; i < len; i++, line++) {
		unsigned char c = text[i];

		if (c == '\n') {
			line = (size_t)-1;
			continue;
		}
		if (c < ' ' || c == 0x7f) {
			fprintf(stderr, "control byte 0x%02x at %zu: %.*s\n", c, i,
				(int)(len - i < 300 ? len - i : 300), text + (i > 200 ? i - 200 : 0));
			__builtin_trap();
		}
		if (lines_bounded && line > DTRACE_LINE_MAX) {
			fprintf(stderr, "line over %d bytes at %zu\n", DTRACE_LINE_MAX, i);
			__builtin_trap();
		}
	}
}

static void rm_ctf(void)
{
	static const char *const names[] = { "metadata", "cpu0", "cpu1" };
	char path[200];

	for (unsigned int i = 0; i < 3; i++) {
		snprintf(path, sizeof(path), "%s/%s", ctf_dir, names[i]);
		unlink(path);
	}
	if (rmdir(ctf_dir) < 0 && errno != ENOENT)
		__builtin_trap();	/* a file CTF should not have written */
}

static void run_format(const struct dtrace_format *fmt)
{
	int fd = memfd_create("out", MFD_CLOEXEC);
	struct dtrace dt;
	size_t len;

	if (fd < 0)
		__builtin_trap();
	if (!kstream_open(&ks, &dt)) {
		close(fd);
		return;
	}
	if (fmt == &dtrace_ctf) {
		rm_ctf();
		dt.output = ctf_dir;
	}
	if (fmt->flags & DTRACE_FMT_STACKS) {
		dt.stacks = STACKS_OFFCPU;
		dt.mask |= stacks_groups(dt.stacks);
	}
	out_open_fd(&dt.out, fd, "out", DTRACE_OUT_SIZE);
	dtrace_run(&dt, fmt, 1);
	out_flush(&dt.out);
	free(dt.out.buf);
	kstream_close(&dt);
	len = slurp(fd);
	if (fmt == &dtrace_text || fmt == &dtrace_summary)
		check_terminal_text(len, true);
	else if (fmt == &dtrace_perfetto || (fmt->flags & DTRACE_FMT_STACKS))
		check_terminal_text(len, false);
	close(fd);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct dtrace_format *const formats[] = {
		&dtrace_text, &dtrace_summary, &dtrace_ctf, &dtrace_perfetto,
		&dtrace_folded, &dtrace_svg,
	};

	if (!ks.dir[0]) {
		kstream_init(&ks, "fuzz_kformats");
		snprintf(ctf_dir, sizeof(ctf_dir), "%s/ctf", ks.dir);
	}
	if (!kstream_write(&ks, data, size))
		return 0;
	for (unsigned int i = 0; i < sizeof(formats) / sizeof(*formats); i++)
		run_format(formats[i]);
	return 0;
}
