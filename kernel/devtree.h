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

#endif
