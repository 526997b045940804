/* The cursor's life: lock (validate, refill the pool, run the protocol,
 * wait for overlapping late flushes), and release (unlock, flush, release
 * frames, retire PT pages). The contract is in cortenmm/cursor.h. */
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

/* Late flushes (see mm_as.flush_locked). A commit that has something to
 * flush claims a slot while it still holds its locks, publishes the range,
 * drops the locks, flushes, releases the unmapped frames and only then
 * frees the slot. A transaction whose range overlaps a published one
 * finds it once it has its own locks, drops them, waits until that flush
 * is done and locks again: so it never sees a page whose old translation
 * some hart may still use (a cleared dirty bit with a stale writable
 * entry, a free page still reachable), and it never holds a PT-page lock
 * while it waits (a neighbour in the same table goes on). Overlapping
 * ranges always share a PT-page lock, which orders the publication before
 * the check; a transaction filling a slot (state 1) holds its locks, so it
 * cannot overlap the checker. */
static bool late_overlaps(const struct mm_flush_slot *s, uint64_t lo, uint64_t hi)
{
	return __atomic_load_n(&s->lo, __ATOMIC_RELAXED) <= hi &&
	       lo <= __atomic_load_n(&s->hi, __ATOMIC_RELAXED);
}

/* Needs: c's locks held. A published late flush overlapping c's range,
 * or NULL. */
static struct mm_flush_slot *late_find(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	if (!__atomic_load_n(&as->nr_late, __ATOMIC_ACQUIRE))
		return 0;
	for (unsigned i = 0; i < MM_FLUSH_SLOTS; i++) {
		struct mm_flush_slot *s = &as->late[i];
		if (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == 2 &&
		    late_overlaps(s, c->start, c->last))
			return s;
	}
	return 0;
}

/* Needs: c's locks held, a flush pending. A slot now holding c's flush
 * range as in flight, or -1 when every slot is busy (flush under the
 * locks then). */
static int late_publish(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	for (int i = 0; i < MM_FLUSH_SLOTS; i++) {
		struct mm_flush_slot *s = &as->late[i];
		uint32_t free = 0;
		if (__atomic_load_n(&s->state, __ATOMIC_RELAXED) ||
		    !__atomic_compare_exchange_n(&s->state, &free, 1, false, __ATOMIC_ACQUIRE,
						 __ATOMIC_RELAXED))
			continue;
		__atomic_store_n(&s->lo, c->flush_lo, __ATOMIC_RELAXED);
		__atomic_store_n(&s->hi, c->flush_hi, __ATOMIC_RELAXED);
		__atomic_add_fetch(&as->nr_late, 1, __ATOMIC_RELAXED);
		__atomic_store_n(&s->state, 2, __ATOMIC_RELEASE);
		return i;
	}
	return -1;
}

/* The flush of slot i is done (every hart acknowledged it). */
static void late_done(struct mm_as *as, int i)
{
	__atomic_sub_fetch(&as->nr_late, 1, __ATOMIC_RELAXED);
	__atomic_store_n(&as->late[i].state, 0, __ATOMIC_RELEASE);
}

int mm_lock_last(struct mm_cursor *c, struct mm_as *as, uint64_t start, uint64_t last)
{
	for (;;) {
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
		c->keep_tables = false;
		c->txn_frames = c->txn_charged = 0;
		c->txn_list = 0;
		c->txn_nodes = 0;
		mm_pool_refill(as->plat, pool_target(as->arch));
		int err = as->proto->lock(c);
		if (err) {
			mm_resv_return(c);
			return err;
		}
		struct mm_flush_slot *s = late_find(c);
		if (!s)
			return MM_OK;
		/* A flush over our range is in flight: wait for it unlocked. */
		as->proto->unlock(c);
		mm_resv_return(c);
		while (__atomic_load_n(&s->state, __ATOMIC_ACQUIRE) == 2 && late_overlaps(s, start, last))
			as->plat->relax();
	}
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

/* Hand the batched data pages back (after their flush). */
static void release_frames(struct mm_cursor *c)
{
	for (unsigned i = 0; i < c->nr_rel; i++)
		c->as->plat->frame_release(c->rel_pa[i], c->rel_level[i]);
	c->nr_rel = 0;
}

/* Flush what is pending, then hand the batched data pages back. With or
 * without the cursor's locks (see platform.h on tlb_flush). */
static void flush_now(struct mm_cursor *c)
{
	if (c->flush) {
		uint64_t end = c->flush_hi + 1; /* 0 only for the very top page */
		c->as->plat->tlb_flush(c->as, c->flush_lo, end);
		c->flush = false;
	}
	release_frames(c);
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
		       (!as->proto->prune_cover || as->proto->prune_cover(c));
	int late = c->flush && !as->flush_locked && !as->proto->flush_under_locks ?
		   late_publish(c) : -1;
	if (late < 0)
		flush_now(c);
	as->proto->unlock(c);
	if (late >= 0) {
#ifndef MM_MUTANT_RELEASE_BEFORE_FLUSH
		flush_now(c);
#else
		/* Seeded bug (tests/model, tlb-mutant-early-release): the unmapped
		 * frames go back before any hart has flushed them. */
		release_frames(c);
		flush_now(c);
#endif
		late_done(as, late);
	}
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
