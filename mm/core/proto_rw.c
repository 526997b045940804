/* CortenMM-rw: readers-writer locks.
 * Walk down from the root taking a reader lock on every PT page whose range
 * still contains the whole target range; take the writer lock on the
 * covering page (the lowest such page found). Every PT page below it is
 * owned implicitly: reaching one needs a reader lock on the covering page.
 * Pages are never freed while someone can reach them, so no RCU. */
#include "internal.h"

/* Needs: nothing held. Holds on return: read locks on c->rlocked[], the
 * write lock on c->cover. Cannot fail. */
static int rw_lock(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	const struct pt_arch *a = as->arch;
	const struct mm_platform *p = as->plat;
	struct mm_page *pg = p->page_desc(as->root_pa);
	unsigned L = a->levels;
	uint64_t base = as->root_base;
	for (;;) {
		unsigned i = pt_index(a, c->start, L);
		if (L > 1 && i == pt_index(a, c->last, L) && !mm_whole_entry(c, base, L, i)) {
			mm_read_lock(p, &pg->lock);
			uint64_t e = ent_load(&pg_ptes(as, pg)[i]);
			if (is_table(a, e, L)) {
				c->rlocked[c->nr_rlocked++] = pg;
				base = entry_base(a, base, L, i);
				pg = child_of(as, e, L);
				L--;
				continue;
			}
			/* pg covers the range. Between this unlock and the write
			 * lock someone may add a child below pg; pg still contains
			 * the range, so exclusion holds (it is just not lowest). */
			mm_read_unlock(p, &pg->lock);
		}
		mm_write_lock(p, &pg->lock);
		c->cover = pg;
		c->cover_level = L;
		c->cover_base = base;
		return MM_OK;
	}
}

static void rw_unlock(struct mm_cursor *c)
{
	const struct mm_platform *p = c->as->plat;
	mm_write_unlock(p, &c->cover->lock);
	while (c->nr_rlocked)
		mm_read_unlock(p, &c->rlocked[--c->nr_rlocked]->lock);
}

static void rw_born(struct mm_cursor *c, struct mm_page *pg)
{
	(void)c;
	(void)pg;
}

static void rw_unlinked(struct mm_cursor *c, struct mm_page *pg)
{
	(void)c;
	__atomic_fetch_or(&pg->flags, MM_PG_STALE, __ATOMIC_RELEASE);
}

/* After the TLB flush: nobody can reach pg any more. */
static void rw_retire(struct mm_as *as, struct mm_page *pg)
{
	mm_pt_free_now(as->plat, pg);
}

const struct mm_protocol mm_proto_rw = {
	.name = "rw", .lock = rw_lock, .unlock = rw_unlock, .born = rw_born,
	.unlinked = rw_unlinked, .retire = rw_retire,
};
