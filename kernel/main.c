/* Boot sequence on the boot hart. entry.S gets here running at the link
 * address under the trampoline page table, with the DTB reachable 1:1. */
#include <patina/errno.h>
#include "kernel.h"
#include "bootinfo.h"
#include "boot.h"
#include "cmd.h"
#include "cpu.h"
#include "devices.h"
#include "fdt.h"
#include "frame.h"
#include "failalloc.h"
#include "harts.h"
#include "irqchip.h"
#include "kstring.h"
#include "memmap.h"
#include "mm_platform.h"
#include "panic.h"
#include "printk.h"
#include "arch.h"
#include "smp.h"
#include "timer.h"

struct boot_info boot_info;
struct boot_config boot_config;
static char bootargs_buf[BI_ARGS_LEN];
extern char boot_stack[], boot_stack_top[];

/* Paging mode: the arch's choice, the request if the hart accepts it
 * (arch_paging_choose); a refused request is reported. */
static int choose_paging(int requested)
{
	int levels = arch_paging_choose(requested);
	if (requested && levels != requested)
		printk("patina: paging %s not supported, using %s\n",
		       paging_name(requested), paging_name(levels));
	return levels;
}

/* kernel/mk/mkinit.c: start init (the user shell runs the command). */
void mk_start(const char *command) __attribute__((noreturn));

void kmain(uint64_t hartid, uint64_t dtb_pa)
{
	struct cpu *c = &cpus[0];
	c->index = 0;
	c->hartid = (uint32_t)hartid;
	c->stack_bottom = (uint64_t)(uintptr_t)boot_stack;
	c->stack_top = (uint64_t)(uintptr_t)boot_stack_top;
	arch_cpu_set(c);
	trap_init_hart();

	/* Firmware calls first: a panic on a refused DTB below can then power
	 * the machine off (SRST) instead of halting it. */
	long sbierr = arch_firmware_init();
	if (sbierr)
		panic("SBI BASE failed (error %ld)", sbierr);

	/* The trampoline maps the low 256 GiB 1:1, so the DTB is readable up
	 * to there. The DTB is untrusted input: validated whole before the
	 * scan reads it, and a refused one stops the boot with its reason. */
	const uint64_t window = 256UL << 30;
	if (dtb_pa >= window || window - dtb_pa < FDT_HEADER_SIZE)
		panic("fdt: DTB at %lx is outside the boot window", (unsigned long)dtb_pa);
	uint64_t avail = window - dtb_pa < FDT_MAX_SIZE ? window - dtb_pa : FDT_MAX_SIZE;
	const char *why;
	const void *dtb = (const void *)(uintptr_t)dtb_pa;
	if (fdt_validate(dtb, (uint32_t)avail, &why))
		panic("fdt: DTB at %lx refused: %s", (unsigned long)dtb_pa, why);
	if (fdt_scan(dtb, dtb_pa, &boot_info))
		panic("fdt: DTB at %lx refused: %s", (unsigned long)dtb_pa, boot_info.refused);
	if (boot_info.nmem == 0)
		panic("fdt: the DTB lists no memory");
	int err;

	strlcpy(bootargs_buf, boot_info.bootargs, sizeof bootargs_buf);
	struct bootargs ba;
	char warn[96];
	bootargs_parse(bootargs_buf, &ba, warn, sizeof warn);
	if (warn[0])
		printk("patina: %s\n", warn);
	boot_config.mm = ba.mm;
	boot_config.ablate = ba.ablate;
	if (ba.failalloc_set)
		failalloc_setup(ba.failalloc, ba.failalloc_burst);
	boot_config.command = ba.command && ba.command[0] ? ba.command : NULL;
	boot_config.paging_levels = choose_paging(ba.paging_levels);

	/* Frames first: the mm core builds the kernel page table from them,
	 * reaching memory 1:1 through the trampoline until the switch to it. */
	static struct phys_range freer[MEMMAP_MAX];
	int nfree = memmap_free_ranges(&boot_info, freer, MEMMAP_MAX);
	if (nfree < 0)
		panic("memory map has too many pieces");
	err = frame_init(freer, nfree, sizeof(struct mm_page));
	if (err)
		panic("frame allocator init failed (error %d)", err);

	err = kmap_build(boot_config.paging_levels, &boot_info, boot_config.mm,
			 &boot_config.kernel_as_token);
	if (err)
		panic("cannot build the kernel page table (%s)", mm_strerror(err));
	arch_as_switch(boot_config.kernel_as_token);
	arch_tlb_flush_all();
	phys_map_base = DIRECT_MAP_BASE;
	if (arch_as_current() != boot_config.kernel_as_token)
		panic("satp rejected %s", paging_name(boot_config.paging_levels));
	/* Per-hart memory, sized from the device tree. */
	err = harts_init(&boot_info);
	if (err)
		panic("cannot set up per-hart memory (error %d)", err);

	/* The devices left to user space, while only this hart runs. */
	devices_init(phys_to_virt(boot_info.dtb_pa));

	int sstc = ba.timer_sstc && boot_info.ncpus > 0;
	for (int i = 0; i < boot_info.ncpus; i++)
		if (boot_info.cpus[i].okay && !boot_info.cpus[i].has_sstc)
			sstc = 0;
	if (ba.timer_sstc && !sstc)
		printk("patina: timer=sstc but not every hart has Sstc, using SBI\n");
	if (timer_init(boot_info.timebase, sstc))
		panic("DTB gives no usable timebase-frequency");
	if (timer_start_hart())
		panic("boot hart timer did not start");
	arch_ipi_irq_on();
	/* The interrupt controller before the other harts start (each turns
	 * its own context on); its complaint after the banner. */
	int irqchip_err = irqchip_init(phys_to_virt(boot_info.dtb_pa));
	devices_irq_check(phys_to_virt(boot_info.dtb_pa));
	irqchip_init_hart(this_cpu()->hartid);
	irq_enable();

	smp_start_harts(&boot_info);

	uint64_t ram = 0;
	for (int i = 0; i < boot_info.nmem; i++)
		ram += boot_info.mem[i].size;
	printk("patina: %u harts, %s, %lu MiB, mm=%s\n", ncpus,
	       paging_name(boot_config.paging_levels), (unsigned long)(ram >> 20),
	       mm_name(boot_config.mm));
	if (irqchip_err == -E_NOENT)
		printk("patina: no interrupt controller in the device tree: device interrupts off\n");
	else if (irqchip_err)
		printk("patina: interrupt controller unusable (error %d): device interrupts off\n",
		       irqchip_err);

	/* init runs the command line in its shell (or the interactive
	 * shell); its exit prints "patina: exit <status>" and powers off. */
	mk_start(boot_config.command);
}
