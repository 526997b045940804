/* Memory for VMA nodes: per address space, 4 KiB slab frames drawn like PT
 * pages (the cursor's reservation: pool or pt_alloc, charged through
 * frames_charge, counted in as->nr_frames). Free nodes of all frames sit on
 * one list; a frame with no node in use goes back to the platform at the
 * end of the transaction (vma_trim), after an RCU grace period: lookups
 * without the lock may still be reading its nodes. A node is reused at
 * once, but only as a node (with its reader count kept), so such a lookup
 * never reads anything else; it checks what it found under the VMA's
 * read lock.
 *
 * Needs (all functions): write access to the address space's VMA tree
 * (mmap_lock held for writing, VMA_WRITE or VMA_UPGRADED). */
#include "vma.h"

static struct mm_vma_slab *slab_of(const struct mm_vma *v)
{
	return (struct mm_vma_slab *)((uintptr_t)v & ~(uintptr_t)(MM_PAGE_SIZE - 1));
}

/* Turn the reserved frame pa into a slab frame of free nodes. */
static void slab_add(struct mm_cursor *c, uint64_t pa)
{
	struct mm_as *as = c->as;
	struct mm_vma_space *s = &as->vma;
	struct mm_vma_slab *sl = as->plat->phys_to_virt(pa);
	if ((uintptr_t)sl & (MM_PAGE_SIZE - 1))
		as->plat->panic("vma: phys_to_virt gave an unaligned frame");
	sl->pa = pa;
	sl->used = 0;
	sl->next = s->slabs;
	s->slabs = sl;
	struct mm_vma *v = (struct mm_vma *)(sl + 1);
	for (unsigned i = 0; i < VMA_PER_SLAB; i++) {
		v[i].child[0] = s->free;
		s->free = &v[i];
	}
	s->nr_free += VMA_PER_SLAB;
	s->nr_slabs++;
	s->nr_empty++;
	__atomic_fetch_add(&as->nr_frames, 1, __ATOMIC_RELAXED);
	mm_resv_used(c);
}

int vma_reserve(struct mm_cursor *c, unsigned n)
{
	while (c->as->vma.nr_free < n) {
		int err = mm_resv_fill(c, 1);   /* a frame holds VMA_PER_SLAB nodes */
		if (err) {
			mm_resv_return(c);
			return err;
		}
		slab_add(c, mm_resv_pop(c));
	}
	return MM_OK;
}

struct mm_vma *vma_alloc(struct mm_as *as)
{
	struct mm_vma_space *s = &as->vma;
	struct mm_vma *v = s->free;
	if (!v)
		as->plat->panic("vma: node reservation miscounted");
	s->free = v->child[0];
	s->nr_free--;
	s->nr_vmas++;
	struct mm_vma_slab *sl = slab_of(v);
	if (sl->used++ == 0)
		s->nr_empty--;
	/* write-locked by its maker until the write lock goes */
	/* Lookups under RCU may still read this node's bounds and links:
	 * those are stored atomically; readers stays (kept across reuse). */
	vma_set_start(v, 0);
	vma_set_last(v, 0);
	__atomic_store_n(&v->child[0], NULL, __ATOMIC_RELAXED);
	__atomic_store_n(&v->child[1], NULL, __ATOMIC_RELAXED);
	v->status = 0;
	v->height = 0;
	__atomic_store_n(&v->wseq, s->wseq, __ATOMIC_SEQ_CST);
	return v;
}

void vma_free(struct mm_as *as, struct mm_vma *v)
{
	struct mm_vma_space *s = &as->vma;
	struct mm_vma_slab *sl = slab_of(v);
	/* an empty range: a lookup that still finds it never takes it */
	__atomic_store_n(&v->start, ~0ull, __ATOMIC_RELAXED);
	__atomic_store_n(&v->last, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&v->child[1], 0, __ATOMIC_RELAXED);
	__atomic_store_n(&v->child[0], s->free, __ATOMIC_RELAXED);
	s->free = v;
	s->nr_free++;
	s->nr_vmas--;
	if (--sl->used == 0)
		s->nr_empty++;
}

/* A grace period after vma_trim dropped the frame: no lookup is left. */
static void slab_free_rcu(struct mm_rcu_head *h)
{
	struct mm_page *pg = (struct mm_page *)((char *)h - __builtin_offsetof(struct mm_page, rcu));
	const struct mm_platform *p = pg->plat;
	uint64_t pa = pg->pa;
	pg->pa = 0;
	pg->plat = 0;
	p->pt_free(pa);
}

void vma_trim(struct mm_as *as)
{
	struct mm_vma_space *s = &as->vma;
	if (!s->nr_empty)
		return;
	/* Drop the empty frames' nodes from the free list, then the frames. */
	struct mm_vma **pv = &s->free;
	while (*pv) {
		if (slab_of(*pv)->used == 0) {
			*pv = (*pv)->child[0];
			s->nr_free--;
		} else {
			pv = &(*pv)->child[0];
		}
	}
	struct mm_vma_slab **ps = &s->slabs;
	while (*ps) {
		struct mm_vma_slab *sl = *ps;
		if (sl->used) {
			ps = &sl->next;
			continue;
		}
		*ps = sl->next;
		s->nr_slabs--;
		__atomic_fetch_sub(&as->nr_frames, 1, __ATOMIC_RELAXED);
		struct mm_page *pg = as->plat->page_desc(sl->pa);
		pg->pa = sl->pa;
		pg->plat = as->plat;
		as->plat->rcu_defer(&pg->rcu, slab_free_rcu);
	}
	s->nr_empty = 0;
}
