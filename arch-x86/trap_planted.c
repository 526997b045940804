/* A kernel fault on purpose, for the boot test of the trap report: a load
 * from the last page of the MMIO window (memlayout.h), which the window,
 * filled from its bottom, never maps. The page fault is no user copy's,
 * so the kernel must panic with the vector, CR2 and the registers. */
#include "cmd.h"
#include "memlayout.h"
#include "printk.h"

KCMD(trap_planted, "load from an unmapped kernel address on purpose (the kernel must panic)")
{
	volatile uint64_t *p = (volatile uint64_t *)(KMMIO_BASE + KMMIO_SIZE - PAGE_SIZE);
	printk("trap_planted: loading from %p\n", (void *)p);
	uint64_t v = *p;
	printk("trap_planted: the load returned %lx: no fault\n", (unsigned long)v);
	return 1;
}
