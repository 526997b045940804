/* Boot-time kernel page table: direct map of all RAM plus the kernel image.
 * Issue 3 replaces the table building with the mm core; keep this narrow. */
#ifndef ARCH_RISCV_BOOTMAP_H
#define ARCH_RISCV_BOOTMAP_H

#include <stdint.h>
#include "memlayout.h"

/* Set by entry.S: nonzero when satp accepted Sv48 during the probe. */
extern uint64_t boot_satp_sv48_ok;
/* Sv39 trampoline satp value (identity low 256 GiB + kernel high alias). */
extern uint64_t boot_satp_tramp;

/*
 * Build the kernel page table in `levels`-level paging (3 = Sv39, 4 = Sv48):
 * every range in ram[0..n) mapped RW at DIRECT_MAP_BASE + pa with the largest
 * pages alignment allows, and the kernel image at its link address with
 * text RX, rodata R, data/bss RW. All mappings are global.
 * Needs: called once, on the boot hart, before any other hart runs.
 * Returns 0 and the satp value (ASID 0) in *satp; -E_INVAL if levels is not 3
 * or 4 or a range does not fit the direct-map window; -E_NOMEM if the static
 * table pool is exhausted. Nothing is activated here.
 */
int bootmap_build(int levels, const struct phys_range *ram, int n, uint64_t *satp);

#endif
