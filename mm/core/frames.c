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

unsigned long mm_txn_overdraws;

/* A zeroed frame: this hart's pool first, then the allocator. MM_NOFRAME
 * when there is none. */
static uint64_t frame_draw(const struct mm_platform *p)
{
	uint64_t pa = MM_NOFRAME;
	struct mm_pool *pool = pool_get(p);
	if (pool) {
		if (pool->n)
			pa = pool->pa[--pool->n];
		pool_put(p);
	}
	if (pa == MM_NOFRAME) {
		pa = p->pt_alloc();
		if (pa != MM_NOFRAME)
			mm_zero_frame(p, pa);
	}
	return pa;
}

/* Give a frame back: to this hart's pool if it has room, else freed. */
static void frame_return(const struct mm_platform *p, uint64_t pa)
{
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

/* Take a frame off the transaction's reservation (c->txn_frames > 0),
 * zeroed again: its first word held the link. */
static uint64_t txn_pop(struct mm_cursor *c)
{
	uint64_t pa = c->txn_list;
	uint64_t *w = (uint64_t *)c->as->plat->phys_to_virt(pa);
	c->txn_list = w[0];
	w[0] = 0;
	c->txn_frames--;
	return pa;
}

/* Move frames (and as many of their charges) from the transaction's
 * reservation into the operation's, up to n in all. */
static void resv_from_txn(struct mm_cursor *c, unsigned n)
{
	while (c->nr_resv < n && c->txn_frames) {
		c->resv[c->nr_resv++] = txn_pop(c);
		if (c->txn_charged) {
			c->txn_charged--;
			c->nr_charged++;
		}
	}
	if (c->nr_resv < n && c->keep_tables)
		__atomic_add_fetch(&mm_txn_overdraws, 1, __ATOMIC_RELAXED);
}

int mm_resv_fill(struct mm_cursor *c, unsigned n)
{
	const struct mm_platform *p = c->as->plat;
	if (n > MM_CURSOR_RESV)
		p->panic("mm: reservation larger than MM_CURSOR_RESV");
	if (c->keep_tables)
		resv_from_txn(c, n);
	if (c->nr_resv < n && p->frames_charge) {
		unsigned more = n - c->nr_resv;
		if (p->frames_charge(c->as, more))
			return MM_ENOMEM;
		c->nr_charged += more;
	}
	while (c->nr_resv < n) {
		uint64_t pa = frame_draw(p);
		if (pa == MM_NOFRAME)
			return MM_ENOMEM;
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
	while (c->nr_resv)
		frame_return(p, c->resv[--c->nr_resv]);
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

void mm_txn_begin(struct mm_cursor *c)
{
	c->keep_tables = true;
	c->txn_nodes = 0;
}

int mm_txn_reserve(struct mm_cursor *c, unsigned frames)
{
	const struct mm_platform *p = c->as->plat;
	if (c->as->proto->reserve_nodes && c->txn_nodes) {
		/* Nodes first, drawn as a lone operation's reservation. */
		c->keep_tables = false;
		int err = c->as->proto->reserve_nodes(c, c->txn_nodes);
		c->keep_tables = true;
		if (err) {
			mm_txn_finish(c);
			return err;
		}
	}
	if (frames && p->frames_charge) {
		if (p->frames_charge(c->as, frames)) {
			mm_txn_finish(c);
			return MM_ENOMEM;
		}
		c->txn_charged += frames;
	}
	for (unsigned want = c->txn_frames + frames; c->txn_frames < want; ) {
		uint64_t pa = frame_draw(p);
		if (pa == MM_NOFRAME) {
			mm_txn_finish(c);
			return MM_ENOMEM;
		}
		*(uint64_t *)p->phys_to_virt(pa) = c->txn_list;
		c->txn_list = pa;
		c->txn_frames++;
	}
	return MM_OK;
}

void mm_txn_finish(struct mm_cursor *c)
{
	const struct mm_platform *p = c->as->plat;
	if (c->keep_tables) {
		c->keep_tables = false;
		/* A protocol may keep tables (the baseline, where VMAs lie,
		 * and only its write-mode cursors may remove them). */
		if (!c->as->proto->keeps_tables)
			mm_prune(c);
	}
	while (c->txn_frames)
		frame_return(p, txn_pop(c));
	if (c->txn_charged && p->frames_uncharge)
		p->frames_uncharge(c->as, c->txn_charged);
	c->txn_charged = 0;
}
