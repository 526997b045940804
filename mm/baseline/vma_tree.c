/* The VMA tree of one address space: an AVL tree ordered by start address.
 * VMAs never overlap, so their last addresses are in the same order and a
 * lookup by address needs one descent. Insertion and removal are
 * recursive (depth is the tree's height, at most 1.44 log2 n).
 *
 * Needs (all functions but vma_first_rcu): mmap_lock held, for writing to
 * change the tree. Links are written atomically (set_child, the root), as
 * lookups without the lock follow them meanwhile; a rotation never makes
 * a cycle, and a lookup stops after a fixed number of steps anyway. */
#include "vma.h"

static uint32_t height(const struct mm_vma *v)
{
	return v ? v->height : 0;
}

static void fix_height(struct mm_vma *v)
{
	uint32_t l = height(v->child[0]), r = height(v->child[1]);
	v->height = 1 + (l > r ? l : r);
}

static void set_child(struct mm_vma *v, int d, struct mm_vma *x)
{
	__atomic_store_n(&v->child[d], x, __ATOMIC_RELEASE);
}

/* Rotate t's child on side d (0 lower, 1 higher) up into t's place;
 * returns it. */
static struct mm_vma *rotate(struct mm_vma *t, int d)
{
	struct mm_vma *x = t->child[d];
	set_child(t, d, x->child[!d]);
	set_child(x, !d, t);
	fix_height(t);
	fix_height(x);
	return x;
}

/* v's subtrees are AVL trees whose heights differ by at most 2: make v's
 * subtree one, returning its new root. */
static struct mm_vma *rebalance(struct mm_vma *v)
{
	fix_height(v);
	for (int d = 0; d < 2; d++) {
		struct mm_vma *c = v->child[d];
		if (height(c) > height(v->child[!d]) + 1) {
			if (height(c->child[d]) < height(c->child[!d]))
				set_child(v, d, rotate(c, !d));
			return rotate(v, d);
		}
	}
	return v;
}

static struct mm_vma *insert(struct mm_vma *t, struct mm_vma *n)
{
	if (!t)
		return n;
	int d = n->start > t->start;
	set_child(t, d, insert(t->child[d], n));
	return rebalance(t);
}

/* Unlink the lowest node of t into *min; returns t's new root. */
static struct mm_vma *take_min(struct mm_vma *t, struct mm_vma **min)
{
	if (!t->child[0]) {
		*min = t;
		return t->child[1];
	}
	set_child(t, 0, take_min(t->child[0], min));
	return rebalance(t);
}

/* Unlink n from t (found by its start); *found tells whether it was there.
 * Nodes are relinked, never copied, so pointers to the others stay valid. */
static struct mm_vma *erase(struct mm_vma *t, const struct mm_vma *n, bool *found)
{
	if (!t)
		return 0;
	if (n->start != t->start) {
		int d = n->start > t->start;
		set_child(t, d, erase(t->child[d], n, found));
		return rebalance(t);
	}
	if (t != n)
		return t;
	*found = true;
	if (!t->child[0] || !t->child[1])
		return t->child[0] ? t->child[0] : t->child[1];
	struct mm_vma *m;
	struct mm_vma *r = take_min(t->child[1], &m);
	set_child(m, 0, t->child[0]);
	set_child(m, 1, r);
	return rebalance(m);
}

/* A change to the tree needs the write lock: a broken invariant if not. */
static void check_writer(const struct mm_as *as)
{
	if (!mmap_write_held(&as->vma.mmap_lock))
		as->plat->panic("vma: tree changed without the write lock");
}

void vma_insert(struct mm_as *as, struct mm_vma *v)
{
	check_writer(as);
	set_child(v, 0, 0);
	set_child(v, 1, 0);
	v->height = 1;
	__atomic_store_n(&as->vma.root, insert(as->vma.root, v), __ATOMIC_RELEASE);
}

void vma_erase(struct mm_as *as, struct mm_vma *v)
{
	bool found = false;
	check_writer(as);
	__atomic_store_n(&as->vma.root, erase(as->vma.root, v, &found), __ATOMIC_RELEASE);
	if (!found)
		as->plat->panic("vma: erasing a VMA that is not in the tree");
}

struct mm_vma *vma_first(struct mm_vma *t, uint64_t va)
{
	struct mm_vma *best = 0;
	while (t) {
		bool here = t->last >= va;
		if (here)
			best = t;
		t = t->child[!here];
	}
	return best;
}

/* Deeper than any AVL tree of VMAs that fit in memory. */
#define RCU_STEPS 96

struct mm_vma *vma_first_rcu(struct mm_as *as, uint64_t va)
{
	struct mm_vma *best = 0;
	struct mm_vma *t = __atomic_load_n(&as->vma.root, __ATOMIC_ACQUIRE);
	for (unsigned n = 0; t; n++) {
		if (n == RCU_STEPS)
			return 0;
		bool here = __atomic_load_n(&t->last, __ATOMIC_RELAXED) >= va;
		if (here)
			best = t;
		t = __atomic_load_n(&t->child[!here], __ATOMIC_ACQUIRE);
	}
	return best;
}

struct mm_vma *vma_prev(struct mm_vma *t, uint64_t va)
{
	struct mm_vma *best = 0;
	while (t) {
		bool here = t->start < va;
		if (here)
			best = t;
		t = t->child[here];
	}
	return best;
}

struct mm_vma *vma_after(struct mm_vma *root, const struct mm_vma *v)
{
	return v->last == ~0ull ? 0 : vma_first(root, v->last + 1);
}
