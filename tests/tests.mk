# SPDX-License-Identifier: GPL-2.0
# tests: host tests, and the initramfs for the in-VM tests.
#
# A test is a file named NN-name (a digit first): tests/host/NN-name.sh,
# tests/vm/NN-name.sh or tests/vm/NN-name.c.  Anything else in those
# directories (headers, sourced scripts, helper programs) is support code.
#
# tests/vm/NAME.c -> $(O)/vm/tests/NAME, static, linked with the static libkt
# when lib/ builds one; all of tests/vm/*.c are built (helpers included) and
# land in the VM's /tests, next to tests/vm/*.sh.  The static tools go to /bin.

VM_TEST_SRCS	:= $(wildcard tests/vm/*.c)
VM_TEST_BINS	:= $(VM_TEST_SRCS:tests/vm/%.c=$(O)/vm/tests/%)
VM_TEST_DEPS	:= $(wildcard tests/vm/*.h lib/*.h include/uapi/linux/*.h)

.PHONY: initramfs vm-tests check-quick
check-host: tools ## the host tests (tests/host; HOST_TESTS="NN-name ..." a subset)
	@scripts/run-host-tests.sh

# The host tests make check-quick leaves out: each took 15 s or more on 2 cores
# shared with other test runs (load average about 15), measured with
# scripts/run-host-tests.sh.  A new test is quick until listed here.
HOST_SLOW_TESTS	:= 30-buffer-model 54-file-fuzz 56-dtrace-ctf 57-dtrace-perfetto 59-names \
		   60-user-lib 61-user-calltree 63-user-debsrc 65-user-ring-failed \
		   67-run-hostile-ring 68-run-exhaustion 70-install 72-dtrace-open-special \
		   73-dtrace-torn-merge 78-build-targets 79-user-file-limits 80-user-shapes \
		   83-user-spawn 85-dtrace-names-one-pass 87-dtrace-call-filters 88-user-record-filters \
		   77-dtrace-probes 99-dtrace-probe-latency 97-probe-eval 98-probe-debsrc \
		   95-user-uftrace-suite 96-user-threads-debsrc 110-collect-auth
HOST_SLOW_TESTS	+= 89-dtrace-report 90-dtrace-report-diff 57-dtrace-perfetto-pb 105-collect-faults
HOST_SLOW_TESTS	+= 103-dtrace-parquet
HOST_SLOW_TESTS	+= 101-ktrace-zstd 102-dtrace-zstd-read
HOST_SLOW_TESTS	+= 107-collect-hostile 106-dtrace-machines
HOST_QUICK_TESTS = $(filter-out $(HOST_SLOW_TESTS),\
		   $(patsubst tests/host/%.sh,%,$(wildcard tests/host/[0-9]*.sh)))
check-quick: tools ## the host tests but HOST_SLOW_TESTS (under 2 minutes), "N passed, N failed"
	@HOST_TESTS="$(HOST_QUICK_TESTS)" scripts/run-host-tests.sh
	@scripts/summarize.sh $(HOST_QUICK_TESTS:%=build/results/host-%.tap)

vm-tests: $(VM_TEST_BINS) ## the in-VM test programs (build/vm/tests)

# linked with the static libkt when lib/lib.mk builds one
VM_TEST_LIBS	:= $(LIBKT_STATIC)

$(O)/vm/tests/%: tests/vm/%.c $(VM_TEST_DEPS) $(VM_TEST_LIBS)
	@mkdir -p $(@D)
	$(CC) -static -O2 $(KT_CFLAGS) -pthread -o $@ $< $(VM_TEST_LIBS) $(KT_LDLIBS)

# Cheap (one cpio of a few MB): always rebuilt, so it never goes stale.
initramfs: tools vm-tests ## build/vm/initramfs.cpio: the static tools and tests/vm
	@O=$(O) tests/probe/vm-debsrc.sh
	@scripts/mkinitramfs.sh

# user-calls: a program traced by libktrace (static, -finstrument-functions)
$(O)/vm/tests/user-calls: tests/vm/user-calls.c user/ktrace_user.h $(LIBKTRACE_A)
	@mkdir -p $(@D)
	$(CC) -static -O2 -g -finstrument-functions -Iuser -pthread -o $@ $< $(LIBKTRACE_A)

# probe-target: ktrace -P reads its DWARF in the VM (87-probe-e2e)
$(O)/vm/tests/probe-target: tests/vm/probe-target.c
	@mkdir -p $(@D)
	$(CC) -static -O2 -g -o $@ $<

# probe-m32: a 32-bit program, whose hits the kernel refuses (86-probe);
# nothing where the compiler cannot link -m32 (no gcc-multilib), and
# 86-probe says so
$(O)/vm/tests/probe-m32: tests/vm/probe-m32.c
	@mkdir -p $(@D)
	@$(CC) -m32 -static -O2 -o $@ $< 2>$(O)/vm/probe-m32.log || \
		echo "ktrace: no -m32 (gcc-multilib): $@ not built, see $(O)/vm/probe-m32.log"

# The fake /dev/ktrace the ktrace host tests preload (40-ktrace-cli.sh and
# those that source fakedev-common.sh).
$(O)/tests/ktrace-cli-fakedev.so: tests/host/ktrace-cli-fakedev.c include/uapi/linux/ktrace.h
	@mkdir -p $(@D)
	$(CC) -O2 -std=gnu11 -Iinclude/uapi -shared -fPIC -pthread -o $@ $< -ldl

# Causally linked packets between two network namespaces (106-dtrace-machines).
$(O)/tests/ktnet-pingpong: tests/host/ktnet-pingpong.c
	@mkdir -p $(@D)
	$(CC) -O2 -std=gnu11 -Wall -o $@ $<

# The probe tests' evaluator of fetch programs (ptrace) and their C++
# program (tests/host/97-probe-eval.sh, 98-probe-debsrc.sh).
$(O)/tests/probe-eval: tests/probe/probe-eval.c include/uapi/linux/ktrace.h
	@mkdir -p $(@D)
	$(CC) -O2 -g -std=gnu11 -Wall -Iinclude/uapi -o $@ $<

$(O)/tests/probe-shapes: tests/probe/shapes.cc
	@mkdir -p $(@D)
	$(CXX) -O2 -g -o $@ $<
