// SPDX-License-Identifier: GPL-2.0
/*
 * stacks: the tree of weighed stacks of the folded views and the flame
 * graph (stacks.h); the paths of the user threads' calls, replayed by
 * calls.c, and the start, event and end the stacks formats share.
 */
#include <stdlib.h>
#include <string.h>

#include "calls.h"
#include "stacks.h"
#include "util.h"

uint32_t stacks_child(struct stacks *s, uint32_t parent, uint32_t name)
{
	uint64_t key = (uint64_t)parent << 32 | name;
	uint32_t i = (uint32_t)(uintptr_t)amap_get(&s->children, key);

	if (i)
		return i;
	if (s->nr == UINT32_MAX)
		die("--folded: too many distinct stacks");
	if (s->nr == s->alloc) {
		s->alloc *= 2;
		s->nodes = xrealloc(s->nodes, s->alloc * sizeof(*s->nodes));
	}
	i = s->nr++;
	s->nodes[i] = (struct stack_node){ .parent = parent, .name = name };
	amap_put(&s->children, key, (void *)(uintptr_t)i);
	return i;
}

/* FNV-1a; a collision costs a step of the probe below (>> 1: amap keys < 2^64 - 1) */
static uint64_t name_hash(const char *name, size_t len)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (size_t i = 0; i < len; i++)
		h = (h ^ (unsigned char)name[i]) * 0x100000001b3ull;
	return h;
}

uint32_t stacks_name(struct stacks *s, const char *name, size_t len)
{
	char *copy;
	uint64_t h;
	uint32_t i;

	if (!len) {
		name = "?";
		len = 1;
	}
	/* equal hashes of different names: the next hash value, and so on */
	for (h = name_hash(name, len) >> 1; (i = (uint32_t)(uintptr_t)amap_get(&s->names_by_hash, h)); h++)
		if (strlen(s->names[i - 1]) == len && !memcmp(s->names[i - 1], name, len))
			return i - 1;
	if (s->nr_names == s->alloc_names) {
		s->alloc_names = s->alloc_names ? 2 * s->alloc_names : 256;
		s->names = xrealloc(s->names, s->alloc_names * sizeof(*s->names));
	}
	/* what the folded format cannot carry: ';' ends a frame, a blank the path */
	copy = xmalloc(len + 1);
	for (size_t j = 0; j < len; j++)
		copy[j] = name[j] == ';' || (unsigned char)name[j] <= ' ' || name[j] == 0x7f ?
			  '_' : name[j];
	copy[len] = '\0';
	s->names[s->nr_names] = copy;
	amap_put(&s->names_by_hash, h, (void *)(uintptr_t)(s->nr_names + 1));
	return s->nr_names++;
}

uint32_t stacks_fn_name(struct stacks *s, const struct sym_func *fn)
{
	if (fn->id >= s->nr_fn_names) {
		unsigned int nr = 2 * fn->id + 256;

		s->fn_names = xrealloc(s->fn_names, nr * sizeof(*s->fn_names));
		memset(s->fn_names + s->nr_fn_names, 0,
		       (nr - s->nr_fn_names) * sizeof(*s->fn_names));
		s->nr_fn_names = nr;
	}
	if (!s->fn_names[fn->id])
		s->fn_names[fn->id] = stacks_name(s, fn->name, strlen(fn->name)) + 1;
	return s->fn_names[fn->id] - 1;
}

/* The replay of one thread's calls: the path at each depth. */
struct calls_walk {
	struct stacks *s;
	uint32_t *path;
	unsigned int alloc;
};

static void calls_step(void *ctx, struct call_thread *t, const struct call_step *s)
{
	struct calls_walk *w = ctx;
	struct stack_node *n;

	if (s->kind == STEP_ENTER) {
		if (s->depth >= w->alloc) {
			w->alloc = 2 * s->depth + 64;
			w->path = xrealloc(w->path, w->alloc * sizeof(*w->path));
		}
		w->path[s->depth] = stacks_child(w->s, s->depth ? w->path[s->depth - 1] : 0,
						 stacks_fn_name(w->s, s->fn));
	} else if (s->kind == STEP_EXIT) {
		n = &w->s->nodes[w->path[s->depth]];
		/* a frame from before the trace: its time, not a call */
		n->count += call_step_calls(s);
		n->weight += w->s->kind == STACKS_CALL_TIME ? s->ns - s->entry_ns - s->callees_ns :
			     call_step_calls(s);
	}
}

uint32_t stacks_groups(enum stacks_kind kind)
{
	/* thread: exits end a thread's switches, forks begin a reused tid's */
	return kind == STACKS_OFFCPU ? KTRACE_GRP_sched | KTRACE_GRP_thread : KTRACE_GRP_func;
}

void *stacks_start(struct dtrace *dt, struct outbuf *o)
{
	struct stacks *s = xcalloc(1, sizeof(*s));

	s->kind = dt->stacks;
	s->alloc = 1024;
	s->nodes = xcalloc(s->alloc, sizeof(*s->nodes));
	s->nr = 1;
	if (s->kind == STACKS_OFFCPU)
		s->offcpu = offcpu_new(dt);
	return s;
}

/*
 * -t and -p pick the threads whose stacks are shown, not the records: a
 * thread's switch in is a record of the thread it replaces (offcpu.c).
 */
void stacks_event(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e)
{
	const struct ktfile_reader *f = kt_merge_file(dt->merge, e->file);
	struct stacks *s = dt->fmt_state;

	if (f->hdr.cpu < 0) {
		if (dtrace_task_selected(dt, f->hdr.pid, e->ev->tid, e->ev->tsc))
			calls_event(dt, o, e);
	} else if (s->kind == STACKS_OFFCPU) {
		offcpu_event(dt, s, e);
	}
}

struct stacks *stacks_finish(struct dtrace *dt)
{
	struct stacks *s = dt->fmt_state;
	unsigned int nr_threads;
	struct call_thread **threads;
	struct calls_walk w = { .s = s };

	if (s->kind == STACKS_OFFCPU) {
		offcpu_finish(dt, s);
		return s;
	}
	threads = calls_threads(dt->calls, &nr_threads);
	for (unsigned int i = 0; i < nr_threads; i++)
		calls_walk(dt->calls, threads[i], calls_step, &w);
	free(w.path);
	return s;
}

void stacks_free(struct stacks *s)
{
	for (uint32_t i = 0; i < s->nr_names; i++)
		free(s->names[i]);
	free(s->names);
	free(s->nodes);
	free(s->children.keys);
	free(s->children.vals);
	free(s->names_by_hash.keys);
	free(s->names_by_hash.vals);
	free(s->fn_names);
	free(s);
}
