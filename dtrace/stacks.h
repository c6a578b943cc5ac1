/* SPDX-License-Identifier: GPL-2.0 */
/*
 * stacks: the tree of stacks that --folded, --folded-time and
 * --folded-offcpu weigh, which folded.c writes as folded lines and svg.c
 * (--format=svg) draws as a flame graph: one tree, so both show the same
 * frames and weights.
 *
 * A node is a distinct path: its parent's path and one frame more, a name.
 * Nodes come in the order they are first met, a parent before its
 * children; names are interned, kept as the folded format can carry them
 * (';', blanks and control characters as '_').  Memory grows with the
 * distinct paths, not with the calls or context switches.
 *
 *   STACKS_CALLS      the user threads' calls (calls.h), a path weighed by
 *                     the calls of its last function made on it
 *   STACKS_CALL_TIME  the same paths, weighed by their self time in ns
 *   STACKS_OFFCPU     the time threads spent off CPU, in ns, from the
 *                     kernel's sched:switch records: from a thread's switch
 *                     out to its next switch in, under the path
 *                     comm-tid[;user calls][;sys_NAME];[blocked|preempted]
 *                     (offcpu.c)
 */
#ifndef DTRACE_STACKS_H
#define DTRACE_STACKS_H

#include "amap.h"
#include "dtrace.h"

enum stacks_kind {
	STACKS_CALLS,
	STACKS_CALL_TIME,
	STACKS_OFFCPU,
};

struct stack_node {
	uint32_t parent;		/* 0: the root's child (the root is [0]) */
	uint32_t name;			/* index in stacks.names */
	uint64_t count;			/* calls ended on the path; off-CPU: switches out */
	uint64_t weight;		/* its own weight: calls, self ns or off-CPU ns */
};

struct offcpu;

struct stacks {
	enum stacks_kind kind;
	struct stack_node *nodes;	/* [0]: the root, no name */
	uint32_t nr, alloc;
	char **names;
	uint32_t nr_names, alloc_names;
	struct amap children;		/* parent << 32 | name -> node */
	struct amap names_by_hash;	/* hash of a name -> its index + 1 */
	uint32_t *fn_names;		/* sym_func id -> its name's index + 1 */
	unsigned int nr_fn_names;
	struct offcpu *offcpu;		/* STACKS_OFFCPU: what offcpu.c follows */
};

/* The path @parent;@name, made if new: its node. */
uint32_t stacks_child(struct stacks *s, uint32_t parent, uint32_t name);

/* The index of @name (@len bytes) among the names, interned if new. */
uint32_t stacks_name(struct stacks *s, const char *name, size_t len);

/* The name of a function, interned once per function. */
uint32_t stacks_fn_name(struct stacks *s, const struct sym_func *fn);

/*
 * What the stacks formats do with the events: start() (the tree of
 * dt->stacks' kind), event(), and at the end the tree, complete (its calls
 * replayed), to write; the format's end() then frees it (stacks_free()).
 */
void *stacks_start(struct dtrace *dt, struct outbuf *o);
void stacks_event(struct dtrace *dt, struct outbuf *o, const struct dtrace_event *e);
struct stacks *stacks_finish(struct dtrace *dt);
void stacks_free(struct stacks *s);

/* The groups whose events the stacks of @kind are made of. */
uint32_t stacks_groups(enum stacks_kind kind);

/* offcpu.c: STACKS_OFFCPU's part of start(), event() and finish() */
struct offcpu *offcpu_new(struct dtrace *dt);
void offcpu_event(struct dtrace *dt, struct stacks *s, const struct dtrace_event *e);
void offcpu_finish(struct dtrace *dt, struct stacks *s);

extern const struct dtrace_format dtrace_folded;	/* folded.c: --folded* */
extern const struct dtrace_format dtrace_svg;		/* svg.c: --format=svg */

#endif /* DTRACE_STACKS_H */
