/* The kernel's implementation of the mm core's platform table, and the
 * kernel address space built with the core. */
#ifndef KERNEL_MM_PLATFORM_H
#define KERNEL_MM_PLATFORM_H

#include <stdint.h>
#include "cortenmm/mm.h"
#include "bootinfo.h"
#include "kernel.h"

extern const struct mm_platform kernel_mm_platform;
extern struct mm_as kernel_as;

/*
 * Build the kernel address space with the mm core: every memory node's
 * range at DIRECT_MAP_BASE + pa (RW, global, largest pages), the kernel
 * image at its link address (text RX, rodata R, data/bss RW, 4 KiB), then
 * seal the kernel half so user address spaces can share it.
 * Needs: frame allocator initialised with descriptors of
 * sizeof(struct mm_page); the boot trampoline active (phys_to_virt 1:1).
 * Returns 0 and the satp value in *satp, or an MM_* error (negative).
 */
int kmap_build(int levels, const struct boot_info *bi, enum mm_mode mm, uint64_t *satp);

#endif
