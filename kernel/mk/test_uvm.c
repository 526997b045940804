/* In-kernel tests of the user fault path (uvm.c), run by the user-level
 * selftest (DBG_KTEST) in the calling task's address space, at a scratch
 * address nothing else uses. */
#include "mk.h"
#include "ktest.h"
#include "arch.h"
#include "kernel.h"
#include "uvm_frames.h"
#include "cortenmm/cursor.h"
#include "shootdown.h"
#include "timer.h"
#include "frame.h"

#define TU_VA 0x3000000000UL   /* 192 GiB: below Sv39's top, used by no program */

/* What the page at va is in t's address space (info), or an MM_* error. */
static int tu_query(struct task *t, uint64_t va, struct mm_info *info)
{
	struct mm_cursor c;
	int e = mm_lock(&c, &t->as, va, va + PAGE_SIZE);
	if (e)
		return e;
	e = mm_query(&c, va, info);
	mm_release(&c);
	return e;
}

/* Mark [va, va + len) reserved RW (st.kind MM_RESERVED) or unmap it. */
static int tu_set(struct task *t, uint64_t va, uint64_t len, int reserve)
{
	struct mm_cursor c;
	int e = mm_lock(&c, &t->as, va, va + len);
	if (e)
		return e;
	struct mm_status st = { .kind = MM_RESERVED, .prot = MM_PROT_R | MM_PROT_W };
	e = reserve ? mm_mark(&c, va, len, &st) : mm_unmap(&c, va, len);
	mm_release(&c);
	return e;
}

static int all_zero(uint64_t pa)
{
	const uint64_t *p = phys_to_virt(pa);
	for (unsigned i = 0; i < PAGE_SIZE / 8; i++)
		if (p[i])
			return 0;
	return 1;
}

/* A fault fills a reserved page with a zeroed frame; a second fault on the
 * page (as when another hart won the race) changes nothing and leaves its
 * pre-allocated frame in this hart's cache; the next fault maps exactly
 * that cached frame. Interrupts stay off around the faults, so "this
 * hart" does not change. */
KTEST(60, uvm_fault_zframe_cache)
{
	struct thread *me = cur_thread();
	if (!me)   /* run from the boot console: no task to fault in */
		return 0;
	if (!me->task)
		return KSKIP("run from a kernel thread: no calling task");
	struct task *t = me->task;
	struct mm_info in;
	if (tu_query(t, TU_VA, &in) || in.kind != MM_INVALID ||
	    tu_query(t, TU_VA + PAGE_SIZE, &in) || in.kind != MM_INVALID)
		return KFAIL("scratch pages at %lx not free", TU_VA);
	if (tu_set(t, TU_VA, 2 * PAGE_SIZE, 1))
		return KFAIL("reserve failed");
	int fail = 0;
	unsigned long f = irq_save();
	long used0 = uvm_frames_in_use();
	uint64_t top, top2;
	int e1 = uvm_fault(t, TU_VA, 1, 0, NULL);
	long used1 = uvm_frames_in_use();
	struct mm_info m1;
	int q1 = tu_query(t, TU_VA, &m1);
	unsigned n_before = uvm_zframes_here(&top);
	int e2 = uvm_fault(t, TU_VA, 1, 0, NULL);
	unsigned n_after = uvm_zframes_here(&top2);
	long used2 = uvm_frames_in_use();
	struct mm_info m2;
	int q2 = tu_query(t, TU_VA, &m2);
	uint64_t next = top2;
	int e3 = uvm_fault(t, TU_VA + PAGE_SIZE, 1, 0, NULL);
	struct mm_info m3;
	int q3 = tu_query(t, TU_VA + PAGE_SIZE, &m3);
	irq_restore(f);
	if (e1 || q1 || m1.kind != MM_MAPPED || used1 != used0 + 1)
		fail = KFAIL("first fault: %d, kind %d, frames in use %ld -> %ld", e1, m1.kind, used0, used1);
	else if (!all_zero(m1.pa))
		fail = KFAIL("first fault mapped a frame that is not zero");
	else if (e2 || q2 || m2.kind != MM_MAPPED || m2.pa != m1.pa || used2 != used1)
		fail = KFAIL("fault on a mapped page: %d, kind %d, pa %lx -> %lx, in use %ld -> %ld", e2,
			     m2.kind, (unsigned long)m1.pa, (unsigned long)m2.pa, used1, used2);
	else if (n_after != (n_before ? n_before : 1))
		fail = KFAIL("unused frame not cached: %u -> %u cached", n_before, n_after);
	else if (e3 || q3 || m3.kind != MM_MAPPED || m3.pa != next || !all_zero(m3.pa))
		fail = KFAIL("next fault: %d, kind %d, mapped %lx, the cache offered %lx", e3, m3.kind,
			     (unsigned long)m3.pa, (unsigned long)next);
	if (tu_set(t, TU_VA, 2 * PAGE_SIZE, 0) && !fail)
		fail = KFAIL("unmap failed");
	return fail;
}

/* One try of uvm_shootdown_ack_then_park on hart `other`: map a page,
 * hold `other` between its acknowledgement and its flush, unmap. Fills
 * the observations; returns 1 when `other` did not answer in time (the
 * SBI fallback flushed it, nothing to conclude), else 0. Needs:
 * interrupts off, the two pages at TU_VA reserved, the first free of
 * frames. */
struct sd_seen {
	int err;
	uint64_t seq, acked, applied;     /* while held */
	int free_held, free_after;        /* the frame back in the allocator */
	int applied_later;
};
static int sd_try(struct task *t, uint32_t other, struct sd_seen *o)
{
	struct mm_info m;
	/* The next page stays mapped: its leaf table is not pruned, which
	 * would be a second shootdown the held hart cannot acknowledge. */
	o->err = uvm_fault(t, TU_VA, 1, 0, NULL) || uvm_fault(t, TU_VA + PAGE_SIZE, 1, 0, NULL);
	if (!o->err)
		o->err = tu_query(t, TU_VA, &m);
	if (o->err)
		return 0;
	struct shootdown_stats s0, s1;
	int me = (int)this_cpu()->index;
	shootdown_stats(&s0, me);
	o->seq = shootdown_next_seq();
	shootdown_hold_hart = other;
	__atomic_store_n(&shootdown_hold, 1, __ATOMIC_RELEASE);
	/* The unmap drops the mapping's reference, the frame's last one. */
	o->err = tu_set(t, TU_VA, PAGE_SIZE, 0) || tu_set(t, TU_VA, PAGE_SIZE, 1);
	o->acked = shootdown_acked(other);
	o->applied = shootdown_applied(other);
	o->free_held = frame_is_free(m.pa);
	__atomic_store_n(&shootdown_hold, 0, __ATOMIC_RELEASE);
	uint64_t until = time_after_us(1000000);
	while (shootdown_applied(other) < o->seq && arch_time_now() < until)
		shootdown_service();   /* the other hart may be shooting at us */
	o->applied_later = shootdown_applied(other) >= o->seq;
	shootdown_settle();
	o->free_after = frame_is_free(m.pa);
	shootdown_stats(&s1, me);
	return s1.fallbacks != s0.fallbacks;
}

/* The IPI shootdown of an unmap: the other hart (made a target by setting
 * its bit in our hart_mask) acknowledges before it flushes, so the unmap
 * returns while that hart is held between the two; the unmapped frame
 * (its last reference gone) stays out of the allocator (parked) until the
 * hold ends and the flush was applied.
 * A try in which the other hart did not answer within the shootdown's wait
 * (a busy host, or it was waiting for us) is repeated. */
KTEST(60, uvm_shootdown_ack_then_park)
{
	struct thread *me = cur_thread();
	if (!me || ncpus < 2 || (boot_config.ablate & ABLATE_IPIFLUSH))
		return 0;   /* no task, no other hart, or the SBI flush chosen */
	struct task *t = me->task;
	if (tu_set(t, TU_VA, 2 * PAGE_SIZE, 1))
		return KFAIL("reserve failed");
	struct sd_seen o = { 0 };
	int fell_back = 1;
	for (int i = 0; i < 8 && fell_back && !o.err; i++) {
		unsigned long f = irq_save();
		uint32_t other = this_cpu()->index == 0 ? 1 : 0;
		int had = hartmask_test(&t->hart_mask, other);
		hartmask_set(&t->hart_mask, other);
		fell_back = sd_try(t, other, &o);
		if (!had)
			hartmask_clear(&t->hart_mask, other);
		irq_restore(f);
	}
	int fail = 0;
	if (o.err)
		fail = KFAIL("fault, query or unmap failed (%d)", o.err);
	else if (fell_back)
		fail = KFAIL("the other hart never acknowledged in time (8 tries): seq %lu acked %lu applied %lu",
			     (unsigned long)o.seq, (unsigned long)o.acked, (unsigned long)o.applied);
	else if (o.acked < o.seq || o.applied >= o.seq)
		fail = KFAIL("while held: request %lu, acknowledged %lu, applied %lu (want ack, no flush)",
			     (unsigned long)o.seq, (unsigned long)o.acked, (unsigned long)o.applied);
	else if (o.free_held)
		fail = KFAIL("frame back in the allocator before the flush (want parked)");
	else if (!o.applied_later || !o.free_after)
		fail = KFAIL("after the flush: applied %d, frame free %d (want both)",
			     o.applied_later, o.free_after);
	if (tu_set(t, TU_VA, 2 * PAGE_SIZE, 0) && !fail)
		fail = KFAIL("unmap failed");
	return fail;
}
