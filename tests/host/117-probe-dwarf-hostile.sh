#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace -L on hostile DWARF: a program whose DWARF has one type made to
# contain itself (tests/host/dwarf-hostile.py: a pointer to itself, a
# const of itself, a class inheriting itself, an anonymous member of its
# own type) must not crash (the old walks recursed until SIGSEGV): the
# listing ends (exit 0, the looping type named "...") and a field that
# must be searched for through the loop is refused with an error naming
# the binary and "bad DWARF", exit 1.  The unpatched program lists and
# resolves normally (ground truth: the same field on it).
. "$(dirname "$0")/fakedev-common.sh"

command -v g++ >/dev/null || skip_all "g++ not installed"
cd "$T" || exit 1
cat >h.cc <<'EOC'
struct B { int x; };
struct D : B { int y; };
struct S { union { int a; long l; }; int b; };
int __attribute__((noinline)) f(const S *s, D *d, S *t) { return s->b + d->y + t->b; }
int main() { S s{}; D d{}; return f(&s, &d, &s); }
EOC
g++ -gdwarf-4 -O1 -o h h.cc
ok $? "build the program (DWARF 4)"
for c in pointer const inherit anonymous; do
	python3 "$ROOT/tests/host/dwarf-hostile.py" h "h.$c" $c 2>"$T/err"
	ok $? "make the $c case"
done
fk -L "$T/h:f d.x t.a"
check "the plain program: d.x through the base class, t.a through the anonymous union" \
	'[ $rc -eq 0 ] && has_out "d.x" && has_out "t.a"'
for c in pointer const; do
	fk -L "$T/h.$c:f"
	check "$c: -L lists, no crash (rc $rc)" '[ $rc -eq 0 ] && has_out "..."'
done
fk -L "$T/h.inherit:f d.x"
check "inherit: d.x refused, bad DWARF, exit 1 (rc $rc)" \
	'[ $rc -eq 1 ] && has_err "$T/h.inherit:f: d.x: bad DWARF"'
fk -L "$T/h.anonymous:f t.zz"
check "anonymous: t.zz refused, bad DWARF, exit 1 (rc $rc)" \
	'[ $rc -eq 1 ] && has_err "$T/h.anonymous:f: t.zz: bad DWARF"'
done_testing
