/* Well-formedness of a baseline address space (mm_wf_check for protocol
 * "vma"): the VMA tree, its node memory, and the page table, which under
 * this protocol holds no status for a page that is not present.
 * Needs: exclusive use (no live cursor). */
#include "vma.h"

struct vwf {
	struct mm_as *as;
	const struct mm_vma *prev;   /* in-order predecessor */
	uint32_t count;
	const char *why;
};

static bool valid_status(uint64_t st)
{
	unsigned k = meta_kind(st);
	return (k == MM_RESERVED || k == MM_SWAPPED || k == MM_PAGER) &&
	       meta_make(k, meta_prot(st), meta_dev(st), meta_arg(st)) == st;
}

/* The checks on one VMA, visited in address order. */
static const char *check_vma(struct vwf *w, const struct mm_vma *v)
{
	if (v->start > v->last || (v->start & (MM_PAGE_SIZE - 1)) ||
	    ((v->last + 1) & (MM_PAGE_SIZE - 1)))
		return "VMA empty or not page aligned";
	if (v->start < w->as->lo || v->last > w->as->last)
		return "VMA outside the address space";
	if (!valid_status(v->status))
		return "VMA with a status mark cannot give";
	if (w->prev && w->prev->last >= v->start)
		return "VMAs overlap or are out of order";
	if (w->prev && w->prev->last + 1 == v->start && w->prev->status == v->status)
		return "touching VMAs with the same status not merged";
	return 0;
}

/* Check the subtree at v; its height, or -1 with w->why set. */
static int check_tree(struct vwf *w, const struct mm_vma *v)
{
	if (!v)
		return 0;
	int hl = check_tree(w, v->child[0]);
	if (hl < 0)
		return -1;
	w->why = check_vma(w, v);
	if (w->why)
		return -1;
	w->prev = v;
	w->count++;
	int hr = check_tree(w, v->child[1]);
	if (hr < 0)
		return -1;
	if (hl - hr > 1 || hr - hl > 1)
		w->why = "VMA tree not balanced";
	else if (v->height != (uint32_t)(1 + (hl > hr ? hl : hr)))
		w->why = "VMA tree height wrong";
	return w->why ? -1 : (int)v->height;
}

/* Node memory: counts agree, no frame kept empty. */
static const char *check_slabs(const struct mm_vma_space *s)
{
	uint32_t frames = 0, used = 0, free = 0;
	for (const struct mm_vma_slab *sl = s->slabs; sl; sl = sl->next) {
		if (!sl->used)
			return "empty VMA slab frame kept";
		frames++;
		used += sl->used;
	}
	for (const struct mm_vma *v = s->free; v; v = v->child[0])
		free++;
	if (frames != s->nr_slabs || used != s->nr_vmas || free != s->nr_free || s->nr_empty ||
	    free + used != frames * VMA_PER_SLAB)
		return "VMA slab counts disagree";
	return 0;
}

int vma_wf_check(struct mm_as *as, const char **why)
{
	struct vwf w = { .as = as };
	if (as->vma.mmap_lock.v)
		w.why = "mmap_lock still held";
	else if (check_tree(&w, as->vma.root) >= 0 && w.count != as->vma.nr_vmas)
		w.why = "VMA count differs from the tree";
	if (!w.why)
		w.why = check_slabs(&as->vma);
	if (!w.why && mm_wf_tree(as, as->vma.nr_slabs, &w.why) == MM_OK) {
		struct mm_stats st;
		mm_as_stats(as, &st);
		if (st.statuses)
			w.why = "a status in the page table (the baseline keeps them in VMAs)";
	}
	if (why)
		*why = w.why;
	return w.why ? MM_EINVAL : MM_OK;
}
