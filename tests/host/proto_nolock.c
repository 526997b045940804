/* A deliberately broken protocol for the host tests: it takes no lock at
 * all (every cursor covers from the root). mmstress must fail with it;
 * suite 'mm' runs it as an expected failure to show the checks bite. */
#include "host_platform.h"

static int nl_lock(struct mm_cursor *c)
{
	c->cover = c->as->plat->page_desc(c->as->root_pa);
	c->cover_level = c->as->arch->levels;
	c->cover_base = c->as->root_base;
	return MM_OK;
}

static void nl_unlock(struct mm_cursor *c) { (void)c; }
static void nl_born(struct mm_cursor *c, struct mm_page *pg) { (void)c; (void)pg; }
static void nl_unlinked(struct mm_cursor *c, struct mm_page *pg) { (void)c; (void)pg; }

/* PT pages are freed through RCU like adv's (mm_pt_retire_rcu), so the run
 * fails on its checks rather than on a use-after-free of PT memory. */
const struct mm_protocol host_proto_nolock = {
	.name = "nolock", .lock = nl_lock, .unlock = nl_unlock, .born = nl_born,
	.unlinked = nl_unlinked, .retire = mm_pt_retire_rcu,
};
