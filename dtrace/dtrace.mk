# SPDX-License-Identifier: GPL-2.0
# dtrace: the merger and printer, built dynamic for the host and static for
# the VM's initramfs; plus the test helpers that share its library.
# Owned by dtrace/; included by the top-level Makefile after lib/lib.mk.

DTRACE_SRCS	:= $(wildcard dtrace/*.c)
DTRACE_OBJS	:= $(DTRACE_SRCS:%.c=$(O)/obj/%.o)
TOOLS		+= $(O)/tools/dtrace $(O)/tools/static/dtrace
# symbols.c reads ELF and DWARF with libdw; its static archive needs the
# compressors it was built with.  C++ names are demangled by libstdc++
# where it is installed (g++), else left as they are.  --format=parquet
# compresses with zstd.
DTRACE_HAVE_CXX		:= $(filter /%,$(shell $(CC) -print-file-name=libstdc++.a))
DTRACE_LDLIBS		:= $(KT_LDLIBS) -ldw -lelf $(if $(DTRACE_HAVE_CXX),-Xlinker --no-as-needed -lstdc++) \
			   -pthread
DTRACE_STATIC_LDLIBS	:= $(KT_LDLIBS) -ldw -lelf -lz -llzma -lbz2 \
			   $(if $(DTRACE_HAVE_CXX),-u __cxa_demangle -lstdc++) -pthread

.PHONY: dtrace
dtrace: $(O)/tools/dtrace ## build/tools/dtrace, the trace merger and printer

# One set of objects for both: nothing in them depends on how they are linked.
$(O)/obj/dtrace/%.o: dtrace/%.c $(O)/obj/dtrace/%.d
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(KT_CFLAGS) $(KT_DEPFLAGS) -Idtrace -pthread -c -o $@ $<

$(O)/tools/dtrace: $(DTRACE_OBJS) $(LIBKT)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -pthread -o $@ $(DTRACE_OBJS) $(LIBKT) $(DTRACE_LDLIBS)

$(O)/tools/static/dtrace: $(DTRACE_OBJS) $(LIBKT_STATIC)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -pthread -static -o $@ $(DTRACE_OBJS) $(LIBKT_STATIC) \
		$(DTRACE_STATIC_LDLIBS)

# Test helpers: the trace file generator, the merge model check and the
# event text checks.  The host tests that need them build them
# (make dtrace-test-tools).
DTRACE_TEST_TOOLS := $(O)/tests/ktgen $(O)/tests/merge-model $(O)/tests/dtrace-format-test

.PHONY: dtrace-test-tools
dtrace-test-tools: $(O)/tools/dtrace $(DTRACE_TEST_TOOLS) ## dtrace and the host tests' trace generator and checkers

$(O)/tests/ktgen: tests/gen/ktgen.c $(LIB_HDRS) $(LIBKT)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(KT_CFLAGS) -o $@ $< $(LIBKT) $(KT_LDLIBS)

$(O)/tests/merge-model: tests/host/merge-model.c $(LIB_HDRS) $(LIBKT)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(KT_CFLAGS) -o $@ $< $(LIBKT) $(KT_LDLIBS)

$(O)/tests/dtrace-format-test: tests/host/dtrace-format-test.c $(LIB_HDRS) $(LIBKT)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(KT_CFLAGS) -o $@ $< $(LIBKT) $(KT_LDLIBS)
