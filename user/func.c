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
 * above it on purpose (5-level paging); such a function's entry is
 * recorded as func:entry, whole addresses without a stack pointer, as
 * files of older versions hold them all (its exit is a func:leave all the
 * same).  On x86_64 the hooks are two and three instructions of assembly
 * that hand the CFA and the return address to the C functions below.
 */
#include "libktrace.h"

#define KT_HOOK	__attribute__((visibility("default"))) KT_NOTRACE

/*
 * The call path (struct kt_shadow, for ktrace_user_stack()).  A frame is
 * the function, its call site, the hook's CFA and return address at its
 * entry; frames
 * another frame's stack pointer shows are gone are dropped, as dtrace's
 * calls.c reads the records, but with whole addresses and without looking
 * ahead: at an entry, the frames entered below its stack pointer on the
 * same stack (a longjmp, an exception or a switch left them); at an exit,
 * the frames above the function's own.  Stacks further apart than
 * KT_STACK_SPAN are other stacks (a sigaltstack handler, a coroutine's).
 */
static inline KT_NOTRACE void kt_shadow_push(struct kt_shadow *st, uintptr_t fn,
					     uintptr_t site, uintptr_t sp, uintptr_t at)
{
	const struct kt_frame *top = kt_frame(st, st->depth - 1);
	unsigned long d;

	/* almost always: the frame on top is a little above the new one, and runs */
	if (kt_unlikely(st->kept && !(top->sp > sp && top->sp - sp < KT_STACK_SPAN)))
		kt_shadow_enter(st, site, sp, at);
	/* the slot is taken first: a signal handler's calls go above it */
	d = st->depth++;
	/* frame d - KT_STACK_INNER's slot: the kept frames start above it */
	st->kept = d >= KT_STACK_OUTER + KT_STACK_INNER && st->kept >= KT_STACK_INNER ?
		KT_STACK_INNER : st->kept + 1;
	kt_barrier();
	*kt_frame(st, d) = (struct kt_frame){ fn, site, sp, at };
}

/*
 * An exit at stack pointer @sp, @after_prologue or the function's CFA
 * (see kt_func_exit()): almost always that of the frame on top, with no
 * frame of its function below it that the exit could be of.
 */
static inline KT_NOTRACE void kt_shadow_pop(struct kt_shadow *st, uintptr_t fn, uintptr_t sp,
					    bool after_prologue)
{
	const struct kt_frame *top = kt_frame(st, st->depth - 1), *below;

	if (kt_unlikely(!st->kept || top->fn != fn || sp - top->sp >= KT_STACK_SPAN))
		goto unwind;
	below = kt_frame(st, st->depth - 2);
	if (kt_unlikely(st->kept > 1 && below->fn == fn && below->sp < sp))
		goto unwind;
	st->depth--;
	st->kept--;
	return;
unwind:
	kt_shadow_unwind(st, fn, sp, after_prologue);
}

/* Code above 2^48 (rare): whole addresses, no stack pointer, out of the way. */
static __attribute__((noinline, cold)) KT_NOTRACE void kt_func_wide(uint64_t f, uint64_t c)
{
	kt_record(KTRACE_func_entry, (uint32_t)f, (uint32_t)(f >> 32), true,
		  (uint32_t)c, (uint32_t)(c >> 32));
}

/*
 * The arguments are put together into two registers before the record is
 * made: kept apart, they took four callee-saved registers across the
 * (rarely taken) slow path, and saving and restoring them cost more than
 * the stack pointer itself (callgrind: instructions per call).
 */
#define kt_together(x, y)	__asm__("" : "+r"(x), "+r"(y))

/* @sp: the hook's CFA; @at, @ret: its return address. */
/* Called from the assembly below only: "used" keeps them. */
#define KT_HOOK_BODY	KT_HIDDEN KT_NOTRACE __attribute__((used))

KT_HOOK_BODY void kt_func_enter(void *fn, void *site, uintptr_t sp, uintptr_t at)
{
	uint64_t f = (uintptr_t)fn, c = (uintptr_t)site, lo, hi;
	struct kt_stream *s = kt_self;

	if (kt_unlikely(!s) && !(s = kt_stream_start(2)))
		return;
	kt_shadow_push(&s->stack, f, c, sp, at);
	if (kt_unlikely((f | c) >> 48)) {
		kt_func_wide(f, c);
		return;
	}
	lo = (f & 0xffffffffffffull) | (c >> 32) << 48;
	hi = (uint32_t)c | (uint64_t)(uint32_t)sp << 32;
	kt_together(lo, hi);
	kt_record_in(s, KTRACE_func_enter, (uint32_t)lo, (uint32_t)(lo >> 32), true,
		  (uint32_t)hi, (uint32_t)(hi >> 32));
}

KT_HOOK_BODY void kt_func_exit(void *fn, void *site, uintptr_t sp, void *ret)
{
	uint64_t f = (uintptr_t)fn, w;
	struct kt_stream *s = kt_self;

	if (kt_unlikely(!s) && !(s = kt_stream_start(1)))
		return;
	kt_shadow_pop(&s->stack, f, sp, ret != site);
	/*
	 * Only the low 32 bits of the function, wherever it is: the stack
	 * pointer says which frame ends, the function's bits confirm it.
	 * GCC often calls this hook after the epilogue, as a tail call: then
	 * the stack pointer is the one the function was called with (its
	 * CFA), else the one after its prologue, as at entry: bit 0 says
	 * which (the ABI keeps both 16-byte aligned).
	 */
	w = (uint32_t)f | (uint64_t)((uint32_t)sp | (ret != site)) << 32;
	__asm__("" : "+r"(w));
	kt_record_in(s, KTRACE_func_leave, (uint32_t)w, (uint32_t)(w >> 32), false, 0, 0);
}

#if defined(__x86_64__)
/*
 * The hooks themselves: the CFA and the return address handed on in
 * registers, three instructions, where __builtin_dwarf_cfa() made
 * GCC build a stack frame to compute it.
 */
__asm__(".text\n"
	".globl __cyg_profile_func_enter\n"
	".type __cyg_profile_func_enter, @function\n"
	"__cyg_profile_func_enter:\n"
	"	.cfi_startproc\n"
	"	movq (%rsp), %rcx\n"
	"	leaq 8(%rsp), %rdx\n"
	"	jmp kt_func_enter\n"
	"	.cfi_endproc\n"
	".size __cyg_profile_func_enter, .-__cyg_profile_func_enter\n"
	".globl __cyg_profile_func_exit\n"
	".type __cyg_profile_func_exit, @function\n"
	"__cyg_profile_func_exit:\n"
	"	.cfi_startproc\n"
	"	movq (%rsp), %rcx\n"
	"	leaq 8(%rsp), %rdx\n"
	"	jmp kt_func_exit\n"
	"	.cfi_endproc\n"
	".size __cyg_profile_func_exit, .-__cyg_profile_func_exit\n");
#else
/*
 * Elsewhere the frame address gives the CFA where the frame record sits
 * at the frame's top (i386); FIXME: check it on each architecture built
 * for (x86_64 is the one the kernel side supports).
 */
KT_HOOK void __cyg_profile_func_enter(void *fn, void *site)
{
	kt_func_enter(fn, site, (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *),
		      (uintptr_t)__builtin_return_address(0));
}

KT_HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
	kt_func_exit(fn, site, (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *),
		     __builtin_return_address(0));
}
#endif
