// SPDX-License-Identifier: GPL-2.0
/*
 * callgraph (--callgraph): the calls as a Graphviz graph (dot -Tsvg): a
 * box per function with its calls and self time, an ellipse per thread,
 * and an edge from each caller (or thread) to each function it called,
 * with how many calls and their total time.  Addresses are resolved per
 * process (PIE, shared libraries), stacks kept per thread.
 *
 * Nodes and edges are sorted by name, so that the same calls make the
 * same file.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "amap.h"
#include "calls.h"
#include "escape.h"
#include "util.h"

struct edge {
	unsigned int from;		/* function id, or THREAD_BIT | thread index */
	const struct sym_func *to;
	uint64_t calls, total;
	unsigned int from_rank, to_rank;	/* where its ends are in the graph */
};

#define THREAD_BIT	(1u << 31)

/* What the replay adds up, thread after thread. */
struct graph {
	const struct calls *calls;
	struct amap edges;		/* from << 32 | to id -> edge */
	struct edge **list;
	size_t nr_edges;
	struct call_totals *nodes;	/* by function id */
	unsigned int nr_nodes;
	unsigned int *rank;		/* by function id: place in the sorted list, its DOT name */
	unsigned int thread;		/* index of the thread being walked */
};

static void cg_step(void *ctx, struct call_thread *t, const struct call_step *s)
{
	struct graph *cg = ctx;
	uint64_t dur = s->ns - s->entry_ns, key;
	unsigned int from;
	struct edge *e;

	/* notes and events have no function */
	if (s->kind != STEP_EXIT)
		return;
	from = s->caller ? s->caller->id : THREAD_BIT | cg->thread;
	key = (uint64_t)from << 32 | s->fn->id;
	e = amap_get(&cg->edges, key);
	if (!e) {
		e = xcalloc(1, sizeof(*e));
		e->from = from;
		e->to = s->fn;
		amap_put(&cg->edges, key, e);
		cg->list = xrealloc(cg->list, (cg->nr_edges + 1) * sizeof(*cg->list));
		cg->list[cg->nr_edges++] = e;
	}
	e->calls += call_step_calls(s);
	e->total += dur;
	calls_add_totals(cg->calls, &cg->nodes, &cg->nr_nodes, s);
}

static int by_name(const void *a, const void *b)
{
	const struct call_totals *x = *(struct call_totals *const *)a;
	const struct call_totals *y = *(struct call_totals *const *)b;
	int c = strcmp(x->fn->name, y->fn->name);

	return c ? c : x->fn->id < y->fn->id ? -1 : 1;
}

/* Threads first (in their order), then functions by name. */
static unsigned int edge_rank(const struct graph *cg, unsigned int from)
{
	return from & THREAD_BIT ? from & ~THREAD_BIT : THREAD_BIT | cg->rank[from];
}

static int by_ends(const void *a, const void *b)
{
	const struct edge *x = *(struct edge *const *)a, *y = *(struct edge *const *)b;

	if (x->from_rank != y->from_rank)
		return x->from_rank < y->from_rank ? -1 : 1;
	return x->to_rank < y->to_rank ? -1 : x->to_rank > y->to_rank;
}

/* Text inside a DOT string: quotes, backslashes, control characters and
 * bytes that are not UTF-8 escaped (lib/escape.c). */
static void put_escaped(struct outbuf *o, const char *s, size_t max)
{
	char *p = out_reserve(o);

	out_commit(o, kt_escape(p, DTRACE_LINE_MAX / 2, s, max, KT_ESC_DOT));
}

static void put_time(struct outbuf *o, uint64_t ns)
{
	char *p = out_reserve(o);

	out_commit(o, dtrace_put_us(p, ns, 0));
}

static void callgraph_end(struct dtrace *dt, struct outbuf *o)
{
	unsigned int nr_threads, nr = 0;
	struct call_thread **threads = calls_threads(dt->calls, &nr_threads);
	struct graph cg = { .calls = dt->calls };
	struct call_totals **sorted;

	for (cg.thread = 0; cg.thread < nr_threads; cg.thread++)
		calls_walk(dt->calls, threads[cg.thread], cg_step, &cg);
	sorted = xcalloc(cg.nr_nodes + 1, sizeof(*sorted));
	for (unsigned int i = 0; i < cg.nr_nodes; i++)
		if (cg.nodes[i].fn)
			sorted[nr++] = &cg.nodes[i];
	qsort(sorted, nr, sizeof(*sorted), by_name);
	cg.rank = xcalloc(cg.nr_nodes + 1, sizeof(*cg.rank));
	for (unsigned int i = 0; i < nr; i++)
		cg.rank[sorted[i]->fn->id] = i;
	for (size_t i = 0; i < cg.nr_edges; i++) {
		cg.list[i]->from_rank = edge_rank(&cg, cg.list[i]->from);
		cg.list[i]->to_rank = cg.rank[cg.list[i]->to->id];
	}
	if (cg.nr_edges)
		qsort(cg.list, cg.nr_edges, sizeof(*cg.list), by_ends);

	out_printf(o, "digraph calls {\n\tnode [shape=box, fontname=\"monospace\", fontsize=10];\n"
		   "\tedge [fontname=\"monospace\", fontsize=9];\n");
	for (unsigned int i = 0; i < nr_threads; i++) {
		out_printf(o, "\tt%u [shape=ellipse, label=\"thread %u\\n(pid %u, ", i,
			   threads[i]->tid, threads[i]->pid);
		put_escaped(o, threads[i]->comm, sizeof(threads[i]->comm));
		out_printf(o, ")\"];\n");
	}
	for (unsigned int i = 0; i < nr; i++) {
		const struct call_totals *n = sorted[i];

		out_printf(o, "\tf%u [label=\"", i);
		put_escaped(o, n->fn->name, SIZE_MAX);
		if (n->fn->file) {
			out_printf(o, "\\n");
			put_escaped(o, n->fn->file, SIZE_MAX);
			out_printf(o, ":%u", n->fn->line);
		}
		out_printf(o, "\\n%llu call%s, self ", (unsigned long long)n->calls,
			   n->calls == 1 ? "" : "s");
		put_time(o, n->self);
		out_printf(o, " us\"];\n");
	}
	for (size_t i = 0; i < cg.nr_edges; i++) {
		const struct edge *e = cg.list[i];

		if (e->from & THREAD_BIT)
			out_printf(o, "\tt%u", e->from & ~THREAD_BIT);
		else
			out_printf(o, "\tf%u", cg.rank[e->from]);
		out_printf(o, " -> f%u [label=\"%llu call%s\\n", cg.rank[e->to->id],
			   (unsigned long long)e->calls, e->calls == 1 ? "" : "s");
		put_time(o, e->total);
		out_printf(o, " us\"];\n");
	}
	out_printf(o, "}\n");
	for (size_t i = 0; i < cg.nr_edges; i++)
		free(cg.list[i]);
	free(cg.list);
	free(cg.edges.keys);
	free(cg.edges.vals);
	free(cg.nodes);
	free(cg.rank);
	free(sorted);
}

const struct dtrace_format dtrace_callgraph = {
	.name = "callgraph",
	.flags = DTRACE_FMT_CALLS | DTRACE_FMT_CALL_VIEW,
	.event = calls_event,
	.end = callgraph_end,
};
