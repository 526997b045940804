/* Memory objects: the objects, their page index, their faults and
 * SYS_MOBJ_CREATE / SYS_MOBJ_SUPPLY (patina/mobj.h, mobj.h).
 *
 * An object is a slot of mobjs[] with a generation, a reference count
 * (caps and mapping records) and a page index: one word a page (the
 * frame's address, 0 when absent, and MOBJ_PG_WP) in whole frames charged
 * to the creator. The index holds one reference on every frame in it;
 * every mapping of a page holds one more and counts as a mapping of the
 * frame, so a frame lives while the object or any mapping holds it. */
#include "mobj.h"
#include "region_supply.h"
#include "region.h"
#include "uvm_frames.h"
#include "frame.h"
#include "pagewait.h"
#include <patina/pager.h>

spinlock_t mobj_lock = SPINLOCK_INIT_CLASS(&lock_class_mobj);
struct mobj mobjs[MOBJ_MAX];

/* Needs mobj_lock; off < o->npages. The index word of page off. */
uint64_t *mobj_slot(struct mobj *o, uint32_t off)
{
	uint64_t *frame = phys_to_virt(o->idx[off / MOBJ_IDX_PER]);
	return &frame[off % MOBJ_IDX_PER];
}

void mobj_get(struct mobj *o)
{
	__atomic_add_fetch(&o->refs, 1, __ATOMIC_RELAXED);
}

/* Needs mobj_lock; o->refs just reached 0. Every page and index frame
 * goes back and the slot is free for the next object (a new generation);
 * the endpoint reference is returned for the caller to drop. */
static struct endpoint *mobj_free(struct mobj *o)
{
	for (uint32_t off = 0; off < o->npages; off++) {
		uint64_t *e = mobj_slot(o, off);
		if (*e)
			uvm_frame_put(*e & ~(uint64_t)(PAGE_SIZE - 1));
		*e = 0;
	}
	for (uint32_t i = 0; i < MOBJ_IDX_MAX && o->idx[i]; i++) {
		uvm_frame_put(o->idx[i]);
		o->idx[i] = 0;
	}
	struct endpoint *ep = o->ep;
	o->ep = NULL;
	o->present = o->npages = 0;
	o->gen++;
	return ep;
}

/* Needs: no cursor, no mobj_lock; mk_held says whether mk_lock is held
 * (which decides how the pager's endpoint reference is dropped). Drop one
 * reference; the last frees the object. */
void mobj_put(struct mobj *o, int mk_held)
{
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	struct endpoint *ep = NULL;
	int last = __atomic_sub_fetch(&o->refs, 1, __ATOMIC_ACQ_REL) == 0;   /* gets are atomic */
	uint32_t gen = o->gen, npages = o->npages;
	if (last)
		ep = mobj_free(o);
	spin_unlock_irqrestore(&mobj_lock, f);
	/* Threads still waiting on its pages (their mappings went first)
	 * retry: their pages name no object now, and the retry is judged
	 * as any fault on such a page. */
	if (last)
		pagewait_wake_obj(o, mobj_wait_word(gen, 0), mobj_wait_word(gen, npages), 0);
	if (ep && mk_held)
		ep_put(ep);
	else if (ep)
		ep_put_nolock(ep);
}

/* Internal fault word of an object page (fault.c passes it back to
 * mobj_fault_deliver): RK_OBJECT | prot << 8 | offset << 16 | gen << 36 |
 * slot << 44. The pager sees it without gen and slot. */
static uint64_t fault_word(const struct mobj *o, uint32_t off, unsigned prot)
{
	return RK_OBJECT | (uint64_t)prot_from_mm(prot) << 8 | (uint64_t)off << 16 |
	       (uint64_t)(o->gen & ((1u << MOBJ_GEN_BITS) - 1)) << 36 | (uint64_t)(o - mobjs) << 44;
}

/* Needs mobj_lock. The object and page a status argument names, or NULL
 * (a stale argument: the object is gone), *off its page. */
static struct mobj *arg_object(uint64_t arg, uint64_t va, uint32_t *off)
{
	uint64_t slot = arg >> (MOBJ_OFF_BITS + MOBJ_GEN_BITS);
	uint32_t gen = (uint32_t)(arg >> MOBJ_OFF_BITS) & ((1u << MOBJ_GEN_BITS) - 1);
	if (slot >= MOBJ_MAX)
		return NULL;
	struct mobj *o = &mobjs[slot];
	*off = (uint32_t)(((va >> PAGE_SHIFT) + arg) & ((1u << MOBJ_OFF_BITS) - 1));
	if (!o->refs || (o->gen & ((1u << MOBJ_GEN_BITS) - 1)) != gen || *off >= o->npages)
		return NULL;
	return o;
}

/* Needs mobj_lock. Who pays for a new anonymous page: the creator while
 * it lives, else the task that touched it. */
static struct task *payer(const struct mobj *o, struct task *t)
{
	struct task *c = o->creator;
	return c && c->gen == o->creator_gen && c->state == TASK_ALIVE ? c : t;
}

/* Needs the cursor over page (of t), whose status info is an object
 * mapping's. Resolves the fault: the object's page (a new zero page for
 * an anonymous object) mapped with the mapping's permissions (read-only
 * while write-protected), as a mapping that clone never shares. 0 mapped;
 * -E_FAULT with *status the internal fault word (the page is absent in a
 * pager-backed object, or write-protected, or the access is beyond the
 * mapping's permissions) or the plain status word (the object is gone);
 * -E_QUOTA / -E_NOMEM. */
int mobj_fault(struct mm_cursor *c, struct task *t, uint64_t page, const struct mm_info *info,
	       int write, int exec, unsigned made, uint64_t *status)
{
	unsigned need = write ? MM_PROT_W : exec ? MM_PROT_X : MM_PROT_R;
	uint32_t off;
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	struct mobj *o = arg_object(info->arg, page, &off);
	if (!o) {
		spin_unlock_irqrestore(&mobj_lock, f);
		*status = RK_INVALID;
		return -E_FAULT;
	}
	uint64_t *e = mobj_slot(o, off);
	unsigned prot = info->prot & (MM_PROT_R | MM_PROT_W | MM_PROT_X);
	if (*e & MOBJ_PG_WP)
		prot &= ~MM_PROT_W;
	int err = 0;
	if (!(prot & need) || (!*e && o->ep)) {
		*status = fault_word(o, off, info->prot);
		spin_unlock_irqrestore(&mobj_lock, f);
		return -E_FAULT;
	}
	if (!*e) {
		uint64_t pa;
		if ((err = uvm_frame_alloc(payer(o, t), &pa))) {
			spin_unlock_irqrestore(&mobj_lock, f);
			return err;
		}
		*e = pa;
		o->present++;
	}
	uint64_t pa = *e & ~(uint64_t)(PAGE_SIZE - 1);
	uvm_frame_get(pa);
	if (mm_map(c, page, pa, 1, prot | MM_PROT_U, made | MM_MAP_NOSHARE)) {
		uvm_frame_put(pa);
		err = -E_NOMEM;
	} else {
		uvm_frame_mapped(pa);
	}
	spin_unlock_irqrestore(&mobj_lock, f);
	return err;
}

/* Needs the cursor over page (of t), a mapping the access exceeds (info).
 * If it maps an object's page through one of t's mappings (a
 * write-protected page, or an access beyond the mapping's permissions):
 * 1 and *status the internal fault word, so the object's pager hears of
 * it. Else 0. A search of the records: a fault nobody resolves is rare. */
int mobj_fault_mapped(struct task *t, uint64_t page, const struct mm_info *info, uint64_t *status)
{
	if (info->level != 1 || !(info->limits & MM_MAP_NOSHARE))
		return 0;
	int found = 0;
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	for (int i = 0; i < MOBJ_MAPS_MAX && !found; i++) {
		struct mobj_map *r = &mobj_maps[i];
		if (!r->o || r->t != t || page < r->va || page >= r->va + (uint64_t)r->npages * PAGE_SIZE)
			continue;
		uint32_t off = r->off + (uint32_t)((page - r->va) / PAGE_SIZE);
		if ((*mobj_slot(r->o, off) & ~(uint64_t)(PAGE_SIZE - 1)) == info->pa) {
			*status = fault_word(r->o, off, r->prot);
			found = 1;
		}
	}
	spin_unlock_irqrestore(&mobj_lock, f);
	return found;
}

/* Needs: no lock. Does the fault that status (the pager's word) tells of
 * still stand on page off of o (generation gen)? An absent page, a write
 * to a write-protected one, an access beyond the mapping's permissions:
 * 1. The page was supplied or unprotected meanwhile, or the object is
 * gone: 0 (the access is retried and judged afresh). */
static int still_faults(struct mobj *o, uint32_t gen, uint32_t off, uint64_t status, unsigned kind)
{
	unsigned prot = (unsigned)(status >> 8) & 0xff;
	unsigned need = kind == TRAP_WRITE_FAULT ? PROT_W : kind == TRAP_EXEC_FAULT ? PROT_X : PROT_R;
	int r = 0;
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	if (o->refs && o->gen == gen && off < o->npages) {
		uint64_t e = *mobj_slot(o, off);
		r = !e || (need == PROT_W && (e & MOBJ_PG_WP)) || !(prot & need);
	}
	spin_unlock_irqrestore(&mobj_lock, f);
	return r;
}

/* An asynchronous object's fault at va (kind: TRAP_*_FAULT; status the
 * pager's word) of the current thread: wait on the object page (one wait
 * and one message for every task's threads there), looking at the page
 * once more after the wait is counted (a supply between the first look
 * and now has filled it), and send the page's message on ep (whose
 * reference is the caller's and is dropped here) with badge. The
 * verdict as fault_to_pager's: 0 retry, -E_INVAL refused (MOBJ_KILL),
 * -E_DEAD (nobody can receive on ep; or no wait entry left). */
static int obj_wait(struct mobj *o, uint32_t gen, uint64_t va, unsigned kind, uint64_t status,
		    struct endpoint *ep, uint64_t badge)
{
	struct thread *me = cur_thread();
	uint32_t off = (uint32_t)(status >> 16) & ((1u << MOBJ_OFF_BITS) - 1);
	struct pw_key k = { PW_OBJECT, o, mobj_wait_word(gen, off) };
	int r = 0;
	if (pagewait_enter_key(me, &k)) {
		r = -E_DEAD;
	} else if (!still_faults(o, gen, off, status, kind)) {
		pagewait_leave(me);
	} else {
		uint64_t w[IPC_WORDS] = { MSG_FAULT, va, status,
					  fault_access(kind) | (uint64_t)me->id << 8 };
		r = pagewait_sleep(me, ep, badge, w);
	}
	ep_put_nolock(ep);
	return me->killed ? 0 : r;
}

/* The delivery of an object fault: a fault at va (kind: TRAP_*_FAULT)
 * becomes a fault call on the object's pager with the words of
 * patina/pager.h, status kind RK_OBJECT with the page's offset as tag,
 * and the object's badge; for an asynchronous object (MOBJ_ASYNC) a wait
 * on the object page and its one notice instead (obj_wait). *status: the
 * internal word from mobj_fault, made the pager's (slot and generation
 * cleared). 0 resumed, -E_DEAD / -E_INVAL (kill), -E_FAULT: the object
 * has no pager (or is gone): the thread's own fault endpoint, if any,
 * gets *status. Needs: mk_lock NOT held. */
int mobj_fault_deliver(uint64_t va, unsigned kind, uint64_t *status)
{
	uint64_t w2 = *status;
	uint64_t slot = w2 >> 44;
	uint32_t gen = (uint32_t)(w2 >> 36) & ((1u << MOBJ_GEN_BITS) - 1);
	*status = w2 & ((1ull << 36) - 1);
	struct endpoint *ep = NULL;
	uint64_t badge = 0;
	uint32_t fullgen = 0;
	int async = 0;
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	struct mobj *o = slot < MOBJ_MAX ? &mobjs[slot] : NULL;
	if (o && o->refs && (o->gen & ((1u << MOBJ_GEN_BITS) - 1)) == gen && o->ep) {
		ep = o->ep;
		badge = o->badge;
		fullgen = o->gen;
		async = (o->flags & MOBJ_ASYNC) != 0;
		__atomic_add_fetch(&ep->refs, 1, __ATOMIC_RELAXED);   /* the call's */
	}
	spin_unlock_irqrestore(&mobj_lock, f);
	if (!ep)
		return -E_FAULT;
	if (async)
		return obj_wait(o, fullgen, va, kind, *status, ep, badge);
	uint64_t w[IPC_WORDS] = { va, fault_access(kind), *status,
				  (uint64_t)cur_thread()->id };
	return fault_call(ep, badge, w);
}

void mobj_counts(unsigned long *objs, unsigned long *maps, unsigned long *pages)
{
	*objs = *maps = *pages = 0;
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	for (int i = 0; i < MOBJ_MAX; i++)
		if (mobjs[i].refs) {
			(*objs)++;
			*pages += mobjs[i].present;
		}
	for (int i = 0; i < MOBJ_MAPS_MAX; i++)
		*maps += mobj_maps[i].o != NULL;
	spin_unlock_irqrestore(&mobj_lock, f);
}

void mobj_cap_info(struct mobj *o, struct cap_info *ci)
{
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	ci->lo = o->npages;
	ci->hi = o->present;
	ci->badge = o->badge;
	ci->objects = 0;
	for (int i = 0; i < MOBJ_MAPS_MAX; i++)
		ci->objects += mobj_maps[i].o == o && mobj_maps[i].t;
	spin_unlock_irqrestore(&mobj_lock, f);
}

/* Needs mk_lock (the charge and the cap go with it). A free object slot
 * with its index frames charged to t, one reference; or NULL with
 * *err -E_NOMEM (no slot, no memory) / -E_QUOTA. */
static struct mobj *mobj_alloc(struct task *t, uint32_t npages, int *err)
{
	struct mobj *o = NULL;
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	for (int i = 0; i < MOBJ_MAX && !o; i++)
		if (!mobjs[i].refs && !mobjs[i].idx[0])
			o = &mobjs[i];
	if (o)
		o->refs = 1;     /* claimed; its index is filled below */
	spin_unlock_irqrestore(&mobj_lock, f);
	if (!o) {
		*err = -E_NOMEM;
		return NULL;
	}
	uint32_t nidx = (uint32_t)((npages + MOBJ_IDX_PER - 1) / MOBJ_IDX_PER);
	uint64_t idx[MOBJ_IDX_MAX] = { 0 };
	for (uint32_t i = 0; i < nidx && !*err; i++)
		*err = uvm_frame_alloc(t, &idx[i]);
	f = spin_lock_irqsave(&mobj_lock);
	if (*err) {
		for (uint32_t i = 0; i < nidx; i++)
			if (idx[i])
				uvm_frame_put(idx[i]);
		o->refs = 0;
		spin_unlock_irqrestore(&mobj_lock, f);
		return NULL;
	}
	for (uint32_t i = 0; i < nidx; i++)
		o->idx[i] = idx[i];
	o->npages = npages;
	o->present = 0;
	o->creator = t;
	o->creator_gen = t->gen;
	o->ep = NULL;
	o->badge = 0;
	o->flags = 0;
	spin_unlock_irqrestore(&mobj_lock, f);
	return o;
}

/* Needs: no lock. Checks npages, dst and ep before anything is made;
 * the object and its cap appear together under mk_lock, or nothing
 * does (patina/mobj.h has the errors). */
long sys_mobj_create(struct task *t, uint64_t npages, long dst, long ep, uint64_t flags)
{
	if (!npages || npages > MOBJ_MAX_PAGES || (flags & ~(uint64_t)MOBJ_ASYNC) ||
	    ((flags & MOBJ_ASYNC) && ep == SLOT_NONE))
		return -E_INVAL;
	int err = 0;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cchunk *spare = NULL;
	struct cap *ec = NULL;
	err = cap_slot_check(t, dst);
	if (!err && ep != SLOT_NONE)
		ec = cap_lookup(t, ep, CAP_ENDPOINT, R_SEND, &err);
	if (!err)
		err = cspace_prepare(t, dst, &spare);
	if (!err) {
		struct mobj *o = mobj_alloc(t, (uint32_t)npages, &err);
		if (!o) {
			cspace_unprepare(t, spare);
		} else {
			if (ec) {
				__atomic_add_fetch(&ec->o.ep->refs, 1, __ATOMIC_RELAXED);
				o->ep = ec->o.ep;
				o->badge = ec->badge;
				o->flags = (uint32_t)flags;
			}
			struct cap nc = { .type = CAP_MOBJ, .o.mobj = o,
					  .rights = R_MAP | R_READ | R_WRITE | R_EXEC | R_CONTROL };
			cap_install(cspace_commit(t, dst, spare), &nc, NULL);
		}
	}
	spin_unlock_irqrestore(&mk_lock, f);
	return err;
}

/* Needs mobj_lock. Are object pages [off, off + n) all absent? */
static int pages_absent(struct mobj *o, uint64_t off, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (*mobj_slot(o, (uint32_t)(off + i)))
			return 0;
	return 1;
}

/* Needs: no lock. The caps of a supply: the object (R_CONTROL) with
 * [off, off + n) inside it, the source region cap (R_UNMAP) over the
 * caller's own space with the pages inside it. 0 with the object
 * referenced (*op), the authority read-held and the caller's
 * transaction begun; or -E_* with nothing held. */
static int supply_decode(struct task *t, long slot, uint64_t off, long src, struct supply *s,
			 struct mobj **op)
{
	int err = 0;
	auth_read_lock();
	unsigned long f = cspace_decode_lock(t);
	struct cap *oc = cap_lookup(t, slot, CAP_MOBJ, R_CONTROL, &err);
	struct cap *sc = oc ? cap_lookup(t, src, CAP_REGION, R_UNMAP, &err) : NULL;
	if (sc) {
		uint64_t len = (uint64_t)s->n * PAGE_SIZE;
		if (sc->o.task != t)
			err = -E_PERM;
		else if (off + s->n > oc->o.mobj->npages || s->sva < sc->lo || s->sva + len > sc->hi)
			err = -E_RANGE;
		else
			mobj_get(*op = oc->o.mobj);
	}
	cspace_decode_unlock(t, f);
	if (!err && (err = task_txn_try_begin(t)))
		mobj_put(*op, 0);
	if (err)
		auth_read_unlock();
	return err;
}

/* Needs: no lock. The arguments, then the caps (supply_decode), then the
 * object pages found empty, then the take (one transaction over the
 * source, region_supply.c), the pages put in the index under mobj_lock
 * (checked empty again: a supply racing for the same offset loses with
 * E_EXIST), and the settle, which maps the frames back to the source
 * when they were not placed. 0, or -E_* with the object and the source
 * as they were. */
long sys_mobj_supply(struct task *t, long slot, uint64_t off, long src, uint64_t sva,
		     uint64_t npages)
{
	/* prot R|W: a frame that may never be written refuses (E_PERM), as
	 * an object page is mapped writable wherever its mapping says. */
	struct supply s = { .t = t, .dst = t, .sva = sva, .n = (unsigned)npages,
			    .prot = PROT_R | PROT_W };
	struct mobj *o = NULL;
	if (!npages || npages > SUPPLY_MAX_PAGES || (sva & (PAGE_SIZE - 1)))
		return -E_INVAL;
	if (off > MOBJ_MAX_PAGES || sva + npages * PAGE_SIZE < sva)
		return -E_RANGE;
	int err = supply_decode(t, slot, off, src, &s, &o);
	if (err)
		return err;
	unsigned long f = spin_lock_irqsave(&mobj_lock);
	err = pages_absent(o, off, npages) ? 0 : -E_EXIST;
	spin_unlock_irqrestore(&mobj_lock, f);
	paddr_t lp = 0;
	if (!err && frame_alloc(0, &lp))
		err = -E_NOMEM;
	s.list = lp ? phys_to_virt(lp) : NULL;
	if (!err && !(err = supply_take(&s))) {
		for (unsigned i = 0; i < s.n; i++)
			if (s.list[i] & SE_LIMITS)
				err = -E_PERM;     /* a frame its giver allowed one mapping */
		f = spin_lock_irqsave(&mobj_lock);
		if (!err && !pages_absent(o, off, npages))
			err = -E_EXIST;    /* filled meanwhile */
		for (unsigned i = 0; !err && i < s.n; i++) {
			uvm_frame_unmapped(SE_PA(s.list[i]));  /* the index holds it, no mapping */
			*mobj_slot(o, (uint32_t)(off + i)) = SE_PA(s.list[i]);
			o->present++;
		}
		spin_unlock_irqrestore(&mobj_lock, f);
		supply_settle(&s, !err);
	}
	if (lp)
		frame_free(lp);
	task_txn_end(t);
	auth_read_unlock();
	if (!err)      /* threads of any task waiting on those object pages retry */
		pagewait_wake_obj(o, mobj_wait_word(o->gen, off), mobj_wait_word(o->gen, off + npages), 0);
	mobj_put(o, 0);
	return err;
}
