/* Kernel page table tests: the paging mode in satp, the direct map covering
 * all RAM and aliasing the kernel image. */
#include "ktest.h"
#include "kernel.h"
#include "bootinfo.h"
#include "memlayout.h"
#include "riscv.h"

static volatile uint64_t probe_word = 0x1234;

KTEST(10, bootmap_satp_mode)
{
	uint64_t mode = csr_read(satp) >> SATP_MODE_SHIFT;
	uint64_t want = boot_config.paging_levels == 4 ? SATP_MODE_SV48 : SATP_MODE_SV39;
	if (mode != want)
		return KFAIL("satp mode %lu, banner says %s", (unsigned long)mode,
			     paging_name(boot_config.paging_levels));
	return 0;
}

KTEST(10, bootmap_direct_map)
{
	volatile uint64_t *alias = phys_to_virt(virt_to_phys((const void *)&probe_word));
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
