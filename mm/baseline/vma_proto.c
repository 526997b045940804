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

/* Needs: mmap_lock held for reading (by this cursor, nothing else held);
 * [c->start, c->last] is one page. Keeps mmap_lock and takes the split lock of the deepest PT page on the page's
 * path that exists: the page holding the page's entry, or the one whose
 * entry for it is empty (or a huge leaf). Adds no table: an operation that
 * needs one below (a map of a page never touched) makes it there, under
 * that lock, as Linux's __pte_alloc does under the level above, and the
 * new table is locked at birth (vma_born). Cannot fail. */
static void lock_page(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	const struct pt_arch *a = as->arch;
	const struct mm_platform *p = as->plat;
	c->vma_mode = VMA_READ;
	goto start;
retry:
	mmap_read_lock(p, &as->vma.mmap_lock);
start:;
	struct mm_page *pg = p->page_desc(as->root_pa);
	struct mm_page *held = 0;       /* pg, once its lock is ours */
	unsigned L = a->levels;
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
		if (held == pg)
			break;                  /* pg holds the page's entry, or ends its path */
		if (!ptl_get(c, pg)) {
			drop_read(c);
			goto retry;
		}
		held = pg;                      /* look at the entry again, locked */
	}
	c->cover = pg;
	c->cover_level = L;
	c->cover_base = base;
}

/* One page in a VMA (a fault, or a change of a page already mapped or
 * reserved): mmap_lock for reading and the page's PT lock (lock_page);
 * an operation that changes the VMA tree upgrades. One page outside every
 * VMA (an mmap of new memory, like Linux's, or a fault with no VMA) and
 * anything wider: mmap_lock for writing, covering from the root, without
 * walking or adding page tables. Which VMA holds the page is looked up
 * under the read lock; with none there the cursor trades it for the write
 * lock (a VMA put there meanwhile is harmless: write mode is exclusive). */
static int vma_lock(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	if (c->last - c->start == MM_PAGE_SIZE - 1) {
		mmap_read_lock(as->plat, &as->vma.mmap_lock);
		struct mm_vma *v = vma_first(as->vma.root, c->start);
		if (v && v->start <= c->start) {
			lock_page(c);
			return MM_OK;
		}
		mmap_read_unlock(as->plat, &as->vma.mmap_lock);
	}
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

/* Only cursors holding mmap_lock for writing remove PT pages (no reader
 * walks while it is held): a one-page cursor removes only tables it made
 * below its covering page, and every operation that can empty one (unmap,
 * take) changes the VMA tree, so it has upgraded first. */
static void vma_unlinked(struct mm_cursor *c, struct mm_page *pg)
{
	if (c->vma_mode == VMA_READ)
		c->as->plat->panic("vma: a one-page transaction removed a PT page");
	__atomic_fetch_or(&pg->flags, MM_PG_STALE, __ATOMIC_RELEASE);
}

/* After the TLB flush and the unlock: no reader walked the table while
 * the write lock was held (an upgraded cursor's too), and none can reach
 * it now. */
static void vma_retire(struct mm_as *as, struct mm_page *pg)
{
	mm_pt_free_now(as->plat, pg);
}

const struct mm_protocol mm_proto_vma = {
	.name = "vma", .lock = vma_lock, .unlock = vma_unlock, .born = vma_born,
	.unlinked = vma_unlinked, .retire = vma_retire, .vma = &vma_ops,
};
