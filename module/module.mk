# SPDX-License-Identifier: GPL-2.0
# module: ktrace.ko for a stock kernel, out of tree with kbuild M=.
#
#   make module [KVER=6.1.0-57-amd64] [KDIR=/lib/modules/$(KVER)/build]
#
# assembles the module's source tree in $(MODULE_SRC) (the same tree DKMS
# gets: Kbuild, dkms.conf, kernel/ktrace's buffer.c, dev.c, internal.h and
# module.c, include/) and builds $(MODULE_SRC)/ktrace.ko against KDIR: the
# running kernel's headers by default, or any linux-headers-* tree.
# `make install` also puts the tree in $(DESTDIR)/usr/src/ktrace-$(VERSION)
# for `dkms install ktrace/$(VERSION)` (module/README of the repo's README).

# KVER given on the command line (or in the environment) is the release to
# build for; otherwise it is kernel.mk's series version, and the module is
# for the running kernel.
MODULE_KREL	:= $(if $(filter command line environment,$(origin KVER)),$(KVER),$(shell uname -r))
KDIR		?= /lib/modules/$(MODULE_KREL)/build
MODULE_SRC	:= $(O)/module/ktrace-$(VERSION)
MODULE_FILES	:= kernel/ktrace/buffer.c kernel/ktrace/dev.c kernel/ktrace/internal.h \
		   kernel/ktrace/probe.c \
		   kernel/ktrace/module.c include/linux/ktrace.h \
		   include/uapi/linux/ktrace.h module/Kbuild module/dkms.conf.in
DKMS_SRCDIR	= $(DESTDIR)/usr/src/ktrace-$(VERSION)

.PHONY: module module-src install-dkms
module-src: $(MODULE_SRC)/.stamp ## build/module/ktrace-VERSION: the module's source tree
$(MODULE_SRC)/.stamp: $(MODULE_FILES) module/module.mk Makefile
	rm -rf $(MODULE_SRC)
	mkdir -p $(MODULE_SRC)/include/linux $(MODULE_SRC)/include/uapi/linux
	cp kernel/ktrace/buffer.c kernel/ktrace/dev.c kernel/ktrace/internal.h \
		kernel/ktrace/module.c kernel/ktrace/probe.c module/Kbuild $(MODULE_SRC)/
	cp include/linux/ktrace.h $(MODULE_SRC)/include/linux/
	cp include/uapi/linux/ktrace.h $(MODULE_SRC)/include/uapi/linux/
	sed 's|@VERSION@|$(VERSION)|' module/dkms.conf.in >$(MODULE_SRC)/dkms.conf
	touch $@

module: module-src ## ktrace.ko for a stock kernel [KVER=] [KDIR=] (needs its headers)
	@[ -f $(KDIR)/Makefile ] || { echo "ktrace: make module: no kernel headers in $(KDIR)" \
		"(apt-get install linux-headers-$(MODULE_KREL), or KDIR=)" >&2; exit 1; }
	$(MAKE) -C $(KDIR) M=$(abspath $(MODULE_SRC)) modules
	@echo "ktrace: built $(MODULE_SRC)/ktrace.ko for $$(modinfo -F vermagic $(MODULE_SRC)/ktrace.ko)"

# The module's source for DKMS: dkms add/build/install ktrace/$(VERSION).
install-dkms: module-src ## the module's source in DESTDIR/usr/src for dkms
	rm -rf $(DKMS_SRCDIR)
	$(INSTALL) -d $(DKMS_SRCDIR)/include/linux $(DKMS_SRCDIR)/include/uapi/linux
	cd $(MODULE_SRC) && $(INSTALL) -m 644 Kbuild dkms.conf buffer.c dev.c internal.h \
		module.c probe.c $(abspath $(DKMS_SRCDIR))
	$(INSTALL) -m 644 $(MODULE_SRC)/include/linux/ktrace.h $(DKMS_SRCDIR)/include/linux
	$(INSTALL) -m 644 $(MODULE_SRC)/include/uapi/linux/ktrace.h $(DKMS_SRCDIR)/include/uapi/linux

# ktrace.ko on Debian's own kernels in QEMU (about a minute a kernel once
# the packages are cached in build/stock).
.PHONY: check-stock
check-stock: ## ktrace.ko on Debian's own 6.1/6.12 (-rt) kernels in QEMU
	@scripts/check-stock.sh

.PHONY: check-stock-net
check-stock-net: ## ktrace --send from a stock-kernel guest (QEMU user net) to a host collector
	@scripts/check-stock-net.sh

# `make install` also installs the module's DKMS source where dkms is
# installed (or with DKMS=1); DKMS=0 never.
DKMS		?= $(if $(shell command -v dkms 2>/dev/null),1,0)
ifeq ($(DKMS),1)
install: install-dkms
uninstall: uninstall-dkms
endif

.PHONY: uninstall-dkms
uninstall-dkms: ## remove what install-dkms installed
	rm -rf $(DKMS_SRCDIR)
