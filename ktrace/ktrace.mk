# SPDX-License-Identifier: GPL-2.0
# ktrace: the collector, built dynamic for the host and static for the VM's
# initramfs.  Owned by ktrace/; included by the top-level Makefile after
# lib/lib.mk.  Its host test builds its own fake device (tests/host/40-*).

KTRACE_SRCS	:= $(wildcard ktrace/*.c)
KTRACE_DEPS	:= $(KTRACE_SRCS) $(wildcard ktrace/*.h) $(LIB_HDRS)
TOOLS		+= $(O)/tools/ktrace $(O)/tools/static/ktrace

$(O)/tools/ktrace: $(KTRACE_DEPS) $(LIBKT)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(KT_CFLAGS) -Iktrace -pthread -o $@ $(KTRACE_SRCS) $(LIBKT)

$(O)/tools/static/ktrace: $(KTRACE_DEPS) $(LIBKT_STATIC)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(KT_CFLAGS) -Iktrace -pthread -static -o $@ $(KTRACE_SRCS) $(LIBKT_STATIC)
