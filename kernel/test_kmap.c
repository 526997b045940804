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
