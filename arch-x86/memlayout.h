/* The kernel's virtual memory map on x86-64. This header owns every
 * fixed address. The same map as RISC-V's (arch-riscv/memlayout.h), which
 * is canonical under 4- and 5-level paging alike:
 *
 *   0x0000000000000000 .. (low half)        user space
 *   0xffffffc000000000 .. +252 GiB          direct map: PA p at DIRECT_MAP_BASE + p
 *   0xffffffff00000000 .. +1 GiB            device registers the kernel maps (kmap_mmio)
 *   0xffffffff80000000 .. top               kernel image (-mcmodel=kernel), linked at
 *                                           +0x200000, loaded at physical 0x200000
 *
 * Before the kernel page table, entry.S's boot table maps the low 4 GiB
 * 1:1 (512 GiB where the CPU has 1 GiB pages): phys_map_base is 0. */
#ifndef ARCH_X86_MEMLAYOUT_H
#define ARCH_X86_MEMLAYOUT_H

#define DIRECT_MAP_BASE   0xffffffc000000000UL
#define KERNEL_VBASE      0xffffffff80000000UL
#define KMMIO_BASE        (KERNEL_VBASE - (2UL << 30))
#define KMMIO_SIZE        (1UL << 30)
#define DIRECT_MAP_SIZE   (KMMIO_BASE - DIRECT_MAP_BASE)

#include "physmap.h"

#endif
