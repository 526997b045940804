/* The kernel's virtual memory map. This header owns every fixed address.
 *
 *   0x0000000000000000 .. (low half)        user space (later issues)
 *   0xffffffc000000000 .. +252 GiB          direct map: PA p at DIRECT_MAP_BASE + p
 *   0xffffffff00000000 .. +1 GiB            device registers the kernel maps (kmap_mmio)
 *   0xffffffff80000000 .. top               kernel image, linked at +0x200000
 *
 * Both ranges are canonical in Sv39, Sv48 and Sv57, so the layout does not
 * depend on the paging mode chosen at boot. */
#ifndef ARCH_RISCV_MEMLAYOUT_H
#define ARCH_RISCV_MEMLAYOUT_H

#define DIRECT_MAP_BASE   0xffffffc000000000UL
#define KERNEL_VBASE      0xffffffff80000000UL
#define KMMIO_BASE        (KERNEL_VBASE - (2UL << 30))
#define KMMIO_SIZE        (1UL << 30)
#define DIRECT_MAP_SIZE   (KMMIO_BASE - DIRECT_MAP_BASE)

/* The types, the page size and the translations; kernel_va_pa_offset is
 * written by entry.S before any C code runs, and phys_map_base is 0 while
 * the boot trampoline's 1:1 map of the low 256 GiB is active. */
#include "physmap.h"

#endif
