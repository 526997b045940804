/* Devices found in the device tree by their `compatible` string.
 *
 * The kernel assumes no machine: a device is used only when a node names
 * it in `compatible` (and its `status` is absent or "okay"), and its
 * register block is the node's `reg`, translated to a CPU physical address
 * through every ancestor bus's `ranges`. A device that is absent, disabled
 * or behind a bus without a usable `ranges` is reported absent, and code
 * that wanted it skips what needed it. */
#ifndef KERNEL_DEVTREE_H
#define KERNEL_DEVTREE_H

#include <stdbool.h>
#include <stdint.h>
#include "memlayout.h"

struct dt_dev {
	int node;                 /* the node's handle (fdt_lookup.h) */
	int which;                /* index into the compat list that matched */
	paddr_t base;             /* first reg entry, CPU physical address */
	uint64_t size;            /* its size (0 when the bus has #size-cells 0) */
};

/* Does `node`'s compatible string list contain `compat`? */
bool dt_is_compatible(const void *blob, int node, const char *compat);

/* Is `node` enabled (no status property, or "okay"/"ok")? */
bool dt_node_enabled(const void *blob, int node);

/* The first enabled node, in depth-first order, whose compatible list
 * holds one of compats[0..n) (earlier entries of the node's own list do
 * not take priority over the order of the tree), with a first reg entry
 * that translates to a CPU address. Returns 0 and fills *out, or
 * -E_NOENT when there is none, -E_INVAL for a malformed blob. */
int dt_find_compatible(const void *blob, const char *const *compats, int n,
		       struct dt_dev *out);

/* Called by dt_walk for each enabled node below the root, depth 1 for a
 * child of the root. d->node is the node; when has_reg, d->base and
 * d->size are its first reg entry as a CPU address (d->which is -1).
 * Returns 0 to go on into the node's children, 1 to skip them, or a
 * negative error to stop the walk. */
typedef int (*dt_visit_fn)(void *ctx, const struct dt_dev *d, int depth, bool has_reg);

/* Every enabled node in depth-first order (a disabled node hides its
 * subtree). Returns 0 when the walk ended, the callback's negative value
 * when it stopped it, or -E_INVAL for a malformed blob or a tree deeper
 * than DT_MAX_DEPTH (the nodes before the defect were visited). */
int dt_walk(const void *blob, dt_visit_fn fn, void *ctx);

#endif
