/* The kernel's virtual memory map on x86-64. This header owns every
 * fixed address. The same map as RISC-V's (arch-riscv/memlayout.h), which
 * is canonical under 4- and 5-level paging alike:
 *
 *   0x0000000000000000 .. (low half)        user space
 *   0xffffffc000000000 .. +252 GiB          direct map: PA p at DIRECT_MAP_BASE + p
 *   0xffffffff00000000 .. +1 GiB            device registers the kernel maps (kmap_mmio)
 *   0xffffffff80000000 .. top               kernel image (-mcmodel=kernel), linked at
 *                                           +0x200000, loaded at physical 0x200000
 */
#ifndef ARCH_X86_MEMLAYOUT_H
#define ARCH_X86_MEMLAYOUT_H

#include <stdint.h>

typedef uint64_t paddr_t;

/* A physical address range [base, base + size). */
struct phys_range {
	paddr_t base;
	uint64_t size;
};

#define PAGE_SHIFT        12
#define PAGE_SIZE         (1UL << PAGE_SHIFT)
#define DIRECT_MAP_BASE   0xffffffc000000000UL
#define KERNEL_VBASE      0xffffffff80000000UL
#define KMMIO_BASE        (KERNEL_VBASE - (2UL << 30))
#define KMMIO_SIZE        (1UL << 30)
#define DIRECT_MAP_SIZE   (KMMIO_BASE - DIRECT_MAP_BASE)

/* Link address minus load address of the image (KERNEL_VBASE: the image
 * is loaded where its link address says, less KERNEL_VBASE). */
extern uint64_t kernel_va_pa_offset;

/* Linker-script symbols bounding the image and its sections. */
extern char _kernel_start[], _etext[], _erodata[], _kernel_end[];
extern char _bss_start[], _bss_end[];

/* Where physical memory is reachable: 0 while the boot page table's 1:1
 * map of low memory is active (entry.S: the low 4 GiB, or 512 GiB where
 * the CPU has 1 GiB pages), DIRECT_MAP_BASE once the kernel page table
 * is. Switched once, on the boot CPU, by the code that loads CR3. */
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
