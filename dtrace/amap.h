/* SPDX-License-Identifier: GPL-2.0 */
/*
 * amap: a hash map from 64-bit keys to pointers, open addressing, never
 * shrinks (amap_del() frees a slot, not memory).  dtrace's one hash map: the symbol caches, the call graph's
 * edges, the threads by tid of calls.c and perfetto.c, the functions by
 * the low bits of their address.
 */
#ifndef DTRACE_AMAP_H
#define DTRACE_AMAP_H

#include <stdint.h>
#include <stdlib.h>

#include "util.h"

struct amap {
	uint64_t *keys;			/* key + 1: 0 is an empty slot */
	void **vals;
	size_t nr, cap;
};

static inline size_t amap_slot(const struct amap *m, uint64_t key)
{
	return (key * 0x9e3779b97f4a7c15ull) >> 20 & (m->cap - 1);
}

static inline void *amap_get(const struct amap *m, uint64_t key)
{
	if (!m->cap)
		return NULL;
	for (size_t i = amap_slot(m, key); m->keys[i]; i = (i + 1) & (m->cap - 1))
		if (m->keys[i] == key + 1)
			return m->vals[i];
	return NULL;
}

static inline void amap_put(struct amap *m, uint64_t key, void *val)
{
	size_t i;

	if (2 * (m->nr + 1) > m->cap) {
		struct amap old = *m;

		m->cap = old.cap ? 2 * old.cap : 64;
		m->keys = xcalloc(m->cap, sizeof(*m->keys));
		m->vals = xcalloc(m->cap, sizeof(*m->vals));
		m->nr = 0;
		for (size_t j = 0; j < old.cap; j++)
			if (old.keys[j])
				amap_put(m, old.keys[j] - 1, old.vals[j]);
		free(old.keys);
		free(old.vals);
	}
	for (i = amap_slot(m, key); m->keys[i] && m->keys[i] != key + 1; i = (i + 1) & (m->cap - 1))
		;
	if (!m->keys[i])
		m->nr++;
	m->keys[i] = key + 1;
	m->vals[i] = val;
}

/* Remove @key, if there: the keys after it in its probe run move back. */
static inline void amap_del(struct amap *m, uint64_t key)
{
	size_t i, j;

	if (!m->cap)
		return;
	for (i = amap_slot(m, key); m->keys[i] != key + 1; i = (i + 1) & (m->cap - 1))
		if (!m->keys[i])
			return;
	m->nr--;
	for (j = (i + 1) & (m->cap - 1); m->keys[j]; j = (j + 1) & (m->cap - 1)) {
		size_t home = amap_slot(m, m->keys[j] - 1);

		/* j's key may fill i only if its home is not in (i, j] */
		if (((j - home) & (m->cap - 1)) >= ((j - i) & (m->cap - 1))) {
			m->keys[i] = m->keys[j];
			m->vals[i] = m->vals[j];
			i = j;
		}
	}
	m->keys[i] = 0;
	m->vals[i] = NULL;
}

#endif /* DTRACE_AMAP_H */
