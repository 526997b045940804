/* CortenMM-adv: lock-free walk under RCU, then lock the covering PT page
 * and every existing descendant overlapping the range, in DFS pre-order
 * (one global order: deadlock-free).
 *  - Missing entries on the way down are filled under the lock of the page
 *    holding them: the new child is locked at birth and published with one
 *    atomic store. A status sitting at that entry is split into the child.
 *  - A page found lock-free may have been removed meanwhile: after locking
 *    it, re-check `stale` and retry from the root.
 *  - Removing a PT page: clear the parent entry atomically (ops.c), mark it
 *    stale, unlock; free only after the TLB flush (mm_release) AND an RCU
 *    grace period (retire), so lock-free walkers never touch freed memory. */
#include "internal.h"

/* Lock (lock=true) or unlock every existing descendant of pg (level L,
 * covering from base) that overlaps [lo, hi]. Locks are taken in DFS
 * pre-order (parent before children: the global order that makes adv
 * deadlock-free) and dropped in the mirror order (children first).
 * Needs pg held by the cursor, so no descendant can be unlinked meanwhile. */
static void walk_desc(struct mm_cursor *c, struct mm_page *pg, unsigned L, uint64_t base,
		      uint64_t lo, uint64_t hi, bool lock)
{
	struct mm_as *as = c->as;
	const struct pt_arch *a = as->arch;
	if (L == 1)
		return;
	uint64_t sz = span_of(a, L);
	for (unsigned i = pt_index(a, lo, L); i <= pt_index(a, hi, L); i++) {
		uint64_t e = ent_load(&pg_ptes(as, pg)[i]);
		if (!is_table(a, e, L))
			continue;
		uint64_t eb = entry_base(a, base, L, i), el = eb + sz - 1;
		struct mm_page *ch = child_of(as, e, L);
		/* pg is ours, so ch stays linked: it cannot be stale */
		if (lock)
			mm_spin_lock(as->plat, &ch->lock);
		walk_desc(c, ch, L - 1, eb, lo > eb ? lo : eb, hi < el ? hi : el, lock);
		if (!lock)
			mm_spin_unlock(as->plat, &ch->lock);
	}
}

/* Lock pg found lock-free; false (and nothing held) if it turned stale. */
static bool lock_live(const struct mm_platform *p, struct mm_page *pg)
{
	mm_spin_lock(p, &pg->lock);
	if (!pg_stale(pg))
		return true;
	mm_spin_unlock(p, &pg->lock);
	return false;
}

/* Take away the PT pages a failed adv_lock made: made[0..n-1], the chain
 * below entry pt_index(c->start) of `top` (level L, first entry at base)
 * on the range's path. Locks top and what lies below it in the range, as
 * a transaction covering the range from top would, and removes each page
 * of the chain, bottom up, that still holds what the split gave it (one
 * status, or nothing). Needs: nothing held but the RCU read side, which
 * keeps top in memory until it is locked; leaves it (the commit may wait
 * for other harts). Allocates nothing. */
static void adv_unmake(struct mm_cursor *c, struct mm_page *top, unsigned L, uint64_t base,
		       struct mm_page *const *made, unsigned n)
{
	const struct mm_platform *p = c->as->plat;
	if (!lock_live(p, top)) {
		p->rcu_read_unlock();
		return;         /* removed meanwhile, and with it what was made */
	}
	c->cover = top;
	c->cover_level = L;
	c->cover_base = base;
	walk_desc(c, top, L, base, c->start, c->last, true);
	p->rcu_read_unlock();
	mm_unsplit_path(c, c->start, made, n);
	mm_cursor_commit(c);
	c->cover = 0;
}

/* Needs: nothing held. MM_OK with the cover and its overlapping
 * descendants locked, or MM_ENOMEM with nothing held and the PT pages
 * this call added on the way down taken away again (where nobody has put
 * anything into them meanwhile). */
static int adv_lock(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	const struct pt_arch *a = as->arch;
	const struct mm_platform *p = as->plat;
retry:
	p->rcu_read_lock();
	struct mm_page *pg = p->page_desc(as->root_pa);
	struct mm_page *held = 0;       /* pg, when this walk holds its lock */
	struct mm_page *made[MM_MAX_LEVELS], *top = 0;  /* pages split off below top */
	unsigned L = a->levels, nmade = 0, top_L = 0;
	uint64_t base = as->root_base, top_base = 0;
	while (L > 1) {
		unsigned i = pt_index(a, c->start, L);
		if (i != pt_index(a, c->last, L) || mm_whole_entry(c, base, L, i))
			break;
		uint64_t e = ent_load(&pg_ptes(as, pg)[i]);
		bool present = a->present(e);
		bool table = present && !a->is_leaf(e, L);   /* is_table: L > 1 here */
		if (!present && held != pg) {
			if (!lock_live(p, pg)) {
				p->rcu_read_unlock();
				goto retry;
			}
			held = pg;
			e = ent_load(&pg_ptes(as, pg)[i]);
			present = a->present(e);
			table = present && !a->is_leaf(e, L);
		}
		if (table) {
			if (held == pg) {
				mm_spin_unlock(p, &pg->lock);
				held = 0;
			}
			base = entry_base(a, base, L, i);
			pg = child_of(as, e, L);
			L--;
			continue;
		}
		if (present)
			break;                  /* huge leaf: pg covers the range */
		uint64_t m = ent_status(as, pg, i, e), raw;
		bool arr = meta_in_array(a, e, L, m, &raw);
		if (mm_resv_fill(c, arr ? 2 : 1)) {
			mm_spin_unlock(p, &pg->lock);
			if (nmade)
				adv_unmake(c, top, top_L, top_base, made, nmade);
			else
				p->rcu_read_unlock();
			return MM_ENOMEM;
		}
		struct mm_page *ch = mm_split(c, pg, i, entry_base(a, base, L, i), e, m, L,
					      arr);  /* born locked */
		if (!nmade) {
			top = pg;
			top_L = L;
			top_base = base;
		}
		made[nmade++] = ch;
		mm_spin_unlock(p, &pg->lock);
		held = pg = ch;
		base = entry_base(a, base, L, i);
		L--;
	}
	if (held != pg && !lock_live(p, pg)) {
		p->rcu_read_unlock();
		goto retry;
	}
	c->cover = pg;
	c->cover_level = L;
	c->cover_base = base;
	walk_desc(c, pg, L, base, c->start, c->last, true);
	p->rcu_read_unlock();
	return MM_OK;
}

static void adv_unlock(struct mm_cursor *c)
{
	walk_desc(c, c->cover, c->cover_level, c->cover_base, c->start, c->last, false);
	mm_spin_unlock(c->as->plat, &c->cover->lock);
}

static void adv_born(struct mm_cursor *c, struct mm_page *pg)
{
	mm_spin_lock(c->as->plat, &pg->lock);
}

static void adv_unlinked(struct mm_cursor *c, struct mm_page *pg)
{
	__atomic_fetch_or(&pg->flags, MM_PG_STALE, __ATOMIC_RELEASE);
	mm_spin_unlock(c->as->plat, &pg->lock);
}

static void adv_free(struct mm_rcu_head *h)
{
	struct mm_page *pg = (struct mm_page *)((char *)h - __builtin_offsetof(struct mm_page, rcu));
	mm_pt_free_now(pg->plat, pg);
}

/* After the TLB flush; frees after a grace period too (mm.h). */
void mm_pt_retire_rcu(struct mm_as *as, struct mm_page *pg)
{
	pg->plat = as->plat;
	as->plat->rcu_defer(&pg->rcu, adv_free);
}

const struct mm_protocol mm_proto_adv = {
	.name = "adv", .lock = adv_lock, .unlock = adv_unlock, .born = adv_born,
	.unlinked = adv_unlinked, .retire = mm_pt_retire_rcu,
};
