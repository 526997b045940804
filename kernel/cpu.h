/* Per-hart data, reached through the per-hart pointer (arch_cpu_get). */
#ifndef KERNEL_CPU_H
#define KERNEL_CPU_H

#include <stdint.h>
#include "frame.h"
#include "cortenmm/platform.h"
#include "cortenmm/qlock.h"
#include "hartmask.h"
#include "arch.h"
#include "lockcheck.h"
#include "lockstat.h"

#define KSTACK_SIZE 16384

typedef void (*smp_fn_t)(void *arg);
struct rq;

struct cpu {
	/* entry.S reads stack_top at offset 0: keep it first. */
	uint64_t stack_top;
	uint64_t stack_bottom;
	uint32_t index;           /* logical id 0..ncpus-1, boot hart is 0 */
	uint32_t hartid;          /* from the DTB */
	volatile uint32_t online; /* 1 once the hart runs; 2: the boot hart gave up on it (smp.c) */
	/* This hart's run queue (kernel/mk/sched.c), set once at boot: one
	 * load for the IPC fast path instead of indexing the array. */
	struct rq *rq;

	/* Lock statistics (lockstat.h). Near the top, so that an acquire path
	 * reaches a counter at a small offset from the per-hart pointer. */
	struct lockstat_hart lockstat;

	volatile uint64_t ticks;  /* timer interrupts taken */
	uint64_t next_tick;       /* absolute time of the programmed timer */

	/* IPIs. ping_from: bit i set by hart i before it sends a ping.
	 * pings_seen accumulates what the handler drained. */
	struct hartmask ping_from;
	struct hartmask pings_seen;
	volatile uint64_t ipis;   /* software interrupts taken */

	/* One-slot cross-call mailbox (see smp.h). */
	uint32_t call_busy;
	smp_fn_t call_fn;
	void *call_arg;

	struct frame_magazine mag;

	/* Preemption (= interrupt) disable nesting, for the mm core. */
	uint32_t preempt_count;
	unsigned long preempt_saved;
	struct mm_pool mm_pool;   /* pre-zeroed PT pages for the mm core */
	struct mm_qnode mm_qnode; /* this hart's place in a PT-page lock's queue */

	/* RCU (rcu.c): quiescent states passed, callbacks queued since the
	 * last snapshot (next) and waiting for a grace period (wait). */
	volatile uint64_t rcu_qs;
	struct mm_rcu_head *rcu_next;
	struct mm_rcu_head *rcu_wait;
	uint64_t *rcu_snap;       /* harts_max entries (harts.c) */
	uint32_t rcu_snap_n;
#ifdef LOCK_CHECK
	struct lockcheck_hart lockcheck;   /* locks this hart holds (lockcheck.c) */
#endif
};

/* One struct cpu per logical hart, harts_max of them (harts.c): until
 * harts_init runs, only the boot hart's, in the kernel image. */
extern struct cpu *cpus;
extern uint32_t harts_max;    /* logical harts per-hart arrays are sized for */
extern uint32_t *hart_ids;    /* hart id of each logical index, harts_max entries */
extern uint32_t ncpus;        /* harts online */

static inline struct cpu *this_cpu(void)
{
	return arch_cpu_get();
}

/* Count one acquisition in lock-statistics slot `slot` on this hart
 * (lockstat.h); waited is 0 when the lock was free at the first try, else
 * 1 + the spin iterations. Any context: each add is one atomic on this
 * hart's own counter, so an interrupt handler's count cannot tear it, and
 * should a thread run on another hart by the time it counts, the sum is
 * still right. All inline, with no call even when contended: a call would
 * make a leaf such as the IPC fast path save registers on every entry. */
static inline __attribute__((always_inline)) void lockstat_count(unsigned slot, uint32_t waited)
{
	struct lockstat_hart *h = &this_cpu()->lockstat;
	__atomic_fetch_add(&h->acq[slot], 1, __ATOMIC_RELAXED);
	if (__builtin_expect(waited != 0, 0)) {
		__atomic_fetch_add(&h->contended[slot], 1, __ATOMIC_RELAXED);
		__atomic_fetch_add(&h->spins[slot], waited - 1, __ATOMIC_RELAXED);
	}
}

/* As lockstat_count, for a lock taken with interrupts off (so nothing
 * else runs on this hart between the load and the store of a counter):
 * plain adds, without the atomic's setup. Volatile stores, one each: a
 * relaxed atomic store compiles to an AMO on this target. */
static inline __attribute__((always_inline)) void lockstat_count_irqoff(unsigned slot, uint32_t waited)
{
	struct lockstat_hart *h = &this_cpu()->lockstat;
	*(volatile uint64_t *)&h->acq[slot] = h->acq[slot] + 1;
	if (__builtin_expect(waited != 0, 0)) {
		*(volatile uint64_t *)&h->contended[slot] = h->contended[slot] + 1;
		*(volatile uint64_t *)&h->spins[slot] = h->spins[slot] + waited - 1;
	}
}

/* Logical index of the hart with this id, or -1. */
int cpu_index_of_hartid(uint32_t hartid);

#endif
