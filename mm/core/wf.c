/* Well-formedness of a page-table tree (docs/architecture.md section 6).
 * Run with the address space quiescent (no live cursor, RCU drained or not:
 * stale pages are unreachable either way). */
#include "internal.h"

static uint32_t wf_stamp;

struct wf {
	struct mm_as *as;
	uint32_t stamp;
	uint64_t frames;
	const char *why;
};

static bool bad(struct wf *w, const char *why)
{
	if (!w->why)
		w->why = why;
	return false;
}

/* Check pg (at level L) and everything below it; only entries of the root
 * inside [as->lo, as->last] are followed (the rest is shared or unused). */
static bool wf_page(struct wf *w, struct mm_page *pg, unsigned L, bool is_root)
{
	struct mm_as *as = w->as;
	const struct pt_arch *a = as->arch;
	if (!(pg->flags & MM_PG_PT) || pg->level != L)
		return bad(w, "PT page descriptor has wrong level or is not a PT page");
	if (pg->flags & MM_PG_STALE)
		return bad(w, "stale PT page reachable");
	if (pg->lock.v)
		return bad(w, "PT page still locked");
	if (pg->wf_mark == w->stamp)
		return bad(w, "PT page reachable twice");
	pg->wf_mark = w->stamp;
	w->frames += pg->meta_pa ? 2 : 1;
	uint64_t *pt = pg_ptes(as, pg);
	unsigned live = 0, i0 = 0, i1 = pt_entries(a) - 1;
	if (is_root) {
		i0 = pt_index(a, as->lo, L);
		i1 = pt_index(a, as->last, L);
	}
	uint64_t *arr = pg_meta(as, pg);
	for (unsigned i = 0; i < pt_entries(a); i++) {
		uint64_t e = ent_load(&pt[i]);
		uint64_t m = ent_status(as, pg, i, e), raw;
		if (a->present(e) || m)
			live++;
		if (i < i0 || i > i1)
			continue;
		if (!a->present(e)) {
			/* Each status in one place: in the entry, exactly as the
			 * table encodes it, or in the array where it cannot be. */
			bool in_arr = arr && arr[i];
			if (in_arr && e)
				return bad(w, "status both in the entry and in the metadata array");
			if (!in_arr && e && (!m || !a->status_encode(m, &raw) || raw != e))
				return bad(w, "non-present entry with stray bits");
			if (in_arr && !meta_in_array(a, 0, L, m, &raw))
				return bad(w, "metadata array holds a status its entry could");
			unsigned k = meta_kind(m);
			if (m && k != MM_RESERVED && k != MM_SWAPPED && k != MM_PAGER)
				return bad(w, "non-present entry with a mapped/COW status");
			continue;
		}
		if (is_table(a, e, L)) {
			if (m)
				return bad(w, "table entry with a status");
			if (!wf_page(w, child_of(as, e, L), L - 1, false))
				return false;
			continue;
		}
		if (!pt_leaf_ok(a, L))
			return bad(w, "leaf at a level the arch does not allow");
		if (a->addr(e, L) & (span_of(a, L) - 1))
			return bad(w, "leaf address not aligned to its page size");
		if (!(a->prot(e, L) & MM_PROT_R))
			return bad(w, "leaf without read permission");
		/* As for non-present entries: the leaf's own bits hold its
		 * status exactly as the table encodes it, or the array holds
		 * what they cannot, and then the bits are clear. */
		bool need = meta_in_array(a, e, L, m, &raw);
		if (arr && arr[i] && (!need || (e & a->leaf_status_bits)))
			return bad(w, "leaf status in the metadata array that the leaf could hold");
		if (!(arr && arr[i]) && (need || raw != e))
			return bad(w, "leaf with stray status bits");
		if (m && meta_kind(m) == MM_COW) {
			if (a->prot(e, L) & MM_PROT_W)
				return bad(w, "COW leaf is writable");
			if (meta_dev(m) & ~MM_MAP_NOSHARE || meta_arg(m))
				return bad(w, "COW leaf with stray status bits");
		} else if (m) {
			if (meta_kind(m) != MM_MAPPED || meta_prot(m) || meta_arg(m) ||
			    !meta_dev(m) || (meta_dev(m) & ~MM_MAP_LIMITS))
				return bad(w, "present leaf with a status that is neither COW nor limits");
			if ((meta_dev(m) & MM_MAP_NOWRITE) && (a->prot(e, L) & MM_PROT_W))
				return bad(w, "writable leaf of a read-only grant");
		}
	}
	if (live != pg->nr_live)
		return bad(w, "nr_live does not match the entries");
	return true;
}

int mm_wf_check(struct mm_as *as, const char **why)
{
	if (as->proto->wf_check)
		return as->proto->wf_check(as, why);
	return mm_wf_tree(as, 0, why);
}

int mm_wf_tree(struct mm_as *as, uint64_t extra_frames, const char **why)
{
	struct wf w = { .as = as, .frames = extra_frames };
	w.stamp = __atomic_add_fetch(&wf_stamp, 1, __ATOMIC_RELAXED);
	if (!w.stamp)   /* 0 means "never visited" */
		w.stamp = __atomic_add_fetch(&wf_stamp, 1, __ATOMIC_RELAXED);
	bool ok = wf_page(&w, as->plat->page_desc(as->root_pa), as->arch->levels, true);
	if (ok && w.frames != __atomic_load_n(&as->nr_frames, __ATOMIC_RELAXED))
		ok = bad(&w, "PT/metadata frame count differs from the pages reachable (leak)");
	if (why)
		*why = ok ? 0 : w.why;
	return ok ? MM_OK : MM_EINVAL;
}

static void stats_page(struct mm_as *as, struct mm_page *pg, unsigned L, bool is_root, struct mm_stats *st)
{
	const struct pt_arch *a = as->arch;
	uint64_t *pt = pg_ptes(as, pg);
	unsigned i0 = 0, i1 = pt_entries(a) - 1;
	if (is_root) {
		i0 = pt_index(a, as->lo, L);
		i1 = pt_index(a, as->last, L);
	}
	st->pt_pages++;
	st->meta_arrays += pg->meta_pa ? 1 : 0;
	for (unsigned i = i0; i <= i1; i++) {
		uint64_t e = ent_load(&pt[i]);
		if (is_table(a, e, L))
			stats_page(as, child_of(as, e, L), L - 1, false, st);
		else if (a->present(e))
			st->leaves++;
		else if (slot_meta(as, pg, i))
			st->statuses++;
	}
}

void mm_as_stats(struct mm_as *as, struct mm_stats *st)
{
	*st = (struct mm_stats){ .vmas = as->vma.nr_vmas, .vma_frames = as->vma.nr_slabs };
	stats_page(as, as->plat->page_desc(as->root_pa), as->arch->levels, true, st);
}
