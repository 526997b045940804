/* The baseline's locking protocol (struct mm_protocol "vma"): how a cursor
 * takes and drops its range. The lock rules are in vma.h.
 *  - More than one page (VMA_WRITE): mmap_lock for writing, the VMAs over
 *    and next to the range write-locked with their readers gone, the PT
 *    locks of the paths to both ends; the cursor covers from the root.
 *  - One page: its VMA for reading, found without a lock (VMA_VREAD), or
 *    mmap_lock for reading when that VMA is being changed (VMA_READ), or
 *    for writing when no VMA holds the page (VMA_PAGEW); then the lock of
 *    the deepest PT page on the page's path, which covers it. */
#include "vma.h"

static void ptl_hold(struct mm_cursor *c, struct mm_page *pg)
{
	if (c->vma_nr_ptl == sizeof c->vma_ptl / sizeof c->vma_ptl[0])
		c->as->plat->panic("vma: too many page-table locks");
	c->vma_ptl[c->vma_nr_ptl++] = pg;
}

static bool ptl_held(const struct mm_cursor *c, const struct mm_page *pg)
{
	for (unsigned i = 0; i < c->vma_nr_ptl; i++)
		if (c->vma_ptl[i] == pg)
			return true;
	return false;
}

/* Forget and unlock pg, one of the page-table locks the cursor holds. */
static void ptl_drop(struct mm_cursor *c, struct mm_page *pg)
{
	for (unsigned i = 0; i < c->vma_nr_ptl; i++) {
		if (c->vma_ptl[i] != pg)
			continue;
		c->vma_ptl[i] = c->vma_ptl[--c->vma_nr_ptl];
		ptl_unlock(c->as->plat, pg);
		return;
	}
	c->as->plat->panic("vma: dropping a page-table lock the cursor does not hold");
}

/* Unlock every PT page the cursor holds, the ones it made included. */
static void ptl_drop_all(struct mm_cursor *c)
{
	const struct mm_platform *p = c->as->plat;
	while (c->vma_nr_ptl)
		ptl_unlock(p, c->vma_ptl[--c->vma_nr_ptl]);
	while (c->vma_born) {
		struct mm_page *pg = c->vma_born;
		c->vma_born = (struct mm_page *)pg->rcu.next;
		pg->rcu.next = 0;
		ptl_unlock(p, pg);
	}
}

static bool vma_write_locked(const struct mm_as *as, const struct mm_vma *v)
{
	return __atomic_load_n(&v->wseq, __ATOMIC_SEQ_CST) ==
	       __atomic_load_n(&as->vma.wseq, __ATOMIC_SEQ_CST);
}

/* Needs: an RCU read-side section, v found in it. Take v for reading if no
 * writer holds it and it still holds va (Linux's vma_start_read); false
 * changes nothing. The count goes up first: a writer that write-locks v
 * after that sees it and waits (both sides seq_cst). */
static bool vma_start_read(struct mm_as *as, struct mm_vma *v, uint64_t va)
{
	__atomic_fetch_add(&v->readers, 1, __ATOMIC_SEQ_CST);
	if (!vma_write_locked(as, v) && __atomic_load_n(&v->start, __ATOMIC_RELAXED) <= va &&
	    __atomic_load_n(&v->last, __ATOMIC_RELAXED) >= va)
		return true;
	__atomic_fetch_sub(&v->readers, 1, __ATOMIC_RELEASE);
	return false;
}

static void vma_end_read(struct mm_vma *v)
{
	__atomic_fetch_sub(&v->readers, 1, __ATOMIC_RELEASE);
}

/* Waiting for a PT lock, the cursor must let go when someone who may
 * hold that lock waits for it: a writer waiting for the readers of the
 * VMA it holds (VMA_VREAD), or, for a holder of mmap_lock, an upgrader
 * (who waits for mmap_lock's readers and writer to leave). A VMA reader
 * does not hold off an upgrader, so it keeps waiting then. */
static bool must_yield(const struct mm_cursor *c)
{
	if (c->vma_held)
		return vma_write_locked(c->as, c->vma_held);
	return mmap_upgrade_pending(&c->as->vma.mmap_lock);
}

/* Take pg's page-table lock; false (nothing taken) when the cursor must
 * yield meanwhile: the caller drops everything and starts over. A waiter
 * only reads the lock word until it is free (many one-page cursors over
 * memory never touched share an upper PT page's lock). Only a wait that
 * ends with the lock counts in the lock statistics. */
static bool ptl_get(struct mm_cursor *c, struct mm_page *pg)
{
	const struct mm_platform *p = c->as->plat;
	uint32_t waited = 0;
	while (!ptl_trylock(p, pg)) {
		do {
			if (must_yield(c))
				return false;
			mm_lock_relax(p, &waited);
		} while (__atomic_load_n(&pg->lock.v, __ATOMIC_RELAXED));
	}
	mm_lock_stat(p, MM_LK_PTL, waited);
	ptl_hold(c, pg);
	return true;
}

/* Needs: the VMA or mmap_lock held (c->vma_mode set), an RCU read-side
 * section for VMA_VREAD, no PT lock; [c->start, c->last] is one page.
 * Walk without locks to the deepest PT page on the page's path (the one
 * holding its entry, or the one whose entry for it is empty or a huge
 * leaf) and take its lock; that page covers the cursor. Adds no table.
 * false: the cursor must yield (nothing held but what it held before). */
static bool lock_page(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	const struct pt_arch *a = as->arch;
	struct mm_page *pg = as->plat->page_desc(as->root_pa);
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
			break;
		if (!ptl_get(c, pg))
			return false;
		held = pg;
		if (pg_stale(pg)) {             /* removed meanwhile: from the top */
			ptl_drop(c, pg);
			held = 0;
			pg = as->plat->page_desc(as->root_pa);
			L = a->levels;
			base = as->root_base;
		}
		/* else look at the entry again, locked */
	}
	c->cover = pg;
	c->cover_level = L;
	c->cover_base = base;
	return true;
}

/* Needs: mmap_lock held for writing by c. End the write hold: every VMA
 * write-locked under it is released at once. */
static void write_unlock(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	__atomic_store_n(&as->vma.wseq, as->vma.wseq + 1, __ATOMIC_RELEASE);
	mmap_write_unlock(as->plat, &as->vma.mmap_lock);
}

/* Needs: mmap_lock held for writing. Write-lock every VMA over or next to
 * [lo, hi] and wait for its readers. With backoff (a writer's lock phase)
 * false as soon as an upgrade is pending: the upgrader may be one of
 * those readers, or hold a PT lock one of them waits for. */
static bool claim(struct mm_cursor *c, uint64_t lo, uint64_t hi, bool backoff)
{
	struct mm_as *as = c->as;
	const struct mm_platform *p = as->plat;
	uint32_t seq = as->vma.wseq;
	uint64_t from = lo ? lo - 1 : 0, to = hi + 1 ? hi + 1 : hi;
	for (struct mm_vma *v = vma_first(as->vma.root, from); v && v->start <= to;
	     v = vma_after(as->vma.root, v)) {
		__atomic_store_n(&v->wseq, seq, __ATOMIC_SEQ_CST);
		while (__atomic_load_n(&v->readers, __ATOMIC_SEQ_CST)) {
			if (backoff && mmap_upgrade_pending(&as->vma.mmap_lock))
				return false;
			p->relax();
		}
	}
	return !backoff || !mmap_upgrade_pending(&as->vma.mmap_lock);
}

void vma_claim(struct mm_cursor *c, uint64_t lo, uint64_t hi)
{
	if (c->vma_mode != VMA_WRITE)   /* a wide cursor claimed its range at lock */
		claim(c, lo, hi, false);
}

/* Needs: mmap_lock for writing, nothing else. Lock every PT page on va's
 * path, top down, keeping those already held; false: must yield. */
static bool lock_path(struct mm_cursor *c, uint64_t va)
{
	struct mm_as *as = c->as;
	const struct pt_arch *a = as->arch;
	struct mm_page *pg = as->plat->page_desc(as->root_pa);
	for (unsigned L = a->levels;; L--) {
		if (!ptl_held(c, pg) && !ptl_get(c, pg))
			return false;
		uint64_t e = ent_load(&pg_ptes(as, pg)[pt_index(a, va, L)]);
		if (!is_table(a, e, L))
			return true;
		pg = child_of(as, e, L);
	}
}

/* A wide cursor: everything it shares with faults elsewhere is on the
 * paths to its two ends (a PT page holding a page outside the range holds
 * one of the ends too); inside, no one else can be. */
static void lock_wide(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	for (;;) {
		mmap_write_lock(as->plat, &as->vma.mmap_lock);
		c->vma_mode = VMA_WRITE;
		if (claim(c, c->start, c->last, true) && lock_path(c, c->start) &&
		    lock_path(c, c->last))
			break;
		ptl_drop_all(c);
		write_unlock(c);
	}
	c->cover = as->plat->page_desc(as->root_pa);
	c->cover_level = as->arch->levels;
	c->cover_base = as->root_base;
}

/* How lock_one tries next. */
enum { TRY_RCU, TRY_READ, TRY_WRITE };

/* One page: as in Linux's fault path, the VMA under RCU first; where it
 * is being changed, mmap_lock for reading. No VMA: mmap_lock for writing
 * (a map of new memory changes the tree; a VMA put there meanwhile does
 * no harm, as the write lock excludes every other change). */
static void lock_one(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	const struct mm_platform *p = as->plat;
	mm_lock_t *ml = &as->vma.mmap_lock;
	unsigned how = TRY_RCU;
	for (;;) {
		if (how == TRY_RCU) {
			p->rcu_read_lock();
			struct mm_vma *v = vma_first_rcu(as, c->start);
			bool in = v && __atomic_load_n(&v->start, __ATOMIC_RELAXED) <= c->start;
			if (in && vma_start_read(as, v, c->start)) {
				c->vma_held = v;
				c->vma_mode = VMA_VREAD;
				bool ok = lock_page(c);
				p->rcu_read_unlock();
				if (ok)
					return;
				ptl_drop_all(c);
				vma_end_read(v);
				c->vma_held = 0;
			} else {
				p->rcu_read_unlock();
			}
			how = in ? TRY_READ : TRY_WRITE;
			continue;
		}
		if (how == TRY_READ) {
			mmap_read_lock(p, ml);
			struct mm_vma *v = vma_first(as->vma.root, c->start);
			if (v && v->start <= c->start) {
				c->vma_mode = VMA_READ;
				if (lock_page(c))
					return;
				ptl_drop_all(c);
				mmap_read_unlock(p, ml);
				continue;
			}
			mmap_read_unlock(p, ml);
			how = TRY_WRITE;
		}
		mmap_write_lock(p, ml);
		c->vma_mode = VMA_PAGEW;
		if (lock_page(c))
			return;
		ptl_drop_all(c);
		write_unlock(c);
	}
}

int vma_lock(struct mm_cursor *c)
{
	c->vma_nr_ptl = 0;
	c->vma_born = 0;
	c->vma_held = 0;
	if (c->last - c->start == MM_PAGE_SIZE - 1)
		lock_one(c);
	else
		lock_wide(c);
	return MM_OK;
}

/* After the TLB flush: frees VMA slab frames left empty (write access
 * still held), then drops page-table locks, the VMA and mmap_lock. */
void vma_unlock(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	unsigned m = c->vma_mode;
	if (m != VMA_READ && m != VMA_VREAD)
		vma_trim(as);
	ptl_drop_all(c);
	if (m == VMA_VREAD) {
		vma_end_read(c->vma_held);
		c->vma_held = 0;
	} else if (m == VMA_READ) {
		mmap_read_unlock(as->plat, &as->vma.mmap_lock);
	} else {
		write_unlock(c);
	}
	c->vma_mode = 0;
}

/* A VMA reader announces its upgrade before it stops counting as a
 * reader, so a writer waiting for that count to fall sees the upgrade and
 * backs off. Its page stays its own meanwhile through its PT lock. */
void vma_write_access(struct mm_cursor *c)
{
	struct mm_as *as = c->as;
	if (c->vma_mode == VMA_READ) {
		mmap_upgrade(as->plat, &as->vma.mmap_lock);
	} else if (c->vma_mode == VMA_VREAD) {
		mmap_upgrade_announce(&as->vma.mmap_lock);
		vma_end_read(c->vma_held);
		c->vma_held = 0;
		mm_guard_on(as->plat);          /* as mmap_upgrade's read lock did */
		mmap_upgrade_wait(as->plat, &as->vma.mmap_lock);
	} else {
		return;
	}
	c->vma_mode = VMA_UPGRADED;
}

/* A new PT page, locked before it is published (walkers may reach it as
 * soon as it is). A one-page cursor holds few; a wide one may make many,
 * kept on a list through the descriptor's rcu.next (unused until the page
 * is freed, after the unlock). */
void vma_born(struct mm_cursor *c, struct mm_page *pg)
{
	if (!ptl_trylock(c->as->plat, pg))
		c->as->plat->panic("vma: cannot lock a new PT page");
	mm_lock_stat(c->as->plat, MM_LK_PTL, 0);
	if (c->vma_mode == VMA_WRITE) {
		pg->rcu.next = (struct mm_rcu_head *)c->vma_born;
		c->vma_born = pg;
	} else {
		ptl_hold(c, pg);
	}
}

/* Only cursors holding mmap_lock for writing remove PT pages: a one-page
 * cursor removes only tables it made below its covering page, and every
 * operation that can empty one (unmap, take) changes the VMA tree, so it
 * has upgraded first. VMA readers elsewhere may have reached the page:
 * they find it stale once they lock it. */
void vma_unlinked(struct mm_cursor *c, struct mm_page *pg)
{
	if (c->vma_mode == VMA_READ || c->vma_mode == VMA_VREAD)
		c->as->plat->panic("vma: a one-page transaction removed a PT page");
	__atomic_fetch_or(&pg->flags, MM_PG_STALE, __ATOMIC_RELEASE);
}

