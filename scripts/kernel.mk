# SPDX-License-Identifier: GPL-2.0
# ktrace: dependencies, the kernel patch, the test kernel and `make check`.
#   make patch                 build/patch/ktrace.patch (scripts/mkpatch.sh)
#   make kernel [KCONFIG=vm|debug]   build/kernel-$(KCONFIG)/arch/x86/boot/bzImage
#               [KTRACE_PATCH=/dev/null]  (the plain kernel, for comparisons)
#   make vmtest [KCONFIG=..] [VM_TESTS="00-smoke ..."] [VM_APPEND="..."]
#   make vmshell [KCONFIG=..]  the test VM with an interactive shell
#   make check [CHECK_CONFIGS="vm debug"]

KCONFIG		?= vm
KERNEL_IMAGE	:= $(O)/kernel-$(KCONFIG)/arch/x86/boot/bzImage
KTRACE_PATCH	?= $(O)/patch/ktrace.patch

.PHONY: deps
deps:
	@scripts/deps.sh

# Without scripts/mkpatch.sh the patch is empty and the kernel is plain
# linux-source-6.1.  One mkpatch at a time: it rewrites build/patch.
patch:
	@mkdir -p $(O)/patch
	@if [ -f scripts/mkpatch.sh ]; then flock $(O)/.patch.lock bash scripts/mkpatch.sh; \
	else : > $(O)/patch/ktrace.patch; fi

# every patch of the series builds on its own (about 20 minutes cold)
.PHONY: check-series
check-series:
	@scripts/check-series.sh

kernel: patch
	@KCONFIG=$(KCONFIG) KTRACE_PATCH=$(KTRACE_PATCH) scripts/kernel.sh

vmtest: kernel initramfs
	@KCONFIG=$(KCONFIG) scripts/vmtest.sh

.PHONY: vmshell
vmshell: kernel initramfs
	@KCONFIG=$(KCONFIG) scripts/vmtest.sh --shell

check:
	@scripts/check.sh
