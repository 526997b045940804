/* SYS_REGION_SUPPLY: move up to SUPPLY_MAX_PAGES mapped frames from the
 * caller's own range into another range (a pager's client), no copy.
 *
 * Never two cursors at once (cursor.h), so the move runs in three
 * transactions, each under one cursor:
 *  1. take: under a cursor over the source, check every page (a 4 KiB
 *     mapping, not COW, its frame referenced only by that mapping), then
 *     take every frame into a kernel list (one frame from the allocator,
 *     not the stack) with the state its mapping had, and leave a hold in
 *     the first taken page of every 2 MiB block: a reserved status with
 *     no permissions, which faults like an invalid page but keeps that
 *     block's page table (and its path) alive. The commit flushes the
 *     taken pages from every TLB, so the caller can no longer write
 *     them by the time anything else can read them.
 *  2. place: under a cursor over the destination, supply_place checks
 *     every page, plans and reserves the page tables and charges the
 *     moved frames, then maps them (region_place.c), all or none.
 *  3. settle: under a cursor over the source again. After a placement,
 *     clear the holds (left where somebody replaced them meanwhile). After
 *     a refusal, map every frame back where it was, with its permissions,
 *     limits and accessed/dirty bits. That cannot fail on its own: the
 *     pages are invalid or holds, every frame's page table is still there
 *     (the hold keeps it) and any metadata array it needs too (the hold
 *     needed one), so mm_map takes no frame; and only the caller can
 *     change its own range. Where a thread of the caller (or another
 *     holder of a region cap over it) mapped or remapped a page in
 *     between, that page's frame cannot go back: it is freed, and its
 *     contents are lost, as with a ROP_EVICT whose slot was filled
 *     meanwhile.
 * The caller's authority holds across all three (the revoke barrier:
 * auth_read_lock), and both address spaces stay alive (task_txn). */
#include "region_supply.h"
#include "pagewait.h"
#include "uvm_frames.h"
#include "frame.h"

#define HUGE_SPAN (PAGE_SIZE * SUPPLY_HUGE_PAGES)

/* Is page i of the source a block's first (it gets the hold)? */
static int holds_block(const struct supply *s, unsigned i)
{
	return i == 0 || !((s->sva + i * PAGE_SIZE) & (HUGE_SPAN - 1));
}

/* Needs the cursor over the source. Page i against the rules: 0 or
 * frame_can_leave's -E_NOENT (not mapped, or COW), -E_INVAL (part of a
 * huge leaf), -E_BUSY (its frame referenced elsewhere), or -E_PERM
 * (supplied writable but the mapping may never be). */
static int src_check(const struct supply *s, struct mm_cursor *c, unsigned i)
{
	struct mm_info info;
	int r = err_from_mm(mm_query(c, s->sva + i * PAGE_SIZE, &info));
	if (!r)
		r = frame_can_leave(&info);
	if (r)
		return r;
	if ((s->prot & PROT_W) && (info.limits & MM_MAP_NOWRITE))
		return -E_PERM;
	return 0;
}

/* The plan of the take: every page checked, the frames of the takes and
 * holds reserved. 0 or -E_* with nothing reserved. */
static int take_plan(const struct supply *s, struct mm_cursor *c)
{
	unsigned need = 0;
	mm_txn_begin(c);
	for (unsigned i = 0; i < s->n; i++) {
		uint64_t va = s->sva + i * PAGE_SIZE;
		unsigned k;
		int r = src_check(s, c, i);
		if (!r)
			r = err_from_mm(mm_take_need(c, va, &k));
		if (r)
			return r;
		need += k;
		if (holds_block(s, i))
			need += mm_txn_need_max(c, va, PAGE_SIZE);
	}
	return err_from_mm(mm_txn_reserve(c, need));
}

/* Needs the cursor over the source. Map list[0..n) back at the source
 * (pages invalid or holds): each page as it was; a page that cannot take
 * its frame back (see the top) has its frame freed. */
static void put_back(const struct supply *s, struct mm_cursor *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		uint64_t e = s->list[i];
		unsigned fl = (e & SE_LIMITS) | ((e & SE_D) ? MM_MAP_DIRTY : 0) |
			      ((e & SE_A) ? MM_MAP_ACCESSED : 0);
		if (!c || mm_map(c, s->sva + i * PAGE_SIZE, SE_PA(e), 1, (e & SE_PROT) | MM_PROT_U, fl)) {
			uvm_frame_unmapped(SE_PA(e));
			uvm_frame_put(SE_PA(e));
		}
	}
}

/* Transaction 1. 0 with every frame in s->list (the source pages
 * invalid, the holds in place, flushed), or -E_* with the source as it
 * was. */
int supply_take(struct supply *s)
{
	struct mm_cursor c;
	struct mm_status hold = { .kind = MM_RESERVED };
	cur_thread()->quota_refused = 0;
	int err = err_from_mm(mm_lock(&c, &s->t->as, s->sva, s->sva + s->n * PAGE_SIZE));
	if (err)
		return err;
	err = take_plan(s, &c);
	unsigned i;
	for (i = 0; !err && i < s->n; i++) {
		uint64_t va = s->sva + i * PAGE_SIZE;
		struct mm_info info;
		if ((err = err_from_mm(mm_take(&c, va, &info))))
			break;
		uint64_t owner = uvm_frame_owner(info.pa) != s->dst ? SE_CHARGE : 0;
		s->list[i] = info.pa | (info.prot & SE_PROT) | (info.limits & SE_LIMITS) |
			     (info.accessed ? SE_A : 0) | (info.dirty ? SE_D : 0) | owner;
		if (holds_block(s, i) && (err = err_from_mm(mm_mark(&c, va, PAGE_SIZE, &hold)))) {
			i++;
			break;
		}
	}
	/* Only a plan that undercounted with memory gone refuses here: the
	 * pages taken go back under this same cursor. */
	if (err)
		put_back(s, &c, i);
	mm_txn_finish(&c);
	mm_release(&c);
	return err;
}

/* Transaction 3: the holds cleared (placed), or every frame back (not). */
void supply_settle(struct supply *s, int placed)
{
	struct mm_cursor c;
	int locked = !mm_lock(&c, &s->t->as, s->sva, s->sva + s->n * PAGE_SIZE);
	if (!placed) {
		put_back(s, locked ? &c : NULL, s->n);
	} else {
		struct mm_status none = { .kind = MM_INVALID };
		for (unsigned i = 0; locked && i < s->n; i++) {
			struct mm_info info;
			uint64_t va = s->sva + i * PAGE_SIZE;
			/* Only a hold is reserved with no permissions (ROP_MARK needs R). */
			if (holds_block(s, i) && !mm_query(&c, va, &info) && info.kind == MM_RESERVED &&
			    !(info.prot & (MM_PROT_R | MM_PROT_W | MM_PROT_X)))
				mm_mark(&c, va, PAGE_SIZE, &none);
		}
	}
	if (locked)
		mm_release(&c);
}

/* The caller's caps for s: dst with R_MAP and the page rights prot
 * needs, src with R_UNMAP over the caller's own space, both ranges inside
 * them (and apart, in one space). 0 with the authority and both spaces
 * held (supply_end gives them back), or -E_* with nothing held. */
static int supply_decode(struct supply *s, long dslot, long sslot)
{
	int err = 0;
	uint64_t len = (uint64_t)s->n * PAGE_SIZE;
	auth_read_lock();
	unsigned long f = cspace_decode_lock(s->t);
	struct cap *dc = cap_lookup(s->t, dslot, CAP_REGION, R_MAP, &err);
	struct cap *sc = dc ? cap_lookup(s->t, sslot, CAP_REGION, R_UNMAP, &err) : NULL;
	if (sc) {
		s->dst = dc->o.task;
		if ((s->prot & ~prot_of_rights(dc->rights)) || sc->o.task != s->t)
			err = -E_PERM;
		else if (s->dva < dc->lo || s->dva + len > dc->hi || s->sva < sc->lo ||
			 s->sva + len > sc->hi)
			err = -E_RANGE;
		else if (s->dst == s->t && s->dva < s->sva + len && s->sva < s->dva + len)
			err = -E_INVAL;
	}
	cspace_decode_unlock(s->t, f);
	if (!err && !(err = task_txn_try_begin(s->t)) && (err = task_txn_try_begin(s->dst)))
		task_txn_end(s->t);
	if (err)
		auth_read_unlock();
	return err;
}

/* Give back what supply_decode held. */
static void supply_end(struct supply *s)
{
	task_txn_end(s->dst);
	task_txn_end(s->t);
	auth_read_unlock();
}

/* Needs: no lock held. The arguments checked first (E_INVAL, E_RANGE),
 * then the caps (supply_decode), then the three transactions. 0 with the
 * pages moved, or -E_* with both ranges as they were (but for source
 * pages the caller changed during the call: see the top). */
long sys_region_supply(struct task *t, long dst, uint64_t dva, long src, uint64_t sva,
		       uint64_t npages, uint64_t prot)
{
	struct supply s = { .t = t, .dva = dva, .sva = sva, .n = (unsigned)npages,
			    .prot = (uint32_t)prot };
	if (!npages || npages > SUPPLY_MAX_PAGES || ((dva | sva) & (PAGE_SIZE - 1)))
		return -E_INVAL;
	if (dva + npages * PAGE_SIZE < dva || sva + npages * PAGE_SIZE < sva)
		return -E_RANGE;
	if (!(prot & PROT_R) || (prot & ~7ull) || (prot & (PROT_W | PROT_X)) == (PROT_W | PROT_X))
		return -E_INVAL;
	paddr_t lp;
	if (frame_alloc(0, &lp))
		return -E_NOMEM;
	s.list = phys_to_virt(lp);
	int err = supply_decode(&s, dst, src);
	if (!err) {
		int huge;
		if (!(err = supply_take(&s))) {
			err = supply_place(s.dst, dva, s.list, s.n, s.prot, 1, &huge);
			supply_settle(&s, !err);
			if (!err)      /* threads waiting on those pages retry (pagewait.c) */
				pagewait_wake_range(s.dst, dva, dva + npages * PAGE_SIZE, 0);
		}
		supply_end(&s);
	}
	frame_free(lp);
	return err;
}
