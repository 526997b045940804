/* mm_leaves: one walk over the mapped and COW leaves of a range, for
 * callers that want the residency and accessed/dirty state of thousands of
 * pages at once (a pager's bitmap query) without a query from the root per
 * page. Reads only; contract in cortenmm/cursor.h.
 *
 * Needs (all functions): the cursor holds its range (mm_lock). The walk
 * reads the page table alone, which every protocol keeps for mapped and
 * COW pages (the vma baseline keeps only statuses elsewhere). */
#include "internal.h"

struct walk {
	mm_leaf_fn *fn;
	void *arg;
	uint64_t skipped;
	struct mm_leaf run;     /* leaves met but not reported yet (run.level 0: none) */
};

/* Report leaf l, merged into the run before it when it continues it (the
 * next page, same level, kind and bits): a range of 4 KiB pages with the
 * same state costs the caller one call, not one per page. */
static void leaf_met(struct walk *w, const struct mm_leaf *l)
{
	struct mm_leaf *r = &w->run;
	if (r->level && r->last + 1 == l->lo && r->level == l->level && r->kind == l->kind &&
	    r->accessed == l->accessed && r->dirty == l->dirty) {
		r->last = l->last;
		return;
	}
	if (r->level)
		w->fn(w->arg, r);
	*r = *l;
}

/* Visit the leaves below pg (level L, first entry at base) that meet
 * [lo, hi] (inclusive, inside pg's span), in address order. Empty
 * subtrees are passed over as mm_next_used does: an empty entry above the
 * leaf level, a child whose live-entry count is 0, and the rest of a page
 * once its live-entry count is used up. */
static void leaves(struct mm_cursor *c, struct walk *w, struct mm_page *pg, unsigned L,
		   uint64_t base, uint64_t lo, uint64_t hi)
{
	const struct pt_arch *a = c->as->arch;
	uint64_t sz = span_of(a, L);
	unsigned i0 = pt_index(a, lo, L), i1 = pt_index(a, hi, L);
	/* From entry 0 on, nr_live says when the rest of the page is empty. */
	unsigned left = i0 == 0 ? pg->nr_live : ~0u;
	const uint64_t *pt = pg_ptes(c->as, pg), *meta = pg_meta(c->as, pg);
	for (unsigned i = i0; i <= i1; i++) {
		if (left == 0) {
			w->skipped++;
			return;
		}
		uint64_t e = ent_load(&pt[i]);
		uint64_t m = meta ? meta[i] : 0;
		if (!a->present(e)) {
			bool st = m || e;   /* a status, in the array or in the entry */
			left -= st;
			w->skipped += L > 1 && !st;
			continue;
		}
		left--;
		uint64_t eb = entry_base(a, base, L, i), el = eb + sz - 1;
		uint64_t slo = lo > eb ? lo : eb, shi = hi < el ? hi : el;
		if (L > 1 && !a->is_leaf(e, L)) {
			struct mm_page *ch = child_of(c->as, e, L);
			if (ch->nr_live == 0)
				w->skipped++;
			else
				leaves(c, w, ch, L - 1, eb, slo, shi);
			continue;
		}
		struct mm_leaf lf = { .lo = slo, .last = shi, .level = L,
				      .kind = meta_kind(m ? m : ent_status(c->as, pg, i, e)) == MM_COW ?
					      MM_COW : MM_MAPPED,
				      .accessed = a->accessed(e, L), .dirty = a->dirty(e, L) };
		leaf_met(w, &lf);
	}
}

int mm_leaves(struct mm_cursor *c, uint64_t va, uint64_t len, mm_leaf_fn *fn, void *arg,
	      uint64_t *skipped)
{
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	struct walk w = { .fn = fn, .arg = arg };
	leaves(c, &w, c->cover, c->cover_level, c->cover_base, va, va + len - 1);
	if (w.run.level)
		fn(arg, &w.run);
	if (skipped)
		*skipped += w.skipped;
	return MM_OK;
}
