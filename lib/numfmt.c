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

char *ktev_put_point3(char *p, unsigned int v)
{
	uint32_t four = (four_digits(v) & ~0xffu) | '.';	/* "0123": ".123" */

	memcpy(p, &four, 4);
	return p + 4;
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
		return ktev_put_point3(p + 8, frac);
	}
	p = ktev_put_u64_width(p, us, width > 4 ? width - 4 : 0);
	return ktev_put_point3(p, frac);
}

/*
 * The 8 hex digits of @v, first digit in the low byte: nibbles spread to
 * bytes, then '0' added to each and 'a' - '0' - 10 more to those above 9,
 * all bytes at once.  The digit loop it replaces mispredicted its end at
 * every other number (the lengths of trace arguments vary).
 */
static inline uint64_t eight_hex(uint32_t v)
{
	uint64_t x = v, above9;

	x = (x | x << 16) & 0x0000ffff0000ffffull;
	x = (x | x << 8) & 0x00ff00ff00ff00ffull;
	x = (x | x << 4) & 0x0f0f0f0f0f0f0f0full;
	x = __builtin_bswap64(x);
	above9 = (x + 0x0606060606060606ull) >> 4 & 0x0101010101010101ull;
	return x + 0x3030303030303030ull + above9 * ('a' - '0' - 10);
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
