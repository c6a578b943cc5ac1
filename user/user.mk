# SPDX-License-Identifier: GPL-2.0
# user: libktrace (static and shared), the ktrace-run command and the
# programs the user tests and bench trace.  install.mk installs them, with
# ktrace_user.h and libktrace.pc (from user/libktrace.pc.in).
# Owned by user/; included by the top-level Makefile after dtrace/dtrace.mk.
#
#   build/tools/libktrace.so.0, libktrace.so -> it, libktrace.a
#   build/tools/ktrace-run
#   build/tests/user/*      make user-test-progs (the host tests do)
#
# The library's objects are built position-independent with hidden
# visibility: it exports ktrace_user_*() and the -finstrument-functions
# hooks, nothing else (lib/ktfile_write.c and lib/files.c go in, hidden).

LIBKTRACE_SRCS	:= user/stream.c user/maps.c user/func.c user/stack.c user/env.c user/filter.c \
		   lib/ktfile_write.c lib/files.c lib/funcpat.c
LIBKTRACE_OBJS	:= $(LIBKTRACE_SRCS:%.c=$(O)/obj/pic/%.o)
LIBKTRACE_SO	:= $(O)/tools/libktrace.so.0
LIBKTRACE_A	:= $(O)/tools/libktrace.a
USER_CFLAGS	:= $(CFLAGS) $(KT_CFLAGS) -fPIC -fvisibility=hidden -pthread -Iuser
TOOLS		+= $(LIBKTRACE_SO) $(O)/tools/libktrace.so $(LIBKTRACE_A) \
		   $(O)/tools/ktrace-run

.PHONY: libktrace ktrace-run
libktrace: $(LIBKTRACE_SO) $(O)/tools/libktrace.so $(LIBKTRACE_A) ## build/tools/libktrace.so.0, .so, .a
ktrace-run: $(O)/tools/ktrace-run ## build/tools/ktrace-run, runs a program traced by libktrace
## user-test-progs: the programs the user tests and bench trace (build/tests/user)

$(O)/obj/pic/%.o: %.c $(O)/obj/pic/%.d
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) $(KT_DEPFLAGS) -c -o $@ $<

# dlwrap.c: the shared library only (a static program has no next dlclose)
$(LIBKTRACE_SO): $(LIBKTRACE_OBJS) $(O)/obj/pic/user/dlwrap.o
	@mkdir -p $(@D)
	$(CC) $(USER_CFLAGS) -shared -Wl,-soname,libktrace.so.0 -Wl,-z,defs \
		-o $@ $^ -ldl

$(O)/tools/libktrace.so: $(LIBKTRACE_SO)
	ln -sf libktrace.so.0 $@

$(LIBKTRACE_A): $(LIBKTRACE_OBJS)
	@mkdir -p $(@D)
	rm -f $@
	$(AR) rcs $@ $^

# ring_drain.c: ktrace-run's ring ingestion, apart for tests/fuzz (fuzz_ring.c)
KTRACE_RUN_OBJS	:= $(O)/obj/user/ktrace-run.o $(O)/obj/user/ring_drain.o

$(O)/obj/user/%.o: user/%.c $(O)/obj/user/%.d
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(KT_CFLAGS) $(KT_DEPFLAGS) -c -o $@ $<

$(O)/tools/ktrace-run: $(KTRACE_RUN_OBJS) $(LIBKT)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -o $@ $(KTRACE_RUN_OBJS) $(LIBKT) $(KT_LDLIBS)

# ---- programs to trace: tests/user/*.c --------------------------------------
#
# calls: threads, recursion, a shared library (libcalls.so), fork, an
# inlined function and a .cold part; built PIE (calls), not PIE
# (calls-nopie) and stripped with its debug info apart (calls-stripped +
# calls-stripped.debug, found by debuglink); all with -finstrument-functions
# and linked with nothing of ours: LD_PRELOAD brings libktrace.
UT		:= $(O)/tests/user
UT_FLAGS	:= -O2 -g -finstrument-functions -pthread
USER_TEST_PROGS	:= $(UT)/libcalls.so $(UT)/calls $(UT)/calls-nopie $(UT)/calls-stripped \
		   $(UT)/events $(UT)/events-static $(UT)/sigstress $(UT)/jumps $(UT)/loop \
		   $(UT)/loop-plain $(UT)/loop-pg $(UT)/kfake $(UT)/dlopen $(UT)/hostile-ring \
		   $(UT)/stacks \
		   $(if $(shell command -v $(CXX)),$(UT)/exceptions)

.PHONY: user-test-progs
user-test-progs: $(LIBKTRACE_SO) $(O)/tools/libktrace.so $(LIBKTRACE_A) $(O)/tools/dtrace $(O)/tools/ktrace \
		 $(O)/tools/ktrace-run $(USER_TEST_PROGS)

$(UT)/libcalls.so: tests/user/libcalls.c tests/user/calls.h
	@mkdir -p $(@D)
	$(CC) $(UT_FLAGS) -fPIC -shared -o $@ $<

$(UT)/calls: tests/user/calls.c tests/user/calls.h $(UT)/libcalls.so
	@mkdir -p $(@D)
	$(CC) $(UT_FLAGS) -pie -fPIE -o $@ $< -L$(UT) -lcalls -Wl,-rpath,'$$ORIGIN'

$(UT)/calls-nopie: tests/user/calls.c tests/user/calls.h $(UT)/libcalls.so
	@mkdir -p $(@D)
	$(CC) $(UT_FLAGS) -no-pie -fno-PIE -o $@ $< -L$(UT) -lcalls -Wl,-rpath,'$$ORIGIN'

$(UT)/calls-stripped: $(UT)/calls
	objcopy --only-keep-debug $< $@.debug
	objcopy --strip-all --add-gnu-debuglink=$@.debug $< $@

# TRACE() events, linked with the shared library, and with the static one
$(UT)/events: tests/user/events.c user/ktrace_user.h $(LIBKTRACE_SO) $(O)/tools/libktrace.so
	@mkdir -p $(@D)
	$(CC) -O2 -g -pthread -Iuser -o $@ $< -L$(O)/tools -lktrace \
		-Wl,-rpath,'$$ORIGIN/../../tools'

$(UT)/events-static: tests/user/events.c user/ktrace_user.h $(LIBKTRACE_A)
	@mkdir -p $(@D)
	$(CC) -O2 -g -pthread -Iuser -o $@ $< $(LIBKTRACE_A)

$(UT)/sigstress: tests/user/sigstress.c user/ktrace_user.h $(LIBKTRACE_SO) $(O)/tools/libktrace.so
	@mkdir -p $(@D)
	$(CC) -O2 -g -pthread -Iuser -o $@ $< -L$(O)/tools -lktrace \
		-Wl,-rpath,'$$ORIGIN/../../tools'

# knows its own call paths: ktrace_user_stack(), dtrace --stacks and --stack-budget
$(UT)/stacks: tests/user/stacks.c user/ktrace_user.h $(LIBKTRACE_SO) $(O)/tools/libktrace.so
	@mkdir -p $(@D)
	$(CC) $(UT_FLAGS) -Iuser -o $@ $< -L$(O)/tools -lktrace -Wl,-rpath,'$$ORIGIN/../../tools'

# a program attacking ktrace-run through its rings (the ring protocol's structs)
$(UT)/hostile-ring: tests/user/hostile-ring.c user/ring.h $(LIBKTRACE_SO) $(O)/tools/libktrace.so
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(KT_CFLAGS) -pthread -Iuser -o $@ $< lib/ktfile_write.c lib/files.c \
		-L$(O)/tools -lktrace -Wl,-rpath,'$$ORIGIN/../../tools'

$(UT)/dlopen: tests/user/dlopen.c
	@mkdir -p $(@D)
	$(CC) $(UT_FLAGS) -o $@ $<

$(UT)/exceptions: tests/user/exceptions.cc
	@mkdir -p $(@D)
	$(CXX) $(UT_FLAGS) -o $@ $<

$(UT)/jumps: tests/user/jumps.c
	@mkdir -p $(@D)
	$(CC) $(UT_FLAGS) -o $@ $<

# the bench loop: instrumented (ktrace, LTTng), -pg (uftrace), and plain
$(UT)/loop: tests/user/loop.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -finstrument-functions -o $@ $<

$(UT)/loop-pg: tests/user/loop.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -pg -o $@ $<

$(UT)/loop-plain: tests/user/loop.c
	@mkdir -p $(@D)
	$(CC) -O2 -g -o $@ $<

# writes a kernel stream for a user one, to test the merged call tree
$(UT)/kfake: tests/user/kfake.c $(LIB_HDRS) $(LIBKT)
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $(KT_CFLAGS) -o $@ $< $(LIBKT) $(KT_LDLIBS)
