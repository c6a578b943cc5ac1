// SPDX-License-Identifier: GPL-2.0
/*
 * tests/user/exceptions: a C++ exception thrown three calls down and caught
 * by their caller, and a method of a class in a namespace: the call tree
 * stays balanced (GCC's instrumentation exits the functions the exception
 * leaves), names are demangled.
 */
#include <stdexcept>

namespace shapes {
struct square {
	int side;
	__attribute__((noinline)) int area() const { return side * side; }
};
}

__attribute__((noinline)) void thrower(int n)
{
	if (n == 0)
		throw std::runtime_error("down here");
	thrower(n - 1);
}

__attribute__((noinline)) int catcher()
{
	try {
		thrower(2);
	} catch (const std::exception &) {
		return 1;
	}
	return 0;
}

int main()
{
	shapes::square s = { 3 };

	return catcher() + s.area() == 10 ? 0 : 1;
}
