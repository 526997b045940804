/* The kernel's implementation of the mm core's platform table, and the
 * kernel address space built with the core. */
#ifndef KERNEL_MM_PLATFORM_H
#define KERNEL_MM_PLATFORM_H

#include <stdint.h>
#include "cortenmm/mm.h"
#include "bootinfo.h"
#include "kernel.h"

extern const struct mm_platform kernel_mm_platform;

/* The platform hooks that are the same for the kernel AS and user ASes
 * (kernel/mk/uvm.c): PT pages from mm/frame, the direct map, interrupts-off
 * preemption, RCU from rcu.c, panic. The tables differ only in descriptors,
 * data-frame and PT-page release, per-hart pools and TLB-flush policy
 * (user ASes park what they free until their shootdown was applied). */
uint64_t kmm_pt_alloc(void);
void kmm_pt_free(uint64_t pa);          /* panics if pa is not allocated */
void *kmm_phys_to_virt(uint64_t pa);
void kmm_relax(void);
void kmm_rcu_read_lock(void);
void kmm_rcu_read_unlock(void);
void kmm_panic(const char *msg);
/* Lock statistics for the core's own locks (platform lock_stat): counts
 * in slot LOCKSTAT_MM + kind (lockstat.h). */
void kmm_lock_stat(unsigned kind, uint32_t waited);
/* PT-page locks: queue locks on per-hart nodes (struct cpu), interrupts
 * off while held, each take counted in the lock statistics; built with
 * -Dmm_lock=tas, the core's own test-and-set atomics instead (hooks NULL),
 * guarded by preempt_* and counted through lock_stat. */
#ifdef KMM_LOCK_TAS
#define KMM_LOCK_HOOKS
#else
void kmm_spin_lock(mm_lock_t *l);
void kmm_spin_unlock(mm_lock_t *l);
void kmm_read_lock(mm_lock_t *l);
void kmm_read_unlock(mm_lock_t *l);
void kmm_write_lock(mm_lock_t *l);
void kmm_write_unlock(mm_lock_t *l);
#define KMM_LOCK_HOOKS \
	.spin_lock = kmm_spin_lock, .spin_unlock = kmm_spin_unlock, \
	.read_lock = kmm_read_lock, .read_unlock = kmm_read_unlock, \
	.write_lock = kmm_write_lock, .write_unlock = kmm_write_unlock,
#endif
#define KMM_PLATFORM_COMMON \
	.pt_alloc = kmm_pt_alloc, \
	.phys_to_virt = kmm_phys_to_virt, \
	.relax = kmm_relax, \
	KMM_LOCK_HOOKS \
	.preempt_disable = preempt_disable, \
	.preempt_enable = preempt_enable, \
	.lock_stat = kmm_lock_stat, \
	.rcu_read_lock = kmm_rcu_read_lock, \
	.rcu_read_unlock = kmm_rcu_read_unlock, \
	.rcu_defer = rcu_defer, \
	.panic = kmm_panic
extern struct mm_as kernel_as;

/*
 * Build the kernel address space with the mm core: every memory node's
 * range at DIRECT_MAP_BASE + pa (RW, global, largest pages), the kernel
 * image at its link address (text RX, rodata R, data/bss RW, 4 KiB), then
 * seal the kernel half so user address spaces can share it. The table is
 * the mode's Svpbmt variant when every enabled hart's riscv,isa lists
 * svpbmt (user address spaces use the same one).
 * Needs: frame allocator initialised with descriptors of
 * sizeof(struct mm_page); the boot trampoline active (phys_to_virt 1:1).
 * Returns 0 and its address-space token (arch_as_token) in *token, or an MM_* error (negative).
 */
int kmap_build(int levels, const struct boot_info *bi, enum mm_mode mm, uint64_t *token);

/* The permissions of a kernel mapping of MMIO: RW, global, memory type
 * device where the kernel's table can say so (Svpbmt on every hart);
 * elsewhere normal, and the platform's physical memory attributes, which
 * make every MMIO region I/O, decide. */
unsigned kmap_mmio_prot(void);

/* Map the device registers [pa, pa + len) (page-aligned, len > 0) into
 * the kernel's MMIO window (memlayout.h) with kmap_mmio_prot, for good:
 * 0 and *va, or -E_INVAL (alignment, size), -E_NOMEM (the window is
 * full, or a page-table page could not be had). Any context that may
 * take a kernel-AS cursor (no mm cursor held); after kmap_build. */
int kmap_mmio(paddr_t pa, uint64_t len, void **va);

#endif
