// SPDX-License-Identifier: GPL-2.0
/*
 * ktfile_read: read a trace file one event at a time, checking it as it goes.
 *
 * Files are read with read() into a small buffer, not mapped: memory stays
 * the same for a 10 GB file, and a pipe or a file still being written reads
 * as well as a finished one.  Nothing is checked ahead (that would mean
 * reading the file twice): a bad record is reported when it is reached,
 * naming the file and its byte offset.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "files.h"
#include "ktfile.h"
#include "ktfile_zstd.h"
#include "util.h"

#define RECORD_SIZE	sizeof(struct ktrace_record)
#define BUF_RECORDS	4096			/* 96 KiB a file */
#define MAX_HEADER_SIZE	(64 * 1024)

/* Print "@path: offset N: what" and return -1 (0 under KTFILE_FORCE, KTFILE_QUIET). */
__attribute__((format(printf, 3, 4)))
static int bad(struct ktfile_reader *r, uint64_t off, const char *fmt, ...)
{
	char msg[256];
	va_list ap;

	r->bad_offset = off;
	if (r->flags & KTFILE_QUIET) {
		r->state = 0;
		return 0;
	}
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->flags & KTFILE_FORCE) {
		pr_warn("%s: offset %llu: %s; ignoring the rest of the file",
			r->path, (unsigned long long)off, msg);
		r->cut = true;
		r->state = 0;
	} else {
		pr_err("%s: offset %llu: %s", r->path, (unsigned long long)off, msg);
		r->state = -1;
		r->bad = true;
	}
	return r->state;
}

/*
 * The file ends inside a record or inside an event's continuation records:
 * what a writer killed mid-write or a file still being written leaves.  The
 * events before are good; the @bytes from @off are left out with a warning
 * (silently under KTFILE_QUIET), and the file ends without an error.
 */
static int torn_tail(struct ktfile_reader *r, uint64_t off, uint64_t bytes, const char *where)
{
	r->torn = bytes;
	r->state = 0;
	if (!(r->flags & KTFILE_QUIET))
		pr_warn("%s: offset %llu: torn tail (the file ends inside %s), %llu bytes left out",
			r->path, (unsigned long long)off, where, (unsigned long long)bytes);
	return 0;
}

/* The decoder of a compressed file stopped before its end. */
static bool zstd_trouble(const struct ktfile_reader *r)
{
	return r->z && (r->z->state == KTFILE_Z_TORN || r->z->state == KTFILE_Z_BAD);
}

/*
 * Say why the decoder stopped, once the records before are taken.  Offsets
 * are in the compressed file: where the torn or damaged frame starts.
 */
static int zstd_stopped(struct ktfile_reader *r)
{
	const struct ktfile_zreader *z = r->z;

	if (z->state == KTFILE_Z_BAD)
		return bad(r, z->off, "%s", z->why);
	r->torn = z->left;
	r->state = 0;
	if (!(r->flags & KTFILE_QUIET)) {
		if (z->content)
			pr_warn("%s: offset %llu: torn tail (the file ends inside a compressed "
				"frame), %llu bytes left out: %llu bytes of records (%llu records)",
				r->path, (unsigned long long)z->off, (unsigned long long)z->left,
				(unsigned long long)z->content,
				(unsigned long long)(z->content / RECORD_SIZE));
		else
			pr_warn("%s: offset %llu: torn tail (the file ends inside a compressed "
				"frame), %llu bytes left out", r->path,
				(unsigned long long)z->off, (unsigned long long)z->left);
	}
	return 0;
}

/*
 * Read up to @len bytes (of the decompressed stream: a compressed file
 * reads as the uncompressed one); fewer only at the end of the file.
 */
static ssize_t read_full(struct ktfile_reader *r, void *buf, size_t len)
{
	size_t have = 0;

	if (r->z)
		return ktfile_zread(r->z, r->fd, buf, len);
	while (have < len && !r->eof) {
		ssize_t n = read(r->fd, (char *)buf + have, len - have);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return have ? (ssize_t)have : -1;
		if (n == 0)
			r->eof = true;
		have += n;
	}
	return have;
}

void ktfile_swap_record(struct ktrace_record *rec)
{
	rec->tsc = __builtin_bswap64(rec->tsc);
	rec->event = __builtin_bswap32(rec->event);
	rec->tid = __builtin_bswap32(rec->tid);
	rec->arg1 = __builtin_bswap32(rec->arg1);
	rec->arg2 = __builtin_bswap32(rec->arg2);
}

void ktfile_swap_header(struct ktfile_header *h)
{
	h->version = __builtin_bswap32(h->version);
	h->header_size = __builtin_bswap32(h->header_size);
	h->byte_order = __builtin_bswap32(h->byte_order);
	h->record_size = __builtin_bswap32(h->record_size);
	h->cpu = __builtin_bswap32(h->cpu);
	h->flags = __builtin_bswap32(h->flags);
	h->pid = __builtin_bswap32(h->pid);
	h->tid = __builtin_bswap32(h->tid);
	h->tsc_hz = __builtin_bswap64(h->tsc_hz);
	h->ref_tsc = __builtin_bswap64(h->ref_tsc);
	h->ref_mono_ns = __builtin_bswap64(h->ref_mono_ns);
	h->ref_real_ns = __builtin_bswap64(h->ref_real_ns);
	h->mask = __builtin_bswap32(h->mask);
	h->reserved0 = __builtin_bswap32(h->reserved0);
}

#define FIELD(f)	offsetof(struct ktfile_header, f)

/* Every string field must end inside its bytes. */
static int check_strings(struct ktfile_reader *r)
{
	static const struct {
		const char *name;
		size_t off, size;
	} strs[] = {
#define STR(f)	{ #f, FIELD(f), sizeof(((struct ktfile_header *)0)->f) }
		STR(boot_id), STR(release), STR(hostname), STR(tool_version), STR(comm),
#undef STR
	};

	for (unsigned int i = 0; i < ARRAY_SIZE(strs); i++)
		if (!memchr((char *)&r->hdr + strs[i].off, 0, strs[i].size))
			return bad(r, strs[i].off, "%s is not NUL-terminated",
				   strs[i].name);
	return 0;
}

static int check_header(struct ktfile_reader *r, ssize_t n)
{
	struct ktfile_header *h = &r->hdr;

	if (!n)
		return bad(r, 0, "empty file, not a ktrace trace file");
	if (n < (ssize_t)sizeof(h->magic) ||
	    memcmp(h->magic, KTFILE_MAGIC, sizeof(h->magic)))
		return bad(r, 0, "not a ktrace trace file (bad magic)");
	if (n < (ssize_t)sizeof(*h))
		return bad(r, n, "file ends inside the header (%zd of %d bytes)",
			   n, KTFILE_HEADER_SIZE);
	if (h->byte_order == __builtin_bswap32(KTFILE_BYTE_ORDER)) {
		r->swapped = true;
		ktfile_swap_header(h);
	} else if (h->byte_order != KTFILE_BYTE_ORDER) {
		return bad(r, FIELD(byte_order), "bad byte order mark 0x%08x",
			   h->byte_order);
	}
	if (h->version != KTFILE_VERSION)
		return bad(r, FIELD(version),
			   "unknown format version %u (this reader knows %d)",
			   h->version, KTFILE_VERSION);
	if (h->header_size < KTFILE_HEADER_SIZE || h->header_size > MAX_HEADER_SIZE ||
	    h->header_size % 8)
		return bad(r, FIELD(header_size), "bad header size %u", h->header_size);
	if (h->record_size != RECORD_SIZE)
		return bad(r, FIELD(record_size), "record size %u, expected %zu",
			   h->record_size, RECORD_SIZE);
	if (h->cpu < -1)
		return bad(r, FIELD(cpu), "bad cpu %d", h->cpu);
	if (h->cpu == -1 && !(h->flags & KTFILE_USER_STREAM))
		return bad(r, FIELD(cpu), "cpu -1 but not flagged a user stream");
	if (h->cpu >= 0 && (h->flags & KTFILE_USER_STREAM))
		return bad(r, FIELD(cpu), "user stream with cpu %d, not -1", h->cpu);
	if (!h->tsc_hz)
		return bad(r, FIELD(tsc_hz), "TSC frequency is 0");
	return check_strings(r);
}

/* Skip the rest of a header larger than ours (a later version's). */
static int skip_header(struct ktfile_reader *r)
{
	size_t left = r->hdr.header_size - KTFILE_HEADER_SIZE;

	while (left) {
		size_t len = left < BUF_RECORDS * RECORD_SIZE ? left : BUF_RECORDS * RECORD_SIZE;
		ssize_t n = read_full(r, r->buf, len);

		/* a damaged frame or a read error is the news, not the short header */
		if (n < (ssize_t)len && r->z && r->z->state == KTFILE_Z_BAD)
			return bad(r, r->z->off, "%s", r->z->why);
		if (n < 0)
			return bad(r, r->hdr.header_size - left, "read error: %s", strerror(errno));
		if (n < (ssize_t)len)
			return bad(r, r->hdr.header_size - left + n,
				   "file ends inside the header (header size %u)",
				   r->hdr.header_size);
		left -= len;
	}
	return 0;
}

void ktfile_set_tsc_hz(struct ktfile_reader *r, uint64_t hz)
{
	unsigned __int128 frac = (unsigned __int128)(1000000000u % hz) << 64;

	r->tsc_hz = hz;
	r->ns_int = 1000000000u / hz;
	r->ns_frac = frac / hz;
}

void ktfile_set_tsc_map(struct ktfile_reader *r, uint64_t from, uint64_t to, double scale)
{
	r->mapped = true;
	r->map_from = from;
	r->map_to = to;
	r->map_scale = scale;
}

uint64_t ktfile_map_tsc(const struct ktfile_reader *r, uint64_t tsc)
{
	/* the distance either way, unsigned: 2^63 ticks or more apart is no wrap */
	double t = tsc >= r->map_from ?
		   (double)r->map_to + (double)(tsc - r->map_from) * r->map_scale :
		   (double)r->map_to - (double)(r->map_from - tsc) * r->map_scale;

	/* before the common clock's zero: 0, past uint64_t: its largest (order stays) */
	return !(t > 0) ? 0 : t >= 0x1p64 ? UINT64_MAX : (uint64_t)t;
}

struct ktfile_reader *ktfile_open_fd(int fd, const char *name, unsigned int flags)
{
	struct ktfile_reader *r = xcalloc(1, sizeof(*r));
	ssize_t n;

	r->path = name;
	r->fd = fd;
	r->flags = flags & ~KTFILE_FORCE;	/* a bad header is never skipped */
	r->state = 1;
	r->buf = xmalloc(BUF_RECORDS * RECORD_SIZE);
	/* a compressed file is told by its first frame's magic */
	n = read_full(r, &r->hdr, 4);
	if (n == 4 && ktfile_zstd_magic((const unsigned char *)&r->hdr)) {
		r->z = ktfile_zreader_new(&r->hdr, 4);
		n = read_full(r, &r->hdr, sizeof(r->hdr));
		if (n < (ssize_t)sizeof(r->hdr) && zstd_trouble(r)) {
			if (r->z->state == KTFILE_Z_TORN)
				bad(r, r->z->off, "the file ends inside its first compressed frame "
				    "(%llu bytes), the header", (unsigned long long)r->z->left);
			else
				zstd_stopped(r);
			goto fail;
		}
	} else if (n == 4) {
		n = read_full(r, (char *)&r->hdr + 4, sizeof(r->hdr) - 4);
		n = n < 0 ? n : n + 4;
	}
	if (n < 0) {
		pr_err("%s: %s", name, strerror(errno));
		goto fail;
	}
	if (check_header(r, n) < 0 || skip_header(r) < 0)
		goto fail;
	r->flags = flags;
	r->buf_off = r->hdr.header_size;
	ktfile_set_tsc_hz(r, r->hdr.tsc_hz);
	return r;
fail:
	ktfile_reader_close(r);
	return NULL;
}

/*
 * A file or a pipe (`dtrace /dev/stdin`, `<(zcat t.cpu0.gz)`, "-": standard
 * input); a device, even one a planted link in a trace directory names, is
 * not opened.
 */
struct ktfile_reader *ktfile_open(const char *path, unsigned int flags)
{
	struct stat st;
	int fd;

	if (!strcmp(path, "-")) {
		fd = fstat(STDIN_FILENO, &st) ? -errno :
		     S_ISREG(st.st_mode) || S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode) ?
		     fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3) : -EINVAL;
		if (fd == -1)		/* the dup's failure: -1, errno says why */
			fd = -errno;
		if (fd == -EINVAL) {
			pr_err("-: standard input is %s, not a trace file", kt_file_type(st.st_mode));
			return NULL;
		}
	} else {
		fd = kt_open_checked(path, true, &st);
	}

	if (fd == -EINVAL) {
		pr_err("%s: is %s, not a trace file", path, kt_file_type(st.st_mode));
		return NULL;
	}
	if (fd < 0) {
		pr_err("%s: %s", path, strerror(-fd));
		return NULL;
	}
	return ktfile_open_fd(fd, path, flags);
}

void ktfile_reader_close(struct ktfile_reader *r)
{
	if (!r)
		return;
	if (r->fd >= 0)
		close(r->fd);
	ktfile_zreader_free(r->z);
	free(r->buf);
	free(r);
}

/*
 * Load the next records.  A torn record or a read error after the last
 * whole record is kept for when the reader gets there.  Returns the number
 * of records loaded.
 */
static size_t refill(struct ktfile_reader *r)
{
	ssize_t n;

	r->buf_off += r->nr * RECORD_SIZE;
	r->pos = r->nr = 0;
	if (r->tail || r->read_errno)
		return 0;
	n = read_full(r, r->buf, BUF_RECORDS * RECORD_SIZE);
	if (n < 0) {
		r->read_errno = errno;
		return 0;
	}
	r->nr = n / RECORD_SIZE;
	r->tail = n % RECORD_SIZE;
	if (r->swapped)
		for (size_t i = 0; i < r->nr; i++)
			ktfile_swap_record(&r->buf[i]);
	return r->nr;
}

static inline uint64_t offset_of(const struct ktfile_reader *r, size_t pos)
{
	return r->buf_off + pos * RECORD_SIZE;
}

/* The next record, not taken yet; NULL at the end (or before a bad tail). */
static inline const struct ktrace_record *peek(struct ktfile_reader *r)
{
	if (r->pos == r->nr && !refill(r))
		return NULL;
	return &r->buf[r->pos];
}

/* Take the next record, checking its time stamp; NULL at the end or on error. */
static inline const struct ktrace_record *take(struct ktfile_reader *r)
{
	const struct ktrace_record *rec = peek(r);

	if (!rec) {
		if (zstd_trouble(r))
			zstd_stopped(r);
		else if (r->read_errno)
			bad(r, offset_of(r, 0), "read error: %s", strerror(r->read_errno));
		else if (r->tail)
			torn_tail(r, offset_of(r, 0), r->tail, "a record");
		else
			r->state = 0;
		return NULL;
	}
	if (rec->tsc < r->last_tsc) {
		bad(r, offset_of(r, r->pos),
		    "time stamp %llu goes back (previous record %llu)",
		    (unsigned long long)rec->tsc, (unsigned long long)r->last_tsc);
		return NULL;
	}
	r->last_tsc = rec->tsc;
	r->pos++;
	return rec;
}

/* @ev from its first record @rec: time (mapped to ns if asked), code, args;
 * forced inline: gcc otherwise lays out ktfile_next()'s fast path worse */
static __attribute__((always_inline)) inline void
take_event(const struct ktfile_reader *r, struct ktfile_event *ev, const struct ktrace_record *rec)
{
	ev->tsc = r->mapped ? ktfile_map_tsc(r, rec->tsc) : rec->tsc;
	ev->code = rec->event;
	ev->tid = rec->tid;
	ev->args[0] = rec->arg1;
	ev->args[1] = rec->arg2;
	ev->nr_args = 2;
}

int ktfile_next(struct ktfile_reader *r)
{
	struct ktfile_event *ev = &r->ev;
	const struct ktrace_record *rec;
	unsigned int idx;

	if (r->state <= 0)
		return r->state;
	/*
	 * Most events are one record with the next one in the buffer and no
	 * continuation of it: taken without take()'s and the loop's peeks.
	 * Anything else (a continuation either side, a time stamp going
	 * back, the buffer's last record) goes the checking way below.
	 */
	if (r->pos + 1 < r->nr) {
		rec = &r->buf[r->pos];
		if (!((rec->event | rec[1].event) & KTRACE_EVT_CONT) && rec->tsc >= r->last_tsc) {
			ev->offset = offset_of(r, r->pos);
			r->last_tsc = rec->tsc;
			r->pos++;
			take_event(r, ev, rec);
			return 1;
		}
	}
	rec = take(r);
	if (!rec)
		return r->state;
	ev->offset = offset_of(r, r->pos - 1);
	if (rec->event & KTRACE_EVT_CONT)
		return bad(r, ev->offset, "continuation record not following an event");
	take_event(r, ev, rec);
	if (!(rec->event & KTRACE_GROUP_MASK))
		return 1;		/* meta records have no continuation */

	for (idx = 0; (rec = peek(r)) && (rec->event & KTRACE_EVT_CONT); idx++) {
		uint64_t off = offset_of(r, r->pos);

		if (KTRACE_SUB(rec->event) != idx)
			return bad(r, off, "continuation record %u out of sequence (expected %u)",
				   KTRACE_SUB(rec->event), idx);
		rec = take(r);
		if (!rec)
			return r->state;
		/* idx < 256 from the 8-bit field, so args has room */
		ev->args[ev->nr_args++] = rec->arg1;
		ev->args[ev->nr_args++] = rec->arg2;
		if (rec->event & KTRACE_EVT_END)
			return 1;
	}
	if (idx && !rec && (r->read_errno || zstd_trouble(r))) {
		take(r);		/* the read error is the news */
		return r->state;
	}
	if (idx && !rec)
		return torn_tail(r, ev->offset, offset_of(r, 0) + r->tail - ev->offset,
				 "the event's continuation records");
	if (idx)
		return bad(r, offset_of(r, r->pos),
			   "continuation chain of the event at offset %llu has no END record",
			   (unsigned long long)ev->offset);
	return 1;
}
