# SPDX-License-Identifier: GPL-2.0
# Sourced by the user-space tracing tests (6x-user-*): the dtrace helpers,
# plus libktrace, ktrace-run and the programs of tests/user built, and
# ways to run a program traced and to make dtrace's output comparable.
. "$(dirname "$0")/dtrace-common.sh"

UT=$ROOT/$O/tests/user
LIBKTRACE=$ROOT/$O/tools/libktrace.so.0
KTRACE_RUN=$ROOT/$O/tools/ktrace-run
unset KTRACE_USER_DIR KTRACE_USER_BUF KTRACE_USER_DROP LD_PRELOAD

if ! make -s O="$O" user-test-progs >"$TMP/user-build.log" 2>&1; then
	ok 1 "build libktrace and tests/user" "$(tail -n 20 "$TMP/user-build.log")"
	done_testing
	exit 1
fi

# traced DIR PROG [ARG...]: run PROG with libktrace preloaded into DIR
traced() {
	local dir=$1
	shift
	rm -rf "$dir"
	KTRACE_USER_DIR=$dir LD_PRELOAD=$LIBKTRACE "$@"
}

# count DIR GROUP:EVENT: how many of these events dtrace -S finds in DIR
count() {
	"$DTRACE" -S "$1"/trace.* 2>/dev/null | awk -v e="$2" '$1 == e { print $2; f = 1 }
		END { if (!f) print 0 }'
}

# lost DIR: records lost, as the markers in DIR's files say
lost() {
	"$DTRACE" -S "$1"/trace.* 2>/dev/null | awk '$1 == "lost" { print $2 }'
}

# normalize: what changes from run to run out of dtrace's output:
# durations and times, and the process and thread ids (P1, T1, ... in the
# order they first appear; a main thread is named like its process).
normalize() {
	perl -e '
		local $/;
		$_ = <STDIN>;
		my (%id, $p, $t);
		while (/thread (\d+)(?: |\\n)\(pid (\d+)/g) {
			$id{$2} //= "P" . ++$p;
			$id{$1} //= $1 == $2 ? $id{$2} : "T" . ++$t;
		}
		s/^ *\d+\.\d{3} us \|/       DURATION |/mg;
		s/\d+\.\d{3} us/T us/g;
		s/\b(\d{2,})\b/exists $id{$1} ? $id{$1} : $1/ge;
		print;'
}

# golden NAME FILE: compare FILE with golden/user-NAME.out (UPDATE_GOLDEN=1
# rewrites it)
golden_user() {
	local want=$GOLDEN/user-$1.out
	[ -z "$UPDATE_GOLDEN" ] || cp "$2" "$want"
	diff -u "$want" "$2" >"$TMP/$1.diff" 2>&1
	ok $? "golden user-$1" "$(head -n 30 "$TMP/$1.diff")"
}
