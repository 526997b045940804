/* Flattened device tree (DTB) reading: a one-pass scan that fills
 * struct boot_info, and a small independent lookup API (by path and
 * property name) used by the FDT self-test and later drivers. */
#ifndef KERNEL_FDT_H
#define KERNEL_FDT_H

#include <stdbool.h>
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

/* The firmware's DTB is untrusted input. These bounds keep every walk
 * over it short and every offset in an int (node handles are ints): QEMU
 * pads its blob to 1 MiB and OpenSBI grows it in place by a little. */
#define FDT_HEADER_SIZE 40
#define FDT_MAX_SIZE    (2u << 20)
#define FDT_MAX_DEPTH   16          /* nesting, the root node at depth 0 */

/* Is there room for n bytes at offset pos of a block of size bytes? pos
 * may lie past the end (a name or value rounded up to 4 bytes in an
 * unaligned block), so the test never forms pos + n. */
static inline bool fdt_room(uint32_t pos, uint32_t size, uint32_t n)
{
	return pos <= size && size - pos >= n;
}

/* RISC-V physical addresses have at most 56 bits (Sv57). A memory or
 * reserved range must end at or below this, so that code using it can
 * round its end up to a page without wrapping. */
#define FDT_PA_LIMIT    (1ull << 56)

/* Does [base, base + size) end at or below FDT_PA_LIMIT? */
static inline bool fdt_range_ok(uint64_t base, uint64_t size)
{
	return base <= FDT_PA_LIMIT && size <= FDT_PA_LIMIT - base;
}

/* The blocks of a blob whose header passed fdt_check_header: each lies
 * inside the blob's totalsize. */
struct fdt_blocks {
	const uint8_t *st;      /* structure block */
	uint32_t st_size;
	const char *strs;       /* strings block */
	uint32_t strs_size;
	uint32_t total;
};

/* Check the header of the blob at `blob`, which must be readable for
 * FDT_HEADER_SIZE bytes and, if the check passes, for its totalsize.
 * Returns 0 and *totalsize, or -E_INVAL for a bad magic or version, a
 * totalsize outside [FDT_HEADER_SIZE, FDT_MAX_SIZE], or a block that is
 * misaligned or not inside totalsize. */
int fdt_check_header(const void *blob, uint32_t *totalsize);

/* fdt_check_header, then *k describes the blocks. Returns 0 or -E_INVAL. */
int fdt_blocks_of(const void *blob, struct fdt_blocks *k);

/* The NUL-terminated string at offset off of the strings block, or NULL
 * if off is outside it or the string runs past its end. */
const char *fdt_string_at(const struct fdt_blocks *k, uint32_t off);

/* Validate a blob from firmware before any other use of it: `avail` bytes
 * at blob are readable. Checks the header (as fdt_check_header, and that
 * totalsize fits in avail), that the memreserve block ends inside the
 * blob, and walks the whole structure block: known tokens, one root node,
 * every node name NUL-terminated inside the block, nesting at most
 * FDT_MAX_DEPTH, END_NODE only inside a node, properties only inside a
 * node with their value inside the block and their name a NUL-terminated
 * string of the strings block, FDT_END after the root closes. Returns 0,
 * or -E_INVAL with *why naming the first defect (a constant string). */
int fdt_validate(const void *blob, uint32_t avail, const char **why);

/* Read memory nodes, /reserved-memory, the memreserve block, /cpus and
 * /chosen/bootargs into *bi (zeroed first, except bi->cpus and
 * bi->cpus_cap: every cpu node is counted in bi->ncpus, the first
 * cpus_cap are stored in bi->cpus). `pa` is the blob's physical address,
 * recorded in bi. The blob must be readable for its totalsize (boot checks
 * it with fdt_validate first); every read stays inside the blocks anyway.
 * Returns 0, or -E_INVAL with bi->refused set (a constant string) for a
 * malformed blob, a reg the parent's cells cannot describe, a memory,
 * reserved or memreserve range past FDT_PA_LIMIT, memory ranges that
 * overlap, more ranges than boot_info holds, a cpu node without reg, or
 * over-long bootargs. */
int fdt_scan(const void *blob, paddr_t pa, struct boot_info *bi);

/* --- lookup API (fdt_lookup.c). Node handles are offsets into the
 * structure block; negative values are errors. Each call checks the
 * header and stays inside the blocks, so any handle and any blob readable
 * for its totalsize is safe; a value returned lies inside the blob. --- */

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
/* Property value and length (inside the structure block), or NULL if the
 * node lacks it. */
const void *fdt_getprop(const void *blob, int node, const char *name, int *len);
/* A 1- or 2-cell big-endian number at p. */
uint64_t fdt_read_cells(const void *p, uint32_t cells);
/* The memreserve block entry i; returns 0 or -E_NOENT past the end. */
int fdt_memreserve(const void *blob, int i, struct phys_range *out);

#endif
