#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# dtrace's decoded arguments on hand-made traces: kernel addresses named
# from BASE.kallsyms (found beside the files, given with --kallsyms, or
# among the arguments), irqs named from BASE.irqs, --raw, and both files as
# hostile input (bad lines, long lines, NUL bytes, a FIFO, no symbols).
# The name tables themselves: 55-dtrace-format.sh and 59-names.sh.
. "$(dirname "$0")/dtrace-mktrace.sh"

TIMER=$(((1 << 10) | (1 << 24)))	# timer:expire, then a CONT with the function
NMI=$(((1 << 3) | (3 << 24)))		# irq:nmi, then a CONT with the address
IRQ=$(((1 << 3) | (1 << 24)))		# irq:entry
CONT_END=$(((1 << 22) | (1 << 23)))
# timer TSC ADDRESS: a timer:expire record pair with function ADDRESS
timer() { echo "$1:$TIMER:0:1 $1:$((CONT_END | (1 << 10))):$((0x${2:8})):$((0x${2:0:8}))"; }

cat >k.kallsyms <<'K'
ffffffff81000000 T _stext
ffffffff81000000 T _text
ffffffff8142d130 t hrtimer_wakeup
ffffffff8142d200 D some_data
ffffffff8142d300 W weak_fn
ffffffff82000000 r read_only
ffffffffc0001000 t x_timer_fn	[x_mod]
K
cat >k.irqs <<'I'
           CPU0       CPU1       
  9:          0          0   IO-APIC   9-fasteoi   acpi, i801_smbus
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 38:          0       6275 PCI-MSIX-0000:00:03.0   1-edge      virtio2-input.0
 40:          0          0 PCI-MSIX-0000:00:04.0   0-edge
NMI:          0          0   Non-maskable interrupts
I
# shellcheck disable=SC2046
$MKTRACE k.cpu0 --cpu 0 $(timer 1000 ffffffff8142d140) $(timer 2000 ffffffff8142d250) \
	$(timer 3000 ffffffffc0001010) $(timer 4000 0000000000400000) \
	$(timer 5000 ffffffff8142d300) $(timer 6000 ffffffffc0201000) $(timer 7000 ffffffff81000000) \
	"8000:$NMI:1:0" "8000:$((CONT_END | (1 << 3))):$((0x8142d131)):$((0xffffffff))" \
	"9000:$IRQ:38:35" "9100:$IRQ:9:33" "9200:$IRQ:24:34" "9300:$IRQ:40:36" "9400:$IRQ:7:37"

dt k.cpu0
check "kallsyms beside the files: a timer's function as symbol+offset" \
	'[ $rc -eq 0 ] && grep -q "function hrtimer_wakeup+0x10$" out'
check "data symbols are not used: the text symbol before them" \
	'grep -q "function hrtimer_wakeup+0x120$" out'
check "a module's symbol with its module" 'grep -q "function x_timer_fn+0x10 \[x_mod\]$" out'
check "an address below every symbol stays hex" 'grep -q "function 400000$" out'
check "weak symbols are text" 'grep -q "function weak_fn+0x0$" out'
check "more than 1 MiB past a symbol stays hex" 'grep -q "function ffffffffc0201000$" out'
check "of two names at one address, the first" 'grep -q "function _stext+0x0$" out'
check "the address an NMI interrupted" 'grep -q "nmi on cpu 1, back-to-back 0, at hrtimer_wakeup+0x1$" out'
check "irqs named from BASE.irqs" 'grep -q "irq 38 (virtio2-input.0) entry, vector 35$" out'
check "an irq with two handlers" 'grep -q "irq 9 (acpi, i801_smbus) entry, vector 33$" out'
check "handler names with a colon" 'grep -q "irq 24 (ACPI:Ged) entry" out'
check "an irq without handlers, an irq not in the file: numbers" \
	'grep -q "irq 40 entry, vector 36$" out && grep -q "irq 7 entry, vector 37$" out'
check "nothing said" '[ ! -s err ]'

dt --raw k.cpu0
check "--raw: addresses in hex, irqs as numbers" \
	'[ $rc -eq 0 ] && grep -q "function ffffffff8142d140$" out && grep -q "irq 38 entry" out &&
	 ! grep -q "hrtimer_wakeup" out'

mkdir other && mv k.kallsyms k.irqs other/
dt k.cpu0
check "no files beside: hex and numbers" \
	'[ $rc -eq 0 ] && grep -q "function ffffffff8142d140$" out && grep -q "irq 38 entry" out'
dt --kallsyms=other/k.kallsyms --irqs other/k.irqs k.cpu0
check "--kallsyms and --irqs" \
	'[ $rc -eq 0 ] && grep -q "function hrtimer_wakeup+0x10$" out && grep -q "irq 38 (virtio2" out'
dt k.cpu0 other/k.kallsyms other/k.irqs
check "kallsyms and irqs files among the arguments: used, not read as traces" \
	'[ $rc -eq 0 ] && grep -q "function hrtimer_wakeup+0x10$" out && grep -q "irq 38 (virtio2" out'
mv other/k.kallsyms other/k.irqs .
dt -o k.kallsyms k.cpu0
check "-o onto the kallsyms found beside: refused" \
	'[ $rc -ne 0 ] && [ "$(wc -l <k.kallsyms)" = 7 ]'

# hostile kallsyms: the good lines are used, the first bad one named
cp k.kallsyms good.kallsyms
{
	echo "not a symbol line"
	echo "ffffffff8142d130"
	echo "zzzzffff8142d130 t bad_address"
	echo "1ffffffff8142d130 t too_many_digits"
	printf 'ffffffff8142d150 t esc\033[31mape\n'
	printf 'ffffffff8142d160 t nul\0byte\n'
	head -c 100000 /dev/zero | tr '\0' a | sed 's/^/ffffffff8142d170 t /'; echo
	echo "ffffffff8142d138 t $(head -c 400 /dev/zero | tr '\0' b)"
	echo "ffffffff8142d180 t unclosed	[mod"
} >>k.kallsyms
dt k.cpu0
check "bad lines skipped, the first named with file and line, counted" \
	'[ $rc -eq 0 ] && grep -q "k.kallsyms:8: not a kallsyms line" err &&
	 grep -q "; 8 such lines skipped" err && [ "$(wc -l <err)" = 1 ]'
check "... the good lines still name addresses" 'grep -q "function x_timer_fn+0x10 \[x_mod\]$" out'
check "... a long name is cut" \
	"grep -q 'function b\\{160\\}+0x8\$' out"
cp good.kallsyms k.kallsyms
printf 'ffffffff8142d130 D data_only\n' >k.kallsyms
dt k.cpu0
check "no text symbols beside the files: a warning, addresses in hex" \
	'[ $rc -eq 0 ] && grep -q "no text symbols" err && grep -q "function ffffffff8142d140$" out'
dt --kallsyms=k.kallsyms k.cpu0
check "no text symbols in --kallsyms: an error" \
	'[ $rc -ne 0 ] && grep -q "k.kallsyms: no kernel symbols" err'
rm k.kallsyms && mkfifo k.kallsyms
dt k.cpu0
check "a FIFO at BASE.kallsyms is not read (no hang)" \
	'[ $rc -eq 0 ] && grep -q "k.kallsyms: not a regular file" err'
rm k.kallsyms
head -c 200000 /dev/urandom >k.irqs
dt k.cpu0
check "random bytes as BASE.irqs: no crash" '[ $rc -eq 0 ] && grep -q "irq 38 entry" out'

done_testing
