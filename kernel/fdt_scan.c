/* One pass over the structure block, collecting what boot needs. */
#include <stdbool.h>
#include <patina/errno.h>
#include "fdt.h"
#include "kstring.h"

enum kind { K_OTHER, K_ROOT, K_MEM, K_RESV_PARENT, K_RESV, K_CPUS, K_CPU, K_CHOSEN };

struct level {
	enum kind kind;
	const char *name;
	uint32_t ac, sc;              /* this node's #address-cells/#size-cells */
	const uint8_t *reg;
	uint32_t reglen;
	const char *device_type;
	const char *status;
	const char *mmu_type;
	const char *isa;
	const uint8_t *timebase;
	uint32_t timebase_len;
};

/* A NUL-terminated string property, or NULL if it is not one. */
static const char *prop_str(const uint8_t *v, uint32_t len)
{
	if (len == 0 || v[len - 1] != 0)
		return NULL;
	return (const char *)v;
}

static bool name_is(const char *name, const char *base)
{
	size_t n = strlen(base);
	return strncmp(name, base, n) == 0 && (name[n] == 0 || name[n] == '@');
}

/* Does riscv,isa string isa (may be NULL) list the multi-letter extension
 * ext? Those follow '_' in the string, each ending at '_' or its end. */
static bool isa_has(const char *isa, const char *ext)
{
	size_t n = strlen(ext);
	for (const char *p = isa; p && (p = strchr(p, '_')); p++)
		if (!strncmp(p + 1, ext, n) && (p[n + 1] == 0 || p[n + 1] == '_'))
			return true;
	return false;
}

/* Refuse the blob: record why in bi and return -E_INVAL. */
static int refuse(struct boot_info *bi, const char *why)
{
	bi->refused = why;
	return -E_INVAL;
}

/* Append the (address, size) pairs of node l's reg property (if any) to
 * out[*n..max), in the parent's #address-cells (1 or 2) and #size-cells
 * (0 to 2). Zero-sized pairs are skipped. Returns 0, or -E_INVAL with
 * bi->refused set for other cell counts, a length that is not a whole
 * number of pairs, a range past FDT_PA_LIMIT, one that overlaps a range
 * already in out (if disjoint), or more than max ranges. */
static int add_reg(struct boot_info *bi, const struct level *parent, const struct level *l,
		   struct phys_range *out, int *n, int max, bool disjoint)
{
	uint32_t ac = parent->ac, sc = parent->sc;
	if (!l->reg)
		return 0;
	if (ac < 1 || ac > 2 || sc > 2)
		return refuse(bi, "#address-cells or #size-cells out of range");
	uint32_t entry = 4 * (ac + sc);
	if (l->reglen % entry)
		return refuse(bi, "reg length not a whole number of entries");
	for (uint32_t off = 0; off < l->reglen; off += entry) {
		uint64_t base = fdt_read_cells(l->reg + off, ac);
		uint64_t size = sc ? fdt_read_cells(l->reg + off + 4 * ac, sc) : 0;
		if (size == 0)
			continue;
		if (!fdt_range_ok(base, size))
			return refuse(bi, "reg range past the physical address space");
		/* RAM listed twice would give the frame allocator the same
		 * frames twice */
		for (int i = 0; disjoint && i < *n; i++)
			if (base < out[i].base + out[i].size && out[i].base < base + size)
				return refuse(bi, "memory ranges overlap");
		if (*n >= max)
			return refuse(bi, "more memory or reserved ranges than the kernel holds");
		out[*n].base = base;
		out[*n].size = size;
		(*n)++;
	}
	return 0;
}

/* Record node l (its properties all read; parent is the enclosing node)
 * in bi by its kind. Returns 0, or add_reg's error, or -E_INVAL with
 * bi->refused set for a cpu node without a usable reg. */
static int finish_node(struct boot_info *bi, struct level *parent, struct level *l)
{
	switch (l->kind) {
	case K_MEM:
		if (l->device_type ? strcmp(l->device_type, "memory") != 0
				   : !name_is(l->name, "memory"))
			return 0;
		return add_reg(bi, parent, l, bi->mem, &bi->nmem, BI_MAX_MEM, true);
	case K_RESV:
		return add_reg(bi, parent, l, bi->resv, &bi->nresv, BI_MAX_RESV, false);
	case K_CPUS:
		if (l->timebase && !bi->timebase)
			bi->timebase = fdt_read_cells(l->timebase, l->timebase_len / 4);
		return 0;
	case K_CPU: {
		if (l->device_type && strcmp(l->device_type, "cpu") != 0)
			return 0;
		if (parent->ac < 1 || parent->ac > 2)
			return refuse(bi, "/cpus #address-cells out of range");
		if (!l->reg || l->reglen < 4 * parent->ac)
			return refuse(bi, "cpu node without a reg");
		if (bi->ncpus == INT32_MAX)
			return refuse(bi, "too many cpu nodes");
		bool okay = !l->status || !strcmp(l->status, "okay") || !strcmp(l->status, "ok");
		/* every hart, stored or not: the page tables are built before
		 * harts_init gives cpus room */
		if (okay && !isa_has(l->isa, "svpbmt"))
			bi->no_svpbmt = true;
		if (bi->ncpus++ >= bi->cpus_cap)
			return 0;     /* counted, no room to store it */
		struct bi_cpu *c = &bi->cpus[bi->ncpus - 1];
		c->hartid = (uint32_t)fdt_read_cells(l->reg, parent->ac);
		c->okay = okay;
		c->has_mmu = l->mmu_type && strcmp(l->mmu_type, "riscv,none") != 0;
		strlcpy(c->mmu_type, l->mmu_type ? l->mmu_type : "", sizeof c->mmu_type);
		c->has_sstc = isa_has(l->isa, "sstc");
		if (l->timebase && !bi->timebase)
			bi->timebase = fdt_read_cells(l->timebase, l->timebase_len / 4);
		return 0;
	}
	default:
		return 0;
	}
}

static enum kind classify(const struct level *parent, int depth, const char *name)
{
	if (depth == 0)
		return K_ROOT;
	if (depth == 1) {
		if (name_is(name, "memory"))
			return K_MEM;
		if (!strcmp(name, "reserved-memory"))
			return K_RESV_PARENT;
		if (!strcmp(name, "cpus"))
			return K_CPUS;
		if (!strcmp(name, "chosen"))
			return K_CHOSEN;
		/* Memory nodes may be named otherwise; device_type decides. */
		return K_MEM;
	}
	if (depth == 2 && parent->kind == K_RESV_PARENT)
		return K_RESV;
	if (depth == 2 && parent->kind == K_CPUS && name_is(name, "cpu"))
		return K_CPU;
	return K_OTHER;
}

int fdt_scan(const void *blob, paddr_t pa, struct boot_info *bi)
{
	struct fdt_blocks k;
	struct bi_cpu *cpus = bi->cpus;
	int cap = bi->cpus_cap;
	memset(bi, 0, sizeof *bi);
	bi->cpus = cpus;
	bi->cpus_cap = cap;
	if (fdt_blocks_of(blob, &k))
		return refuse(bi, "bad header");
	bi->dtb_pa = pa;
	bi->dtb_size = k.total;

	const uint8_t *b = blob;
	bi->boot_cpuid = fdt_be32(b + 28);

	for (int i = 0;; i++) {
		struct phys_range r;
		int e = fdt_memreserve(blob, i, &r);
		if (e == -E_NOENT)
			break;
		if (e)
			return refuse(bi, "memreserve block not terminated inside the blob");
		if (!fdt_range_ok(r.base, r.size))
			return refuse(bi, "memreserve range past the physical address space");
		if (bi->nmemrsv >= BI_MAX_RESV)
			return refuse(bi, "more memreserve entries than the kernel holds");
		bi->memrsv[bi->nmemrsv++] = r;
	}

	const uint8_t *st = k.st;
	uint32_t st_size = k.st_size;
	static struct level lv[FDT_MAX_DEPTH];
	int depth = -1;
	uint32_t pos = 0;
	/* pos grows by at least 4 a step: at most st_size / 4 steps */
	for (;;) {
		if (!fdt_room(pos, st_size, 4))
			return refuse(bi, "structure block ends without FDT_END");
		uint32_t tok = fdt_be32(st + pos);
		pos += 4;
		switch (tok) {
		case FDT_BEGIN_NODE: {
			const char *name = (const char *)st + pos;
			if (!fdt_room(pos, st_size, 1))
				return refuse(bi, "node name past the structure block");
			size_t n = strnlen(name, st_size - pos);
			if (n == st_size - pos)
				return refuse(bi, "node name not terminated inside the structure block");
			pos = (pos + (uint32_t)n + 1 + 3) & ~3u;
			if (depth + 1 >= FDT_MAX_DEPTH)
				return refuse(bi, "nodes nested too deep");
			depth++;
			struct level *l = &lv[depth];
			memset(l, 0, sizeof *l);
			l->name = name;
			l->ac = 2;
			l->sc = 1;
			l->kind = classify(depth ? &lv[depth - 1] : NULL, depth, name);
			break;
		}
		case FDT_END_NODE:
			if (depth < 0)
				return refuse(bi, "FDT_END_NODE outside any node");
			if (depth > 0) {
				int err = finish_node(bi, &lv[depth - 1], &lv[depth]);
				if (err)
					return err;
			}
			depth--;
			break;
		case FDT_PROP: {
			if (depth < 0)
				return refuse(bi, "property outside any node");
			if (!fdt_room(pos, st_size, 8))
				return refuse(bi, "property header past the structure block");
			uint32_t len = fdt_be32(st + pos);
			uint32_t nameoff = fdt_be32(st + pos + 4);
			pos += 8;
			if (len > st_size - pos)
				return refuse(bi, "property value past the structure block");
			const char *pn = fdt_string_at(&k, nameoff);
			if (!pn)
				return refuse(bi, "property name not a string of the strings block");
			const uint8_t *v = st + pos;
			pos = (pos + len + 3) & ~3u;
			struct level *l = &lv[depth];
			if (!strcmp(pn, "#address-cells") && len == 4)
				l->ac = fdt_be32(v);
			else if (!strcmp(pn, "#size-cells") && len == 4)
				l->sc = fdt_be32(v);
			else if (!strcmp(pn, "reg")) {
				l->reg = v;
				l->reglen = len;
			} else if (!strcmp(pn, "device_type"))
				l->device_type = prop_str(v, len);
			else if (!strcmp(pn, "status"))
				l->status = prop_str(v, len);
			else if (!strcmp(pn, "mmu-type"))
				l->mmu_type = prop_str(v, len);
			else if (!strcmp(pn, "riscv,isa"))
				l->isa = prop_str(v, len);
			else if (!strcmp(pn, "timebase-frequency") && (len == 4 || len == 8)) {
				l->timebase = v;
				l->timebase_len = len;
			} else if (!strcmp(pn, "bootargs") && l->kind == K_CHOSEN) {
				const char *s = prop_str(v, len);
				if (s) {
					if (strlcpy(bi->bootargs, s, sizeof bi->bootargs) >=
					    sizeof bi->bootargs)
						return refuse(bi, "bootargs longer than the kernel holds");
					bi->has_bootargs = true;
				}
			}
			break;
		}
		case FDT_NOP:
			break;
		case FDT_END:
			return depth == -1 ? 0 : refuse(bi, "FDT_END inside a node");
		default:
			return refuse(bi, "unknown token in the structure block");
		}
	}
}
