// SPDX-License-Identifier: GPL-2.0
/*
 * probe: ktrace -P and -L, the probe specs; adding the probes to the
 * kernel (KTRACE_IOC_PROBE_ADD) and saving what dtrace needs to print
 * their hits (BASE.probes).  probe_dwarf.c resolves and compiles.
 *
 *   -P 'BINARY:FUNCTION[%return] [[ALIAS=]FIELD[:TYPE]]...'
 *
 * The spec is split at blanks outside parentheses and angle brackets (a
 * signature "f(int, char *)" is one word); BINARY ends at the first ':'
 * after its last '/'.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "files.h"
#include "probe.h"
#include "util.h"

#define SPEC_WORDS_MAX	(KTRACE_PROBE_MAX_VALUES + 2)

void probe_set_init(struct probe_set *set)
{
	memset(set, 0, sizeof(*set));
	set->tail = &set->head;
}

int probe_open_binary(const char *path)
{
	int fd = kt_open_regular(path);

	if (fd == -EINVAL)
		die("%s: not a regular file", path);
	if (fd < 0)
		die("%s: %s", path, strerror(-fd));
	return fd;
}

/* Split @s at blanks outside () and <>: up to @max words, in place. */
static unsigned int split_words(char *s, char **words, unsigned int max, const char *spec)
{
	unsigned int n = 0;

	for (;;) {
		int depth = 0;

		while (*s == ' ' || *s == '\t')
			s++;
		if (!*s)
			return n;
		if (n == max)
			die("-P %s: more than %d values in one probe", spec, KTRACE_PROBE_MAX_VALUES);
		words[n++] = s;
		for (; *s && (depth > 0 || (*s != ' ' && *s != '\t')); s++) {
			if (*s == '(' || *s == '<')
				depth++;
			else if ((*s == ')' || *s == '>') && depth > 0 && s[-1] != '-')
				depth--;
		}
		if (*s)
			*s++ = '\0';
	}
}

/* "BINARY:FUNCTION": the binary made absolute (not resolved: /proc/PID/root stays) */
static char *split_binary(char *word, char **function, const char *what)
{
	char *slash = strrchr(word, '/'), *colon = strchr(slash ? slash : word, ':');
	char cwd[4096], *abs;

	if (!colon)
		*function = NULL;
	else {
		*colon = '\0';
		*function = colon + 1;
	}
	if (!*word)
		die("%s: no binary before ':'", what);
	if (word[0] == '/')
		return xstrdup(word);
	if (!getcwd(cwd, sizeof(cwd)))
		die("%s: the current directory: %s", what, strerror(errno));
	abs = xmalloc(strlen(cwd) + strlen(word) + 2);
	sprintf(abs, "%s/%s", cwd, word);
	return abs;
}

void probe_parse(struct probe_set *set, const char *spec)
{
	char *copy = xstrdup(spec), *words[SPEC_WORDS_MAX], *function, *binary, *pct;
	unsigned int n = split_words(copy, words, SPEC_WORDS_MAX, spec);
	bool ret = false;

	if (!n)
		die("-P: empty probe spec (BINARY:FUNCTION [FIELD...])");
	binary = split_binary(words[0], &function, spec);
	if (!function || !*function)
		die("-P %s: no function (BINARY:FUNCTION [FIELD...])", spec);
	pct = strrchr(function, '%');
	if (pct) {
		if (strcmp(pct, "%return"))
			die("-P %s: %s: only %%return may follow the function", spec, pct);
		*pct = '\0';
		ret = true;
	}
	probe_resolve(set, binary, function, ret, words + 1, n - 1);
	free(binary);
	free(copy);
}

int probe_list(const char *arg, const char *debug_dir, FILE *out)
{
	char *copy = xstrdup(arg), *words[SPEC_WORDS_MAX], *function, *binary;
	unsigned int n = split_words(copy, words, SPEC_WORDS_MAX, arg);
	int ret;

	if (!n)
		die("-L: empty (BINARY[:FUNCTION [FIELD...]])");
	binary = split_binary(words[0], &function, arg);
	ret = probe_dwarf_list(binary, function && *function ? function : NULL, words + 1,
			       n - 1, debug_dir, out);
	free(binary);
	free(copy);
	return ret;
}

static const char *const reg_names[KTRACE_REG_MAX + 1] = {
	"rax", "rdx", "rcx", "rbx", "rsi", "rdi", "rbp", "rsp",
	"r8", "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip",
};

char *probe_chain(const struct ktrace_probe_op *ops, unsigned int nr)
{
	size_t cap = 32 + nr * 24, len = 0;
	char *s = xmalloc(cap);

	s[0] = '\0';
	for (unsigned int i = 0; i < nr; i++) {
		const struct ktrace_probe_op *op = &ops[i];
		const char *sep = len ? " " : "";

		switch (op->op) {
		case KTRACE_OP_REG:
			len += snprintf(s + len, cap - len, "%s%%%s", sep,
					op->reg <= KTRACE_REG_MAX ? reg_names[op->reg] : "?");
			break;
		case KTRACE_OP_CFA:
			len += snprintf(s + len, cap - len, "%scfa", sep);
			break;
		case KTRACE_OP_ADD:
			len += snprintf(s + len, cap - len, "%s%+d", sep, op->imm);
			break;
		case KTRACE_OP_DEREF:
			if (op->size == 8)
				len += snprintf(s + len, cap - len, "%s[deref]", sep);
			else
				len += snprintf(s + len, cap - len, "%s[deref %u%s]", sep, op->size,
						op->flags & KTRACE_OP_SIGNED ? " signed" : "");
			break;
		case KTRACE_OP_EMIT:
			len += snprintf(s + len, cap - len, "%semit %u", sep, op->size);
			break;
		case KTRACE_OP_STR:
			len += snprintf(s + len, cap - len, "%sstr %u", sep, op->size);
			break;
		}
	}
	return s;
}

/* Why the kernel refused a probe, in the user's terms. */
static const char *add_strerror(int err)
{
	switch (err) {
	case ENOTTY:
		return "this kernel's ktrace has no probes (KTRACE_IOC_PROBE_ADD)";
	case ENOSPC:
		return "no free probe id (the kernel has 255 in use)";
	case EINVAL:
		return "the kernel refused the probe (its fetch program, offset or pids)";
	case ESRCH:
		return "no such process";
	case EPERM:
	case EACCES:
		return "not allowed (needs CAP_SYS_ADMIN; refused under lockdown)";
	}
	return strerror(err);
}

/* One name field of BASE.probes: no TAB or newline, bounded. */
static void put_name(FILE *f, const char *name, const char *suffix)
{
	size_t n = 0;

	for (const char *s = name; *s && n < PROBE_NAME_MAX; s++, n++)
		fputc(*s == '\t' || *s == '\n' || *s == '\r' ? ' ' : *s, f);
	fprintf(f, "%s\n", suffix);
}

/* Like the /proc copies: a BASE.probes that cannot be written costs only the names. */
void probes_save(const struct probe_set *set, const char *base)
{
	size_t len = strlen(base) + 8;
	char *path = xmalloc(len);
	int fd;
	FILE *f;

	snprintf(path, len, "%s.probes", base);
	fd = kt_create_file(path);
	if (fd < 0) {
		pr_warn("%s: %s: dtrace prints the probes' records by number", path,
			kt_create_strerror(fd));
		free(path);
		return;
	}
	f = fdopen(fd, "w");
	if (!f)
		die("%s: %s", path, strerror(errno));
	fprintf(f, "# ktrace probes 1\n");
	for (const struct probe *p = set->head; p; p = p->next) {
		fprintf(f, "probe\t%u\t%s\t%s\t0x%" PRIx64 "\t", p->id, p->ret ? "return" : "entry",
			p->build_id, p->offset);
		for (const char *s = p->binary; *s; s++)
			fputc(*s == '\t' || *s == '\n' ? ' ' : *s, f);
		fputc('\t', f);
		put_name(f, p->name, "");	/* a return probe: KIND says it, dtrace adds "%return" */
		for (unsigned int i = 0; i < p->nr_values; i++) {
			fprintf(f, "value\t%u\t%u\t%s\t", p->id, i, p->values[i].type);
			put_name(f, p->values[i].name, "");
		}
	}
	if (fflush(f) || ferror(f)) {
		pr_warn("%s: %s: not kept", path, strerror(errno));
		unlink(path);
	}
	fclose(f);
	free(path);
}

void probes_add(struct probe_set *set, int ctl, const char *dev, pid_t child,
		const char *base)
{
	int32_t pids[KTRACE_PROBE_MAX_PIDS];
	unsigned int nr_pids = 0;

	if (!set || !set->nr)
		return;
	if (child > 0)
		pids[nr_pids++] = child;
	else
		for (unsigned int i = 0; i < set->nr_pids; i++)
			pids[nr_pids++] = set->pids[i];
	for (struct probe *p = set->head; p; p = p->next) {
		struct ktrace_probe kp = {
			.flags = (p->ret ? KTRACE_PROBE_RETURN : 0) |
				 (child > 0 ? KTRACE_PROBE_CHILDREN : 0),
			.offset = p->offset,
			.ops = (uintptr_t)p->ops,
			.nr_ops = p->nr_ops,
			.nr_pids = nr_pids,
			.pids = (uintptr_t)pids,
		};

		kp.fd = probe_open_binary(p->binary);
		if (ioctl(ctl, KTRACE_IOC_PROBE_ADD, &kp) < 0)
			die("%s: probe %s:%s%s at offset 0x%" PRIx64 ": %s", dev, p->binary, p->name,
			    p->ret ? "%return" : "", p->offset, add_strerror(errno));
		close(kp.fd);
		if (!kp.id || kp.id > KTRACE_PROBE_MAX_ID)
			die("%s: probe %s:%s: the kernel gave id %u (not 1-%d)", dev, p->binary,
			    p->name, kp.id, KTRACE_PROBE_MAX_ID);
		p->id = kp.id;
		pr_debug("probe %u: %s:%s%s at 0x%" PRIx64 ", %u ops", p->id, p->binary, p->name,
			 p->ret ? "%return" : "", p->offset, p->nr_ops);
	}
	if (base)
		probes_save(set, base);
}
