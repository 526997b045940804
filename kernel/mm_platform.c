/* The mm core's platform table for the kernel: frames from mm/frame,
 * descriptors from the allocator's per-frame descriptor arrays,
 * preemption = interrupts off, RCU from rcu.c, TLB shootdown of the kernel
 * AS by SBI RFENCE (user ASes: kernel/mk/uvm.c, shootdown.h). */
#include <patina/errno.h>
#include "mm_platform.h"
#include "cortenmm/cursor.h"
#include "cortenmm/qlock.h"
#include "cpu.h"
#include "lockstat.h"
#include "frame.h"
#include "memlayout.h"
#include "panic.h"
#include "rcu.h"
#include "shootdown.h"
#include "arch.h"

struct mm_as kernel_as;

/* --- the part shared with the user ASes' table (kernel/mk/uvm.c) --- */
uint64_t kmm_pt_alloc(void)
{
	paddr_t pa;
	return frame_alloc(0, &pa) ? MM_NOFRAME : pa;
}

void kmm_pt_free(uint64_t pa)
{
	if (frame_free(pa))
		panic("mm: freeing PT frame %lx that is not allocated", (unsigned long)pa);
}

void *kmm_phys_to_virt(uint64_t pa)
{
	return phys_to_virt(pa);
}

/* A hart spinning here may hold interrupts off (a PT-page lock) while the
 * lock's holder waits for its shootdown acknowledgement: serve it. */
void kmm_relax(void)
{
	shootdown_service();
	cpu_relax();
}

void kmm_rcu_read_lock(void) { rcu_read_lock(); }
void kmm_rcu_read_unlock(void) { rcu_read_unlock(); }

void kmm_panic(const char *msg)
{
	panic("%s", msg);
}

#ifndef KMM_LOCK_TAS
/* Interrupts go off before the hart's node is used and stay off while the
 * lock is held, so a hart waits for one lock at a time. Each take counts
 * in the lock statistics here (the core counts only its own locks). */
static struct mm_qnode *kq_node(uint32_t hart) { return &cpus[hart].mm_qnode; }
static const struct mm_qctx kq = { .node = kq_node, .relax = kmm_relax };

void kmm_spin_lock(mm_lock_t *l)
{
	preempt_disable();
	lockstat_count(LOCKSTAT_MM + MM_LK_SPIN, mm_qspin_lock(&kq, this_cpu()->index, l));
}
void kmm_spin_unlock(mm_lock_t *l)
{
	mm_qspin_unlock(l);
	preempt_enable();
}
void kmm_read_lock(mm_lock_t *l)
{
	preempt_disable();
	lockstat_count(LOCKSTAT_MM + MM_LK_READ, mm_qread_lock(&kq, this_cpu()->index, l));
}
void kmm_read_unlock(mm_lock_t *l)
{
	mm_qread_unlock(l);
	preempt_enable();
}
void kmm_write_lock(mm_lock_t *l)
{
	preempt_disable();
	lockstat_count(LOCKSTAT_MM + MM_LK_WRITE, mm_qwrite_lock(&kq, this_cpu()->index, l));
}
void kmm_write_unlock(mm_lock_t *l)
{
	mm_qwrite_unlock(l);
	preempt_enable();
}
#endif

/* --- the kernel AS's own: descriptors, release, pool, TLB policy --- */
static struct mm_page *kp_page_desc(uint64_t pa)
{
	return frame_desc(pa);
}

/* Data pages come back after their TLB flush: free every 4 KiB frame. */
static void kp_frame_release(uint64_t pa, unsigned level)
{
	uint64_t n = 1ULL << (9 * (level - 1));
	for (uint64_t i = 0; i < n; i++)
		if (frame_free(pa + i * FRAME_SIZE))
			panic("mm: released frame %lx is not an allocated frame",
			      (unsigned long)(pa + i * FRAME_SIZE));
}

static struct mm_pool *kp_pool(void)
{
	return &this_cpu()->mm_pool;
}

/* Flush [start, end) on this hart and, through SBI RFENCE (which needs no
 * cooperation from the targets' S-mode), on every other online hart. The
 * kernel AS is live on every hart; per-AS hart masks come with user AS. */
static void kp_tlb_flush(struct mm_as *as, uint64_t start, uint64_t end)
{
	(void)as;
	uint64_t size = end - start;
	if (size <= 64 * PAGE_SIZE) {
		for (uint64_t va = start; va < end; va += PAGE_SIZE)
			arch_tlb_flush_page(va);
	} else {
		arch_tlb_flush_all();
	}
	struct hartmask all = { { 0 } };
	uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++)
		all.w[i / 64] |= 1ULL << (i % 64);
	long e = arch_tlb_flush_remote(&all, start, size, ARCH_NO_ASID);
	if (e)
		panic("mm: remote sfence.vma failed (%ld)", e);
}

const struct mm_platform kernel_mm_platform = {
	KMM_PLATFORM_COMMON,
	.pt_free = kmm_pt_free,
	.page_desc = kp_page_desc,
	.frame_release = kp_frame_release,
	.pool = kp_pool,
	.tlb_flush = kp_tlb_flush,
	.tlb_flush_bbm = kp_tlb_flush,   /* returns once every hart flushed */
};

unsigned kmap_mmio_prot(void)
{
	unsigned prot = MM_PROT_R | MM_PROT_W | MM_PROT_G;
	if (kernel_as.arch->mem_types & (1u << MM_MT_DEVICE))
		prot |= MM_PROT_DEVICE;
	return prot;
}

/* Map [va, va + len) -> pa in the kernel AS under one transaction. */
static int kmap_range(uint64_t va, paddr_t pa, uint64_t len, unsigned prot)
{
	struct mm_cursor c;
	int err = mm_lock(&c, &kernel_as, va, va + len);
	if (err)
		return err;
	err = mm_map_range(&c, va, pa, len, prot);
	mm_release(&c);
	return err;
}

/* The next free address of the MMIO window; only grows (mappings there
 * are never taken down). */
static uint64_t kmmio_next = KMMIO_BASE;

int kmap_mmio(paddr_t pa, uint64_t len, void **va)
{
	if ((pa | len) & (PAGE_SIZE - 1) || !len || len > KMMIO_SIZE)
		return -E_INVAL;
	uint64_t at = __atomic_load_n(&kmmio_next, __ATOMIC_RELAXED);
	do {
		if (KMMIO_BASE + KMMIO_SIZE - at < len)
			return -E_NOMEM;
	} while (!__atomic_compare_exchange_n(&kmmio_next, &at, at + len, 0,
					      __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	/* A failed map leaves its piece of the window unused: the window
	 * is large and such failures (no PT page) rare. */
	if (kmap_range(at, pa, len, kmap_mmio_prot()))
		return -E_NOMEM;
	*va = (void *)(uintptr_t)at;
	return 0;
}

int kmap_build(int levels, const struct boot_info *bi, enum mm_mode mm, uint64_t *token)
{
	/* memory types in the table only when every hart has them */
	int memtypes = bi->ncpus > 0 && !bi->no_svpbmt;
	const struct pt_arch *arch = arch_paging_table(levels, memtypes);
	const struct mm_protocol *proto = mm_proto_by_name(mm_name(mm));
	if (!arch || !proto)
		return MM_EINVAL;
	for (int i = 0; i < bi->nmem; i++) {
		paddr_t end = bi->mem[i].base + bi->mem[i].size;
		if (end < bi->mem[i].base || end > DIRECT_MAP_SIZE)
			return MM_ERANGE;
	}
	int err = mm_as_init(&kernel_as, arch, proto, &kernel_mm_platform,
			     arch->kernel_lo, arch->kernel_last, NULL);
	if (err)
		return err;

	for (int i = 0; i < bi->nmem; i++) {
		paddr_t lo = (bi->mem[i].base + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
		paddr_t hi = (bi->mem[i].base + bi->mem[i].size) & ~(PAGE_SIZE - 1);
		if (hi <= lo)
			continue;
		err = kmap_range(DIRECT_MAP_BASE + lo, lo, hi - lo,
				 MM_PROT_R | MM_PROT_W | MM_PROT_G);
		if (err)
			return err;
	}

	struct { char *start, *end; unsigned prot; } img[] = {
		{ _kernel_start, _etext,      MM_PROT_R | MM_PROT_X | MM_PROT_G },
		{ _etext,        _erodata,    MM_PROT_R | MM_PROT_G },
		{ _erodata,      _kernel_end, MM_PROT_R | MM_PROT_W | MM_PROT_G },
	};
	for (unsigned i = 0; i < sizeof img / sizeof img[0]; i++) {
		uint64_t va = (uint64_t)(uintptr_t)img[i].start;
		uint64_t len = (uint64_t)(img[i].end - img[i].start);
		if (!len)
			continue;
		err = kmap_range(va, virt_to_phys(img[i].start), len, img[i].prot);
		if (err)
			return err;
	}

	err = mm_as_kernel_seal(&kernel_as);
	if (err)
		return err;
	*token = arch_as_token(&kernel_as, 0);   /* ASID 0 */
	return 0;
}
