// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * numfmt: integers as text, by hand (see numfmt.h for why).
 */
#include <stdint.h>
#include <string.h>

#include "numfmt.h"

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* pad with one fixed-size copy up to PAD_COPY spaces (within KTEV_SLACK) */
#define PAD_COPY	32

static const char spaces[PAD_COPY + 1] = "                                ";

static inline __attribute__((always_inline)) unsigned int nr_digits(uint64_t v)
{
	static const uint64_t pow10[20] = {
		1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000,
		1000000000, 10000000000ull, 100000000000ull, 1000000000000ull,
		10000000000000ull, 100000000000000ull, 1000000000000000ull,
		10000000000000000ull, 100000000000000000ull, 1000000000000000000ull,
		10000000000000000000ull,
	};
	/* log10 from log2 (1233 / 4096 ~ log10(2)), then one correction */
	unsigned int t = (64 - __builtin_clzll(v | 1)) * 1233 >> 12;

	return t + (v >= pow10[t]) + !v;
}

/*
 * The @n digits of @v.  Below 10^8 without divisions or branches: y holds
 * v / 10^6 in 32.32 fixed point, rounded up by less than 2^32 / 10^6, so
 * the integer part is the first two of eight digits and each multiplication
 * of the fraction by 100 brings the next two into it exactly (checked for
 * every value by tests/host/dtrace-format-test.c); then the last @n of the
 * eight are copied.  Below 10^4 the same with four digits; below 10^16
 * the quotient and remainder by 10^8 so; larger values go two digits at a
 * time from the right.
 */
static inline uint64_t digit_pair(uint64_t y)
{
	uint16_t pair;

	memcpy(&pair, digit_pairs + 2 * (y >> 32), 2);
	return pair;
}

/* The 4 digits of @v < 10^4, first digit in the low byte. */
static inline __attribute__((always_inline)) uint32_t four_digits(uint64_t v)
{
	uint64_t y = (v * ((1ull << 48) / 100 + 1) >> 16) + 1;
	uint32_t four = digit_pair(y);

	y = (uint64_t)(uint32_t)y * 100;
	return four | digit_pair(y) << 16;
}

/* The 8 digits of @v < 10^8, first digit in the low byte. */
static inline __attribute__((always_inline)) uint64_t eight_digits(uint64_t v)
{
	uint64_t y = (v * ((1ull << 48) / 1000000 + 1) >> 16) + 1;
	uint64_t eight = digit_pair(y);

	/* unrolled by hand: gcc -O2 kept the loop, a third of the cost */
	y = (uint64_t)(uint32_t)y * 100;
	eight |= digit_pair(y) << 16;
	y = (uint64_t)(uint32_t)y * 100;
	eight |= digit_pair(y) << 32;
	y = (uint64_t)(uint32_t)y * 100;
	return eight | digit_pair(y) << 48;
}

/* The @n digits of @v < 10^8, in one store of 4 or 8 bytes. */
static inline __attribute__((always_inline)) void put_small(char *p, uint64_t v,
							     unsigned int n)
{
	if (v < 10000) {
		uint32_t four = four_digits(v) >> 8 * (4 - n);

		memcpy(p, &four, 4);
	} else {
		uint64_t eight = eight_digits(v) >> 8 * (8 - n);

		memcpy(p, &eight, 8);
	}
}

static inline __attribute__((always_inline)) char *put_digits(char *p, uint64_t v,
							       unsigned int n)
{
	char *end = p + n;

	/*
	 * The digits are put together in a register, first digit in the low
	 * byte, and stored once: put together in memory, two bytes at a time,
	 * and read back as one word, they stalled the load on the stores
	 * (half of dtrace's time went there).  Up to 16 digits: the first
	 * ones, then the last eight over what the first store wrote past them.
	 */
	if (v < 100000000) {
		put_small(p, v, n);
		return end;
	}
	if (v < 10000000000000000ull) {
		uint64_t lo = eight_digits(v % 100000000);

		put_small(p, v / 100000000, n - 8);
		memcpy(end - 8, &lo, 8);
		return end;
	}
	while (v >= 100) {
		unsigned int r = v % 100;

		v /= 100;
		end -= 2;
		memcpy(end, digit_pairs + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(end - 2, digit_pairs + 2 * v, 2);
	else
		end[-1] = '0' + v;
	return p + n;
}

char *ktev_put_u64(char *p, uint64_t v)
{
	return put_digits(p, v, nr_digits(v));
}

char *ktev_put_pad(char *p, unsigned int len, unsigned int width)
{
	if (len >= width)
		return p;
	if (width - len <= PAD_COPY)
		memcpy(p, spaces, PAD_COPY);
	else
		memset(p, ' ', width - len);
	return p + width - len;
}

char *ktev_put_u64_width(char *p, uint64_t v, unsigned int width)
{
	unsigned int n = nr_digits(v);

	/*
	 * A column up to 8 wide (dtrace's time, tids) in one store: the
	 * eight digits with spaces for the leading zeros, the first 8 - width
	 * bytes shifted out.
	 */
	if (v < 100000000 && width >= n && width <= 8) {
		uint64_t eight = eight_digits(v), lead = (1ull << 8 * (8 - n)) - 1;

		eight = (eight & ~lead) | (0x2020202020202020ull & lead);
		eight >>= 8 * (8 - width);
		memcpy(p, &eight, 8);
		return p + width;
	}
	return put_digits(ktev_put_pad(p, n, width), v, n);
}

/* ktev_put_point3()'s body, inlined into the time column's ktev_put_us() */
static inline __attribute__((always_inline)) char *put_point3(char *p, unsigned int v)
{
	uint32_t four = (four_digits(v) & ~0xffu) | '.';	/* "0123": ".123" */

	memcpy(p, &four, 4);
	return p + 4;
}

char *ktev_put_point3(char *p, unsigned int v)
{
	return put_point3(p, v);
}

char *ktev_put_us(char *p, uint64_t ns, unsigned int width)
{
	uint64_t us = ns / 1000;
	unsigned int frac = ns - us * 1000;

	/*
	 * dtrace's time column (12 wide, below 100 s) in two stores, without
	 * counting digits: the leading '0's of the eight, all but the last,
	 * are the low bytes that equal '0'; they become spaces.
	 */
	if (width == 12 && us < 100000000) {
		uint64_t eight = eight_digits(us);
		unsigned int zeros = __builtin_ctzll((eight ^ 0x3030303030303030ull) |
						     1ull << 56) / 8;
		uint64_t lead = (1ull << 8 * zeros) - 1;

		eight = (eight & ~lead) | (0x2020202020202020ull & lead);
		memcpy(p, &eight, 8);
		return put_point3(p + 8, frac);
	}
	p = ktev_put_u64_width(p, us, width > 4 ? width - 4 : 0);
	return ktev_put_point3(p, frac);
}

/* "00" to "ff": two hex digits a byte */
static const char hex_pairs[] =
	"000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f2021222324252627"
	"28292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f404142434445464748494a4b4c4d4e4f"
	"505152535455565758595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f7071727374757677"
	"78797a7b7c7d7e7f808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
	"a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebfc0c1c2c3c4c5c6c7"
	"c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedfe0e1e2e3e4e5e6e7e8e9eaebecedeeef"
	"f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

/*
 * The 8 hex digits of @v, first digit in the low byte: a byte's two
 * digits at a time from a table, four loads put together in a register
 * (spreading the nibbles and adding '0' and 'a' - '0' - 10 to all bytes at
 * once took twice the instructions).  The digit loop before either
 * mispredicted its end at every other number.
 */
static inline uint64_t hex_pair(uint32_t byte)
{
	uint16_t pair;

	memcpy(&pair, hex_pairs + 2 * byte, 2);
	return pair;
}

static inline uint64_t eight_hex(uint32_t v)
{
	return hex_pair(v >> 24) | hex_pair((v >> 16) & 0xff) << 16 |
	       hex_pair((v >> 8) & 0xff) << 32 | hex_pair(v & 0xff) << 48;
}

char *ktev_put_hex(char *p, uint64_t v)
{
	unsigned int n = v ? (64 - __builtin_clzll(v) + 3) / 4 : 1;
	uint64_t lo = eight_hex(v);

	if (n > 8) {
		uint64_t hi = eight_hex(v >> 32) >> 8 * (16 - n);

		memcpy(p, &hi, 8);
		memcpy(p + n - 8, &lo, 8);
		return p + n;
	}
	lo >>= 8 * (8 - n);
	memcpy(p, &lo, 8);
	return p + n;
}
