/* Per-hart memory, sized from the device tree at boot. */
#ifndef KERNEL_HARTS_H
#define KERNEL_HARTS_H

#include <stddef.h>
#include "bootinfo.h"

/*
 * Read the device tree's cpu nodes a second time into an array sized for
 * them (boot_info's cpus; the first scan only counted them), count the
 * usable harts (status okay, with an MMU; at most HARTS_MAX) into
 * harts_max, and give every usable hart its struct cpu, RCU snapshot
 * array and hart-id slot; the boot hart's struct cpu moves there (tp
 * follows). Then the microkernel's per-hart state (mk_harts_init).
 * Needs: boot hart, interrupts off, the kernel page table active, the
 * frame allocator up, no other hart started. Returns 0, or -E_INVAL for a
 * device tree that changed or lists no usable boot hart, or -E_NOMEM;
 * boot cannot go on after a failure.
 */
int harts_init(struct boot_info *bi);

/*
 * Zeroed, physically contiguous memory for harts_max elements of `each`
 * bytes (an array indexed by logical hart), from the frame allocator; it
 * is never freed. Returns NULL when memory is short. After harts_init.
 */
void *harts_alloc(size_t each);

/* The microkernel's per-hart state (kernel/mk/mkinit.c): run queues, idle
 * threads, the revoke barrier's counters. 0 or -E_NOMEM. */
int mk_harts_init(void);

#endif
