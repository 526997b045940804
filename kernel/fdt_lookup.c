/* Navigation by node offsets, independent of fdt_scan's single pass. */
#include <patina/errno.h>
#include "fdt.h"
#include "kstring.h"

/* Every function here takes the blob and handle as given (a handle may be
 * stale or made up): each checks the header, and each offset, before it
 * reads. */
static int blk_of(const void *blob, struct fdt_blocks *k)
{
	return fdt_blocks_of(blob, k) ? -E_INVAL : 0;
}

static int tok_at(const struct fdt_blocks *k, uint32_t off, uint32_t *tok)
{
	if ((off & 3) || !fdt_room(off, k->st_size, 4))
		return -E_INVAL;
	*tok = fdt_be32(k->st + off);
	return 0;
}

/* Offset just past the name of the node at `node`. */
static int after_name(const struct fdt_blocks *k, int node)
{
	uint32_t tok;
	if (node < 0 || tok_at(k, (uint32_t)node, &tok) || tok != FDT_BEGIN_NODE)
		return -E_INVAL;
	uint32_t p = (uint32_t)node + 4;
	if (p >= k->st_size)
		return -E_INVAL;
	size_t n = strnlen((const char *)k->st + p, k->st_size - p);
	if (p + n >= k->st_size)
		return -E_INVAL;
	return (int)((p + n + 1 + 3) & ~3u);
}

/* Offset past one PROP or NOP token at off, or -E_NOENT if the token is
 * neither. */
static int skip_prop(const struct fdt_blocks *k, uint32_t off)
{
	uint32_t tok;
	if (tok_at(k, off, &tok))
		return -E_INVAL;
	if (tok == FDT_NOP)
		return (int)off + 4;
	if (tok != FDT_PROP)
		return -E_NOENT;
	if (k->st_size - off < 12)
		return -E_INVAL;
	uint32_t len = fdt_be32(k->st + off + 4);
	if (len > k->st_size - off - 12)
		return -E_INVAL;
	return (int)((off + 12 + len + 3) & ~3u);
}

/* Offset just past the END_NODE matching the node at `node`. */
static int skip_node(const struct fdt_blocks *k, int node)
{
	int p = after_name(k, node);
	int depth = 1;
	while (p >= 0) {
		uint32_t tok;
		if (tok_at(k, (uint32_t)p, &tok))
			return -E_INVAL;
		if (tok == FDT_BEGIN_NODE) {
			depth++;
			p = after_name(k, p);
		} else if (tok == FDT_END_NODE) {
			p += 4;
			if (--depth == 0)
				return p;
		} else {
			int q = skip_prop(k, (uint32_t)p);
			if (q < 0)
				return -E_INVAL;
			p = q;
		}
	}
	return -E_INVAL;
}

/* First BEGIN_NODE at or after p, skipping NOPs; -E_NOENT if another
 * token, -E_INVAL if the node's name is not terminated inside the block
 * (a handle returned is always one fdt_node_name can name). */
static int node_at(const struct fdt_blocks *k, int p)
{
	uint32_t tok;
	while (p >= 0 && !tok_at(k, (uint32_t)p, &tok) && tok == FDT_NOP)
		p += 4;
	if (p < 0 || tok_at(k, (uint32_t)p, &tok))
		return -E_INVAL;
	if (tok != FDT_BEGIN_NODE)
		return -E_NOENT;
	return after_name(k, p) < 0 ? -E_INVAL : p;
}

int fdt_root(const void *blob)
{
	struct fdt_blocks k;
	if (blk_of(blob, &k))
		return -E_INVAL;
	int r = node_at(&k, 0);
	return r >= 0 ? r : -E_INVAL;
}

int fdt_first_child(const void *blob, int node)
{
	struct fdt_blocks k;
	if (blk_of(blob, &k))
		return -E_INVAL;
	int p = after_name(&k, node);
	for (;;) {
		if (p < 0)
			return p;
		int q = skip_prop(&k, (uint32_t)p);
		if (q == -E_NOENT)
			break;
		p = q;
	}
	return node_at(&k, p);
}

int fdt_next_sibling(const void *blob, int node)
{
	struct fdt_blocks k;
	if (blk_of(blob, &k))
		return -E_INVAL;
	return node_at(&k, skip_node(&k, node));
}

const char *fdt_node_name(const void *blob, int node)
{
	struct fdt_blocks k;
	if (blk_of(blob, &k) || after_name(&k, node) < 0)
		return NULL;
	return (const char *)k.st + node + 4;
}

const void *fdt_getprop(const void *blob, int node, const char *name, int *len)
{
	struct fdt_blocks k;
	if (blk_of(blob, &k))
		return NULL;
	int p = after_name(&k, node);
	while (p >= 0) {
		uint32_t tok;
		if (tok_at(&k, (uint32_t)p, &tok))
			return NULL;
		/* skip_prop first: it checks the header and the value lie
		 * inside the block before either is read */
		int q = skip_prop(&k, (uint32_t)p);
		if (q < 0)
			return NULL;
		if (tok == FDT_PROP) {
			const char *pn = fdt_string_at(&k, fdt_be32(k.st + p + 8));
			if (pn && !strcmp(pn, name)) {
				if (len)
					*len = (int)fdt_be32(k.st + p + 4);
				return k.st + p + 12;
			}
		}
		p = q;
	}
	return NULL;
}

/* Does node name `name` match path component comp[0..n)? */
static int comp_matches(const char *name, const char *comp, size_t n)
{
	if (strncmp(name, comp, n) != 0)
		return 0;
	if (name[n] == 0)
		return 1;
	for (size_t i = 0; i < n; i++)
		if (comp[i] == '@')
			return 0;
	return name[n] == '@';
}

int fdt_path(const void *blob, const char *path)
{
	int node = fdt_root(blob);
	if (node < 0)
		return node;
	if (path[0] != '/')
		return -E_INVAL;
	const char *p = path + 1;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);
		int c = fdt_first_child(blob, node);
		while (c >= 0) {
			const char *nm = fdt_node_name(blob, c);
			if (nm && comp_matches(nm, p, n))
				break;
			c = fdt_next_sibling(blob, c);
		}
		if (c < 0)
			return -E_NOENT;
		node = c;
		p += n;
		if (*p == '/')
			p++;
	}
	return node;
}

uint64_t fdt_read_cells(const void *p, uint32_t cells)
{
	return cells == 2 ? fdt_be64(p) : fdt_be32(p);
}

int fdt_memreserve(const void *blob, int i, struct phys_range *out)
{
	uint32_t total;
	if (fdt_check_header(blob, &total) || i < 0)
		return -E_INVAL;
	const uint8_t *b = blob;
	/* the header check put off at or below total */
	uint32_t off = fdt_be32(b + 16);
	for (int k = 0;; k++, off += 16) {
		if (total - off < 16)
			return -E_INVAL;
		uint64_t a = fdt_be64(b + off), s = fdt_be64(b + off + 8);
		if (a == 0 && s == 0)
			return -E_NOENT;
		if (k == i) {
			out->base = a;
			out->size = s;
			return 0;
		}
	}
}
