/* Decode of a region transaction: every check that needs only the
 * caller's caps and the ops themselves, under the caller's CSpace lock
 * (not mk_lock: a map on one hart does not wait for IPC or cap work on
 * another). Page rights: the region cap's R_READ / R_WRITE / R_EXEC bound
 * the permissions MAP, MARK, MARK_PAGER, MARK_SWAPPED and PROTECT may give
 * a page; a frame mapped already may be mapped again only through a frame
 * cap with R_SHARE. */
#include "region.h"
#include "uvm_frames.h"
#include "mobj.h"

static int mobj_decode(struct txn *x, long i);

static unsigned op_right(uint32_t op)
{
	switch (op) {
	case ROP_QUERY: return R_QUERY;
	case ROP_MAP: return R_MAP;
	case ROP_MARK: return R_MARK;
	case ROP_MARK_INVALID: return R_MARK;
	case ROP_UNMAP: return R_UNMAP;
	case ROP_MARK_PAGER: return R_MARK;
	case ROP_MARK_SWAPPED: return R_MARK;
	case ROP_PROTECT: return R_PROTECT;
	case ROP_AGE: return R_QUERY | R_PROTECT;
	case ROP_EVICT: return R_UNMAP;
	case ROP_CLEAN: return R_PROTECT;
	case ROP_MAP_OBJ: return R_MAP;
	}
	return 0;
}

static int ranged(uint32_t op)
{
	return op == ROP_MARK || op == ROP_UNMAP || op == ROP_MARK_INVALID || op == ROP_MARK_PAGER ||
	       op == ROP_MARK_SWAPPED || op == ROP_PROTECT || op == ROP_CLEAN || op == ROP_MAP_OBJ;
}

/* The limits a MAP through a frame cap with `rights` gives the mapping:
 * what the cap does not allow, it never will (COW never writes the frame). */
static unsigned map_limits(unsigned rights, uint32_t prot)
{
	unsigned l = (rights & R_SHARE) ? 0 : MM_MAP_NOSHARE;
	if (!(rights & R_WRITE) && !(prot & PROT_COW))
		l |= MM_MAP_NOWRITE;
	return l;
}

static int w_and_x(uint32_t prot)
{
	return (prot & (PROT_W | PROT_X)) == (PROT_W | PROT_X);
}

/* Op i, a MAP whose arg is the MMIO cap mc: the window's first len bytes
 * (0: all of it) at va, never executable or copy-on-write, writable only
 * through a cap with R_WRITE. Notes the window and the mapping's limits
 * in x: never shared by clone, and read-only for good through a cap
 * without R_WRITE. 0 or -E_*. */
static int decode_devmap(struct txn *x, const struct cap *mc, long i)
{
	const struct region_op *op = &x->ops[i];
	uint64_t win = mc->hi - mc->lo;
	uint64_t len = op->len ? op->len : win;
	if ((op->prot & (PROT_X | PROT_COW)) || (len & (PAGE_SIZE - 1)))
		return -E_INVAL;
	if (len > win || len > x->hi - op->va)
		return -E_RANGE;
	unsigned need = R_READ | ((op->prot & PROT_W) ? R_WRITE : 0);
	if ((mc->rights & need) != need)
		return -E_PERM;
	x->dev_pa[i] = mc->lo;
	x->dev_len[i] = len;
	x->limits[i] = (uint8_t)(MM_MAP_NOSHARE | ((mc->rights & R_WRITE) ? 0 : MM_MAP_NOWRITE));
	x->must_plan++;
	return 0;
}

/* Needs the caller's CSpace decode lock. Op i's checks against the region
 * cap rc: 0 or -E_*; a MAP's frame is looked up, its map counted and
 * noted in x. */
static int decode_op(struct txn *x, const struct cap *rc, long i)
{
	const struct region_op *op = &x->ops[i];
	unsigned need = op_right(op->op);
	/* ops that give pages permissions: R needed, W^X, within the cap's page rights */
	int gives = op->op == ROP_MARK || op->op == ROP_MARK_PAGER || op->op == ROP_PROTECT ||
		    op->op == ROP_MAP || (op->op == ROP_MARK_SWAPPED && op->prot) || op->op == ROP_MAP_OBJ;
	uint32_t pmask = op->op == ROP_MAP ? 15u : 7u;
	if (!need)
		return -E_INVAL;
	if ((rc->rights & need) != need)
		return -E_PERM;
	if (op->va & (PAGE_SIZE - 1))
		return -E_INVAL;
	if (op->va < x->lo || op->va >= x->hi)
		return -E_RANGE;
	if (ranged(op->op) && (!op->len || (op->len & (PAGE_SIZE - 1)) || op->len > x->hi - op->va))
		return -E_RANGE;
	if (gives && (!(op->prot & PROT_R) || (op->prot & ~pmask) || w_and_x(op->prot)))
		return -E_INVAL;
	if (gives && (op->prot & 7u & ~prot_of_rights(rc->rights)))
		return -E_PERM;
	if ((op->op == ROP_MARK_PAGER || op->op == ROP_MARK_SWAPPED) &&
	    (op->arg < 0 || (uint64_t)op->arg > MM_STATUS_ARG_MAX))
		return -E_INVAL;
	int err = 0;
	if (op->op == ROP_MAP_OBJ)
		return mobj_decode(x, i);
	if (op->op == ROP_EVICT) {
		err = cap_slot_check(x->t, op->arg);
		for (long j = 0; !err && j < i; j++)
			if (x->ops[j].op == ROP_EVICT && x->ops[j].arg == op->arg)
				err = -E_EXIST;
	} else if (op->op == ROP_MAP) {
		/* COW needs only read access to the frame: writes go to a copy. */
		unsigned fr = ((op->prot & PROT_W) && !(op->prot & PROT_COW) ? R_WRITE : 0) | R_READ;
		struct cap *fc = cap_lookup(x->t, op->arg, 0, 0, &err);
		if (fc && fc->type == CAP_MMIO)
			return decode_devmap(x, fc, i);
		if (fc && fc->type != CAP_FRAME)
			err = -E_BADCAP, fc = NULL;
		if (fc && (fc->rights & fr) != fr)
			err = -E_PERM;
		else if (fc && !(err = uvm_frame_map_begin(fc->o.pa, fc->rights & R_SHARE))) {
			x->frame_pa[i] = fc->o.pa;
			x->counted[i] = 1;
			x->limits[i] = (uint8_t)map_limits(fc->rights, op->prot);
		}
	}
	return err;
}

/* Needs the caller's CSpace decode lock. Op i, a MAP_OBJ: the object
 * cap (R_MAP, and R_READ / R_WRITE / R_EXEC as prot asks), the pages
 * inside the object, a mapping record reserved in x->rec[i]. 0 or -E_*. */
static int mobj_decode(struct txn *x, long i)
{
	const struct region_op *op = &x->ops[i];
	int err = 0;
	struct cap *oc = cap_lookup(x->t, ROP_OBJ_SLOT(op->arg), CAP_MOBJ, R_MAP, &err);
	if (!oc)
		return err;
	unsigned need = R_READ | ((op->prot & PROT_W) ? R_WRITE : 0) | ((op->prot & PROT_X) ? R_EXEC : 0);
	if ((oc->rights & need) != need)
		return -E_PERM;
	uint64_t off = ROP_OBJ_OFF(op->arg), n = op->len / PAGE_SIZE;
	if (op->arg < 0 || off >= oc->o.mobj->npages || n > oc->o.mobj->npages - off)
		return -E_RANGE;
	x->rec[i] = mobj_map_reserve(oc->o.mobj, x->target, &err);
	x->recs += x->rec[i] != NULL;
	return err;
}

void txn_obj_status(const struct txn *x, long i, struct mm_status *st)
{
	const struct region_op *op = &x->ops[i];
	st->kind = MM_SWAPPED;
	st->prot = (uint8_t)txn_page_prot(op->prot);
	st->dev = MOBJ_DEV;
	st->arg = mobj_status_arg(x->rec[i]->o, op->va, (uint32_t)ROP_OBJ_OFF(op->arg));
}

/* The CSpace chunks of the ROP_EVICT slots, all or none: a frame an
 * eviction takes then always finds its slot's chunk there. */
static int prepare_chunks(struct txn *x)
{
	int err = 0;
	for (long i = 0; !err && i < x->n; i++) {
		int again = 0;      /* an earlier op made this slot's chunk ready */
		long s = x->ops[i].arg;
		for (long j = 0; j < i && s >= CSPACE_FIXED_SLOTS; j++)
			again |= x->spare[j] && (x->ops[j].arg - CSPACE_FIXED_SLOTS) / CCHUNK_SLOTS ==
							(s - CSPACE_FIXED_SLOTS) / CCHUNK_SLOTS;
		if (x->ops[i].op == ROP_EVICT && !again && (err = cspace_prepare(x->t, s, &x->spare[i])))
			x->bad = i;
	}
	for (long i = 0; i < x->n; i++) {
		if (err)
			cspace_unprepare(x->t, x->spare[i]);
		else if (x->spare[i])
			cspace_commit(x->t, x->ops[i].arg, x->spare[i]);
		x->spare[i] = NULL;
	}
	return err;
}

/* Give back the map counts and frame references decode took, and the
 * mapping records no MAP_OBJ used. */
static void frames_drop(struct txn *x, int referenced)
{
	for (long i = 0; x->recs && i < x->n; i++) {
		if (x->rec[i])
			mobj_map_unreserve(x->rec[i]);
		x->rec[i] = NULL;
	}
	x->recs = 0;
	for (long i = 0; x->maps && i < x->n; i++) {
		if (x->counted[i])
			uvm_frame_unmapped(x->frame_pa[i]);
		if (x->frame_pa[i] && referenced)
			uvm_frame_put(x->frame_pa[i]);
		x->counted[i] = 0;
		x->frame_pa[i] = 0;
	}
}

int txn_decode(struct txn *x, long slot)
{
	int err = 0;
	x->bad = -1;
	x->recs = 0;
	for (long i = 0; i < x->n; i++)
		x->frame_pa[i] = 0, x->counted[i] = 0, x->limits[i] = 0, x->charged[i] = 0,
		x->spare[i] = NULL, x->dev_pa[i] = 0, x->dev_len[i] = 0, x->rec[i] = NULL;
	if ((x->lo | x->hi) & (PAGE_SIZE - 1) || x->lo >= x->hi)
		return -E_INVAL;
	auth_read_lock();
	unsigned long f = cspace_decode_lock(x->t);
	struct cap *rc = cap_lookup(x->t, slot, CAP_REGION, 0, &err);
	if (rc && (x->lo < rc->lo || x->hi > rc->hi))
		err = -E_RANGE;
	if (rc) {
		x->target = rc->o.task;
		x->rights = rc->rights;
	}
	x->evicts = x->maps = x->must_plan = 0;
	for (long i = 0; !err && i < x->n; i++) {
		if ((err = decode_op(x, rc, i)))
			x->bad = i;
		x->must_plan += x->ops[i].op == ROP_PROTECT && (x->ops[i].prot & PROT_X);
		x->evicts += x->ops[i].op == ROP_EVICT;
		x->maps += x->ops[i].op == ROP_MAP;
	}
	if (err) {
		frames_drop(x, 0);
		cspace_decode_unlock(x->t, f);
		auth_read_unlock();
		return err;
	}
	/* Hold the frames across the transaction (their caps may go once the
	 * lock drops) and the target's address space. */
	for (long i = 0; x->maps && i < x->n; i++)
		if (x->frame_pa[i])
			uvm_frame_get(x->frame_pa[i]);
	cspace_decode_unlock(x->t, f);
	err = task_txn_try_begin(x->target);
	if (!err && x->evicts && (err = prepare_chunks(x)))
		task_txn_end(x->target);
	if (err) {
		frames_drop(x, 1);
		auth_read_unlock();
	}
	return err;
}

void txn_undecode(struct txn *x)
{
	frames_drop(x, 1);
	task_txn_end(x->target);
	auth_read_unlock();
}
