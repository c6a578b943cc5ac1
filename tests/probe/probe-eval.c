// SPDX-License-Identifier: GPL-2.0
/*
 * probe-eval: the kernel's probe semantics in user space, for the host
 * tests (97-probe-eval.sh, 98-probe-debsrc.sh): runs a program under
 * ptrace with a breakpoint at each probe's file offset, and at each hit
 * runs the probe's fetch program as include/uapi/linux/ktrace.h defines
 * it (registers from PTRACE_GETREGS, memory from process_vm_readv, CFA =
 * rsp + 8, a failed load makes the value missing and skips to the op
 * after the next EMIT or STR), then prints the hit as dtrace's listing
 * does: "probe:NAME f1=V1 f2=V2" (a missing value "?", strings quoted),
 * on stdout or into the file $PROBE_EVAL_OUT (when PROGRAM writes to stdout).
 *
 *   probe-eval PROBE_LOG BASE.probes PROGRAM [ARG]...
 *
 * PROBE_LOG is what the fake device (ktrace-cli-fakedev.c, KTFAKE_PROBES)
 * recorded of ktrace's KTRACE_IOC_PROBE_ADD calls: the ops exactly as
 * ktrace gave them to the kernel.  BASE.probes gives names and types.
 * Only probes in PROGRAM itself (not in its libraries, nor in other
 * programs) are set.  A return
 * probe is a breakpoint at the return address its entry found on the
 * stack, hit with the stack pointer just above it.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>
#include <linux/ktrace.h>

#define MAX_PROBES	256
#define MAX_BPS		1024

struct value {
	char type[8], name[512];
};

struct probe {
	unsigned int id;
	bool ret;
	uint64_t offset, addr;
	char binary[4096], name[512];
	struct ktrace_probe_op ops[KTRACE_PROBE_MAX_OPS];
	unsigned int nr_ops, nr_values;
	struct value values[KTRACE_PROBE_MAX_VALUES];
};

struct bp {
	uint64_t addr;
	long orig;
	struct probe *entry[4];		/* an entry breakpoint's probes */
	unsigned int nr_entry;
	struct probe *ret;		/* a return breakpoint's probe */
	uint64_t ret_sp;		/* the stack pointer the return comes back with */
	bool active;
};

static struct probe probes[MAX_PROBES];
static unsigned int nr_probes;
static struct bp bps[MAX_BPS];
static unsigned int nr_bps;
static pid_t child;
static FILE *out;		/* the hits: $PROBE_EVAL_OUT, else stdout */

static void __attribute__((noreturn)) fatal(const char *msg)
{
	fprintf(stderr, "probe-eval: %s: %s\n", msg, strerror(errno));
	if (child > 0)
		kill(child, SIGKILL);
	exit(1);
}

static struct probe *probe_by_id(unsigned int id)
{
	for (unsigned int i = 0; i < nr_probes; i++)
		if (probes[i].id == id)
			return &probes[i];
	return NULL;
}

/* BASE.probes: TAB-separated, the last field the rest of the line */
static void read_probes(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[8192];

	if (!f)
		fatal(path);
	while (fgets(line, sizeof(line), f)) {
		char *fld[8];
		unsigned int n = 0;
		char *s = line;

		line[strcspn(line, "\n")] = '\0';
		if (line[0] == '#')
			continue;
		while (n < 7) {
			fld[n++] = s;
			s = strchr(s, '\t');
			if (!s)
				break;
			*s++ = '\0';
		}
		if (!strcmp(fld[0], "probe") && n == 7 && nr_probes < MAX_PROBES) {
			struct probe *p = &probes[nr_probes++];

			p->id = atoi(fld[1]);
			p->ret = !strcmp(fld[2], "return");
			p->offset = strtoull(fld[4], NULL, 16);
			snprintf(p->binary, sizeof(p->binary), "%s", fld[5]);
			/* a return probe prints as NAME%return, as dtrace shows it */
			snprintf(p->name, sizeof(p->name), "%s%s", fld[6], p->ret ? "%return" : "");
		} else if (!strcmp(fld[0], "value") && n == 5) {
			struct probe *p = probe_by_id(atoi(fld[1]));
			unsigned int idx = atoi(fld[2]);

			if (!p || idx >= KTRACE_PROBE_MAX_VALUES)
				continue;
			snprintf(p->values[idx].type, sizeof(p->values[idx].type), "%s", fld[3]);
			snprintf(p->values[idx].name, sizeof(p->values[idx].name), "%s", fld[4]);
			if (idx + 1 > p->nr_values)
				p->nr_values = idx + 1;
		}
	}
	fclose(f);
}

/* the fake device's log: "probe ID FLAGS 0xOFFSET PIDS OPS PATH" */
static void read_ops(const char *path)
{
	FILE *f = fopen(path, "r");
	char line[16384];

	if (!f)
		fatal(path);
	while (fgets(line, sizeof(line), f)) {
		unsigned int id, flags;
		char pids[1024], ops[8192];
		struct probe *p;

		if (sscanf(line, "probe %u %u %*s %1023s %8191s", &id, &flags, pids, ops) != 4)
			continue;
		p = probe_by_id(id);
		if (!p || !strcmp(ops, "-"))
			continue;
		for (char *tok = strtok(ops, "/"); tok && p->nr_ops < KTRACE_PROBE_MAX_OPS;
		     tok = strtok(NULL, "/")) {
			unsigned int op, size, fl, reg;
			int imm;

			if (sscanf(tok, "%u,%u,%u,%u,%d", &op, &size, &fl, &reg, &imm) == 5)
				p->ops[p->nr_ops++] = (struct ktrace_probe_op){ op, size, fl, reg, imm };
		}
	}
	fclose(f);
}

static uint64_t reg_value(const struct user_regs_struct *r, unsigned int reg)
{
	const unsigned long long v[17] = {
		r->rax, r->rdx, r->rcx, r->rbx, r->rsi, r->rdi, r->rbp, r->rsp,
		r->r8, r->r9, r->r10, r->r11, r->r12, r->r13, r->r14, r->r15, r->rip,
	};

	return reg <= 16 ? v[reg] : 0;
}

static bool read_mem(uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { buf, n }, remote = { (void *)(uintptr_t)addr, n };

	return process_vm_readv(child, &local, 1, &remote, 1, 0) == (ssize_t)n;
}

static void print_str(const unsigned char *s, size_t n)
{
	fputc('"', out);
	for (size_t i = 0; i < n && s[i]; i++) {
		if (s[i] == '"' || s[i] == '\\')
			fprintf(out, "\\%c", s[i]);
		else if (s[i] < 0x20 || s[i] >= 0x7f)
			fprintf(out, "\\x%02x", s[i]);
		else
			fputc(s[i], out);
	}
	fputc('"', out);
}

static void print_value(const struct value *v, uint64_t acc, const unsigned char *str, size_t n)
{
	unsigned int bits = atoi(v->type + 1);
	uint64_t mask = bits >= 64 ? ~0ull : (1ull << bits) - 1;

	if (!strncmp(v->type, "str", 3))
		print_str(str, n);
	else if (v->type[0] == 'x')
		fprintf(out, "0x%" PRIx64, acc & mask);
	else if (v->type[0] == 's')
		fprintf(out, "%" PRId64, bits >= 64 ? (int64_t)acc :
		       (int64_t)((acc & mask) ^ (1ull << (bits - 1))) - (int64_t)(1ull << (bits - 1)));
	else
		fprintf(out, "%" PRIu64, acc & mask);
}

/* One hit: the program's ops, exactly as the kernel runs them. */
static void run_probe(const struct probe *p, const struct user_regs_struct *r)
{
	uint64_t acc = 0;
	unsigned int value = 0;

	fprintf(out, "probe:%s", p->name);
	for (unsigned int i = 0; i < p->nr_ops; i++) {
		const struct ktrace_probe_op *op = &p->ops[i];
		unsigned char buf[KTRACE_PROBE_MAX_STR];
		const struct value *v = &p->values[value];

		switch (op->op) {
		case KTRACE_OP_REG:
			acc = reg_value(r, op->reg);
			break;
		case KTRACE_OP_CFA:
			acc = r->rsp + 8;
			break;
		case KTRACE_OP_ADD:
			acc += (int64_t)op->imm;
			break;
		case KTRACE_OP_DEREF: {
			uint64_t x = 0;

			if (!read_mem(acc, &x, op->size)) {
				fprintf(out, " %s=?", v->name);
				value++;
				while (i < p->nr_ops && p->ops[i].op != KTRACE_OP_EMIT &&
				       p->ops[i].op != KTRACE_OP_STR)
					i++;
				acc = 0;
				break;
			}
			if ((op->flags & KTRACE_OP_SIGNED) && op->size < 8 &&
			    (x >> (op->size * 8 - 1)) & 1)
				x |= ~0ull << (op->size * 8);
			acc = x;
			break;
		}
		case KTRACE_OP_EMIT:
			fprintf(out, " %s=", v->name);
			print_value(v, op->size == 8 ? acc : acc & ((1ull << (op->size * 8)) - 1),
				    NULL, 0);
			value++;
			break;
		case KTRACE_OP_STR: {
			size_t got = 0;

			/* byte by byte where a page ends: as far as it reads */
			memset(buf, 0, sizeof(buf));
			while (got < op->size && read_mem(acc + got, buf + got, 1) && buf[got])
				got++;
			fprintf(out, " %s=", v->name);
			if (!got && !read_mem(acc, buf, 1))
				fprintf(out, "?");
			else
				print_value(v, 0, buf, got);
			value++;
			break;
		}
		}
	}
	fputc('\n', out);
	fflush(out);
}

static struct bp *bp_at(uint64_t addr)
{
	for (unsigned int i = 0; i < nr_bps; i++)
		if (bps[i].addr == addr)
			return &bps[i];
	return NULL;
}

static void bp_insert(struct bp *b)
{
	errno = 0;
	b->orig = ptrace(PTRACE_PEEKTEXT, child, (void *)(uintptr_t)b->addr, NULL);
	if (errno)
		fatal("PTRACE_PEEKTEXT");
	if (ptrace(PTRACE_POKETEXT, child, (void *)(uintptr_t)b->addr,
		   (void *)((b->orig & ~0xffL) | 0xcc)) < 0)
		fatal("PTRACE_POKETEXT");
	b->active = true;
}

static void bp_remove(struct bp *b)
{
	if (b->active && ptrace(PTRACE_POKETEXT, child, (void *)(uintptr_t)b->addr,
				(void *)b->orig) < 0)
		fatal("PTRACE_POKETEXT");
	b->active = false;
}

static struct bp *bp_new(uint64_t addr)
{
	struct bp *b = bp_at(addr);

	if (b) {
		if (!b->active)
			bp_insert(b);
		return b;
	}
	if (nr_bps == MAX_BPS) {
		errno = ENOSPC;
		fatal("breakpoints");
	}
	b = &bps[nr_bps++];
	b->addr = addr;
	bp_insert(b);
	return b;
}

/* each probe's address in the process, from its map of PROGRAM */
static void place_probes(void)
{
	char path[64], line[8192], exe[4096];
	ssize_t exe_len;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)child);
	f = fopen(path, "r");
	if (!f)
		fatal(path);
	while (fgets(line, sizeof(line), f)) {
		unsigned long long start, end, off;
		int pos = 0;

		if (sscanf(line, "%llx-%llx %*s %llx %*s %*s %n", &start, &end, &off, &pos) < 3 || !pos)
			continue;
		line[strcspn(line, "\n")] = '\0';
		for (unsigned int i = 0; i < nr_probes; i++) {
			struct probe *p = &probes[i];

			if (!p->addr && !strcmp(line + pos, p->binary) && p->offset >= off &&
			    p->offset < off + (end - start))
				p->addr = start + p->offset - off;
		}
	}
	fclose(f);
	snprintf(path, sizeof(path), "/proc/%d/exe", (int)child);
	exe_len = readlink(path, exe, sizeof(exe) - 1);
	exe[exe_len > 0 ? exe_len : 0] = '\0';
	for (unsigned int i = 0; i < nr_probes; i++) {
		if (!probes[i].addr && strcmp(probes[i].binary, exe))
			continue;	/* another program's */
		if (!probes[i].addr) {
			fprintf(stderr, "probe-eval: probe %u: %s is not mapped at offset 0x%" PRIx64
				"\n", probes[i].id, probes[i].binary, probes[i].offset);
			kill(child, SIGKILL);
			exit(1);
		}
		struct bp *b = bp_new(probes[i].addr);

		if (b->nr_entry == 4) {
			errno = ENOSPC;
			fatal("probes at one address");
		}
		b->entry[b->nr_entry++] = &probes[i];
	}
}

int main(int argc, char **argv)
{
	int status;

	if (argc < 4) {
		fprintf(stderr, "usage: probe-eval PROBE_LOG BASE.probes PROGRAM [ARG]...\n");
		return 2;
	}
	out = getenv("PROBE_EVAL_OUT") ? fopen(getenv("PROBE_EVAL_OUT"), "w") : stdout;
	if (!out)
		fatal(getenv("PROBE_EVAL_OUT"));
	read_probes(argv[2]);
	read_ops(argv[1]);
	child = fork();
	if (child < 0)
		fatal("fork");
	if (child == 0) {
		/* addresses as under gdb, which turns randomization off too */
		personality(ADDR_NO_RANDOMIZE);
		ptrace(PTRACE_TRACEME, 0, NULL, NULL);
		execvp(argv[3], argv + 3);
		fprintf(stderr, "probe-eval: %s: %s\n", argv[3], strerror(errno));
		_exit(127);
	}
	if (waitpid(child, &status, 0) < 0 || !WIFSTOPPED(status))
		fatal("waiting for the exec");
	place_probes();
	for (int sig = 0;;) {
		struct user_regs_struct r;
		struct bp *b;

		if (ptrace(PTRACE_CONT, child, NULL, (void *)(long)sig) < 0)
			fatal("PTRACE_CONT");
		sig = 0;
		if (waitpid(child, &status, 0) < 0)
			fatal("waitpid");
		if (WIFEXITED(status))
			return WEXITSTATUS(status) ? 3 : 0;
		if (WIFSIGNALED(status))
			return 4;
		if (WSTOPSIG(status) != SIGTRAP) {
			sig = WSTOPSIG(status);
			continue;
		}
		if (ptrace(PTRACE_GETREGS, child, NULL, &r) < 0)
			fatal("PTRACE_GETREGS");
		b = bp_at(r.rip - 1);
		if (!b)
			continue;
		r.rip--;
		if (b->ret && r.rsp == b->ret_sp) {
			run_probe(b->ret, &r);
			b->ret = NULL;
		}
		for (unsigned int k = 0; k < b->nr_entry; k++) {
			uint64_t ra;
			struct bp *rb;

			if (!b->entry[k]->ret) {
				run_probe(b->entry[k], &r);
				continue;
			}
			if (!read_mem(r.rsp, &ra, 8))
				fatal("reading the return address");
			rb = bp_new(ra);
			rb->ret = b->entry[k];
			rb->ret_sp = r.rsp + 8;
		}
		/* step over: the original instruction, then the breakpoint again */
		bp_remove(b);
		if (ptrace(PTRACE_SETREGS, child, NULL, &r) < 0 ||
		    ptrace(PTRACE_SINGLESTEP, child, NULL, NULL) < 0 ||
		    waitpid(child, &status, 0) < 0)
			fatal("stepping over a breakpoint");
		if (WIFEXITED(status))
			return WEXITSTATUS(status) ? 3 : 0;
		if (b->nr_entry || b->ret)
			bp_insert(b);
	}
}
