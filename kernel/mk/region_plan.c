/* The plan of a region transaction: every op checked against the locked
 * range as the ops before it in the same call will have left it, and every
 * frame the ops may take reserved, before any op runs.
 *
 * An op on pages no earlier op of the call touched is checked by its dry
 * run against the tree (mm_*_need), which also counts its frames. For the
 * others, what an earlier op leaves is known without running it: MAP
 * leaves a mapped page (with the limits its frame cap gave), UNMAP, the
 * MARKs and EVICT leave nothing mapped, PROTECT, CLEAN, QUERY and AGE
 * leave every page's kind as it was. So such an op is checked against, for each part
 * of its range, the last earlier op that changed the kind of the pages
 * there, else against the tree itself (mm_query / mm_next_used, which
 * every mm protocol answers).
 *
 * Frames: an op whose range no earlier op touched takes at most what its
 * dry run against the tree says (mm_*_need: earlier ops elsewhere only add
 * PT pages, as the core keeps pages that an op leaves empty until the
 * transaction ends); any other takes at most mm_txn_need_max. */
#include "region.h"
#include "uvm_frames.h"
#include "devices.h"

/* [*a, *b): the pages op j touches (a device MAP: as many as it maps). */
static void op_span(const struct txn *x, long j, uint64_t *a, uint64_t *b)
{
	const struct region_op *op = &x->ops[j];
	*a = op->va;
	*b = op->va + (x->dev_len[j] ? x->dev_len[j] :
		       op->op == ROP_MAP || op->op == ROP_EVICT || op->op == ROP_QUERY ||
		       op->op == ROP_AGE ? PAGE_SIZE : op->len);
}

/* Does op change the kind of the pages it touches (mapped or not)? */
static int changes_kind(uint32_t op)
{
	return op != ROP_QUERY && op != ROP_AGE && op != ROP_PROTECT && op != ROP_CLEAN;
}

/* The last op before k that changed the kind of every page in [a, b)
 * (the parts of op k's range are cut at every earlier op's ends, so an
 * op covers a part whole or not at all), or -1. */
static long last_change(const struct txn *x, long k, uint64_t a, uint64_t b)
{
	for (long j = k - 1; j >= 0; j--) {
		uint64_t ja, jb;
		op_span(x, j, &ja, &jb);
		if (changes_kind(x->ops[j].op) && ja <= a && b <= jb)
			return j;
	}
	return -1;
}

/* Which mappings tree_mapped and will_be_mapped look for. */
enum { MAPPED_ANY, MAPPED_NOWRITE, MAPPED_DEVICE };

/* Is the page info describes a mapping of the kind `which`? */
static int mapped_as(const struct mm_info *info, int which)
{
	if (info->kind != MM_MAPPED && info->kind != MM_COW)
		return 0;
	if (which == MAPPED_NOWRITE)
		return info->kind == MM_MAPPED && (info->limits & MM_MAP_NOWRITE);
	if (which == MAPPED_DEVICE)
		return info->kind == MM_MAPPED && device_pa(info->pa);
	return 1;
}

/* Needs the cursor over [a, b). 1 if the tree holds a mapped or COW page
 * in [a, b) of the kind `which` (MAPPED_*). */
static int tree_mapped(struct mm_cursor *c, uint64_t a, uint64_t b, int which)
{
	for (uint64_t va = a; va < b; ) {
		uint64_t next;
		struct mm_info info;
		if (mm_next_used(c, va, &next, NULL) != 1 || next >= b || mm_query(c, next, &info))
			return 0;
		if (mapped_as(&info, which))
			return 1;
		uint64_t span = level_span(info.level);
		va = (next & ~(span - 1)) + span;
		if (!va)
			return 0;
	}
	return 0;
}

/* 1 if a page of [a, b) will be mapped when op k runs, as `which` says
 * (MAPPED_*). The range is cut at every earlier op's ends. */
static int will_be_mapped(const struct txn *x, struct mm_cursor *c, long k, uint64_t a,
			  uint64_t b, int which)
{
	while (a < b) {
		uint64_t e = b;     /* the next cut after a */
		for (long j = 0; j < k; j++) {
			uint64_t ja, jb;
			op_span(x, j, &ja, &jb);
			if (ja > a && ja < e)
				e = ja;
			if (jb > a && jb < e)
				e = jb;
		}
		long j = last_change(x, k, a, e);
		int by_op = j >= 0 && x->ops[j].op == ROP_MAP &&
			    (which == MAPPED_ANY ||
			     (which == MAPPED_NOWRITE && (x->limits[j] & MM_MAP_NOWRITE)) ||
			     (which == MAPPED_DEVICE && x->dev_len[j]));
		if (j < 0 ? tree_mapped(c, a, e, which) : by_op)
			return 1;
		a = e;
	}
	return 0;
}

/* Op k (an EVICT) against the page as it will be: mapped by this
 * transaction (its frame also has a cap: E_BUSY; a device's registers:
 * E_INVAL), emptied by it
 * (E_NOENT), or as the tree holds it: a 4 KiB mapping (not COW: E_NOENT;
 * a huge page: E_INVAL) whose frame nothing else references (E_BUSY). */
static int evict_check(struct txn *x, struct mm_cursor *c, long k)
{
	uint64_t va = x->ops[k].va;
	long j = last_change(x, k, va, va + PAGE_SIZE);
	if (j >= 0)
		return x->ops[j].op != ROP_MAP ? -E_NOENT : x->dev_len[j] ? -E_INVAL : -E_BUSY;
	struct mm_info info;
	int r = err_from_mm(mm_query(c, va, &info));
	if (!r)
		r = frame_can_leave(&info);
	if (r)
		return r;
	x->charged[k] = uvm_frame_owner(info.pa) != x->t;
	return 0;
}

/* The dry run of op k against the tree: its error, or 0 and *need. */
static int dry_run(struct txn *x, struct mm_cursor *c, long k, unsigned *need)
{
	const struct region_op *op = &x->ops[k];
	struct mm_status st;
	*need = 0;
	switch (op->op) {
	case ROP_MAP:
		return err_from_mm(mm_map_need(c, op->va, x->frame_pa[k], 1, prot_to_mm(op->prot),
					       txn_map_flags(x, k), need));
	case ROP_MARK:
	case ROP_MARK_INVALID:
	case ROP_MARK_PAGER:
	case ROP_MARK_SWAPPED:
		txn_mark_status(op, TXN_MARK_KIND(op->op), &st);
		return err_from_mm(mm_mark_need(c, op->va, op->len, &st, need));
	case ROP_MAP_OBJ:
		txn_obj_status(x, k, &st);
		return err_from_mm(mm_mark_need(c, op->va, op->len, &st, need));
	case ROP_UNMAP:
		return err_from_mm(mm_unmap_need(c, op->va, op->len, need));
	case ROP_PROTECT:
		return err_from_mm(mm_protect_need(c, op->va, op->len, txn_page_prot(op->prot),
						   need));
	case ROP_EVICT:
		return err_from_mm(mm_take_need(c, op->va, need));
	case ROP_CLEAN:     /* the tables of the dirty huge leaves it cuts */
		return err_from_mm(mm_clean_need(c, op->va, op->len, need));
	}
	return 0;       /* QUERY, AGE: no frames */
}

/* Op k, a MAP of a device window over [a, b): 0 or its -E_*, and *need
 * the frames its pages' tables may take. One dry run per 2 MiB block (the
 * pages of a block share their leaf table: the first one's path is
 * theirs), or, where an earlier op touched the range, the bound of any
 * one op in that block. */
static int plan_devmap(struct txn *x, struct mm_cursor *c, long k, uint64_t a, uint64_t b,
		       int touched, unsigned *need)
{
	const struct region_op *op = &x->ops[k];
	if (will_be_mapped(x, c, k, a, b, MAPPED_ANY))
		return -E_EXIST;
	unsigned prot = txn_dev_prot(x, op->prot), flags = txn_map_flags(x, k);
	for (uint64_t va = a; va < b; ) {
		uint64_t end = (va | (level_span(2) - 1)) + 1;
		if (end > b || end == 0)
			end = b;
		unsigned n = 0;
		int err = 0;
		if (touched)
			n = mm_txn_need_max(c, va, end - va);
		else
			err = err_from_mm(mm_map_need(c, va, x->dev_pa[k] + (va - a), 1, prot, flags,
						      &n));
		if (err)
			return err;
		*need += n;
		va = end;
	}
	return 0;
}

/* Op k against the range as the ops before it leave it: 0 or its -E_*;
 * *need the frames it may take. An op on pages no earlier op touched is
 * checked and counted by its dry run against the tree alone. */
static int plan_op(struct txn *x, struct mm_cursor *c, long k, unsigned *need)
{
	const struct region_op *op = &x->ops[k];
	uint64_t a, b;
	op_span(x, k, &a, &b);
	*need = 0;
	int touched = 0, err;
	for (long j = 0; j < k; j++) {
		uint64_t ja, jb;
		op_span(x, j, &ja, &jb);
		touched |= x->ops[j].op != ROP_QUERY && x->ops[j].op != ROP_AGE && ja < b && a < jb;
	}
	if (op->op == ROP_EVICT && (err = evict_check(x, c, k)))
		return err;
	if (x->dev_len[k])
		return plan_devmap(x, c, k, a, b, touched, need);
	/* A device's registers are never executable. */
	if (op->op == ROP_PROTECT && (op->prot & PROT_X) &&
	    will_be_mapped(x, c, k, a, b, MAPPED_DEVICE))
		return -E_INVAL;
	if (!touched)
		return dry_run(x, c, k, need);
	switch (op->op) {
	case ROP_QUERY:
	case ROP_AGE:
		return 0;
	case ROP_MAP:
	case ROP_MARK:
	case ROP_MARK_INVALID:
	case ROP_MARK_PAGER:
	case ROP_MARK_SWAPPED:
	case ROP_MAP_OBJ:
		if (will_be_mapped(x, c, k, a, b, MAPPED_ANY))
			return -E_EXIST;
		break;
	case ROP_PROTECT:
		if ((op->prot & PROT_W) && will_be_mapped(x, c, k, a, b, MAPPED_NOWRITE))
			return -E_PERM;     /* a read-only grant stays read-only */
		break;
	}
	*need = mm_txn_need_max(c, a, b - a);
	return 0;
}

int txn_plan(struct txn *x, struct mm_cursor *c)
{
	unsigned total = 0, evicts = 0;
	mm_txn_begin(c);
	for (long k = 0; k < x->n; k++) {
		unsigned need;
		int err = plan_op(x, c, k, &need);
		if (err) {
			x->bad = k;
			for (long i = 0; i < x->n; i++)
				x->charged[i] = 0;
			return err;
		}
		total += need;
		evicts += x->charged[k];
	}
	/* The caller pays for the frames it evicts from another's space. */
	if (evicts && quota_charge_frames(x->t, evicts)) {
		for (long i = 0; i < x->n; i++)
			x->charged[i] = 0;
		return -E_QUOTA;
	}
	x->frames = total;
	int err = err_from_mm(mm_txn_reserve(c, total));
	if (err)
		txn_unplan(x);
	return err;
}

void txn_unplan(struct txn *x)
{
	unsigned evicts = 0;
	for (long i = 0; i < x->n; i++)
		evicts += x->charged[i];
	if (evicts)
		quota_release_frames(x->t, evicts);
	for (long i = 0; i < x->n; i++)
		x->charged[i] = 0;
}
