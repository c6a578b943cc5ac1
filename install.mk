# SPDX-License-Identifier: GPL-2.0
# install: `make install` and `make uninstall`, with PREFIX (default
# /usr/local) and DESTDIR; the one place that says what goes where:
#
#   bin/                 ktrace, $(DTRACE_NAME) (dtrace), ktrace-run
#   lib/                 libktrace.so.$(VERSION), libktrace.so.0 and
#                        libktrace.so -> it, libktrace.a,
#                        pkgconfig/libktrace.pc
#   include/             ktrace_user.h; ktrace/linux/ktrace.h and
#                        ktrace_events.h (the ABI: libktrace.pc adds
#                        -I$(PREFIX)/include/ktrace for <linux/ktrace.h>)
#   share/man/           man1/ktrace.1 $(DTRACE_NAME).1 ktrace-run.1, man3/libktrace.3
#   share/ktrace/        ktrace.patch and series/NNNN-*.patch (make patch), when
#                        they can be made: without linux-source-$(KVER) (or the
#                        KTRACE_KERNEL_TARBALL mkpatch.sh reads) install says so
#                        and installs the rest
#
# DTRACE_NAME: the name of the trace merger, dtrace by default.  Another
# dtrace (Debian's systemtap-sdt-dev has /usr/bin/dtrace, which PostgreSQL
# and CPython builds run) is never shadowed or replaced silently: install
# refuses and says so (scripts/install-dtrace-check.sh) unless DTRACE_NAME
# is given, e.g. DTRACE_NAME=ktrace-dtrace.  uninstall removes
# bin/$(DTRACE_NAME) and its man page only if it is ktrace's.
#
# uninstall removes these files, and the directories that are ktrace's own
# (include/ktrace, share/ktrace) when nothing else is left in them.  The
# .pc file is written at install time, so it names the PREFIX installed to;
# with DESTDIR, PKG_CONFIG_SYSROOT_DIR=$(DESTDIR) finds the staged tree.

KT_BINDIR	= $(DESTDIR)$(PREFIX)/bin
KT_LIBDIR	= $(DESTDIR)$(PREFIX)/lib
KT_INCDIR	= $(DESTDIR)$(PREFIX)/include
KT_MANDIR	= $(DESTDIR)$(PREFIX)/share/man
KT_DATADIR	= $(DESTDIR)$(PREFIX)/share/ktrace
INSTALL		?= install
DTRACE_NAME	?= dtrace
LDCONFIG	?= ldconfig

# Every file but the patch series, whose names come from make patch.
KT_INSTALLED	= $(addprefix $(KT_BINDIR)/,ktrace ktrace-run) \
		  $(addprefix $(KT_LIBDIR)/,libktrace.so.$(VERSION) libktrace.so.0 \
			libktrace.so libktrace.a pkgconfig/libktrace.pc) \
		  $(KT_INCDIR)/ktrace_user.h \
		  $(addprefix $(KT_INCDIR)/ktrace/linux/,ktrace.h ktrace_events.h) \
		  $(addprefix $(KT_MANDIR)/man1/,ktrace.1 ktrace-run.1) \
		  $(KT_MANDIR)/man3/libktrace.3 $(KT_DATADIR)/ktrace.patch

# Where the system's dynamic linker looks (no DESTDIR, as root), refresh
# its cache.
KT_LDCONFIG	= @[ -n "$(DESTDIR)" ] || [ "$$(id -u)" != 0 ] || $(LDCONFIG)

.PHONY: install uninstall
install: tools ## the tools, library, headers, man pages [PREFIX= DESTDIR= DTRACE_NAME=]
	@scripts/install-dtrace-check.sh "$(KT_BINDIR)" "$(DTRACE_NAME)" "$(origin DTRACE_NAME)" \
		"$(DESTDIR)"
	$(INSTALL) -d $(KT_BINDIR) $(KT_LIBDIR)/pkgconfig $(KT_INCDIR)/ktrace/linux \
		$(KT_MANDIR)/man1 $(KT_MANDIR)/man3
	$(INSTALL) -m 755 $(O)/tools/ktrace $(O)/tools/ktrace-run $(KT_BINDIR)
	$(INSTALL) -m 755 $(O)/tools/dtrace $(KT_BINDIR)/$(DTRACE_NAME)
	$(INSTALL) -m 755 $(LIBKTRACE_SO) $(KT_LIBDIR)/libktrace.so.$(VERSION)
	ln -sfn libktrace.so.$(VERSION) $(KT_LIBDIR)/libktrace.so.0
	ln -sfn libktrace.so.0 $(KT_LIBDIR)/libktrace.so
	$(INSTALL) -m 644 $(LIBKTRACE_A) $(KT_LIBDIR)
	sed -e 's|@PREFIX@|$(PREFIX)|' -e 's|@VERSION@|$(VERSION)|' user/libktrace.pc.in \
		>$(KT_LIBDIR)/pkgconfig/libktrace.pc
	$(INSTALL) -m 644 user/ktrace_user.h $(KT_INCDIR)
	$(INSTALL) -m 644 include/uapi/linux/ktrace.h include/uapi/linux/ktrace_events.h \
		$(KT_INCDIR)/ktrace/linux
	$(INSTALL) -m 644 ktrace/ktrace.1 user/ktrace-run.1 $(KT_MANDIR)/man1
	$(INSTALL) -m 644 dtrace/dtrace.1 $(KT_MANDIR)/man1/$(DTRACE_NAME).1
	$(INSTALL) -m 644 user/libktrace.3 $(KT_MANDIR)/man3
	@if scripts/mkpatch.sh --have-source; then \
		$(MAKE) --no-print-directory patch && \
		$(INSTALL) -d $(KT_DATADIR)/series && \
		$(INSTALL) -m 644 $(O)/patch/$(KVER)/ktrace.patch $(KT_DATADIR) && \
		rm -f $(KT_DATADIR)/series/*.patch && \
		$(INSTALL) -m 644 $(O)/patch/$(KVER)/series/*.patch $(KT_DATADIR)/series; \
	else \
		echo "ktrace: make install: the kernel patch (share/ktrace) is not installed;" \
			"the rest is" >&2; \
	fi
	$(KT_LDCONFIG)

uninstall: ## remove what install installed [PREFIX= DESTDIR= DTRACE_NAME=]
	rm -f $(KT_INSTALLED) $(KT_DATADIR)/series/*.patch
	! grep -qa 'dtrace (ktrace)' $(KT_BINDIR)/$(DTRACE_NAME) 2>/dev/null || \
		rm -f $(KT_BINDIR)/$(DTRACE_NAME) $(KT_MANDIR)/man1/$(DTRACE_NAME).1
	rmdir --ignore-fail-on-non-empty $(KT_INCDIR)/ktrace/linux $(KT_INCDIR)/ktrace \
		$(KT_DATADIR)/series $(KT_DATADIR) 2>/dev/null || true
	$(KT_LDCONFIG)
