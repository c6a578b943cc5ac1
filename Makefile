# SPDX-License-Identifier: GPL-2.0
#
# ktrace: top-level Makefile.  `make` builds the tools, `make check` runs every
# test (host and in-VM), `make demo` boots the patched kernel and traces a
# workload.  Each directory owns a fragment (*.mk) included below.

VERSION		:= 0.1.0
CC		?= cc
CFLAGS		?= -O2 -g
KT_CFLAGS	:= -std=gnu11 -Wall -Wextra -Wno-unused-parameter \
		   -Iinclude/uapi -Ilib -DKTRACE_VERSION='"$(VERSION)"'
O		:= build
PREFIX		?= /usr/local

.PHONY: all tools check check-host vmtest kernel patch demo clean
all: tools

include lib/lib.mk
include ktrace/ktrace.mk
include dtrace/dtrace.mk
include user/user.mk
include install.mk
include tests/tests.mk
include scripts/kernel.mk
include module/module.mk

clean:
	rm -rf $(O)/tools $(O)/results

demo:
	@scripts/demo.sh
