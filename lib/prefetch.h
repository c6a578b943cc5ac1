/* SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0 */
/*
 * prefetch: ask for a cache line that this thread is about to write.
 *
 * Both libktrace's rings and dtrace's batches are filled by one thread
 * while another one, on another CPU, reads what was filled a lap before.
 * Taking those lines back on demand stalls the filling thread on its
 * stores; prefetchw takes them back ahead of time.
 */
#ifndef KT_PREFETCH_H
#define KT_PREFETCH_H

/* A hint: a CPU without prefetchw takes its encoding as a NOP. */
static inline __attribute__((always_inline, no_instrument_function))
void prefetch_write(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	asm volatile("prefetchw %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p, 1, 3);
#endif
}

#endif /* KT_PREFETCH_H */
