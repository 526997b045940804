/* One input through every entry point of the kernel's DTB parser, with
 * every value it returns checked against the buffer it was given. */
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <patina/errno.h>
#include "fdt.h"
#include "memmap.h"
#include "dtbfuzz.h"

struct ctx {
	const uint8_t *blob;     /* an allocation of exactly total bytes */
	uint32_t total;
	char *why;
	size_t whysz;
	int broken;
};

/* Record the first inconsistency. */
static void fail(struct ctx *c, const char *fmt, ...)
{
	if (c->broken++)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->why, c->whysz, fmt, ap);
	va_end(ap);
}

/* Does [p, p + n) lie inside the blob? */
static int inside(const struct ctx *c, const void *p, uint64_t n)
{
	const uint8_t *q = p;
	return q >= c->blob && q <= c->blob + c->total &&
	       n <= (uint64_t)(c->blob + c->total - q);
}

/* A node handle the API returned must name a NUL-terminated node name
 * inside the blob. */
static void check_node(struct ctx *c, int node, const char *what)
{
	const char *nm = fdt_node_name(c->blob, node);
	if (!nm || !inside(c, nm, 1) ||
	    !memchr(nm, 0, (size_t)(c->blob + c->total - (const uint8_t *)nm)))
		fail(c, "%s returned node %d without a name inside the blob", what, node);
}

static const char *const prop_names[] = {
	"reg", "#address-cells", "#size-cells", "device_type", "status",
	"riscv,isa", "mmu-type", "timebase-frequency", "bootargs", "compatible",
	"", "no-such-property-name",
};

/* Every property read of node: values inside the blob, lengths >= 0. */
static void check_props(struct ctx *c, int node)
{
	for (size_t i = 0; i < sizeof prop_names / sizeof *prop_names; i++) {
		int len = -12345;
		const uint8_t *v = fdt_getprop(c->blob, node, prop_names[i], &len);
		if (!v)
			continue;
		if (len < 0 || !inside(c, v, (uint64_t)len)) {
			fail(c, "fdt_getprop(%d, \"%s\") returned %d bytes outside the blob",
			     node, prop_names[i], len);
			continue;
		}
		if (len >= 8)
			(void)fdt_read_cells(v, 2);
		else if (len >= 4)
			(void)fdt_read_cells(v, 1);
	}
	(void)fdt_getprop(c->blob, node, "reg", NULL);
}

/* Walk the whole tree through first_child / next_sibling, depth first
 * with an explicit stack. Handles must grow along the walk, so it ends
 * within total / 4 steps; more is a loop. */
static void walk_tree(struct ctx *c)
{
	int root = fdt_root(c->blob);
	if (root < 0)
		return;
	check_node(c, root, "fdt_root");
	uint32_t limit = c->total / 4 + 1, steps = 0, sp = 0;
	int *stack = malloc(sizeof *stack * limit);
	stack[sp++] = root;
	while (sp && !c->broken) {
		int node = stack[--sp];
		check_props(c, node);
		if (++steps > limit) {
			fail(c, "tree walk did not end after %u nodes", steps);
			break;
		}
		int ch = fdt_first_child(c->blob, node);
		if (ch < 0)
			continue;
		if (ch <= node)
			fail(c, "fdt_first_child(%d) went back to %d", node, ch);
		check_node(c, ch, "fdt_first_child");
		for (int s = ch; s >= 0 && !c->broken; ) {
			if (sp >= limit) {
				fail(c, "tree walk holds more than %u nodes", limit);
				break;
			}
			stack[sp++] = s;
			int n = fdt_next_sibling(c->blob, s);
			if (n >= 0 && n <= s)
				fail(c, "fdt_next_sibling(%d) went back to %d", s, n);
			if (n >= 0)
				check_node(c, n, "fdt_next_sibling");
			s = n;
		}
	}
	free(stack);
}

static const char *const paths[] = {
	"/", "/cpus", "/cpus/cpu@0", "/cpus/cpu", "/cpus/cpu@1/interrupt-controller",
	"/chosen", "/memory", "/memory@80000000", "/reserved-memory", "/soc",
	"/soc/", "//", "/cpus//cpu@0", "cpus", "", "/@", "/cpus/cpu@0/x/y/z/w",
};

/* Paths and made-up handles: results are valid nodes or errors. */
static void check_lookups(struct ctx *c)
{
	for (size_t i = 0; i < sizeof paths / sizeof *paths; i++) {
		int n = fdt_path(c->blob, paths[i]);
		if (n >= 0)
			check_node(c, n, "fdt_path");
	}
	const int handles[] = { -1, 0, 1, 2, 3, 4, 8, (int)c->total, (int)c->total - 4,
				INT_MAX, INT_MIN };
	for (size_t i = 0; i < sizeof handles / sizeof *handles; i++) {
		int h = handles[i];
		const char *nm = fdt_node_name(c->blob, h);
		if (nm && !inside(c, nm, 1))
			fail(c, "fdt_node_name(%d) outside the blob", h);
		int len;
		const void *v = fdt_getprop(c->blob, h, "reg", &len);
		if (v && (len < 0 || !inside(c, v, (uint64_t)len)))
			fail(c, "fdt_getprop(%d) outside the blob", h);
		int ch = fdt_first_child(c->blob, h);
		if (ch >= 0)
			check_node(c, ch, "fdt_first_child(made-up handle)");
		int s = fdt_next_sibling(c->blob, h);
		if (s >= 0)
			check_node(c, s, "fdt_next_sibling(made-up handle)");
	}
	struct phys_range r;
	if (fdt_memreserve(c->blob, -1, &r) != -E_INVAL)
		fail(c, "fdt_memreserve(-1) accepted");
	for (int i = 0; i < BI_MAX_RESV + 4; i++) {
		int e = fdt_memreserve(c->blob, i, &r);
		if (e != 0 && e != -E_NOENT && e != -E_INVAL)
			fail(c, "fdt_memreserve(%d) returned %d", i, e);
		if (e)
			break;
	}
}

/* What fdt_scan returned must be consistent with its contract. */
static void check_scan(struct ctx *c, int err, const struct boot_info *bi, int stored)
{
	if (err) {
		if (err != -E_INVAL || !bi->refused || !bi->refused[0])
			fail(c, "fdt_scan refused with %d and no reason", err);
		return;
	}
	if (bi->refused)
		fail(c, "fdt_scan accepted with a reason (%s)", bi->refused);
	if (bi->nmem < 0 || bi->nmem > BI_MAX_MEM || bi->nresv < 0 || bi->nresv > BI_MAX_RESV ||
	    bi->nmemrsv < 0 || bi->nmemrsv > BI_MAX_RESV || bi->ncpus < 0)
		fail(c, "fdt_scan counts out of range: mem %d resv %d memrsv %d cpus %d",
		     bi->nmem, bi->nresv, bi->nmemrsv, bi->ncpus);
	const struct phys_range *rs[] = { bi->mem, bi->resv, bi->memrsv };
	const int ns[] = { bi->nmem, bi->nresv, bi->nmemrsv };
	for (int k = 0; k < 3; k++)
		for (int i = 0; i < ns[k] && i < BI_MAX_RESV; i++)
			if (!fdt_range_ok(rs[k][i].base, rs[k][i].size))
				fail(c, "fdt_scan range [%llx +%llx] past the address space",
				     (unsigned long long)rs[k][i].base,
				     (unsigned long long)rs[k][i].size);
	if (bi->dtb_size != c->total)
		fail(c, "fdt_scan dtb_size %u, totalsize %u", bi->dtb_size, c->total);
	if (!memchr(bi->bootargs, 0, sizeof bi->bootargs))
		fail(c, "fdt_scan bootargs not terminated");
	for (int i = 0; i < stored && i < bi->ncpus; i++)
		if (!memchr(bi->cpus[i].mmu_type, 0, sizeof bi->cpus[i].mmu_type))
			fail(c, "fdt_scan cpu %d mmu-type not terminated", i);
}

/* Do [a, a + as) and [b, b + bs) overlap? */
static int overlap(uint64_t a, uint64_t as, uint64_t b, uint64_t bs)
{
	return a < b + bs && b < a + as;
}

/* The free memory boot derives from an accepted scan (kernel/memmap.c):
 * page-aligned, non-empty, sorted and disjoint pieces of the memory
 * ranges that miss every taken range; or -E_INVAL for too many pieces. */
static void check_memmap(struct ctx *c, const struct boot_info *bi)
{
	struct phys_range fr[MEMMAP_MAX], tk[BI_MAX_RESV * 2 + 2];
	int n = memmap_free_ranges(bi, fr, MEMMAP_MAX);
	int nt = memmap_taken_ranges(bi, tk, BI_MAX_RESV * 2 + 2);
	if (n < 0 || nt < 0) {
		if (n != -E_INVAL && nt != -E_INVAL)
			fail(c, "memmap returned %d / %d", n, nt);
		return;
	}
	for (int i = 0; i < n; i++) {
		uint64_t b = fr[i].base, s = fr[i].size;
		if (!s || (b | s) & (PAGE_SIZE - 1) || (i && fr[i - 1].base + fr[i - 1].size > b))
			fail(c, "free range %d [%llx +%llx] empty, unaligned or out of order", i,
			     (unsigned long long)b, (unsigned long long)s);
		int in = 0;
		for (int m = 0; m < bi->nmem; m++)
			in |= b >= bi->mem[m].base && s <= bi->mem[m].size &&
			      b - bi->mem[m].base <= bi->mem[m].size - s;
		if (!in)
			fail(c, "free range %d [%llx +%llx] outside every memory range", i,
			     (unsigned long long)b, (unsigned long long)s);
		for (int t = 0; t < nt; t++)
			if (overlap(b, s, tk[t].base, tk[t].size))
				fail(c, "free range %d [%llx +%llx] overlaps taken [%llx +%llx]", i,
				     (unsigned long long)b, (unsigned long long)s,
				     (unsigned long long)tk[t].base, (unsigned long long)tk[t].size);
	}
}

/* The boot path's scans, as main.c and harts_init make them: first with no
 * room for cpus, then with room for exactly the cpus counted. Returns the
 * second scan's result, *bi what it found (without the cpu array). */
static int run_scans(struct ctx *c, struct boot_info *bi)
{
	memset(bi, 0, sizeof *bi);
	int err = fdt_scan(c->blob, 0x87e00000, bi);
	check_scan(c, err, bi, 0);
	if (err)
		return err;
	int counted = bi->ncpus;
	struct bi_cpu *cpus = malloc(sizeof *cpus * (size_t)(counted ? counted : 1));
	bi->cpus = cpus;
	bi->cpus_cap = counted;
	int err2 = fdt_scan(c->blob, 0x87e00000, bi);
	check_scan(c, err2, bi, counted);
	if (err2 != err || bi->ncpus != counted)
		fail(c, "second fdt_scan differs: %d/%d cpus, %d/%d", err2, bi->ncpus, err, counted);
	if (!err2)
		check_memmap(c, bi);
	free(cpus);
	bi->cpus = NULL;          /* what the caller keeps: the counts */
	bi->cpus_cap = 0;
	return err2;
}

enum dtb_verdict dtb_check(const uint8_t *in, uint32_t len, struct boot_info *bi,
			   char *why, size_t whysz)
{
	struct ctx c = { .why = why, .whysz = whysz };
	why[0] = 0;
	memset(bi, 0, sizeof *bi);
	uint8_t *raw = malloc(len ? len : 1);
	memcpy(raw, in, len);
	const char *reason = NULL;
	int v = fdt_validate(raw, len, &reason);
	if (v && (v != -E_INVAL || !reason || !reason[0]))
		fail(&c, "fdt_validate refused with %d and no reason", v);
	if (!v && reason)
		fail(&c, "fdt_validate accepted with a reason (%s)", reason);

	/* The other entry points need the blob readable for its totalsize:
	 * give them exactly that, so any read past it is caught. */
	uint32_t total;
	int hdr = len >= FDT_HEADER_SIZE ? fdt_check_header(raw, &total) : -E_INVAL;
	if (!v && (hdr || total > len))
		fail(&c, "fdt_validate accepted a blob whose header fails");
	int scan = -E_INVAL;
	if (!hdr && total <= len) {
		uint8_t *blob = malloc(total);
		memcpy(blob, raw, total);
		c.blob = blob;
		c.total = total;
		scan = run_scans(&c, bi);
		walk_tree(&c);
		check_lookups(&c);
		free(blob);
	}
	free(raw);
	if (c.broken)
		return DTB_BROKEN;
	return !v && !scan ? DTB_ACCEPTED : DTB_REFUSED;
}
