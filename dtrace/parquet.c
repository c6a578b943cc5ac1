// SPDX-License-Identifier: GPL-2.0
/*
 * parquet: --format=parquet -o FILE writes the events as one Apache Parquet
 * table, for SQL engines (DuckDB here; Spark, Trino, ClickHouse for many
 * machines' files).  One row per event, decoded as the listing decodes it;
 * a user thread's function calls are one row per call that ended, with its
 * function, depth and duration (replayed at the end by calls.c, with the
 * repairs --report makes); lost records are a row with event 'lost' and
 * the count.  The columns are in enum pq_column below.
 *
 * Written here for this fixed schema, without a Parquet library (Debian has
 * none): the metadata in Thrift's compact protocol (enum pq_field has the
 * field ids of parquet.thrift that are used), numbers PLAIN, the short
 * strings (machine, task, group, event, function) dictionary encoded (a PLAIN
 * dictionary page, RLE_DICTIONARY indices in the RLE/bit-packed hybrid),
 * every page ZSTD compressed.  The types are those every engine reads the
 * same: signed INT32 and INT64 (unsigned 32-bit numbers in INT64), strings
 * as BYTE_ARRAY with the STRING logical and UTF8 converted type, the time a
 * plain INT64 of ns (a TIMESTAMP_NANOS is read differently by Spark).
 *
 * Rows are kept in memory a row group at a time (PQ_GROUP_ROWS rows, or
 * PQ_GROUP_BYTES of text), then written out, so memory stays flat however
 * long the trace; only the row groups' metadata waits for the footer.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "calls.h"
#include "dtrace.h"
#include "fields.h"
#include "util.h"

#define PQ_GROUP_ROWS	(1u << 17)
#define PQ_GROUP_BYTES	(32u << 20)	/* of the strings: text, dictionaries */
#define PQ_ZSTD_LEVEL	1	/* on traces as small as level 3, a third faster */

/* parquet.thrift's field ids, struct by struct, and the enums' values used. */
enum pq_field {
	FMD_VERSION = 1, FMD_SCHEMA = 2, FMD_NUM_ROWS = 3,	/* FileMetaData */
	FMD_ROW_GROUPS = 4, FMD_CREATED_BY = 6,
	SE_TYPE = 1, SE_REPETITION = 3, SE_NAME = 4,		/* SchemaElement */
	SE_NUM_CHILDREN = 5, SE_CONVERTED_TYPE = 6, SE_LOGICAL_TYPE = 10,
	LT_STRING = 1,						/* LogicalType */
	RG_COLUMNS = 1, RG_TOTAL_BYTE_SIZE = 2, RG_NUM_ROWS = 3,	/* RowGroup */
	RG_FILE_OFFSET = 5, RG_TOTAL_COMPRESSED_SIZE = 6,
	CC_FILE_OFFSET = 2, CC_META_DATA = 3,			/* ColumnChunk */
	CMD_TYPE = 1, CMD_ENCODINGS = 2, CMD_PATH = 3,		/* ColumnMetaData */
	CMD_CODEC = 4, CMD_NUM_VALUES = 5, CMD_UNCOMPRESSED = 6,
	CMD_COMPRESSED = 7, CMD_DATA_PAGE_OFFSET = 9, CMD_DICT_PAGE_OFFSET = 11,
	CMD_STATISTICS = 12,
	ST_NULL_COUNT = 3, ST_MAX_VALUE = 5, ST_MIN_VALUE = 6,	/* Statistics */
	PH_TYPE = 1, PH_UNCOMPRESSED = 2, PH_COMPRESSED = 3,	/* PageHeader */
	PH_DATA_PAGE = 5, PH_DICT_PAGE = 7,
	DPH_NUM_VALUES = 1, DPH_ENCODING = 2,			/* DataPageHeader */
	DPH_DEF_ENCODING = 3, DPH_REP_ENCODING = 4,
	DICT_NUM_VALUES = 1, DICT_ENCODING = 2,			/* DictionaryPageHeader */
};

enum { PQ_INT32 = 1, PQ_INT64 = 2, PQ_BYTE_ARRAY = 6 };		/* Type */
enum { PQ_REQUIRED = 0, PQ_OPTIONAL = 1 };			/* FieldRepetitionType */
enum { PQ_UTF8 = 0 };						/* ConvertedType */
enum { PQ_PLAIN = 0, PQ_RLE = 3, PQ_RLE_DICTIONARY = 8 };	/* Encoding */
enum { PQ_ZSTD = 6 };						/* CompressionCodec */
enum { PQ_DATA_PAGE = 0, PQ_DICTIONARY_PAGE = 2 };		/* PageType */

/* Thrift compact protocol's field types */
enum { TC_I32 = 5, TC_I64 = 6, TC_BINARY = 8, TC_LIST = 9, TC_STRUCT = 12 };

/* The table's columns; documented in Documentation/trace/ktrace-export.rst. */
enum pq_column {
	COL_MACHINE, COL_TIME, COL_CPU, COL_TID, COL_PID, COL_TASK, COL_GROUP, COL_EVENT,
	COL_ARG1, COL_ARG2, COL_TEXT, COL_FUNCTION, COL_DEPTH, COL_DURATION, NR_COLS
};

enum pq_kind { KIND_INT32, KIND_INT64, KIND_DICT, KIND_STRING };

static const struct pq_column_desc {
	const char *name;
	enum pq_kind kind;
	bool optional;
} columns[NR_COLS] = {
	[COL_MACHINE] = { "machine", KIND_DICT, true },
	[COL_TIME] = { "time_ns", KIND_INT64, false },
	[COL_CPU] = { "cpu", KIND_INT32, true },
	[COL_TID] = { "tid", KIND_INT64, true },
	[COL_PID] = { "pid", KIND_INT64, true },
	[COL_TASK] = { "task", KIND_DICT, true },
	[COL_GROUP] = { "group", KIND_DICT, false },
	[COL_EVENT] = { "event", KIND_DICT, false },
	[COL_ARG1] = { "arg1", KIND_INT64, true },
	[COL_ARG2] = { "arg2", KIND_INT64, true },
	[COL_TEXT] = { "text", KIND_STRING, true },
	[COL_FUNCTION] = { "function", KIND_DICT, true },
	[COL_DEPTH] = { "depth", KIND_INT32, true },
	[COL_DURATION] = { "duration_ns", KIND_INT64, true },
};

struct bytes {
	uint8_t *p;
	size_t len, cap;
};

static uint8_t *bytes_grow(struct bytes *b, size_t n)
{
	if (b->len + n > b->cap) {
		b->cap = b->cap * 2 > b->len + n ? b->cap * 2 : b->len + n + 4096;
		b->p = xrealloc(b->p, b->cap);
	}
	b->len += n;
	return b->p + b->len - n;
}

static void bytes_put(struct bytes *b, const void *s, size_t n)
{
	memcpy(bytes_grow(b, n), s, n);
}

static void put_uvarint(struct bytes *b, uint64_t v)
{
	for (; v >= 0x80; v >>= 7)
		*bytes_grow(b, 1) = v | 0x80;
	*bytes_grow(b, 1) = v;
}

/* ---- Thrift compact protocol -------------------------------------------------- */

/* A struct being written: field ids are deltas from the last one, per struct. */
struct thrift {
	struct bytes b;
	int16_t last[16];
	unsigned int depth;
};

static void tc_field(struct thrift *t, int16_t id, unsigned int type)
{
	int16_t delta = id - t->last[t->depth];

	if (delta > 0 && delta <= 15) {
		*bytes_grow(&t->b, 1) = delta << 4 | type;
	} else {
		*bytes_grow(&t->b, 1) = type;
		put_uvarint(&t->b, (uint16_t)((id << 1) ^ (id >> 15)));
	}
	t->last[t->depth] = id;
}

static void tc_i64(struct thrift *t, int16_t id, int64_t v)
{
	tc_field(t, id, TC_I64);
	put_uvarint(&t->b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static void tc_i32(struct thrift *t, int16_t id, int32_t v)
{
	tc_field(t, id, TC_I32);
	put_uvarint(&t->b, ((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
}

static void tc_bin(struct thrift *t, int16_t id, const void *s, size_t len)
{
	tc_field(t, id, TC_BINARY);
	put_uvarint(&t->b, len);
	bytes_put(&t->b, s, len);
}

static void tc_list(struct thrift *t, int16_t id, unsigned int type, size_t n)
{
	tc_field(t, id, TC_LIST);
	if (n < 15) {
		*bytes_grow(&t->b, 1) = n << 4 | type;
	} else {
		*bytes_grow(&t->b, 1) = 0xf0 | type;
		put_uvarint(&t->b, n);
	}
}

/* A list's elements: a string, an i32 (no field header) */
static void tc_elem_bin(struct thrift *t, const char *s)
{
	put_uvarint(&t->b, strlen(s));
	bytes_put(&t->b, s, strlen(s));
}

static void tc_elem_i32(struct thrift *t, int32_t v)
{
	put_uvarint(&t->b, ((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
}

/* A struct: as a field (@id > 0) or as a list's element (@id 0). */
static void tc_begin(struct thrift *t, int16_t id)
{
	if (id)
		tc_field(t, id, TC_STRUCT);
	t->last[++t->depth] = 0;
}

static void tc_end(struct thrift *t)
{
	*bytes_grow(&t->b, 1) = 0;	/* stop */
	t->depth--;
}

/* ---- columns ------------------------------------------------------------------ */

/* A dictionary: its PLAIN page and a hash of its strings to their index. */
struct pq_dict {
	struct bytes page;
	struct pq_dict_slot { uint32_t off, len, index; } *slots;	/* len+1, 0: free */
	uint32_t cap, nr;
};

/* One column's values of the row group being filled. */
struct pq_col {
	struct bytes defs;	/* optional: one byte per row, 1 where it has a value */
	struct bytes values;	/* PLAIN values, or the dictionary's uint32 indices */
	struct pq_dict dict;
	uint32_t nulls;
	int64_t min, max;	/* of a number column's values */
};

/* What the footer says of a column chunk written. */
struct pq_chunk {
	uint64_t dict_offset, data_offset;	/* dict_offset 0: no dictionary */
	uint64_t compressed, uncompressed;	/* pages with their headers */
	uint32_t nulls;
	int64_t min, max;
};

struct pq_group {
	uint64_t rows;
	struct pq_chunk chunks[NR_COLS];
};

struct pq {
	struct pq_col cols[NR_COLS];
	uint32_t rows;			/* in the group being filled */
	uint64_t pos;			/* bytes written to the file */
	struct pq_group *groups;
	unsigned int nr_groups;
	uint64_t total_rows;
	ZSTD_CCtx *zstd;
	struct bytes page, packed;	/* a page's levels and indices; compressed */
	struct bytes levels;		/* the definition levels as put_hybrid() takes them */
	struct fields *fields;
	char line[DTRACE_LINE_MAX];
};

static void col_null(struct pq_col *c)
{
	*bytes_grow(&c->defs, 1) = 0;
	c->nulls++;
}

static void col_int(struct pq *pq, enum pq_column i, int64_t v)
{
	struct pq_col *c = &pq->cols[i];
	size_t n = columns[i].kind == KIND_INT32 ? 4 : 8;
	int32_t v32 = v;

	if (columns[i].optional)
		*bytes_grow(&c->defs, 1) = 1;
	if (c->values.len == 0 || v < c->min)
		c->min = v;
	if (c->values.len == 0 || v > c->max)
		c->max = v;
	/* little-endian, as the machines dtrace runs on */
	memcpy(bytes_grow(&c->values, n), n == 4 ? (void *)&v32 : (void *)&v, n);
}

static uint32_t hash_str(const char *s, size_t len)
{
	uint32_t h = 2166136261u;

	while (len--)
		h = (h ^ (uint8_t)*s++) * 16777619u;
	return h;
}

static uint32_t dict_index(struct pq_dict *d, const char *s, size_t len)
{
	uint32_t mask, i;

	if (d->nr * 2 >= d->cap) {
		struct pq_dict_slot *old = d->slots;
		uint32_t old_cap = d->cap;

		d->cap = d->cap ? d->cap * 2 : 64;
		d->slots = xcalloc(d->cap, sizeof(*d->slots));
		for (uint32_t j = 0; j < old_cap; j++) {
			const struct pq_dict_slot *o = &old[j];

			if (!o->len)
				continue;
			i = hash_str((char *)d->page.p + o->off + 4, o->len - 1) & (d->cap - 1);
			while (d->slots[i].len)
				i = (i + 1) & (d->cap - 1);
			d->slots[i] = *o;
		}
		free(old);
	}
	mask = d->cap - 1;
	for (i = hash_str(s, len) & mask; d->slots[i].len; i = (i + 1) & mask)
		if (d->slots[i].len == len + 1 &&
		    !memcmp(d->page.p + d->slots[i].off + 4, s, len))
			return d->slots[i].index;
	d->slots[i] = (struct pq_dict_slot){ d->page.len, len + 1, d->nr };
	bytes_put(&d->page, &(uint32_t){ len }, 4);
	bytes_put(&d->page, s, len);
	return d->nr++;
}

static void col_str(struct pq *pq, enum pq_column i, const char *s, size_t len)
{
	struct pq_col *c = &pq->cols[i];

	if (columns[i].optional)
		*bytes_grow(&c->defs, 1) = 1;
	if (columns[i].kind == KIND_DICT) {
		uint32_t index = dict_index(&c->dict, s, len);

		bytes_put(&c->values, &index, 4);
		return;
	}
	bytes_put(&c->values, &(uint32_t){ len }, 4);
	bytes_put(&c->values, s, len);
}

static void col_cstr(struct pq *pq, enum pq_column i, const char *s)
{
	col_str(pq, i, s, strlen(s));
}

/* ---- pages -------------------------------------------------------------------- */

/* Bits of the indices into a dictionary of @nr: at least one, as all readers take. */
static unsigned int bit_width(uint32_t nr)
{
	return nr > 2 ? 32 - __builtin_clz(nr - 1) : 1;
}

/* How many of @v[i...] equal v[i], counting up to @limit. */
static size_t run_length(const uint32_t *v, size_t i, size_t n, size_t limit)
{
	size_t j = i + 1;

	while (j < n && j - i < limit && v[j] == v[i])
		j++;
	return j - i;
}

/*
 * @n values of @bw bits in the RLE/bit-packed hybrid: runs of 8 or more
 * of one value as RLE runs, the rest bit-packed in groups of 8 (the last
 * group padded with zeros; the page's value count says where they end).
 */
static void put_hybrid(struct bytes *b, const uint32_t *v, size_t n, unsigned int bw)
{
	unsigned int vbytes = (bw + 7) / 8;
	size_t i = 0;

	while (i < n) {
		size_t run = run_length(v, i, n, SIZE_MAX), start = i, groups;
		uint64_t acc = 0;
		unsigned int bits = 0;

		if (run >= 8) {
			put_uvarint(b, run << 1);
			for (unsigned int k = 0; k < vbytes; k++)
				*bytes_grow(b, 1) = v[i] >> (8 * k);
			i += run;
			continue;
		}
		do
			i += 8;
		while (i < n && run_length(v, i, n, 8) < 8);
		groups = ((i < n ? i : n) - start + 7) / 8;
		put_uvarint(b, groups << 1 | 1);
		for (size_t j = start; j < start + groups * 8; j++) {
			acc |= (uint64_t)(j < n ? v[j] : 0) << bits;
			for (bits += bw; bits >= 8; bits -= 8, acc >>= 8)
				*bytes_grow(b, 1) = acc;
		}
		if (i > n)
			i = n;
	}
}

/* @defs (one byte a row) in the hybrid, through @scratch (uint32s) */
static void put_levels(struct bytes *b, const struct bytes *defs, struct bytes *scratch)
{
	uint32_t *v;
	size_t at;

	scratch->len = 0;
	v = (uint32_t *)bytes_grow(scratch, defs->len * sizeof(*v));
	for (size_t i = 0; i < defs->len; i++)
		v[i] = defs->p[i];
	at = b->len;
	bytes_grow(b, 4);
	put_hybrid(b, v, defs->len, 1);
	/* data page v1: the levels' byte length first */
	memcpy(b->p + at, &(uint32_t){ b->len - at - 4 }, 4);
}

/*
 * Compress a page, @head then @body (either may be empty: levels and
 * indices made in pq->page, values as the column keeps them), write its
 * header and it; count them into @ch.
 */
static void write_page(struct pq *pq, struct outbuf *o, struct pq_chunk *ch, unsigned int type,
		       uint32_t nr_values, unsigned int encoding,
		       const struct bytes *head, const struct bytes *body)
{
	struct thrift t = { 0 };
	size_t len = head->len + body->len, bound = ZSTD_compressBound(len), ret;
	ZSTD_outBuffer out;
	ZSTD_inBuffer in = { head->p, head->len, 0 };

	/* one string can be longer than the group's limit: a symbol's name */
	if (len > INT32_MAX || bound > INT32_MAX)
		die("%s: a Parquet page of %zu bytes, more than the format's 32-bit sizes hold",
		    o->name, len);
	pq->packed.len = 0;
	out = (ZSTD_outBuffer){ bytes_grow(&pq->packed, bound), bound, 0 };
	ZSTD_CCtx_setPledgedSrcSize(pq->zstd, len);
	ret = ZSTD_compressStream2(pq->zstd, &out, &in, ZSTD_e_continue);
	if (!ZSTD_isError(ret)) {
		in = (ZSTD_inBuffer){ body->p, body->len, 0 };
		ret = ZSTD_compressStream2(pq->zstd, &out, &in, ZSTD_e_end);
	}
	/* room for the worst case: the frame ends in this call */
	if (ZSTD_isError(ret) || ret)
		die("%s: zstd: %s", o->name, ZSTD_isError(ret) ? ZSTD_getErrorName(ret) :
		    "frame not ended");
	tc_i32(&t, PH_TYPE, type);
	tc_i32(&t, PH_UNCOMPRESSED, len);
	tc_i32(&t, PH_COMPRESSED, out.pos);
	tc_begin(&t, type == PQ_DATA_PAGE ? PH_DATA_PAGE : PH_DICT_PAGE);
	tc_i32(&t, DPH_NUM_VALUES, nr_values);	/* DICT_NUM_VALUES too */
	tc_i32(&t, DPH_ENCODING, encoding);	/* DICT_ENCODING too */
	if (type == PQ_DATA_PAGE) {
		tc_i32(&t, DPH_DEF_ENCODING, PQ_RLE);
		tc_i32(&t, DPH_REP_ENCODING, PQ_RLE);
	}
	tc_end(&t);
	tc_end(&t);
	out_write(o, t.b.p, t.b.len);
	out_write(o, out.dst, out.pos);
	pq->pos += t.b.len + out.pos;
	ch->compressed += t.b.len + out.pos;
	ch->uncompressed += t.b.len + len;
	free(t.b.p);
}

static void write_chunk(struct pq *pq, struct outbuf *o, enum pq_column i, struct pq_chunk *ch)
{
	const struct pq_column_desc *cd = &columns[i];
	struct pq_col *c = &pq->cols[i];
	unsigned int encoding = PQ_PLAIN;

	*ch = (struct pq_chunk){ .nulls = c->nulls, .min = c->min, .max = c->max };
	if (cd->kind == KIND_DICT && c->dict.nr) {
		ch->dict_offset = pq->pos;
		write_page(pq, o, ch, PQ_DICTIONARY_PAGE, c->dict.nr, PQ_PLAIN,
			   &(struct bytes){ 0 }, &c->dict.page);
		encoding = PQ_RLE_DICTIONARY;
	}
	ch->data_offset = pq->pos;
	pq->page.len = 0;
	if (cd->optional)
		put_levels(&pq->page, &c->defs, &pq->levels);
	if (encoding == PQ_RLE_DICTIONARY) {
		unsigned int bw = bit_width(c->dict.nr);

		*bytes_grow(&pq->page, 1) = bw;
		put_hybrid(&pq->page, (const uint32_t *)c->values.p, c->values.len / 4, bw);
		write_page(pq, o, ch, PQ_DATA_PAGE, pq->rows, encoding, &pq->page,
			   &(struct bytes){ 0 });
	} else {
		write_page(pq, o, ch, PQ_DATA_PAGE, pq->rows, encoding, &pq->page, &c->values);
	}

	c->defs.len = c->values.len = 0;
	c->dict.page.len = 0;
	c->dict.nr = 0;
	if (c->dict.slots)
		memset(c->dict.slots, 0, c->dict.cap * sizeof(*c->dict.slots));
	c->nulls = 0;
}

static void write_group(struct pq *pq, struct outbuf *o)
{
	struct pq_group *g;

	if (!pq->rows)
		return;
	pq->groups = xrealloc(pq->groups, (pq->nr_groups + 1) * sizeof(*pq->groups));
	g = &pq->groups[pq->nr_groups++];
	g->rows = pq->rows;
	for (unsigned int i = 0; i < NR_COLS; i++)
		write_chunk(pq, o, i, &g->chunks[i]);
	pq->total_rows += pq->rows;
	pq->rows = 0;
}

/*
 * A row is done: every column has its value or null.  The group is
 * written once it has PQ_GROUP_ROWS rows or PQ_GROUP_BYTES of strings in
 * any column, the text's values or a dictionary's (long function names,
 * all different): a page's sizes are 32-bit in the format.
 */
static void row_end(struct pq *pq, struct outbuf *o)
{
	uint64_t bytes = pq->cols[COL_TEXT].values.len;

	for (unsigned int i = 0; i < NR_COLS; i++)
		bytes += pq->cols[i].dict.page.len;
	if (++pq->rows >= PQ_GROUP_ROWS || bytes >= PQ_GROUP_BYTES)
		write_group(pq, o);
}

/* ---- the footer --------------------------------------------------------------- */

static void put_schema(struct thrift *t)
{
	tc_list(t, FMD_SCHEMA, TC_STRUCT, NR_COLS + 1);
	tc_begin(t, 0);
	tc_bin(t, SE_NAME, "schema", 6);
	tc_i32(t, SE_NUM_CHILDREN, NR_COLS);
	tc_end(t);
	for (unsigned int i = 0; i < NR_COLS; i++) {
		const struct pq_column_desc *cd = &columns[i];
		bool str = cd->kind == KIND_DICT || cd->kind == KIND_STRING;

		tc_begin(t, 0);
		tc_i32(t, SE_TYPE, str ? PQ_BYTE_ARRAY : cd->kind == KIND_INT32 ? PQ_INT32 : PQ_INT64);
		tc_i32(t, SE_REPETITION, cd->optional ? PQ_OPTIONAL : PQ_REQUIRED);
		tc_bin(t, SE_NAME, cd->name, strlen(cd->name));
		if (str) {
			tc_i32(t, SE_CONVERTED_TYPE, PQ_UTF8);
			tc_begin(t, SE_LOGICAL_TYPE);
			tc_begin(t, LT_STRING);
			tc_end(t);
			tc_end(t);
		}
		tc_end(t);
	}
}

static void put_statistics(struct thrift *t, const struct pq_column_desc *cd,
			   const struct pq_chunk *ch, uint64_t rows)
{
	tc_begin(t, CMD_STATISTICS);
	tc_i64(t, ST_NULL_COUNT, ch->nulls);
	if ((cd->kind == KIND_INT32 || cd->kind == KIND_INT64) && ch->nulls < rows) {
		int32_t max32 = ch->max, min32 = ch->min;
		size_t n = cd->kind == KIND_INT32 ? 4 : 8;

		/* PLAIN encoded, signed order */
		tc_bin(t, ST_MAX_VALUE, n == 4 ? (void *)&max32 : (void *)&ch->max, n);
		tc_bin(t, ST_MIN_VALUE, n == 4 ? (void *)&min32 : (void *)&ch->min, n);
	}
	tc_end(t);
}

static void put_column_chunk(struct thrift *t, const struct pq_column_desc *cd,
			     const struct pq_chunk *ch, uint64_t rows)
{
	bool str = cd->kind == KIND_DICT || cd->kind == KIND_STRING;

	tc_begin(t, 0);
	tc_i64(t, CC_FILE_OFFSET, ch->dict_offset ? ch->dict_offset : ch->data_offset);
	tc_begin(t, CC_META_DATA);
	tc_i32(t, CMD_TYPE, str ? PQ_BYTE_ARRAY : cd->kind == KIND_INT32 ? PQ_INT32 : PQ_INT64);
	tc_list(t, CMD_ENCODINGS, TC_I32, ch->dict_offset ? 3 : 2);
	tc_elem_i32(t, PQ_PLAIN);
	tc_elem_i32(t, PQ_RLE);
	if (ch->dict_offset)
		tc_elem_i32(t, PQ_RLE_DICTIONARY);
	tc_list(t, CMD_PATH, TC_BINARY, 1);
	tc_elem_bin(t, cd->name);
	tc_i32(t, CMD_CODEC, PQ_ZSTD);
	tc_i64(t, CMD_NUM_VALUES, rows);
	tc_i64(t, CMD_UNCOMPRESSED, ch->uncompressed);
	tc_i64(t, CMD_COMPRESSED, ch->compressed);
	tc_i64(t, CMD_DATA_PAGE_OFFSET, ch->data_offset);
	if (ch->dict_offset)
		tc_i64(t, CMD_DICT_PAGE_OFFSET, ch->dict_offset);
	put_statistics(t, cd, ch, rows);
	tc_end(t);
	tc_end(t);
}

static void write_footer(struct pq *pq, struct outbuf *o)
{
	struct thrift t = { 0 };
	char created_by[64];

	snprintf(created_by, sizeof(created_by), "ktrace dtrace version %s", KTRACE_VERSION);
	tc_i32(&t, FMD_VERSION, 2);
	put_schema(&t);
	tc_i64(&t, FMD_NUM_ROWS, pq->total_rows);
	tc_list(&t, FMD_ROW_GROUPS, TC_STRUCT, pq->nr_groups);
	for (unsigned int g = 0; g < pq->nr_groups; g++) {
		const struct pq_group *grp = &pq->groups[g];
		uint64_t compressed = 0, uncompressed = 0;

		tc_begin(&t, 0);
		tc_list(&t, RG_COLUMNS, TC_STRUCT, NR_COLS);
		for (unsigned int i = 0; i < NR_COLS; i++) {
			put_column_chunk(&t, &columns[i], &grp->chunks[i], grp->rows);
			compressed += grp->chunks[i].compressed;
			uncompressed += grp->chunks[i].uncompressed;
		}
		tc_i64(&t, RG_TOTAL_BYTE_SIZE, uncompressed);
		tc_i64(&t, RG_NUM_ROWS, grp->rows);
		tc_i64(&t, RG_FILE_OFFSET, grp->chunks[0].dict_offset ?
			   grp->chunks[0].dict_offset : grp->chunks[0].data_offset);
		tc_i64(&t, RG_TOTAL_COMPRESSED_SIZE, compressed);
		tc_end(&t);
	}
	tc_bin(&t, FMD_CREATED_BY, created_by, strlen(created_by));
	*bytes_grow(&t.b, 1) = 0;	/* FileMetaData's stop */
	out_write(o, t.b.p, t.b.len);
	out_write(o, &(uint32_t){ t.b.len }, 4);
	out_write(o, "PAR1", 4);
	free(t.b.p);
}

/* ---- the format --------------------------------------------------------------- */

static void *pq_start(struct dtrace *dt, struct outbuf *o)
{
	struct pq *pq = xcalloc(1, sizeof(*pq));

	pq->zstd = ZSTD_createCCtx();
	if (!pq->zstd ||
	    ZSTD_isError(ZSTD_CCtx_setParameter(pq->zstd, ZSTD_c_compressionLevel, PQ_ZSTD_LEVEL)))
		die("%s: out of memory for zstd", o->name);
	pq->fields = fields_table();
	out_write(o, "PAR1", 4);
	pq->pos = 4;
	return pq;
}

/* The machine of a row from file @file: null unless machine directories were given. */
static void put_machine(const struct dtrace *dt, struct pq *pq, unsigned int file)
{
	const struct dtrace_file *df = &dt->files[file];

	if (df->machine)
		col_str(pq, COL_MACHINE, df->machine, df->machine_len);
	else
		col_null(&pq->cols[COL_MACHINE]);
}

/* The columns every event row has: machine, time, CPU, thread, its task then. */
static void put_who(struct dtrace *dt, struct pq *pq, const struct dtrace_event *e)
{
	const struct ktfile_event *ev = e->ev;
	const struct ktfile_header *h = &kt_merge_file(dt->merge, e->file)->hdr;
	const char *comm = NULL;
	size_t len = 0;
	uint32_t pid = 0;

	put_machine(dt, pq, e->file);
	col_int(pq, COL_TIME, e->ns);
	if (h->cpu >= 0)
		col_int(pq, COL_CPU, h->cpu);
	else
		col_null(&pq->cols[COL_CPU]);
	if (!(ev->code & KTRACE_GROUP_MASK)) {	/* a meta record is no task's */
		col_null(&pq->cols[COL_TID]);
		col_null(&pq->cols[COL_PID]);
		col_null(&pq->cols[COL_TASK]);
		return;
	}
	col_int(pq, COL_TID, ev->tid);
	comm = tasks_named_comm(&e->names, ev->tid, &len, &pid);
	if (h->cpu < 0)
		pid = h->pid;
	if (pid)
		col_int(pq, COL_PID, pid);
	else
		col_null(&pq->cols[COL_PID]);
	if (comm)
		col_str(pq, COL_TASK, comm, len ? len : strlen(comm));
	else if (!ev->tid)
		col_cstr(pq, COL_TASK, "<idle>");
	else
		col_null(&pq->cols[COL_TASK]);
}

/* arg1, arg2: the first two numbers of the event's fields (fields.h) */
static void put_args(struct pq *pq, const struct ktfile_event *ev)
{
	const struct ktev_desc *d = ktev_lookup(ev->code);
	const struct fields *fs = d ? fields_of(pq->fields, d) : NULL;
	unsigned int nr = 0;

	for (unsigned int i = 0; fs && fs->nr_args == ev->nr_args && i < fs->nr && nr < 2; i++) {
		const struct field *f = &fs->f[i];

		if (f->type == FIELD_STRING)
			continue;
		col_int(pq, COL_ARG1 + nr++, field_value(f, ev->args));
	}
	for (; nr < 2; nr++)
		col_null(&pq->cols[COL_ARG1 + nr]);
}

static void put_no_call(struct pq *pq)
{
	col_null(&pq->cols[COL_FUNCTION]);
	col_null(&pq->cols[COL_DEPTH]);
	col_null(&pq->cols[COL_DURATION]);
}

static void pq_event(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e)
{
	struct pq *pq = dt->fmt_state;
	const struct ktfile_event *ev = e->ev;
	const struct ktfile_header *h = &kt_merge_file(dt->merge, e->file)->hdr;
	const char *colon, *space, *end;
	uint64_t lost;

	if (ktev_lost_count(ev->code, ev->args, ev->nr_args, &lost)) {
		if (h->cpu < 0)
			calls_event(dt, o, e);	/* where the calls have a gap */
		put_who(dt, pq, e);
		col_cstr(pq, COL_GROUP, "meta");
		col_cstr(pq, COL_EVENT, "lost");
		if (lost == KTEV_LOST_UNKNOWN)
			col_null(&pq->cols[COL_ARG1]);	/* how many is not known */
		else
			col_int(pq, COL_ARG1, lost);
		col_null(&pq->cols[COL_ARG2]);
		end = dtrace_put_text(dt, pq->line, e);
		col_str(pq, COL_TEXT, pq->line, end - pq->line);
		put_no_call(pq);
		row_end(pq, o);
		return;
	}
	/* a call is a row when it ends: calls.c pairs entries and exits */
	if (h->cpu < 0 && (ev->code & KTRACE_GROUP_MASK) == KTRACE_GRP_func &&
	    sym_call_event(ev, &(struct sym_call_event){ 0 })) {
		calls_event(dt, o, e);
		return;
	}
	put_who(dt, pq, e);
	/* "group:event text", as every view names and says it */
	end = dtrace_put_event(dt, pq->line, e, 0);
	colon = memchr(pq->line, ':', end - pq->line);
	space = memchr(pq->line, ' ', end - pq->line);
	if (!space)
		space = end;
	if (!colon || colon > space)
		colon = pq->line;
	col_str(pq, COL_GROUP, pq->line, colon - pq->line);
	col_str(pq, COL_EVENT, colon + (colon != pq->line), space - colon - (colon != pq->line));
	put_args(pq, ev);
	col_str(pq, COL_TEXT, space + (space < end), end - space - (space < end));
	put_no_call(pq);
	row_end(pq, o);
}

struct pq_walk {
	const struct dtrace *dt;
	struct pq *pq;
	struct outbuf *o;
};

/* A call that ended (calls.c's EXIT step) as a row: entered at time_ns. */
static void call_row(void *ctx, struct call_thread *th, const struct call_step *s)
{
	struct pq_walk *w = ctx;
	struct pq *pq = w->pq;

	if (s->kind != STEP_EXIT || !call_step_calls(s))
		return;
	put_machine(w->dt, pq, th->file);
	col_int(pq, COL_TIME, s->entry_ns);
	col_null(&pq->cols[COL_CPU]);
	col_int(pq, COL_TID, th->tid);
	col_int(pq, COL_PID, th->pid);
	col_str(pq, COL_TASK, th->comm, strnlen(th->comm, sizeof(th->comm)));
	col_cstr(pq, COL_GROUP, "func");
	col_cstr(pq, COL_EVENT, "call");
	col_null(&pq->cols[COL_ARG1]);
	col_null(&pq->cols[COL_ARG2]);
	if (s->repair)		/* made up, not recorded: say so */
		col_cstr(pq, COL_TEXT, calls_repair_text[s->repair]);
	else
		col_null(&pq->cols[COL_TEXT]);
	col_cstr(pq, COL_FUNCTION, s->fn->name);
	col_int(pq, COL_DEPTH, s->depth);
	col_int(pq, COL_DURATION, s->ns - s->entry_ns);
	row_end(pq, w->o);
}

static void pq_end(struct dtrace *dt, struct outbuf *o)
{
	struct pq *pq = dt->fmt_state;
	struct pq_walk w = { dt, pq, o };
	struct call_thread **threads;
	unsigned int nr = 0;

	threads = calls_has_threads(dt->calls) ? calls_threads(dt->calls, &nr) : NULL;
	for (unsigned int i = 0; i < nr; i++)
		calls_walk(dt->calls, threads[i], call_row, &w);
	write_group(pq, o);
	write_footer(pq, o);
	for (unsigned int i = 0; i < NR_COLS; i++) {
		free(pq->cols[i].defs.p);
		free(pq->cols[i].values.p);
		free(pq->cols[i].dict.page.p);
		free(pq->cols[i].dict.slots);
	}
	ZSTD_freeCCtx(pq->zstd);
	free(pq->page.p);
	free(pq->packed.p);
	free(pq->levels.p);
	free(pq->groups);
	free(pq->fields);
	free(pq);
}

const struct dtrace_format dtrace_parquet = {
	.name = "parquet",
	.flags = DTRACE_FMT_CALLS | DTRACE_FMT_TO_FILE,
	.start = pq_start,
	.event = pq_event,
	.end = pq_end,
};
