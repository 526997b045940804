/* Built-in commands: help, meminfo, harts, selftest, poweroff, exit.
 * User space reaches them through SYS_DEBUG (kernel cap with R_WRITE), so
 * none may read memory named by an argument or panic on bad input. */
#include "cmd.h"
#include "bootinfo.h"
#include "cpu.h"
#include "frame.h"
#include "kernel.h"
#include "ktest.h"
#include "printk.h"
#include "timer.h"
#include "kstring.h"
#include "mm_platform.h"

KCMD(help, "list commands")
{
	for (const struct kcmd *c = cmd_first(); c < cmd_end(); c++)
		printk("  %-10s %s\n", c->name, c->help);
	return 0;
}

KCMD(meminfo, "memory ranges from the DTB and free frames")
{
	for (int i = 0; i < boot_info.nmem; i++)
		printk("memory   %016lx-%016lx %6lu MiB\n",
		       (unsigned long)boot_info.mem[i].base,
		       (unsigned long)(boot_info.mem[i].base + boot_info.mem[i].size),
		       (unsigned long)(boot_info.mem[i].size >> 20));
	for (int i = 0; i < boot_info.nresv; i++)
		printk("reserved %016lx-%016lx (reserved-memory)\n",
		       (unsigned long)boot_info.resv[i].base,
		       (unsigned long)(boot_info.resv[i].base + boot_info.resv[i].size));
	for (int i = 0; i < boot_info.nmemrsv; i++)
		printk("reserved %016lx-%016lx (memreserve)\n",
		       (unsigned long)boot_info.memrsv[i].base,
		       (unsigned long)(boot_info.memrsv[i].base + boot_info.memrsv[i].size));
	printk("dtb      %016lx-%016lx\n", (unsigned long)boot_info.dtb_pa,
	       (unsigned long)(boot_info.dtb_pa + boot_info.dtb_size));
	printk("kernel   %016lx-%016lx\n", (unsigned long)kernel_image_pa_start(),
	       (unsigned long)kernel_image_pa_end());
	uint64_t fr = frame_free_count(), tot = frame_total_count();
	printk("paging   table %s\n", kernel_as.arch->name);
	printk("frames   %lu free of %lu managed (%lu KiB free), %lu allocator metadata\n",
	       (unsigned long)fr, (unsigned long)tot, (unsigned long)(fr * FRAME_SIZE >> 10),
	       (unsigned long)frame_meta_count());
	return 0;
}

KCMD(harts, "list harts with their tick and IPI counts")
{
	for (uint32_t i = 0; i < ncpus; i++)
		printk("hart %u (cpu %u): ticks %lu ipis %lu\n", cpus[i].hartid, i,
		       (unsigned long)cpus[i].ticks, (unsigned long)cpus[i].ipis);
	printk("timer: %lu Hz timebase, %s\n", (unsigned long)timer_timebase(),
	       timer_uses_sstc() ? "sstc" : "sbi");
	return 0;
}

KCMD(selftest, "run the in-kernel tests [name-prefix]")
{
	int passed;
	int failed = ktest_run_all(argc > 1 ? argv[1] : "", &passed);
	return failed ? 1 : 0;
}

KCMD(poweroff, "power the machine off")
{
	return CMD_STATUS_POWEROFF;
}

KCMD(exit, "power the machine off")
{
	return CMD_STATUS_POWEROFF;
}
