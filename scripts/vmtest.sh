#!/bin/bash
# ktrace: boot build/kernel-$KVER-$KCONFIG under QEMU (4 vCPUs, TCG) with
# build/vm/initramfs.cpio and run the in-VM tests (tests/vm/NN-name.{sh,c}).
# The guest frames each test's output with markers (tests/vm/run-vm.sh);
# this script splits the console log into build/results/vm-$KVER-$KCONFIG-NAME.tap
# and checks the kernel itself into build/results/vm-$KVER-$KCONFIG-kernel.tap.
#
# A test that needs a boot parameter says so in a comment line of its source:
#   # vm-append: ktrace.mask=0x3
# Tests are grouped by that string; each group gets a boot of its own.
#
# Environment: VM_TESTS="00-smoke 10-device-abi" (a subset), VM_APPEND (more
# kernel arguments), VM_ACCEL (default tcg), VM_MEM (MiB, default 512),
# VM_TIMEOUT (seconds per boot, default 1200), VM_TEST_TIMEOUT (seconds per
# test, default 300), VM_NET=user (a virtio NIC on QEMU's user network, the
# host at 10.0.2.2; default: no network).  `scripts/vmtest.sh --shell`: an
# interactive shell.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/tap.sh

KCONFIG=${KCONFIG:-vm}
top=$PWD
. scripts/kver.sh
# VM_KERNEL, VM_INITRD: another kernel and initramfs; KCONFIG then only
# names the results (scripts/check-stock.sh: a stock Debian kernel).
kernel=${VM_KERNEL:-${kver_objdir#"$top"/}/arch/x86/boot/bzImage}
initrd=${VM_INITRD:-build/vm/initramfs.cpio}
if [ -n "${VM_KERNEL:-}" ]; then
	pfx=build/results/vm-$KCONFIG
	what=$KCONFIG			# e.g. stock-6.12.117+deb12-amd64
else
	pfx=build/results/vm-$KVER-$KCONFIG
	what="Linux $KVER $KCONFIG"
fi
vm_timeout=${VM_TIMEOUT:-1200}
test_timeout=${VM_TEST_TIMEOUT:-300}
# Splats are looked for in kernel lines, which carry a [seconds] stamp
# (PRINTK_TIME), both on the console (loglevel=5 keeps WARN splats there)
# and in the whole kernel log the guest prints at the end, whose lines
# cannot be broken by a test's output.
stamp='\[ *[0-9]+\.[0-9]+\] '
splat="$stamp.*(BUG:|WARNING:|Oops|general protection fault|kernel BUG at|UBSAN:"
splat+="|possible (circular|recursive) locking|inconsistent lock state"
splat+="|suspicious RCU usage|DEBUG_LOCKS_WARN_ON|INFO: task .* blocked"
splat+="|detected stalls|Unable to handle kernel)"

for f in "$kernel" "$initrd"; do
	[ -f "$f" ] || die "no $f: run 'make vmtest' (or make kernel initramfs)"
done

# qemu_cmd ARGS: the QEMU command line, in $cmd, with ARGS for the kernel
qemu_cmd() {
	local net=(-net none)
	[ "${VM_NET:-}" != user ] || net=(-netdev user,id=n0 -device virtio-net-pci,netdev=n0)
	cmd=(qemu-system-x86_64 -accel "${VM_ACCEL:-tcg}" -smp 4 -m "${VM_MEM:-512}"
	     -nographic -no-reboot "${net[@]}" -kernel "$kernel" -initrd "$initrd"
	     -append "console=ttyS0 panic=-1 loglevel=5 nokaslr $1")
}

if [ "${1:-}" = --shell ]; then
	msg "interactive VM ($what kernel); 'poweroff -f' or Ctrl-A X leaves"
	qemu_cmd "kt_shell=1 ${VM_APPEND:-}"
	exec "${cmd[@]}"
fi

# The tests, and the vm-append string of each
declare -A src=()
names=()
for f in tests/vm/[0-9]*.sh tests/vm/[0-9]*.c; do
	[ -f "$f" ] || continue
	n=${f##*/}
	src[${n%.*}]=$f
done
mapfile -t names < <(printf '%s\n' "${!src[@]}" | sort)
if [ -n "${VM_TESTS:-}" ]; then
	names=()
	for n in $VM_TESTS; do
		n=${n##*/}; n=${n%.sh}; n=${n%.c}
		[ -n "${src[$n]:-}" ] || die "VM_TESTS: no test $n in tests/vm"
		names+=("$n")
	done
fi
[ ${#names[@]} -gt 0 ] || die "no tests in tests/vm"

vm_append_of() {
	sed -n 's@^[[:space:]]*\(#\|//\|/\*\|\*\)[[:space:]]*vm-append:[[:space:]]*@@p' "$1" |
		head -n 1 | sed 's@[[:space:]]*\(\*/\)\{0,1\}[[:space:]]*$@@'
}
declare -A group=()	# "x" + append string -> comma-separated test names
order=()
for n in "${names[@]}"; do
	key=x$(vm_append_of "${src[$n]}")
	[ -n "${group[$key]+set}" ] || order+=("$key")
	group[$key]+=${group[$key]:+,}$n
done

# Keep the console lines, show progress: one line per test as it ends.
progress() {
	awk -v out="$1" '
		{ gsub(/\r/, ""); print > out; fflush(out) }
		/@@VM-BOOTED@@/ { sub(/.*@@VM-BOOTED@@ */, ""); print "ktrace: vm:   booted, " $0; fflush() }
		/@@TAP-BEGIN / { pass = fail = 0 }
		/^ok( |$)/ { pass++ }
		/^not ok( |$)/ { fail++ }
		/@@TAP-END / {
			sub(/.*@@TAP-END /, ""); split($0, a, " "); sub(/[^0-9]*$/, "", a[2])
			printf "ktrace: vm:   %s: %d ok, %d not ok (%s)\n", a[1], pass, fail, a[2]
			fflush()
		}'
}

# Split a console log into the TAP files; print "begin NAME" / "end NAME RC".
# Kernel lines and what is left of a broken marker stay out of the TAP.
split_console() {
	awk -v pfx="$pfx" '
		function emit(s) {
			if (cur != "" && s !~ /^(@*|\[ *[0-9]+\.[0-9]+\] .*)$/)
				print s > (pfx "-" cur ".tap")
		}
		/@@DMESG-BEGIN@@/ { cur = "" }
		(i = index($0, "@@TAP-BEGIN ")) > 0 {
			emit(substr($0, 1, i - 1))
			name = substr($0, i + 12); sub(/[@ ].*/, "", name)
			cur = name; printf "" > (pfx "-" cur ".tap")
			print "begin " name
			next
		}
		(i = index($0, "@@TAP-END ")) > 0 {
			emit(substr($0, 1, i - 1))
			# a kernel message may break into the marker: take what counts
			split(substr($0, i + 10), a, " ")
			sub(/^rc=/, "", a[2]); sub(/[^0-9].*/, "", a[2])
			if (cur != "") close(pfx "-" cur ".tap")
			print "end " a[1] " " a[2]
			cur = ""
			next
		}
		{ emit($0) }' "$1"
}

# kernel_check WHAT OFFENDING-LINES: one line of vm-$KCONFIG-kernel.tap, "ok"
# when there is nothing offending; else "not ok", the lines shown and kept.
kernel_check() {
	if [ -z "$2" ]; then
		echo "ok - $1$label" >>"$pfx-kernel.tap"
		return
	fi
	{ echo "not ok - $1$label"; sed 's/^/# /' <<<"$2"; } >>"$pfx-kernel.tap"
	msg "vm: not ok - $1$label (console log: $pfx-console.log):" >&2
	sed 's/^/    /' <<<"$2" >&2
}

# One boot: the tests in $1 (comma-separated), extra kernel arguments $2.
boot() {
	local tests=$1 append=$2 log=build/vm/console-$KVER-$KCONFIG-$nboot.log
	local start=$SECONDS rc status n rc_n cmd
	msg "vm: boot $nboot ($what kernel, ${VM_ACCEL:-tcg}, 4 vCPUs${append:+, $append}): ${tests//,/ }"
	set +e
	qemu_cmd "kt_tests=$tests kt_timeout=$test_timeout $append ${VM_APPEND:-}"
	timeout -k 10 "$vm_timeout" "${cmd[@]}" </dev/null 2>&1 | progress "$log"
	rc=${PIPESTATUS[0]}
	set -e
	msg "vm: boot $nboot finished in $((SECONDS - start))s"
	{ echo "===== ktrace: boot $nboot: ${tests//,/ }${append:+ (vm-append: $append)}"; cat "$log"; } \
		>>"$pfx-console.log"

	status=$(split_console "$log")
	for n in ${tests//,/ }; do
		if ! grep -qx "begin $n" <<<"$status"; then
			echo "not ok - $n did not run (the VM stopped before it)" >"$pfx-$n.tap"
		elif ! rc_n=$(grep -m1 "^end $n " <<<"$status"); then
			echo "not ok - $n was cut off (VM timeout, panic or hang)" >>"$pfx-$n.tap"
		else
			tap_verdict "$pfx-$n.tap" "$n" "${rc_n##* }"
		fi
	done

	label=
	[ ${#order[@]} -eq 1 ] || label=" (boot $nboot${append:+: $append})"
	kernel_check "kernel booted" \
		"$(grep -q '@@VM-BOOTED@@' "$log" || echo "/init never started")"
	# a panic leaves no kernel log dump: look at the console, where the
	# line may be broken by a test's output
	kernel_check "no panic" \
		"$(grep -E 'Kernel panic|panic - not syncing' "$log" | head -n 5)"
	kernel_check "no WARNING/BUG/KASAN/lockdep splat" \
		"$(grep -E "$splat" "$log" | awk '!seen[$0]++' | head -n 40)"
	kernel_check "VM exited in time" \
		"$(if [ "$rc" = 124 ] || [ "$rc" = 137 ]; then echo "killed after ${vm_timeout}s"; fi)"
}

mkdir -p build/results build/vm
rm -f "$pfx"-*.tap "$pfx"-console.log build/vm/console-"$KVER-$KCONFIG"-*.log
start=$SECONDS
nboot=0
for key in "${order[@]}"; do
	nboot=$((nboot + 1))
	boot "${group[$key]}" "${key#x}"
done
read -r pass fail < <(tap_counts "$pfx"-*.tap)
msg "vm ($what): $pass passed, $fail failed in $((SECONDS - start))s; results in $pfx-*.tap"
[ "$fail" -eq 0 ]
