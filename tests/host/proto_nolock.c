/* A deliberately broken protocol for the host tests: it takes no lock at
 * all (every cursor covers from the root). mmstress must fail with it;
 * suite 'mm' runs it as an expected failure to show the checks bite. */
#include "host_platform.h"

static int nl_lock(struct mm_cursor *c)
{
	c->cover = c->as->plat->page_desc(c->as->root_pa);
	c->cover_level = c->as->arch->levels;
	c->cover_base = 0;
	return MM_OK;
}

static void nl_unlock(struct mm_cursor *c) { (void)c; }
static void nl_born(struct mm_cursor *c, struct mm_page *pg) { (void)c; (void)pg; }
static void nl_unlinked(struct mm_cursor *c, struct mm_page *pg) { (void)c; (void)pg; }

/* Freed through RCU like adv, so the run fails on its checks rather than
 * on a use-after-free of PT memory. */
static void nl_free(struct mm_rcu_head *h)
{
	struct mm_page *pg = (struct mm_page *)((char *)h - __builtin_offsetof(struct mm_page, rcu));
	if (pg->meta_pa)
		pg->plat->pt_free(pg->meta_pa);
	pg->meta_pa = 0;
	pg->level = 0;
	__atomic_store_n(&pg->flags, 0, __ATOMIC_RELEASE);
	pg->plat->pt_free(pg->pa);
}

static void nl_retire(struct mm_as *as, struct mm_page *pg)
{
	pg->plat = as->plat;
	as->plat->rcu_defer(&pg->rcu, nl_free);
}

const struct mm_protocol host_proto_nolock = {
	.name = "nolock", .lock = nl_lock, .unlock = nl_unlock, .born = nl_born,
	.unlinked = nl_unlinked, .retire = nl_retire,
};
