// SPDX-License-Identifier: GPL-2.0
/*
 * fuzz_symbols: libFuzzer target for dtrace's ELF/DWARF symbolizer
 * (symbols.c through libdwfl).  The input is an ELF file (seeds: /bin/true,
 * a -g object and a -g program with inlined functions); a map file names
 * it as a process's object, at a load bias, once without a build id and
 * once with one that is not its own (last input byte, bit 0), and dtrace
 * names addresses in it: the entry point and addresses spread over the
 * file and (read with libelf) the first functions of its symbol table,
 * as functions (sym_func, sym_func_low), call sites (sym_site, with
 * the inlined frames) and function call events.  Besides the sanitizers,
 * what it prints for a terminal must hold no control character and stay
 * within the line's bound.  Built and run by tests/fuzz/run.sh symbols.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <gelf.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ktevents.h"
#include "ktfile.h"
#include "symbols.h"
#include "symtext.h"
#include "util.h"

#define BIAS	0x555555554000ull
#define SPREAD	24		/* addresses spread over the file */
#define FUNCS	16		/* functions of the symbol table */

static char dir[64], elf[128], maps[128], stream[128];

static void put_call(struct sym_proc *proc, uint32_t code, uint64_t fn, uint64_t site)
{
	struct ktfile_event ev = { .code = code, .tid = 1, .nr_args = 4 };

	if (code == KTRACE_func_enter) {
		ev.args[0] = fn;
		ev.args[1] = (fn >> 32 & 0xffff) | (uint32_t)(site >> 32) << 16;
		ev.args[2] = site;
		ev.args[3] = 0x7ffc1230;
	} else {
		ev.args[0] = fn;
		ev.args[1] = fn >> 32;
		ev.args[2] = site;
		ev.args[3] = site >> 32;
	}
	check_text(line, sym_put_event(line, proc, &ev, WIDTH, NULL));
}

static void name(struct sym_proc *proc, uint64_t addr)
{
	const struct sym_func *f = sym_func(proc, addr);

	check_text(f->name, f->name + strlen(f->name));
	if (f->file)
		check_text(f->file, f->file + strlen(f->file));
	sym_func_low(proc, (uint32_t)addr);
	sym_site(proc, addr + 1, line, 256);
	check_text(line, line + strlen(line));
	sym_inlined_at(proc, addr + 1, f);
	put_call(proc, KTRACE_func_entry, addr, addr + 5);
	put_call(proc, KTRACE_func_enter, addr, addr + 5);
	put_call(proc, KTRACE_func_exit, addr, 0);
}

/* Inside the first FUNCS functions of the symbol tables, as libelf reads them. */
static void for_each_func(struct sym_proc *proc, const uint8_t *data, size_t size)
{
	char *copy = malloc(size + 1);	/* libelf wants it writable */
	unsigned int nr = 0;
	Elf_Scn *scn = NULL;
	Elf *e;

	memcpy(copy, data, size);
	elf_version(EV_CURRENT);
	e = elf_memory(copy, size);
	while (e && nr < FUNCS && (scn = elf_nextscn(e, scn))) {
		Elf_Data *d = NULL;
		GElf_Shdr sh;
		GElf_Sym sym;

		if (!gelf_getshdr(scn, &sh) || (sh.sh_type != SHT_SYMTAB && sh.sh_type != SHT_DYNSYM))
			continue;
		d = elf_getdata(scn, NULL);
		for (int i = 0; d && nr < FUNCS && gelf_getsym(d, i, &sym); i++) {
			if (GELF_ST_TYPE(sym.st_info) != STT_FUNC || !sym.st_value ||
			    sym.st_value >= 1ull << 32)
				continue;
			name(proc, BIAS + sym.st_value + sym.st_size / 2);
			nr++;
		}
	}
	if (e)
		elf_end(e);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint64_t span = size > 0x1000 ? size : 0x1000, entry = 0;
	struct sym_db *syms;
	struct sym_proc *proc;
	FILE *f;
	int fd;

	if (!dir[0]) {
		/* run.sh points TMPDIR into build/fuzz/symbols and removes it after */
		snprintf(dir, sizeof(dir), "%.40s/fuzz_symbols.XXXXXX",
			 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
		if (!mkdtemp(dir))
			__builtin_trap();
		snprintf(elf, sizeof(elf), "%s/obj", dir);
		snprintf(maps, sizeof(maps), "%s/trace.pid1.maps", dir);
		snprintf(stream, sizeof(stream), "%s/trace.pid1.tid1", dir);
		/* debug files only beside the input, none of the system's */
		setenv("KTRACE_DEBUGINFO_PATH", dir, 1);
		verbose = -1;		/* warnings are expected, and many */
	}
	fd = open(elf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, data, size) != (ssize_t)size)
		__builtin_trap();
	close(fd);
	f = fopen(maps, "w");
	if (!f)
		__builtin_trap();
	fprintf(f, "snapshot 1\nobject %llx %llx %llx %s %s\n", BIAS, BIAS,
		(unsigned long long)(BIAS + 0x10000000), size && data[size - 1] & 1 ? "00112233" : "-",
		elf);
	if (fclose(f))
		__builtin_trap();

	syms = sym_db_new();
	proc = sym_proc(syms, 1, stream);
	if (size >= 32)		/* e_entry of an ELF64 header */
		memcpy(&entry, data + 24, sizeof(entry));
	name(proc, BIAS + (entry < span ? entry : 0));
	for (unsigned int i = 0; i < SPREAD; i++)
		name(proc, BIAS + span * i / SPREAD);
	for_each_func(proc, data, size);
	sym_db_free(syms);
	return 0;
}
