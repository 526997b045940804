/* The cursor's life: lock (validate, refill the pool, run the protocol),
 * and release (flush, unlock, release frames, retire PT pages). The
 * contract is in cortenmm/cursor.h. */
#include "internal.h"

/* Pool target: what the worst single operation can need (mark/unmap with
 * splits at both edges, table + metadata per level). */
static unsigned pool_target(const struct pt_arch *a)
{
	return 4 * a->levels;
}

int mm_lock(struct mm_cursor *c, struct mm_as *as, uint64_t start, uint64_t end)
{
	if ((start | end) & (MM_PAGE_SIZE - 1))
		return MM_EALIGN;
	if (end <= start)
		return MM_ERANGE;
	if (start < as->lo || end - 1 > as->last)
		return MM_EOUTSIDE;
	return mm_lock_last(c, as, start, end - 1);
}

int mm_lock_last(struct mm_cursor *c, struct mm_as *as, uint64_t start, uint64_t last)
{
	c->as = as;
	c->start = start;
	c->last = last;
	c->cover = 0;
	c->nr_rlocked = 0;
	c->flush = false;
	c->nr_rel = 0;
	c->dead = 0;
	c->nr_resv = 0;
	c->nr_charged = 0;
	mm_pool_refill(as->plat, pool_target(as->arch));
	int err = as->proto->lock(c);
	if (err)
		mm_resv_return(c);
	return err;
}

void mm_cursor_flush_range(struct mm_cursor *c, uint64_t lo, uint64_t hi)
{
	if (!c->flush) {
		c->flush = true;
		c->flush_lo = lo;
		c->flush_hi = hi;
		return;
	}
	if (lo < c->flush_lo)
		c->flush_lo = lo;
	if (hi > c->flush_hi)
		c->flush_hi = hi;
}

/* Flush what is pending, then hand the batched data pages back. Locks are
 * still held (see platform.h on tlb_flush). */
static void flush_now(struct mm_cursor *c)
{
	const struct mm_platform *p = c->as->plat;
	if (c->flush) {
		uint64_t end = c->flush_hi + 1; /* 0 only for the very top page */
		p->tlb_flush(c->as, c->flush_lo, end);
		c->flush = false;
	}
	for (unsigned i = 0; i < c->nr_rel; i++)
		p->frame_release(c->rel_pa[i], c->rel_level[i]);
	c->nr_rel = 0;
}

void mm_flush(struct mm_cursor *c)
{
	flush_now(c);
}

void mm_cursor_release_frame(struct mm_cursor *c, uint64_t pa, unsigned level)
{
	if (c->nr_rel == MM_CURSOR_BATCH)
		flush_now(c);
	c->rel_pa[c->nr_rel] = pa;
	c->rel_level[c->nr_rel] = (uint8_t)level;
	c->nr_rel++;
}

void mm_cursor_dead_pt(struct mm_cursor *c, struct mm_page *pg)
{
	__atomic_fetch_sub(&c->as->nr_frames, pg->meta_pa ? 2 : 1, __ATOMIC_RELAXED);
	pg->next = c->dead;
	c->dead = pg;
}

/* Commit without pruning; *empty_cover says whether the covering page was
 * left holding nothing (and is not the root), and, for a protocol with its
 * own operations, that it agrees to remove it. */
static void commit(struct mm_cursor *c, bool *empty_cover)
{
	struct mm_as *as = c->as;
	mm_resv_return(c);
	*empty_cover = c->cover->nr_live == 0 && c->cover_level < as->arch->levels &&
		       (!as->proto->vma || as->proto->vma->prune_cover(c));
	flush_now(c);
	as->proto->unlock(c);
	struct mm_page *pg = c->dead;
	c->dead = 0;
	while (pg) {
		struct mm_page *next = pg->next;
		as->proto->retire(as, pg);
		pg = next;
	}
}

void mm_cursor_commit(struct mm_cursor *c)
{
	bool empty;
	commit(c, &empty);
}

/* An empty covering page cannot remove itself (its parent entry is not
 * ours). Take the range of the whole page, which makes its parent the
 * covering page, and remove whatever is still empty there; repeat upwards. */
void mm_release(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	const struct pt_arch *a = as->arch;
	unsigned L = c->cover_level;
	uint64_t base = c->cover_base;
	bool empty;
	commit(c, &empty);
	c->as = 0;
	while (empty && L < a->levels) {
		uint64_t last = base + span_of(a, L + 1) - 1;
		if (base < as->lo || last > as->last || (as->sealed && L + 1 == a->levels))
			return;
		struct mm_cursor up;
		if (mm_lock_last(&up, as, base, last) != MM_OK)
			return;   /* adv could not allocate: leave the empty page */
		mm_prune(&up);
		L = up.cover_level;
		base = up.cover_base;
		commit(&up, &empty);
	}
}
