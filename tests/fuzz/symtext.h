/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symtext: what fuzz_maps.c and fuzz_symbols.c require of every text the
 * symbolizer writes: within the line's bound, and nothing a terminal would
 * act on (control characters, DEL) whatever the ELF file or maps said.
 */
#ifndef FUZZ_SYMTEXT_H
#define FUZZ_SYMTEXT_H

#include "ktevents.h"

#define WIDTH	16		/* the function column */

static char line[WIDTH + KTEV_TEXT_MAX + 256];

static void check_text(const char *start, const char *end)
{
	if (end - start > WIDTH + KTEV_TEXT_MAX)
		__builtin_trap();
	for (const char *p = start; p < end; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			__builtin_trap();
}

#endif /* FUZZ_SYMTEXT_H */
