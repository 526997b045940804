/* The DTB of an x86-64 PVH boot (bootfdt.h). Two steps: read and check
 * everything the firmware gave into a plan (nothing written yet), then lay
 * the plan out as a blob, its magic written last, so a refused or
 * too-small build never leaves something that looks like a DTB. */
#include <stdbool.h>
#include <patina/errno.h>
#include "bootfdt.h"
#include "fdt.h"
#include "kstring.h"

#define PAGE          4096ull
#define MODLINE_MAX   4096u    /* a module's command line kept, at most */

/* [lo, hi): physical addresses. */
struct span {
	uint64_t lo, hi;
};

struct cpu_ent {
	uint32_t apic_id;
	bool okay;
};

/* What the DTB will say, gathered and checked before a byte is written. */
struct plan {
	struct span ram[X86_BOOT_MEMMAP_MAX];
	int nram;
	struct span resv[BI_MAX_RESV + 1];   /* one over: room to merge down */
	int nresv;
	struct cpu_ent cpus[X86_BOOT_CPUS_MAX];
	int ncpus;
	const char *cmdline;                 /* NULL: none */
	uint32_t cmdline_len;                /* without its NUL */
};

/* Static, not on the boot stack: ~11 KiB. Boot runs this once, on one CPU. */
static struct plan plan;

static int refuse(const char **why, const char *reason)
{
	*why = reason;
	return -E_INVAL;
}

/* Insert [lo, hi) into the sorted list s[0..*n) of disjoint spans that do
 * not touch, merging it with every span it overlaps or touches. The list
 * needs room for one more. */
static void spans_add(struct span *s, int *n, uint64_t lo, uint64_t hi)
{
	int i = 0;
	while (i < *n && s[i].hi < lo)
		i++;
	int j = i;
	for (; j < *n && s[j].lo <= hi; j++) {
		if (s[j].lo < lo)
			lo = s[j].lo;
		if (s[j].hi > hi)
			hi = s[j].hi;
	}
	memmove(&s[i + 1], &s[j], sizeof *s * (size_t)(*n - j));
	s[i].lo = lo;
	s[i].hi = hi;
	*n += 1 - (j - i);
}

static bool overlaps_ram(const struct plan *p, uint64_t lo, uint64_t hi)
{
	for (int i = 0; i < p->nram; i++)
		if (lo < p->ram[i].hi && p->ram[i].lo < hi)
			return true;
	return false;
}

/* Keep [base, base + size) from the frame allocator, if it touches RAM
 * the DTB lists (elsewhere nothing would hand it out), rounded out to
 * pages. The list holds BI_MAX_RESV spans: past that the two closest
 * merge, reserving the gap between them too (it only costs RAM). The
 * caller has checked that the range does not wrap below FDT_PA_LIMIT. */
static void reserve(struct plan *p, uint64_t base, uint64_t size)
{
	uint64_t lo = base & ~(PAGE - 1), hi = (base + size + PAGE - 1) & ~(PAGE - 1);
	if (!size || !overlaps_ram(p, lo, hi))
		return;
	spans_add(p->resv, &p->nresv, lo, hi);
	if (p->nresv <= BI_MAX_RESV)
		return;
	int best = 0;
	for (int i = 1; i + 1 < p->nresv; i++)
		if (p->resv[i + 1].lo - p->resv[i].hi < p->resv[best + 1].lo - p->resv[best].hi)
			best = i;
	p->resv[best].hi = p->resv[best + 1].hi;
	memmove(&p->resv[best + 1], &p->resv[best + 2],
		sizeof p->resv[0] * (size_t)(p->nresv - best - 2));
	p->nresv--;
}

/* The RAM runs of the memory map above X86_BOOT_LOW_LIMIT into p->ram,
 * then whatever else the map says lies over them into p->resv. */
static int plan_memory(const struct acpi_window *w, const struct hvm_start_info *si,
		       struct plan *p, const char **why)
{
	uint32_t n = si->memmap_entries;
	if (si->version < 1 || n == 0)
		return refuse(why, "PVH start info has no memory map");
	if (n > X86_BOOT_MEMMAP_MAX)
		return refuse(why, "PVH memory map has more entries than boot reads");
	/* read field by field: firmware need not align the table */
	const uint32_t esz = sizeof(struct hvm_memmap_table_entry);
	const uint8_t *m = acpi_map(w, si->memmap_paddr, (uint64_t)n * esz);
	if (!m)
		return refuse(why, "PVH memory map outside memory");
	for (const uint8_t *e = m; e < m + n * esz; e += esz) {
		uint64_t base = acpi_le64(e), size = acpi_le64(e + 8), lo = base;
		if (!fdt_range_ok(base, size))
			return refuse(why, "PVH memory map entry past the physical address space");
		if (acpi_le32(e + 16) != HVM_MEMMAP_RAM || !size)
			continue;
		if (lo < X86_BOOT_LOW_LIMIT)
			lo = X86_BOOT_LOW_LIMIT;
		if (lo < base + size)
			spans_add(p->ram, &p->nram, lo, base + size);
	}
	if (p->nram == 0)
		return refuse(why, "PVH memory map has no RAM above 1 MiB");
	if (p->nram > BI_MAX_MEM)
		return refuse(why, "PVH memory map has more RAM runs than the kernel holds");
	for (const uint8_t *e = m; e < m + n * esz; e += esz)
		if (acpi_le32(e + 16) != HVM_MEMMAP_RAM)
			reserve(p, acpi_le64(e), acpi_le64(e + 8));
	reserve(p, si->memmap_paddr, (uint64_t)n * esz);
	return 0;
}

/* The start info itself, the command line, the module list and modules:
 * checked, and reserved where they lie in RAM. */
static int plan_loader(const struct acpi_window *w, const struct hvm_start_info *si,
		       struct plan *p, const char **why)
{
	reserve(p, (uintptr_t)si - w->base, sizeof *si);
	p->cmdline = NULL;
	if (si->cmdline_paddr) {
		const char *s = (const char *)acpi_map(w, si->cmdline_paddr, 1);
		if (!s)
			return refuse(why, "PVH command line outside memory");
		uint64_t avail = w->size - si->cmdline_paddr;
		size_t max = avail < BI_ARGS_LEN ? (size_t)avail : BI_ARGS_LEN;
		size_t len = strnlen(s, max);
		if (len == max)
			return refuse(why, "PVH command line not terminated within BI_ARGS_LEN bytes");
		p->cmdline = s;
		p->cmdline_len = (uint32_t)len;
		reserve(p, si->cmdline_paddr, len + 1);
	}
	uint32_t nm = si->nr_modules;
	if (nm == 0)
		return 0;
	if (nm > X86_BOOT_MODULES_MAX)
		return refuse(why, "PVH start info lists more modules than boot reads");
	const uint32_t esz = sizeof(struct hvm_modlist_entry);
	const uint8_t *ml = acpi_map(w, si->modlist_paddr, (uint64_t)nm * esz);
	if (!ml)
		return refuse(why, "PVH module list outside memory");
	reserve(p, si->modlist_paddr, (uint64_t)nm * esz);
	for (const uint8_t *e = ml; e < ml + nm * esz; e += esz) {
		uint64_t base = acpi_le64(e), size = acpi_le64(e + 8), line = acpi_le64(e + 16);
		if (!fdt_range_ok(base, size))
			return refuse(why, "PVH module past the physical address space");
		reserve(p, base, size);
		const char *c = line ? (const char *)acpi_map(w, line, 1) : NULL;
		if (c) {
			uint64_t avail = w->size - line;
			size_t max = avail < MODLINE_MAX ? (size_t)avail : MODLINE_MAX;
			reserve(p, line, strnlen(c, max) + 1);
		}
	}
	return 0;
}

/* Reserve the well-formed table at pa (header length, no checksum: a table
 * nobody reads yet need only not be overwritten). */
static void reserve_table(const struct acpi_window *w, struct plan *p, uint64_t pa)
{
	uint32_t len;
	if (pa && !acpi_table_len(w, pa, &len))
		reserve(p, pa, len);
}

/* The FADT's DSDT and FACS: 64-bit pointers when the table has them and
 * they are set, else the 32-bit ones. */
static void reserve_fadt_children(const struct acpi_window *w, struct plan *p, uint64_t pa)
{
	uint32_t len;
	if (acpi_table_len(w, pa, &len) || len < 44)
		return;
	const uint8_t *f = acpi_map(w, pa, len);
	uint64_t facs = len >= 140 && acpi_le64(f + 132) ? acpi_le64(f + 132) : acpi_le32(f + 36);
	uint64_t dsdt = len >= 148 && acpi_le64(f + 140) ? acpi_le64(f + 140) : acpi_le32(f + 40);
	reserve_table(w, p, facs);
	reserve_table(w, p, dsdt);
}

/* The processors of the MADT into p->cpus, the ACPI tables into p->resv. */
static int plan_acpi(const struct acpi_window *w, const struct hvm_start_info *si,
		     uint32_t bsp_apic_id, struct plan *p, const char **why)
{
	uint64_t rsdp = si->rsdp_paddr;
	if (!rsdp && acpi_find_rsdp(w, &rsdp))
		return refuse(why, "no ACPI RSDP");
	struct acpi_root r;
	if (acpi_root_open(w, rsdp, &r, why))
		return -E_INVAL;
	reserve(p, r.rsdp_pa, r.rsdp_len);
	reserve(p, r.sdt_pa, r.sdt_len);
	for (uint32_t i = 0; i < r.nentries; i++) {
		uint64_t e = acpi_root_entry(&r, i);
		reserve_table(w, p, e);
		const uint8_t *sig = acpi_map(w, e, 4);
		if (sig && !memcmp(sig, "FACP", 4))
			reserve_fadt_children(w, p, e);
	}

	const uint8_t *madt;
	uint32_t mlen;
	uint64_t mpa;
	int err = acpi_find_table(w, &r, "APIC", &madt, &mlen, &mpa, why);
	if (err == -E_NOENT)
		return refuse(why, "no ACPI MADT");
	if (err)
		return err;
	p->ncpus = 0;
	bool bsp = false;
	uint32_t pos = 0;
	struct acpi_cpu c;
	while ((err = acpi_madt_next_cpu(madt, mlen, &pos, &c, why)) == 1) {
		if (!c.enabled && !c.online_capable)
			continue;      /* a processor that can never run */
		/* firmware may list one processor both as APIC and x2APIC */
		int k = 0;
		while (k < p->ncpus && p->cpus[k].apic_id != c.apic_id)
			k++;
		if (k == p->ncpus) {
			if (p->ncpus == X86_BOOT_CPUS_MAX)
				return refuse(why, "MADT lists more processors than boot holds");
			p->cpus[p->ncpus].apic_id = c.apic_id;
			p->cpus[p->ncpus++].okay = false;
		}
		p->cpus[k].okay |= c.enabled;
		bsp |= c.enabled && c.apic_id == bsp_apic_id;
	}
	if (err)
		return err;
	if (!bsp)
		return refuse(why, "MADT does not list the boot processor as enabled");
	return 0;
}

/* --- The blob: structure block written in place after the memreserve
 * block, strings gathered aside and copied after it. --- */

#define STRS_MAX 256

struct out {
	uint8_t *b;
	uint32_t len, pos;
	char strs[STRS_MAX];
	uint32_t nstrs;
	bool full;                 /* buf (or strs) too small */
};

static void be32_at(uint8_t *d, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		d[i] = (uint8_t)(v >> (24 - 8 * i));
}

/* n bytes of data (NULL: zeros), padded to 4. */
static void emit(struct out *o, const void *data, uint32_t n)
{
	uint32_t padded = (n + 3) & ~3u;
	if (o->full || o->len - o->pos < padded) {
		o->full = true;
		return;
	}
	memset(o->b + o->pos, 0, padded);
	if (data)
		memcpy(o->b + o->pos, data, n);
	o->pos += padded;
}

static void token(struct out *o, uint32_t t)
{
	uint8_t v[4];
	be32_at(v, t);
	emit(o, v, 4);
}

static void node(struct out *o, const char *name)
{
	token(o, FDT_BEGIN_NODE);
	emit(o, name, (uint32_t)strlen(name) + 1);
}

/* The offset of name in the strings block, added once. */
static uint32_t name_off(struct out *o, const char *name)
{
	for (uint32_t at = 0; at < o->nstrs; at += (uint32_t)strlen(o->strs + at) + 1)
		if (!strcmp(o->strs + at, name))
			return at;
	uint32_t n = (uint32_t)strlen(name) + 1, at = o->nstrs;
	if (STRS_MAX - at < n) {
		o->full = true;
		return 0;
	}
	memcpy(o->strs + at, name, n);
	o->nstrs += n;
	return at;
}

static void prop(struct out *o, const char *name, const void *v, uint32_t n)
{
	uint8_t h[12];
	be32_at(h, FDT_PROP);
	be32_at(h + 4, n);
	be32_at(h + 8, name_off(o, name));
	emit(o, h, sizeof h);
	emit(o, v, n);
}

static void prop_str(struct out *o, const char *name, const char *s)
{
	prop(o, name, s, (uint32_t)strlen(s) + 1);
}

/* A property of n big-endian cells (n <= 4). */
static void prop_cells(struct out *o, const char *name, int n, const uint32_t *c)
{
	uint8_t v[16];
	for (int i = 0; i < n; i++)
		be32_at(v + 4 * i, c[i]);
	prop(o, name, v, 4 * (uint32_t)n);
}

static void prop_u32(struct out *o, const char *name, uint32_t v)
{
	prop_cells(o, name, 1, &v);
}

/* "prefix@<v in hex>" into d (room for 40 bytes). */
static void unit_name(char *d, const char *prefix, uint64_t v)
{
	size_t n = strlen(prefix);
	memcpy(d, prefix, n);
	d[n++] = '@';
	int digits = 1;
	while (digits < 16 && (v >> (4 * digits)))
		digits++;
	for (int i = digits - 1; i >= 0; i--)
		d[n++] = "0123456789abcdef"[(v >> (4 * i)) & 15];
	d[n] = 0;
}

static void write_tree(struct out *o, const struct plan *p, uint64_t timebase_hz)
{
	char name[40];
	node(o, "");
	prop_u32(o, "#address-cells", 2);
	prop_u32(o, "#size-cells", 2);
	prop_str(o, "compatible", "patina,x86-64-pvh");

	node(o, "chosen");
	if (p->cmdline)
		prop(o, "bootargs", p->cmdline, p->cmdline_len + 1);
	prop_str(o, "stdout-path", "/isa/serial@i3f8");
	token(o, FDT_END_NODE);

	for (int i = 0; i < p->nram; i++) {
		uint64_t base = p->ram[i].lo, size = p->ram[i].hi - p->ram[i].lo;
		uint32_t reg[4] = { (uint32_t)(base >> 32), (uint32_t)base,
				    (uint32_t)(size >> 32), (uint32_t)size };
		unit_name(name, "memory", base);
		node(o, name);
		prop_str(o, "device_type", "memory");
		prop_cells(o, "reg", 4, reg);
		token(o, FDT_END_NODE);
	}

	node(o, "cpus");
	prop_u32(o, "#address-cells", 1);
	prop_u32(o, "#size-cells", 0);
	if (timebase_hz >> 32) {
		uint32_t tb[2] = { (uint32_t)(timebase_hz >> 32), (uint32_t)timebase_hz };
		prop_cells(o, "timebase-frequency", 2, tb);
	} else if (timebase_hz) {
		prop_u32(o, "timebase-frequency", (uint32_t)timebase_hz);
	}
	for (int i = 0; i < p->ncpus; i++) {
		unit_name(name, "cpu", p->cpus[i].apic_id);
		node(o, name);
		prop_str(o, "device_type", "cpu");
		prop_u32(o, "reg", p->cpus[i].apic_id);
		/* long mode runs with 4-level paging on every x86-64 processor */
		prop_str(o, "mmu-type", "x86,4-level");
		prop_str(o, "status", p->cpus[i].okay ? "okay" : "disabled");
		token(o, FDT_END_NODE);
	}
	token(o, FDT_END_NODE);

	/* The ISA binding: address cell 0 says the space (1: I/O ports); no
	 * `ranges`, since I/O ports are not CPU memory addresses. */
	node(o, "isa");
	prop_str(o, "compatible", "isa");
	prop_u32(o, "#address-cells", 2);
	prop_u32(o, "#size-cells", 1);
	node(o, "serial@i3f8");
	prop_str(o, "compatible", "ns16550a");
	uint32_t reg[3] = { 1, 0x3f8, 8 };
	prop_cells(o, "reg", 3, reg);
	prop_u32(o, "clock-frequency", 1843200);
	token(o, FDT_END_NODE);
	token(o, FDT_END_NODE);

	token(o, FDT_END_NODE);
	token(o, FDT_END);
}

/* Lay the plan out in buf: header, memreserve block, structure, strings.
 * Returns 0, or -E_NOMEM when buf is too small. */
static long write_blob(const struct plan *p, uint32_t bsp_apic_id, uint64_t timebase_hz,
		       uint8_t *buf, uint32_t len)
{
	struct out o;
	uint32_t off_rsv = FDT_HEADER_SIZE;
	uint32_t off_st = off_rsv + 16 * (uint32_t)(p->nresv + 1);
	if (len < off_st)
		return -E_NOMEM;
	memset(&o, 0, sizeof o);
	o.b = buf;
	o.len = len < FDT_MAX_SIZE ? len : FDT_MAX_SIZE;
	o.pos = off_st;
	write_tree(&o, p, timebase_hz);
	uint32_t off_strs = o.pos;
	if (o.full || o.len - off_strs < o.nstrs)
		return -E_NOMEM;
	memcpy(buf + off_strs, o.strs, o.nstrs);
	for (int i = 0; i <= p->nresv; i++) {
		uint64_t base = i < p->nresv ? p->resv[i].lo : 0;
		uint64_t size = i < p->nresv ? p->resv[i].hi - p->resv[i].lo : 0;
		uint8_t *e = buf + off_rsv + 16 * i;
		be32_at(e, (uint32_t)(base >> 32));
		be32_at(e + 4, (uint32_t)base);
		be32_at(e + 8, (uint32_t)(size >> 32));
		be32_at(e + 12, (uint32_t)size);
	}
	uint32_t hdr[9] = { off_strs + o.nstrs, off_st, off_strs, off_rsv, 17, 16, bsp_apic_id,
			    o.nstrs, off_strs - off_st };
	for (int i = 0; i < 9; i++)
		be32_at(buf + 4 + 4 * i, hdr[i]);
	be32_at(buf, FDT_MAGIC);
	return 0;
}

long x86_bootfdt_build_in(const struct acpi_window *w, const struct hvm_start_info *si,
			  uint32_t bsp_apic_id, uint64_t timebase_hz, void *buf, uint32_t len,
			  const char **why)
{
	const char *reason = NULL;
	if (!why)
		why = &reason;
	*why = NULL;
	if (len >= 4)
		memset(buf, 0, 4);
	struct plan *p = &plan;
	p->nram = p->nresv = p->ncpus = 0;
	if (!si || acpi_map(w, (uintptr_t)si - w->base, sizeof *si) != (const uint8_t *)si)
		return refuse(why, "PVH start info outside memory");
	if (si->magic != HVM_START_MAGIC)
		return refuse(why, "PVH start info magic bad");
	int err = plan_memory(w, si, p, why);
	if (!err)
		err = plan_loader(w, si, p, why);
	if (!err)
		err = plan_acpi(w, si, bsp_apic_id, p, why);
	if (err)
		return err;
	long r = write_blob(p, bsp_apic_id, timebase_hz, buf, len);
	if (r) {
		*why = "DTB buffer too small";
		if (len >= 4)
			memset(buf, 0, 4);
	}
	return r;
}

long x86_bootfdt_build(const struct hvm_start_info *si, uint32_t bsp_apic_id,
		       uint64_t timebase_hz, void *buf, uint32_t len, const char **why)
{
	const struct acpi_window id = { .base = 0, .size = X86_BOOT_WINDOW };
	return x86_bootfdt_build_in(&id, si, bsp_apic_id, timebase_hz, buf, len, why);
}
