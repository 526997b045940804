/* A minimal device tree for the generic boot, from the PVH start info:
 * the RAM ranges of the PVH memory map above 1 MiB as memory nodes, the
 * command line as /chosen/bootargs, /cpus with the timebase and one cpu
 * node (reg 0, the boot CPU: only the boot CPU runs). It implements
 * x86_bootfdt_build (boot.h) without reading the ACPI tables, so further
 * CPUs are not described. */
#include <patina/errno.h>
#include "boot.h"
#include "fdtw.h"
#include "kstring.h"

/* The fields of Xen's PVH start info (version 1) and memory-map entries
 * this file reads. */
struct hvm_start_info {
	uint32_t magic, version, flags, nr_modules;
	uint64_t modlist_paddr, cmdline_paddr, rsdp_paddr, memmap_paddr;
	uint32_t memmap_entries, reserved;
};

struct hvm_memmap_entry {
	uint64_t addr, size;
	uint32_t type, reserved;
};

#define HVM_START_MAGIC 0x336ec578
#define HVM_MEMMAP_RAM 1
#define LOW_MEMORY_END 0x100000ull

static void put_reg(struct fdtw *w, uint64_t base, uint64_t size)
{
	uint32_t c[4] = { (uint32_t)(base >> 32), (uint32_t)base,
			  (uint32_t)(size >> 32), (uint32_t)size };
	fw_cells(w, "reg", 4, c);
}

/* The node name memory@<hex base>. */
static void memory_node(struct fdtw *w, uint64_t base, uint64_t size)
{
	char name[32] = "memory@";
	char *p = name + 7;
	int shift = 60;
	while (shift > 0 && !((base >> shift) & 0xf))
		shift -= 4;
	for (; shift >= 0; shift -= 4)
		*p++ = "0123456789abcdef"[(base >> shift) & 0xf];
	*p = 0;
	fw_begin(w, name);
	fw_str(w, "device_type", "memory");
	put_reg(w, base, size);
	fw_end(w);
}

long x86_bootfdt_build(const struct hvm_start_info *si, uint64_t timebase_hz, void *buf,
		       uint32_t len, uint32_t *boot_apic_id)
{
	static struct fdtw w;
	if (!si || si->magic != HVM_START_MAGIC || si->version < 1 || !si->memmap_paddr)
		return -E_INVAL;
	memset(&w, 0, sizeof w);
	fw_begin(&w, "");
	fw_u32(&w, "#address-cells", 2);
	fw_u32(&w, "#size-cells", 2);
	const struct hvm_memmap_entry *mm =
		(const struct hvm_memmap_entry *)(uintptr_t)si->memmap_paddr;
	for (uint32_t i = 0; i < si->memmap_entries; i++) {
		uint64_t base = mm[i].addr, end = mm[i].addr + mm[i].size;
		if (mm[i].type != HVM_MEMMAP_RAM || end <= LOW_MEMORY_END || end < base)
			continue;
		if (base < LOW_MEMORY_END)
			base = LOW_MEMORY_END;
		memory_node(&w, base, end - base);
	}
	fw_begin(&w, "chosen");
	fw_str(&w, "bootargs", si->cmdline_paddr ? (const char *)(uintptr_t)si->cmdline_paddr : "");
	fw_end(&w);
	fw_begin(&w, "cpus");
	fw_u32(&w, "#address-cells", 1);
	fw_u32(&w, "#size-cells", 0);
	uint32_t tb[2] = { (uint32_t)(timebase_hz >> 32), (uint32_t)timebase_hz };
	fw_cells(&w, "timebase-frequency", 2, tb);
	fw_begin(&w, "cpu@0");
	fw_str(&w, "device_type", "cpu");
	fw_u32(&w, "reg", 0);
	fw_str(&w, "mmu-type", "x86_64");
	fw_str(&w, "status", "okay");
	fw_end(&w);
	fw_end(&w);
	fw_end(&w);
	const uint8_t *blob = fw_finish(&w);
	if (!blob)
		return -E_NOMEM;
	uint32_t total = (uint32_t)blob[4] << 24 | (uint32_t)blob[5] << 16 |
			 (uint32_t)blob[6] << 8 | blob[7];
	if (total > len)
		return -E_NOMEM;
	memcpy(buf, blob, total);
	*boot_apic_id = 0;
	return 0;
}
