/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * ktfile_zstd.h: the decoder of compressed trace files, private to the
 * reader (ktfile_read.c).  It turns the file's zstd frames back into the
 * byte stream of an uncompressed file, a whole frame at a time: memory is
 * one frame (about 256 KiB as ktrace writes them) whatever the file's size.
 */
#ifndef KTFILE_ZSTD_H
#define KTFILE_ZSTD_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

enum ktfile_zstate {
	KTFILE_Z_READING,	/* more frames may follow */
	KTFILE_Z_END,		/* the file ended after a whole frame */
	KTFILE_Z_TORN,		/* the file ends inside a frame: @off, @left, @content */
	KTFILE_Z_BAD,		/* a damaged frame or a read error at @off: @why */
};

/**
 * struct ktfile_zreader - the decoder of one compressed file
 * @state:   where it is; past READING, the frames decoded before are good
 * @off:     file offset of the frame the state names (the next frame's start)
 * @left:    KTFILE_Z_TORN: bytes of the file from @off on, left out
 * @content: KTFILE_Z_TORN: the torn frame's content size, 0 if unknown
 * @why:     KTFILE_Z_BAD: what is wrong
 */
struct ktfile_zreader {
	enum ktfile_zstate state;
	uint64_t off;
	uint64_t left;
	uint64_t content;
	char why[160];

	void *dctx;
	bool eof;			/* read() returned 0 */
	unsigned char *in, *out;	/* compressed bytes read, one frame decoded */
	size_t in_cap, in_pos, in_len;
	size_t out_cap, out_pos, out_len;
};

/* True when @magic (a file's first 4 bytes) starts a zstd or skippable frame. */
bool ktfile_zstd_magic(const unsigned char magic[4]);

/* A decoder for a file whose first @nr bytes, already read, are @first. */
struct ktfile_zreader *ktfile_zreader_new(const void *first, size_t nr);

/*
 * Up to @len bytes of the decompressed stream from @fd; fewer only where
 * the decoder stops (z->state says why).  Never fails otherwise.
 */
size_t ktfile_zread(struct ktfile_zreader *z, int fd, void *buf, size_t len);

void ktfile_zreader_free(struct ktfile_zreader *z);

#endif /* KTFILE_ZSTD_H */
