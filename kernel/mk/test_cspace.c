/* In-kernel test of CSpace chunks (cap.c), run by the user-level selftest
 * (DBG_KTEST) from init: an empty child task of the caller (no thread:
 * nothing else touches its CSpace) grows its CSpace under an exact frame
 * quota, and its death gives the chunks back. */
#include <patina/errno.h>
#include "mk.h"
#include "ktest.h"
#include "arch.h"
#include "timer.h"
#include "shootdown.h"
#include "frame.h"

/* Needs mk_lock; c has no thread. What c uses of its frame quota. */
static long ct_used(struct task *c)
{
	return quota_frames_used(c) + (long)__atomic_load_n(&c->as.nr_frames, __ATOMIC_RELAXED) +
	       __atomic_load_n(&c->pt_resv, __ATOMIC_RELAXED);
}

/* The checks on child c, under mk_lock. 0 or KFAIL's 1. */
static int ct_grow(struct task *c, char *why, size_t whylen)
{
	int err = 0;
	struct ep_snap s;
	if (cspace_extent(c) != CSPACE_FIXED_SLOTS)
		return KFAIL("a new task's extent is %ld", cspace_extent(c));
	if (cap_slot_check(c, CSPACE_FIXED_SLOTS) || cap_slot_check(c, CSPACE_MAX_SLOTS - 1) ||
	    cap_slot_check(c, CSPACE_MAX_SLOTS) != -E_BADCAP || cap_slot_check(c, -1) != -E_BADCAP ||
	    cap_slot_check(c, SLOT_SELF_TASK) != -E_EXIST)
		return KFAIL("cap_slot_check on a new task's slots");
	if (cap_lookup(c, 5000, 0, 0, &err) || err != -E_BADCAP)
		return KFAIL("lookup of a slot in no chunk: %d", err);
	if (ep_snap_read(c, 5000, &s) || s.type != CAP_NULL)
		return KFAIL("lock-free read of a slot in no chunk: type %u", s.type);

	/* Quota used up: the chunk is refused, nothing changes. */
	long saved = c->frame_quota, used = ct_used(c);
	c->frame_quota = used;
	err = 0;
	struct cap *d = cap_slot_free(c, 100, &err);
	int refused = !d && err == -E_QUOTA && !c->cchunk[(100 - CSPACE_FIXED_SLOTS) / CCHUNK_SLOTS] &&
		      cspace_extent(c) == CSPACE_FIXED_SLOTS && ct_used(c) == used;
	/* One frame more: the chunk of slots 96..127 comes, charged. */
	c->frame_quota = used + 1;
	err = 0;
	d = refused ? cap_slot_free(c, 100, &err) : NULL;
	int grown = d && d->slot == 100 && d->owner == c && d->type == CAP_NULL &&
		    cspace_extent(c) == 128 && ct_used(c) == used + 1;
	/* Another slot of that chunk costs nothing (the quota is full). */
	struct cap *d2 = grown ? cap_slot_free(c, 127, &err) : NULL;
	/* A chunk made ready and given back leaves nothing. */
	c->frame_quota = used + 2;
	struct cchunk *spare = NULL;
	int pe = cspace_prepare(c, 200, &spare);
	long mid = ct_used(c);
	cspace_unprepare(c, spare);
	int undone = !pe && spare && mid == used + 2 && ct_used(c) == used + 1 &&
		     !c->cchunk[(200 - CSPACE_FIXED_SLOTS) / CCHUNK_SLOTS];
	/* The last slot, in the last chunk. */
	struct cap *last = cap_slot_free(c, CSPACE_MAX_SLOTS - 1, &err);
	long extent = cspace_extent(c);
	c->frame_quota = saved;
	if (!refused)
		return KFAIL("no quota for a chunk: got %p err %d, extent %ld, used %ld (was %ld)",
			     (void *)d, err, cspace_extent(c), ct_used(c), used);
	if (!grown)
		return KFAIL("one frame of quota: slot %p err %d, extent %ld, used %ld (was %ld)",
			     (void *)d, err, cspace_extent(c), ct_used(c), used);
	if (!d2 || d2->slot != 127)
		return KFAIL("second slot of a chunk with the quota full: err %d", err);
	if (!undone)
		return KFAIL("prepare/unprepare: %d, used %ld then %ld (was %ld)", pe, mid, ct_used(c),
			     used);
	if (!last || last->slot != CSPACE_MAX_SLOTS - 1 || extent != CSPACE_MAX_SLOTS)
		return KFAIL("the last slot: err %d, extent %ld", err, extent);

	/* A cap in a chunk: found by lookups with and without a lock. Region
	 * caps of c on c count as its own references. */
	struct cap rc = { .type = CAP_REGION, .rights = R_QUERY, .o.task = c, .lo = PAGE_SIZE,
			  .hi = user_top };
	cap_get_obj(&rc);
	cap_install(d, &rc, NULL);
	if (cap_lookup(c, 100, CAP_REGION, R_QUERY, &err) != d)
		return KFAIL("lookup of the cap in slot 100: %d", err);
	if (ep_snap_read(c, 100, &s) || s.type != CAP_REGION || (s.seq & 1) || !ep_snap_holds(&s))
		return KFAIL("lock-free read of slot 100: type %u seq %u", s.type, s.seq);
	if (cspace_self_refs(c) != 3)
		return KFAIL("self references %d (want 3: slots 0, 1, 100)", cspace_self_refs(c));
	return 0;
}

/* The child dies once nothing outside its CSpace names it (task_put counts
 * the self reference in a chunk), and its reaping gives back every chunk:
 * the caller's frame use and the free frames come back. */
KTEST(60, plat_cspace_chunks)
{
	struct thread *me = cur_thread();
	if (!me || !me->task)
		return 0;   /* run from the boot console: no task */
	struct task *t = me->task;
	long dst = -1;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	for (long i = SLOT_FIRST_FREE; i < CSPACE_FIXED_SLOTS && dst < 0; i++)
		if (!cap_slot_check(t, i))
			dst = i;
	spin_unlock_irqrestore(&mk_lock, f);
	if (dst < 0)
		return KFAIL("no free slot in the caller");
	shootdown_settle();
	long u0 = quota_frames_used(t);
	unsigned long free0 = frame_free_count() + uvm_pooled_frames();
	long r = sys_task_create(t, SLOT_SELF_TASK, dst, QUOTA(64, 0, 0, 0));
	if (r)
		return KFAIL("task create: %ld", r);
	int err = 0, fail;
	auth_write_lock();      /* the cap delete below, as SYS_CAP_DELETE */
	f = spin_lock_irqsave(&mk_lock);
	struct cap *tc = cap_lookup(t, dst, CAP_TASK, 0, &err);
	struct task *c = tc ? tc->o.task : NULL;
	fail = c ? ct_grow(c, why, whylen) : KFAIL("no task cap: %d", err);
	int refs = c ? c->refs : 0;
	uint32_t gen = c ? c->gen : 0;
	if (tc)
		cap_delete(tc);
	int state = c ? c->state : TASK_FREE;
	if (fail && c && c->state == TASK_ALIVE)
		task_exit(c, 137);      /* a failed check may have left it caps on itself */
	spin_unlock_irqrestore(&mk_lock, f);
	auth_write_unlock();
	if (fail)
		return fail;
	if (refs != 4)
		return KFAIL("child references %d (want 4: three of its own, ours)", refs);
	if (state == TASK_ALIVE)
		return KFAIL("the empty child named only by itself lives on");
	/* Reaped (struct free or reused), then its carve and frames back. */
	uint64_t until = time_after_us(5000000);
	while (__atomic_load_n(&c->state, __ATOMIC_ACQUIRE) != TASK_FREE &&
	       __atomic_load_n(&c->gen, __ATOMIC_RELAXED) == gen && arch_time_now() < until)
		sched_yield();
	long u1;
	unsigned long free1;
	do {
		sched_yield();
		shootdown_settle();
		u1 = quota_frames_used(t);
		free1 = frame_free_count() + uvm_pooled_frames();
	} while ((u1 != u0 || free1 != free0) && arch_time_now() < until);
	if (c->state != TASK_FREE && c->gen == gen)
		return KFAIL("child not reaped (state %d)", c->state);
	if (u1 != u0)
		return KFAIL("our frame use %ld after the child's reaping, %ld before", u1, u0);
	if (free1 != free0)
		return KFAIL("free frames %lu after the child's reaping, %lu before", free1, free0);
	return 0;
}
