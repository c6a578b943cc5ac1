// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * func: the hooks GCC calls at every function entry and exit of code
 * compiled with -finstrument-functions.  Linked in (libktrace.a or -lktrace)
 * or put in front of glibc's empty ones with LD_PRELOAD=libktrace.so.
 *
 * Each hook records where the stack was: the instrumented function's stack
 * pointer when it called the hook (the hook's CFA).  A function that is
 * still running has a stack pointer above that of everything it calls, so
 * dtrace knows, without symbols or guesses, which frames a longjmp, an
 * exception through uninstrumented code or a coroutine switch left behind:
 * those at or below the stack pointer of a later call.  (uftrace instead
 * hooks setjmp and longjmp and resets its shadow stack there; LTTng-UST
 * records the function and call site only and leaves nesting to the
 * viewer.)  Only the low 32 bits of it are kept: one thread's stack spans
 * far less than 2 GiB, so differences of the low bits compare exactly.
 *
 * A call is three records, 72 bytes, as before the stack pointer:
 *
 *   func:enter  arg1 function, bits 0-31    arg2 function, bits 32-47 |
 *                                                call site, bits 32-47 << 16
 *     (cont)    arg3 call site, bits 0-31   arg4 stack pointer, bits 0-31
 *   func:leave  arg1 function, bits 0-31    arg2 stack pointer, bits 0-31, and
 *                                                bit 0: 1 after the prologue, 0 at
 *                                                the call (exit hook tail-called)
 *
 * User-space code addresses are below 2^47 unless a program maps code
 * above it on purpose (5-level paging); such a function is recorded as
 * func:entry/func:exit, whole addresses without a stack pointer, as files
 * of older versions hold them all.
 */
#include "libktrace.h"

#define KT_HOOK	__attribute__((visibility("default"))) KT_NOTRACE

/* The caller's stack pointer at the call of the hook. */
#if defined(__GNUC__) && !defined(__clang__)
#define kt_caller_sp()	((uintptr_t)__builtin_dwarf_cfa())
#else
#define kt_caller_sp()	((uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *))
#endif

KT_HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
	uint64_t f = (uintptr_t)fn, c = (uintptr_t)site;

	if (kt_unlikely((f | c) >> 48)) {
		kt_record(KTRACE_func_entry, (uint32_t)f, (uint32_t)(f >> 32), true,
			  (uint32_t)c, (uint32_t)(c >> 32));
		return;
	}
	kt_record(KTRACE_func_enter, (uint32_t)f, (uint32_t)(f >> 32) | (uint32_t)(c >> 32) << 16,
		  true, (uint32_t)c, (uint32_t)kt_caller_sp());
}

KT_HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
	uint64_t f = (uintptr_t)fn;

	if (kt_unlikely(f >> 48)) {
		kt_record(KTRACE_func_exit, (uint32_t)f, (uint32_t)(f >> 32), false, 0, 0);
		return;
	}
	/*
	 * GCC often calls this hook after the epilogue, as a tail call: then
	 * the stack pointer is the one the function was called with (its
	 * CFA), else the one after its prologue, as at entry: bit 0 says
	 * which (the ABI keeps both 16-byte aligned).
	 */
	kt_record(KTRACE_func_leave, (uint32_t)f,
		  (uint32_t)kt_caller_sp() | (__builtin_return_address(0) != site), false, 0, 0);
}
