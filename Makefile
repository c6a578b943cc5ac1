# SPDX-License-Identifier: GPL-2.0
#
# ktrace: top-level Makefile.  `make` builds the tools, `make check` runs every
# test (host and in-VM), `make demo` boots the patched kernel and traces a
# workload, `make help` lists every target.  Each directory owns a fragment
# (*.mk) included below.
#
# `make help` is read from the rules themselves: a target a user may ask for
# is .PHONY and its rule line ends in `## what it builds`.  A .PHONY target
# without one fails tests/host/78-build-targets.sh.

VERSION		:= 0.1.0
CC		?= cc
CFLAGS		?= -O2 -g
KT_CFLAGS	:= -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
		   -Iinclude/uapi -Ilib -DKTRACE_VERSION='"$(VERSION)"'
# Objects ($(O)/obj/...) are compiled with these: each writes a .d file next
# to it naming the headers it included, read back below, so touching a
# header rebuilds exactly the objects that include it.
KT_DEPFLAGS	:= -MMD -MP
O		:= build
PREFIX		?= /usr/local

.PHONY: all tools check check-host vmtest kernel patch demo clean distclean help
all: tools ## the same as tools

include lib/lib.mk
include ktrace/ktrace.mk
include dtrace/dtrace.mk
include user/user.mk
include install.mk
include tests/tests.mk
include scripts/kernel.mk
include module/module.mk

# An object's rule names its .d file too: where that is missing (an object
# built without it), the empty rule below makes the object out of date.
KT_DEPFILES	:= $(patsubst %.o,%.d,$(LIB_OBJS) $(KTRACE_OBJS) $(DTRACE_OBJS) \
		   $(LIBKTRACE_OBJS) $(O)/obj/pic/user/dlwrap.o $(KTRACE_RUN_OBJS))
-include $(wildcard $(KT_DEPFILES))
$(KT_DEPFILES): ;

# clean: every output of the tools and tests in $(O); what is slow or needs
# a download to make again stays: the kernel trees and objects, the patch
# (it needs linux-source), the stock kernels, Debian sources.  distclean
# removes $(O) itself.  ccache's cache is outside $(O): neither touches it.
KT_KEEP		:= kernel-* linux-* patchwork-* patch patch.log check-series stock debsrc \
		   .*.lock
# $(O) must not hold the checkout (O=. or O=..): clean would remove it.
KT_CHECK_O	= @o=$$(realpath -m -- "$(O)" 2>/dev/null) && [ -n "$(O)" ] && \
		  case "$$(pwd -P)/" in "$${o%/}"/*) false ;; esac || \
		  { echo "ktrace: make $@: O=$(O) holds the checkout; not removing it" >&2; exit 1; }

clean: ## remove the tools' and tests' build output (not kernels, patch, caches)
	$(KT_CHECK_O)
	@[ ! -d "$(O)" ] || find "$(O)" -mindepth 1 -maxdepth 1 \
		$(foreach k,$(KT_KEEP),! -name '$(k)') -exec rm -rf -- {} +

distclean: ## remove all of build/ (O=), the kernel trees and the patch included
	$(KT_CHECK_O)
	rm -rf -- "$(O)"

demo: ## boot the vm kernel in QEMU, trace demo/workload.sh, print dtrace's view
	@scripts/demo.sh

# help: each .PHONY target whose rule line ends in `## text`, or named by a
# line `## target: text` (for a rule line another fragment owns): the
# fragments' in their order, then this file's.
KT_MAKEFILE	:= $(firstword $(MAKEFILE_LIST))
help: ## list the targets, with what each builds
	@awk '/^## [a-zA-Z][a-zA-Z0-9_-]*: / { t = $$2; sub(/:$$/, "", t); d = $$0; \
		sub(/^## [^:]*: /, "", d) } \
	     /^[a-zA-Z][a-zA-Z0-9_-]*:.*## / { t = $$1; sub(/:.*/, "", t); d = $$0; \
		sub(/^[^#]*## /, "", d) } \
	     t != "" { printf "  %-18s %s\n", t, d; t = "" }' \
		$(filter-out $(KT_MAKEFILE) %.d,$(MAKEFILE_LIST)) $(KT_MAKEFILE)
