/* Region-capability transactions: one syscall carries a region cap, the
 * range to lock and up to REGION_MAX_OPS operations. Decode checks every
 * op (rights, alignment, inside the locked range, frame caps and their
 * rights) before anything changes; then one cursor locks [lo, hi) of the
 * target address space, the ops apply in order, and releasing the cursor
 * commits them. Each op's own result (0 or -E_*) is written back.
 *
 * Rules kept here: no user mapping or reservation is both writable and
 * executable (W^X); a query never returns a physical address; PT pages a
 * transaction needs are charged to the target's frame quota as they are
 * drawn (E_QUOTA when they do not fit); the region cap's authority holds
 * from decode to commit (the revoke barrier: a delete or revoke of the cap
 * waits for the transaction); code mapped executable is made visible to
 * instruction fetch on every hart before the call returns.
 *
 * Page rights: a region cap's R_READ / R_WRITE / R_EXEC bound the
 * permissions MAP, MARK, MARK_PAGER, MARK_SWAPPED and PROTECT may give a
 * page (E_PERM at decode otherwise). A frame that is mapped already may be
 * mapped again only through a frame cap with R_SHARE. EVICT moves a page's
 * frame, and its quota charge, to the caller as a frame cap.
 *
 * Frame rights bind a mapping for its whole life: a MAP through a frame
 * cap without R_WRITE (not COW) is made MM_MAP_NOWRITE, so no later
 * PROTECT can make it writable (E_PERM); one through a cap without
 * R_SHARE is made MM_MAP_NOSHARE, so clone refuses to put the frame into
 * a second address space; EVICT of such a page gives a frame cap with no
 * more rights than those limits leave. */
#include "mk.h"
#include "uvm_frames.h"
#include "kstring.h"
#include "arch.h"

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
	}
	return 0;
}

/* The page permissions (PROT_R/W/X) a region cap's rights allow. */
static uint32_t page_rights(unsigned rights)
{
	return ((rights & R_READ) ? PROT_R : 0) | ((rights & R_WRITE) ? PROT_W : 0) |
	       ((rights & R_EXEC) ? PROT_X : 0);
}

/* The QF_* flags that report a mapping's limits. */
static uint64_t limit_flags(unsigned limits)
{
	return ((limits & MM_MAP_NOWRITE) ? QF_NOWRITE : 0) | ((limits & MM_MAP_NOSHARE) ? QF_NOSHARE : 0);
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

/* A query result as the ABI reports it: kind, PROT_* | QF_*, tag or slot;
 * never a physical address. */
static void report(struct region_op *op, const struct mm_info *info)
{
	op->out_kind = info->kind;
	op->out_prot = info->prot & 7;
	if (info->kind == MM_MAPPED || info->kind == MM_COW)
		op->out_prot |= (info->accessed ? QF_ACCESSED : 0) | (info->dirty ? QF_DIRTY : 0) |
				limit_flags(info->limits);
	op->out_tag = (info->kind == MM_PAGER || info->kind == MM_SWAPPED) ? info->arg : 0;
}

static unsigned to_mm_prot(uint32_t p)
{
	unsigned m = MM_PROT_U;
	if (p & PROT_R)
		m |= MM_PROT_R;
	if (p & PROT_W)
		m |= MM_PROT_W;
	if (p & PROT_X)
		m |= MM_PROT_X;
	return m;
}

/* An mm error as the ABI's; out of frames because of the task's quota
 * (the charge hook marked the thread) is E_QUOTA, not E_NOMEM. */
static int mm_to_err(int e)
{
	struct thread *me = cur_thread();
	switch (e) {
	case MM_OK: return 0;
	case MM_EEXIST: case MM_EMAPPED: return -E_EXIST;
	case MM_EPROT: return -E_PERM;  /* decode checked prot: only a mapping's limits refuse */
	case MM_ENOMEM:
		if (me->quota_refused) {
			me->quota_refused = 0;
			return -E_QUOTA;
		}
		return -E_NOMEM;
	default: return -E_INVAL;
	}
}

static int w_and_x(uint32_t prot)
{
	return (prot & (PROT_W | PROT_X)) == (PROT_W | PROT_X);
}

/* ROP_EVICT under the cursor: the 4 KiB page at op->va must be mapped
 * (not COW) and its frame referenced by nothing but this mapping (else a
 * frame cap to it would reach memory others share: E_BUSY). The caller
 * pays for the frame from now on (E_QUOTA if it has no room; checked
 * before anything changes); the mapping's reference becomes *pa's, and
 * *rights the rights of the frame cap it becomes (no more than the
 * mapping's limits allowed). */
static int evict(struct task *t, struct mm_cursor *c, struct region_op *op, uint64_t *pa,
		 unsigned *rights)
{
	struct mm_info info;
	int r = mm_to_err(mm_query(c, op->va, &info));
	if (r)
		return r;
	if (info.kind != MM_MAPPED)
		return -E_NOENT;
	if (info.level != 1)
		return -E_INVAL;
	if (uvm_frame_refs(info.pa) != 1)
		return -E_BUSY;
	struct task *owner = uvm_frame_owner(info.pa);
	int charged = owner != t;
	if (charged && quota_charge_frames(t, 1))
		return -E_QUOTA;
	r = mm_to_err(mm_take(c, op->va, &info));
	if (r) {
		if (charged)
			quota_release_frames(t, 1);
		return r;
	}
	if (charged)
		uvm_frame_recharge(info.pa, t);   /* refunds the old owner */
	uvm_frame_unmapped(info.pa);
	op->out_kind = info.kind;
	op->out_prot = (info.prot & 7) | (info.accessed ? QF_ACCESSED : 0) | (info.dirty ? QF_DIRTY : 0) |
		       limit_flags(info.limits);
	op->out_tag = 0;
	*pa = info.pa;
	*rights = R_READ | ((info.limits & MM_MAP_NOWRITE) ? 0 : R_WRITE) |
		  ((info.limits & MM_MAP_NOSHARE) ? 0 : R_SHARE);
	return 0;
}

/* Needs: ops in kernel memory, 1 <= n <= REGION_MAX_OPS; no lock held
 * but possibly mk_lock (nothing here takes it unless an EVICT succeeds:
 * the test region_txn_no_mk_lock holds it). Returns -E_* when decode
 * refuses (nothing changed), else the number of ops that succeeded, each
 * op's result and outputs written into ops[]. */
long region_txn(struct task *t, long slot, uint64_t lo, uint64_t hi, struct region_op *ops, long n)
{
	uint64_t frame_pa[REGION_MAX_OPS];
	uint8_t counted[REGION_MAX_OPS];    /* MAP: the frame's map count was taken at decode */
	uint8_t limits[REGION_MAX_OPS];     /* MAP: MM_MAP_* limits from the frame cap's rights */
	if ((lo | hi) & (PAGE_SIZE - 1) || lo >= hi)
		return -E_INVAL;

	/* Decode, under our CSpace lock, not mk_lock: a map, unmap or protect
	 * on one hart does not wait for IPC or cap work on another. */
	int err = 0;
	auth_read_lock();
	unsigned long f = cspace_decode_lock(t);
	struct cap *rc = cap_lookup(t, slot, CAP_REGION, 0, &err);
	struct task *target = rc ? rc->o.task : NULL;
	if (rc && (lo < rc->lo || hi > rc->hi))
		err = -E_RANGE;
	for (long i = 0; i < n; i++)
		frame_pa[i] = 0, counted[i] = 0, limits[i] = 0;
	for (long i = 0; !err && i < n; i++) {
		struct region_op *op = &ops[i];
		unsigned need = op_right(op->op);
		int ranged = op->op == ROP_MARK || op->op == ROP_UNMAP || op->op == ROP_MARK_INVALID ||
			     op->op == ROP_MARK_PAGER || op->op == ROP_MARK_SWAPPED || op->op == ROP_PROTECT;
		/* ops that give pages permissions: R needed, W^X, within the cap's page rights */
		int gives = op->op == ROP_MARK || op->op == ROP_MARK_PAGER || op->op == ROP_PROTECT ||
			    op->op == ROP_MAP || (op->op == ROP_MARK_SWAPPED && op->prot);
		uint32_t pmask = op->op == ROP_MAP ? 15u : 7u;
		if (!need)
			err = -E_INVAL;
		else if ((rc->rights & need) != need)
			err = -E_PERM;
		else if (op->va & (PAGE_SIZE - 1))
			err = -E_INVAL;
		else if (op->va < lo || op->va >= hi)
			err = -E_RANGE;
		else if (ranged && (!op->len || (op->len & (PAGE_SIZE - 1)) || op->len > hi - op->va))
			err = -E_RANGE;
		else if (gives && (!(op->prot & PROT_R) || (op->prot & ~pmask) || w_and_x(op->prot)))
			err = -E_INVAL;
		else if (gives && (op->prot & 7u & ~page_rights(rc->rights)))
			err = -E_PERM;
		else if ((op->op == ROP_MARK_PAGER || op->op == ROP_MARK_SWAPPED) &&
			 (op->arg < 0 || (uint64_t)op->arg > MM_STATUS_ARG_MAX))
			err = -E_INVAL;
		else if (op->op == ROP_EVICT) {
			err = cap_slot_check(t, op->arg);
			for (long j = 0; !err && j < i; j++)
				if (ops[j].op == ROP_EVICT && ops[j].arg == op->arg)
					err = -E_EXIST;
		} else if (op->op == ROP_MAP) {
			/* COW needs only read access to the frame: writes go to a copy. */
			unsigned fr = ((op->prot & PROT_W) && !(op->prot & PROT_COW) ? R_WRITE : 0) | R_READ;
			struct cap *fc = cap_lookup(t, op->arg, CAP_FRAME, 0, &err);
			if (fc && (fc->rights & fr) != fr)
				err = -E_PERM;
			else if (fc && !(err = uvm_frame_map_begin(fc->o.pa, fc->rights & R_SHARE))) {
				frame_pa[i] = fc->o.pa;
				counted[i] = 1;
				limits[i] = (uint8_t)map_limits(fc->rights, op->prot);
			}
		}
	}
	if (err) {
		for (long i = 0; i < n; i++)
			if (counted[i])
				uvm_frame_unmapped(frame_pa[i]);
		cspace_decode_unlock(t, f);
		auth_read_unlock();
		return err;
	}
	/* Hold what the ops need across the transaction: the frames (their
	 * caps may go once the lock drops) and the target's address space. */
	for (long i = 0; i < n; i++)
		if (frame_pa[i])
			uvm_frame_get(frame_pa[i]);
	cspace_decode_unlock(t, f);
	err = task_txn_try_begin(target);
	int began = !err;
	/* The CSpace chunks of the ROP_EVICT slots, after every other check
	 * and all or none: a frame an eviction takes then always finds its
	 * slot's chunk there. */
	struct cchunk *spare[REGION_MAX_OPS];
	for (long i = 0; i < n; i++)
		spare[i] = NULL;
	for (long i = 0; !err && i < n; i++) {
		int again = 0;      /* an earlier op made this slot's chunk ready */
		for (long j = 0; j < i && ops[i].arg >= CSPACE_FIXED_SLOTS; j++)
			again |= spare[j] && (ops[j].arg - CSPACE_FIXED_SLOTS) / CCHUNK_SLOTS ==
						     (ops[i].arg - CSPACE_FIXED_SLOTS) / CCHUNK_SLOTS;
		if (ops[i].op == ROP_EVICT && !again)
			err = cspace_prepare(t, ops[i].arg, &spare[i]);
	}
	for (long i = 0; i < n; i++) {
		if (err)
			cspace_unprepare(t, spare[i]);
		else if (spare[i])
			cspace_commit(t, ops[i].arg, spare[i]);
	}
	if (err) {
		if (began)
			task_txn_end(target);
		for (long i = 0; i < n; i++)
			if (frame_pa[i]) {
				uvm_frame_unmapped(frame_pa[i]);
				uvm_frame_put(frame_pa[i]);
			}
		auth_read_unlock();
		return err;
	}

	/* Perform. */
	struct mm_cursor c;
	long done = 0;
	int code = 0;
	cur_thread()->quota_refused = 0;
	uint64_t evicted[REGION_MAX_OPS];
	unsigned evicted_rights[REGION_MAX_OPS];
	err = mm_to_err(mm_lock(&c, &target->as, lo, hi));
	for (long i = 0; i < n; i++) {
		struct region_op *op = &ops[i];
		int r = err;
		evicted[i] = 0;
		evicted_rights[i] = 0;
		if (!err) {
			struct mm_info info;
			struct mm_status st = { 0 };
			switch (op->op) {
			case ROP_QUERY:
				r = mm_to_err(mm_query(&c, op->va, &info));
				if (!r)
					report(op, &info);
				break;
			case ROP_AGE:
				r = mm_to_err(mm_age(&c, op->va, &info));
				if (!r)
					report(op, &info);
				break;
			case ROP_MAP:
				r = mm_to_err(mm_map(&c, op->va, frame_pa[i], 1, to_mm_prot(op->prot),
						     ((op->prot & PROT_COW) ? MM_MAP_COW : 0) | limits[i]));
				if (!r) {
					frame_pa[i] = 0;    /* the mapping owns the reference now */
					counted[i] = 0;     /* and the map count is its */
				}
				if (!r && (op->prot & PROT_X))
					code = 1;
				break;
			case ROP_MARK_PAGER:
			case ROP_MARK_SWAPPED:
				st.kind = op->op == ROP_MARK_PAGER ? MM_PAGER : MM_SWAPPED;
				st.prot = (uint8_t)(op->prot ? to_mm_prot(op->prot) & ~MM_PROT_U : 0);
				st.arg = (uint64_t)op->arg;
				r = mm_to_err(mm_mark(&c, op->va, op->len, &st));
				break;
			case ROP_PROTECT:
				r = mm_to_err(mm_protect(&c, op->va, op->len,
							 to_mm_prot(op->prot) & ~MM_PROT_U));
				if (!r && (op->prot & PROT_X))
					code = 1;
				break;
			case ROP_EVICT:
				r = evict(t, &c, op, &evicted[i], &evicted_rights[i]);
				break;
			case ROP_MARK:
				st.kind = MM_RESERVED;
				st.prot = (uint8_t)(to_mm_prot(op->prot) & ~MM_PROT_U);
				r = mm_to_err(mm_mark(&c, op->va, op->len, &st));
				break;
			case ROP_MARK_INVALID:
				st.kind = MM_INVALID;
				r = mm_to_err(mm_mark(&c, op->va, op->len, &st));
				break;
			case ROP_UNMAP:
				r = mm_to_err(mm_unmap(&c, op->va, op->len));
				break;
			}
		}
		op->result = r;
		if (!r)
			done++;
	}
	if (!err)
		mm_release(&c);
	if (code)
		uvm_icache_sync(target);
	for (long i = 0; i < n; i++) {
		if (counted[i])
			uvm_frame_unmapped(frame_pa[i]);
		if (frame_pa[i])
			uvm_frame_put(frame_pa[i]);
	}
	/* Evicted frames become frame caps in the slots decode found empty. A
	 * thread of ours that filled one since loses that page (its frame is
	 * freed) and the op reports E_EXIST. */
	for (long i = 0; i < n; i++) {
		if (!evicted[i])
			continue;
		int e = 0;
		unsigned long fl = spin_lock_irqsave(&mk_lock);
		struct cap *d = cap_slot_free(t, ops[i].arg, &e);
		if (d) {
			struct cap nc = { .type = CAP_FRAME, .rights = evicted_rights[i],
					  .o.pa = evicted[i] };
			cap_install(d, &nc, NULL);
		}
		spin_unlock_irqrestore(&mk_lock, fl);
		if (e) {
			uvm_frame_put(evicted[i]);
			ops[i].result = e;
			done--;
		}
	}
	task_txn_end(target);
	auth_read_unlock();
	return done;
}

long sys_region_txn(struct task *t, long slot, uint64_t lo, uint64_t hi, uint64_t uops, long n)
{
	struct region_op ops[REGION_MAX_OPS];
	if (n < 1 || n > REGION_MAX_OPS)
		return -E_INVAL;
	if (copy_from_user(ops, uops, (size_t)n * sizeof ops[0]))
		return -E_FAULT;
	long done = region_txn(t, slot, lo, hi, ops, n);
	if (done >= 0 && copy_to_user(uops, ops, (size_t)n * sizeof ops[0]))
		return -E_FAULT;
	return done;
}
