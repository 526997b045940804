/* Physical memory as the kernel reaches it, the same on every ISA given
 * its memlayout.h (which defines DIRECT_MAP_BASE and KERNEL_VBASE and
 * includes this after them): the physical address type and ranges, the
 * page size, and the two translations between kernel virtual and
 * physical addresses. */
#ifndef KERNEL_PHYSMAP_H
#define KERNEL_PHYSMAP_H

#include <stdint.h>

typedef uint64_t paddr_t;

/* A physical address range [base, base + size). */
struct phys_range {
	paddr_t base;
	uint64_t size;
};

#define PAGE_SHIFT        12
#define PAGE_SIZE         (1UL << PAGE_SHIFT)

/* Link address minus load address of the image; the arch's entry sets it
 * (or links it) before any C code runs. */
extern uint64_t kernel_va_pa_offset;

/* Linker-script symbols bounding the image and its sections. */
extern char _kernel_start[], _etext[], _erodata[], _kernel_end[];
extern char _bss_start[], _bss_end[];

/* Where physical memory is reachable: 0 while the boot page table's 1:1
 * map of low memory is active, DIRECT_MAP_BASE once the kernel page table
 * is. Switched once, on the boot hart, by the code that loads the kernel
 * page table; pointers made from phys_to_virt before the switch must not
 * outlive it. */
extern uint64_t phys_map_base;

/* Kernel-virtual address of physical address `pa` (RAM the DTB reported). */
static inline void *phys_to_virt(paddr_t pa)
{
	return (void *)(uintptr_t)(pa + phys_map_base);
}

/* Physical address of a kernel virtual address: either a phys_to_virt
 * address or an address inside the kernel image. */
static inline paddr_t virt_to_phys(const void *va)
{
	uintptr_t v = (uintptr_t)va;
	if (v >= KERNEL_VBASE)
		return v - kernel_va_pa_offset;
	return v - phys_map_base;
}

static inline paddr_t kernel_image_pa_start(void) { return virt_to_phys(_kernel_start); }
static inline paddr_t kernel_image_pa_end(void)   { return virt_to_phys(_kernel_end); }

#endif
