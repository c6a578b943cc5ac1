// SPDX-License-Identifier: GPL-2.0
/*
 * dtrace-format-test: the event text and command-line syntax of lib/ktevents
 * against known answers; TAP on stdout.  Numbers are checked for every value
 * below 10^8 (where the fast path is) and around every power of ten.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "ktevents.h"
#include "util.h"

static int nr_tests, nr_failed;

static void ok(int cond, const char *what, const char *got, const char *want)
{
	nr_tests++;
	printf("%sok %d - %s\n", cond ? "" : "not ", nr_tests, what);
	if (!cond) {
		nr_failed++;
		printf("#   got  '%s'\n#   want '%s'\n", got, want);
	}
}

static char buf[KTEV_TEXT_MAX + KTEV_NAME_MAX];

static const struct ktev_ctx decoded;	/* names, no symbols or irq names */

static const char *text(uint32_t code, const uint32_t *args, unsigned int nr)
{
	*ktev_put_text(buf, code, args, nr, NULL) = '\0';
	return buf;
}

static const char *text_ctx(uint32_t code, const uint32_t *args, unsigned int nr,
			    const struct ktev_ctx *ctx)
{
	*ktev_put_text(buf, code, args, nr, ctx) = '\0';
	return buf;
}

static char *put_task(const struct ktev_ctx *ctx, char *p, uint32_t tid)
{
	return p + sprintf(p, "<%u>", tid);
}

static const char *name(uint32_t code, unsigned int width)
{
	*ktev_put_name(buf, code, width) = '\0';
	return buf;
}

static void expect(const char *what, const char *got, const char *want)
{
	ok(!strcmp(got, want), what, got, want);
}

/* Every value below 10^8 against a decimal counter, then edges above. */
static void test_numbers(void)
{
	char want[32] = "0", got[32 + KTEV_SLACK];
	int len = 1, bad = 0;

	for (uint64_t v = 0; v < 100000000 && !bad; v++) {
		char *end = ktev_put_u64(got, v);

		if (end - got != len || memcmp(got, want, len)) {
			*end = '\0';
			ok(0, "ktev_put_u64 below 10^8", got, want);
			bad = 1;
		}
		for (int i = len - 1; ; i--) {		/* want += 1 */
			if (i < 0) {
				memmove(want + 1, want, len++);
				want[0] = '1';
				break;
			}
			if (want[i] != '9') {
				want[i]++;
				break;
			}
			want[i] = '0';
		}
	}
	if (!bad)
		ok(1, "ktev_put_u64: every value below 10^8", NULL, NULL);

	for (uint64_t p = 1; ; p *= 10) {
		uint64_t vals[] = { p - 1, p, p + 1, p * 3 + 7, UINT64_MAX - p };

		for (unsigned int i = 0; i < ARRAY_SIZE(vals) && !bad; i++) {
			char w[64];

			*ktev_put_u64(got, vals[i]) = '\0';
			snprintf(w, sizeof(w), "%" PRIu64, vals[i]);
			if (strcmp(got, w))
				bad = 1, ok(0, "ktev_put_u64 near a power of ten", got, w);
			*ktev_put_u64_width(got, vals[i], 12) = '\0';
			snprintf(w, sizeof(w), "%12" PRIu64, vals[i]);
			if (strcmp(got, w))
				bad = 1, ok(0, "ktev_put_u64_width", got, w);
			*ktev_put_hex(got, vals[i]) = '\0';
			snprintf(w, sizeof(w), "%" PRIx64, vals[i]);
			if (strcmp(got, w))
				bad = 1, ok(0, "ktev_put_hex", got, w);
		}
		if (p > UINT64_MAX / 10)
			break;
	}
	if (!bad)
		ok(1, "ktev_put_u64, _width, _hex around every power of ten", NULL, NULL);

	/* 10^8 and up: two 8-digit halves below 10^16, the loop above; of every length */
	for (uint64_t i = 0, x = 88172645463325252ull; i < 2000000 && !bad; i++) {
		uint64_t v;
		char w[64];

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		v = x >> (x % 57);	/* 7 to 64 bits */
		*ktev_put_u64(got, v) = '\0';
		snprintf(w, sizeof(w), "%" PRIu64, v);
		if (strcmp(got, w))
			bad = 1, ok(0, "ktev_put_u64 of random values", got, w);
		/* columns up to 8 wide go in one store: narrower and wider too */
		*ktev_put_u64_width(got, v >> (x % 31), i % 11) = '\0';
		snprintf(w, sizeof(w), "%*" PRIu64, (int)(i % 11), v >> (x % 31));
		if (strcmp(got, w))
			bad = 1, ok(0, "ktev_put_u64_width of random values", got, w);
		*ktev_put_hex(got, v) = '\0';
		snprintf(w, sizeof(w), "%" PRIx64, v);
		if (strcmp(got, w))
			bad = 1, ok(0, "ktev_put_hex of random values", got, w);
	}
	if (!bad)
		ok(1, "ktev_put_u64, _width (0-10), _hex: random values of every length",
		   NULL, NULL);

	for (unsigned int v = 0; v < 1000 && !bad; v++) {
		char w[8];

		*ktev_put_point3(got, v) = '\0';
		snprintf(w, sizeof(w), ".%03u", v);
		if (strcmp(got, w))
			bad = 1, ok(0, "ktev_put_point3", got, w);
	}
	if (!bad)
		ok(1, "ktev_put_point3: every value below 1000", NULL, NULL);
}

/*
 * The oracle for the table's formats printed raw: printf on each
 * conversion, the decoding ones as the numbers they stand for (%S %G %Q %I
 * %T as %u, %E as %d, %F %W as %x, %K as %llx), "?" for an argument the event
 * lacks; a string (%s) of ASCII bytes shows printable ones, a backslash
 * doubled and others as \xNN.
 */
static void oracle(char *out, const char *fmt, const uint32_t *args, unsigned int nr)
{
	unsigned int a = 0;

	for (const char *s = fmt; *s; ) {
		int ll = s[0] == '%' && (s[1] == 'l' || s[1] == 'K');
		char conv = s[1] == 'l' ? s[3] : s[1];

		if (*s != '%' || conv == '%') {
			*out++ = *s;
			s += *s == '%' ? 2 : 1;
			continue;
		}
		if (a + 1 + ll <= nr && conv == 's') {
			for (unsigned int i = 0; i < 4 * (nr - a); i++) {
				unsigned char c = args[a + i / 4] >> (8 * (i % 4));

				if (!c)
					break;
				if (c == '\\')
					out += sprintf(out, "\\\\");
				else if (c < 0x20 || c > 0x7e)
					out += sprintf(out, "\\x%02x", c);
				else
					*out++ = c;
			}
			a = nr;
			s += 2;
			continue;
		}
		conv = strchr("SGQIT", conv) ? 'u' : conv == 'E' ? 'd' : strchr("FKW", conv) ? 'x' : conv;
		if (a + 1 + ll > nr)
			out += sprintf(out, "?");
		else if (ll)
			out += sprintf(out, conv == 'x' ? "%" PRIx64 : "%" PRIu64,
				       args[a] | (uint64_t)args[a + 1] << 32);
		else if (conv == 'd')
			out += sprintf(out, "%d", (int32_t)args[a]);
		else
			out += sprintf(out, conv == 'x' ? "%x" : "%u", args[a]);
		a += 1 + ll;
		s += s[1] == 'l' ? 4 : 2;
	}
	*out = '\0';
}

static int has_decoding(const char *fmt)
{
	for (const char *s = strchr(fmt, '%'); s; s = strchr(s + 2, '%'))
		if (s[1] && strchr("SEGQFIKW", s[1]))
			return 1;
	return 0;
}

/* decoded(CODE, ARG1, WANT): the text of an event with two arguments */
static void decoded_is(const char *what, uint32_t code, uint32_t a1, uint32_t a2,
		       const char *want)
{
	uint32_t args[2] = { a1, a2 };

	expect(what, text_ctx(code, args, 2, &decoded), want);
}

/*
 * The decoding conversions, against names every Linux user knows (the
 * tables themselves are checked against other truths by 59-names.sh).
 */
static void test_decode(void)
{
	static const struct ktev_ctx raw = { .raw = true };
	uint32_t args[4] = { 0, 1, 0x81123456, 0xffffffff };

	decoded_is("%S: 0 read", KTRACE_syscall_entry, 0, 0, "syscall read entry, arg0 0");
	decoded_is("%S: 110 getppid", KTRACE_syscall_entry, 110, 0x10,
		   "syscall getppid entry, arg0 10");
	decoded_is("%S: 59 execve", KTRACE_syscall_entry, 59, 0, "syscall execve entry, arg0 0");
	decoded_is("%S: x32's 512 has no name", KTRACE_syscall_entry, 512, 0,
		   "syscall 512 entry, arg0 0");
	decoded_is("%S: unknown number", KTRACE_syscall_entry, 0xffffffff, 0,
		   "syscall 4294967295 entry, arg0 0");
	decoded_is("%E: -2 -ENOENT", KTRACE_syscall_exit, 2, -2, "syscall open exit, return -ENOENT");
	decoded_is("%E: -1 -EPERM", KTRACE_syscall_exit, 1, -1, "syscall write exit, return -EPERM");
	decoded_is("%E: -11 -EAGAIN, not EWOULDBLOCK", KTRACE_syscall_exit, 0, -11,
		   "syscall read exit, return -EAGAIN");
	decoded_is("%E: -512 -ERESTARTSYS", KTRACE_syscall_exit, 0, -512,
		   "syscall read exit, return -ERESTARTSYS");
	decoded_is("%E: -4095 has no name", KTRACE_syscall_exit, 0, -4095,
		   "syscall read exit, return -4095");
	decoded_is("%E: -4096 is no error", KTRACE_syscall_exit, 0, -4096,
		   "syscall read exit, return -4096");
	decoded_is("%E: 0", KTRACE_syscall_exit, 0, 0, "syscall read exit, return 0");
	decoded_is("%E: 4095", KTRACE_syscall_exit, 0, 4095, "syscall read exit, return 4095");
	decoded_is("%E: INT_MIN", KTRACE_syscall_exit, 0, 0x80000000,
		   "syscall read exit, return -2147483648");
	decoded_is("%G: 9 SIGKILL", KTRACE_signal_deliver, 9, 57,
		   "signal SIGKILL delivered to task 57");
	decoded_is("%G: 6 SIGABRT, not SIGIOT", KTRACE_signal_deliver, 6, 1,
		   "signal SIGABRT delivered to task 1");
	decoded_is("%G: 31 SIGSYS", KTRACE_signal_deliver, 31, 1, "signal SIGSYS delivered to task 1");
	decoded_is("%G: 0", KTRACE_signal_deliver, 0, 1, "signal 0 delivered to task 1");
	decoded_is("%G: 34, real time", KTRACE_signal_deliver, 34, 1, "signal 34 delivered to task 1");
	decoded_is("%Q: 0 HI", KTRACE_softirq_entry, 0, 0, "softirq HI entry");
	decoded_is("%Q: 1 TIMER", KTRACE_softirq_exit, 1, 0, "softirq TIMER exit");
	decoded_is("%Q: 3 NET_RX", KTRACE_softirq_raise, 3, 0, "softirq NET_RX raised");
	decoded_is("%Q: 9 RCU", KTRACE_softirq_entry, 9, 0, "softirq RCU entry");
	decoded_is("%Q: 10 unknown", KTRACE_softirq_entry, 10, 0, "softirq 10 entry");
	args[0] = 5;
	for (uint32_t flags = 0; flags < 8; flags++) {
		static const char *const want[8] = {
			"kernel|read", "user|read", "kernel|write", "user|write",
			"kernel|read|0x4", "user|read|0x4", "kernel|write|0x4", "user|write|0x4",
		};
		char w[128];

		args[1] = flags;
		args[2] = 0x1000;
		args[3] = 0x7fff;
		snprintf(w, sizeof(w), "page fault by task 5, flags %s at 7fff00001000", want[flags]);
		expect("%F: the flags as words", text_ctx(KTRACE_fault_page, args, 4, &decoded), w);
	}
	/* %W: sched_switch's prev_state as ftrace prints it (TASK_REPORT bits) */
	{
		static const struct { uint32_t state; const char *want; } states[] = {
			{ 0, "R" }, { 0x100, "R+" }, { 1, "S" }, { 2, "D" }, { 4, "T" },
			{ 8, "t" }, { 0x10, "X" }, { 0x20, "Z" }, { 0x40, "P" }, { 0x80, "I" },
			{ 3, "S|D" }, { 0x101, "S+" }, { 0x200, "R|0x200" }, { 0x302, "D+|0x200" },
		};
		uint32_t sw[4] = { 12, 57, 0, 120 };
		char w[128];

		for (unsigned int i = 0; i < ARRAY_SIZE(states); i++) {
			sw[2] = states[i].state;
			snprintf(w, sizeof(w), "context switch from task 12 to task 57, prev state %s, "
				 "next prio 120", states[i].want);
			expect("%W: a task state as ftrace's letters", text_ctx(KTRACE_sched_switch,
			       sw, 4, &decoded), w);
		}
	}
	args[0] = 0;
	args[1] = 1;
	args[2] = 0x81123456;
	args[3] = 0xffffffff;
	expect("%K without symbols: hex", text_ctx(KTRACE_timer_expire, args, 4, &decoded),
	       "timer expired, flags 0, cpu 1, function ffffffff81123456");
	expect("%I without names: the number", text_ctx(KTRACE_irq_entry, args + 1, 2, &decoded),
	       "irq 1 entry, vector 2165453910");
	args[0] = 110;
	args[1] = -2;
	expect("raw context: numbers", text_ctx(KTRACE_syscall_exit, args, 2, &raw),
	       "syscall 110 exit, return -2");
	expect("NULL context: numbers", text(KTRACE_syscall_exit, args, 2),
	       "syscall 110 exit, return -2");
}

static void test_text(void)
{
	uint32_t a[6] = { 12, 57, 0x89abcdef, 0x1234, 0, 0 };
	uint32_t lost[2] = { 7, 1 };
	uint64_t rng = 1;

	/* every event of the table, every argument kind, and short of CONT records */
	for (unsigned int i = 0; i < ktev_nr_events; i++) {
		const struct ktev_desc *d = &ktev_events[i];
		unsigned int nr = 2 + 2 * d->nr_cont;
		uint32_t args[KTEV_MAX_ARGS];
		char want[KTEV_TEXT_MAX], what[80];
		int bad = 0;

		for (int round = 0; round < 1000 && !bad; round++) {
			for (unsigned int j = 0; j < nr; j++) {
				rng = rng * 6364136223846793005ull + 1442695040888963407ull;
				args[j] = round < 3 ? (uint32_t[]){ 0, 1, UINT32_MAX }[round]
						    : (uint32_t)(rng >> (33 + round % 31));
				/* strings: ASCII here, the rest is escape.c's tests */
				if (strstr(d->fmt, "%s") && j >= 2)
					args[j] &= 0x7f7f7f7f;
			}
			oracle(want, d->fmt, args, nr);
			bad = strcmp(text(d->code, args, nr), want);
		}
		snprintf(what, sizeof(what), "%s:%s: \"%s\"", d->group, d->name, d->fmt);
		ok(!bad && ktev_lookup(d->code) == d, what, buf, want);
		/* decoded: the same where the format has no decoding conversion */
		if (!has_decoding(d->fmt)) {
			snprintf(what, sizeof(what), "%s:%s decoded: as raw", d->group, d->name);
			expect(what, text_ctx(d->code, args, nr, &decoded), want);
		}
		if (d->nr_cont) {
			oracle(want, d->fmt, args, 2);
			snprintf(what, sizeof(what), "%s:%s without its CONT records: ?",
				 d->group, d->name);
			expect(what, text(d->code, args, 2), want);
		}
	}
	expect("task with a context: named by it",
	       text_ctx(KTRACE_thread_exit, a, 2, &(struct ktev_ctx){ .put_task = put_task }),
	       "exit of task <12>, code 57");
	expect("string: up to its NUL",
	       text(KTRACE_thread_name, (uint32_t[]){ 5, 4, 0x74696177, 0x6e, 0x41414141, 0 }, 6),
	       "task 5 of process 4 is named waitn");
	expect("unknown subevent: generic", text(KTRACE_GRP_sched | 7 << KTRACE_SUB_SHIFT, a, 4),
	       "event 0x07000001 args 0xc 0x39 0x89abcdef 0x1234");
	expect("lost marker: 64-bit count", text(KTRACE_META_LOST, lost, 2),
	       "4294967303 records lost");
	expect("name padded", name(KTRACE_sched_switch, 16), "sched:switch    ");
	expect("name unknown subevent", name(KTRACE_GRP_irq | 99 << KTRACE_SUB_SHIFT, 0), "irq:99");
	expect("name several group bits", name(0x300 | 7 << KTRACE_SUB_SHIFT, 0), "0x300:7");
	expect("name unnamed group bit", name(1u << 20 | 3 << KTRACE_SUB_SHIFT, 0), "0x100000:3");
	expect("name lost marker", name(KTRACE_META_LOST, 0), "meta:lost");
	expect("name other meta record", name(5 << KTRACE_SUB_SHIFT, 0), "meta:5");
	expect("name CONT record", name(KTRACE_EVT_CONT | KTRACE_GRP_sched, 0), "sched:0");
	ok(ktev_lookup(KTRACE_sched_switch | KTRACE_EVT_END) == NULL,
	   "a code with END is not the event", "", "");
}

static void mask(const char *s, uint32_t base, long want)
{
	uint32_t m = 0xdeadbeef;
	int ret = ktev_parse_mask(s, base, &m);
	char what[80], got[32], w[32];

	snprintf(what, sizeof(what), "mask '%s' from 0x%x", s, base);
	snprintf(got, sizeof(got), "%d 0x%x", ret, ret ? 0 : m);
	snprintf(w, sizeof(w), "%d 0x%lx", want < 0 ? -1 : 0, want < 0 ? 0 : want);
	expect(what, got, w);
}

static void list(const char *s, unsigned int nbits, const char *want)
{
	uint64_t bits[2];
	char got[130] = "", what[80];
	int ret = ktev_parse_list(s, bits, nbits, "cpu");

	for (unsigned int i = 0; !ret && i < nbits; i++)
		strcat(got, ktev_bit_test(bits, i) ? "1" : "0");
	if (ret)
		strcpy(got, "error");
	snprintf(what, sizeof(what), "list '%s'", s);
	expect(what, got, want);
}

static void test_syntax(void)
{
	mask("sched,fault", 0, KTRACE_GRP_sched | KTRACE_GRP_fault);
	mask("all", 0, ktev_all_groups);
	mask("all,-net", 0, ktev_all_groups & ~KTRACE_GRP_net);
	mask("+irq", KTRACE_GRP_sched, KTRACE_GRP_sched | KTRACE_GRP_irq);
	mask("-sched", KTRACE_GRP_sched | KTRACE_GRP_irq, KTRACE_GRP_irq);
	mask("0x5,user", 0, 0x5 | KTRACE_GRP_user);
	mask("0", 0xff, 0);
	mask("", 0, -1);
	mask("bogus", 0, -1);
	mask("sched,", 0, -1);
	mask("+", 0, -1);
	mask("0x400000", 0, -1);
	mask("12abc", 0, -1);
	list("0-3,6", 8, "11110010");
	list("all", 4, "1111");
	list("5", 8, "00000100");
	list("3-1", 8, "error");
	list("1,", 8, "error");
	list("x", 8, "error");
	list("8", 8, "error");
	list("-1", 8, "error");
	ok(ktev_group_bit("workqueue") == 17 && !strcmp(ktev_group_name(0), "sched") &&
	   ktev_group_bit("nope") == -1 && !ktev_group_name(21) && !ktev_group_name(99),
	   "group names and bits", "", "");
}

/*
 * ktev_put_us() against printf of the microseconds and the 3 decimals:
 * every nanosecond count below 10^7, then random ones of every length
 * (the 12-wide column's fast path is below 10^11), in widths 0-14.
 */
static void test_us(void)
{
	char got[32 + KTEV_SLACK], w[64];
	int bad = 0;

	for (uint64_t ns = 0; ns < 10000000 && !bad; ns++) {
		*ktev_put_us(got, ns, 12) = '\0';
		snprintf(w, sizeof(w), "%8" PRIu64 ".%03u", ns / 1000, (unsigned int)(ns % 1000));
		if (strcmp(got, w))
			bad = 1, ok(0, "ktev_put_us below 10^7 ns, width 12", got, w);
	}
	for (uint64_t i = 0, x = 88172645463325252ull; i < 2000000 && !bad; i++) {
		uint64_t ns;
		int width = i % 15;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		ns = x >> (x % 61);
		if (i & 1)
			width = 12;
		*ktev_put_us(got, ns, width) = '\0';
		snprintf(w, sizeof(w), "%*" PRIu64 ".%03u", width > 4 ? width - 4 : 0,
			 ns / 1000, (unsigned int)(ns % 1000));
		if (strcmp(got, w))
			bad = 1, ok(0, "ktev_put_us of random values", got, w);
	}
	if (!bad)
		ok(1, "ktev_put_us: every value below 10^7 ns, random ones, widths 0-14",
		   NULL, NULL);
}

/*
 * ktev_put_name_text() and ktev_put_desc_name_text() (given the lookup)
 * are ktev_put_name(), a space and ktev_put_text(), the model: every event of the table, unknown codes and lost markers,
 * 0-6 arguments, widths 0-40 (the name's slot is 32), raw or decoded.
 */
static void test_name_text(void)
{
	static char model[KTEV_NAME_MAX + KTEV_TEXT_MAX], got[KTEV_NAME_MAX + KTEV_TEXT_MAX];
	const uint32_t args[] = { 5, 0xfffffffe, 300, 7, 0x41424344, 0 };
	const struct ktev_ctx raw = { .raw = true };
	int bad = 0;

	for (unsigned int i = 0; i < ktev_nr_events + 3 && !bad; i++) {
		uint32_t code = i < ktev_nr_events ? ktev_events[i].code :
				i == ktev_nr_events ? KTRACE_META_LOST : 0x7000001u + i;

		for (unsigned int w = 0; w <= 40; w++) {
			unsigned int nr = (i + w) % 7;
			const struct ktev_ctx *ctx = w & 1 ? &raw : &decoded;
			char *p = ktev_put_name(model, code, w);

			*p++ = ' ';
			*ktev_put_text(p, code, args, nr, ctx) = '\0';
			*ktev_put_name_text(got, code, w, args, nr, ctx) = '\0';
			if (strcmp(got, model)) {
				bad = 1, ok(0, "ktev_put_name_text", got, model);
				break;
			}
			if (ktev_lookup(code))
				*ktev_put_desc_name_text(got, ktev_lookup(code), w, args, nr,
							 ctx) = '\0';
			if (strcmp(got, model)) {
				bad = 1, ok(0, "ktev_put_desc_name_text", got, model);
				break;
			}
		}
	}
	if (!bad)
		ok(1, "ktev_put_name_text, ktev_put_desc_name_text: ktev_put_name, a space, ktev_put_text",
		   NULL, NULL);
}

int main(int argc, char **argv)
{
	util_set_progname(argv[0]);
	verbose = -1;
	test_numbers();
	test_text();
	test_decode();
	test_syntax();
	test_us();
	test_name_text();
	printf("1..%d\n", nr_tests);
	return nr_failed != 0;
}
