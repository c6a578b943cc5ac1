/* SPDX-License-Identifier: GPL-2.0 */
/*
 * symbols: names for the addresses in user streams (func:entry/exit), from
 * the process's map file that libktrace saved (trace.pid<PID>.maps, next
 * to the stream files) and the ELF files and their debug info, read with
 * elfutils' libdwfl.
 *
 * Each object file (path and build id) is read once and its answers are
 * cached, whatever the number of processes that mapped it: a function has
 * one struct sym_func, so the formats can count by it.  Debug info is
 * looked for as gdb does: next to the file by debuglink, in .debug/, and in
 * /usr/lib/debug (by debuglink and by build id); KTRACE_DEBUGINFO_PATH
 * replaces that list (libdwfl's syntax: "-:.debug:/usr/lib/debug").
 */
#ifndef DTRACE_SYMBOLS_H
#define DTRACE_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <linux/ktrace.h>

#include "ktevents.h"
#include "ktfile.h"

struct ktev_ctx;

/* One function (or one unknown address). */
struct sym_func {
	const char *name;	/* "fib"; "libfoo.so+0x1a2b" or "0x7f12..." if unknown */
	const char *file;	/* source file of its definition, NULL if unknown */
	unsigned int line;
	unsigned int id;	/* 0, 1, ... in the order first looked up */
	const char *object;	/* path of the ELF file it is in, NULL if unknown */
};

struct sym_proc;

/*
 * The database of one run: processes, object files and functions, kept
 * until sym_db_free().  Not thread safe: one thread looks symbols up.
 */
struct sym_db;
struct sym_db *sym_db_new(void);
void sym_db_free(struct sym_db *db);

/*
 * The symbols of process @pid, whose stream file is @stream_path: its map
 * file is found beside it.  Loaded once per pid; without a map file (or
 * with a bad one: a warning, once) addresses print in hex.
 */
struct sym_proc *sym_proc(struct sym_db *db, uint32_t pid, const char *stream_path);

/* The map file of process @pid whose stream is @stream_path (xmalloc'd). */
char *sym_maps_path(uint32_t pid, const char *stream_path);

/* The function at (or containing) @addr in @p (the latest map's). */
const struct sym_func *sym_func(struct sym_proc *p, uint64_t addr);

/*
 * The same at time stamp @tsc (the process's TSC, as its records): where
 * a library was unloaded and another loaded at its address, the map of
 * that time names it.
 */
const struct sym_func *sym_func_at(struct sym_proc *p, uint64_t addr, uint64_t tsc);

/*
 * Where return address @addr is: "calls.c:45", with the functions inlined
 * there, ".cold" parts named after their function:
 * "calls.c:33 in twice inlined at calls.c:80 in main".  Returns @buf.
 */
char *sym_site(struct sym_proc *p, uint64_t addr, char *buf, size_t size);

/*
 * The function whose address has @low as its low 32 bits, among the
 * objects @p mapped (func:leave records no more of it).
 */
const struct sym_func *sym_func_low(struct sym_proc *p, uint32_t low);

/* A function call event of a user stream, whichever version recorded it. */
struct sym_call_event {
	bool entry;		/* func:entry, func:enter */
	bool has_sp;		/* func:enter, func:leave: @sp is known */
	bool low_only;		/* func:leave: only the low 32 bits of @fn */
	uint64_t fn, site;	/* site: entries only, 0 if unknown */
	uint32_t sp;		/* the caller's stack pointer, low 32 bits */
};

/* Decode @ev into @c; false: not a (well-formed) function call event. */
static inline bool sym_call_event(const struct ktfile_event *ev, struct sym_call_event *c)
{
	*c = (struct sym_call_event){ 0 };
	switch (ev->code) {
	case KTRACE_func_entry:
	case KTRACE_func_exit:
		if (ev->nr_args < 2)
			return false;
		c->entry = ev->code == KTRACE_func_entry;
		c->fn = ev->args[0] | (uint64_t)ev->args[1] << 32;
		if (c->entry && ev->nr_args >= 4)
			c->site = ev->args[2] | (uint64_t)ev->args[3] << 32;
		return true;
	case KTRACE_func_enter:
		if (ev->nr_args < 4)
			return false;
		c->entry = c->has_sp = true;
		c->fn = ev->args[0] | (uint64_t)(ev->args[1] & 0xffff) << 32;
		c->site = ev->args[2] | (uint64_t)(ev->args[1] >> 16) << 32;
		c->sp = ev->args[3];
		return true;
	case KTRACE_func_leave:
		if (ev->nr_args < 2)
			return false;
		c->has_sp = c->low_only = true;
		c->fn = ev->args[0];
		c->sp = ev->args[1];
		return true;
	}
	return false;
}

/* Whether return address @addr is in code of @fn inlined into another. */
bool sym_inlined_at(struct sym_proc *p, uint64_t addr, const struct sym_func *fn);

/* Name and format the program gave user event @sub, NULL if none. */
const char *sym_event_name(struct sym_proc *p, unsigned int sub, const char **format);

/*
 * Event @ev as dtrace prints it, name padded to @width, a space, the text:
 * a user event the program named (@proc may be NULL) as "user:NAME" in its
 * own format, a function call with the names of the function and of the
 * one it was called from (where @proc has a map), every other from the
 * event table, decoded as @ctx says.  At most KTEV_TEXT_MAX bytes more than @width.  Not thread
 * safe: it may look symbols up.
 */
char *sym_put_event(char *p, struct sym_proc *proc, const struct ktfile_event *ev,
		    unsigned int width, const struct ktev_ctx *ctx);

/*
 * The text alone of @ev, not a function call: a user event the program
 * named in its own format, every other from the event table.
 */
char *sym_put_text(char *p, struct sym_proc *proc, const struct ktfile_event *ev,
		   const struct ktev_ctx *ctx);

/* Functions known so far (ids below this), and each by its id. */
unsigned int sym_nr_funcs(const struct sym_db *db);
const struct sym_func *sym_func_by_id(const struct sym_db *db, unsigned int id);

#endif /* DTRACE_SYMBOLS_H */
