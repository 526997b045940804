/* TLB shootdown of user address spaces by kernel IPI, with early
 * acknowledgement and lazy release of what the shootdown protects.
 *
 * Every hart has a mailbox: a short queue of flush requests (ASID plus
 * range, or the whole ASID) under a lock. An issuer posts its request to
 * every target's mailbox first, then raises one software interrupt per
 * target that was not already signalled, then waits for each target's
 * acknowledgement. A target takes the interrupt (ipi_interrupt), takes its
 * whole queue, acknowledges, and only then flushes: everything queued
 * before it took the interrupt is applied together, and a long queue is
 * coalesced into whole-ASID flushes.
 *
 * Why an acknowledgement is enough for the mm core's tlb_flush contract
 * ("no hart can use the old translations any more"): the target gives it
 * inside the interrupt handler, with interrupts off, and flushes before
 * the handler returns. Between the acknowledgement and the flush it runs
 * only the handler, which touches kernel memory only: it cannot return to
 * user mode, and it cannot resume an interrupted user copy (uaccess.c)
 * either, as that copy is what the handler returns to. So no access can
 * use a stale translation after the acknowledgement. The same holds when
 * a hart drains its own mailbox while it spins (shootdown_service).
 *
 * What an acknowledgement does not give is a clean TLB: the hart's TLB
 * and walk caches may still name the old frames until it flushed. So the
 * data frames whose last reference an unmap dropped, and the PT pages it
 * freed, are parked (shootdown_defer) before they go back to the allocator,
 * until every request posted before them has been applied everywhere
 * (per-hart "lowest request not yet applied" marks), and break-before-make
 * waits for the flush itself (complete = 1).
 *
 * Bounded waits: a target that keeps interrupts off for long (it spins on
 * a lock the issuer holds, or waits for the issuer in an smp_call) would
 * never acknowledge; after SD_ACK_WAIT_US the issuer flushes that target
 * through SBI RFENCE instead, which does not need its interrupts, and
 * parked frames whose targets still did not drain are released after a
 * global SBI flush (force). Both are counted (shootdown_stats). */
#ifndef KERNEL_SHOOTDOWN_H
#define KERNEL_SHOOTDOWN_H

#include <stdint.h>
#include "hartmask.h"

/* Per-hart mailboxes and parking rings. 0 or -E_NOMEM. After harts_init,
 * before any user address space exists. */
int shootdown_init(void);

/*
 * Flush [start, end) of tag asid (ARCH_NO_ASID: every tag; end == 0: the
 * whole tag) on every online hart in m except this one (posted to all of
 * each 64 harts before it waits for any of them). Returns when every
 * target acknowledged (complete = 0) or applied (complete = 1) the request,
 * or was flushed through SBI after not answering in time. Any context,
 * interrupts on or off, core PT locks held or not: while it waits it
 * drains this hart's own mailbox, so two harts shooting at each other
 * both go on. Panics only when the SBI fallback itself fails.
 */
void shootdown_flush(const struct hartmask *m, long asid, uint64_t start, uint64_t end,
		     int complete);

/* Apply this hart's mailbox (acknowledge, then flush). Any context; cheap
 * when the mailbox is empty. The software-interrupt handler and every
 * spin-wait that may run with interrupts off call it. */
void shootdown_service(void);

/*
 * Hand pa (4 KiB << 9*(level-1)) to release(pa, level) once every
 * shootdown request posted before this call has been applied on every
 * hart (at once when none is pending). Any context; release runs on some
 * hart later, with interrupts off, outside the shootdown locks.
 */
typedef void (*shootdown_release_fn)(uint64_t pa, unsigned level);
void shootdown_defer(uint64_t pa, unsigned level, shootdown_release_fn release);

/* Release everything parked on every hart, waiting (bounded, then by a
 * global SBI flush) for the flushes it depends on. For exact counts
 * (frames in use, free frames, quota): call with no spinlock held. */
void shootdown_settle(void);

struct shootdown_stats {
	uint64_t posted;      /* requests posted to other harts */
	uint64_t ipis;        /* interrupts sent for them (fewer: batching) */
	uint64_t batches;     /* mailbox drains that applied something */
	uint64_t coalesced;   /* drains that flushed whole tags instead of ranges */
	uint64_t fallbacks;   /* targets flushed through SBI after no answer */
	uint64_t forced;      /* global SBI flushes to release parked frames */
	uint64_t parked;      /* frames/pages parked (not released at once) */
};
/* Hart `hart`'s counts (what it issued, drained, forced), or with hart
 * -1 the sums over every hart. */
void shootdown_stats(struct shootdown_stats *out, int hart);

/* Test hook (kernel/mk/test_shootdown.c): while set, hart `hold_hart`
 * stops between its acknowledgement and its flush. */
extern volatile int shootdown_hold;
extern volatile uint32_t shootdown_hold_hart;
/* Test hook: how long a shootdown waits for an acknowledgement before
 * the SBI fallback (20 ms; a test that must not depend on how promptly a
 * loaded host runs the other vCPU makes it a hang guard instead). */
extern volatile uint64_t shootdown_ack_wait_us;
/* Hart idx's highest acknowledged / applied request, and the sequence
 * number the next request will get. */
uint64_t shootdown_acked(uint32_t idx);
uint64_t shootdown_applied(uint32_t idx);
uint64_t shootdown_next_seq(void);

#endif
