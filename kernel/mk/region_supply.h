/* Moving mapped frames between address spaces without copying: the
 * bulk supply (region_supply.c, SYS_REGION_SUPPLY) and the contiguous
 * allocation that gives a pager frames a supply can map as one huge leaf
 * (region_contig.c, SYS_REGION_ALLOC_CONTIG).
 *
 * Both carry their frames in a kernel list, one word a page: the frame's
 * address with, in the bits below the page size, the state its mapping
 * had (permissions, limits, accessed/dirty) so that it can be mapped
 * again exactly as it was. */
#ifndef MK_REGION_SUPPLY_H
#define MK_REGION_SUPPLY_H

#include "region.h"

#define SE_PROT   0x07u           /* MM_PROT_R/W/X of the mapping */
#define SE_LIMITS MM_MAP_LIMITS   /* 0x18: the limits the mapping carried */
#define SE_A      0x20u           /* it was accessed */
#define SE_D      0x40u           /* it was written */
#define SE_CHARGE 0x80u           /* its quota charge moves to the destination */
#define SE_PA(e)  ((e) & ~(uint64_t)(PAGE_SIZE - 1))

/* The frames of a 2 MiB leaf. */
#define SUPPLY_HUGE_PAGES 512u

/* Needs: no cursor held; task_txn_try_begin(d) held; list[0..n) frames
 * this thread holds the only reference of (n <= SUPPLY_MAX_PAGES), none
 * mapped anywhere. Maps them at [va, va + n pages) of d with prot
 * (PROT_R/W/X, checked) and each entry's limits, all or none: no page
 * there may be mapped or COW (else -E_EXIST), the
 * frames whose entry has SE_CHARGE are charged to d (-E_QUOTA) and the
 * page tables reserved (-E_QUOTA, -E_NOMEM) before the first is mapped.
 * With allow_huge, n == 512, va 2 MiB aligned and the frames one
 * 2 MiB-aligned run with the same limits, they become one 2 MiB leaf
 * where the arch allows it. 0 (the mappings own the references, SE_CHARGE
 * frames are d's) or -E_* with nothing changed (the list is still the
 * caller's). *huge: 1 if a 2 MiB leaf was made. */
int supply_place(struct task *d, uint64_t va, const uint64_t *list, unsigned n, uint32_t prot,
		 int allow_huge, int *huge);

/* One move of n frames from the caller t's own range at sva. */
struct supply {
	struct task *t, *dst;
	uint64_t dva, sva;
	unsigned n;
	uint32_t prot;
	uint64_t *list;       /* n entries (above) */
};
/* Needs: no cursor held; t's and dst's transactions begun. The take
 * (region_supply.c, transaction 1): 0 with every frame in s->list (the
 * source pages invalid, holds in place, flushed; entries with SE_CHARGE
 * are frames not charged to s->dst), or -E_* with the source as it was.
 * supply_settle (transaction 3) then clears the holds (placed) or maps
 * every frame back (not placed). */
int supply_take(struct supply *s);
void supply_settle(struct supply *s, int placed);

/* Syscalls. */
long sys_region_supply(struct task *t, long dst, uint64_t dva, long src, uint64_t sva,
		       uint64_t npages, uint64_t prot);
long sys_region_alloc_contig(struct task *t, long slot, uint64_t va, uint64_t order,
			     uint64_t prot);

#endif
