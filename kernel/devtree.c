/* Devices by `compatible` (devtree.h): a depth-first walk over the lookup
 * API of fdt_lookup.c, translating `reg` through each bus's `ranges`. */
#include <patina/errno.h>
#include "devtree.h"
#include "fdt.h"
#include "kstring.h"

#define DT_MAX_DEPTH 16

bool dt_is_compatible(const void *blob, int node, const char *compat)
{
	int len;
	const char *p = fdt_getprop(blob, node, "compatible", &len);
	if (!p || len <= 0)
		return false;
	/* A list of NUL-terminated strings; a last one without its NUL is
	 * malformed and matches nothing. */
	for (int off = 0; off < len;) {
		size_t n = strnlen(p + off, (size_t)(len - off));
		if ((int)n == len - off)
			return false;
		if (!strcmp(p + off, compat))
			return true;
		off += (int)n + 1;
	}
	return false;
}

bool dt_node_enabled(const void *blob, int node)
{
	int len;
	const char *s = fdt_getprop(blob, node, "status", &len);
	if (!s)
		return true;
	if (len <= 0 || s[len - 1] != 0)
		return false;
	return !strcmp(s, "okay") || !strcmp(s, "ok");
}

/* A one-cell property of node, or dflt when it is absent or not one cell. */
static uint32_t cells_prop(const void *blob, int node, const char *name, uint32_t dflt)
{
	int len;
	const void *v = fdt_getprop(blob, node, name, &len);
	return v && len == 4 ? fdt_be32(v) : dflt;
}

/* Translate *addr, an address on the bus anc[depth - 1] (the device's
 * parent), into a CPU physical address through the `ranges` of every bus
 * from the parent up to (not including) the root. A bus without `ranges`
 * does not map its children into its parent's space; an empty `ranges` is
 * the identity. Returns 0, or -E_NOENT when the address does not reach
 * the CPU (no ranges, no entry covering it, cells the reader cannot hold). */
static int translate(const void *blob, const int *anc, int depth, uint64_t *addr)
{
	for (int i = depth - 1; i >= 1; i--) {
		int bus = anc[i], up = anc[i - 1];
		int len;
		const uint8_t *r = fdt_getprop(blob, bus, "ranges", &len);
		if (!r || len < 0)
			return -E_NOENT;
		if (len == 0)
			continue;
		uint32_t cac = cells_prop(blob, bus, "#address-cells", 2);
		uint32_t csc = cells_prop(blob, bus, "#size-cells", 1);
		uint32_t pac = cells_prop(blob, up, "#address-cells", 2);
		if (cac < 1 || cac > 2 || pac < 1 || pac > 2 || csc < 1 || csc > 2)
			return -E_NOENT;
		uint32_t ent = 4 * (cac + pac + csc);
		bool hit = false;
		for (uint32_t off = 0; off + ent <= (uint32_t)len && !hit; off += ent) {
			uint64_t c = fdt_read_cells(r + off, cac);
			uint64_t p = fdt_read_cells(r + off + 4 * cac, pac);
			uint64_t s = fdt_read_cells(r + off + 4 * (cac + pac), csc);
			if (*addr >= c && *addr - c < s) {
				*addr = *addr - c + p;
				hit = true;
			}
		}
		if (!hit)
			return -E_NOENT;
	}
	return 0;
}

/* The first reg entry of the node at anc[depth], translated to a CPU
 * address: true and d->node, base, size filled (which left alone), or
 * false when it has none or it does not reach the CPU. */
static bool node_reg(const void *blob, const int *anc, int depth, struct dt_dev *d)
{
	int node = anc[depth], parent = anc[depth - 1];
	uint32_t ac = cells_prop(blob, parent, "#address-cells", 2);
	uint32_t sc = cells_prop(blob, parent, "#size-cells", 1);
	int len;
	const uint8_t *reg = fdt_getprop(blob, node, "reg", &len);
	if (!reg || ac < 1 || ac > 2 || sc > 2 || len < (int)(4 * (ac + sc)))
		return false;
	uint64_t addr = fdt_read_cells(reg, ac);
	uint64_t size = sc ? fdt_read_cells(reg + 4 * ac, sc) : 0;
	if (translate(blob, anc, depth, &addr))
		return false;
	d->node = node;
	d->base = addr;
	d->size = size;
	return true;
}

/* A callback's "stop here, it is found": positive, so no error code. */
#define DT_FOUND 2

struct visit {
	const void *blob;
	dt_visit_fn fn;
	void *ctx;
	int anc[DT_MAX_DEPTH];
};

/* Visit the subtree at `node` (depth `depth`): 0 when done, the
 * callback's stop value (negative, or DT_FOUND) when it stopped, -E_INVAL
 * for a malformed blob or a tree deeper than DT_MAX_DEPTH. */
static int visit(struct visit *v, int node, int depth)
{
	if (depth >= DT_MAX_DEPTH)
		return -E_INVAL;
	v->anc[depth] = node;
	if (depth > 0) {
		if (!dt_node_enabled(v->blob, node))
			return 0;
		struct dt_dev d = { .node = node, .which = -1 };
		bool has_reg = node_reg(v->blob, v->anc, depth, &d);
		int r = v->fn(v->ctx, &d, depth, has_reg);
		if (r < 0 || r == DT_FOUND)
			return r;
		if (r > 0)
			return 0;
	}
	int c = fdt_first_child(v->blob, node);
	while (c >= 0) {
		int r = visit(v, c, depth + 1);
		if (r)
			return r;
		c = fdt_next_sibling(v->blob, c);
	}
	return c == -E_NOENT ? 0 : -E_INVAL;
}

/* The walk of dt_walk, and DT_FOUND when fn stopped it with that. */
static int walk_all(const void *blob, dt_visit_fn fn, void *ctx)
{
	struct visit v = { .blob = blob, .fn = fn, .ctx = ctx };
	int root = fdt_root(blob);
	if (root < 0)
		return -E_INVAL;
	return visit(&v, root, 0);
}

int dt_walk(const void *blob, dt_visit_fn fn, void *ctx)
{
	int r = walk_all(blob, fn, ctx);
	return r == DT_FOUND ? 0 : r;
}

struct find {
	const void *blob;
	const char *const *compats;
	int n;
	struct dt_dev *out;
};

/* dt_find_compatible's callback: the first node that matches, with a reg
 * that reaches the CPU, ends the walk. */
static int find_node(void *ctx, const struct dt_dev *d, int depth, bool has_reg)
{
	struct find *f = ctx;
	(void)depth;
	for (int i = 0; has_reg && i < f->n; i++) {
		if (dt_is_compatible(f->blob, d->node, f->compats[i])) {
			*f->out = *d;
			f->out->which = i;
			return DT_FOUND;
		}
	}
	return 0;
}

int dt_find_compatible(const void *blob, const char *const *compats, int n,
		       struct dt_dev *out)
{
	struct find f = { .blob = blob, .compats = compats, .n = n, .out = out };
	int r = walk_all(blob, find_node, &f);
	return r == DT_FOUND ? 0 : r ? r : -E_NOENT;
}
