// SPDX-License-Identifier: GPL-2.0
/*
 * ktfile_zstd: compressed trace files (ktrace -z, ktrace-run -z), written
 * and read.
 *
 * One file format: a compressed file is the byte stream of an uncompressed
 * one cut into independent zstd frames.  The header is the first frame, on
 * its own, so that a file is readable from its creation on; then each frame
 * holds about KTFILE_ZSTD_FRAME records (256 KiB), ending on an event
 * boundary, with its content size and a checksum.  So:
 *  - a writer killed mid-frame, or a full disk, loses that frame only, and
 *    whole events: the reader says what it left out, as for a torn record;
 *  - a reader decodes a frame at a time into one frame's buffer: memory
 *    stays flat for any file size, a pipe reads as well as a file;
 *  - a reader can skip frames without decoding them (the frame's size from
 *    its block headers, its records from the content size): a seek;
 *  - `zstd -d` gives back the uncompressed file, byte for byte.
 * Level 1 by default: about 6x on records at several hundred MB/s a core,
 * in the recorder's drain threads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>
#include <zstd_errors.h>

#include "files.h"
#include "ktfile.h"
#include "ktfile_zstd.h"
#include "util.h"

#define RECORD_SIZE	sizeof(struct ktrace_record)
#define PENDING_MAX	(KTFILE_ZSTD_FRAME + KTFILE_ZSTD_HOLD)

/* ---- writer ---------------------------------------------------------------- */

/*
 * The frame being filled.  KTFILE_ZSTD_HOLD records stay behind after each
 * frame goes out, so that the writer's last events can still be cut (a
 * lost marker takes their place: ktfile_cut()).
 */
struct zwriter {
	ZSTD_CCtx *cctx;
	struct ktrace_record *pending;	/* PENDING_MAX */
	size_t nr;			/* records in @pending */
	uint64_t framed;		/* records in the file's frames */
	void *out;			/* one compressed frame */
	size_t out_cap;
};

bool ktfile_zstd_parse_level(const char *arg, int *level, int *min, int *max)
{
	char *end;
	long n;

	*min = ZSTD_minCLevel();
	*max = ZSTD_maxCLevel();
	errno = 0;
	n = strtol(arg, &end, 10);
	if (!*arg || *end || errno || n < *min || n > *max)
		return false;
	*level = n;
	return true;
}

/*
 * Compress @len bytes into one frame and write it.  A frame that does not
 * get out whole is cut off: the file ends after its last whole frame.
 */
static int write_frame(struct ktfile_writer *w, const void *src, size_t len)
{
	struct zwriter *z = w->codec_state;
	size_t n = ZSTD_compress2(z->cctx, z->out, z->out_cap, src, len), done;
	int ret;

	if (ZSTD_isError(n))
		return -ENOMEM;		/* the only way level-checked compression fails */
	ret = ktfile_write_all(w->fd, z->out, n, &done);
	if (ret < 0) {
		if (done && ftruncate(w->fd, w->file_bytes) == 0)
			lseek(w->fd, w->file_bytes, SEEK_SET);
		return ret;
	}
	w->file_bytes += n;
	return 0;
}

/*
 * The first @nr pending records, fewer to end on an event boundary (a
 * continuation record stays with its event), go out as one frame.  On error
 * every pending record is dropped: @w->records falls back to the frames'.
 */
static int flush_frame(struct ktfile_writer *w, size_t nr)
{
	struct zwriter *z = w->codec_state;
	int ret;

	while (nr > 1 && nr < z->nr && (z->pending[nr].event & KTRACE_EVT_CONT))
		nr--;
	ret = write_frame(w, z->pending, nr * RECORD_SIZE);
	if (ret < 0) {
		w->records = z->framed;
		z->nr = 0;
		return ret;
	}
	z->framed += nr;
	z->nr -= nr;
	memmove(z->pending, z->pending + nr, z->nr * RECORD_SIZE);
	return 0;
}

static int zappend(struct ktfile_writer *w, const struct ktrace_record *recs, size_t nr)
{
	struct zwriter *z = w->codec_state;

	while (nr) {
		size_t take = PENDING_MAX - z->nr < nr ? PENDING_MAX - z->nr : nr;
		int ret;

		memcpy(z->pending + z->nr, recs, take * RECORD_SIZE);
		z->nr += take;
		w->records += take;
		recs += take;
		nr -= take;
		if (z->nr == PENDING_MAX && (ret = flush_frame(w, KTFILE_ZSTD_FRAME)) < 0)
			return ret;
	}
	return 0;
}

static int zcut(struct ktfile_writer *w, uint64_t records)
{
	struct zwriter *z = w->codec_state;

	if (records < z->framed)
		return -ESPIPE;		/* in a frame already written */
	z->nr = records - z->framed;
	w->records = records;
	return 0;
}

static void zwriter_free(struct ktfile_writer *w)
{
	struct zwriter *z = w->codec_state;

	ZSTD_freeCCtx(z->cctx);
	free(z->pending);
	free(z->out);
	free(z);
	w->codec_state = NULL;
}

static int zclose(struct ktfile_writer *w)
{
	struct zwriter *z = w->codec_state;
	int ret = 0;

	while (z->nr && ret == 0)
		ret = flush_frame(w, z->nr);
	zwriter_free(w);
	return ret;
}

static const struct ktfile_codec zstd_codec = {
	.append = zappend,
	.cut = zcut,
	.close = zclose,
};

int ktfile_create_zstd(struct ktfile_writer *w, const char *path,
		       const struct ktfile_header *h, int level)
{
	struct zwriter *z;
	int ret;

	*w = (struct ktfile_writer){ .fd = -1 };
	z = xcalloc(1, sizeof(*z));
	z->cctx = ZSTD_createCCtx();
	z->pending = xmalloc(PENDING_MAX * RECORD_SIZE);
	z->out_cap = ZSTD_compressBound(PENDING_MAX * RECORD_SIZE);
	z->out = xmalloc(z->out_cap);
	if (!z->cctx ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_compressionLevel, level)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_checksumFlag, 1)) ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(z->cctx, ZSTD_c_contentSizeFlag, 1))) {
		ret = -EINVAL;
		goto fail;
	}
	w->codec = &zstd_codec;
	w->codec_state = z;
	/* 0600, never through a link or into a device: see files.h */
	w->fd = kt_create_file(path);
	if (w->fd < 0) {
		ret = w->fd;
		goto fail;
	}
	ret = write_frame(w, h, sizeof(*h));
	if (ret < 0) {
		struct stat st;

		/* a file without a whole header is no trace file: remove it */
		if (fstat(w->fd, &st) == 0 && S_ISREG(st.st_mode))
			unlink(path);
		close(w->fd);
		goto fail;
	}
	return 0;
fail:
	w->codec_state = z;
	zwriter_free(w);
	*w = (struct ktfile_writer){ .fd = -1 };
	return ret;
}

int ktfile_create_as(struct ktfile_writer *w, const char *path,
		     const struct ktfile_header *h, bool zstd, int level)
{
	return zstd ? ktfile_create_zstd(w, path, h, level) : ktfile_create(w, path, h);
}

/* ---- reader ---------------------------------------------------------------- */

#define IN_MIN		(64 * 1024)

bool ktfile_zstd_magic(const unsigned char m[4])
{
	uint32_t magic = m[0] | m[1] << 8 | m[2] << 16 | (uint32_t)m[3] << 24;

	return magic == ZSTD_MAGICNUMBER ||
	       (magic & ~0xfu) == ZSTD_MAGIC_SKIPPABLE_START;
}

struct ktfile_zreader *ktfile_zreader_new(const void *first, size_t nr)
{
	struct ktfile_zreader *z = xcalloc(1, sizeof(*z));

	z->dctx = ZSTD_createDCtx();
	if (!z->dctx)
		die("out of memory for a zstd decoder");
	z->in_cap = IN_MIN;
	z->in = xmalloc(z->in_cap);
	memcpy(z->in, first, nr);
	z->in_len = nr;
	return z;
}

void ktfile_zreader_free(struct ktfile_zreader *z)
{
	if (!z)
		return;
	ZSTD_freeDCtx(z->dctx);
	free(z->in);
	free(z->out);
	free(z);
}

__attribute__((format(printf, 2, 3)))
static void zbad(struct ktfile_zreader *z, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(z->why, sizeof(z->why), fmt, ap);
	va_end(ap);
	z->state = KTFILE_Z_BAD;
}

/* More compressed bytes after those in z->in; false at the end or on error. */
static bool read_more(struct ktfile_zreader *z, int fd)
{
	ssize_t n;

	if (z->in_pos) {
		memmove(z->in, z->in + z->in_pos, z->in_len - z->in_pos);
		z->in_len -= z->in_pos;
		z->in_pos = 0;
	}
	if (z->in_len == z->in_cap) {
		/* a frame this reader takes fits in compressBound() of its content */
		if (z->in_cap >= ZSTD_compressBound(KTFILE_ZSTD_MAX_FRAME)) {
			zbad(z, "compressed frame larger than %zu bytes", z->in_cap);
			return false;
		}
		z->in_cap *= 2;
		z->in = xrealloc(z->in, z->in_cap);
	}
	do
		n = read(fd, z->in + z->in_len, z->in_cap - z->in_len);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		zbad(z, "read error: %s", strerror(errno));
		return false;
	}
	if (n == 0)
		z->eof = true;
	z->in_len += n;
	return n > 0;
}

/* The frame at z->in_pos, whole, is @size bytes: decode it into z->out. */
static bool decode_frame(struct ktfile_zreader *z, size_t size)
{
	const unsigned char *src = z->in + z->in_pos;
	unsigned long long content = ZSTD_getFrameContentSize(src, size);
	size_t n;

	if (content == ZSTD_CONTENTSIZE_UNKNOWN) {
		zbad(z, "zstd frame without its content size (not written by ktrace -z; "
		     "zstd -d turns it into an uncompressed trace file)");
		return false;
	}
	if (content == ZSTD_CONTENTSIZE_ERROR) {
		zbad(z, "damaged zstd frame header");
		return false;
	}
	if (content > KTFILE_ZSTD_MAX_FRAME) {
		zbad(z, "zstd frame of %llu bytes, more than the %u this reader takes a frame "
		     "(ktrace -z writes 256 KiB frames; zstd -d turns it into an "
		     "uncompressed trace file)", content, KTFILE_ZSTD_MAX_FRAME);
		return false;
	}
	if (content > z->out_cap) {
		free(z->out);
		z->out_cap = content;
		z->out = xmalloc(z->out_cap);
	}
	n = ZSTD_decompressDCtx(z->dctx, z->out, content, src, size);
	if (ZSTD_isError(n) || n != content) {
		zbad(z, "damaged zstd frame: %s", ZSTD_isError(n) ? ZSTD_getErrorName(n) :
		     "shorter than its content size");
		return false;
	}
	z->out_pos = 0;
	z->out_len = n;
	z->in_pos += size;
	z->off += size;
	return true;
}

/* The next whole frame into z->out; false when the decoder stops. */
static bool next_frame(struct ktfile_zreader *z, int fd)
{
	for (;;) {
		size_t avail = z->in_len - z->in_pos, size;

		if (avail) {
			size = ZSTD_findFrameCompressedSize(z->in + z->in_pos, avail);
			if (!ZSTD_isError(size))
				return decode_frame(z, size);
			if (ZSTD_getErrorCode(size) != ZSTD_error_srcSize_wrong) {
				zbad(z, "not a zstd frame (%s)", ZSTD_getErrorName(size));
				return false;
			}
		}
		if (z->eof || !read_more(z, fd)) {
			if (z->state != KTFILE_Z_READING)
				return false;
			avail = z->in_len - z->in_pos;
			if (!avail) {
				z->state = KTFILE_Z_END;
				return false;
			}
			z->state = KTFILE_Z_TORN;
			z->left = avail;
			z->content = ZSTD_getFrameContentSize(z->in + z->in_pos, avail);
			if (z->content >= ZSTD_CONTENTSIZE_ERROR)
				z->content = 0;
			return false;
		}
	}
}

size_t ktfile_zread(struct ktfile_zreader *z, int fd, void *buf, size_t len)
{
	size_t have = 0;

	while (have < len) {
		size_t n;

		if (z->out_pos == z->out_len) {
			/* a frame may be empty (a skippable one): then the next */
			if (z->state != KTFILE_Z_READING || !next_frame(z, fd))
				break;
			continue;
		}
		n = z->out_len - z->out_pos;
		if (n > len - have)
			n = len - have;
		memcpy((char *)buf + have, z->out + z->out_pos, n);
		z->out_pos += n;
		have += n;
	}
	return have;
}
