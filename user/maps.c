// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * maps: what dtrace needs to put names on a process's addresses after the
 * process is gone, in DIR/trace.pid<PID>.maps, a text file:
 *
 *   # libktrace: pid 4242 (prog)
 *   snapshot <tsc>
 *   object <bias> <start> <end> <build-id or -> <path>
 *   map <a line of /proc/self/maps>
 *   event <sub> <name> <format>
 *
 * An object is an ELF file the dynamic linker loaded (the program, its
 * shared libraries, what dlopen() brought): its load bias (file address +
 * bias = run-time address, 0 for a non-PIE program), the addresses its
 * segments cover and its GNU build id, read from its notes in memory.  A
 * snapshot is taken when the process records its first event, again at
 * exit and ktrace_user_flush(), and before and after each dlclose(), each
 * appended with its time stamp: a library loaded in between is in the
 * later one, and dtrace names an address by the snapshot of its time.  event lines name the program's user events.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "libktrace.h"

#define NAME_MAX_LEN	32
#define FORMAT_MAX_LEN	128

/* The map file being written: whole lines only, see out_flush(). */
struct maps_out {
	int fd;
	bool failed;			/* lines were lost: no more of this snapshot */
	size_t len;
	char path[PATH_MAX];		/* for the message */
	char buf[8192];			/* whole lines at each flush */
};

static pthread_mutex_t maps_lock = PTHREAD_MUTEX_INITIALIZER;
static pid_t maps_pid;			/* the process whose file exists */
static char maps_dir[PATH_MAX];		/* where it is */
static unsigned long long maps_loads;	/* dlopen()s and dlclose()s it has seen */
static bool maps_told_lost;		/* a loss said, once per process */

/* The bytes of the whole lines among the first @len of @buf. */
static KT_NOTRACE size_t whole_lines(const char *buf, size_t len)
{
	while (len && buf[len - 1] != '\n')
		len--;
	return len;
}

/* No stdio: it may be said in a signal handler's flush. */
static KT_NOTRACE void tell_lost(const struct maps_out *o, int err)
{
	char msg[PATH_MAX + 160];
	int n;

	if (maps_told_lost)
		return;
	maps_told_lost = true;
	n = snprintf(msg, sizeof(msg), "libktrace: %s: cannot write the map, its last snapshot "
		     "is cut short (dtrace may leave addresses unnamed): %s\n", o->path,
		     strerror(err));
	kt_say(msg, n > (int)sizeof(msg) ? (int)sizeof(msg) : n);
}

static struct {
	char name[NAME_MAX_LEN];
	char format[FORMAT_MAX_LEN];
} names[256];

/*
 * Append the buffer's lines to the file, whole lines or nothing: dtrace
 * reads a torn last line as an error.  Past RLIMIT_FSIZE (a write there is
 * a SIGXFSZ, see kt_fsize_room()) only the lines below it are written; a
 * short write (ENOSPC, EDQUOT) is cut back to its last whole line.  A map
 * file is a help, not a must: after a loss, said once per process, the
 * rest of the snapshot is not written (a later one tries again).
 */
static KT_NOTRACE void out_flush(struct maps_out *o)
{
	size_t len = o->len, done = 0;
	struct stat st;
	int err = 0;

	o->len = 0;
	if (!len || o->failed)
		return;
	if (fstat(o->fd, &st) < 0) {
		err = errno;
		len = 0;
	} else if (kt_fsize_room(st.st_size, len) < len) {
		len = whole_lines(o->buf, kt_fsize_room(st.st_size, len));
		err = EFBIG;
	}
	while (done < len) {
		ssize_t n = write(o->fd, o->buf + done, len - done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			err = n < 0 ? errno : ENOSPC;
			break;
		}
		done += n;
	}
	if (done < len && whole_lines(o->buf, done) < done &&
	    ftruncate(o->fd, st.st_size + whole_lines(o->buf, done)) < 0)
		err = errno;
	if (err) {
		o->failed = true;
		tell_lost(o, err);
	}
}

__attribute__((format(printf, 2, 3)))
static KT_NOTRACE void out(struct maps_out *o, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (sizeof(o->buf) - o->len < PATH_MAX + 256)
		out_flush(o);
	va_start(ap, fmt);
	n = vsnprintf(o->buf + o->len, sizeof(o->buf) - o->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		o->len += (size_t)n < sizeof(o->buf) - o->len ? (size_t)n : sizeof(o->buf) - o->len - 1;
}

/* The GNU build id in the notes of a loaded object, as hex; "-" if none. */
static KT_NOTRACE void build_id(const struct dl_phdr_info *info, char *hex, size_t size)
{
	strcpy(hex, "-");
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		size_t align = ph->p_align == 8 ? 8 : 4;
		const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
		const char *end = p + ph->p_memsz;

		if (ph->p_type != PT_NOTE)
			continue;
		while (p + sizeof(ElfW(Nhdr)) <= end) {
			const ElfW(Nhdr) *n = (const void *)p;
			const unsigned char *name = (const void *)(n + 1);
			const unsigned char *desc = name + ((n->n_namesz + align - 1) & -align);

			p = (const char *)desc + ((n->n_descsz + align - 1) & -align);
			if (p > end)
				break;
			if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
			    !memcmp(name, "GNU", 4) && n->n_descsz * 2 < size) {
				for (unsigned int j = 0; j < n->n_descsz; j++)
					snprintf(hex + 2 * j, 3, "%02x", desc[j]);
				return;
			}
		}
	}
}

/* The file mapped at @addr, from /proc/self/maps; false if none (or not a path). */
static KT_NOTRACE bool mapped_path(uintptr_t addr, char *path, size_t size)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	char buf[4096 + PATH_MAX];
	size_t len = 0;
	bool found = false;
	ssize_t n;

	if (fd < 0)
		return false;
	while (!found && (n = read(fd, buf + len, sizeof(buf) - 1 - len)) > 0) {
		char *line = buf, *nl;

		len += n;
		buf[len] = '\0';
		while (!found && (nl = strchr(line, '\n'))) {
			unsigned long lo, hi;
			int pos = 0;

			*nl = '\0';
			/* start-end perms offset dev inode path */
			if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &lo, &hi, &pos) == 2 && pos &&
			    addr >= lo && addr < hi && line[pos] == '/' &&
			    strlen(line + pos) < size) {
				strcpy(path, line + pos);
				found = true;
			}
			line = nl + 1;
		}
		len -= line - buf;
		memmove(buf, line, len);
		if (len == sizeof(buf) - 1)
			len = 0;	/* a line longer than any path: skip it */
	}
	close(fd);
	return found;
}


KT_NOTRACE bool kt_object_span(const struct dl_phdr_info *info, uintptr_t *start,
			       uintptr_t *end)
{
	*start = UINTPTR_MAX;
	*end = 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type != PT_LOAD)
			continue;
		if (info->dlpi_addr + ph->p_vaddr < *start)
			*start = info->dlpi_addr + ph->p_vaddr;
		if (info->dlpi_addr + ph->p_vaddr + ph->p_memsz > *end)
			*end = info->dlpi_addr + ph->p_vaddr + ph->p_memsz;
	}
	return *start < *end;
}

static KT_NOTRACE int put_object(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct maps_out *o = arg;
	char path[PATH_MAX], id[128];
	uintptr_t start = UINTPTR_MAX, end = 0;
	const char *name = info->dlpi_name;

	if (!name || !*name) {		/* the program */
		ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);

		if (n <= 0)
			return 0;
		path[n] = '\0';
		name = path;
	}
	if (!kt_object_span(info, &start, &end))
		return 0;
	/*
	 * dlopen("./libfoo.so") keeps the name as given, relative to the
	 * directory of that moment: the kernel's map has the file's own path
	 * (the vDSO's is "[vdso]": no file, left out).
	 */
	if (name[0] != '/' && (start == getauxval(AT_SYSINFO_EHDR) ||
			       !mapped_path(start, path, sizeof(path))))
		return 0;
	if (name[0] != '/')
		name = path;
	build_id(info, id, sizeof(id));
	out(o, "object %#lx %#lx %#lx %s %s\n", (unsigned long)info->dlpi_addr,
	    (unsigned long)start, (unsigned long)end, id, name);
	return 0;
}

static KT_NOTRACE void put_proc_maps(struct maps_out *o)
{
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	char buf[4096];
	bool line_start = true;
	ssize_t n;

	if (fd < 0)
		return;
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n; i++) {
			if (line_start)
				out(o, "map ");
			if (o->len == sizeof(o->buf))
				out_flush(o);
			o->buf[o->len++] = buf[i];
			line_start = buf[i] == '\n';
		}
	}
	close(fd);
}

static KT_NOTRACE void put_names(struct maps_out *o, unsigned int from, unsigned int to)
{
	for (unsigned int sub = from; sub <= to; sub++)
		if (names[sub].name[0])
			out(o, "event %u %s %s\n", sub, names[sub].name, names[sub].format);
}

/*
 * Appended to, never truncated: after exec the same pid writes the new
 * image's map after the old one's (and a stale file of an earlier process
 * with this pid is followed by ours: the later snapshot wins).
 */
static KT_NOTRACE int open_maps(const char *dir, struct maps_out *o)
{
	char name[64];
	pid_t pid = getpid();
	bool first = maps_pid != pid;

	snprintf(name, sizeof(name), "trace.pid%u.maps", (unsigned int)pid);
	snprintf(o->path, sizeof(o->path), "%.*s/%s", PATH_MAX - 80, dir, name);
	o->len = 0;
	o->failed = false;
	o->fd = kt_create_file_in(dir, name, true);
	if (o->fd < 0)
		return -1;
	if (first) {
		char comm[17] = "";

		prctl(PR_GET_NAME, comm);
		out(o, "# libktrace: pid %u (%s); see dtrace(1)\n", (unsigned int)pid, comm);
		maps_pid = pid;
	}
	return 0;
}

static KT_NOTRACE int count_loads(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
		*(unsigned long long *)arg = info->dlpi_adds + info->dlpi_subs;
	return 1;			/* the first object says it */
}

KT_NOTRACE bool kt_maps_changed(void)
{
	unsigned long long loads = 0;

	dl_iterate_phdr(count_loads, &loads);
	return loads != __atomic_load_n(&maps_loads, __ATOMIC_RELAXED);
}

KT_NOTRACE void kt_maps_snapshot(const char *dir, uint64_t tsc)
{
	static struct maps_out o;	/* 8 KiB: not on a thread's stack */
	unsigned long long loads = 0;

	pthread_mutex_lock(&maps_lock);
	if (dir != maps_dir)
		snprintf(maps_dir, sizeof(maps_dir), "%s", dir);
	dl_iterate_phdr(count_loads, &loads);
	maps_loads = loads;
	if (open_maps(dir, &o) == 0) {
		out(&o, "snapshot %llu\n", (unsigned long long)tsc);
		dl_iterate_phdr(put_object, &o);
		put_proc_maps(&o);
		put_names(&o, 1, 255);
		out_flush(&o);
		close(o.fd);
	}
	pthread_mutex_unlock(&maps_lock);
}

/*
 * dlclose() (dlwrap.c), before and after: a snapshot with the library,
 * then one without, so that dtrace names each call by the library mapped
 * at its time, though another may be loaded at the same address later.
 */
KT_NOTRACE void kt_maps_library_change(void)
{
	if (maps_pid == getpid())
		kt_maps_snapshot(maps_dir, kt_rdtsc());
}

/* In a fork child: the lock may have been held by a thread of the parent. */
KT_NOTRACE void kt_maps_fork_child(void)
{
	pthread_mutex_init(&maps_lock, NULL);
	maps_told_lost = false;		/* a new process, a file of its own */
}

KT_NOTRACE int kt_maps_add_name(const char *dir, unsigned int sub, const char *name,
				const char *format)
{
	static struct maps_out o;

	if (strlen(name) >= NAME_MAX_LEN || strlen(format) >= FORMAT_MAX_LEN ||
	    strchr(format, '\n'))
		return -1;
	pthread_mutex_lock(&maps_lock);
	strcpy(names[sub].name, name);
	strcpy(names[sub].format, format);
	/* before the process's first snapshot, that one writes it */
	if (maps_pid == getpid() && open_maps(dir, &o) == 0) {
		put_names(&o, sub, sub);
		out_flush(&o);
		close(o.fd);
	}
	pthread_mutex_unlock(&maps_lock);
	return 0;
}
