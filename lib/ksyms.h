/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * ksyms: what ktrace saves of the traced machine beside the trace files, so
 * that dtrace can name kernel addresses and irqs after the machine is gone:
 * BASE.kallsyms, a copy of /proc/kallsyms, and BASE.irqs, a copy of
 * /proc/interrupts.
 *
 * Both are read as hostile input: a line that is not what the kernel
 * writes is skipped (the first one is named, file and line, with how many
 * there were), names are kept only in printable ASCII and cut to a bounded
 * length, and the tables stop growing at a bound (then the rest is left
 * out, and said so).  The tables are read-only once loaded: lookups may run
 * on several threads.
 */
#ifndef KT_KSYMS_H
#define KT_KSYMS_H

#include <stddef.h>
#include <stdint.h>

/* Longest symbol and module name kept: "name+0xoff [module]" fits KTEV_SYM_MAX. */
#define KSYMS_NAME_MAX		160
#define KSYMS_MODULE_MAX	60
/* An address further than this past its symbol is not named (data, a gap). */
#define KSYMS_MAX_OFFSET	(1u << 20)
/* Longest irq name kept. */
#define IRQ_NAME_MAX		64

struct ksyms;
struct irq_names;

/*
 * The text symbols (types t, T, w, W) of kallsyms file @path, sorted by
 * address.  NULL, after a message, if it cannot be read or has none.
 */
struct ksyms *ksyms_load(const char *path);
void ksyms_free(struct ksyms *ks);
size_t ksyms_count(const struct ksyms *ks);

/*
 * "name+0x1f" or "name+0x1f [module]" of @addr, at most KSYMS_NAME_MAX +
 * KSYMS_MODULE_MAX + 24 bytes, no NUL; NULL (and nothing written) if no
 * symbol is at or at most KSYMS_MAX_OFFSET below @addr.
 */
char *ksyms_put(char *p, const struct ksyms *ks, uint64_t addr);

/*
 * The irq names of a /proc/interrupts copy @path: for each numbered irq
 * with handlers, their names ("virtio0-input.0", "acpi, i801_smbus").
 * NULL, after a message, if it cannot be read or names none.
 */
struct irq_names *irq_names_load(const char *path);
void irq_names_free(struct irq_names *in);
size_t irq_names_count(const struct irq_names *in);

/* " (name)" of irq @irq, at most IRQ_NAME_MAX + 3 bytes, or nothing. */
char *irq_names_put(char *p, const struct irq_names *in, uint32_t irq);

#endif /* KT_KSYMS_H */
