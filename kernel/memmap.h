/* Free physical memory at boot: RAM minus everything that is taken. */
#ifndef KERNEL_MEMMAP_H
#define KERNEL_MEMMAP_H

#include "bootinfo.h"

#define MEMMAP_MAX 64

/*
 * The ranges the frame allocator may manage: every memory node's range
 * minus /reserved-memory, the memreserve block, the DTB blob and the kernel
 * image, each taken range widened to whole frames. Output sorted by base.
 * Returns the count, or -E_INVAL if more than `max` pieces result.
 */
int memmap_free_ranges(const struct boot_info *bi, struct phys_range *out, int max);

/* The taken ranges memmap_free_ranges subtracts (same rounding), for tests.
 * Returns the count or -E_INVAL if more than max. */
int memmap_taken_ranges(const struct boot_info *bi, struct phys_range *out, int max);

#endif
