/* The DTB comes from firmware and is untrusted: its header is checked on
 * every use, and fdt_validate walks the whole blob once at boot, before
 * anything else reads it. Every loop here is bounded by a block size. */
#include <stdbool.h>
#include <patina/errno.h>
#include "fdt.h"
#include "kstring.h"

/* The first defect of the header at b (FDT_HEADER_SIZE readable bytes),
 * or NULL. Every block must lie inside totalsize and after the header. */
static const char *header_defect(const uint8_t *b)
{
	if (fdt_be32(b) != FDT_MAGIC)
		return "bad magic";
	uint32_t total = fdt_be32(b + 4);
	uint32_t off_struct = fdt_be32(b + 8);
	uint32_t off_strings = fdt_be32(b + 12);
	uint32_t off_rsv = fdt_be32(b + 16);
	uint32_t version = fdt_be32(b + 20);
	uint32_t last_comp = fdt_be32(b + 24);
	uint32_t size_strings = fdt_be32(b + 32);
	uint32_t size_struct = fdt_be32(b + 36);
	/* version 17 is the first with size_dt_struct; a blob that needs a
	 * reader newer than 17 has a layout this one does not know */
	if (version < 17 || last_comp > 17)
		return "unsupported version";
	if (total < FDT_HEADER_SIZE || total > FDT_MAX_SIZE)
		return "totalsize out of range";
	if (off_struct < FDT_HEADER_SIZE || off_struct > total ||
	    size_struct > total - off_struct || (off_struct & 3))
		return "structure block outside the blob";
	if (off_strings < FDT_HEADER_SIZE || off_strings > total ||
	    size_strings > total - off_strings)
		return "strings block outside the blob";
	if (off_rsv < FDT_HEADER_SIZE || off_rsv > total || (off_rsv & 7))
		return "memreserve block outside the blob";
	return NULL;
}

int fdt_check_header(const void *blob, uint32_t *totalsize)
{
	if (header_defect(blob))
		return -E_INVAL;
	*totalsize = fdt_be32((const uint8_t *)blob + 4);
	return 0;
}

int fdt_blocks_of(const void *blob, struct fdt_blocks *k)
{
	const uint8_t *b = blob;
	if (fdt_check_header(blob, &k->total))
		return -E_INVAL;
	k->st = b + fdt_be32(b + 8);
	k->st_size = fdt_be32(b + 36);
	k->strs = (const char *)b + fdt_be32(b + 12);
	k->strs_size = fdt_be32(b + 32);
	return 0;
}

const char *fdt_string_at(const struct fdt_blocks *k, uint32_t off)
{
	if (off >= k->strs_size)
		return NULL;
	const char *s = k->strs + off;
	return strnlen(s, k->strs_size - off) < k->strs_size - off ? s : NULL;
}

/* The first defect of the memreserve block, or NULL: its (address, size)
 * pairs must end with a zero pair inside the blob. */
static const char *memreserve_defect(const uint8_t *b, uint32_t total)
{
	for (uint32_t off = fdt_be32(b + 16); total - off >= 16; off += 16)
		if (fdt_be64(b + off) == 0 && fdt_be64(b + off + 8) == 0)
			return NULL;
	return "memreserve block not terminated inside the blob";
}

/* The first defect of the structure block, or NULL. Each step advances
 * pos by at least 4 bytes, so the walk ends within st_size / 4 steps. */
static const char *struct_defect(const struct fdt_blocks *k)
{
	uint32_t pos = 0;
	int depth = -1;               /* -1: outside the root node */
	bool root_seen = false;
	for (;;) {
		if (!fdt_room(pos, k->st_size, 4))
			return "structure block ends without FDT_END";
		uint32_t tok = fdt_be32(k->st + pos);
		pos += 4;
		switch (tok) {
		case FDT_BEGIN_NODE: {
			if (depth < 0 && root_seen)
				return "a second root node";
			if (!fdt_room(pos, k->st_size, 1))
				return "node name past the structure block";
			size_t n = strnlen((const char *)k->st + pos, k->st_size - pos);
			if (n == k->st_size - pos)
				return "node name not terminated inside the structure block";
			pos = (pos + (uint32_t)n + 1 + 3) & ~3u;
			if (depth + 1 >= FDT_MAX_DEPTH)
				return "nodes nested too deep";
			depth++;
			root_seen = true;
			break;
		}
		case FDT_END_NODE:
			if (depth < 0)
				return "FDT_END_NODE outside any node";
			depth--;
			break;
		case FDT_PROP: {
			if (depth < 0)
				return "property outside any node";
			if (!fdt_room(pos, k->st_size, 8))
				return "property header past the structure block";
			uint32_t len = fdt_be32(k->st + pos);
			uint32_t nameoff = fdt_be32(k->st + pos + 4);
			pos += 8;
			if (len > k->st_size - pos)
				return "property value past the structure block";
			if (!fdt_string_at(k, nameoff))
				return "property name not a string of the strings block";
			pos = (pos + len + 3) & ~3u;
			break;
		}
		case FDT_NOP:
			break;
		case FDT_END:
			if (!root_seen)
				return "no root node";
			return depth < 0 ? NULL : "FDT_END inside a node";
		default:
			return "unknown token in the structure block";
		}
	}
}

int fdt_validate(const void *blob, uint32_t avail, const char **why)
{
	const uint8_t *b = blob;
	const char *d = NULL;
	struct fdt_blocks k;
	if (avail < FDT_HEADER_SIZE)
		d = "blob shorter than its header";
	else if ((d = header_defect(b)) != NULL)
		;
	else if (fdt_be32(b + 4) > avail)
		d = "totalsize past the readable blob";
	else if ((d = memreserve_defect(b, fdt_be32(b + 4))) != NULL)
		;
	else if (fdt_blocks_of(blob, &k))
		d = "header";           /* not reached: header_defect passed */
	else
		d = struct_defect(&k);
	*why = d;
	return d ? -E_INVAL : 0;
}
