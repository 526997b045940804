/* Kernel page table tests: built by the mm core, the paging mode in satp,
 * the direct map covering all RAM and aliasing the kernel image, image
 * permissions, and the tree's well-formedness. */
#include "ktest.h"
#include "kernel.h"
#include "bootinfo.h"
#include "memlayout.h"
#include "mm_platform.h"
#include "cortenmm/cursor.h"
#include "paging.h"
#include "arch.h"
#include "fdt.h"

static volatile uint64_t probe_word = 0x1234;

KTEST(10, kmap_satp_mode)
{
	uint64_t satp = arch_as_current();
	uint64_t mode = satp >> SATP_MODE_SHIFT;
	uint64_t want = riscv_paging_by_levels(boot_config.paging_levels)->satp_mode;
	if (mode != want)
		return KFAIL("satp mode %lu, banner says %s", (unsigned long)mode,
			     paging_name(boot_config.paging_levels));
	if (satp != arch_user_satp(&kernel_as, kernel_as.arch->levels, arch_satp_asid(satp)))
		return KFAIL("satp root is not the mm core's kernel AS root");
	if (kernel_as.arch->levels != (unsigned)boot_config.paging_levels)
		return KFAIL("kernel AS has %u levels", kernel_as.arch->levels);
	return 0;
}

KTEST(10, kmap_direct_map)
{
	volatile uint64_t *alias = phys_to_virt(virt_to_phys((const void *)&probe_word));
	if ((uint64_t)(uintptr_t)alias < DIRECT_MAP_BASE)
		return KFAIL("phys_to_virt still gives 1:1 addresses");
	if (*alias != probe_word)
		return KFAIL("direct-map alias reads %lx, image %lx",
			     (unsigned long)*alias, (unsigned long)probe_word);
	*alias = 0xfeedface;
	if (probe_word != 0xfeedface)
		return KFAIL("write through the direct map not seen in the image");
	probe_word = 0x1234;
	/* The last byte of every memory node is mapped (a fault would panic). */
	for (int i = 0; i < boot_info.nmem; i++) {
		volatile uint8_t *last = phys_to_virt(boot_info.mem[i].base +
						      boot_info.mem[i].size - 1);
		(void)*last;
	}
	return 0;
}

/* What the core says is mapped at va, in one read-only transaction. */
static int query(uint64_t va, struct mm_info *out)
{
	struct mm_cursor c;
	int err = mm_lock(&c, &kernel_as, va, va + PAGE_SIZE);
	if (err)
		return err;
	err = mm_query(&c, va, out);
	mm_release(&c);
	return err;
}

KTEST(10, kmap_query)
{
	struct mm_info in;
	for (int i = 0; i < boot_info.nmem; i++) {
		paddr_t pa[2] = { boot_info.mem[i].base + boot_info.mem[i].size / 2,
				  boot_info.mem[i].base + boot_info.mem[i].size - PAGE_SIZE };
		for (int k = 0; k < 2; k++) {
			paddr_t p = pa[k] & ~(PAGE_SIZE - 1);
			int err = query(DIRECT_MAP_BASE + p, &in);
			if (err)
				return KFAIL("query failed: %s", mm_strerror(err));
			if (in.kind != MM_MAPPED || in.pa != p)
				return KFAIL("direct map of %lx: kind %u pa %lx", (unsigned long)p,
					     in.kind, (unsigned long)in.pa);
			if ((in.prot & (MM_PROT_R | MM_PROT_W | MM_PROT_X)) != (MM_PROT_R | MM_PROT_W))
				return KFAIL("direct map prot %x", in.prot);
		}
	}
	struct { const void *va; unsigned prot; const char *what; } img[] = {
		{ (const void *)ktest_fn_kmap_query, MM_PROT_R | MM_PROT_X, "text" },
		{ (const void *)"rodata", MM_PROT_R, "rodata" },
		{ (const void *)&probe_word, MM_PROT_R | MM_PROT_W, "data" },
	};
	for (unsigned i = 0; i < 3; i++) {
		uint64_t va = (uint64_t)(uintptr_t)img[i].va & ~(PAGE_SIZE - 1);
		int err = query(va, &in);
		if (err)
			return KFAIL("query failed: %s", mm_strerror(err));
		if (in.kind != MM_MAPPED || in.pa != (virt_to_phys((const void *)(uintptr_t)va)))
			return KFAIL("%s page not mapped to its load address", img[i].what);
		if ((in.prot & (MM_PROT_R | MM_PROT_W | MM_PROT_X)) != img[i].prot)
			return KFAIL("%s prot %x, want %x", img[i].what, in.prot, img[i].prot);
	}
	/* Between the direct map's end and the image nothing is mapped. */
	int err = query(KERNEL_VBASE - PAGE_SIZE, &in);
	if (err || in.kind != MM_INVALID)
		return KFAIL("the page below the image window is not invalid");
	return 0;
}

KTEST(10, kmap_well_formed)
{
	const char *why_wf = "";
	int err = mm_wf_check(&kernel_as, &why_wf);
	if (err)
		return KFAIL("kernel AS not well formed: %s", why_wf);
	return 0;
}

/* The first /soc/serial node's register block (QEMU virt: a 16550 at
 * 0x10000000): 0 and its physical address, or -1. */
static int uart_pa(paddr_t *pa)
{
	const void *blob = phys_to_virt(boot_info.dtb_pa);
	int soc = fdt_path(blob, "/soc"), uart = fdt_path(blob, "/soc/serial");
	if (soc < 0 || uart < 0)
		return -1;
	int len;
	const void *ac = fdt_getprop(blob, soc, "#address-cells", &len);
	uint32_t cells = ac && len == 4 ? fdt_be32(ac) : 2;
	const void *reg = fdt_getprop(blob, uart, "reg", &len);
	if (!reg || cells < 1 || cells > 2 || len < (int)(4 * cells))
		return -1;
	*pa = fdt_read_cells(reg, cells);
	return 0;
}

/* MMIO through the core: the UART's page mapped with the kernel's MMIO
 * permissions reads the device (its line status register, idle: THR
 * empty and transmitter empty, 0x60), a query reports the memory type the
 * table was asked for (device where it has Svpbmt), a table without the
 * type refuses it, and the page is taken back without being released as
 * a frame. */
#define MMIO_VA (KERNEL_VBASE - (4UL << 20))
KTEST(10, kmap_mmio)
{
	paddr_t pa;
	if (uart_pa(&pa))
		return KFAIL("no /soc/serial reg in the device tree");
	paddr_t page = pa & ~(PAGE_SIZE - 1);
	unsigned prot = kmap_mmio_prot();
	bool has_dev = kernel_as.arch->mem_types & (1u << MM_MT_DEVICE);
	if (mm_prot_mt(prot) != (has_dev ? MM_MT_DEVICE : MM_MT_NORMAL))
		return KFAIL("MMIO prot %x on table %s", prot, kernel_as.arch->name);
	struct mm_cursor c;
	struct mm_info in;
	if (mm_lock(&c, &kernel_as, MMIO_VA, MMIO_VA + PAGE_SIZE))
		return KFAIL("lock");
	int refused = has_dev ? MM_EPROT :
		mm_map(&c, MMIO_VA, page, 1, MM_PROT_R | MM_PROT_G | MM_PROT_DEVICE, 0);
	int err = mm_map(&c, MMIO_VA, page, 1, prot, 0);
	if (!err)
		err = mm_query(&c, MMIO_VA, &in);
	mm_release(&c);
	if (refused != MM_EPROT)
		return KFAIL("%s took a device mapping it cannot encode (%d)",
			     kernel_as.arch->name, refused);
	if (err)
		return KFAIL("map UART page: %s", mm_strerror(err));
	uint8_t lsr = *(volatile uint8_t *)(MMIO_VA + (pa - page) + 5);
	if (mm_lock(&c, &kernel_as, MMIO_VA, MMIO_VA + PAGE_SIZE))
		return KFAIL("lock");
	struct mm_info out;
	err = mm_take(&c, MMIO_VA, &out);
	mm_release(&c);
	if (err || out.pa != page)
		return KFAIL("take the UART page back: %s", mm_strerror(err));
	if (in.kind != MM_MAPPED || in.pa != page || in.prot != prot)
		return KFAIL("UART page queried kind %u pa %lx prot %x, mapped %x", in.kind,
			     (unsigned long)in.pa, in.prot, prot);
	if ((lsr & 0x60) != 0x60)
		return KFAIL("UART line status %x through the mapping, want THRE|TEMT", lsr);
	return 0;
}
