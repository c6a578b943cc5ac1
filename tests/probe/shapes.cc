// SPDX-License-Identifier: GPL-2.0
// The shapes ktrace -P must fetch by name (tests/host/97-probe-eval.sh):
// `this`, a reference and smart pointers to an integer field, inheritance,
// a struct passed by hidden reference, a stack-passed argument, std::string.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

struct Header {
	uint32_t magic;
	uint16_t type;
	int16_t delta;
};

struct Message {
	long seq;
	Header header;
};

struct Base {
	int base_id;
	virtual ~Base() {}
};

struct Request : Base {
	char pad[40];
	Message *msg;
	std::string name;
};

// intrusive-style: a class holding a raw pointer member named px
template <class T> struct IntrusivePtr {
	T *px;
};

// non-trivially copyable: passed by hidden reference
struct Big {
	long a, b, c;
	std::string label;
};

class Queue {
public:
	int depth = 3;
	long total = 0;
	__attribute__((noinline)) void enqueue(const Request &req, IntrusivePtr<Request> ip,
					       std::unique_ptr<Request> &up,
					       std::shared_ptr<Request> sp);
	__attribute__((noinline)) long stack_args(long a1, long a2, long a3, long a4, long a5,
						  long a6, long a7, int a8);
	__attribute__((noinline)) static long by_ref(Big big, const std::string &s);
	// overloads, and an rvalue reference
	__attribute__((noinline)) void push(int n);
	__attribute__((noinline)) void push(const std::string &s);
	__attribute__((noinline)) void take(Request &&r);
};

void Queue::push(int n)
{
	total += n;
}

void Queue::push(const std::string &s)
{
	total += (long)s.size();
}

// inlined into main and into Queue::take: each copy is probed
static inline __attribute__((always_inline)) long scaled(const Request &r, long k)
{
	return r.base_id * k + (long)r.msg->header.type;
}

void Queue::take(Request &&r)
{
	total += r.base_id + scaled(r, 2);
}

// called with a null pointer too: its fields are missing there, not guessed
__attribute__((noinline)) long peek(const Request *r)
{
	return r ? r->base_id : -1;
}

// identical code, folded into one by the compiler (-fipa-icf at -O2)
__attribute__((noinline)) static long fold_a(long x)
{
	return x * 7 + 3;
}

__attribute__((noinline)) static long fold_b(long x)
{
	return x * 7 + 3;
}

static volatile long sink;

// a clone (dropped_arg.isra.0 at -O2) whose second parameter is removed
static __attribute__((noinline)) long dropped_arg(long used, long unused)
{
	sink = used;
	return used + 1;
}

// for the errors: a function that exists only inlined, a parameter unused
static inline long twice(long x)
{
	return 2 * x;
}

__attribute__((noinline)) long unused_arg(long used, long unused)
{
	sink = used;
	return used;
}

void Queue::enqueue(const Request &req, IntrusivePtr<Request> ip, std::unique_ptr<Request> &up,
		    std::shared_ptr<Request> sp)
{
	total += req.msg->header.type + ip.px->base_id + up->msg->seq + sp->base_id;
	sink = total + depth;
}

long Queue::stack_args(long a1, long a2, long a3, long a4, long a5, long a6, long a7, int a8)
{
	sink = a1 + a2 + a3 + a4 + a5 + a6 + a7 + a8;
	return sink + depth;
}

long Queue::by_ref(Big big, const std::string &s)
{
	sink = big.a + big.c + (long)big.label.size() + (long)s.size();
	return sink;
}

int main(int argc, char **argv)
{
	Queue q;
	int n = argc > 1 ? atoi(argv[1]) : 3;

	for (int i = 0; i < n; i++) {
		Message m = { 1000 + i, { 0xabcd0000u + i, (uint16_t)(7 + i), (int16_t)(-5 * i) } };
		auto r = std::make_unique<Request>();
		auto s = std::make_shared<Request>();

		r->base_id = 40 + i;
		r->msg = &m;
		r->name = "request-" + std::to_string(i);
		s->base_id = -i;
		IntrusivePtr<Request> ip = { r.get() };
		q.enqueue(*r, ip, r, s);
		q.stack_args(1, 2, 3, 4, 5, 6, 70 + i, -80 - i);
		Big big = { 11 + i, 22, 33, "a label that is longer than fifteen " + std::to_string(i) };
		Queue::by_ref(big, r->name);
		sink = twice(sink) + unused_arg(i, sink) + dropped_arg(i, sink);
		q.push(i);
		q.push(r->name);
		sink = sink + scaled(*r, 3) + peek(i == 1 ? nullptr : r.get());
		q.take(std::move(*r));
		sink = fold_a(sink) + fold_b(i);
	}
	printf("%ld\n", (long)sink);
	return 0;
}
