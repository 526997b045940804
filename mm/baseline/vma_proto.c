/* The baseline's locking protocol (struct mm_protocol "vma"): how a cursor
 * takes and drops its range. The lock rules are in vma.h.
 *  - More than one page: mmap_lock for writing; the cursor covers from
 *    the root (it owns the whole tree; page-table locks are not needed
 *    since every other cursor is excluded).
 *  - One page: mmap_lock for reading; walk down without locks (page
 *    tables are freed only under the write lock), adding an empty table
 *    where an entry above the leaves is empty (under the lock of the page
 *    holding it, the new one locked at birth), then lock the PT page
 *    holding the page's entry: the covering page. */
#include "vma.h"

/* Forget and unlock pg, one of the page-table locks the cursor holds. */
static void ptl_drop(struct mm_cursor *c, struct mm_page *pg)
{
	for (unsigned i = 0; i < c->nr_rlocked; i++) {
		if (c->rlocked[i] != pg)
			continue;
		c->rlocked[i] = c->rlocked[--c->nr_rlocked];
		ptl_unlock(c->as->plat, pg);
		return;
	}
	c->as->plat->panic("vma: dropping a page-table lock the cursor does not hold");
}

/* Needs: mmap_lock held for reading. Take pg's page-table lock; false
 * (nothing taken) when a reader waits to upgrade meanwhile: the caller
 * must then drop everything and start over, since the upgrader, which may
 * hold pg's lock, waits for this reader to leave. Only a wait that ends
 * with the lock counts in the lock statistics. */
static bool ptl_get(struct mm_cursor *c, struct mm_page *pg)
{
	const struct mm_platform *p = c->as->plat;
	uint32_t waited = 0;
	while (!ptl_trylock(p, pg)) {
		if (mmap_upgrade_pending(&c->as->vma.mmap_lock))
			return false;
		mm_lock_relax(p, &waited);
	}
	mm_lock_stat(p, MM_LK_PTL, waited);
	c->rlocked[c->nr_rlocked++] = pg;
	return true;
}

/* Drop every lock a read-mode cursor holds. */
static void drop_read(struct mm_cursor *c)
{
	const struct mm_platform *p = c->as->plat;
	while (c->nr_rlocked)
		ptl_unlock(p, c->rlocked[--c->nr_rlocked]);
	mmap_read_unlock(p, &c->as->vma.mmap_lock);
}

/* Take away the empty tables a failed lock_page added: made[0..n-1],
 * the chain below the page at level top_L on the page's path. Only a
 * writer removes PT pages, so this takes mmap_lock for writing, finds that
 * page again (the tree may have changed in between) and removes each page
 * of the chain, bottom up, that is still there and still empty. Needs:
 * nothing held. Allocates nothing. */
static void unmake(struct mm_cursor *c, unsigned top_L, struct mm_page *const *made, unsigned n)
{
	struct mm_as *as = c->as;
	const struct pt_arch *a = as->arch;
	mmap_write_lock(as->plat, &as->vma.mmap_lock);
	c->vma_mode = VMA_WRITE;
	struct mm_page *pg = as->plat->page_desc(as->root_pa);
	unsigned L = a->levels;
	uint64_t base = as->root_base;
	while (L > top_L) {
		unsigned i = pt_index(a, c->start, L);
		uint64_t e = ent_load(&pg_ptes(as, pg)[i]);
		if (!is_table(a, e, L))
			break;
		base = entry_base(a, base, L, i);
		pg = child_of(as, e, L);
		L--;
	}
	c->cover = pg;
	c->cover_level = L;
	c->cover_base = base;
	if (L == top_L)
		mm_unsplit_path(c, c->start, made, n);
	mm_cursor_commit(c);
	c->cover = 0;
}

/* Needs: nothing held; [c->start, c->last] is one page. MM_OK with
 * mmap_lock held for reading and the covering page's lock, or MM_ENOMEM
 * (a table on the path could not be had) with nothing held and the tables
 * this call added taken away again (where still empty). */
static int lock_page(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	const struct pt_arch *a = as->arch;
	const struct mm_platform *p = as->plat;
retry:
	mmap_read_lock(p, &as->vma.mmap_lock);
	c->vma_mode = VMA_READ;
	struct mm_page *pg = p->page_desc(as->root_pa);
	struct mm_page *held = 0;       /* pg, once its lock is ours */
	struct mm_page *made[MM_MAX_LEVELS];   /* tables added, top down */
	unsigned L = a->levels, nmade = 0, top_L = 0;
	uint64_t base = as->root_base;
	for (;;) {
		unsigned i = pt_index(a, c->start, L);
		uint64_t e = ent_load(&pg_ptes(as, pg)[i]);
		if (is_table(a, e, L)) {
			if (held)
				ptl_drop(c, held);
			held = 0;
			base = entry_base(a, base, L, i);
			pg = child_of(as, e, L);
			L--;
			continue;
		}
		if (held != pg) {
			if (!ptl_get(c, pg)) {
				drop_read(c);
				goto retry;
			}
			held = pg;
			continue;               /* look at the entry again, locked */
		}
		if (L == 1 || a->present(e))
			break;                  /* pg holds the page's entry */
		if (mm_resv_fill(c, 1)) {
			drop_read(c);
			if (nmade)
				unmake(c, top_L, made, nmade);
			return MM_ENOMEM;
		}
		struct mm_page *ch = mm_split(c, pg, i, entry_base(a, base, L, i), 0, 0, L,
					      false);  /* born locked */
		if (!nmade)
			top_L = L;
		made[nmade++] = ch;
		ptl_drop(c, pg);
		held = pg = ch;
		base = entry_base(a, base, L, i);
		L--;
	}
	c->cover = pg;
	c->cover_level = L;
	c->cover_base = base;
	return MM_OK;
}

static int vma_lock(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	if (c->last - c->start == MM_PAGE_SIZE - 1)
		return lock_page(c);
	mmap_write_lock(as->plat, &as->vma.mmap_lock);
	c->vma_mode = VMA_WRITE;
	c->cover = as->plat->page_desc(as->root_pa);
	c->cover_level = as->arch->levels;
	c->cover_base = as->root_base;
	return MM_OK;
}

/* After the TLB flush: frees VMA slab frames left empty (write access
 * still held), then drops page-table locks and mmap_lock. */
static void vma_unlock(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	if (c->vma_mode != VMA_READ)
		vma_trim(as);
	while (c->nr_rlocked)
		ptl_unlock(as->plat, c->rlocked[--c->nr_rlocked]);
	if (c->vma_mode == VMA_READ)
		mmap_read_unlock(as->plat, &as->vma.mmap_lock);
	else
		mmap_write_unlock(as->plat, &as->vma.mmap_lock);
	c->vma_mode = 0;
}

void vma_write_access(struct mm_cursor *c)
{
	if (c->vma_mode != VMA_READ)
		return;
	mmap_upgrade(c->as->plat, &c->as->vma.mmap_lock);
	c->vma_mode = VMA_UPGRADED;
}

/* A new PT page: a one-page cursor locks it before it is published (other
 * readers may reach it as soon as it is). */
static void vma_born(struct mm_cursor *c, struct mm_page *pg)
{
	if (c->vma_mode == VMA_WRITE)
		return;
	if (c->nr_rlocked == MM_MAX_LEVELS || !ptl_trylock(c->as->plat, pg))
		c->as->plat->panic("vma: cannot lock a new PT page");
	mm_lock_stat(c->as->plat, MM_LK_PTL, 0);
	c->rlocked[c->nr_rlocked++] = pg;
}

/* Only write-mode cursors remove PT pages: an operation on one page never
 * empties a table below the page holding that page's entry. */
static void vma_unlinked(struct mm_cursor *c, struct mm_page *pg)
{
	if (c->vma_mode != VMA_WRITE)
		c->as->plat->panic("vma: a one-page transaction removed a PT page");
	__atomic_fetch_or(&pg->flags, MM_PG_STALE, __ATOMIC_RELEASE);
}

/* After the TLB flush and the unlock: no reader walked the table while
 * the write lock was held, and none can reach it now. */
static void vma_retire(struct mm_as *as, struct mm_page *pg)
{
	mm_pt_free_now(as->plat, pg);
}

const struct mm_protocol mm_proto_vma = {
	.name = "vma", .lock = vma_lock, .unlock = vma_unlock, .born = vma_born,
	.unlinked = vma_unlinked, .retire = vma_retire, .vma = &vma_ops,
};
