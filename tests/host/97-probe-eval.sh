#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# ktrace -P compiles field paths through DWARF into the kernel's fetch
# program, and that program reads what the source means: on a C++ program
# of ours (tests/probe/shapes.cc: `this`, a reference and smart pointers to
# an integer field, inheritance, a struct passed by hidden reference,
# stack-passed arguments, std::string, a return value), the programs ktrace
# hands to KTRACE_IOC_PROBE_ADD (recorded by the fake device) are run at a
# breakpoint on each function by tests/probe/probe-eval.c (the kernel's
# semantics over ptrace and process_vm_readv), and every value must be the
# one gdb prints for the same expression at the same function, hit by hit
# (ground truth: gdb's own DWARF reading, tests/probe/gdb-truth.py).  The
# offsets -L prints are gdb's offsetof; the same program built -O0 is
# probed where gdb breaks and gives gdb's values; the ioctl's arguments,
# BASE.probes and every bad spec's message are checked too.
. "$(dirname "$0")/fakedev-common.sh"

command -v gdb >/dev/null || skip_all "gdb not installed"
make -s -C "$ROOT" O="$O" "$O/tests/probe-eval" "$O/tests/probe-shapes" >"$T/err" 2>&1
ok $? "build probe-eval and the C++ program" "$(cat "$T/err")"
S=$ROOT/$O/tests/probe-shapes
EVAL=$ROOT/$O/tests/probe-eval
export KTFAKE_PROBES=$T/probes.log

enq="this.depth req.base_id type=req.msg.header.type req.msg.header.delta"
enq="$enq req.name:str16 up.msg.seq sp.base_id ip.px.base_id req.msg->header.magic:x32"
fk -v -o t -P "$S:Queue::enqueue $enq" \
   -P "$S:Queue::stack_args a6 a7 a8 a1 \$arg3 this->total" \
   -P "$S:Queue::stack_args%return \$retval" \
   -P "$S:Queue::by_ref big.a big.label:str20 s:str12 big.c" \
   -P "$S:Queue::take r.base_id r.msg.seq" -- true
ok $rc "ktrace -P with five probes records on the fake device" "$(cat "$T/err")"

# the ioctl's arguments: ids, flags (return, children), the child's pid, offsets
pid=$(sed -n 's/.*started true, pid \([0-9]*\).*/\1/p' "$T/err")
off=0x$(nm "$S" | awk '/ _ZN5Queue7enqueue/ { sub(/^0+/, "", $1); print $1 }')
check "five KTRACE_IOC_PROBE_ADD calls" '[ "$(grep -c "^probe " probes.log)" = 5 ]'
check "each names the command's pid ($pid), with KTRACE_PROBE_CHILDREN" \
	'[ -n "$pid" ] && [ "$(awk -v p="$pid" "\$5 == p && (\$3 == 2 || \$3 == 3)" probes.log | wc -l)" = 5 ]'
check "the return probe has KTRACE_PROBE_RETURN" 'awk "\$2 == 3 && \$3 == 3" probes.log | grep -q .'
check "enqueue's offset is its symbol's ($off, nm; ET_DYN: address = offset here)" \
	'awk "\$2 == 1" probes.log | grep -q " $off "'
check "the binary the fd names is the program" 'awk "\$2 == 1 { print \$7 }" probes.log | grep -qx "$S"'

# BASE.probes: mode, header, lines
check "t.probes is mode 0600" '[ "$(stat -c %a t.probes)" = 600 ]'
check "t.probes starts with its version line" '[ "$(head -n 1 t.probes)" = "# ktrace probes 1" ]'
check "probe lines: 7 TAB-separated fields, names as given" \
	'[ "$(awk -F"\t" "/^probe/ && NF == 7" t.probes | wc -l)" = 5 ] &&
	 grep -qP "^probe\t3\treturn\t[0-9a-f]{40}\t0x[0-9a-f]+\t$S\tQueue::stack_args$" t.probes'
check "value lines: alias, types from DWARF and from :TYPE" \
	'grep -qP "^value\t1\t2\tu16\ttype$" t.probes && grep -qP "^value\t1\t3\ts16\treq.msg.header.delta$" t.probes &&
	 grep -qP "^value\t1\t4\tstr16\treq.name$" t.probes && grep -qP "^value\t1\t8\tx32\treq.msg->header.magic$" t.probes &&
	 grep -qP "^value\t2\t4\tx64\t\\\$arg3$" t.probes'

# the same values as gdb, hit by hit
"$EVAL" probes.log t.probes "$S" 3 >eval.all 2>eval.err
ok $? "probe-eval runs the programs" "$(cat eval.err)"
grep "^probe:" eval.all >eval.out
tab=$(printf '\t')
cat >truth <<TRUTH
Queue::enqueue${tab}Queue::enqueue${tab}this.depth${tab}this->depth${tab}d${tab}req.base_id${tab}req.base_id${tab}d${tab}type${tab}req.msg->header.type${tab}u${tab}req.msg.header.delta${tab}req.msg->header.delta${tab}d${tab}req.name${tab}req.name._M_dataplus._M_p${tab}s16${tab}up.msg.seq${tab}req.msg->seq${tab}d${tab}sp.base_id${tab}sp._M_ptr->base_id${tab}d${tab}ip.px.base_id${tab}ip.px->base_id${tab}d${tab}req.msg->header.magic${tab}req.msg->header.magic${tab}x32
Queue::stack_args${tab}Queue::stack_args${tab}a6${tab}a6${tab}d${tab}a7${tab}a7${tab}d${tab}a8${tab}a8${tab}d${tab}a1${tab}a1${tab}d${tab}\$arg3${tab}a2${tab}x64${tab}this->total${tab}this->total${tab}d
Queue::stack_args${tab}Queue::stack_args%return${tab}\$retval${tab}\$retval${tab}d
Queue::by_ref${tab}Queue::by_ref${tab}big.a${tab}big.a${tab}d${tab}big.label${tab}big.label._M_dataplus._M_p${tab}s20${tab}s${tab}s._M_dataplus._M_p${tab}s12${tab}big.c${tab}big.c${tab}d
Queue::take${tab}Queue::take${tab}r.base_id${tab}r.base_id${tab}d${tab}r.msg.seq${tab}r.msg->seq${tab}d
TRUTH
PROBE_TRUTH=truth gdb -q -batch -nx -x "$ROOT/tests/probe/gdb-truth.py" --args "$S" 3 2>gdb.err |
	grep '^probe:' >gdb.out
check "gdb saw 15 hits" '[ "$(wc -l <gdb.out)" = 15 ]'
diff gdb.out eval.out >diff.out
ok $? "probe-eval's values are gdb's, hit by hit" "$(cat diff.out)"
check "a negative s16, a string and a sign-extended stack int are among them" \
	'grep -q "req.msg.header.delta=-10 " eval.out && grep -q "req.name=\"request-2\"" eval.out &&
	 grep -q " a8=-82 " eval.out'

# a load that faults: the value is missing ("?"), the others are still read
: >probes.log
fk -o pk -P "$S:peek r:x64 r.base_id r.msg.header.type" -- true
"$EVAL" probes.log pk.probes "$S" 3 2>eval.err | grep "^probe:" >peek.out
printf 'peek\tpeek\tr\tr\tx64\n' >truth.peek
PROBE_TRUTH=truth.peek gdb -q -batch -nx -x "$ROOT/tests/probe/gdb-truth.py" --args "$S" 3 2>/dev/null |
	grep '^probe:' >gdb.peek
cut -d" " -f1,2 peek.out >peek.ptr; diff gdb.peek peek.ptr >diff.out
ok $? "peek: the pointers are gdb's" "$(cat diff.out peek.out)"
check "... one of them null" \
	'[ "$(grep -c " r=0x0 " peek.out)" = 1 ]'
check "... through the null pointer both fields are missing, elsewhere read" \
	'grep -q "^probe:peek r=0x0 r.base_id=? r.msg.header.type=?$" peek.out &&
	 [ "$(grep -c "r.base_id=4[02] r.msg.header.type=[79]$" peek.out)" = 2 ]'

# -L: the chain, with gdb's offsetof (Request::msg, Message::header, Header::type)
fk -L "$S:Queue::enqueue req.msg.header.type"
o1=$(gdb -batch -nx -ex 'print/d (long)&((Request*)0)->msg' "$S" | sed 's/.* = //')
o2=$(gdb -batch -nx -ex 'print/d (long)&((Message*)0)->header' "$S" | sed 's/.* = //')
o3=$(gdb -batch -nx -ex 'print/d (long)&((Header*)0)->type' "$S" | sed 's/.* = //')
check "-L prints the chain: %rsi +$o1 [deref] +$o2 +$o3 [deref 2] emit 2" \
	'[ $rc -eq 0 ] && grep -qF "field req.msg.header.type: uint16_t (u16) @ %rsi +$o1 [deref] +$o2 +$o3 [deref 2] emit 2" out'
check "-L lists parameters with types and locations" \
	'grep -q "param req .*Request const & .*@ %rsi" out && grep -q "param sp .*shared_ptr<Request> .*@ %r8 (in memory)" out'
check "-L says how the first instruction is probed" 'grep -qE "first instruction .*(single-stepped \(two traps\)|emulated)" out'
fk -L "$S:Queue::stack_args"
check "-L: stack-passed arguments above the CFA" 'grep -q "param a6 .*@ cfa (in memory)" out && grep -q "param a8 .*@ cfa +16 (in memory)" out'
fk -L "$S:Queue::*"
nq=$(nm -C "$S" | grep -c " [Tt] Queue::")
check "-L with a glob lists the $nq methods nm knows" '[ "$(grep -c "^Queue::" out)" = "$nq" ]'

# overloads: all, or the one a signature names; folded code; where the probes are
fk -o ov -P "$S:Queue::push" -- true
check "an overloaded name probes every overload" '[ $rc -eq 0 ] && [ "$(grep -c "^probe" ov.probes)" = 2 ] && has_err "2 copies"'
fk -o ov -P "$S:Queue::push(int) n" -- true
po=0x$(nm "$S" | awk '/ _ZN5Queue4pushEi$/ { sub(/^0+/, "", $1); print $1 }')
check "a signature picks one (offset $po, nm)" \
	'[ $rc -eq 0 ] && [ "$(grep -c "^probe" ov.probes)" = 1 ] && grep -qP "^probe\t1\tentry\t\S+\t$po\t" ov.probes'
fa=0x$(nm "$S" | awk '/ _ZL6fold_al$/ { sub(/^0+/, "", $1); print $1 }')
fk -o ov -P "$S:fold_b x" -- true
check "identical code folded: fold_b is probed at fold_a's code ($fa) and said so" \
	'[ $rc -eq 0 ] && grep -qP "^probe\t1\tentry\t\S+\t$fa\t" ov.probes && has_err "the same code as fold_a (identical code folded)"'
: >probes.log
fk -o pp -p 4242 -p 4343 -P "$S:Queue::push(int) n" -d 0.05
check "-p: the probe is in those processes, without KTRACE_PROBE_CHILDREN" \
	'[ $rc -eq 0 ] && grep -q "^probe 1 0 $po 4242,4343 " probes.log'
: >probes.log
fk -o pp -P "/proc/$$/root$S:Queue::push(int) n" -d 0.05
check "no command, no -p: every process; a /proc/PID/root path kept as given" \
	'[ $rc -eq 0 ] && grep -q "^probe 1 0 $po - " probes.log && grep -qP "\t/proc/$$/root$S\tQueue::push\$" pp.probes'
fk -o fl --flight -P "$S:Queue::push(int) n" -- true
check "--flight: each snapshot has its BASE.N.probes" \
	'[ $rc -eq 0 ] && grep -qP "^probe\t1\tentry\t\S+\t$po\t" fl.1.probes && [ ! -e fl.probes ]'
fk -p 1 -P "$S:Queue::push(int) n" -- true
check "-p with a command: a usage error" '[ $rc -eq 2 ] && has_err "-p: not with a COMMAND"'

# inlined copies: each probed at its DW_AT_entry_pc (binutils' readelf reads them)
ent=$(readelf --debug-dump=info "$S" 2>/dev/null | awk '
	/DW_TAG_inlined_subroutine/ { inl = 1; next }
	/DW_TAG_/ { inl = 0 }
	inl && /DW_AT_abstract_origin/ { origin = $NF }
	inl && /DW_AT_entry_pc/ { pc[origin] = pc[origin] " " $NF }
	/DW_AT_name.*: scaled$/ { name = prev }
	{ prev = $1 }
	END { gsub(/[<>:]/, "", name); print pc["<0x" substr(name, 2) ">"] }')
fk -o inl -P "$S:scaled" -- true
got=$(awk -F"\t" '/^probe/ { print $5 }' inl.probes | sort | xargs)
want=$(for a in $ent; do printf '0x%x\n' "$a"; done | sort | xargs)
check "the two inlined copies of scaled are probed at their entry_pc ($want)" \
	'[ $rc -eq 0 ] && [ -n "$want" ] && [ "$got" = "$want" ] && has_err "2 inlined copies, each probed at its own first instruction"'
fk -o inl -P "$S:scaled r.base_id" -- true
check "... a parameter of an inlined copy not yet bound there: optimized out, not guessed" \
	'[ $rc -ne 0 ] && has_err "$S:scaled: r.base_id: optimized out at the probe address"'

# every bad spec says what was wrong, naming binary, function and field
bad() {	# DESCRIPTION EXPECTED-MESSAGE ARGS...
	local what=$1 want=$2
	shift 2
	fk -o bad "$@" -- true
	check "$what" '[ $rc -ne 0 ] && has_err "$want" && [ ! -e bad.probes ]'
}
bad "no such function" "ktrace: $S:nosuch: no such function" -P "$S:nosuch"
bad "no such parameter" "$S:Queue::enqueue: nope: Queue::enqueue(" -P "$S:Queue::enqueue nope"
bad "no such member (members listed)" "req.nope: struct Request has no member nope (it has .pad .msg .name)" \
	-P "$S:Queue::enqueue req.nope"
bad "not a struct" "this.depth.x: int is not a struct, class or union: no member x" -P "$S:Queue::enqueue this.depth.x"
bad "a struct as a value" "req.msg.header: is a struct Header: name one of its members (.magic .type .delta)" \
	-P "$S:Queue::enqueue req.msg.header"
bad "-> on a struct" "req.msg.header->type: -> type: not a pointer; use .type" -P "$S:Queue::enqueue req.msg.header->type"
bad "a return probe of a function inlined only" \
	"$S:scaled%return: inlined only (2 inlined copies, no out-of-line copy): an inlined copy has no return" \
	-P "$S:scaled%return"
bad "optimized out (a clone without the parameter)" "dropped_arg: unused: optimized out: this copy" \
	-P "$S:dropped_arg unused"
bad "\$retval in an entry probe" "\$retval is only there at the return: probe Queue::stack_args%return" \
	-P "$S:Queue::stack_args \$retval"
bad "a parameter in a return probe" "parameter a1 is gone at the return" -P "$S:Queue::stack_args%return a1"
bad "\$arg7" "\$arg7: only \$arg1..\$arg6" -P "$S:Queue::stack_args \$arg7"
bad "a bad type" "type u12: not one of u8" -P "$S:Queue::stack_args a1:u12"
bad "a bad suffix" "%entry: only %return may follow the function" -P "$S:Queue::stack_args%entry"
bad "a missing binary" "ktrace: $T/nosuch: No such file or directory" -P "$T/nosuch:main"
bad "no function" "no function (BINARY:FUNCTION" -P "$S"
mkfifo fifo && echo text >text && mkdir dir
bad "a FIFO: refused at once, never opened for reading" "ktrace: $T/fifo: not a regular file" -P "$T/fifo:main"
bad "a directory" "ktrace: $T/dir: not a regular file" -P "$T/dir:main"
bad "not an ELF file" "ktrace: $T/text: " -P "$T/text:main"
bad "too many words for one probe" "more than 32 words" -P "$S:Queue::by_ref big.label s big.c"
KTFAKE_PROBE_ERR=25 fk -o bad -P "$S:Queue::stack_args a1" -- true
check "ENOTTY from the kernel: it has no probes" '[ $rc -ne 0 ] && has_err "this kernel'"'"'s ktrace has no probes"'
KTFAKE_PROBE_IDS=1 fk -o bad -P "$S:Queue::stack_args a1" -P "$S:Queue::by_ref big.a" -- true
check "ENOSPC: no free probe id, naming the probe" '[ $rc -ne 0 ] && has_err "probe $S:Queue::by_ref at offset" && has_err "no free probe id"'

# stripped, with only .dynsym: $argN, and a clear refusal of names
c++ -O2 -g -rdynamic -o "$T/dyn" "$ROOT/tests/probe/shapes.cc" && strip -o "$T/dyn-stripped" "$T/dyn"
id=$(readelf -n "$T/dyn" | awk '/Build ID/ { print $3 }')
pd=0x$(nm "$T/dyn" | awk '/ _ZN5Queue4pushEi$/ { sub(/^0+/, "", $1); print $1 }')
fk -o dyn -P "$T/dyn-stripped:Queue::push(int) \$arg2" -d 0.05
check "stripped, .dynsym only: found by its demangled name, \$arg2 fetched" \
	'[ $rc -eq 0 ] && grep -qP "^probe\t1\tentry\t$id\t$pd\t$T/dyn-stripped\tQueue::push\$" dyn.probes &&
	 grep -qP "^value\t1\t0\tx64\t\\\$arg2\$" dyn.probes'
fk -o dyn -P "$T/dyn-stripped:Queue::push(int) n" -d 0.05
check "... a parameter's name: refused, saying where the debug info was looked for" \
	'[ $rc -ne 0 ] && has_err "$T/dyn-stripped:Queue::push: n: no debug info to find parameter n in (looked in the file, /usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug, debuginfod"'
fk -o dyn -P "$T/dyn-stripped:dropped_arg"
check "... a static function: no such function, and where it looked" \
	'[ $rc -ne 0 ] && has_err "dyn-stripped:dropped_arg: no such function (in its symbol tables); no debug info was found (looked in the file, /usr/lib/debug/.build-id/"'

# a struct only declared where the function is: its definition in another unit
cat >"$T/def.c" <<'C'
struct hdr { long seq; short type; };
void use(struct hdr *h);
int main(void) { struct hdr h = { 5, 7 }; use(&h); return 0; }
C
cat >"$T/decl.c" <<'C'
struct hdr;
volatile void *keep;
__attribute__((noinline)) void use(struct hdr *h) { keep = h; }
C
cc -O2 -g -o "$T/twounits" "$T/def.c" "$T/decl.c"
fk -L "$T/twounits:use h.type"
ot=$(gdb -batch -nx -ex 'print/d (long)&((struct hdr*)0)->type' "$T/twounits" | sed 's/.* = //')
check "a struct declared only: its definition from the other unit (offset $ot, gdb)" \
	'[ $rc -eq 0 ] && grep -qF "field h.type: short int (s16) @ %rdi +$ot [deref 2 signed] emit 2" out'

# built without optimization, parameters live in stack slots the prologue
# fills: probed where gdb breaks (past the prologue), the CFA from the CFI
c++ -O0 -g -o "$T/shapes-O0" "$ROOT/tests/probe/shapes.cc"
: >probes.log
fk -o o0 -P "$T/shapes-O0:Queue::stack_args a1 a6 a7 a8 this->total" \
   -P "$T/shapes-O0:Queue::by_ref big.a big.label:str20 s:str12" -- true
ok $rc "-O0: probed" "$(cat err)"
ga=$(gdb -batch -nx -ex 'break Queue::stack_args' "$T/shapes-O0" 2>&1 | sed -n 's/^Breakpoint 1 at \(0x[0-9a-f]*\):.*/\1/p')
check "-O0: past the prologue, where gdb breaks ($ga), and said so" \
	'grep -qP "^probe\t1\tentry\t\S+\t$ga\t" o0.probes && has_err "built without optimization: probed past its prologue"'
"$EVAL" probes.log o0.probes "$T/shapes-O0" 3 2>eval.err | grep "^probe:" >o0.out
cat >truth.o0 <<TRUTH
Queue::stack_args${tab}Queue::stack_args${tab}a1${tab}a1${tab}d${tab}a6${tab}a6${tab}d${tab}a7${tab}a7${tab}d${tab}a8${tab}a8${tab}d${tab}this->total${tab}this->total${tab}d
Queue::by_ref${tab}Queue::by_ref${tab}big.a${tab}big.a${tab}d${tab}big.label${tab}big.label._M_dataplus._M_p${tab}s20${tab}s${tab}s._M_dataplus._M_p${tab}s12
TRUTH
PROBE_TRUTH=truth.o0 gdb -q -batch -nx -x "$ROOT/tests/probe/gdb-truth.py" --args "$T/shapes-O0" 3 2>/dev/null |
	grep '^probe:' >gdb.o0
diff gdb.o0 o0.out >diff.out
ok $? "-O0: the values are gdb's, hit by hit ($(wc -l <gdb.o0) hits)" "$(cat diff.out eval.err)"
# dtrace reads what ktrace wrote: a hit of each probe in t.probes, its
# words laid out as the file's value types say (uapi/linux/ktrace.h), the
# value i being i + 1; dtrace names each probe and each value as the file
# does (the contract between ktrace's writer and dtrace's reader)
python3 - t.probes "$ROOT/tests/host/mktrace.py" <<'PY' >hits.want
import subprocess, sys
probes, values = {}, {}
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if f[0] == "probe":
        probes[int(f[1])] = f[6] + ("%return" if f[2] == "return" else "")  # the contract
    elif f[0] == "value":
        values.setdefault(int(f[1]), []).append((f[3], f[4]))
ev, t = [], 1000
for pid in sorted(probes):
    words = []
    for i, (typ, name) in enumerate(values.get(pid, [])):
        n = -(-int(typ[3:]) // 4) if typ.startswith("str") else 2 if typ.endswith("64") else 1
        words += [0x41 if typ.startswith("str") else i + 1] + [0] * (n - 1)
    args = [0] + words            # arg1: the missing mask
    args += [0] * (len(args) % 2)
    ev.append("%d:%d:%d:%d:7" % (t, (1 << 18) | pid << 24, args[0], args[1]))
    rest = args[2:]
    for k in range(0, len(rest), 2):
        end = 1 << 23 if k + 2 >= len(rest) else 0
        ev.append("%d:%d:%d:%d:7" % (t, 1 << 22 | end | (k // 2) << 24, rest[k], rest[k + 1]))
    t += 1000
    print("probe:%s %s" % (probes[pid], " ".join(n + "=" for _, n in values.get(pid, []))))
subprocess.run([sys.executable, sys.argv[2], "--cpu", "0", "t.cpu0"] + ev, check=True)
PY
"$ROOT/$O/tools/dtrace" t.cpu0 t.probes >hits.out 2>hits.err
while read -r name fields; do
	line=$(grep -F -- " $name " hits.out | head -n 1)
	for f in $fields; do
		case $line in *" $f"*) ;; *) echo "$name: no $f in: $line";; esac
	done
	[ -n "$line" ] || echo "$name: no hit in dtrace's listing"
done <hits.want >hits.diff
check "dtrace names every probe and value of the BASE.probes ktrace wrote ($(wc -l <hits.want) probes)" \
	'[ -s hits.want ] && [ ! -s hits.diff ] && [ ! -s hits.err ]'
done_testing
