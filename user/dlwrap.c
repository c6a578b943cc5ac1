// SPDX-License-Identifier: LGPL-2.1 OR GPL-2.0
/*
 * dlwrap: dlclose() in front of the C library's, in libktrace.so only (a
 * static program has its own, and no next one to call).  A library
 * unloaded and another loaded at its address: without a map of each, the
 * second one's calls took the first one's names.  So the process's map is
 * written before the library goes and after (maps.c); a library loaded
 * since is in the next map written, which dtrace takes for addresses the
 * map of their time does not have.  dlopen() is not wrapped: it looks up
 * relative names with the RUNPATH of its caller, which a wrapper would
 * change.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>

#include "libktrace.h"

__attribute__((visibility("default"))) KT_NOTRACE int dlclose(void *handle)
{
	static int (*next)(void *);
	int (*real)(void *) = __atomic_load_n(&next, __ATOMIC_RELAXED);
	int ret, saved_errno;

	if (!real) {
		real = (int (*)(void *))dlsym(RTLD_NEXT, "dlclose");
		if (!real)
			return -1;	/* no C library behind us: cannot happen */
		__atomic_store_n(&next, real, __ATOMIC_RELAXED);
	}
	kt_maps_library_change();
	ret = real(handle);
	saved_errno = errno;
	kt_maps_library_change();
	errno = saved_errno;
	return ret;
}
