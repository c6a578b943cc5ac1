// SPDX-License-Identifier: GPL-2.0
/*
 * probe_dwarf: a probe spec's function and fields, resolved through libdw
 * and libdwfl and compiled into the kernel's fetch program
 * (struct ktrace_probe_op, include/uapi/linux/ktrace.h).
 *
 * The binary is opened at its own addresses (bias 0); its debug info is
 * what libdwfl finds: the file itself, /usr/lib/debug/.build-id/xx/yyyy.debug
 * (and the same below --debug-dir), .gnu_debuglink, and debuginfod when
 * DEBUGINFOD_URLS is set.  Without DWARF only the symbol tables name the
 * function, and only $arg1..$arg6 and $retval can be fetched.
 *
 * The probe is the function's first instruction: there, every parameter
 * is where the calling convention put it, and the DWARF location lists
 * say so (a register, or the caller's stack above the CFA).  Past the
 * prologue is where gdb stops, but the prologue's length is a guess the
 * line table makes; the entry is not.  Only a function built without
 * optimization, whose parameters live in stack slots below the CFA that
 * the prologue fills, is probed where its line table says the prologue
 * ends (decide_address()), with the CFA from its CFI there.
 *
 * Every out-of-line copy (overloads, clones) and every inlined copy of the
 * function is probed, each at its first instruction with its own DWARF
 * (an inlined copy's at its DW_AT_entry_pc; a return probe has none).
 *
 * A field path "a.b->c[2]" walks the types: `.` follows pointers,
 * references and smart pointers (boost::intrusive_ptr's px,
 * std::shared_ptr's _M_ptr, std::unique_ptr's _M_t._M_t._M_head_impl)
 * on its own, finds members in base classes, and through typedefs; each
 * pointer followed is a DEREF, each member an ADD of its offset.
 */
#define _GNU_SOURCE
#include <ctype.h>
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <gelf.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "probe.h"
#include "util.h"

#define STR_DEFAULT	KTRACE_PROBE_MAX_STR

/* The C++ ABI's demangler, from libstdc++ where ktrace is linked with it. */
extern char *__cxa_demangle(const char *name, char *buf, size_t *len, int *status)
	__attribute__((weak));

/* One binary, opened with its debug info. */
struct bin {
	const char *path;
	int fd;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	Dwfl_Callbacks cb;
	char *debuginfo_path;		/* libdwfl's search path, --debug-dir first */
	const char *debug_dir;
	Dwarf *dwarf;			/* NULL: none found */
	Dwarf_Addr bias;
	char build_id[84];
};

/* One out-of-line copy of a function that matched. */
struct func {
	char *name, *sig;		/* qualified name; demangled signature */
	const char *sym;		/* the ELF symbol at its entry, or NULL */
	Dwarf_Die die;
	bool has_die;
	bool inlined;			/* an inlined copy: die is its inlined_subroutine */
	Dwarf_Die outer;		/* ... and outer the function it is inlined into */
	Dwarf_Addr entry;		/* module address */
	Dwarf_Addr probe_at;		/* entry, or past the prologue (decide_address()) */
};

struct funcs {
	struct func *v;
	size_t n, cap;
	unsigned int inlined;		/* inlined copies among them */
	const char *want;		/* the name, signature or glob asked for */
	bool glob;
};

/* What a field's compilation is about, for its messages. */
struct comp {
	const struct bin *b;
	const struct func *f;
	const char *field;
	struct probe *p;
	Dwarf_Addr pc;			/* the probe address, DWARF's */
	Dwarf_Frame *frame;		/* past a prologue: the CFI there, for the CFA */
	bool value;			/* acc holds the value (a register), not its address */
	unsigned int derefs, words;
};

static __attribute__((noreturn, format(printf, 2, 3)))
void fail(const struct comp *c, const char *fmt, ...)
{
	char msg[1024];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fflush(stdout);			/* -L's lines before it */
	die("%s:%s: %s: %s", c->b->path, c->f->name, c->field, msg);
}

/* ---- the binary ----------------------------------------------------------- */

/*
 * libdwfl's search, then DEBUG_DIR/DEBUGLINK (a debug file dropped into
 * the directory by its name, as objcopy --add-gnu-debuglink names it).
 */
static int find_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname,
			  GElf_Addr base, const char *file_name, const char *debuglink,
			  GElf_Word crc, char **debuginfo_file_name)
{
	int fd = dwfl_standard_find_debuginfo(mod, userdata, modname, base, file_name,
					      debuglink, crc, debuginfo_file_name);
	const struct bin *b = *userdata;
	char path[4096];

	if (fd >= 0 || !b || !b->debug_dir || !debuglink || strchr(debuglink, '/'))
		return fd;
	snprintf(path, sizeof(path), "%s/%s", b->debug_dir, debuglink);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0)
		*debuginfo_file_name = xstrdup(path);
	return fd;
}

/* The file the DWARF came from: the binary, or a separate debug file. */
static const char *debug_file(const struct bin *b)
{
	const char *main_file = NULL, *debug = NULL;

	dwfl_module_info(b->mod, NULL, NULL, NULL, NULL, NULL, &main_file, &debug);
	return debug ? debug : main_file ? main_file : b->path;
}

static void bin_open(struct bin *b, const char *path, const char *debug_dir)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	void **userdata;
	int len;

	memset(b, 0, sizeof(*b));
	b->path = path;
	b->debug_dir = debug_dir;
	b->fd = probe_open_binary(path);
	if (debug_dir) {
		size_t n = strlen(debug_dir) + 32;

		b->debuginfo_path = xmalloc(n);
		snprintf(b->debuginfo_path, n, "%s::.debug:/usr/lib/debug", debug_dir);
	}
	b->cb = (Dwfl_Callbacks){
		.find_elf = dwfl_build_id_find_elf,
		.find_debuginfo = find_debuginfo,
		.section_address = dwfl_offline_section_address,
		.debuginfo_path = &b->debuginfo_path,
	};
	b->dwfl = dwfl_begin(&b->cb);
	if (!b->dwfl)
		die("libdwfl: %s", dwfl_errmsg(-1));
	dwfl_report_begin(b->dwfl);
	b->mod = dwfl_report_elf(b->dwfl, path, path, dup(b->fd), 0, true);
	dwfl_report_end(b->dwfl, NULL, NULL);
	if (!b->mod)
		die("%s: %s", path, dwfl_errmsg(-1));
	dwfl_module_info(b->mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	*userdata = b;
	len = dwfl_module_build_id(b->mod, &bits, &vaddr);
	strcpy(b->build_id, "-");
	for (int i = 0; len > 0 && len < 40 && i < len; i++)
		snprintf(b->build_id + 2 * i, 3, "%02x", bits[i]);
	b->dwarf = dwfl_module_getdwarf(b->mod, &b->bias);
	if (b->dwarf)
		pr_debug("%s: debug info from %s", path, debug_file(b));
}

static void bin_close(struct bin *b)
{
	dwfl_end(b->dwfl);
	close(b->fd);
	free(b->debuginfo_path);
}

/* Where libdwfl looked for debug info, for the message that it found none. */
static void where_looked(const struct bin *b, char *buf, size_t size)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(b->mod, &bias);
	const char *link = NULL, *urls = getenv("DEBUGINFOD_URLS");
	size_t len;
	GElf_Word crc;

	len = snprintf(buf, size, "looked in the file");
	for (int i = 0; i < 2 && strcmp(b->build_id, "-") && len < size; i++) {
		const char *dir = i ? "/usr/lib/debug" : b->debug_dir;

		if (dir)
			len += snprintf(buf + len, size - len, ", %s/.build-id/%.2s/%s.debug", dir,
					b->build_id, b->build_id + 2);
	}
	if (elf)
		link = dwelf_elf_gnu_debuglink(elf, &crc);
	if (link && len < size)
		len += snprintf(buf + len, size - len, ", its .gnu_debuglink %s", link);
	if (len < size)
		snprintf(buf + len, size - len, ", debuginfod%s%s", urls && *urls ? " at " :
			 " (DEBUGINFOD_URLS unset)", urls && *urls ? urls : "");
}

static uint64_t file_offset(const struct bin *b, uint64_t vaddr, const char *what)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(b->mod, &bias);
	size_t n;

	if (!elf || elf_getphdrnum(elf, &n) < 0)
		die("%s: %s: no program headers", b->path, what);
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || !(ph.p_flags & PF_X))
			continue;
		if (vaddr >= ph.p_vaddr && vaddr < ph.p_vaddr + ph.p_filesz)
			return vaddr - ph.p_vaddr + ph.p_offset;
	}
	die("%s: %s: address 0x%" PRIx64 " is in no executable segment", b->path, what, vaddr);
}

/* ---- names ---------------------------------------------------------------- */

static char *demangle(const char *name)
{
	char *d = name && name[0] == '_' && name[1] == 'Z' && __cxa_demangle ?
		  __cxa_demangle(name, NULL, NULL, NULL) : NULL;

	return d ? d : xstrdup(name);
}

/*
 * "void ns::f<int>(int) const [clone .isra.0]" -> "ns::f<int>": up to the
 * '(' that matches the last ')', without a template's return type (the
 * text before the last blank outside <> and (), unless it is "operator").
 */
static char *strip_params(const char *sig)
{
	const char *end = strrchr(sig, ')'), *name = sig, *stop = NULL;
	int depth = 0;

	for (const char *s = end; s && s >= sig; s--) {
		if (*s == ')')
			depth++;
		else if (*s == '(' && !--depth) {
			stop = s;
			break;
		}
	}
	if (!stop)
		return xstrdup(sig);
	depth = 0;
	for (const char *s = sig; s < stop; s++) {
		if (!strncmp(s, "operator", 8)) {
			s += 7;		/* its '<', '(' and blank are its name */
			continue;
		}
		if (*s == '<' || *s == '(')
			depth++;
		else if ((*s == '>' || *s == ')') && depth > 0)
			depth--;
		else if (*s == ' ' && !depth)
			name = s + 1;
	}
	return xstrndup(name, stop - name);
}

/* Compare ignoring spaces: "f(int,char*)" is "f(int, char*)". */
static bool same_sig(const char *a, const char *b)
{
	for (;;) {
		while (*a == ' ')
			a++;
		while (*b == ' ')
			b++;
		if (*a != *b)
			return false;
		if (!*a)
			return true;
		a++, b++;
	}
}

static const char *attr_string(Dwarf_Die *die, int name)
{
	Dwarf_Attribute a;

	return dwarf_formstring(dwarf_attr_integrate(die, name, &a));
}

/* The DIE's qualified name and signature (linkage name demangled, else its name). */
static bool die_names(Dwarf_Die *die, char **name, char **sig)
{
	const char *link = attr_string(die, DW_AT_linkage_name);
	const char *plain = attr_string(die, DW_AT_name);

	if (!link)
		link = attr_string(die, DW_AT_MIPS_linkage_name);
	if (!plain && !link)
		return false;
	if (link && link[0] == '_' && link[1] == 'Z') {
		*sig = demangle(link);
		*name = strip_params(*sig);
	} else {
		*sig = xstrdup(plain ? plain : link);
		*name = xstrdup(*sig);
	}
	return true;
}

static bool name_matches(const struct funcs *fl, const char *name, const char *sig)
{
	if (fl->glob)
		return !fnmatch(fl->want, name, 0) || !fnmatch(fl->want, sig, 0);
	if (strchr(fl->want, '('))
		return same_sig(fl->want, sig);
	return !strcmp(fl->want, name);
}

/* The last part of a qualified name: a cheap test before demangling. */
static bool last_part_may_match(const struct funcs *fl, Dwarf_Die *die)
{
	const char *plain = attr_string(die, DW_AT_name), *want = fl->want, *p;
	size_t n;

	if (fl->glob || !plain)
		return true;
	n = strcspn(want, "(<");
	for (p = want; (p = strstr(p, "::")) && p < want + n; p += 2)
		want = p + 2;
	n = strcspn(want, "(<");
	return !strncmp(plain, want, n) && (plain[n] == '\0' || plain[n] == '<');
}

static const char *symbol_at(const struct bin *b, Dwarf_Addr addr)
{
	GElf_Off off;
	GElf_Sym sym;
	const char *name = dwfl_module_addrinfo(b->mod, addr, &off, &sym, NULL, NULL, NULL);

	return name && !off ? name : NULL;
}

/* ---- functions ------------------------------------------------------------ */

static struct func *add_func(const struct bin *b, struct funcs *fl, char *name, char *sig,
			     Dwarf_Die *die, Dwarf_Addr entry)
{
	for (size_t i = 0; i < fl->n; i++)
		if (fl->v[i].entry == entry) {	/* the same code described twice */
			free(name);
			free(sig);
			return NULL;
		}
	if (fl->n == fl->cap) {
		fl->cap = fl->cap ? 2 * fl->cap : 8;
		fl->v = xrealloc(fl->v, fl->cap * sizeof(*fl->v));
	}
	fl->v[fl->n++] = (struct func){ .name = name, .sig = sig, .entry = entry,
					.sym = symbol_at(b, entry), .has_die = die != NULL };
	if (die)
		fl->v[fl->n - 1].die = *die;
	return &fl->v[fl->n - 1];
}

/*
 * The entry of an out-of-line copy: its low_pc, or for one split into a
 * hot and a cold part (DW_AT_ranges) the range that starts at a symbol not
 * named *.cold, else the first range (GCC puts the hot part first).
 */
static bool die_entry(const struct bin *b, Dwarf_Die *die, Dwarf_Addr *entry)
{
	Dwarf_Addr base, start, end, first = 0;
	ptrdiff_t off = 0;

	if (dwarf_hasattr(die, DW_AT_low_pc)) {
		if (dwarf_lowpc(die, &start) < 0 || !start)
			return false;	/* a copy the linker dropped */
		*entry = start + b->bias;
		return true;
	}
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0) {
		const char *sym = symbol_at(b, start + b->bias);

		if (!first)
			first = start;
		if (start && sym && !strstr(sym, ".cold")) {
			*entry = start + b->bias;
			return true;
		}
	}
	*entry = first + b->bias;
	return first != 0;
}

/*
 * Every subprogram and inlined copy under @parent that matches; @outer is
 * the subprogram they are in (an inlined copy's frame base is its).
 */
/* An inlined copy's first instruction: DW_AT_entry_pc, else its lowest address. */
static bool inline_entry(const struct bin *b, Dwarf_Die *die, Dwarf_Addr *entry)
{
	Dwarf_Addr base, start, end, low = 0;
	ptrdiff_t off = 0;

	if (dwarf_entrypc(die, &start) == 0 && start) {
		*entry = start + b->bias;
		return true;
	}
	while ((off = dwarf_ranges(die, off, &base, &start, &end)) > 0)
		if (start && (!low || start < low))
			low = start;
	*entry = low + b->bias;
	return low != 0;
}

static void walk_dies(const struct bin *b, struct funcs *fl, Dwarf_Die *parent,
		      Dwarf_Die *outer)
{
	Dwarf_Die die;

	if (dwarf_child(parent, &die) != 0)
		return;
	do {
		int tag = dwarf_tag(&die);
		char *name, *sig;
		Dwarf_Addr entry;

		switch (tag) {
		case DW_TAG_subprogram:
			if (last_part_may_match(fl, &die) && die_entry(b, &die, &entry) &&
			    die_names(&die, &name, &sig)) {
				if (name_matches(fl, name, sig))
					add_func(b, fl, name, sig, &die, entry);
				else
					free(name), free(sig);
			}
			walk_dies(b, fl, &die, &die);
			break;
		case DW_TAG_inlined_subroutine:
			if (outer && last_part_may_match(fl, &die) && inline_entry(b, &die, &entry) &&
			    die_names(&die, &name, &sig)) {
				struct func *f = NULL;

				if (name_matches(fl, name, sig))
					f = add_func(b, fl, name, sig, &die, entry);
				else
					free(name), free(sig);
				if (f) {
					f->inlined = true;
					f->outer = *outer;
					fl->inlined++;
				}
			}
			walk_dies(b, fl, &die, outer);
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_lexical_block:
			walk_dies(b, fl, &die, outer);
			break;
		}
	} while (dwarf_siblingof(&die, &die) == 0);
}

/*
 * The DWARF of the function whose code starts at @addr: for a name only
 * the symbol table has (another function's code, folded into this one).
 */
static bool code_die(const struct bin *b, Dwarf_Addr addr, Dwarf_Die *die)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = b->dwarf ? dwfl_module_addrdie(b->mod, addr, &bias) : NULL, *scopes;
	int n = cu ? dwarf_getscopes(cu, addr - bias, &scopes) : 0;
	bool found = false;

	for (int i = 0; i < n && !found; i++)
		if (dwarf_tag(&scopes[i]) == DW_TAG_subprogram) {
			*die = scopes[i];
			found = true;
		}
	if (n > 0)
		free(scopes);
	return found;
}

/* No DWARF for the name: the symbol tables (.symtab, else .dynsym). */
static void walk_symbols(const struct bin *b, struct funcs *fl)
{
	int n = dwfl_module_getsymtab(b->mod);

	for (int i = 0; i < n; i++) {
		Dwarf_Die die;
		GElf_Sym sym;
		GElf_Addr addr;
		const char *raw = dwfl_module_getsym_info(b->mod, i, &sym, &addr, NULL, NULL, NULL);
		char *sig, *name;

		if (!raw || GELF_ST_TYPE(sym.st_info) != STT_FUNC || !addr ||
		    sym.st_shndx == SHN_UNDEF || strstr(raw, ".cold"))
			continue;
		sig = demangle(raw);
		name = strip_params(sig);
		if (name_matches(fl, name, sig) || (!fl->glob && !strcmp(fl->want, raw)))
			add_func(b, fl, name, sig, code_die(b, addr, &die) ? &die : NULL, addr);
		else
			free(name), free(sig);
	}
}

static void find_funcs(const struct bin *b, struct funcs *fl)
{
	if (b->dwarf) {
		Dwarf_Die *cu = NULL;
		Dwarf_Addr bias;

		while ((cu = dwfl_module_nextcu(b->mod, cu, &bias)))
			walk_dies(b, fl, cu, NULL);
	}
	if (!fl->n)
		walk_symbols(b, fl);
}

static void free_funcs(struct funcs *fl)
{
	for (size_t i = 0; i < fl->n; i++) {
		free(fl->v[i].name);
		free(fl->v[i].sig);
	}
	free(fl->v);
}

/* Other functions folded into the same code (identical code folding). */
static char *aliases(const struct bin *b, const struct func *f)
{
	int n = dwfl_module_getsymtab(b->mod);
	char *out = NULL;
	size_t len = 0;

	for (int i = 0; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *raw = dwfl_module_getsym_info(b->mod, i, &sym, &addr, NULL, NULL, NULL);
		char *sig, *name;

		if (!raw || addr != f->entry || GELF_ST_TYPE(sym.st_info) != STT_FUNC)
			continue;
		sig = demangle(raw);
		name = strip_params(sig);
		if (strcmp(name, f->name) && (!out || !strstr(out, name))) {
			out = xrealloc(out, len + strlen(name) + 3);
			len += sprintf(out + len, "%s%s", len ? ", " : "", name);
		}
		free(name);
		free(sig);
	}
	return out;
}

/* ---- types ---------------------------------------------------------------- */

static bool die_type(Dwarf_Die *die, Dwarf_Die *type)
{
	Dwarf_Attribute a;

	return dwarf_attr_integrate(die, DW_AT_type, &a) && dwarf_formref_die(&a, type);
}

/* Typedefs, const, volatile peeled. */
static int peel(Dwarf_Die *type, Dwarf_Die *out)
{
	if (dwarf_peel_type(type, out) != 0)
		*out = *type;
	return dwarf_tag(out);
}

static void type_name(Dwarf_Die *t, char *buf, size_t size)
{
	Dwarf_Die sub;
	const char *name = dwarf_diename(t);
	char inner[512];
	Dwarf_Word n;
	Dwarf_Die child;

	switch (dwarf_tag(t)) {
	case DW_TAG_pointer_type:
	case DW_TAG_reference_type:
	case DW_TAG_rvalue_reference_type: {
		const char *sfx = dwarf_tag(t) == DW_TAG_pointer_type ? " *" :
				  dwarf_tag(t) == DW_TAG_reference_type ? " &" : " &&";

		if (die_type(t, &sub))
			type_name(&sub, inner, sizeof(inner));
		else
			strcpy(inner, "void");
		snprintf(buf, size, "%s%s", inner, sfx);
		return;
	}
	case DW_TAG_const_type:
	case DW_TAG_volatile_type:
		if (die_type(t, &sub))
			type_name(&sub, inner, sizeof(inner));
		else
			strcpy(inner, "void");
		snprintf(buf, size, "%s %s", inner,
			 dwarf_tag(t) == DW_TAG_const_type ? "const" : "volatile");
		return;
	case DW_TAG_array_type:
		if (die_type(t, &sub))
			type_name(&sub, inner, sizeof(inner));
		else
			strcpy(inner, "?");
		n = 0;
		if (dwarf_child(t, &child) == 0 && dwarf_tag(&child) == DW_TAG_subrange_type) {
			Dwarf_Attribute a;

			if (dwarf_attr(&child, DW_AT_upper_bound, &a))
				dwarf_formudata(&a, &n), n++;
			else if (dwarf_attr(&child, DW_AT_count, &a))
				dwarf_formudata(&a, &n);
		}
		snprintf(buf, size, "%s[%" PRIu64 "]", inner, (uint64_t)n);
		return;
	case DW_TAG_structure_type:
		snprintf(buf, size, "struct %s", name ? name : "<anonymous>");
		return;
	case DW_TAG_class_type:
		snprintf(buf, size, "class %s", name ? name : "<anonymous>");
		return;
	case DW_TAG_union_type:
		snprintf(buf, size, "union %s", name ? name : "<anonymous>");
		return;
	case DW_TAG_enumeration_type:
		snprintf(buf, size, "enum %s", name ? name : "<anonymous>");
		return;
	case DW_TAG_subroutine_type:
		snprintf(buf, size, "function");
		return;
	}
	snprintf(buf, size, "%s", name ? name : "?");
}

static bool is_struct(int tag)
{
	return tag == DW_TAG_structure_type || tag == DW_TAG_class_type ||
	       tag == DW_TAG_union_type;
}

static bool is_pointer(int tag)
{
	return tag == DW_TAG_pointer_type || tag == DW_TAG_reference_type ||
	       tag == DW_TAG_rvalue_reference_type;
}

/* A struct only declared here (a pointer's target): its definition elsewhere. */
static bool find_definition(const struct comp *c, Dwarf_Die *decl, Dwarf_Die *def);

static bool complete(const struct comp *c, Dwarf_Die *t)
{
	Dwarf_Die def;

	if (!is_struct(dwarf_tag(t)) || !dwarf_hasattr(t, DW_AT_declaration))
		return true;
	if (!find_definition(c, t, &def))
		return false;
	*t = def;
	return true;
}

static bool search_definition(Dwarf_Die *parent, int tag, const char *name, Dwarf_Die *def)
{
	Dwarf_Die d;

	if (dwarf_child(parent, &d) != 0)
		return false;
	do {
		int t = dwarf_tag(&d);
		const char *n = dwarf_diename(&d);

		if (t == tag && n && !strcmp(n, name) && !dwarf_hasattr(&d, DW_AT_declaration)) {
			*def = d;
			return true;
		}
		if ((t == DW_TAG_namespace || is_struct(t)) && search_definition(&d, tag, name, def))
			return true;
	} while (dwarf_siblingof(&d, &d) == 0);
	return false;
}

static bool find_definition(const struct comp *c, Dwarf_Die *decl, Dwarf_Die *def)
{
	const char *name = dwarf_diename(decl);
	Dwarf_Die *cu = NULL;
	Dwarf_Addr bias;

	if (!name)
		return false;
	while ((cu = dwfl_module_nextcu(c->b->mod, cu, &bias)))
		if (search_definition(cu, dwarf_tag(decl), name, def))
			return true;
	return false;
}

static bool member_offset(Dwarf_Die *m, Dwarf_Word *off)
{
	Dwarf_Attribute a;

	*off = 0;
	if (!dwarf_attr(m, DW_AT_data_member_location, &a))
		return true;		/* a union's members, or offset 0 */
	return dwarf_formudata(&a, off) == 0;
}

/*
 * Member @name of struct @st, in it or its base classes (depth first, in
 * declaration order), or in anonymous members; with @want_pointer only a
 * pointer member.  *off is added to.
 */
static bool find_member(const struct comp *c, Dwarf_Die *st, const char *name,
			bool want_pointer, Dwarf_Word *off, Dwarf_Die *type)
{
	Dwarf_Die m, t, pt;

	if (!complete(c, st) || dwarf_child(st, &m) != 0)
		return false;
	do {
		int tag = dwarf_tag(&m);
		const char *n = dwarf_diename(&m);
		Dwarf_Word o, sub = 0;

		if ((tag != DW_TAG_member && tag != DW_TAG_inheritance) || !die_type(&m, &t))
			continue;
		if (!member_offset(&m, &o))
			continue;	/* virtual base: its offset is read at run time */
		if (tag == DW_TAG_member && n && !strcmp(n, name)) {
			if (want_pointer && peel(&t, &pt) != DW_TAG_pointer_type)
				continue;
			*off += o;
			*type = t;
			return true;
		}
		if ((tag == DW_TAG_inheritance || !n) && is_struct(peel(&t, &pt)) &&
		    find_member(c, &pt, name, want_pointer, &sub, type)) {
			*off += o + sub;
			return true;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return false;
}

static void names_of_members(const struct comp *c, Dwarf_Die *st, char *buf, size_t size)
{
	Dwarf_Die m;
	size_t len = 0;

	buf[0] = '\0';
	if (!complete(c, st) || dwarf_child(st, &m) != 0)
		return;
	do {
		const char *n = dwarf_diename(&m);

		if (dwarf_tag(&m) == DW_TAG_member && n && len + strlen(n) + 8 < size)
			len += snprintf(buf + len, size - len, " .%s", n);
	} while (dwarf_siblingof(&m, &m) == 0);
}

/* ---- the fetch program ---------------------------------------------------- */

static void emit_op(struct comp *c, uint8_t op, uint8_t size, uint8_t flags, uint8_t reg,
		    int64_t imm)
{
	struct probe *p = c->p;

	if (p->nr_ops == KTRACE_PROBE_MAX_OPS)
		fail(c, "the probe's fetch program needs more than %d ops", KTRACE_PROBE_MAX_OPS);
	if (imm != (int32_t)imm)
		fail(c, "offset %" PRId64 " does not fit the fetch program's 32 bits", imm);
	if ((op == KTRACE_OP_DEREF || op == KTRACE_OP_STR) &&
	    ++c->derefs > KTRACE_PROBE_MAX_DEREFS)
		fail(c, "the probe needs more than %d loads", KTRACE_PROBE_MAX_DEREFS);
	p->ops[p->nr_ops++] = (struct ktrace_probe_op){ .op = op, .size = size,
		.flags = flags, .reg = reg, .imm = (int32_t)imm };
}

static void emit_add(struct comp *c, int64_t off)
{
	if (off)
		emit_op(c, KTRACE_OP_ADD, 0, 0, 0, off);
}

/* acc = the pointer's value (a load if acc was its address) */
static void load_pointer(struct comp *c)
{
	if (!c->value)
		emit_op(c, KTRACE_OP_DEREF, 8, 0, 0, 0);
	c->value = false;		/* acc is now the address of the pointee */
}

static void emit_reg(struct comp *c, unsigned int reg)
{
	if (reg > 16)
		fail(c, "in register %u, not a general register (floating point or vector)", reg);
	emit_op(c, KTRACE_OP_REG, 0, 0, reg, 0);
}

/* Location expression @expr at the probe address into ops. */
static void eval_location(struct comp *c, const Dwarf_Op *expr, size_t len, bool frame_base)
{
	for (size_t i = 0; i < len; i++) {
		uint8_t atom = expr[i].atom;

		if (atom >= DW_OP_reg0 && atom <= DW_OP_reg31) {
			emit_reg(c, atom - DW_OP_reg0);
			c->value = true;
		} else if (atom == DW_OP_regx) {
			emit_reg(c, expr[i].number);
			c->value = true;
		} else if (atom >= DW_OP_breg0 && atom <= DW_OP_breg31) {
			emit_reg(c, atom - DW_OP_breg0);
			emit_add(c, (int64_t)expr[i].number);
		} else if (atom == DW_OP_bregx) {
			emit_reg(c, expr[i].number);
			emit_add(c, (int64_t)expr[i].number2);
		} else if (atom == DW_OP_fbreg) {
			Dwarf_Attribute a;
			Dwarf_Op *fb;
			size_t fblen;

			if (frame_base || !dwarf_attr_integrate(c->f->inlined ?
								(Dwarf_Die *)&c->f->outer :
								(Dwarf_Die *)&c->f->die,
								DW_AT_frame_base, &a) ||
			    dwarf_getlocation_addr(&a, c->pc, &fb, &fblen, 1) != 1)
				fail(c, "its frame base has no location at the probe address");
			if (fblen == 1 && fb[0].atom == DW_OP_call_frame_cfa && !c->frame &&
			    (int64_t)expr[i].number < 0)
				fail(c, "it lives in a stack slot below the frame (CFA%+" PRId64 "), which "
				     "the prologue fills: not there yet at the function's first instruction "
				     "(code built without optimization; -O1 and up keep it in a register)",
				     (int64_t)expr[i].number);
			eval_location(c, fb, fblen, true);
			emit_add(c, (int64_t)expr[i].number);
		} else if (atom == DW_OP_call_frame_cfa && c->frame) {
			Dwarf_Op *cfa;
			size_t cfa_len;

			if (dwarf_frame_cfa(c->frame, &cfa, &cfa_len) != 0)
				fail(c, "no CFA rule at the probe address: %s", dwarf_errmsg(-1));
			eval_location(c, cfa, cfa_len, true);
		} else if (atom == DW_OP_call_frame_cfa) {
			if (c->p->ret)
				fail(c, "on the stack: gone at the return");
			if (c->f->inlined)
				fail(c, "in the frame of the function it is inlined into: the fetch "
				     "program has that frame's address (CFA) only at a function's "
				     "first instruction, not at an inlined copy");
			emit_op(c, KTRACE_OP_CFA, 0, 0, 0, 0);
		} else if (atom == DW_OP_plus_uconst) {
			emit_add(c, (int64_t)expr[i].number);
		} else if (atom == DW_OP_deref) {
			emit_op(c, KTRACE_OP_DEREF, 8, 0, 0, 0);
		} else if (atom == DW_OP_stack_value) {
			c->value = true;
		} else if (atom == DW_OP_piece || atom == DW_OP_bit_piece) {
			fail(c, "split in pieces across registers: not fetched");
		} else if (atom == DW_OP_entry_value || atom == DW_OP_GNU_entry_value) {
			fail(c, "known only as the caller's value (DW_OP_entry_value): "
			     "the fetch program cannot read that; optimized out here");
		} else if (atom == DW_OP_GNU_parameter_ref) {
			fail(c, "optimized out: this copy%s%s does not get it (the caller's "
			     "constant, DW_OP_GNU_parameter_ref)", c->f->sym ? " " : "",
			     c->f->sym ? c->f->sym : "");
		} else if (i == 0 && atom >= DW_OP_lit0 && atom <= DW_OP_lit31) {
			emit_add(c, atom - DW_OP_lit0);
		} else if (i == 0 && ((atom >= DW_OP_const1u && atom <= DW_OP_const8s) ||
				      atom == DW_OP_constu || atom == DW_OP_consts)) {
			emit_add(c, (int64_t)expr[i].number);
		} else {
			fail(c, "its location uses DWARF op 0x%x, which ktrace does not compile",
			     atom);
		}
	}
}

static void locate_param(struct comp *c, Dwarf_Die *param)
{
	Dwarf_Attribute a;
	Dwarf_Op *expr;
	size_t len;
	int n;

	if (!dwarf_attr(param, DW_AT_location, &a))
		fail(c, "optimized out (no location)");
	n = dwarf_getlocation_addr(&a, c->pc, &expr, &len, 1);
	if (n < 0)
		fail(c, "its location: %s", dwarf_errmsg(-1));
	if (n == 0 || len == 0)
		fail(c, "optimized out at the probe address 0x%" PRIx64, c->p->vaddr);
	eval_location(c, expr, len, false);
}

static const int arg_regs[6] = { 5, 4, 1, 2, 8, 9 };	/* rdi rsi rdx rcx r8 r9 */

/* Find the parameter @name of the function: its DIE. */
static bool find_param(const struct func *f, const char *name, Dwarf_Die *param)
{
	Dwarf_Die d = f->die;

	if (dwarf_child(&d, param) != 0)
		return false;
	do {
		const char *n = attr_string(param, DW_AT_name);

		if ((dwarf_tag(param) == DW_TAG_formal_parameter ||
		     dwarf_tag(param) == DW_TAG_variable) && n && !strcmp(n, name))
			return dwarf_tag(param) == DW_TAG_formal_parameter;
	} while (dwarf_siblingof(param, param) == 0);
	return false;
}

/* Parse "u16", "s8", "x64", "str", "str32" into *size, *sign, *hex, *str. */
static bool parse_type(const char *s, unsigned int *size, bool *sign, bool *hex, unsigned int *str)
{
	char *end;
	unsigned long n;

	*str = 0;
	if (!strncmp(s, "str", 3)) {
		if (!s[3]) {
			*str = STR_DEFAULT;
			return true;
		}
		n = strtoul(s + 3, &end, 10);
		if (!isdigit((unsigned char)s[3]) || *end || n < 1 || n > KTRACE_PROBE_MAX_STR)
			return false;
		*str = n;
		return true;
	}
	if (!strchr("usx", s[0]))
		return false;
	n = strtoul(s + 1, &end, 10);
	if (!isdigit((unsigned char)s[1]) || *end || (n != 8 && n != 16 && n != 32 && n != 64))
		return false;
	*size = n / 8;
	*sign = s[0] == 's';
	*hex = s[0] == 'x';
	return true;
}

/* std::basic_string<char>: its _M_dataplus._M_p */
static bool is_std_string(Dwarf_Die *st)
{
	const char *n = dwarf_diename(st);

	return n && (!strncmp(n, "basic_string<char", 17) || !strcmp(n, "string"));
}

/* A smart pointer's pointer member: px, _M_ptr, _M_t._M_t._M_head_impl. */
static bool smart_pointer(struct comp *c, Dwarf_Die *st, Dwarf_Word *off, Dwarf_Die *ptr)
{
	static const char *const paths[][3] = {
		{ "px" }, { "_M_ptr" }, { "_M_t", "_M_t", "_M_head_impl" },
	};

	for (size_t i = 0; i < ARRAY_SIZE(paths); i++) {
		Dwarf_Die cur = *st, t;
		size_t k;

		*off = 0;
		for (k = 0; k < 3 && paths[i][k]; k++) {
			bool last = k == 2 || !paths[i][k + 1];

			if (!is_struct(dwarf_tag(&cur)) ||
			    !find_member(c, &cur, paths[i][k], last, off, &t))
				break;
			peel(&t, &cur);
		}
		if (k == 3 || (k < 3 && !paths[i][k])) {
			*ptr = cur;
			return dwarf_tag(&cur) == DW_TAG_pointer_type;
		}
	}
	return false;
}

/*
 * A small struct passed in a register: its first member is the register's
 * low bytes (little endian); any other would need a shift.
 */
static void in_register(const struct comp *c, Dwarf_Word off)
{
	if (c->value && off)
		fail(c, "a member at offset %u of a struct passed in a register: not fetched "
		     "(only the first member is)", (unsigned int)off);
}

/* Follow a pointer or reference type @pt (peeled) to its target in *t. */
static void follow(struct comp *c, Dwarf_Die *pt, Dwarf_Die *t, const char *what)
{
	if (!die_type(pt, t))
		fail(c, "%s is a void pointer: nothing to follow", what);
	load_pointer(c);
}

/*
 * Compile FIELD[:TYPE] (with the alias already split off) into c->p's ops
 * and one value: its type and C type filled in @v.
 */
static void compile_field(struct comp *c, const char *field, struct probe_value *v)
{
	char *path = xstrdup(field), *colon = strrchr(path, ':'), *s;
	unsigned int size = 8, str = 0, words;
	bool sign = false, hex = true, has_type = false, typed = false;
	unsigned int first_op = c->p->nr_ops;
	Dwarf_Die t, pt, param;
	char cname[512] = "";
	int tag;

	if (colon && colon[1] != ':' && colon > path && colon[-1] != ':') {
		*colon = '\0';
		if (!parse_type(colon + 1, &size, &sign, &hex, &str))
			fail(c, "type %s: not one of u8 u16 u32 u64 s8 s16 s32 s64 x8 x16 x32 x64 "
			     "str strN (N 1-%d)", colon + 1, KTRACE_PROBE_MAX_STR);
		typed = true;
	}
	v->path = xstrdup(path);
	c->value = false;
	s = path + strcspn(path, ".-[");
	{
		char save = *s;

		*s = '\0';
		if (!*path)
			fail(c, "no parameter name before %c", save);
		if (!strcmp(path, "$retval")) {
			if (!c->p->ret)
				fail(c, "$retval is only there at the return: probe %s%%return",
				     c->f->name);
			emit_reg(c, 0);
			c->value = true;
			if (c->f->has_die) {
				Dwarf_Die fd = c->f->die;

				has_type = die_type(&fd, &t);
				if (!has_type)
					fail(c, "%s returns void", c->f->name);
			}
		} else if (!strncmp(path, "$arg", 4)) {
			char *end;
			unsigned long n = strtoul(path + 4, &end, 10);

			if (*end || n < 1 || n > 6)
				fail(c, "%s: only $arg1..$arg6 (the argument registers)", path);
			if (c->p->ret)
				fail(c, "%s: the argument registers are reused by the return: "
				     "probe the entry", path);
			emit_reg(c, arg_regs[n - 1]);
			c->value = true;
		} else if (path[0] == '$') {
			fail(c, "%s: unknown; $retval, $arg1..$arg6 or a parameter's name", path);
		} else {
			char where[512];

			if (!c->f->has_die) {
				where_looked(c->b, where, sizeof(where));
				fail(c, "no debug info to find parameter %s in (%s); only $arg1..$arg6 "
				     "and $retval work without it", path, where);
			}
			if (c->p->ret)
				fail(c, "parameter %s is gone at the return (its register is reused): "
				     "probe the entry", path);
			if (!find_param(c->f, path, &param))
				fail(c, "%s has no parameter %s", c->f->sig, path);
			locate_param(c, &param);
			has_type = die_type(&param, &t);
		}
		*s = save;
	}

	while (*s) {
		char name[256];
		bool arrow = s[0] == '-';
		Dwarf_Word off = 0;

		if (!has_type)
			fail(c, "%.*s has no type to find members in", (int)(s - path), path);
		if (s[0] == '[') {
			char *end;
			unsigned long idx = strtoul(s + 1, &end, 10);
			Dwarf_Word esize;
			Dwarf_Die et;

			if (!isdigit((unsigned char)s[1]) || *end != ']')
				fail(c, "%s: an index is [N]", s);
			tag = peel(&t, &pt);
			if (tag == DW_TAG_array_type) {
				if (c->value)
					fail(c, "an array in a register: not in memory");
			} else if (is_pointer(tag)) {
				follow(c, &pt, &t, "it");
				if (tag != DW_TAG_pointer_type) {	/* a reference to an array */
					tag = peel(&t, &pt);
					if (tag != DW_TAG_array_type)
						fail(c, "[%lu]: not an array or a pointer", idx);
				}
			} else {
				fail(c, "[%lu]: not an array or a pointer", idx);
			}
			if (tag == DW_TAG_array_type && !die_type(&pt, &t))
				fail(c, "an array of no type");
			peel(&t, &et);
			if (!complete(c, &et) || dwarf_aggregate_size(&et, &esize) != 0)
				fail(c, "[%lu]: the element's size is unknown", idx);
			emit_add(c, (int64_t)(idx * esize));
			s = end + 1;
			continue;
		}
		s += arrow ? 2 : 1;
		if (arrow && s[-1] != '>')
			fail(c, "%s: expected ->", s - 2);
		size_t n = strcspn(s, ".-[");
		if (!n || n >= sizeof(name))
			fail(c, "a member name is missing or too long");
		memcpy(name, s, n);
		name[n] = '\0';
		s += n;
		for (unsigned int hops = 0;; hops++) {
			tag = peel(&t, &pt);
			if (hops > 8)
				fail(c, "%s: too many pointers to follow", name);
			if (is_pointer(tag)) {
				follow(c, &pt, &t, "it");
				continue;
			}
			if (!is_struct(tag)) {
				type_name(&t, cname, sizeof(cname));
				fail(c, "%s is not a struct, class or union: no member %s", cname, name);
			}
			if (arrow && !hops)
				fail(c, "-> %s: not a pointer; use .%s", name, name);
			if (!complete(c, &pt))
				fail(c, "%s: only declared, its definition is in no unit",
				     dwarf_diename(&pt) ? dwarf_diename(&pt) : "?");
			off = 0;
			if (find_member(c, &pt, name, false, &off, &t)) {
				in_register(c, off);
				emit_add(c, (int64_t)off);
				break;
			}
			off = 0;
			if (smart_pointer(c, &pt, &off, &param)) {
				in_register(c, off);
				emit_add(c, (int64_t)off);
				t = param;
				continue;
			}
			{
				char members[256];

				type_name(&pt, cname, sizeof(cname));
				names_of_members(c, &pt, members, sizeof(members));
				fail(c, "%s has no member %s (it has%s)", cname, name,
				     *members ? members : " none");
			}
		}
	}

	/* the leaf: follow a reference, then a string, a scalar or an error */
	if (has_type) {
		tag = peel(&t, &pt);
		if (tag == DW_TAG_reference_type || tag == DW_TAG_rvalue_reference_type) {
			follow(c, &pt, &t, v->path);
			tag = peel(&t, &pt);
		}
		type_name(&t, cname, sizeof(cname));
		if (is_struct(tag) && complete(c, &pt) && is_std_string(&pt)) {
			Dwarf_Word off = 0;
			Dwarf_Die hider, hp;

			if (typed && !str)
				fail(c, "a std::string: only :str or :strN");
			if (!find_member(c, &pt, "_M_dataplus", false, &off, &hider) ||
			    peel(&hider, &hp) < 0 || !find_member(c, &hp, "_M_p", true, &off, &t))
				fail(c, "%s: not the std::string ktrace knows (no _M_dataplus._M_p)",
				     cname);
			in_register(c, off);
			emit_add(c, (int64_t)off);
			load_pointer(c);
			str = str ? str : STR_DEFAULT;
		} else if (str) {
			if (tag == DW_TAG_pointer_type)
				load_pointer(c);
			else if (tag != DW_TAG_array_type || c->value)
				fail(c, "%s is not a string (:str wants a char pointer or array)", cname);
		} else if (is_struct(tag)) {
			char members[256];

			names_of_members(c, &pt, members, sizeof(members));
			fail(c, "is a %s: name one of its members (%s)", cname,
			     *members ? members + 1 : "it has none");
		} else if (tag == DW_TAG_array_type) {
			fail(c, "is an array (%s): name an element [N], or :str for a char array",
			     cname);
		} else if (!typed) {
			Dwarf_Word bsize = 8;
			Dwarf_Attribute a;
			Dwarf_Word enc = DW_ATE_unsigned;
			Dwarf_Die ut;

			if (tag == DW_TAG_pointer_type) {
				size = 8, hex = true, sign = false;
			} else {
				if (dwarf_aggregate_size(&pt, &bsize) != 0 || !bsize || bsize > 8 ||
				    (bsize & (bsize - 1)))
					fail(c, "%s: %u bytes, not a 1, 2, 4 or 8-byte value", cname,
					     (unsigned int)bsize);
				if (tag == DW_TAG_enumeration_type && die_type(&pt, &ut)) {
					Dwarf_Die upt;

					peel(&ut, &upt);
					if (dwarf_attr(&upt, DW_AT_encoding, &a))
						dwarf_formudata(&a, &enc);
				} else if (dwarf_attr(&pt, DW_AT_encoding, &a)) {
					dwarf_formudata(&a, &enc);
				}
				size = bsize;
				sign = enc == DW_ATE_signed || enc == DW_ATE_signed_char;
				hex = enc == DW_ATE_float || enc == DW_ATE_address;
			}
		}
	} else if (!typed) {
		snprintf(cname, sizeof(cname), "register");
		size = 8, hex = true;
	} else if (str) {
		if (!c->value)
			load_pointer(c);
	}

	if (str) {
		emit_op(c, KTRACE_OP_STR, str, 0, 0, 0);
		snprintf(v->type, sizeof(v->type), "str%u", str);
		words = (str + 3) / 4;
	} else {
		if (!c->value)
			emit_op(c, KTRACE_OP_DEREF, size, sign ? KTRACE_OP_SIGNED : 0, 0, 0);
		emit_op(c, KTRACE_OP_EMIT, size, 0, 0, 0);
		snprintf(v->type, sizeof(v->type), "%c%u", hex ? 'x' : sign ? 's' : 'u', size * 8);
		words = size == 8 ? 2 : 1;
	}
	c->words += words;
	if (c->words > KTRACE_PROBE_MAX_WORDS)
		fail(c, "the probe's values need more than %d words (a string of N bytes takes "
		     "N/4)", KTRACE_PROBE_MAX_WORDS);
	v->ctype = xstrdup(cname);
	v->chain = probe_chain(c->p->ops + first_op, c->p->nr_ops - first_op);
	free(path);
}

/* Compile every field of @p; the function @f of @b. */
/*
 * Code built without optimization keeps each parameter in a stack slot
 * below the CFA, which the prologue fills (a plain DW_OP_fbreg, no location
 * list): such a function is probed where its line table says the prologue
 * ends (the first row past the entry on another line, as gdb does), with
 * the CFA from its CFI there.  Every other function: its first instruction.
 */
static bool needs_prologue(Dwarf_Die *func)
{
	Dwarf_Die param;
	Dwarf_Attribute a, fb;
	Dwarf_Op *expr;
	size_t len;

	if (!dwarf_attr_integrate(func, DW_AT_frame_base, &fb) ||
	    dwarf_getlocation(&fb, &expr, &len) != 0 || len != 1 ||
	    expr[0].atom != DW_OP_call_frame_cfa || dwarf_child(func, &param) != 0)
		return false;
	do {
		if (dwarf_tag(&param) == DW_TAG_formal_parameter &&
		    dwarf_attr(&param, DW_AT_location, &a) && dwarf_whatform(&a) == DW_FORM_exprloc &&
		    dwarf_getlocation(&a, &expr, &len) == 0 && len == 1 &&
		    expr[0].atom == DW_OP_fbreg && (int64_t)expr[0].number < 0)
			return true;
	} while (dwarf_siblingof(&param, &param) == 0);
	return false;
}

static Dwarf_Addr prologue_end(const struct bin *b, struct func *f)
{
	Dwarf_Addr low = f->entry - b->bias, high, addr;
	Dwarf_Die cu;
	Dwarf_Lines *lines;
	size_t n;
	int first_line = -1, line;

	if (dwarf_highpc(&f->die, &high) != 0 || !dwarf_diecu(&f->die, &cu, NULL, NULL) ||
	    dwarf_getsrclines(&cu, &lines, &n) != 0)
		return 0;
	for (size_t i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);

		if (!l || dwarf_lineaddr(l, &addr) != 0 || addr < low || addr >= high ||
		    dwarf_lineno(l, &line) != 0)
			continue;
		if (addr == low && first_line < 0)
			first_line = line;
		else if (addr > low && first_line >= 0 && line != first_line)
			return addr + b->bias;
	}
	return 0;
}

static void decide_address(const struct bin *b, struct func *f, bool ret)
{
	f->probe_at = f->entry;
	if (ret || f->inlined || !f->has_die || !needs_prologue(&f->die))
		return;
	f->probe_at = prologue_end(b, f);
	if (!f->probe_at)
		die("%s:%s: built without optimization (its parameters are in stack slots the "
		    "prologue fills) and the line table does not say where the prologue ends",
		    b->path, f->name);
}

/* The CFI at the probe address, when it is not a function's entry. */
static Dwarf_Frame *frame_at(const struct bin *b, const struct func *f)
{
	Dwarf_Addr bias;
	Dwarf_CFI *cfi;
	Dwarf_Frame *frame = NULL;

	if (f->probe_at == f->entry)
		return NULL;
	cfi = dwfl_module_eh_cfi(b->mod, &bias);
	if (!cfi || dwarf_cfi_addrframe(cfi, f->probe_at - bias, &frame) != 0) {
		cfi = dwfl_module_dwarf_cfi(b->mod, &bias);
		if (!cfi || dwarf_cfi_addrframe(cfi, f->probe_at - bias, &frame) != 0)
			die("%s:%s: no call frame information at 0x%" PRIx64 " past the prologue",
			    b->path, f->name, (uint64_t)f->probe_at);
	}
	return frame;
}

static void compile_probe(const struct bin *b, const struct func *f, struct probe *p,
			  char **fields, unsigned int nr)
{
	struct comp c = { .b = b, .f = f, .p = p, .pc = f->probe_at - b->bias,
			  .frame = frame_at(b, f) };

	if (nr > KTRACE_PROBE_MAX_VALUES) {
		c.field = fields[KTRACE_PROBE_MAX_VALUES];
		fail(&c, "more than %d values in one probe", KTRACE_PROBE_MAX_VALUES);
	}
	for (unsigned int i = 0; i < nr; i++) {
		struct probe_value *v = &p->values[p->nr_values++];
		const char *eq = strchr(fields[i], '='), *field = eq ? eq + 1 : fields[i];

		c.field = fields[i];
		if (eq && (eq == fields[i] || strcspn(fields[i], ".-[:$") < (size_t)(eq - fields[i])))
			fail(&c, "an alias is a plain name before '='");
		if (!*field)
			fail(&c, "no field after '='");
		compile_field(&c, field, v);
		if (eq) {
			v->name = xstrndup(fields[i], eq - fields[i]);
		} else {
			v->name = xstrdup(v->path);
		}
	}
	free(c.frame);
}

static struct probe *new_probe(const struct bin *b, const struct func *f, bool ret)
{
	struct probe *p = xcalloc(1, sizeof(*p));

	p->binary = xstrdup(b->path);
	p->name = xstrdup(f->name);
	p->signature = xstrdup(f->sig);
	strcpy(p->build_id, b->build_id);
	p->vaddr = f->probe_at;
	p->offset = file_offset(b, f->probe_at, f->name);
	p->ret = ret;
	return p;
}

unsigned int probe_resolve(struct probe_set *set, const char *binary, const char *function,
			   bool ret, char **fields, unsigned int nr_fields)
{
	struct funcs fl = { .want = function };
	struct bin b;
	unsigned int added = 0;

	bin_open(&b, binary, set->debug_dir);
	find_funcs(&b, &fl);
	/* a return probe needs a return: an inlined copy has none */
	if (ret && fl.inlined && fl.n == fl.inlined)
		die("%s:%s%%return: inlined only (%u inlined copies, no out-of-line copy): "
		    "an inlined copy has no return to probe; probe the entry", binary, function,
		    fl.inlined);
	if (!fl.n) {
		char where[1024] = "";

		if (!b.dwarf)
			where_looked(&b, where, sizeof(where));
		die("%s:%s: no such function (in %s)%s%s%s", binary, function,
		    b.dwarf ? "its debug info and symbol tables" : "its symbol tables",
		    b.dwarf ? "" : "; no debug info was found (", where, b.dwarf ? "" : ")");
	}
	if (ret && fl.inlined)
		pr_warn("%s:%s%%return: %u inlined copies have no return: only the %zu "
			"out-of-line are probed", binary, function, fl.inlined, fl.n - fl.inlined);
	else if (fl.inlined)
		pr_info("%s:%s: %u inlined copies, each probed at its own first instruction",
			binary, function, fl.inlined);
	if (fl.n - fl.inlined > 1)
		pr_info("%s:%s: %zu copies (overloads, clones): probing each; a signature "
			"(%s) picks one", binary, function, fl.n - fl.inlined, fl.v[0].sig);
	for (size_t i = 0; i < fl.n; i++) {
		struct probe *p;
		char *al;

		if (ret && fl.v[i].inlined)
			continue;
		decide_address(&b, &fl.v[i], ret);
		if (fl.v[i].probe_at != fl.v[i].entry)
			pr_info("%s:%s: built without optimization: probed past its prologue, at "
				"0x%" PRIx64 ", where its parameters are in their stack slots", binary,
				fl.v[i].name, (uint64_t)fl.v[i].probe_at);
		p = new_probe(&b, &fl.v[i], ret);
		al = fl.v[i].inlined ? NULL : aliases(&b, &fl.v[i]);

		if (al)
			pr_info("%s:%s: the same code as %s (identical code folded): their calls "
				"hit this probe too", binary, fl.v[i].name, al);
		free(al);
		compile_probe(&b, &fl.v[i], p, fields, nr_fields);
		*set->tail = p;
		set->tail = &p->next;
		set->nr++;
		added++;
	}
	free_funcs(&fl);
	bin_close(&b);
	return added;
}

/* ---- -L ------------------------------------------------------------------- */

/* The kernel's uprobes on x86-64 (6.1, 6.12) emulate these; others are single-stepped. */
static void first_insn(const struct bin *b, uint64_t offset, char *buf, size_t size)
{
	unsigned char in[16];
	ssize_t n = pread(b->fd, in, sizeof(in), offset);
	size_t i = 0;
	bool rex41 = false, p66 = false;
	const char *what = NULL;
	bool emulated = false;

	if (n < 4) {
		snprintf(buf, size, "unreadable");
		return;
	}
	if (in[0] == 0xf3 && in[1] == 0x0f && in[2] == 0x1e && in[3] == 0xfa) {
		snprintf(buf, size, "f3 0f 1e fa (endbr64): single-stepped (two traps)");
		return;
	}
	while (i < 4 && (in[i] == 0x66 || in[i] == 0xf2 || in[i] == 0xf3 || in[i] == 0x2e ||
			 in[i] == 0x3e)) {
		p66 |= in[i] == 0x66;
		i++;
	}
	if ((in[i] & 0xf0) == 0x40) {
		rex41 = in[i] == 0x41;
		if (!rex41 && (in[i + 1] & 0xf8) == 0x50)
			what = "push with a REX prefix";
		i++;
	}
	if (!what) {
		uint8_t op = in[i];

		if ((op & 0xf8) == 0x50 && i <= 1 && (i == 0 || rex41))
			what = "push", emulated = true;
		else if (op == 0x90)
			what = "nop", emulated = true;
		else if (op == 0xe8 || op == 0xe9 || op == 0xeb || (op >= 0x70 && op <= 0x7f) ||
			 (op == 0x0f && in[i + 1] >= 0x80 && in[i + 1] <= 0x8f))
			what = op == 0xe8 ? "call" : "jump", emulated = !p66;
		else if (op == 0x89 || op == 0x8b || op == 0xc7 || (op >= 0xb8 && op <= 0xbf))
			what = "mov";
		else if ((op == 0x83 || op == 0x81) && (in[i + 1] & 0x38) == 0x28)
			what = "sub";
		else if (op == 0x31 || op == 0x33)
			what = "xor";
		else if (op == 0x85 || op == 0x84)
			what = "test";
		else if (op == 0x0f && in[i + 1] == 0x1f)
			what = "multi-byte nop";
		else
			what = "instruction";
	}
	snprintf(buf, size, "%02x %02x %02x %02x (%s): %s", in[0], in[1], in[2], in[3], what,
		 emulated ? "emulated by the kernel (one trap)" : "single-stepped (two traps)");
}

static void list_params(const struct bin *b, const struct func *f, FILE *out)
{
	Dwarf_Die d = f->die, param;
	Dwarf_Frame *frame;

	if (dwarf_child(&d, &param) != 0)
		return;
	frame = frame_at(b, f);
	do {
		const char *n = attr_string(&param, DW_AT_name);
		char tn[512] = "?", where[256];
		struct probe p = { .vaddr = f->probe_at };
		struct comp c = { .b = b, .f = f, .p = &p, .pc = f->probe_at - b->bias, .field = n,
				  .frame = frame };
		Dwarf_Die t;
		Dwarf_Attribute a;
		Dwarf_Op *expr;
		size_t len;
		int nloc;

		if (dwarf_tag(&param) != DW_TAG_formal_parameter)
			continue;
		if (die_type(&param, &t))
			type_name(&t, tn, sizeof(tn));
		if (!dwarf_attr(&param, DW_AT_location, &a)) {
			snprintf(where, sizeof(where), "optimized out");
		} else if ((nloc = dwarf_getlocation_addr(&a, c.pc, &expr, &len, 1)) <= 0 || !len) {
			snprintf(where, sizeof(where), "optimized out at the entry");
		} else {
			char *chain;
			bool simple = true;

			/* what eval_location() compiles without an error */
			for (size_t i = 0; i < len; i++) {
				uint8_t at = expr[i].atom;

				if (!((at >= DW_OP_reg0 && at <= DW_OP_breg31) || at == DW_OP_regx ||
				      at == DW_OP_bregx || at == DW_OP_call_frame_cfa ||
				      at == DW_OP_plus_uconst || at == DW_OP_deref ||
				      at == DW_OP_stack_value ||
				      (at == DW_OP_fbreg && ((int64_t)expr[i].number >= 0 || c.frame)) ||
				      (i == 0 && ((at >= DW_OP_lit0 && at <= DW_OP_lit31) ||
						  (at >= DW_OP_const1u && at <= DW_OP_const8s) ||
						  at == DW_OP_constu || at == DW_OP_consts))) ||
				    ((at >= DW_OP_reg0 && at <= DW_OP_reg31 && at - DW_OP_reg0 > 16) ||
				     (at >= DW_OP_breg0 && at <= DW_OP_breg31 && at - DW_OP_breg0 > 16)))
					simple = false;
			}
			if (simple) {
				eval_location(&c, expr, len, false);
				chain = probe_chain(p.ops, p.nr_ops);
				snprintf(where, sizeof(where), "%s%s", chain,
					 c.value ? "" : " (in memory)");
				free(chain);
			} else {
				snprintf(where, sizeof(where), "not fetchable at the entry "
					 "(an entry value, pieces, a vector register, a stack slot the "
					 "prologue fills or an op ktrace does not compile)");
			}
		}
		fprintf(out, "  param %-12s %-36s @ %s\n", n ? n : "?", tn, where);
	} while (dwarf_siblingof(&param, &param) == 0);
	free(frame);
}

int probe_dwarf_list(const char *binary, const char *glob, char **fields,
		     unsigned int nr_fields, const char *debug_dir, FILE *out)
{
	struct funcs fl = { .want = glob ? glob : "*", .glob = true };
	struct bin b;
	char where[1024];

	if (glob && !strpbrk(glob, "*?["))
		fl.glob = false;
	bin_open(&b, binary, debug_dir);
	where_looked(&b, where, sizeof(where));
	fprintf(out, "%s: build id %s, debug info %s\n", binary, b.build_id,
		b.dwarf ? debug_file(&b) : "none");
	if (!b.dwarf)
		fprintf(out, "  (no debug info: %s; only $arg1..$arg6 and $retval)\n", where);
	find_funcs(&b, &fl);
	if (!fl.n)
		die("%s:%s: no such function", binary, glob ? glob : "*");
	for (size_t i = 0; i < fl.n; i++) {
		struct func *f = &fl.v[i];
		bool ret = false;
		uint64_t off;
		char insn[160], *al = f->inlined ? NULL : aliases(&b, f);

		for (unsigned int k = 0; k < nr_fields; k++)
			ret |= !strncmp(fields[k], "$retval", 7);
		decide_address(&b, f, ret);
		off = file_offset(&b, f->probe_at, f->name);
		first_insn(&b, off, insn, sizeof(insn));
		fprintf(out, "%s\n  address 0x%" PRIx64 ", file offset 0x%" PRIx64, f->sig,
			(uint64_t)f->probe_at, off);
		if (f->probe_at != f->entry)
			fprintf(out, " (past the prologue: built without optimization; entry 0x%"
				PRIx64 ")", (uint64_t)f->entry);
		if (f->sym && strcmp(f->sym, f->name) && strstr(f->sym, ".")) 
			fprintf(out, ", symbol %s", f->sym);
		fprintf(out, "\n  first instruction %s\n", insn);
		if (f->inlined) {
			char *outer = NULL, *osig = NULL;
			Dwarf_Die od = f->outer;

			die_names(&od, &outer, &osig);
			fprintf(out, "  an inlined copy, in %s (no return probe)\n",
				osig ? osig : "?");
			free(outer);
			free(osig);
		}
		if (al)
			fprintf(out, "  the same code as %s (identical code folded)\n", al);
		free(al);
		if (f->has_die)
			list_params(&b, f, out);
		if (nr_fields) {
			struct probe *p = new_probe(&b, f, ret);

			compile_probe(&b, f, p, fields, nr_fields);
			for (unsigned int k = 0; k < p->nr_values; k++)
				fprintf(out, "  field %s: %s (%s) @ %s\n", p->values[k].name,
					p->values[k].ctype, p->values[k].type, p->values[k].chain);
		}
	}
	free_funcs(&fl);
	bin_close(&b);
	return 0;
}
