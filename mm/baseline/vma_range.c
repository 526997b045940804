/* Changing the statuses of a range in the VMA tree: set it to one status
 * (mark), punch it out (unmap, take), change permissions (protect). VMAs
 * split where a range cuts them and merge with touching neighbours of the
 * same status, so no two touching VMAs ever have the same status.
 *
 * Every change is planned first on the tree as it is (reading only), to
 * know the nodes it needs; the caller reserves them (vma_reserve), then the
 * apply step cannot fail. Plans read the tree with mmap_lock held (read
 * is enough); applying needs write access. */
#include "vma.h"

#define RWX (MM_PROT_R | MM_PROT_W | MM_PROT_X)

int vma_set_plan(struct mm_as *as, uint64_t lo, uint64_t hi, uint64_t st, struct vma_set_plan *p)
{
	struct mm_vma *root = as->vma.root;
	*p = (struct vma_set_plan){ .lo = lo, .hi = hi, .st = st };
	struct mm_vma *f = vma_first(root, lo);
	if (!st && (!f || f->start > hi))
		return -1;                     /* nothing to punch */
	if (st && f && f->start <= lo && f->last >= hi && f->status == st)
		return -1;                     /* already so */
	struct mm_vma *l = lo ? vma_prev(root, lo) : 0;
	if (l && l->last >= lo - 1)
		p->left = l;
	struct mm_vma *r = hi != ~0ull ? vma_first(root, hi + 1) : 0;
	if (r && r->start <= hi + 1)
		p->right = r;
	p->split = p->left && p->left == p->right;
	if (p->split)
		return st ? 2 : 1;             /* the right piece, and the middle */
	for (struct mm_vma *v = f; v && v->last <= hi; v = vma_after(root, v))
		if (v->start >= lo)
			p->erased++;
	p->merge_left = st && p->left && p->left->status == st;
	p->merge_right = st && p->right && p->right->status == st;
	/* Nodes wholly inside are freed before the middle one is taken. */
	unsigned add = st && !p->merge_left && !p->merge_right;
	return add > p->erased ? 1 : 0;
}

/* A new node [lo, hi] with status st, linked. */
static void add_vma(struct mm_as *as, uint64_t lo, uint64_t hi, uint64_t st)
{
	struct mm_vma *v = vma_alloc(as);
	vma_set_start(v, lo);
	vma_set_last(v, hi);
	v->status = st;
	vma_insert(as, v);
}

static void drop_vma(struct mm_as *as, struct mm_vma *v)
{
	vma_erase(as, v);
	vma_free(as, v);
}

void vma_set_apply(struct mm_as *as, const struct vma_set_plan *p)
{
	if (p->split) {
		struct mm_vma *l = p->left;
		uint64_t last = l->last;
		vma_set_last(l, p->lo - 1);
		add_vma(as, p->hi + 1, last, l->status);
		if (p->st)
			add_vma(as, p->lo, p->hi, p->st);
		return;
	}
	if (p->left && p->left->last >= p->lo)
		vma_set_last(p->left, p->lo - 1);
	struct mm_vma *v = vma_first(as->vma.root, p->lo);
	while (v && v->start <= p->hi) {
		if (v->last > p->hi) {         /* p->right: keeps what is past hi */
			vma_set_start(v, p->hi + 1);
			break;
		}
		struct mm_vma *next = vma_after(as->vma.root, v);
		drop_vma(as, v);
		v = next;
	}
	if (!p->st)
		return;
	if (p->merge_left && p->merge_right) {
		vma_set_last(p->left, p->right->last);
		drop_vma(as, p->right);
	} else if (p->merge_left) {
		vma_set_last(p->left, p->hi);
	} else if (p->merge_right) {
		vma_set_start(p->right, p->lo);        /* nothing lies between: order kept */
	} else {
		add_vma(as, p->lo, p->hi, p->st);
	}
}

/* The status protect gives a VMA of status st. */
static uint64_t protected(uint64_t st, unsigned prot)
{
	unsigned k = meta_kind(st);
	if (k != MM_RESERVED && k != MM_PAGER)
		return st;
	return meta_make(k, (meta_prot(st) & ~RWX) | prot, meta_dev(st), meta_arg(st));
}

int vma_protect_plan(struct mm_as *as, uint64_t lo, uint64_t hi, unsigned prot)
{
	int need = -1;
	struct mm_vma *root = as->vma.root;
	for (struct mm_vma *v = vma_first(root, lo); v && v->start <= hi; v = vma_after(root, v)) {
		if (protected(v->status, prot) == v->status)
			continue;
		need = need < 0 ? 0 : need;
		need += (v->start < lo) + (v->last > hi);
	}
	return need;
}

/* Merge touching VMAs of the same status whose boundary lies in
 * [lo, hi + 1]. */
static void merge_around(struct mm_as *as, uint64_t lo, uint64_t hi)
{
	struct mm_vma *v = vma_first(as->vma.root, lo ? lo - 1 : 0);
	while (v) {
		struct mm_vma *n = vma_after(as->vma.root, v);
		if (!n || n->start - 1 > hi)
			return;
		if (v->last + 1 == n->start && n->start >= lo && v->status == n->status) {
			vma_set_last(v, n->last);
			drop_vma(as, n);
		} else {
			v = n;
		}
	}
}

void vma_protect_apply(struct mm_as *as, uint64_t lo, uint64_t hi, unsigned prot)
{
	struct mm_vma *v = vma_first(as->vma.root, lo);
	while (v && v->start <= hi) {
		uint64_t st = protected(v->status, prot);
		if (st != v->status) {
			if (v->start < lo) {   /* the piece before lo keeps its status */
				uint64_t start = v->start;
				vma_set_start(v, lo);
				add_vma(as, start, lo - 1, v->status);
			}
			if (v->last > hi) {    /* and the piece after hi */
				uint64_t last = v->last;
				vma_set_last(v, hi);
				add_vma(as, hi + 1, last, v->status);
			}
			v->status = st;
		}
		v = vma_after(as->vma.root, v);
	}
	merge_around(as, lo, hi);
}
