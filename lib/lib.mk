# SPDX-License-Identifier: GPL-2.0
# lib: libkt, the code the tools and tests share (trace files, event tables,
# merge, messages, the pager).  Included first by the top-level Makefile.
#
# Every lib/*.c goes in.  The static tools link the same objects (nothing in
# them depends on how they are linked) from their own copy of the archive.
#
# A fragment adds its tools to `make tools` with TOOLS += path...; the list
# is expanded after every fragment has been read.

LIB_SRCS	:= $(wildcard lib/*.c)
LIB_OBJS	:= $(LIB_SRCS:%.c=$(O)/obj/%.o)
LIB_HDRS	:= $(wildcard lib/*.h) include/uapi/linux/ktrace.h \
		   include/uapi/linux/ktrace_events.h
LIBKT		:= $(O)/tools/libkt.a
LIBKT_STATIC	:= $(O)/tools/static/libkt.a
TOOLS		:=
# compressed trace files (ktfile_zstd.c): every program that links libkt
KT_LDLIBS	:= -lzstd

.SECONDEXPANSION:
tools: $(LIBKT) $(LIBKT_STATIC) $$(TOOLS) ## every tool and library, host and static (build/tools)

# The headers each object includes come from its .d file (KT_DEPFLAGS).
$(O)/obj/lib/%.o: lib/%.c $(O)/obj/lib/%.d
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(KT_CFLAGS) $(KT_DEPFLAGS) -c -o $@ $<

$(LIBKT): $(LIB_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

$(LIBKT_STATIC): $(LIBKT)
	@mkdir -p $(@D)
	cp $< $@
