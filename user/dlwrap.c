// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * dlwrap: functions in front of the C library's, in libktrace.so only (a
 * static program has its own, and no next one to call).
 *
 * dlclose().  A library
 * unloaded and another loaded at its address: without a map of each, the
 * second one's calls took the first one's names.  So the process's map is
 * written before the library goes and after (maps.c); a library loaded
 * since is in the next map written, which dtrace takes for addresses the
 * map of their time does not have.  dlopen() is not wrapped: it looks up
 * relative names with the RUNPATH of its caller, which a wrapper would
 * change.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <spawn.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libktrace.h"
#include "filter.h"

#define KT_WRAP	__attribute__((visibility("default"))) KT_NOTRACE

KT_WRAP int dlclose(void *handle)
{
	static int (*next)(void *);
	int (*real)(void *) = __atomic_load_n(&next, __ATOMIC_RELAXED);
	int ret, saved_errno;

	if (!real) {
		real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
		if (!real)
			return -1;	/* no C library behind us: cannot happen */
		__atomic_store_n(&next, real, __ATOMIC_RELAXED);
	}
	kt_maps_library_change();
	ret = real(handle);
	saved_errno = errno;
	kt_maps_library_change();
	kt_filter_library_change();	/* another library may come at its addresses */
	errno = saved_errno;
	return ret;
}

/*
 * posix_spawn(), posix_spawnp(), execve(), execvpe() and fexecve() with an
 * environment of the program's own: one that lacks what tracing needs
 * (LD_PRELOAD with libktrace, KTRACE_USER_DIR, ktrace-run's KTRACE_RUN_RINGS)
 * left the child silently untraced, where uftrace traces it (it adds its
 * variables the same way).  So, when this process records, the child gets
 * them: the program's LD_PRELOAD with libktrace in front, our KTRACE_
 * variables in place of any it set.  An environment that has them all
 * already is passed on as it is.  Memory from mmap(), not malloc(): exec
 * may be called in a vfork() child.
 */
struct env_copy {
	char **env;
	size_t bytes;
};

static KT_NOTRACE bool is_var(const char *entry, const char *var)
{
	size_t n = strcspn(var, "=") + 1;

	return !strncmp(entry, var, n);
}

/* Whether LD_PRELOAD value @list (':' or ' ' separated) names @lib. */
static KT_NOTRACE bool preloads(const char *list, const char *lib)
{
	size_t n = strlen(lib);

	for (const char *p = list; *p; p += strcspn(p, ": ")) {
		p += strspn(p, ": ");
		if (!strncmp(p, lib, n) && (!p[n] || p[n] == ':' || p[n] == ' '))
			return true;
	}
	return false;
}

static KT_NOTRACE char *const *with_tracing_env(char *const envp[], struct env_copy *c)
{
	const char *lib, *preload = NULL;
	size_t n, have = 0, at = 0, len;
	struct kt_env *mine;
	char *strings;
	Dl_info info;

	c->env = NULL;
	if (!dladdr((void *)with_tracing_env, &info) || !info.dli_fname ||
	    info.dli_fname[0] != '/')
		return envp;
	lib = info.dli_fname;
	for (n = 0; envp && envp[n]; n++)
		if (is_var(envp[n], "LD_PRELOAD="))
			preload = envp[n] + 11;
	/* one mapping: our variables, then the pointers, then LD_PRELOAD */
	len = strlen(lib) + (preload ? strlen(preload) : 0) + 16;
	c->bytes = sizeof(*mine) + (n + KT_ENV_MAX + 2) * sizeof(char *) + len;
	mine = mmap(NULL, c->bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (mine == MAP_FAILED)
		return envp;
	c->env = (char **)(mine + 1);
	if (!kt_tracing_env(mine))
		goto as_it_is;
	for (size_t i = 0; i < n; i++)
		for (unsigned int j = 0; j < mine->nr; j++)
			have += !strcmp(envp[i], mine->var[j]);
	if (have == mine->nr && preload && preloads(preload, lib))
		goto as_it_is;
	strings = (char *)(c->env + n + KT_ENV_MAX + 2);
	for (size_t i = 0; i < n; i++) {
		bool ours = is_var(envp[i], "LD_PRELOAD=");

		for (unsigned int j = 0; j < mine->nr && !ours; j++)
			ours = is_var(envp[i], mine->var[j]);
		if (!ours)
			c->env[at++] = envp[i];
	}
	for (unsigned int j = 0; j < mine->nr; j++)
		c->env[at++] = mine->var[j];
	if (preload && preloads(preload, lib))
		snprintf(strings, len, "LD_PRELOAD=%s", preload);
	else
		snprintf(strings, len, "LD_PRELOAD=%s%s%s", lib, preload && *preload ? ":" : "",
			 preload ? preload : "");
	c->env[at++] = strings;
	c->env[at] = NULL;
	return c->env;
as_it_is:
	munmap(mine, c->bytes);
	c->env = NULL;
	return envp;
}

static KT_NOTRACE void env_done(struct env_copy *c)
{
	int saved_errno = errno;

	if (c->env)
		munmap((struct kt_env *)c->env - 1, c->bytes);
	errno = saved_errno;
}

/* The C library's @name, looked up once. */
static KT_NOTRACE void *next_fn(void **cache, const char *name)
{
	void *fn = __atomic_load_n(cache, __ATOMIC_RELAXED);

	if (!fn) {
		fn = dlsym(RTLD_NEXT, name);
		__atomic_store_n(cache, fn, __ATOMIC_RELAXED);
	}
	return fn;
}

typedef int spawn_fn(pid_t *, const char *, const posix_spawn_file_actions_t *,
		     const posix_spawnattr_t *, char *const[], char *const[]);

#define SPAWN_WRAPPER(name)								\
KT_WRAP int name(pid_t *pid, const char *path, const posix_spawn_file_actions_t *actions,	\
		 const posix_spawnattr_t *attr, char *const argv[], char *const envp[])	\
{											\
	static void *next;								\
	spawn_fn *real = (spawn_fn *)next_fn(&next, #name);				\
	struct env_copy c;								\
	int ret;									\
											\
	if (!real)									\
		return ENOSYS;								\
	ret = real(pid, path, actions, attr, argv, with_tracing_env(envp, &c));	\
	env_done(&c);									\
	return ret;									\
}

SPAWN_WRAPPER(posix_spawn)
SPAWN_WRAPPER(posix_spawnp)

KT_WRAP int execve(const char *path, char *const argv[], char *const envp[])
{
	static void *next;
	int (*real)(const char *, char *const[], char *const[]) = next_fn(&next, "execve");
	struct env_copy c;
	int ret;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	ret = real(path, argv, with_tracing_env(envp, &c));
	env_done(&c);
	return ret;
}

KT_WRAP int execvpe(const char *file, char *const argv[], char *const envp[])
{
	static void *next;
	int (*real)(const char *, char *const[], char *const[]) = next_fn(&next, "execvpe");
	struct env_copy c;
	int ret;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	ret = real(file, argv, with_tracing_env(envp, &c));
	env_done(&c);
	return ret;
}

KT_WRAP int fexecve(int fd, char *const argv[], char *const envp[])
{
	static void *next;
	int (*real)(int, char *const[], char *const[]) = next_fn(&next, "fexecve");
	struct env_copy c;
	int ret;

	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	ret = real(fd, argv, with_tracing_env(envp, &c));
	env_done(&c);
	return ret;
}

#if defined(__x86_64__)
/*
 * vfork(): the system call made here, as the C library makes it: the
 * return address in a register, not on the stack the child shares, and
 * the thread's state saved in another (kt_vfork_save() in stream.c); the
 * child stops recording, the parent takes its stream back.  A failure
 * sets errno as the C library's would.
 */
KT_NOTRACE __attribute__((used)) long kt_vfork_failed(long err)
{
	errno = (int)err;
	return -1;
}

__asm__(".text\n"
	".globl vfork\n"
	".type vfork, @function\n"
	"vfork:\n"
	"	.cfi_startproc\n"
	"	subq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	call kt_vfork_save\n"
	"	addq $8, %rsp\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	movq %rax, %rsi\n"
	"	popq %rdi\n"
	"	.cfi_adjust_cfa_offset -8\n"
	"	.cfi_register rip, rdi\n"
	"	movl $58, %eax\n"		/* SYS_vfork */
	"	syscall\n"
	"	pushq %rdi\n"
	"	.cfi_adjust_cfa_offset 8\n"
	"	.cfi_rel_offset rip, 0\n"
	"	testq %rax, %rax\n"
	"	jnz 1f\n"
	"	subq $8, %rsp\n"		/* the child */
	"	call kt_vfork_child\n"
	"	addq $8, %rsp\n"
	"	xorl %eax, %eax\n"
	"	ret\n"
	"1:	pushq %rax\n"			/* the parent, or a failure */
	"	movq %rsi, %rdi\n"
	"	call kt_vfork_parent\n"
	"	popq %rax\n"
	"	cmpq $-4095, %rax\n"
	"	jb 2f\n"
	"	negq %rax\n"
	"	movq %rax, %rdi\n"
	"	subq $8, %rsp\n"
	"	call kt_vfork_failed\n"
	"	addq $8, %rsp\n"
	"2:	ret\n"
	"	.cfi_endproc\n"
	".size vfork, .-vfork\n");
#endif
