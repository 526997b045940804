/* The cursor operations of the baseline that read or change VMAs (the
 * others, map / make_cow / unshare / age / flush, are the core's, on the
 * page table alone). Each builds on the core's page-table half (mm_pt_*)
 * and the VMA tree, in the order that keeps the contract of
 * cortenmm/cursor.h: validate, plan the VMA change and reserve its nodes,
 * run the page-table half (all or nothing), then apply the VMA change,
 * which cannot fail. A one-page cursor holding its VMA or mmap_lock for
 * reading upgrades to the write lock only when the VMA tree must change;
 * one holding just its VMA (VMA_VREAD) reads that VMA and no other node,
 * and upgrades before it plans anything on the tree.
 *
 * Needs (all functions): the cursor holds its range, on an address space
 * of protocol "vma". */
#include "vma.h"

#define RWX (MM_PROT_R | MM_PROT_W | MM_PROT_X)

/* A VMA change over [lo, hi]: a status (st, 0 to punch) or permissions. */
struct change {
	bool protect;
	uint64_t lo, hi, st;
	unsigned prot;
	struct vma_set_plan set;
};

static int plan(struct mm_cursor *c, struct change *ch)
{
	if (ch->protect)
		return vma_protect_plan(c->as, ch->lo, ch->hi, ch->prot);
	return vma_set_plan(c->as, ch->lo, ch->hi, ch->st, &ch->set);
}

/* A cursor holding only its VMA reads no other node: it upgrades first
 * (to read the tree, as to change it). */
static void tree_access(struct mm_cursor *c)
{
	if (c->vma_mode == VMA_VREAD)
		vma_write_access(c);
}

/* Make the change possible: write access (a read-mode cursor upgrades,
 * then plans again, as others may have reshaped the tree meanwhile, though
 * never the status of its page), the VMAs it touches write-locked with
 * their readers gone, and the nodes it needs. 1: ready; 0: nothing to
 * change; MM_ENOMEM: no nodes (nothing changed). */
static int prepare(struct mm_cursor *c, struct change *ch)
{
	tree_access(c);
	int need = plan(c, ch);
	if (need >= 0 && c->vma_mode == VMA_READ) {
		vma_write_access(c);
		need = plan(c, ch);
	}
	if (need < 0)
		return 0;
	vma_claim(c, ch->lo, ch->hi);
	int err = vma_reserve(c, (unsigned)need);
	return err ? err : 1;
}

/* After the page-table half returned err: apply a prepared change (r > 0)
 * if it succeeded, else give its nodes back. Returns err. */
static int finish(struct mm_cursor *c, struct change *ch, int r, int err)
{
	if (r <= 0)
		return err;
	if (err) {
		vma_trim(c->as);
	} else if (ch->protect) {
		vma_protect_apply(c->as, ch->lo, ch->hi, ch->prot);
	} else {
		vma_set_apply(c->as, &ch->set);
	}
	return err;
}

/* The largest level L <= top whose aligned block around va lies in v. */
static unsigned block_level(const struct pt_arch *a, uint64_t va, unsigned top, const struct mm_vma *v)
{
	for (unsigned L = top; L > 1; L--) {
		uint64_t span = 1ull << pt_shift(a, L);
		uint64_t b = va & ~(span - 1);
		if (b >= v->start && b + span - 1 <= v->last)
			return L;
	}
	return 1;
}

/* A page not present in the page table has the status of the VMA holding
 * it; level: the largest block around va with that status everywhere
 * (inside the VMA, and no page table below the empty entry found). */
static int b_query(struct mm_cursor *c, uint64_t va, struct mm_info *out)
{
	int err = mm_pt_query(c, va, out);
	if (err || out->kind != MM_INVALID)
		return err;
	struct mm_vma *v = c->vma_held ? c->vma_held : vma_first(c->as->vma.root, va);
	if (!v || v->start > va)
		return MM_OK;
	*out = (struct mm_info){ .kind = (uint8_t)meta_kind(v->status),
				 .prot = (uint8_t)meta_prot(v->status),
				 .dev = (uint8_t)meta_dev(v->status), .arg = meta_arg(v->status),
				 .level = (uint8_t)block_level(c->as->arch, va, out->level, v) };
	return MM_OK;
}

/* A sealed kernel address space keeps its root entries (mm.h): as in the
 * core, a mark of a range holding a whole one is refused. */
static bool whole_root_entry(const struct mm_as *as, uint64_t va, uint64_t len)
{
	uint64_t span = 1ull << pt_shift(as->arch, as->arch->levels);
	uint64_t off = (span - (va & (span - 1))) & (span - 1);   /* to the first boundary */
	return as->sealed && off <= len && len - off >= span;
}

/* Mark: the page table is only checked (no page may be present); the
 * status goes into the VMA tree. */
static int b_mark(struct mm_cursor *c, uint64_t va, uint64_t len, const struct mm_status *s)
{
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	uint64_t st, nx;
	err = mm_status_meta(c->as->arch, s, &st);
	if (err)
		return err;
	if (whole_root_entry(c->as, va, len))
		return MM_EINVAL;
	if (mm_pt_next_used(c, va, va + len - 1, &nx, 0) == 1)
		return MM_EMAPPED;
	struct change ch = { .lo = va, .hi = va + len - 1, .st = st };
	int r = prepare(c, &ch);
	return r < 0 ? r : finish(c, &ch, r, MM_OK);
}

static int b_unmap(struct mm_cursor *c, uint64_t va, uint64_t len)
{
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	struct change ch = { .lo = va, .hi = va + len - 1 };
	int r = prepare(c, &ch);
	return r < 0 ? r : finish(c, &ch, r, mm_pt_unmap(c, va, len));
}

static int b_protect(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned prot)
{
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	if ((prot & ~RWX) || !(prot & MM_PROT_R))
		return MM_EPROT;
	struct change ch = { .protect = true, .lo = va, .hi = va + len - 1, .prot = prot };
	int r = prepare(c, &ch);
	return r < 0 ? r : finish(c, &ch, r, mm_pt_protect(c, va, len, prot));
}

/* Take: the page becomes invalid, so a VMA under its present leaf goes. */
static int b_take(struct mm_cursor *c, uint64_t va, struct mm_info *out)
{
	if (va & (MM_PAGE_SIZE - 1))
		return MM_EALIGN;
	if (va < c->start || va > c->last)
		return MM_ENOTLOCKED;
	struct mm_info in;
	mm_pt_query(c, va, &in);
	if (in.kind != MM_MAPPED)
		return MM_EINVAL;
	if (in.level != 1)
		return MM_EHUGE;
	struct change ch = { .lo = va, .hi = va + MM_PAGE_SIZE - 1 };
	int r = prepare(c, &ch);
	if (r < 0)
		return r;
	int err = mm_pt_take(c, va, out);
	if (err)
		c->as->plat->panic("vma: take failed after its checks");
	return finish(c, &ch, r, err);
}

/* The first used page: the first present page or the first page of a
 * VMA, whichever comes first; the page table is walked only up to the
 * VMA's start. */
static int b_next_used(struct mm_cursor *c, uint64_t va, uint64_t *next, uint64_t *skipped)
{
	if (va & (MM_PAGE_SIZE - 1))
		return MM_EALIGN;
	if (va < c->start || va > c->last)
		return MM_ENOTLOCKED;
	struct mm_vma *v = c->vma_held ? c->vma_held : vma_first(c->as->vma.root, va);
	bool in_vma = v && v->start <= c->last;
	uint64_t at = in_vma && v->start > va ? v->start : va;
	if (in_vma && at == va) {
		*next = va;
		return 1;
	}
	if (mm_pt_next_used(c, va, in_vma ? at - 1 : c->last, next, skipped) == 1)
		return 1;
	if (!in_vma)
		return 0;
	*next = at;
	return 1;
}

/* An empty page table goes only where no VMA lies over its range (as
 * Linux frees page tables at munmap, between the neighbouring VMAs): a
 * one-page transaction that emptied it takes the parent's range for
 * writing at release to remove it (cursor.c). Where a VMA lies, the table
 * stays for the faults to come. Needs: the cursor's locks (at commit). */
static bool b_prune_cover(struct mm_cursor *c)
{
	if (c->vma_held)
		return false;   /* its VMA lies there */
	const struct pt_arch *a = c->as->arch;
	uint64_t last = c->cover_base + (1ull << pt_shift(a, c->cover_level + 1)) - 1;
	struct mm_vma *v = vma_first(c->as->vma.root, c->cover_base);
	return !v || v->start > last;
}

/* Plan a VMA change over [lo, hi] (st, 0 to punch): the nodes it needs. */
static unsigned set_nodes(struct mm_cursor *c, uint64_t lo, uint64_t hi, uint64_t st)
{
	struct vma_set_plan p;
	int n = vma_set_plan(c->as, lo, hi, st, &p);
	return n > 0 ? (unsigned)n : 0;
}

/* The dry runs of b_mark, b_unmap, b_protect and b_take for a
 * transaction's plan (mm_protocol.need): what each checks, the frames of
 * its page-table half and the nodes of its VMA change. Changes nothing. */
static int b_need(struct mm_cursor *c, unsigned op, uint64_t va, uint64_t len,
		  const struct mm_status *s, unsigned prot, unsigned *frames, unsigned *nodes)
{
	*frames = *nodes = 0;
	int err = mm_check_range(c, va, len);
	if (err)
		return err;
	tree_access(c);
	uint64_t st = 0, nx;
	struct mm_info in;
	switch (op) {
	case MM_NEED_MARK:
		if ((err = mm_status_meta(c->as->arch, s, &st)))
			return err;
		if (whole_root_entry(c->as, va, len))
			return MM_EINVAL;
		if (mm_pt_next_used(c, va, va + len - 1, &nx, 0) == 1)
			return MM_EMAPPED;
		*nodes = set_nodes(c, va, va + len - 1, st);
		return MM_OK;
	case MM_NEED_UNMAP:
		*nodes = set_nodes(c, va, va + len - 1, 0);
		return mm_pt_unmap_need(c, va, len, frames);
	case MM_NEED_PROTECT: {
		if ((prot & ~RWX) || !(prot & MM_PROT_R))
			return MM_EPROT;
		int n = vma_protect_plan(c->as, va, va + len - 1, prot);
		*nodes = n > 0 ? (unsigned)n : 0;
		return mm_pt_protect_need(c, va, len, prot, frames);
	}
	case MM_NEED_TAKE:
		mm_pt_query(c, va, &in);
		if (in.kind != MM_MAPPED)
			return MM_EINVAL;
		if (in.level != 1)
			return MM_EHUGE;
		*nodes = set_nodes(c, va, va + MM_PAGE_SIZE - 1, 0);
		return MM_OK;
	}
	return MM_EINVAL;
}

/* mm_protocol.reserve_nodes: write access to the tree, then the nodes. */
static int b_reserve_nodes(struct mm_cursor *c, unsigned nodes)
{
	vma_write_access(c);
	return vma_reserve(c, nodes);
}

/* The protocol: its locks (vma_proto.c) and the operations that read or
 * change the VMA tree (here and vma_wf.c), as hooks of the core's entry
 * points of the same names. */
const struct mm_protocol mm_proto_vma = {
	.name = "vma", .lock = vma_lock, .unlock = vma_unlock, .born = vma_born,
	.unlinked = vma_unlinked, .retire = mm_pt_retire_rcu,
	.query = b_query, .mark = b_mark, .unmap = b_unmap, .protect = b_protect,
	.take = b_take, .next_used = b_next_used, .wf_check = vma_wf_check,
	.need = b_need, .reserve_nodes = b_reserve_nodes, .prune_cover = b_prune_cover,
	.flush_under_locks = true, .keeps_tables = true,
};
