/* Mappings of memory objects: ROP_MAP_OBJ's part of a region
 * transaction, the reverse map (one record per mapping: address space,
 * va, offset, pages; range-based, never per page), the range operations
 * that reach every mapping (SYS_MOBJ_OP) and the teardown of records.
 *
 * A record is the mapping as made. What a region op does to its pages
 * afterwards (a map or supply over some of them) is not tracked: every range
 * operation checks each page under the cursor before it acts (an object
 * status, or a mapping of the very frame the object holds at that
 * offset), so a record that no longer matches its pages is harmless. An
 * unmap (ROP_UNMAP), a mark or a new ROP_MAP_OBJ trims the records it
 * cuts at an end, splits one it cuts in the middle in two (while a record
 * is free) and detaches the ones it covers. Detached records (zombies) keep their object reference until
 * mobj_zombies_reap drops it with no cursor held (dropping the last one
 * may free the object and put its endpoint, which takes locks a cursor
 * holder may not). */
#include "mobj.h"
#include "region.h"
#include "region_supply.h"
#include "frame.h"
#include "pagewait.h"

struct mobj_map mobj_maps[MOBJ_MAPS_MAX];
unsigned mobj_nzombies;        /* mobj_lock's; read without it by mobj_zombies_reap */
/* Attached records per task slot (mobj_lock's; read without it by
 * mobj_unmapped, whose caller holds a cursor of that task: a record of
 * its range cannot appear meanwhile), so an unmap in a task that maps no
 * object costs one load (inline, mobj.h). */
uint32_t mobj_task_recs[MAX_TASKS];

/* The status argument of a mapping of o whose page va shows object page
 * off (mobj.h: slot | gen | bias). */
uint64_t mobj_status_arg(const struct mobj *o, uint64_t va, uint32_t off)
{
	uint64_t bias = ((uint64_t)off - (va >> PAGE_SHIFT)) & ((1u << MOBJ_OFF_BITS) - 1);
	return (uint64_t)(o - mobjs) << (MOBJ_OFF_BITS + MOBJ_GEN_BITS) |
	       (uint64_t)(o->gen & ((1u << MOBJ_GEN_BITS) - 1)) << MOBJ_OFF_BITS | bias;
}

/* The status a record's not-yet-mapped pages carry. */
void mobj_status_of(const struct mobj_map *r, struct mm_status *st)
{
	st->kind = MM_SWAPPED;
	st->prot = r->prot;
	st->dev = MOBJ_DEV;
	st->arg = mobj_status_arg(r->o, r->va, r->off);
}

/* A free record for a mapping of o into t (the caller holds a reference
 * on o; the record takes one more), not attached yet; NULL with *err
 * -E_QUOTA (t has MOBJ_MAPS_PER_TASK mappings) or -E_NOMEM (none left). */
struct mobj_map *mobj_map_reserve(struct mobj *o, struct task *t, int *err)
{
	struct mobj_map *r = NULL;
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	*err = mobj_task_recs[t->id] >= MOBJ_MAPS_PER_TASK ? -E_QUOTA : -E_NOMEM;
	for (int i = 0; i < MOBJ_MAPS_MAX && !r && *err == -E_NOMEM; i++)
		if (!mobj_maps[i].o)
			r = &mobj_maps[i];
	if (r) {
		*r = (struct mobj_map){ .o = o };
		mobj_get(o);
		*err = 0;
	}
	spin_unlock_irqrestore(&mobj_lock, f);
	return r;
}

/* Needs: no cursor. Give back a record mobj_map_reserve gave and that
 * was never attached. */
void mobj_map_unreserve(struct mobj_map *r)
{
	struct mobj *o = r->o;
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	r->o = NULL;
	spin_unlock_irqrestore(&mobj_lock, f);
	mobj_put(o, 0);
}

/* Needs the cursor over [va, va + len) of t, whose pages now carry the
 * record's status. The record describes that mapping from now on; the
 * mappings it replaced there end. */
void mobj_map_attach(struct mobj_map *r, struct task *t, uint64_t va, uint64_t len, uint32_t off,
		     unsigned prot)
{
	mobj_unmapped(t, va, len);
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	r->t = t;
	r->tgen = t->gen;
	mobj_task_recs[t->id]++;
	r->va = va;
	r->off = off;
	r->npages = (uint32_t)(len / PAGE_SIZE);
	r->prot = (uint8_t)prot;
	spin_unlock_irqrestore(&mobj_lock, f);
}

/* Needs mobj_lock. Detach r: its reference is dropped by the next reap. */
static void detach(struct mobj_map *r)
{
	mobj_task_recs[r->t->id]--;
	r->t = NULL;
	r->zombie = 1;
	mobj_nzombies++;
}

/* Needs mobj_lock; [va, end) lies strictly inside r's range. r keeps
 * the part below va, a free record (with its own object reference) takes
 * the part from end. With no record free, r stays whole: what it no
 * longer maps is checked page by page anyway (see the top). */
static void split(struct mobj_map *r, uint64_t va, uint64_t end)
{
	struct mobj_map *n = NULL;
	for (int i = 0; i < MOBJ_MAPS_MAX && !n; i++)
		if (!mobj_maps[i].o)
			n = &mobj_maps[i];
	if (!n)
		return;
	uint32_t head = (uint32_t)((va - r->va) / PAGE_SIZE), skip = (uint32_t)((end - r->va) / PAGE_SIZE);
	*n = *r;
	n->va = end;
	n->off = r->off + skip;
	n->npages = r->npages - skip;
	r->npages = head;
	mobj_get(n->o);
	mobj_task_recs[r->t->id]++;
}

/* Needs the cursor over [va, va + len) of t, just unmapped. Records of t
 * it covers are detached, ones it cuts at an end trimmed to what is left. */
void mobj_unmapped_records(struct task *t, uint64_t va, uint64_t len)
{
	uint64_t end = va + len;
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	for (int i = 0; i < MOBJ_MAPS_MAX; i++) {
		struct mobj_map *r = &mobj_maps[i];
		if (!r->o || r->t != t || r->tgen != t->gen)
			continue;
		uint64_t rend = r->va + (uint64_t)r->npages * PAGE_SIZE;
		if (rend <= va || end <= r->va)
			continue;
		if (va <= r->va && rend <= end) {
			detach(r);
		} else if (va <= r->va) {         /* the head went */
			uint32_t d = (uint32_t)((end - r->va) / PAGE_SIZE);
			r->va = end;
			r->off += d;
			r->npages -= d;
		} else if (rend <= end) {          /* the tail went */
			r->npages = (uint32_t)((va - r->va) / PAGE_SIZE);
		} else {                           /* the middle: two mappings now */
			split(r, va, end);
		}
	}
	spin_unlock_irqrestore(&mobj_lock, f);
}

void mobj_zombies_reap_all(void)
{
	for (int i = 0; i < MOBJ_MAPS_MAX; i++) {
		struct mobj *o = NULL;
		unsigned long f = spin_lock_irqsave(&mobj_lock);
		struct mobj_map *r = &mobj_maps[i];
		if (r->o && r->zombie) {
			o = r->o;
			r->o = NULL;
			r->zombie = 0;
			mobj_nzombies--;
		}
		spin_unlock_irqrestore(&mobj_lock, f);
		if (o)
			mobj_put(o, 0);
	}
}

/* Needs: mk_lock NOT held; t's address space torn down. */
void mobj_task_gone(struct task *t)
{
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	for (int i = 0; i < MOBJ_MAPS_MAX; i++)
		if (mobj_maps[i].o && mobj_maps[i].t == t)
			detach(&mobj_maps[i]);
	spin_unlock_irqrestore(&mobj_lock, f);
	mobj_zombies_reap();
}

/* --- range operations --- */

#define OP_CHUNK 512u      /* object pages per pass: one frame of index words */

/* Is the page info describes a mapping of the frame whose index word
 * was e? */
static int maps_frame(const struct mm_info *info, uint64_t e)
{
	return e && info->kind == MM_MAPPED && info->level == 1 &&
	       info->pa == (e & ~(uint64_t)(PAGE_SIZE - 1));
}

/* Needs the cursor over [a, b) of a mapping of record r: apply op to the
 * run [a, b) of pages that map the object's frames. */
static int apply_run(struct mm_cursor *c, const struct mobj_map *r, uint64_t op, uint64_t a,
		     uint64_t b)
{
	if (op == MOBJ_WRPROTECT)
		return err_from_mm(mm_protect(c, a, b - a, r->prot & ~MM_PROT_W));
	struct mm_status st;
	mobj_status_of(r, &st);
	int e = mm_unmap(c, a, b - a);
	return err_from_mm(e ? e : mm_mark(c, a, b - a, &st));
}

#define PIECES 8      /* mappings of one object met in one locked range */

/* Needs the cursor over the pieces' range. Apply op to the pages of
 * [a, b) that map, through the mapping pc, an object page of this pass
 * (base .. base + n) with the frame it had (list). */
static int apply_piece(struct mm_cursor *c, const struct mobj_map *pc, uint64_t op, uint64_t a,
		       uint64_t b, const uint64_t *list, uint32_t base, uint32_t n)
{
	int err = 0;
	uint64_t run = 0;
	for (uint64_t va = a; !err && va <= b; va += PAGE_SIZE) {
		struct mm_info info;
		uint64_t off = pc->off + (va - pc->va) / PAGE_SIZE;
		int match = va < b && off >= base && off < (uint64_t)base + n &&
			    !mm_query(c, va, &info) && maps_frame(&info, list[off - base]);
		if (match && !run)
			run = va;
		if (!match && run) {
			err = apply_run(c, pc, op, run, va);
			run = 0;
		}
	}
	return err;
}

/* Apply op to the mapping a copy of whose record is cp (taken under
 * mobj_lock), over its object pages [a, b); list[i] is the index word
 * object page base + i had when the pass began. One cursor over those
 * pages' range, so one commit and one flush for this address space.
 * Under the cursor the records of that range cannot change, so the
 * mappings of the object found there then (cp's record as it is now,
 * trimmed or split meanwhile, or another) are the ones acted on, each
 * page checked against the frame. Each run of pages is changed by lone
 * mm operations, each atomic by itself (every mm protocol plans its own
 * tables that way). 0, or -E_NOMEM / -E_QUOTA for a run that could not
 * be changed (the runs before it were: the op may be repeated). A
 * mapping whose task is gone is passed over. */
static int apply_map(const struct mobj_map *cp, uint64_t op, uint32_t a, uint32_t b,
		     const uint64_t *list, uint32_t base, uint32_t n)
{
	struct task *mt = cp->t;
	if (task_txn_try_begin(mt))
		return 0;
	if (mt->gen != cp->tgen) {
		task_txn_end(mt);
		return 0;
	}
	uint64_t lo = cp->va + (uint64_t)(a - cp->off) * PAGE_SIZE;
	uint64_t hi = lo + (uint64_t)(b - a) * PAGE_SIZE;
	struct mm_cursor c;
	int err = err_from_mm(mm_lock(&c, &mt->as, lo, hi));
	if (err) {
		task_txn_end(mt);
		return err;
	}
	struct mobj_map pc[PIECES];
	uint64_t pa[PIECES], pb[PIECES];
	int np = 0;
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	for (int i = 0; i < MOBJ_MAPS_MAX && np < PIECES; i++) {
		const struct mobj_map *r = &mobj_maps[i];
		if (r->o != cp->o || r->t != mt || r->tgen != cp->tgen)
			continue;
		uint64_t rend = r->va + (uint64_t)r->npages * PAGE_SIZE;
		pa[np] = r->va > lo ? r->va : lo;
		pb[np] = rend < hi ? rend : hi;
		if (pa[np] < pb[np])
			pc[np++] = *r;
	}
	spin_unlock_irqrestore(&mobj_lock, f);
	for (int i = 0; i < np && !err; i++)
		err = apply_piece(&c, &pc[i], op, pa[i], pb[i], list, base, n);
	mm_release(&c);
	task_txn_end(mt);
	return err;
}

/* Needs: no lock. One pass over object pages [base, base + n): the
 * index changed first (decommit takes the pages out, so a fault meanwhile
 * finds them absent; write-protect marks them, so a fault meanwhile maps
 * them read-only), then every mapping of them, then the frames taken out
 * dropped. */
static int op_pass(struct mobj *o, uint64_t op, uint32_t base, uint32_t n, uint64_t *list)
{
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t *e = mobj_slot(o, base + i);
		list[i] = *e;
		if (op == MOBJ_DECOMMIT && *e) {
			*e = 0;
			o->present--;
		} else if (op == MOBJ_WRPROTECT && *e) {
			*e |= MOBJ_PG_WP;
		} else if (op == MOBJ_UNPROTECT) {
			*e &= ~MOBJ_PG_WP;
		}
	}
	spin_unlock_irqrestore(&mobj_lock, f);
	int err = 0;
	for (int ri = 0; ri < MOBJ_MAPS_MAX; ri++) {
		struct mobj_map cp;
		f = spin_lock_irqsave(&mobj_lock);
		cp = mobj_maps[ri];
		spin_unlock_irqrestore(&mobj_lock, f);
		if (cp.o != o || !cp.t)
			continue;
		uint32_t a = cp.off > base ? cp.off : base;
		uint32_t b = cp.off + cp.npages < base + n ? cp.off + cp.npages : base + n;
		if (a < b) {
			int e = apply_map(&cp, op, a, b, list, base, n);
			err = err ? err : e;
		}
	}
	for (uint32_t i = 0; op == MOBJ_DECOMMIT && i < n; i++)
		if (list[i])
			uvm_frame_put(list[i] & ~(uint64_t)(PAGE_SIZE - 1));
	return err;
}

/* Needs: no lock. The op and the cap (R_CONTROL, the range inside the
 * object) checked first, with nothing changed on a refusal; then one
 * op_pass per 512 pages. The authority's read side is held throughout,
 * so a revoke of the cap waits for the op. */
long sys_mobj_op(struct task *t, long slot, uint64_t op, uint64_t off, uint64_t npages)
{
	if (op < MOBJ_INVALIDATE || op > MOBJ_KILL)
		return -E_INVAL;
	int err = 0;
	struct mobj *o = NULL;
	auth_read_lock();
	unsigned long f = cspace_decode_lock(t);
	struct cap *oc = cap_lookup(t, slot, CAP_MOBJ, R_CONTROL, &err);
	if (oc && (!npages || off >= oc->o.mobj->npages || npages > oc->o.mobj->npages - off))
		err = -E_RANGE;
	else if (oc)
		mobj_get(o = oc->o.mobj);
	cspace_decode_unlock(t, f);
	paddr_t lp = 0;
	if (!err && op == MOBJ_KILL) {
		/* refused: each waiting thread's task ends as on FAULT_KILL */
		if (!pagewait_wake_obj(o, mobj_wait_word(o->gen, off), mobj_wait_word(o->gen, off + npages),
				       -E_INVAL))
			err = -E_NOENT;
		auth_read_unlock();
		mobj_put(o, 0);
		return err;
	}
	if (!err && frame_alloc(0, &lp))
		err = -E_NOMEM;
	for (uint64_t done = 0; !err && done < npages; done += OP_CHUNK) {
		uint32_t n = npages - done < OP_CHUNK ? (uint32_t)(npages - done) : OP_CHUNK;
		err = op_pass(o, op, (uint32_t)(off + done), n, phys_to_virt(lp));
	}
	if (lp)
		frame_free(lp);
	auth_read_unlock();
	/* The pages waited on changed: unprotected, or gone (absent again, the
	 * pager hears of them anew); their threads retry. */
	if (!err && (op == MOBJ_UNPROTECT || op == MOBJ_DECOMMIT))
		pagewait_wake_obj(o, mobj_wait_word(o->gen, off), mobj_wait_word(o->gen, off + npages), 0);
	if (o)
		mobj_put(o, 0);
	return err;
}
