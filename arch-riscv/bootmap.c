/* The boot-time kernel page table (see bootmap.h). Tables come from a small
 * static pool in .bss because the frame allocator needs the direct map this
 * file builds. */
#include <stdint.h>
#include <stddef.h>
#include <patina/errno.h>
#include "bootmap.h"
#include "memlayout.h"
#include "riscv.h"

#define PTE_V (1UL << 0)
#define PTE_R (1UL << 1)
#define PTE_W (1UL << 2)
#define PTE_X (1UL << 3)
#define PTE_G (1UL << 5)
#define PTE_A (1UL << 6)
#define PTE_D (1UL << 7)
#define PTE_PPN_SHIFT 10

#define BOOTMAP_POOL_PAGES 64

static uint64_t pool[BOOTMAP_POOL_PAGES][512] __attribute__((aligned(4096)));
static int pool_used;

static uint64_t *table_alloc(void)
{
	if (pool_used >= BOOTMAP_POOL_PAGES)
		return NULL;
	uint64_t *t = pool[pool_used++];
	for (int i = 0; i < 512; i++)
		t[i] = 0;
	return t;
}

static inline uint64_t *pte_table(uint64_t pte)
{
	paddr_t pa = (pte >> PTE_PPN_SHIFT) << PAGE_SHIFT;
	/* Pool pages live in the kernel image. */
	return (uint64_t *)(uintptr_t)(pa + kernel_va_pa_offset);
}

/* Map one page of size 4 KiB << (9*level) at va -> pa. The slot must be
 * empty (boot mappings never overlap). Returns 0 or -E_NOMEM / -E_INVAL. */
static int map_one(uint64_t *root, int levels, uint64_t va, paddr_t pa,
		   int level, uint64_t flags)
{
	uint64_t *t = root;
	for (int l = levels - 1; l > level; l--) {
		uint64_t *slot = &t[(va >> (PAGE_SHIFT + 9 * l)) & 511];
		if (!(*slot & PTE_V)) {
			uint64_t *n = table_alloc();
			if (!n)
				return -E_NOMEM;
			*slot = ((virt_to_phys(n) >> PAGE_SHIFT) << PTE_PPN_SHIFT) | PTE_V;
		} else if (*slot & (PTE_R | PTE_W | PTE_X)) {
			return -E_INVAL;
		}
		t = pte_table(*slot);
	}
	uint64_t *slot = &t[(va >> (PAGE_SHIFT + 9 * level)) & 511];
	if (*slot & PTE_V)
		return -E_INVAL;
	*slot = ((pa >> PAGE_SHIFT) << PTE_PPN_SHIFT) | flags | PTE_V | PTE_A | PTE_D | PTE_G;
	return 0;
}

/* Map [va, va+size) -> pa with the largest pages (up to 1 GiB) that alignment
 * and the remaining length allow. va, pa, size must be 4 KiB aligned. */
static int map_range(uint64_t *root, int levels, uint64_t va, paddr_t pa,
		     uint64_t size, uint64_t flags)
{
	while (size) {
		int level = 2;
		for (; level > 0; level--) {
			uint64_t ps = PAGE_SIZE << (9 * level);
			if (!(va & (ps - 1)) && !(pa & (ps - 1)) && size >= ps)
				break;
		}
		uint64_t ps = PAGE_SIZE << (9 * level);
		int err = map_one(root, levels, va, pa, level, flags);
		if (err)
			return err;
		va += ps;
		pa += ps;
		size -= ps;
	}
	return 0;
}

int bootmap_build(int levels, const struct phys_range *ram, int n, uint64_t *satp)
{
	if (levels != 3 && levels != 4)
		return -E_INVAL;
	for (int i = 0; i < n; i++) {
		paddr_t end = ram[i].base + ram[i].size;
		if (end < ram[i].base || end > DIRECT_MAP_SIZE)
			return -E_INVAL;
	}

	pool_used = 0;
	uint64_t *root = table_alloc();
	if (!root)
		return -E_NOMEM;

	for (int i = 0; i < n; i++) {
		paddr_t lo = (ram[i].base + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
		paddr_t hi = (ram[i].base + ram[i].size) & ~(PAGE_SIZE - 1);
		if (hi <= lo)
			continue;
		int err = map_range(root, levels, DIRECT_MAP_BASE + lo, lo, hi - lo,
				    PTE_R | PTE_W);
		if (err)
			return err;
	}

	struct { char *start, *end; uint64_t flags; } img[] = {
		{ _kernel_start, _etext,      PTE_R | PTE_X },
		{ _etext,        _erodata,    PTE_R },
		{ _erodata,      _kernel_end, PTE_R | PTE_W },
	};
	for (size_t i = 0; i < sizeof img / sizeof img[0]; i++) {
		uint64_t va = (uint64_t)(uintptr_t)img[i].start;
		uint64_t size = (uint64_t)(img[i].end - img[i].start);
		/* 4 KiB pages keep the permission boundaries exact. */
		for (uint64_t off = 0; off < size; off += PAGE_SIZE) {
			int err = map_one(root, levels, va + off,
					  virt_to_phys((void *)(uintptr_t)(va + off)), 0,
					  img[i].flags);
			if (err)
				return err;
		}
	}

	uint64_t mode = levels == 4 ? SATP_MODE_SV48 : SATP_MODE_SV39;
	*satp = (mode << SATP_MODE_SHIFT) | (virt_to_phys(root) >> PAGE_SHIFT);
	return 0;
}
