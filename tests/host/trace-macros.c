// SPDX-License-Identifier: GPL-2.0
/*
 * trace-macros: TRACE(), TRACE_ARGS() and TRACE64() of <linux/ktrace.h>,
 * compiled for user space (tests/host/31-trace-macros.sh).  Their arguments
 * are evaluated only while the event is traced, and are type-checked as
 * u32 (u64 for TRACE64's value) with and without CONFIG_KTRACE: build with
 * -DBAD_ARG and the compiler must refuse a struct as an argument.
 * Exits 0 when what was evaluated and recorded is right.
 */
#include <stdio.h>
#include <linux/ktrace.h>

static int evaluated, recorded;

#ifdef CONFIG_KTRACE
static u32 got[KTRACE_MAX_ARGS];

DEFINE_STATIC_KEY_FALSE(ktrace_enabled);
u32 ktrace_group_mask;

/* READ_ONCE() of kshim.h: one thread here, plain memory */
void kshim_load(const volatile void *p, void *v, size_t size)
{
	memcpy(v, (const void *)p, size);
}

void ktrace_write(u32 event, u32 arg1, u32 arg2)
{
	recorded++;
	got[0] = arg1;
	got[1] = arg2;
}

void ktrace_write_args(u32 event, const u32 *args, unsigned int nr_args)
{
	recorded++;
	memcpy(got, args, nr_args * sizeof(*args));
}
#endif

static u64 value(void)
{
	evaluated++;
	return 0x1234567890ull;
}

static void sites(void)
{
	TRACE(KTRACE_user_mark, value(), 2);
	TRACE_ARGS(KTRACE_user_mark, 1, 2, (u32)value());
	TRACE64(KTRACE_user_mark, 1, 2, value());
#ifdef BAD_ARG
	{
		struct { int x; } s = { 0 };

		TRACE_ARGS(KTRACE_user_mark, 1, s);
		TRACE64(KTRACE_user_mark, 1, 2, s);
	}
#endif
}

int main(void)
{
	sites();
	printf("tracing off: %d arguments evaluated, %d events recorded\n",
	       evaluated, recorded);
	if (evaluated || recorded)
		return 1;
#ifdef CONFIG_KTRACE
	ktrace_enabled.enabled = 1;
	ktrace_group_mask = KTRACE_GRP_user;
	sites();
	printf("tracing on: %d arguments evaluated, %d events recorded, TRACE64 %#x %#x\n",
	       evaluated, recorded, got[2], got[3]);
	if (evaluated != 3 || recorded != 3 || got[2] != 0x34567890 || got[3] != 0x12)
		return 1;
#endif
	return 0;
}
