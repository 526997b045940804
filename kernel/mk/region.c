/* Region-capability transactions: one syscall carries a region cap, the
 * range to lock and up to REGION_MAX_OPS operations, and applies every op
 * or none. Decode checks the caps (region_decode.c); one cursor then locks
 * [lo, hi) of the target address space, the plan checks every op against
 * the range as the ops before it will leave it and reserves every frame
 * they may take (region_plan.c); then the ops run in order, and none can
 * refuse; releasing the cursor commits them. A refusal returns its -E_*
 * with that op's `result` set to it and every other op's to ROP_NOT_DONE.
 *
 * Rules kept here: no user mapping or reservation is both writable and
 * executable (W^X); a query never returns a physical address; PT pages a
 * transaction needs are charged to the target's frame quota (E_QUOTA when
 * they do not fit); the region cap's authority holds from decode to
 * commit (the revoke barrier: a delete or revoke of the cap waits for the
 * transaction); code mapped executable is made visible to instruction
 * fetch on every hart before the call returns.
 *
 * Frame rights bind a mapping for its whole life: a MAP through a frame
 * cap without R_WRITE (not COW) is made MM_MAP_NOWRITE, so no later
 * PROTECT can make it writable (E_PERM); one through a cap without
 * R_SHARE is made MM_MAP_NOSHARE, so clone refuses to put the frame into
 * a second address space; EVICT of such a page gives a frame cap with no
 * more rights than those limits leave, and moves the frame's quota charge
 * to the caller. */
#include "region.h"
#include "pagewait.h"
#include "mobj.h"
#include "uvm_frames.h"

/* ROP_EVICT, planned: the page at op->va is a 4 KiB mapping whose frame
 * only it references. Unmaps it; the mapping's reference becomes *pa's,
 * *rights those of the frame cap it becomes. */
static int evict(struct txn *x, long i, struct mm_cursor *c, uint64_t *pa, unsigned *rights)
{
	struct region_op *op = &x->ops[i];
	struct mm_info info;
	int r = err_from_mm(mm_take(c, op->va, &info));
	if (r)
		return r;
	if (x->charged[i]) {
		uvm_frame_recharge(info.pa, x->t);   /* refunds the old owner */
		x->charged[i] = 0;
	}
	uvm_frame_unmapped(info.pa);
	report_info(op, &info);
	*pa = info.pa;
	*rights = R_READ | ((info.limits & MM_MAP_NOWRITE) ? 0 : R_WRITE) |
		  ((info.limits & MM_MAP_NOSHARE) ? 0 : R_SHARE);
	return 0;
}

/* Op i, a planned MAP of a device window: its pages one by one (4 KiB
 * leaves: the limits ride on each, and unmap, query and clone see plain
 * pages). 0, or where the plan cannot vouch for it (protocol vma out of
 * memory) the error, with the pages it mapped taken down again. */
static int map_device(struct txn *x, long i, struct mm_cursor *c)
{
	const struct region_op *op = &x->ops[i];
	unsigned prot = txn_dev_prot(x, op->prot);
	for (uint64_t off = 0; off < x->dev_len[i]; off += PAGE_SIZE) {
		int e = mm_map(c, op->va + off, x->dev_pa[i] + off, 1, prot, x->limits[i]);
		if (e) {
			if (off)
				mm_unmap(c, op->va, off);    /* registers: nothing is freed */
			return err_from_mm(e);
		}
	}
	return 0;
}

/* A mark op; kind is TXN_MARK_KIND of its case's constant, so the
 * status folds to what that case needs (the map path's cost). */
static inline int mark(struct txn *x, struct mm_cursor *c, const struct region_op *op,
		       unsigned kind)
{
	struct mm_status st;
	txn_mark_status(op, kind, &st);
	int r = err_from_mm(mm_mark(c, op->va, op->len, &st));
	if (!r)      /* a memory object's mapping there is no more */
		mobj_unmapped(x->target, op->va, op->len);
	return r;
}

/* Op i, planned, under the cursor: 0, or -E_* where the plan cannot
 * vouch for it (protocol vma out of memory). *code: it mapped code. */
static int perform(struct txn *x, long i, struct mm_cursor *c, uint64_t *evicted,
		   unsigned *evicted_rights, int *code)
{
	struct region_op *op = &x->ops[i];
	struct mm_info info;
	int r = 0;
	switch (op->op) {
	case ROP_QUERY:
		if (!(r = err_from_mm(mm_query(c, op->va, &info))))
			report_info(op, &info);
		break;
	case ROP_AGE:
		if (!(r = err_from_mm(mm_age(c, op->va, &info))))
			report_info(op, &info);
		break;
	case ROP_MAP:
		if (x->dev_len[i]) {
			r = map_device(x, i, c);
			break;
		}
		r = err_from_mm(mm_map(c, op->va, x->frame_pa[i], 1, prot_to_mm(op->prot),
				       txn_map_flags(x, i)));
		if (!r) {
			x->frame_pa[i] = 0;    /* the mapping owns the reference now */
			x->counted[i] = 0;     /* and the map count is its */
			*code |= (op->prot & PROT_X) != 0;
		}
		break;
	case ROP_MARK:
		r = mark(x, c, op, TXN_MARK_KIND(ROP_MARK));
		break;
	case ROP_MARK_INVALID:
		r = mark(x, c, op, TXN_MARK_KIND(ROP_MARK_INVALID));
		break;
	case ROP_MARK_PAGER:
		r = mark(x, c, op, TXN_MARK_KIND(ROP_MARK_PAGER));
		break;
	case ROP_MARK_SWAPPED:
		r = mark(x, c, op, TXN_MARK_KIND(ROP_MARK_SWAPPED));
		break;
	case ROP_PROTECT:
		r = err_from_mm(mm_protect(c, op->va, op->len, txn_page_prot(op->prot)));
		*code |= !r && (op->prot & PROT_X);
		break;
	case ROP_EVICT:
		r = evict(x, i, c, evicted, evicted_rights);
		break;
	case ROP_CLEAN: {
		bool dirty = false;
		if (!(r = err_from_mm(mm_clean(c, op->va, op->len, &dirty))))
			op->out_prot = dirty ? QF_DIRTY : 0;
		break;
	}
	case ROP_UNMAP:
		r = err_from_mm(mm_unmap(c, op->va, op->len));
		if (!r)
			mobj_unmapped(x->target, op->va, op->len);
		break;
	case ROP_MAP_OBJ: {
		struct mm_status st;
		txn_obj_status(x, i, &st);
		if (!(r = err_from_mm(mm_mark(c, op->va, op->len, &st)))) {
			mobj_map_attach(x->rec[i], x->target, op->va, op->len,
					(uint32_t)ROP_OBJ_OFF(op->arg), st.prot);
			x->rec[i] = NULL;    /* the mapping's now */
		}
		break;
	}
	}
	return r;
}

/* Evicted frames become frame caps in the slots decode found empty. A
 * thread of the caller that filled one since loses that page (its frame
 * is freed): the op reports E_EXIST, the only result a committed
 * transaction can carry. */
static void evicted_install(struct txn *x, const uint64_t *evicted, const unsigned *rights)
{
	for (long i = 0; i < x->n; i++) {
		if (!evicted[i])
			continue;
		int e = 0;
		unsigned long fl = spin_lock_irqsave(&mk_lock);
		struct cap *d = cap_slot_free(x->t, x->ops[i].arg, &e);
		if (d) {
			struct cap nc = { .type = CAP_FRAME, .rights = rights[i], .o.pa = evicted[i] };
			cap_install(d, &nc, NULL);
		}
		spin_unlock_irqrestore(&mk_lock, fl);
		if (e) {
			uvm_frame_put(evicted[i]);
			x->ops[i].result = e;
		}
	}
}

/* After the commit of x: threads waiting on a page a MAP, a MARK
 * (reserved: filled at the retry) or a PROTECT covered wake and retry
 * their access (asynchronous faults, pagewait.c), in one pass. */
static void txn_wake(const struct txn *x)
{
	if (!pagewait_pending(x->target))    /* the common case: one fence, one load */
		return;
	struct pw_range r[REGION_MAX_OPS];
	int n = 0;
	for (long i = 0; i < x->n; i++) {
		const struct region_op *op = &x->ops[i];
		if (op->op == ROP_MAP)
			r[n++] = (struct pw_range){ op->va, op->va + (x->dev_len[i] ? x->dev_len[i] : PAGE_SIZE) };
		else if (op->op == ROP_MARK || op->op == ROP_PROTECT)
			r[n++] = (struct pw_range){ op->va, op->va + op->len };
	}
	if (n)
		pagewait_wake(x->target, r, n, 0);
}

/* The results of a transaction that failed with err: the refusing op's
 * is err, every other's ROP_NOT_DONE. */
static long refused(struct txn *x, int err)
{
	for (long i = 0; i < x->n; i++)
		x->ops[i].result = i == x->bad ? err : ROP_NOT_DONE;
	return err;
}

/* Needs: ops in kernel memory, 1 <= n <= REGION_MAX_OPS; no lock held
 * but possibly mk_lock (nothing here takes it unless an EVICT succeeds:
 * the test region_txn_no_mk_lock holds it). Returns n with every op's
 * result 0 and outputs written, or -E_* with nothing changed and the
 * results as refused() leaves them. */
long region_txn(struct task *t, long slot, uint64_t lo, uint64_t hi, struct region_op *ops, long n)
{
	struct txn x;   /* not zeroed whole: decode fills what it reads, for n ops */
	x.t = t, x.target = NULL, x.lo = lo, x.hi = hi, x.ops = ops, x.n = n, x.frames = 0;
	int err = txn_decode(&x, slot);
	if (err)
		return refused(&x, err);
	struct mm_cursor c;
	cur_thread()->quota_refused = 0;
	err = err_from_mm(mm_lock(&c, &x.target->as, lo, hi));
	if (err) {
		txn_undecode(&x);
		return refused(&x, err);
	}
	/* One op is atomic by itself: only an eviction (its quota charge), a
	 * device MAP (many pages) or an executable PROTECT (no device page
	 * may become executable) needs planning then. */
	int planned = n > 1 || ops[0].op == ROP_EVICT || x.must_plan;
	err = planned ? txn_plan(&x, &c) : 0;
	uint64_t evicted[REGION_MAX_OPS];
	unsigned evicted_rights[REGION_MAX_OPS];
	int code = 0;
	for (long i = 0; i < n; i++) {
		evicted[i] = 0;
		ops[i].result = 0;
	}
	int ran = 0;       /* an op refused after the plan passed */
	for (long i = 0; !err && i < n; i++)
		if ((err = perform(&x, i, &c, &evicted[i], &evicted_rights[i], &code)))
			x.bad = i, ran = 1;
	if (err && planned)
		txn_unplan(&x);
	if (planned)
		mm_txn_finish(&c);
	mm_release(&c);
	if (code)
		uvm_icache_sync(x.target);
	if (!err)
		txn_wake(&x);     /* while decode still holds the target */
	txn_undecode(&x);
	mobj_zombies_reap();     /* records an unmap detached */
	evicted_install(&x, evicted, evicted_rights);
	if (!err)
		return n;
	refused(&x, err);
	/* Only where the plan cannot vouch for an op (protocol vma out of
	 * memory) does one refuse after others ran: they report 0. */
	for (long i = 0; ran && i < x.bad; i++)
		ops[i].result = 0;
	return err;
}

long sys_region_txn(struct task *t, long slot, uint64_t lo, uint64_t hi, uint64_t uops, long n)
{
	struct region_op ops[REGION_MAX_OPS];
	if (n < 1 || n > REGION_MAX_OPS)
		return -E_INVAL;
	if (copy_from_user(ops, uops, (size_t)n * sizeof ops[0]))
		return -E_FAULT;
	long r = region_txn(t, slot, lo, hi, ops, n);
	if (copy_to_user(uops, ops, (size_t)n * sizeof ops[0]))
		return -E_FAULT;
	return r;
}
