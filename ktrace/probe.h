/* SPDX-License-Identifier: GPL-2.0 */
/*
 * probe: ktrace -P, uprobes on user programs with values fetched by name
 * through DWARF (probe.c: the specs, registration, BASE.probes, -L's
 * printing; probe_dwarf.c: functions, parameters and field paths compiled
 * to the kernel's fetch program).  Documentation/trace/ktrace-probes.rst.
 */
#ifndef KTRACE_PROBE_H
#define KTRACE_PROBE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/ktrace.h>

#define PROBE_NAME_MAX	512		/* a BASE.probes name, bytes */

/* One value a probe records: a field path, its name and type. */
struct probe_value {
	char *name;			/* as written, or the alias before '=' */
	char *path;			/* the field path as written */
	char type[8];			/* u8..x64, or strN */
	char *ctype;			/* the C type DWARF gives, for -L */
	char *chain;			/* the compiled ops, printed ("%rsi [deref] +8") */
};

/* One probe: a function's entry (or return) with its fetch program. */
struct probe {
	char *binary;			/* absolute path */
	char *name;			/* qualified function name */
	char *signature;		/* the demangled signature, for messages */
	char build_id[84];		/* lowercase hex, or "-" */
	uint64_t vaddr, offset;		/* ELF address, file offset */
	bool ret;			/* %return */
	struct ktrace_probe_op ops[KTRACE_PROBE_MAX_OPS];
	unsigned int nr_ops;
	struct probe_value values[KTRACE_PROBE_MAX_VALUES];
	unsigned int nr_values;
	uint32_t id;			/* the kernel's, once added */
	struct probe *next;
};

/* Every -P, resolved. */
struct probe_set {
	struct probe *head, **tail;
	unsigned int nr;
	const char *debug_dir;		/* --debug-dir, or NULL */
	pid_t pids[KTRACE_PROBE_MAX_PIDS];	/* -p */
	unsigned int nr_pids;
};

void probe_set_init(struct probe_set *set);
/* The binary, read-only: a regular file only (a FIFO never blocks ktrace); dies if not. */
int probe_open_binary(const char *path);
/* -P SPEC: resolved now; a bad spec dies naming the binary, function, field. */
void probe_parse(struct probe_set *set, const char *spec);
/* -L BINARY[:FUNCTION-GLOB [FIELD...]]: print functions, parameters, chains. */
int probe_list(const char *arg, const char *debug_dir, FILE *out);
/*
 * Add every probe to the kernel through @ctl: in @child and its
 * descendants if not 0, else in -p's processes, else in every process.
 * Then write @base.probes if @base.  Dies (said why) if the kernel
 * refuses one.
 */
void probes_add(struct probe_set *set, int ctl, const char *dev, pid_t child,
		const char *base);
/* BASE.probes (0600): what dtrace needs to print the probes' records. */
void probes_save(const struct probe_set *set, const char *base);

/*
 * probe_dwarf.c: resolve @function in @binary (through its DWARF if it or
 * a separate debug file has any, else its symbol tables) into one probe
 * per out-of-line copy, each with @fields ("[ALIAS=]FIELD[:TYPE]")
 * compiled.  Returns the count appended to @set; dies on a bad spec.
 * probe_dwarf_list() is -L's walk.
 */
unsigned int probe_resolve(struct probe_set *set, const char *binary, const char *function,
			   bool ret, char **fields, unsigned int nr_fields);
int probe_dwarf_list(const char *binary, const char *glob, char **fields,
		     unsigned int nr_fields, const char *debug_dir, FILE *out);

/* The ops as -L prints them: "%rsi [deref] +264 [deref] +24 +16 [u16]". */
char *probe_chain(const struct ktrace_probe_op *ops, unsigned int nr);

#endif /* KTRACE_PROBE_H */
