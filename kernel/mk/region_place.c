/* Placing a list of held frames into a range of an address space, all
 * or nothing, under one cursor (region_supply.h): check every page, plan
 * the page tables, charge the moved frames, then map with nothing left
 * that can refuse. */
#include "region_supply.h"
#include "uvm_frames.h"

#define HUGE_SPAN (PAGE_SIZE * SUPPLY_HUGE_PAGES)

/* Needs the cursor over [va, va + len), before mm_txn_begin. 0 if no
 * page there is mapped or COW (each is invalid, reserved, swapped or
 * pager-managed: a map replaces its status), else -E_EXIST. The dry run
 * of a mark reads each last-level table's entries in one pass. */
static int range_free(struct mm_cursor *c, uint64_t va, uint64_t len)
{
	struct mm_status none = { .kind = MM_INVALID };
	unsigned k;
	return err_from_mm(mm_mark_need(c, va, len, &none, &k));
}

/* Can list[0..n) at va be one 2 MiB leaf: a 2 MiB-aligned run of 512
 * frames with the same limits at a 2 MiB-aligned address? */
static int huge_fits(uint64_t va, const uint64_t *list, unsigned n)
{
	uint64_t pa0 = SE_PA(list[0]);
	if (n != SUPPLY_HUGE_PAGES || (va & (HUGE_SPAN - 1)) || (pa0 & (HUGE_SPAN - 1)))
		return 0;
	for (unsigned i = 1; i < n; i++)
		if (SE_PA(list[i]) != pa0 + i * PAGE_SIZE ||
		    ((list[i] ^ list[0]) & SE_LIMITS))
			return 0;
	return 1;
}

/* The plan of 4 KiB maps of list[0..n) at va: 0 and *need, or the first
 * page's -E_*. Only the first map into each last-level table (each 2 MiB
 * block) can take frames: it splits what is above the page on its path
 * into tables, after which every later page of the block finds its
 * table; its dry run counts those splits, plus one for the block's
 * metadata array that a later page's limits may need where the first
 * page's did not. */
static int small_need(struct mm_cursor *c, uint64_t va, const uint64_t *list, unsigned n,
		      unsigned prot, unsigned *need)
{
	*need = 0;
	for (unsigned i = 0; i < n; i++) {
		uint64_t a = va + i * PAGE_SIZE;
		unsigned k;
		if (i && (a & (HUGE_SPAN - 1)))
			continue;
		int e = err_from_mm(mm_map_need(c, a, SE_PA(list[i]), 1, prot,
						list[i] & SE_LIMITS, &k));
		if (e)
			return e;
		*need += k + 1;
	}
	return 0;
}

/* Frames of list[0..n) whose charge moves (SE_CHARGE). */
static unsigned moving(const uint64_t *list, unsigned n)
{
	unsigned m = 0;
	for (unsigned i = 0; i < n; i++)
		m += (list[i] & SE_CHARGE) != 0;
	return m;
}

/* Needs the cursor, the plan passed and its frames reserved. Maps the
 * list: 0, or, only where the plan undercounted (mm_txn_overdraws) and
 * memory ran out too, -E_NOMEM with the pages it had mapped taken back
 * (left invalid). */
static int place_all(struct mm_cursor *c, uint64_t va, const uint64_t *list, unsigned n,
		     unsigned prot, int huge)
{
	if (huge)
		return err_from_mm(mm_map(c, va, SE_PA(list[0]), 2, prot, list[0] & SE_LIMITS));
	for (unsigned i = 0; i < n; i++) {
		if (!mm_map(c, va + i * PAGE_SIZE, SE_PA(list[i]), 1, prot, list[i] & SE_LIMITS))
			continue;
		struct mm_info info;
		while (i--)
			mm_take(c, va + i * PAGE_SIZE, &info);
		return -E_NOMEM;
	}
	return 0;
}

int supply_place(struct task *d, uint64_t va, const uint64_t *list, unsigned n, uint32_t prot,
		 int allow_huge, int *huge)
{
	struct mm_cursor c;
	unsigned mprot = prot_to_mm(prot), need = 0;
	uint64_t len = (uint64_t)n * PAGE_SIZE;
	*huge = 0;
	cur_thread()->quota_refused = 0;
	int err = err_from_mm(mm_lock(&c, &d->as, va, va + len));
	if (err)
		return err;
	err = range_free(&c, va, len);
	mm_txn_begin(&c);
	if (!err && allow_huge && huge_fits(va, list, n)) {
		int e = mm_map_need(&c, va, SE_PA(list[0]), 2, mprot, list[0] & SE_LIMITS, &need);
		*huge = e == MM_OK;
		if (e != MM_OK && e != MM_EHUGE)
			err = err_from_mm(e);
	}
	if (!err && !*huge)
		err = small_need(&c, va, list, n, mprot, &need);
	unsigned moved = err ? 0 : moving(list, n);
	if (!err && moved && quota_charge_frames(d, moved))
		err = -E_QUOTA;
	if (!err && (err = err_from_mm(mm_txn_reserve(&c, need))) && moved)
		quota_release_frames(d, moved);
	if (!err && (err = place_all(&c, va, list, n, mprot, *huge)) && moved)
		quota_release_frames(d, moved);
	if (!err) {
		for (unsigned i = 0; i < n; i++)
			if (list[i] & SE_CHARGE)
				uvm_frame_recharge(SE_PA(list[i]), d);   /* refunds the old owner */
	}
	mm_txn_finish(&c);
	mm_release(&c);
	if (!err && (prot & PROT_X))
		uvm_icache_sync(d);
	if (err)
		*huge = 0;
	return err;
}
