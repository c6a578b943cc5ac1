# SPDX-License-Identifier: GPL-2.0
# Sourced by the host tests that compile kernel code for user space
# (30-buffer-model, 31-trace-macros): make_kshim DIR makes DIR an include
# directory where every kernel header they use is tests/host/kshim.h, but
# <linux/ktrace.h> and <uapi/linux/ktrace.h>, which are the real ones.
make_kshim() {
	local dir=$1 h
	for h in linux/cpu.h linux/cpuhotplug.h linux/irq_work.h linux/log2.h \
		linux/mm.h linux/moduleparam.h linux/percpu.h linux/rcupdate.h \
		linux/sched.h linux/sched/signal.h linux/slab.h linux/uaccess.h \
		linux/cache.h linux/mutex.h linux/wait.h linux/compiler.h \
		linux/jump_label.h linux/kernel.h linux/types.h linux/ioctl.h \
		asm/tsc.h asm/local.h; do
		mkdir -p "$(dirname "$dir/$h")"
		echo "#include \"$ROOT/tests/host/kshim.h\"" >"$dir/$h"
	done
	mkdir -p "$dir/uapi/linux"
	ln -sf "$ROOT/include/uapi/linux/ktrace.h" "$dir/uapi/linux/ktrace.h"
	ln -sf "$ROOT/include/linux/ktrace.h" "$dir/linux/ktrace.h"
}
