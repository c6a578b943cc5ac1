// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * func: the hooks GCC calls at every function entry and exit of code
 * compiled with -finstrument-functions.  Linked in (libktrace.a or -lktrace)
 * or put in front of glibc's empty ones with LD_PRELOAD=libktrace.so.
 *
 * Each hook is one func:entry or func:exit event with the function's
 * address in arg1/arg2 (low, high).  The entry has the call site too, in
 * one continuation record; the exit does not repeat it (dtrace pairs it
 * with its entry): a call is three records, 72 bytes, not four.
 */
#include "libktrace.h"

#define KT_HOOK	__attribute__((visibility("default"))) KT_NOTRACE

KT_HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
	uint64_t f = (uintptr_t)fn, c = (uintptr_t)site;

	kt_record(KTRACE_func_entry, (uint32_t)f, (uint32_t)(f >> 32), true,
		  (uint32_t)c, (uint32_t)(c >> 32));
}

KT_HOOK void __cyg_profile_func_exit(void *fn, void *site __attribute__((unused)))
{
	uint64_t f = (uintptr_t)fn;

	kt_record(KTRACE_func_exit, (uint32_t)f, (uint32_t)(f >> 32), false, 0, 0);
}
