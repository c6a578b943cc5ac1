# SPDX-License-Identifier: GPL-2.0
# ktrace: dependencies, the kernel patch, the test kernel and `make check`.
# KVER picks the Linux version (one of kernel-patch/<version>/: 6.1, 6.12;
# default the newest); every target below works on that version.
#   make patch [KVER=6.1]      build/patch/$(KVER)/ktrace.patch (scripts/mkpatch.sh)
#   make kernel [KVER=..] [KCONFIG=vm|debug|rt]
#               build/kernel-$(KVER)-$(KCONFIG)/arch/x86/boot/bzImage
#               [KTRACE_PATCH=/dev/null]  (the plain kernel, for comparisons)
#   make vmtest [KVER=..] [KCONFIG=..] [VM_TESTS="00-smoke ..."] [VM_APPEND="..."]
#   make vmshell [KVER=..] [KCONFIG=..]  the test VM with an interactive shell
#   make check-series [KVER=..]  every patch of the series builds on its own
#   make check [CHECK_CONFIGS="6.1:vm 6.12:vm 6.12:rt"]  (the default)

KVER		?= $(shell ls -d kernel-patch/[0-9]*/ | sed 's|kernel-patch/||; s|/||' | sort -V | tail -n 1)
KCONFIG		?= vm
KERNEL_IMAGE	:= $(O)/kernel-$(KVER)-$(KCONFIG)/arch/x86/boot/bzImage
KTRACE_PATCH	?= $(O)/patch/$(KVER)/ktrace.patch
export KVER

.PHONY: deps
deps: ## install the packages the build and the tests need (scripts/deps.sh)
	@scripts/deps.sh

# One mkpatch at a time: it rewrites build/patch/$(KVER).
patch: ## build/patch/KVER/ktrace.patch and series/ (needs linux-source-KVER)
	@mkdir -p $(O)/patch
	@flock $(O)/.patch.lock bash scripts/mkpatch.sh

# every patch of the series builds on its own (about 20 minutes cold)
.PHONY: check-series
check-series: ## build the kernel after each patch of the series (about 20 min)
	@scripts/check-series.sh

kernel: patch ## build/kernel-KVER-KCONFIG/arch/x86/boot/bzImage [KCONFIG=vm|debug|rt]
	@KCONFIG=$(KCONFIG) KTRACE_PATCH=$(KTRACE_PATCH) scripts/kernel.sh

vmtest: kernel initramfs ## boot that kernel in QEMU and run tests/vm [VM_TESTS=...]
	@KCONFIG=$(KCONFIG) scripts/vmtest.sh

.PHONY: vmshell
vmshell: kernel initramfs ## the test VM with an interactive shell
	@KCONFIG=$(KCONFIG) scripts/vmtest.sh --shell

check: ## everything: builds, host tests, VM tests on CHECK_CONFIGS' kernels
	@scripts/check.sh
