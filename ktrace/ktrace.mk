# SPDX-License-Identifier: GPL-2.0
# ktrace: the collector, built dynamic for the host and static for the VM's
# initramfs.  Owned by ktrace/; included by the top-level Makefile after
# lib/lib.mk.  Its host test builds its own fake device (tests/host/40-*).

KTRACE_SRCS	:= $(wildcard ktrace/*.c)
KTRACE_OBJS	:= $(KTRACE_SRCS:%.c=$(O)/obj/%.o)
TOOLS		+= $(O)/tools/ktrace $(O)/tools/static/ktrace
# probe_dwarf.c reads ELF and DWARF with libdw, as dtrace does (dtrace.mk
# says why these libraries); debuginfod comes through libdw's own client.
# --send and --listen compress their frames with libzstd, and with --key
# authenticate and encrypt them with libsodium (netauth.c).
KTRACE_LDLIBS		= $(DTRACE_LDLIBS) -lzstd -lsodium
KTRACE_STATIC_LDLIBS	= $(DTRACE_STATIC_LDLIBS) -lzstd -lsodium

.PHONY: ktrace
ktrace: $(O)/tools/ktrace ## build/tools/ktrace, the collector

# One set of objects for both: nothing in them depends on how they are linked.
$(O)/obj/ktrace/%.o: ktrace/%.c $(O)/obj/ktrace/%.d
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(KT_CFLAGS) $(KT_DEPFLAGS) -Iktrace -pthread -c -o $@ $<

$(O)/tools/ktrace: $(KTRACE_OBJS) $(LIBKT)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -pthread -o $@ $(KTRACE_OBJS) $(LIBKT) $(KTRACE_LDLIBS)

$(O)/tools/static/ktrace: $(KTRACE_OBJS) $(LIBKT_STATIC)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -pthread -static -o $@ $(KTRACE_OBJS) $(LIBKT_STATIC) \
		$(KTRACE_STATIC_LDLIBS)
