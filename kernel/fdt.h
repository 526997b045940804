/* Flattened device tree (DTB) reading: a one-pass scan that fills
 * struct boot_info, and a small independent lookup API (by path and
 * property name) used by the FDT self-test and later drivers. */
#ifndef KERNEL_FDT_H
#define KERNEL_FDT_H

#include <stdint.h>
#include "bootinfo.h"

#define FDT_MAGIC       0xd00dfeed
#define FDT_BEGIN_NODE  1
#define FDT_END_NODE    2
#define FDT_PROP        3
#define FDT_NOP         4
#define FDT_END         9

static inline uint32_t fdt_be32(const void *p)
{
	const uint8_t *b = p;
	return ((uint32_t)b[0] << 24) | ((uint32_t)b[1] << 16) |
	       ((uint32_t)b[2] << 8) | b[3];
}

static inline uint64_t fdt_be64(const void *p)
{
	return ((uint64_t)fdt_be32(p) << 32) | fdt_be32((const uint8_t *)p + 4);
}

/* Check the header of the blob at `blob` (readable for its totalsize).
 * Returns 0 and *totalsize, or -E_INVAL for a bad magic, version or
 * block bounds. */
int fdt_check_header(const void *blob, uint32_t *totalsize);

/* Read memory nodes, /reserved-memory, the memreserve block, /cpus and
 * /chosen/bootargs into *bi (zeroed first, except bi->cpus and
 * bi->cpus_cap: every cpu node is counted in bi->ncpus, the first
 * cpus_cap are stored in bi->cpus). `pa` is the blob's physical address,
 * recorded in bi. Returns 0, or -E_INVAL for a malformed blob or more
 * memory or reserved ranges than boot_info holds. */
int fdt_scan(const void *blob, paddr_t pa, struct boot_info *bi);

/* --- lookup API (fdt_lookup.c). Node handles are offsets into the
 * structure block; negative values are errors. --- */

/* The root node. */
int fdt_root(const void *blob);
/* First child / next sibling of a node, or -E_NOENT. */
int fdt_first_child(const void *blob, int node);
int fdt_next_sibling(const void *blob, int node);
/* Node name with unit address ("memory@80000000"), or NULL. */
const char *fdt_node_name(const void *blob, int node);
/* Node by absolute path ("/cpus/cpu@0"); a component without '@' also
 * matches a name with a unit address. Returns the node or -E_NOENT. */
int fdt_path(const void *blob, const char *path);
/* Property value and length, or NULL if the node lacks it. */
const void *fdt_getprop(const void *blob, int node, const char *name, int *len);
/* A 1- or 2-cell big-endian number at p. */
uint64_t fdt_read_cells(const void *p, uint32_t cells);
/* The memreserve block entry i; returns 0 or -E_NOENT past the end. */
int fdt_memreserve(const void *blob, int i, struct phys_range *out);

#endif
