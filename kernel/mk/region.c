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
 * instruction fetch on every hart before the call returns. */
#include "mk.h"
#include "kstring.h"
#include "riscv.h"

static unsigned op_right(uint32_t op)
{
	switch (op) {
	case ROP_QUERY: return R_QUERY;
	case ROP_MAP: return R_MAP;
	case ROP_MARK: return R_MARK;
	case ROP_MARK_INVALID: return R_MARK;
	case ROP_UNMAP: return R_UNMAP;
	}
	return 0;
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

long sys_region_txn(struct task *t, long slot, uint64_t lo, uint64_t hi, uint64_t uops, long n)
{
	struct region_op ops[REGION_MAX_OPS];
	uint64_t frame_pa[REGION_MAX_OPS];
	if (n < 1 || n > REGION_MAX_OPS)
		return -E_INVAL;
	if (copy_from_user(ops, uops, (size_t)n * sizeof ops[0]))
		return -E_FAULT;
	if ((lo | hi) & (PAGE_SIZE - 1) || lo >= hi)
		return -E_INVAL;

	/* Decode. */
	int err = 0;
	auth_read_lock();
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cap *rc = cap_lookup(t, slot, CAP_REGION, 0, &err);
	struct task *target = rc ? rc->o.task : NULL;
	if (rc && (lo < rc->lo || hi > rc->hi))
		err = -E_RANGE;
	if (!err && target->state != TASK_ALIVE)
		err = -E_DEAD;
	for (long i = 0; !err && i < n; i++) {
		struct region_op *op = &ops[i];
		unsigned need = op_right(op->op);
		frame_pa[i] = 0;
		if (!need)
			err = -E_INVAL;
		else if ((rc->rights & need) != need)
			err = -E_PERM;
		else if (op->va & (PAGE_SIZE - 1))
			err = -E_INVAL;
		else if (op->va < lo || op->va >= hi)
			err = -E_RANGE;
		else if (op->op == ROP_MARK || op->op == ROP_UNMAP || op->op == ROP_MARK_INVALID) {
			if (!op->len || (op->len & (PAGE_SIZE - 1)) || op->len > hi - op->va)
				err = -E_RANGE;
			else if (op->op == ROP_MARK && (!(op->prot & PROT_R) || (op->prot & ~7u) ||
							w_and_x(op->prot)))
				err = -E_INVAL;
		} else if (op->op == ROP_MAP) {
			/* COW needs only read access to the frame: writes go to a copy. */
			unsigned fr = ((op->prot & PROT_W) && !(op->prot & PROT_COW) ? R_WRITE : 0) | R_READ;
			struct cap *fc = cap_lookup(t, op->arg, CAP_FRAME, 0, &err);
			if (fc && (!(op->prot & PROT_R) || (op->prot & ~15u) || w_and_x(op->prot)))
				err = -E_INVAL;
			else if (fc && (fc->rights & fr) != fr)
				err = -E_PERM;
			else if (fc)
				frame_pa[i] = fc->o.pa;
		}
	}
	if (err) {
		spin_unlock_irqrestore(&mk_lock, f);
		auth_read_unlock();
		return err;
	}
	/* Hold what the ops need across the transaction. */
	target->as_users++;
	for (long i = 0; i < n; i++)
		if (frame_pa[i])
			uvm_frame_get(frame_pa[i]);
	spin_unlock_irqrestore(&mk_lock, f);

	/* Perform. */
	struct mm_cursor c;
	long done = 0;
	int code = 0;
	cur_thread()->quota_refused = 0;
	err = mm_to_err(mm_lock(&c, &target->as, lo, hi));
	for (long i = 0; i < n; i++) {
		struct region_op *op = &ops[i];
		int r = err;
		if (!err) {
			struct mm_info info;
			struct mm_status st = { 0 };
			switch (op->op) {
			case ROP_QUERY:
				r = mm_to_err(mm_query(&c, op->va, &info));
				op->out_kind = info.kind;
				op->out_prot = info.prot & 7;
				op->out_tag = 0;    /* no physical address ever reaches user space */
				break;
			case ROP_MAP:
				r = mm_to_err(mm_map(&c, op->va, frame_pa[i], 1, to_mm_prot(op->prot),
						     (op->prot & PROT_COW) ? MM_MAP_COW : 0));
				if (!r)
					frame_pa[i] = 0;    /* the mapping owns the reference now */
				if (!r && (op->prot & PROT_X))
					code = 1;
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
	for (long i = 0; i < n; i++)
		if (frame_pa[i])
			uvm_frame_put(frame_pa[i]);
	__atomic_sub_fetch(&target->as_users, 1, __ATOMIC_RELEASE);
	auth_read_unlock();
	if (copy_to_user(uops, ops, (size_t)n * sizeof ops[0]))
		return -E_FAULT;
	return done;
}
