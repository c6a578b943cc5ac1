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
#include "filter.h"

#define KT_HOOK	__attribute__((visibility("default"))) KT_NOTRACE

/*
 * The call path (struct kt_shadow, for ktrace_user_stack()).  A frame is
 * the function, its call site, the hook's CFA and return address at its
 * entry.  Frames that another frame's stack pointer shows are gone are
 * dropped, as dtrace's calls.c reads the records, but with whole
 * addresses and without looking ahead: at an entry, the frames entered
 * below its stack pointer on the same stack (a longjmp, an exception or a
 * switch left them); at an exit, the frames above the function's own
 * (stack.c).  Stacks further apart than KT_STACK_SPAN are other stacks (a
 * sigaltstack handler, a coroutine's).  The fast paths here are a few
 * compares and stores: the thread's first record, code above 2^48 and
 * every repair go through functions out of the hooks' way, so that the
 * hooks keep no more registers than the recording needs.
 */
static inline KT_NOTRACE void kt_shadow_push(struct kt_shadow *st, uintptr_t fn,
					     uintptr_t site, uintptr_t sp)
{
	unsigned long d = st->depth;
	const struct kt_frame *top = kt_ring(st, d - 1);
	struct kt_frame *f;

	/* almost always: the frame on top is a little above the new one, and runs */
	if (kt_unlikely((top->sp - sp - 1 >= KT_STACK_SPAN - 1 && d) || d >= KT_STACK_RING)) {
		kt_shadow_push_slow(st, fn, site, sp);
		return;
	}
	/* the slot is taken first: a signal handler's calls go above it */
	st->depth = d + 1;
	kt_barrier();
	f = kt_ring(st, d);
	f->fn = fn;
	f->site = site;
	f->sp = sp;
	f->at = kt_hook_return(sp);
	f->depth = d;
}

/*
 * An exit at stack pointer @sp, @after_prologue or the function's CFA
 * (see kt_func_exit()): almost always that of the frame on top, with no
 * frame of its function below it that the exit could be of.  A frame on
 * top that is not kept (its slot taken by a deeper one) is popped here
 * too when its slot's function is this one: the right thing, as the
 * frame on top is the one that returns.
 */
static inline KT_NOTRACE void kt_shadow_pop(struct kt_shadow *st, uintptr_t fn, uintptr_t sp,
					    uint64_t w)
{
	unsigned long d = st->depth - 1;
	const struct kt_frame *top = kt_ring(st, d), *below = kt_ring(st, d - 1);

	if (kt_unlikely(!st->depth || top->fn != fn || sp - top->sp >= KT_STACK_SPAN ||
			(below->fn == fn && below->sp < sp)))
		kt_shadow_unwind(st, fn, sp, w >> 32 & 1);	/* w: as recorded */
	else
		st->depth = d;
}

/* Code above 2^48 (rare): whole addresses, no stack pointer, out of the way. */
static __attribute__((noinline, cold)) KT_NOTRACE void kt_func_wide(struct kt_stream *s,
								    uint64_t f, uint64_t c,
								    uintptr_t sp)
{
	kt_shadow_push_slow(&s->stack, f, c, sp);
	kt_record_in(s, KTRACE_func_entry, (uint32_t)f, (uint32_t)(f >> 32), true,
		     (uint32_t)c, (uint32_t)(c >> 32));
}

static __attribute__((noinline)) KT_NOTRACE void record_enter_apart(uint64_t f, uint64_t c,
								      uintptr_t sp);

/*
 * The thread's first record: start its stream, then record (out of the
 * way: what the hook keeps in registers is its fast path's).  Past the
 * filters already: they decided on this call once.
 */
static __attribute__((noinline, cold)) KT_NOTRACE void kt_func_enter_first(uint64_t f, uint64_t c,
									   uintptr_t sp)
{
	if (kt_stream_start(2))
		record_enter_apart(f, c, sp);
}

/*
 * The arguments are put together into two registers before the record is
 * made: kept apart, they took four callee-saved registers across the
 * (rarely taken) slow path, and saving and restoring them cost more than
 * the stack pointer itself (callgrind: instructions per call).
 */
#define kt_together(x, y)	__asm__("" : "+r"(x), "+r"(y))

/* @sp: the hook's CFA; @ret: its return address (exit only). */
/* Called from the assembly below only: "used" keeps them. */
#define KT_HOOK_BODY	KT_HIDDEN KT_NOTRACE __attribute__((used))

static inline __attribute__((always_inline)) KT_NOTRACE void
record_enter(uint64_t f, uint64_t c, uintptr_t sp)
{
	uint64_t lo, hi;
	struct kt_stream *s = kt_self;

	if (kt_unlikely(!s)) {
		if (!kt_thread_off)	/* tracing off: the hook costs no more than this */
			kt_func_enter_first(f, c, sp);
		else
			kt_not_recorded();
		return;
	}
	if (kt_unlikely((f | c) >> 48)) {
		kt_func_wide(s, f, c, sp);
		return;
	}
	lo = (f & 0xffffffffffffull) | (c >> 32) << 48;
	hi = (uint32_t)c | (uint64_t)(uint32_t)sp << 32;
	kt_together(lo, hi);
	kt_shadow_push(&s->stack, f, c, sp);
	kt_record_in(s, KTRACE_func_enter, (uint32_t)lo, (uint32_t)(lo >> 32), true,
		     (uint32_t)hi, (uint32_t)(hi >> 32));
}

static __attribute__((noinline)) KT_NOTRACE void record_exit_apart(uint64_t f, void *site,
								     uintptr_t sp, void *ret);

/* The same for an exit (a thread's first record may be one). */
static __attribute__((noinline, cold)) KT_NOTRACE void kt_func_exit_first(uint64_t f, void *site,
									  uintptr_t sp, void *ret)
{
	if (kt_stream_start(1))
		record_exit_apart(f, site, sp, ret);
}

static inline __attribute__((always_inline)) KT_NOTRACE void
record_exit(uint64_t f, void *site, uintptr_t sp, void *ret)
{
	uint64_t w;
	struct kt_stream *s = kt_self;

	if (kt_unlikely(!s)) {
		if (!kt_thread_off)
			kt_func_exit_first(f, site, sp, ret);
		else
			kt_not_recorded();
		return;
	}
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
	kt_shadow_pop(&s->stack, f, sp, w);
	kt_record_in(s, KTRACE_func_leave, (uint32_t)w, (uint32_t)(w >> 32), false, 0, 0);
}

/*
 * With filters (filter.h), the hooks go through these: apart, so that
 * without them the hooks' fast path keeps its registers (one load and a
 * branch more), and a call not recorded costs its decision only (the
 * recording, out of line, saves its registers only when it runs).
 */
static __attribute__((noinline)) KT_NOTRACE void record_enter_apart(uint64_t f, uint64_t c,
								      uintptr_t sp)
{
	record_enter(f, c, sp);
}

static __attribute__((noinline)) KT_NOTRACE void record_exit_apart(uint64_t f, void *site,
								     uintptr_t sp, void *ret)
{
	record_exit(f, site, sp, ret);
}

static __attribute__((noinline)) KT_NOTRACE void filtered_enter(uint64_t f, uint64_t c,
								  uintptr_t sp)
{
	/* not recording (a vfork child on its parent's thread state, tracing off) */
	if (kt_unlikely(!kt_self && kt_thread_off)) {
		kt_not_recorded();
		return;
	}
	if (kt_filter_enter(f))
		record_enter_apart(f, c, sp);
}

static __attribute__((noinline)) KT_NOTRACE void filtered_exit(uint64_t f, void *site,
								 uintptr_t sp, void *ret)
{
	if (kt_unlikely(!kt_self && kt_thread_off)) {
		kt_not_recorded();
		return;
	}
	if (kt_filter_exit())
		record_exit_apart(f, site, sp, ret);
}

KT_HOOK_BODY void kt_func_enter(void *fn, void *site, uintptr_t sp)
{
	if (kt_unlikely(kt_filter.on)) {
		filtered_enter((uintptr_t)fn, (uintptr_t)site, sp);
		return;
	}
	record_enter((uintptr_t)fn, (uintptr_t)site, sp);
}

KT_HOOK_BODY void kt_func_exit(void *fn, void *site, uintptr_t sp, void *ret)
{
	if (kt_unlikely(kt_filter.on)) {
		filtered_exit((uintptr_t)fn, site, sp, ret);
		return;
	}
	record_exit((uintptr_t)fn, site, sp, ret);
}

#if defined(__x86_64__)
/*
 * The hooks themselves: the CFA and the return address handed on in
 * registers, two or three instructions, where __builtin_dwarf_cfa() made
 * GCC build a stack frame to compute it.
 */
__asm__(".text\n"
	".globl __cyg_profile_func_enter\n"
	".type __cyg_profile_func_enter, @function\n"
	"__cyg_profile_func_enter:\n"
	"	.cfi_startproc\n"
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
	kt_func_enter(fn, site, (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *));
}

KT_HOOK void __cyg_profile_func_exit(void *fn, void *site)
{
	kt_func_exit(fn, site, (uintptr_t)__builtin_frame_address(0) + 2 * sizeof(void *),
		     __builtin_return_address(0));
}
#endif
