/* FDT tests: what fdt_scan recorded at boot must match a second, independent
 * read of the blob through the path/property lookup API. */
#include "ktest.h"
#include "fdt.h"
#include "bootinfo.h"
#include "cpu.h"
#include "kstring.h"
#include "memlayout.h"
#include "printk.h"
#include "arch.h"

static const void *blob(void)
{
	return phys_to_virt(boot_info.dtb_pa);
}

static uint32_t cells_of(const void *b, int node, const char *prop, uint32_t dflt)
{
	int len;
	const void *v = fdt_getprop(b, node, prop, &len);
	return v && len == 4 ? fdt_be32(v) : dflt;
}

/* Read reg of `node` with the given cells into out[]; returns count or -1. */
static int read_reg(const void *b, int node, uint32_t ac, uint32_t sc,
		    struct phys_range *out, int max)
{
	int len, n = 0;
	const uint8_t *v = fdt_getprop(b, node, "reg", &len);
	if (!v)
		return 0;
	int entry = (int)(4 * (ac + sc));
	for (int off = 0; off + entry <= len; off += entry) {
		uint64_t size = sc ? fdt_read_cells(v + off + 4 * ac, sc) : 0;
		if (!size)
			continue;
		if (n >= max)
			return -1;
		out[n].base = fdt_read_cells(v + off, ac);
		out[n].size = size;
		n++;
	}
	return n;
}

KTEST(10, fdt_header)
{
	uint32_t total;
	if (fdt_check_header(blob(), &total))
		return KFAIL("header check failed on the boot DTB");
	if (total != boot_info.dtb_size)
		return KFAIL("totalsize %u, boot recorded %u", total, boot_info.dtb_size);
	return 0;
}

KTEST(10, fdt_memory)
{
	const void *b = blob();
	int root = fdt_root(b);
	uint32_t ac = cells_of(b, root, "#address-cells", 2);
	uint32_t sc = cells_of(b, root, "#size-cells", 1);
	struct phys_range got[BI_MAX_MEM];
	int n = 0;
	for (int c = fdt_first_child(b, root); c >= 0; c = fdt_next_sibling(b, c)) {
		int len;
		const char *dt = fdt_getprop(b, c, "device_type", &len);
		if (!dt || strcmp(dt, "memory"))
			continue;
		int k = read_reg(b, c, ac, sc, got + n, BI_MAX_MEM - n);
		if (k < 0)
			return KFAIL("too many memory ranges");
		n += k;
	}
	if (n == 0)
		return KFAIL("second read found no memory node");
	if (n != boot_info.nmem)
		return KFAIL("boot parsed %d memory ranges, second read %d", boot_info.nmem, n);
	for (int i = 0; i < n; i++)
		if (got[i].base != boot_info.mem[i].base || got[i].size != boot_info.mem[i].size)
			return KFAIL("range %d: boot %lx+%lx, second read %lx+%lx", i,
				     (unsigned long)boot_info.mem[i].base,
				     (unsigned long)boot_info.mem[i].size,
				     (unsigned long)got[i].base, (unsigned long)got[i].size);
	return 0;
}

KTEST(10, fdt_reserved)
{
	const void *b = blob();
	struct phys_range got[BI_MAX_RESV];
	int n = 0;
	int rm = fdt_path(b, "/reserved-memory");
	if (rm >= 0) {
		uint32_t ac = cells_of(b, rm, "#address-cells", 2);
		uint32_t sc = cells_of(b, rm, "#size-cells", 1);
		for (int c = fdt_first_child(b, rm); c >= 0; c = fdt_next_sibling(b, c)) {
			int k = read_reg(b, c, ac, sc, got + n, BI_MAX_RESV - n);
			if (k < 0)
				return KFAIL("too many reserved ranges");
			n += k;
		}
	}
	if (n != boot_info.nresv)
		return KFAIL("boot parsed %d reserved-memory ranges, second read %d",
			     boot_info.nresv, n);
	for (int i = 0; i < n; i++)
		if (got[i].base != boot_info.resv[i].base || got[i].size != boot_info.resv[i].size)
			return KFAIL("reserved %d differs", i);
	int m = 0;
	struct phys_range r;
	while (fdt_memreserve(b, m, &r) == 0) {
		if (m >= boot_info.nmemrsv || r.base != boot_info.memrsv[m].base ||
		    r.size != boot_info.memrsv[m].size)
			return KFAIL("memreserve entry %d differs", m);
		m++;
	}
	if (m != boot_info.nmemrsv)
		return KFAIL("boot parsed %d memreserve entries, second read %d",
			     boot_info.nmemrsv, m);
	/* Where the firmware lives in RAM the device tree lists, it protects
	 * itself with one of the two mechanisms. */
	if (ARCH_FIRMWARE_IN_RAM && n + m == 0)
		return KFAIL("no reserved memory at all (firmware region unprotected?)");
	return 0;
}

KTEST(10, fdt_cpus)
{
	const void *b = blob();
	int cpusn = fdt_path(b, "/cpus");
	if (cpusn < 0)
		return KFAIL("no /cpus");
	uint32_t ac = cells_of(b, cpusn, "#address-cells", 2);
	int n = 0, usable = 0;
	for (int c = fdt_first_child(b, cpusn); c >= 0; c = fdt_next_sibling(b, c)) {
		int len;
		const char *dt = fdt_getprop(b, c, "device_type", &len);
		if (!dt || strcmp(dt, "cpu"))
			continue;
		const uint8_t *reg = fdt_getprop(b, c, "reg", &len);
		if (!reg || len < (int)(4 * ac))
			return KFAIL("cpu node without reg");
		uint32_t id = (uint32_t)fdt_read_cells(reg, ac);
		if (n >= boot_info.ncpus || boot_info.cpus[n].hartid != id)
			return KFAIL("cpu %d: second read hart id %u differs", n, id);
		const char *st = fdt_getprop(b, c, "status", &len);
		const char *mmu = fdt_getprop(b, c, "mmu-type", &len);
		int ok = !st || !strcmp(st, "okay") || !strcmp(st, "ok");
		int has_mmu = mmu && strcmp(mmu, "riscv,none");
		if (ok != boot_info.cpus[n].okay || has_mmu != boot_info.cpus[n].has_mmu)
			return KFAIL("cpu %u: status/mmu-type differ", id);
		usable += ok && has_mmu;
		n++;
	}
	if (n != boot_info.ncpus)
		return KFAIL("boot parsed %d cpus, second read %d", boot_info.ncpus, n);
	if ((uint32_t)usable != ncpus)
		return KFAIL("%d usable harts in the DTB but %u online", usable, ncpus);
	for (uint32_t i = 0; i < ncpus; i++) {
		int found = 0;
		for (int k = 0; k < boot_info.ncpus; k++)
			found |= boot_info.cpus[k].hartid == cpus[i].hartid;
		if (!found)
			return KFAIL("online hart %u is not in the DTB", cpus[i].hartid);
	}
	return 0;
}

KTEST(10, fdt_timebase)
{
	const void *b = blob();
	int cpusn = fdt_path(b, "/cpus");
	int len;
	const void *v = cpusn >= 0 ? fdt_getprop(b, cpusn, "timebase-frequency", &len) : NULL;
	if (!v || (len != 4 && len != 8))
		return KFAIL("no /cpus/timebase-frequency");
	uint64_t tb = fdt_read_cells(v, (uint32_t)len / 4);
	if (tb == 0 || tb != boot_info.timebase)
		return KFAIL("timebase: boot %lu, second read %lu",
			     (unsigned long)boot_info.timebase, (unsigned long)tb);
	return 0;
}

KTEST(10, fdt_bootargs)
{
	const void *b = blob();
	int ch = fdt_path(b, "/chosen");
	int len;
	const char *v = ch >= 0 ? fdt_getprop(b, ch, "bootargs", &len) : NULL;
	if (!v != !boot_info.has_bootargs)
		return KFAIL("bootargs presence differs");
	if (v && strcmp(v, boot_info.bootargs))
		return KFAIL("bootargs: boot '%s', second read '%s'", boot_info.bootargs, v);
	/* The lookup API itself: a path with a unit address resolves too. */
	int cpu0 = fdt_path(b, "/cpus/cpu");
	if (cpu0 < 0 || strncmp(fdt_node_name(b, cpu0), "cpu@", 4))
		return KFAIL("fdt_path(/cpus/cpu) did not find a cpu node");
	if (fdt_path(b, "/no-such-node") >= 0)
		return KFAIL("fdt_path found a node that does not exist");
	return 0;
}

#include <patina/errno.h>
#include "kernel.h"

KTEST(10, bootargs_parse)
{
	struct bootargs ba;
	char warn[96];
	/* Every paging mode of the arch by its name. */
	int modes = 0;
	for (int lv = 1; lv <= 5; lv++) {
		const char *name = arch_paging_name(lv);
		if (!name)
			continue;
		char a1[80];
		snprintf(a1, sizeof a1, "paging=%s mm=rw -- selftest  two words", name);
		if (bootargs_parse(a1, &ba, warn, sizeof warn) || ba.paging_levels != lv ||
		    ba.mm != MM_RW || !ba.command || strcmp(ba.command, "selftest  two words"))
			return KFAIL("case 1 (%s) parsed wrong", name);
		modes++;
	}
	if (!modes)
		return KFAIL("the arch names no paging mode");
	char a2[] = "-- meminfo";
	if (bootargs_parse(a2, &ba, warn, sizeof warn) || ba.paging_levels != 0 ||
	    ba.mm != MM_ADV || !ba.command || strcmp(ba.command, "meminfo"))
		return KFAIL("case 2 parsed wrong");
	int dflt = arch_paging_choose(0);
	char a3[80];
	snprintf(a3, sizeof a3, "mm=vma paging=%s", arch_paging_name(dflt));
	if (bootargs_parse(a3, &ba, warn, sizeof warn) || ba.paging_levels != dflt ||
	    ba.mm != MM_VMA || ba.command)
		return KFAIL("case 3 parsed wrong");
	char a4[] = "paging=sv64 -- x--y -- z";
	if (bootargs_parse(a4, &ba, warn, sizeof warn) != -E_INVAL || !warn[0] ||
	    !ba.command || strcmp(ba.command, "x--y -- z"))
		return KFAIL("case 4 parsed wrong");
	char a5[] = "ablate=prefault,mklock";
	if (bootargs_parse(a5, &ba, warn, sizeof warn) || ba.ablate != (ABLATE_PREFAULT | ABLATE_MKLOCK))
		return KFAIL("case 5 parsed wrong");
	char a6[] = "ablate=mklock,nothing";
	if (bootargs_parse(a6, &ba, warn, sizeof warn) != -E_INVAL || !warn[0] || ba.ablate)
		return KFAIL("case 6 parsed wrong");
	char a7[] = "ablate=ipiflush,lateflush";
	if (bootargs_parse(a7, &ba, warn, sizeof warn) || ba.ablate != (ABLATE_IPIFLUSH | ABLATE_LATEFLUSH))
		return KFAIL("case 7 parsed wrong");
	return 0;
}
