// SPDX-License-Identifier: GPL-2.0
/*
 * symbols: addresses of user streams to function names, source lines and
 * inlined frames, through the process's saved map and libdwfl.
 *
 * An address resolves in two steps: the process's map says which object
 * (and so which file, at which load bias) it falls in, then that object's
 * module, opened once at file address 0, names the file address.  Both
 * steps are cached: the first per process by address, the second per
 * module by function start.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "amap.h"
#include "escape.h"
#include "files.h"
#include "ktevents.h"
#include "ktfile.h"
#include "symbols.h"
#include "util.h"

/* A user event's name and format, as dtrace keeps them from a map file */
#define SYM_EVENT_NAME_MAX	48
#define SYM_EVENT_FORMAT_MAX	160

/* ---- modules: one ELF file each ------------------------------------------- */

struct module {
	char *path, *build_id;		/* as the map says; build_id "-" if none */
	char *shown;			/* path escaped, for messages */
	const char *name;		/* base name, for unknown addresses */
	Dwfl *dwfl;
	Dwfl_Module *mod;		/* NULL: no file, addresses stay numbers */
	bool opened;			/* module_open() was called */
	struct amap funcs;		/* function start (file address) -> sym_func */
	struct sym_db *db;
	struct module *next;
};

struct object {
	uint64_t bias, start, end;
	unsigned int snapshot;		/* its number, 1, 2, ...: see sym_func_at() */
	struct module *mod;
};

struct sym_proc {
	uint32_t pid;
	struct object *objs;
	size_t nr_objs;
	struct amap cache;		/* run-time address -> sym_func */
	char *event_name[256], *event_format[256];
	char *maps_error;		/* why the map file could not be read */
	uint64_t *snap_tsc;		/* by snapshot number - 1: when it was taken */
	unsigned int nr_snaps;
	bool moved;			/* two snapshots map an address to different files */
	struct amap moved_at;		/* address -> 1: mapped differently, 2: not */
	struct sym_db *db;
	struct sym_proc *next;
};

/* Keys of sym_proc.cache for an address by the snapshot of its time. */
#define SNAP_KEY_SHIFT	48
#define SNAP_KEY_MAX	((1u << 15) - 1)

/*
 * Everything found so far, for one run of dtrace: an object file is read
 * once, whatever the number of processes that mapped it, and a function
 * has one id, so the views can count by it.
 */
struct sym_db {
	struct module *modules;
	struct sym_proc *procs;
	struct sym_func **funcs;	/* by id */
	unsigned int nr_funcs, funcs_alloc;
	char *debuginfo_path;		/* KTRACE_DEBUGINFO_PATH; NULL: the default */
	Dwfl_Callbacks callbacks;	/* each module's Dwfl keeps a pointer to them */
};

static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  GElf_Addr base, const char *file_name, const char *debuglink,
			  GElf_Word crc, char **debuginfo_file_name);

static const char *base_name(const char *path)
{
	const char *slash = path ? strrchr(path, '/') : NULL;

	return slash ? slash + 1 : path;
}

static char *find_by_build_id(const struct sym_db *db, const char *id);

/* CRC-32 (the .gnu_debuglink checksum) of the rest of @fd; false on a read error. */
static bool file_crc32(int fd, uint32_t *crc)
{
	unsigned char buf[65536];
	uint32_t table[256], c = 0xffffffff;
	ssize_t n;

	/* made for each file: next to reading one, it costs nothing */
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t v = i;

		for (int k = 0; k < 8; k++)
			v = v & 1 ? 0xedb88320 ^ (v >> 1) : v >> 1;
		table[i] = v;
	}
	while ((n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		for (ssize_t i = 0; i < n; i++)
			c = table[(c ^ buf[i]) & 0xff] ^ (c >> 8);
	}
	*crc = ~c;
	return lseek(fd, 0, SEEK_SET) == 0;
}

/* @path as a debug file: a regular file (kt_open_regular()) with @crc (0: any). */
static int open_debug(const char *path, GElf_Word crc, char **found)
{
	int fd = kt_open_regular(path);
	uint32_t sum;

	if (fd < 0)
		return -1;
	if (crc && (!file_crc32(fd, &sum) || sum != crc)) {
		close(fd);
		return -1;
	}
	*found = xstrdup(path);
	return fd;
}

/*
 * libdwfl's search for separate debug info (dwfl_standard_find_debuginfo)
 * opens what it finds blocking and unchecked, and the names come from the
 * traced ELF file (.gnu_debuglink, .gnu_debugaltlink): a FIFO there hung
 * dtrace, a link to a device ran its driver.  The same search here, every
 * candidate opened by kt_open_regular(): by build id in the absolute
 * directories of the debug path, then by the debug link's name, absolute,
 * or in each entry of the path ("": the file's directory; relative: below
 * it; absolute: that directory with the file's directory below).  A
 * leading '-' on an entry skips the CRC check, as libdwfl's does.
 * @userdata is the module's: its struct module (report()).
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  GElf_Addr base, const char *file_name, const char *debuglink,
			  GElf_Word crc, char **debuginfo_file_name)
{
	const struct sym_db *db = ((struct module *)*userdata)->db;
	const char *list = db->debuginfo_path ? db->debuginfo_path : ":.debug:/usr/lib/debug";
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr), fd = -1;
	char path[4096], hex[256];
	size_t dir_len;

	if (len > 0 && 2 * (size_t)len < sizeof(hex)) {
		char *by_id;

		for (int i = 0; i < len; i++)
			snprintf(hex + 2 * i, 3, "%02x", bits[i]);
		by_id = find_by_build_id(db, hex);
		if (by_id)
			fd = open_debug(by_id, 0, debuginfo_file_name);
		free(by_id);
		if (fd >= 0)
			return fd;
	}
	if (!debuglink || !*debuglink)
		return -1;
	if (*debuglink == '/')
		return open_debug(debuglink, crc, debuginfo_file_name);
	if (!file_name)
		return -1;
	dir_len = base_name(file_name) - file_name;	/* with its '/', or 0 */
	for (const char *p = list; *p; ) {
		size_t n = strcspn(p, ":");
		const char *e = p;
		GElf_Word want = crc;

		p += n + (p[n] == ':');
		if (*e == '-' || *e == '+') {
			want = *e == '-' ? 0 : crc;
			e++;
			n--;
		}
		if (!n)
			snprintf(path, sizeof(path), "%.*s%s", (int)dir_len, file_name, debuglink);
		else if (*e != '/')
			snprintf(path, sizeof(path), "%.*s%.*s/%s", (int)dir_len, file_name,
				 (int)n, e, debuglink);
		else
			snprintf(path, sizeof(path), "%.*s%s%.*s%s", (int)n, e,
				 *file_name == '/' ? "" : "/", (int)dir_len, file_name, debuglink);
		if (!strcmp(path, file_name))
			continue;		/* the file itself has no debug info */
		fd = open_debug(path, want, debuginfo_file_name);
		if (fd >= 0)
			return fd;
	}
	return -1;
}

/* A file named by build id in the debug directories: .build-id/ab/cdef... */
static char *find_by_build_id(const struct sym_db *db, const char *id)
{
	const char *list = db->debuginfo_path ? db->debuginfo_path : "/usr/lib/debug";
	char path[4096];

	if (strlen(id) < 4 || !strcmp(id, "-"))
		return NULL;
	for (const char *p = list; *p; ) {
		size_t len = strcspn(p, ":");

		if (*p == '/') {
			for (int debug = 1; debug >= 0; debug--) {
				snprintf(path, sizeof(path), "%.*s/.build-id/%.2s/%s%s", (int)len, p,
					 id, id + 2, debug ? ".debug" : "");
				if (access(path, R_OK) == 0)
					return xstrdup(path);
			}
		}
		p += len + (p[len] == ':');
	}
	return NULL;
}

static bool build_id_matches(Dwfl_Module *mod, const char *id)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int len = dwfl_module_build_id(mod, &bits, &vaddr);
	char hex[256];

	if (len <= 0 || !strcmp(id, "-") || 2 * (size_t)len >= sizeof(hex))
		return true;		/* nothing to compare */
	for (int i = 0; i < len; i++)
		snprintf(hex + 2 * i, 3, "%02x", bits[i]);
	return !strcmp(hex, id);
}

/*
 * @file is named by a map file: hostile.  Only a regular file is read, and
 * the open does not block, so a FIFO or a device named there cannot hang
 * dtrace or make it read a tape.  Returns NULL with *err set (an errno, or
 * 0 for libdwfl's message) when the file cannot be used.
 */
static Dwfl_Module *report(struct module *m, const char *file, int *err)
{
	int fd = kt_open_regular(file);
	void **userdata;

	*err = fd < 0 ? -fd : 0;
	m->mod = NULL;
	if (fd < 0)
		return NULL;
	if (m->dwfl)
		dwfl_end(m->dwfl);
	m->dwfl = dwfl_begin(&m->db->callbacks);
	if (!m->dwfl)
		die("libdwfl: %s", dwfl_errmsg(-1));
	dwfl_report_begin(m->dwfl);
	/* at file address 0: the process's bias is applied by the caller */
	m->mod = dwfl_report_elf(m->dwfl, m->name, file, fd, 0, true);
	dwfl_report_end(m->dwfl, NULL, NULL);
	if (!m->mod) {
		close(fd);		/* libdwfl keeps the fd only on success */
		return NULL;
	}
	/* find_debuginfo() gets it: the debug path is the database's */
	dwfl_module_info(m->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = m;
	return m->mod;
}

static struct module *module_get(struct sym_db *db, const char *path, const char *build_id)
{
	struct module *m;

	for (m = db->modules; m; m = m->next)
		if (!strcmp(m->path, path) && !strcmp(m->build_id, build_id))
			return m;
	m = xcalloc(1, sizeof(*m));
	m->path = xstrdup(path);
	m->build_id = xstrdup(build_id);
	m->name = base_name(m->path);
	m->shown = kt_escape_dup(path, SIZE_MAX, KT_ESC_TEXT);
	m->db = db;
	m->next = db->modules;
	db->modules = m;
	return m;
}

/* The module's ELF file and debug info, read when first needed; NULL if none. */
static Dwfl_Module *module_open(struct module *m)
{
	char *alt;
	int err, alt_err;

	if (m->opened)
		return m->mod;
	m->opened = true;
	if (report(m, m->path, &err) && build_id_matches(m->mod, m->build_id))
		return m->mod;
	/* gone, or rebuilt since: the debug file of the traced build, by its id */
	alt = find_by_build_id(m->db, m->build_id);
	if (alt && report(m, alt, &alt_err) && build_id_matches(m->mod, m->build_id)) {
		pr_debug("%s: symbols from %s", m->shown, alt);
	} else if (m->mod) {
		char *id = kt_escape_dup(m->build_id, SIZE_MAX, KT_ESC_TEXT);

		pr_warn("%s: build id differs from the traced file's (%s): names may be wrong",
			m->shown, id);
		free(id);
	} else if (!alt && !err) {
		pr_warn("%s: %s; its addresses stay numbers", m->shown, dwfl_errmsg(-1));
	} else {
		pr_warn("%s: %s; its addresses stay numbers", m->shown,
			err == EINVAL ? "not a regular file" : strerror(err));
	}
	free(alt);
	return m->mod;
}

/* ---- processes: the map file ------------------------------------------------ */

/* trace.pid42.tid43 -> trace.pid42.maps, else DIR/trace.pid<pid>.maps */
char *sym_maps_path(uint32_t pid, const char *stream)
{
	const char *tid = strstr(base_name(stream), ".tid");
	char *path = xmalloc(strlen(stream) + 32);

	if (tid) {
		sprintf(path, "%.*s.maps", (int)(tid - stream), stream);
	} else {
		const char *slash = strrchr(stream, '/');

		sprintf(path, "%.*strace.pid%u.maps", slash ? (int)(slash - stream + 1) : 0,
			stream, pid);
	}
	return path;
}

static char *escaped_bounded(const char *s, size_t max)
{
	char *out = xmalloc(max + 1);

	*kt_escape(out, max, s, strlen(s), KT_ESC_TEXT) = '\0';
	return out;
}

static int by_start(const void *a, const void *b)
{
	const struct object *x = *(const struct object *const *)a;
	const struct object *y = *(const struct object *const *)b;

	return x->start != y->start ? (x->start < y->start ? -1 : 1) :
	       x->end != y->end ? (x->end < y->end ? -1 : 1) : 0;
}

/* Same file at the same place: the same answers. */
static bool same_mapping(const struct object *a, const struct object *b)
{
	return a->mod == b->mod && a->bias == b->bias;
}

/*
 * Whether some address is mapped by two snapshots to different files (a
 * library unloaded and another loaded in its place; an exec): then the
 * snapshot of an address's time names it (sym_func_at()).
 */
static bool any_moved(const struct sym_proc *p)
{
	const struct object **sorted = xcalloc(p->nr_objs + 1, sizeof(*sorted));
	uint64_t reach = 0;
	size_t i, far = 0;
	bool moved = false;

	for (i = 0; i < p->nr_objs; i++)
		sorted[i] = &p->objs[i];
	qsort(sorted, p->nr_objs, sizeof(*sorted), by_start);
	/* each overlaps the one reaching furthest before it, if any does */
	for (i = 0; i < p->nr_objs && !moved; i++) {
		if (i && sorted[i]->start < reach && !same_mapping(sorted[i], sorted[far]))
			moved = true;
		if (sorted[i]->end > reach) {
			reach = sorted[i]->end;
			far = i;
		}
	}
	free(sorted);
	return moved;
}

static void load_maps(struct sym_proc *p, const char *path)
{
	/* a regular file only, opened without blocking: see report() */
	int fd = kt_open_regular(path);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;
	unsigned int snapshot = 0, lineno = 0;
	char line[8192];

	if (!f) {
		int err = fd < 0 ? -fd : errno;

		if (fd >= 0)
			close(fd);
		/* said when an address needs it: event names alone can do without */
		p->maps_error = xmalloc(strlen(path) + 128);
		sprintf(p->maps_error, "%s: %s: addresses of pid %u stay numbers", path,
			err == EINVAL ? "not a regular file" : strerror(err), p->pid);
		return;
	}
	while (fgets(line, sizeof(line), f)) {
		unsigned long long bias, start, end;
		char id[256], *rest = NULL;
		unsigned int sub;
		int pos = 0;

		lineno++;
		line[strcspn(line, "\n")] = '\0';
		if (!strncmp(line, "snapshot ", 9)) {
			unsigned long long tsc = 0;

			snapshot++;
			sscanf(line + 9, "%llu", &tsc);
			p->snap_tsc = xrealloc(p->snap_tsc, snapshot * sizeof(*p->snap_tsc));
			p->snap_tsc[snapshot - 1] = tsc;
			p->nr_snaps = snapshot;
		} else if (sscanf(line, "object %llx %llx %llx %255s %n", &bias, &start, &end,
				  id, &pos) == 4 && pos && line[pos] == '/') {
			struct object *o;

			p->objs = xrealloc(p->objs, (p->nr_objs + 1) * sizeof(*p->objs));
			o = &p->objs[p->nr_objs++];
			*o = (struct object){ bias, start, end, snapshot, module_get(p->db, line + pos, id) };
		} else if (sscanf(line, "event %u %n", &sub, &pos) == 1 && sub && sub < 256) {
			char *name = line + pos;

			rest = name + strcspn(name, " ");
			if (*rest)
				*rest++ = '\0';
			free(p->event_name[sub]);
			free(p->event_format[sub]);
			/*
			 * kept as text shows them (escape.h), bounded after escaping:
			 * a line of dtrace's output has room for 200 bytes more
			 */
			p->event_name[sub] = escaped_bounded(name, SYM_EVENT_NAME_MAX);
			p->event_format[sub] = escaped_bounded(rest, SYM_EVENT_FORMAT_MAX);
		} else if (strncmp(line, "map ", 4) && line[0] != '#' && line[0]) {
			pr_warn("%s:%u: line not understood, ignored", path, lineno);
		}
	}
	fclose(f);
	p->moved = any_moved(p);
}

struct sym_db *sym_db_new(void)
{
	struct sym_db *db = xcalloc(1, sizeof(*db));

	db->debuginfo_path = getenv("KTRACE_DEBUGINFO_PATH");
	db->callbacks = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &db->debuginfo_path,
	};
	return db;
}

struct sym_proc *sym_proc(struct sym_db *db, uint32_t pid, const char *stream_path)
{
	struct sym_proc *p;
	char *path;

	for (p = db->procs; p; p = p->next)
		if (p->pid == pid)
			return p;
	p = xcalloc(1, sizeof(*p));
	p->pid = pid;
	p->db = db;
	p->next = db->procs;
	db->procs = p;
	path = sym_maps_path(pid, stream_path);
	load_maps(p, path);
	free(path);
	return p;
}

static const struct object *find_object(struct sym_proc *p, uint64_t addr)
{
	const struct object *best = NULL;

	if (p->maps_error) {
		pr_warn("%s", p->maps_error);
		free(p->maps_error);
		p->maps_error = NULL;
	}
	for (size_t i = 0; i < p->nr_objs; i++) {
		const struct object *o = &p->objs[i];

		if (addr >= o->start && addr < o->end && (!best || o->snapshot > best->snapshot))
			best = o;
	}
	return best;
}

/* ---- functions ---------------------------------------------------------------- */

/*
 * Names come from ELF files a map file names: hostile.  They are kept as
 * text shows them (control characters and bytes that are not UTF-8 as
 * \xNN, see escape.h), so every view prints them safely and DOT and JSON
 * escape their own quotes on top.  Takes @name.
 */
static struct sym_func *new_func(struct sym_db *db, char *name, const char *file,
				 unsigned int line)
{
	struct sym_func *f = xcalloc(1, sizeof(*f));

	f->name = kt_escape_dup(name, SIZE_MAX, KT_ESC_TEXT);
	free(name);
	f->file = file ? kt_escape_dup(base_name(file), SIZE_MAX, KT_ESC_TEXT) : NULL;
	f->line = line;
	if (db->nr_funcs == db->funcs_alloc) {
		db->funcs_alloc = db->funcs_alloc ? 2 * db->funcs_alloc : 256;
		db->funcs = xrealloc(db->funcs, db->funcs_alloc * sizeof(*db->funcs));
	}
	f->id = db->nr_funcs;
	db->funcs[db->nr_funcs++] = f;
	return f;
}

/* The DWARF subprogram that contains @vaddr (with @mod's bias), or NULL. */
static bool subprogram(Dwfl_Module *mod, uint64_t vaddr, Dwarf_Die *out)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod, vaddr, &bias), *scopes;
	int n = cu ? dwarf_getscopes(cu, vaddr - bias, &scopes) : 0;
	bool found = false;

	for (int i = 0; i < n && !found; i++) {
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			*out = scopes[i];
			found = true;
		}
	}
	if (n > 0)
		free(scopes);
	return found;
}

/* The C++ ABI's demangler, from libstdc++ if dtrace was linked with it */
extern char *__cxa_demangle(const char *name, char *buf, size_t *len, int *status)
	__attribute__((weak));

/*
 * "ns::f<int>(int) const" -> "ns::f<int>": the call tree shows no
 * arguments.  Every parameter list goes, with the qualifiers after it, that
 * of a function a local class is in too ("f(int)::Guard::Guard()" ->
 * "f::Guard::Guard": cut at the first one, all of a function's local
 * classes would be named after it); "(anonymous namespace)", what is in
 * <>, {} and [] ("{lambda(int)#1}") and an operator's own name stay.
 */
static char *demangle(const char *name)
{
	char *d = name[0] == '_' && name[1] == 'Z' && __cxa_demangle ?
		  __cxa_demangle(name, NULL, NULL, NULL) : NULL;
	char *in, *out;
	int depth = 0;

	if (!d)
		return xstrdup(name);
	for (in = out = d; *in;) {
		if (!depth && !strncmp(in, "operator", 8) && (in == d || in[-1] == ':')) {
			/* its name up to its parameters: "operator()", "operator<<" */
			char *end = in + 8 + !strncmp(in + 8, "()", 2) * 2;

			end += strcspn(end, "(");
			memmove(out, in, end - in);
			out += end - in;
			in = end;
		} else if (!depth && *in == '(' && strncmp(in, "(anonymous namespace)", 21)) {
			int nest = 0;

			do	/* the parameters */
				nest += (*in == '(') - (*in == ')');
			while (*++in && nest);
			while (*in && strncmp(in, "::", 2))	/* " const", " &&", ... */
				in++;
		} else {
			depth += (strchr("<({[", *in) != NULL) - (strchr(">)}]", *in) != NULL);
			*out++ = *in++;
		}
	}
	*out = '\0';
	return d;
}

static struct sym_func *resolve(struct module *m, uint64_t vaddr)
{
	GElf_Off off = 0;
	GElf_Sym sym;
	const char *name = module_open(m) ? dwfl_module_addrinfo(m->mod, vaddr, &off, &sym,
							 NULL, NULL, NULL) : NULL;
	uint64_t start = name ? vaddr - off : vaddr;
	struct sym_func *f = amap_get(&m->funcs, start);
	Dwarf_Die die;
	int line = 0;

	if (f)
		return f;
	if (name) {
		const char *file = NULL;

		if (subprogram(m->mod, start, &die)) {
			file = dwarf_decl_file(&die);
			dwarf_decl_line(&die, &line);
		}
		f = new_func(m->db, demangle(name), file, line);
	} else {
		char *hex = xmalloc(strlen(m->name) + 24);

		sprintf(hex, "%s+0x%llx", m->name, (unsigned long long)vaddr);
		f = new_func(m->db, hex, NULL, 0);
	}
	f->object = m->path;
	amap_put(&m->funcs, start, f);
	return f;
}

const struct sym_func *sym_func(struct sym_proc *p, uint64_t addr)
{
	struct sym_func *f = amap_get(&p->cache, addr);
	const struct object *o;

	if (f)
		return f;
	o = find_object(p, addr);
	if (o) {
		f = resolve(o->mod, addr - o->bias);
	} else {
		char *hex = xmalloc(24);

		sprintf(hex, "0x%llx", (unsigned long long)addr);
		f = new_func(p->db, hex, NULL, 0);
	}
	amap_put(&p->cache, addr, f);
	return f;
}

/*
 * The object mapping @addr at @tsc: the snapshot of that time's (the last
 * one taken before it); if it has none there, the first later one's (a
 * library loaded since, not yet in a map: it was written at its
 * dlclose() or at exit); else the last earlier one's.
 */
static const struct object *find_object_at(struct sym_proc *p, uint64_t addr,
					   unsigned int snap)
{
	const struct object *at = NULL, *after = NULL, *before = NULL;

	for (size_t i = 0; i < p->nr_objs; i++) {
		const struct object *o = &p->objs[i];

		if (addr < o->start || addr >= o->end)
			continue;
		if (o->snapshot == snap)
			at = o;
		else if (o->snapshot > snap && (!after || o->snapshot < after->snapshot))
			after = o;
		else if (o->snapshot < snap && (!before || o->snapshot > before->snapshot))
			before = o;
	}
	return at ? at : after ? after : before;
}

/* Whether the objects that map @addr, in any snapshot, are not all one. */
static bool moved_at(struct sym_proc *p, uint64_t addr)
{
	uintptr_t known = (uintptr_t)amap_get(&p->moved_at, addr);
	const struct object *first = NULL;

	if (known)
		return known == 1;
	known = 2;
	for (size_t i = 0; i < p->nr_objs && known == 2; i++) {
		const struct object *o = &p->objs[i];

		if (addr < o->start || addr >= o->end)
			continue;
		if (!first)
			first = o;
		else if (!same_mapping(first, o))
			known = 1;
	}
	amap_put(&p->moved_at, addr, (void *)known);
	return known == 1;
}

const struct sym_func *sym_func_at(struct sym_proc *p, uint64_t addr, uint64_t tsc)
{
	unsigned int lo = 0, hi = p->nr_snaps;
	const struct object *o;
	struct sym_func *f;
	uint64_t key;

	if (!p->moved || addr >> SNAP_KEY_SHIFT || p->nr_snaps >= SNAP_KEY_MAX ||
	    !moved_at(p, addr))
		return sym_func(p, addr);
	/* the snapshot of that time: the number of those taken at or before it */
	while (lo < hi) {
		unsigned int mid = (lo + hi) / 2;

		if (p->snap_tsc[mid] <= tsc)
			lo = mid + 1;
		else
			hi = mid;
	}
	key = addr | (uint64_t)(lo + 1) << SNAP_KEY_SHIFT;
	f = amap_get(&p->cache, key);
	if (f)
		return f;
	o = find_object_at(p, addr, lo);
	f = o ? resolve(o->mod, addr - o->bias) : (struct sym_func *)sym_func(p, addr);
	amap_put(&p->cache, key, f);
	return f;
}

const struct sym_func *sym_func_low(struct sym_proc *p, uint32_t low)
{
	/* bit 63: no user address has it, so no key of sym_func()'s */
	uint64_t key = 1ull << 63 | low;
	struct sym_func *f = amap_get(&p->cache, key);

	if (f)
		return f;
	for (size_t i = 0; i < p->nr_objs && !f; i++) {
		const struct object *o = &p->objs[i];
		uint64_t addr = (o->start & ~0xffffffffull) | low;

		if (addr < o->start)
			addr += 1ull << 32;
		if (addr < o->end)
			f = (struct sym_func *)sym_func(p, addr);
	}
	if (!f) {
		char *hex = xmalloc(32);

		sprintf(hex, "0x...%08x", low);
		f = new_func(p->db, hex, NULL, 0);
	}
	amap_put(&p->cache, key, f);
	return f;
}

unsigned int sym_nr_funcs(const struct sym_db *db)
{
	return db->nr_funcs;
}

const struct sym_func *sym_func_by_id(const struct sym_db *db, unsigned int id)
{
	return id < db->nr_funcs ? db->funcs[id] : NULL;
}

/* ---- call sites ----------------------------------------------------------------- */

static const char *file_of(Dwarf_Die *cu, Dwarf_Word idx)
{
	Dwarf_Files *files;
	size_t nr;

	if (dwarf_getsrcfiles(cu, &files, &nr) != 0 || idx >= nr)
		return "?";
	return base_name(dwarf_filesrc(files, idx, NULL, NULL));
}

char *sym_site(struct sym_proc *p, uint64_t addr, char *buf, size_t size)
{
	const struct object *o = find_object(p, addr);
	uint64_t vaddr = o ? addr - o->bias - 1 : 0;	/* the call, not the return */
	Dwfl_Module *mod = o ? module_open(o->mod) : NULL;
	Dwarf_Addr bias;
	Dwarf_Die *cu, *scopes, cu_die;
	Dwfl_Line *l;
	int n, lineno = 0, len;
	const char *sym, *file;
	GElf_Off off;
	GElf_Sym s;

	if (!mod) {
		if (o) {	/* the map file's name for it: escaped */
			char *p = kt_escape(buf, size / 2, o->mod->name, SIZE_MAX, KT_ESC_TEXT);

			snprintf(p, size - (p - buf), "+0x%llx", (unsigned long long)(vaddr + 1));
		} else {
			snprintf(buf, size, "0x%llx", (unsigned long long)addr);
		}
		return buf;
	}
	l = dwfl_module_getsrc(mod, vaddr);
	file = l ? dwfl_lineinfo(l, NULL, &lineno, NULL, NULL, NULL) : NULL;
	sym = dwfl_module_addrinfo(mod, vaddr, &off, &s, NULL, NULL, NULL);
	if (file)
		len = snprintf(buf, size, "%s:%d", base_name(file), lineno);
	else
		len = snprintf(buf, size, "%s+0x%llx", sym ? sym : o->mod->name,
			       (unsigned long long)(sym ? off + 1 : vaddr + 1));
	cu = dwfl_module_addrdie(mod, vaddr, &bias);
	n = cu ? dwarf_getscopes(cu, vaddr - bias, &scopes) : 0;
	if (cu)
		cu_die = *cu;
	/* innermost first: the inlined functions, up to the real one */
	for (int i = 0; i < n && len < (int)size; i++) {
		int tag = dwarf_tag(&scopes[i]);
		Dwarf_Attribute attr;
		Dwarf_Word cfile = 0, cline = 0;
		const char *name = dwarf_diename(&scopes[i]);

		if (tag == DW_TAG_subprogram)
			break;
		if (tag != DW_TAG_inlined_subroutine)
			continue;
		dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_file, &attr), &cfile);
		dwarf_formudata(dwarf_attr(&scopes[i], DW_AT_call_line, &attr), &cline);
		len += snprintf(buf + len, size - len, " in %s inlined at %s:%llu",
				name ? name : "?", file_of(&cu_die, cfile),
				(unsigned long long)cline);
	}
	if (n > 0)
		free(scopes);
	/* the function it is in, and which part of it if it was split */
	if (sym && file && len < (int)size) {
		size_t base = strstr(sym, ".cold") ? (size_t)(strstr(sym, ".cold") - sym) : strlen(sym);

		len += snprintf(buf + len, size - len, " in %.*s", (int)base, sym);
		if (sym[base] && len < (int)size)
			snprintf(buf + len, size - len, " (%s)", sym);
	}
	/* file and function names are the ELF file's: shown as text shows them */
	{
		char *raw = xstrdup(buf);

		*kt_escape(buf, size - 1, raw, SIZE_MAX, KT_ESC_TEXT) = '\0';
		free(raw);
	}
	return buf;
}

bool sym_inlined_at(struct sym_proc *p, uint64_t addr, const struct sym_func *fn)
{
	const struct object *o = find_object(p, addr);
	Dwfl_Module *mod = o ? module_open(o->mod) : NULL;
	uint64_t vaddr = o ? addr - o->bias - 1 : 0;
	Dwarf_Addr bias;
	Dwarf_Die *cu = mod ? dwfl_module_addrdie(mod, vaddr, &bias) : NULL, *scopes;
	int n = cu ? dwarf_getscopes(cu, vaddr - bias, &scopes) : 0;
	bool found = false;

	for (int i = 0; i < n && !found; i++) {
		const char *name = dwarf_diename(&scopes[i]);

		found = dwarf_tag(&scopes[i]) == DW_TAG_inlined_subroutine && name &&
			!strcmp(name, fn->name);
	}
	if (n > 0)
		free(scopes);
	return found;
}

const char *sym_event_name(struct sym_proc *p, unsigned int sub, const char **format)
{
	if (!p || sub > 255 || !p->event_name[sub])
		return NULL;
	*format = p->event_format[sub];
	return p->event_name[sub];
}

/* Arguments into a program's own format: %u %d %x, %llu %llx take two. */
static char *put_format(char *p, const char *fmt, const uint32_t *args, unsigned int nr)
{
	unsigned int i = 0;
	char *end = p + 200;

	while (*fmt && p < end) {
		uint64_t v;
		int len;

		if (*fmt != '%' || !fmt[1]) {
			*p++ = *fmt++;
			continue;
		}
		len = !strncmp(fmt, "%ll", 3) && fmt[3] ? 4 : 2;
		if (fmt[len - 1] == '%') {
			*p++ = '%';
		} else if (i + (len == 4) >= nr) {
			*p++ = '?';
		} else {
			v = args[i++];
			if (len == 4)
				v |= (uint64_t)args[i++] << 32;
			if (fmt[len - 1] == 'x')
				p = ktev_put_hex(p, v);
			else if (fmt[len - 1] == 'd' && len == 2 && (int32_t)v < 0)
				p = ktev_put_u64(memset(p, '-', 1) + 1, -(int64_t)(int32_t)v);
			else
				p = ktev_put_u64(p, v);
		}
		fmt += len;
	}
	return p;
}

/* A name from the program's symbols: C++ ones can be long. */
static char *put_bounded(char *p, const char *s)
{
	size_t len = strnlen(s, SYM_EVENT_FORMAT_MAX);

	memcpy(p, s, len);
	return p + len;
}

char *sym_put_event(char *p, struct sym_proc *proc, const struct ktfile_event *ev,
		    unsigned int width, const struct ktev_ctx *ctx)
{
	const char *name, *format;
	struct sym_call_event call;
	char *start = p;

	/* function calls, where the map can name them */
	if (proc && proc->nr_objs && sym_call_event(ev, &call)) {
		p = ktev_put_name(p, ev->code, width);
		p = stpcpy(p, call.entry ? " enter " : " exit ");
		p = put_bounded(p, (call.low_only ? sym_func_low(proc, call.fn) :
				    sym_func_at(proc, call.fn, ev->tsc))->name);
		if (call.site)
			p = put_bounded(stpcpy(p, " from "),
					sym_func_at(proc, call.site - 1, ev->tsc)->name);
		if (call.has_sp)
			p += sprintf(p, " sp ...%08x", call.sp);
		return p;
	}
	if ((ev->code & KTRACE_GROUP_MASK) != KTRACE_GRP_user ||
	    !(name = sym_event_name(proc, KTRACE_SUB(ev->code), &format))) {
		p = ktev_put_name(p, ev->code, width);
	} else {
		p = stpcpy(stpcpy(p, "user:"), name);
		while (p - start < (ptrdiff_t)width)
			*p++ = ' ';
	}
	*p++ = ' ';
	return sym_put_text(p, proc, ev, ctx);
}

char *sym_put_text(char *p, struct sym_proc *proc, const struct ktfile_event *ev,
		   const struct ktev_ctx *ctx)
{
	const char *format;

	if ((ev->code & KTRACE_GROUP_MASK) == KTRACE_GRP_user &&
	    sym_event_name(proc, KTRACE_SUB(ev->code), &format))
		return put_format(p, format, ev->args, ev->nr_args);
	return ktev_put_text(p, ev->code, ev->args, ev->nr_args, ctx);
}

void sym_db_free(struct sym_db *db)
{
	if (!db)
		return;
	while (db->procs) {
		struct sym_proc *p = db->procs;

		db->procs = p->next;
		for (unsigned int i = 0; i < 256; i++) {
			free(p->event_name[i]);
			free(p->event_format[i]);
		}
		free(p->maps_error);
		free(p->objs);
		free(p->snap_tsc);
		free(p->moved_at.keys);
		free(p->moved_at.vals);
		free(p->cache.keys);
		free(p->cache.vals);
		free(p);
	}
	while (db->modules) {
		struct module *m = db->modules;

		db->modules = m->next;
		if (m->dwfl)
			dwfl_end(m->dwfl);
		free(m->funcs.keys);
		free(m->funcs.vals);
		free(m->path);
		free(m->shown);
		free(m->build_id);
		free(m);
	}
	for (unsigned int i = 0; i < db->nr_funcs; i++) {
		free((char *)db->funcs[i]->name);
		free((char *)db->funcs[i]->file);
		free(db->funcs[i]);
	}
	free(db->funcs);
	free(db);
}
