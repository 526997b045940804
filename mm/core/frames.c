/* Frames for PT pages and metadata arrays: the per-hart pool of zeroed
 * frames, the per-operation reservation, PT-page descriptors. */
#include "internal.h"

void mm_zero_frame(const struct mm_platform *p, uint64_t pa)
{
	uint64_t *w = (uint64_t *)p->phys_to_virt(pa);
	for (unsigned i = 0; i < MM_PAGE_SIZE / 8; i++)
		w[i] = 0;
}

static struct mm_pool *pool_get(const struct mm_platform *p)
{
	if (p->preempt_disable)
		p->preempt_disable();
	struct mm_pool *pool = p->pool ? p->pool() : 0;
	if (!pool && p->preempt_enable)
		p->preempt_enable();
	return pool;
}

static void pool_put(const struct mm_platform *p)
{
	if (p->preempt_enable)
		p->preempt_enable();
}

/* Needs: no core lock held (allocation and zeroing happen here). */
void mm_pool_refill(const struct mm_platform *p, unsigned want)
{
	if (want > MM_POOL_SIZE)
		want = MM_POOL_SIZE;
	for (;;) {
		struct mm_pool *pool = pool_get(p);
		if (!pool)
			return;
		bool full = pool->n >= want;
		pool_put(p);
		if (full)
			return;
		uint64_t pa = p->pt_alloc();
		if (pa == MM_NOFRAME)
			return;
		mm_zero_frame(p, pa);
		pool = pool_get(p);
		if (pool && pool->n < MM_POOL_SIZE) {
			pool->pa[pool->n++] = pa;
			pa = MM_NOFRAME;
		}
		if (pool)
			pool_put(p);
		if (pa != MM_NOFRAME) {   /* hart changed and that pool is full */
			p->pt_free(pa);
			return;
		}
	}
}

int mm_resv_fill(struct mm_cursor *c, unsigned n)
{
	const struct mm_platform *p = c->as->plat;
	if (n > MM_CURSOR_RESV)
		p->panic("mm: reservation larger than MM_CURSOR_RESV");
	if (c->nr_resv < n && p->frames_charge) {
		unsigned more = n - c->nr_resv;
		if (p->frames_charge(c->as, more))
			return MM_ENOMEM;
		c->nr_charged += more;
	}
	while (c->nr_resv < n) {
		uint64_t pa = MM_NOFRAME;
		struct mm_pool *pool = pool_get(p);
		if (pool) {
			if (pool->n)
				pa = pool->pa[--pool->n];
			pool_put(p);
		}
		if (pa == MM_NOFRAME) {
			pa = p->pt_alloc();
			if (pa == MM_NOFRAME)
				return MM_ENOMEM;
			mm_zero_frame(p, pa);
		}
		c->resv[c->nr_resv++] = pa;
	}
	return MM_OK;
}

uint64_t mm_resv_pop(struct mm_cursor *c)
{
	if (!c->nr_resv)
		c->as->plat->panic("mm: reservation miscounted");
	return c->resv[--c->nr_resv];
}

void mm_resv_used(struct mm_cursor *c)
{
	const struct mm_platform *p = c->as->plat;
	if (c->nr_charged) {
		c->nr_charged--;
		if (p->frames_uncharge)
			p->frames_uncharge(c->as, 1);
	}
}

void mm_resv_return(struct mm_cursor *c)
{
	const struct mm_platform *p = c->as->plat;
	if (c->nr_charged && p->frames_uncharge)
		p->frames_uncharge(c->as, c->nr_charged);
	c->nr_charged = 0;
	while (c->nr_resv) {
		uint64_t pa = c->resv[--c->nr_resv];
		struct mm_pool *pool = pool_get(p);
		if (pool) {
			if (pool->n < MM_POOL_SIZE) {
				pool->pa[pool->n++] = pa;
				pa = MM_NOFRAME;
			}
			pool_put(p);
		}
		if (pa != MM_NOFRAME)
			p->pt_free(pa);
	}
}

struct mm_page *mm_pt_init(struct mm_as *as, uint64_t pa, unsigned level)
{
	struct mm_page *pg = as->plat->page_desc(pa);
	pg->lock.v = 0;
	pg->level = (uint16_t)level;
	pg->nr_live = 0;
	pg->pa = pa;
	pg->meta_pa = 0;
	pg->next = 0;
	pg->wf_mark = 0;
	__atomic_store_n(&pg->flags, MM_PG_PT, __ATOMIC_RELEASE);
	__atomic_fetch_add(&as->nr_frames, 1, __ATOMIC_RELAXED);
	return pg;
}

void mm_pt_free_now(const struct mm_platform *p, struct mm_page *pg)
{
	if (pg->meta_pa)
		p->pt_free(pg->meta_pa);
	pg->meta_pa = 0;
	pg->level = 0;
	__atomic_store_n(&pg->flags, 0, __ATOMIC_RELEASE);
	p->pt_free(pg->pa);
}
