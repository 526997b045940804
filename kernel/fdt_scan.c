/* One pass over the structure block, collecting what boot needs. */
#include <stdbool.h>
#include <patina/errno.h>
#include "fdt.h"
#include "kstring.h"

#define MAX_DEPTH 16

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

int fdt_check_header(const void *blob, uint32_t *totalsize)
{
	const uint8_t *b = blob;
	if (fdt_be32(b) != FDT_MAGIC)
		return -E_INVAL;
	uint32_t total = fdt_be32(b + 4);
	uint32_t off_struct = fdt_be32(b + 8);
	uint32_t off_strings = fdt_be32(b + 12);
	uint32_t off_rsv = fdt_be32(b + 16);
	uint32_t version = fdt_be32(b + 20);
	uint32_t size_strings = fdt_be32(b + 32);
	uint32_t size_struct = fdt_be32(b + 36);
	if (version < 17 || total < 40)
		return -E_INVAL;
	if (off_struct > total || size_struct > total - off_struct ||
	    off_strings > total || size_strings > total - off_strings ||
	    off_rsv > total || (off_rsv & 7) || (off_struct & 3))
		return -E_INVAL;
	*totalsize = total;
	return 0;
}

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

/* Append the (address, size) pairs of a reg property. */
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

static int add_reg(const struct level *parent, const struct level *l,
		   struct phys_range *out, int *n, int max)
{
	uint32_t ac = parent->ac, sc = parent->sc;
	if (!l->reg)
		return 0;
	if (ac < 1 || ac > 2 || sc > 2)
		return -E_INVAL;
	uint32_t entry = 4 * (ac + sc);
	if (l->reglen % entry)
		return -E_INVAL;
	for (uint32_t off = 0; off < l->reglen; off += entry) {
		uint64_t base = fdt_read_cells(l->reg + off, ac);
		uint64_t size = sc ? fdt_read_cells(l->reg + off + 4 * ac, sc) : 0;
		if (size == 0)
			continue;
		if (*n >= max)
			return -E_INVAL;
		out[*n].base = base;
		out[*n].size = size;
		(*n)++;
	}
	return 0;
}

static int finish_node(struct boot_info *bi, struct level *parent, struct level *l)
{
	switch (l->kind) {
	case K_MEM:
		if (l->device_type ? strcmp(l->device_type, "memory") != 0
				   : !name_is(l->name, "memory"))
			return 0;
		return add_reg(parent, l, bi->mem, &bi->nmem, BI_MAX_MEM);
	case K_RESV:
		return add_reg(parent, l, bi->resv, &bi->nresv, BI_MAX_RESV);
	case K_CPUS:
		if (l->timebase && !bi->timebase)
			bi->timebase = fdt_read_cells(l->timebase, l->timebase_len / 4);
		return 0;
	case K_CPU: {
		if (l->device_type && strcmp(l->device_type, "cpu") != 0)
			return 0;
		if (!l->reg || l->reglen < 4 * parent->ac || parent->ac < 1 || parent->ac > 2)
			return -E_INVAL;
		if (bi->ncpus == INT32_MAX)
			return -E_INVAL;
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
	uint32_t total;
	int err = fdt_check_header(blob, &total);
	if (err)
		return err;
	struct bi_cpu *cpus = bi->cpus;
	int cap = bi->cpus_cap;
	memset(bi, 0, sizeof *bi);
	bi->cpus = cpus;
	bi->cpus_cap = cap;
	bi->dtb_pa = pa;
	bi->dtb_size = total;

	const uint8_t *b = blob;
	bi->boot_cpuid = fdt_be32(b + 28);

	for (int i = 0;; i++) {
		struct phys_range r;
		int e = fdt_memreserve(blob, i, &r);
		if (e == -E_NOENT)
			break;
		if (e)
			return e;
		if (bi->nmemrsv >= BI_MAX_RESV)
			return -E_INVAL;
		bi->memrsv[bi->nmemrsv++] = r;
	}

	const uint8_t *st = b + fdt_be32(b + 8);
	uint32_t st_size = fdt_be32(b + 36);
	const char *strs = (const char *)b + fdt_be32(b + 12);
	uint32_t strs_size = fdt_be32(b + 32);

	static struct level lv[MAX_DEPTH];
	int depth = -1;
	uint32_t pos = 0;
	for (;;) {
		if (pos + 4 > st_size)
			return -E_INVAL;
		uint32_t tok = fdt_be32(st + pos);
		pos += 4;
		switch (tok) {
		case FDT_BEGIN_NODE: {
			const char *name = (const char *)st + pos;
			size_t n = strnlen(name, st_size - pos);
			if (pos + n >= st_size)
				return -E_INVAL;
			pos = (pos + (uint32_t)n + 1 + 3) & ~3u;
			if (++depth >= MAX_DEPTH)
				return -E_INVAL;
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
				return -E_INVAL;
			if (depth > 0) {
				err = finish_node(bi, &lv[depth - 1], &lv[depth]);
				if (err)
					return err;
			}
			depth--;
			break;
		case FDT_PROP: {
			if (depth < 0 || pos + 8 > st_size)
				return -E_INVAL;
			uint32_t len = fdt_be32(st + pos);
			uint32_t nameoff = fdt_be32(st + pos + 4);
			pos += 8;
			if (len > st_size - pos || nameoff >= strs_size)
				return -E_INVAL;
			const uint8_t *v = st + pos;
			pos = (pos + len + 3) & ~3u;
			const char *pn = strs + nameoff;
			if (strnlen(pn, strs_size - nameoff) == strs_size - nameoff)
				return -E_INVAL;
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
						return -E_INVAL;
					bi->has_bootargs = true;
				}
			}
			break;
		}
		case FDT_NOP:
			break;
		case FDT_END:
			return depth == -1 ? 0 : -E_INVAL;
		default:
			return -E_INVAL;
		}
	}
}
