/* Kernel RCU for the mm core (adv's deferred PT-page frees).
 *
 * A read-side section is a preemption-disabled section, and preemption is
 * disabled by turning interrupts off. So a timer interrupt that arrives in a
 * context with interrupts on proves that hart is outside every read-side
 * section: that is the quiescent state (idle harts take ticks too, so they
 * never stall a grace period). A callback runs on the hart that queued it,
 * from its timer tick, once every online hart has passed a quiescent state
 * after the batch holding the callback was snapshotted. */
#ifndef KERNEL_RCU_H
#define KERNEL_RCU_H

#include "cortenmm/platform.h"

/* Nesting preemption guard (interrupts off while count > 0). */
void preempt_disable(void);
void preempt_enable(void);

static inline void rcu_read_lock(void) { preempt_disable(); }
static inline void rcu_read_unlock(void) { preempt_enable(); }

/* Queue fn(head) to run after a grace period. Any context; no allocation. */
void rcu_defer(struct mm_rcu_head *head, void (*fn)(struct mm_rcu_head *));

/* From the timer interrupt: `quiescent` if the interrupted context had
 * interrupts enabled. Records the quiescent state and runs ready callbacks. */
void rcu_tick(int quiescent);

/* Callbacks queued on this hart and not yet run. */
unsigned rcu_pending(void);

/* Wait (interrupts on) until this hart's queued callbacks have run, at
 * most `us` microseconds. Returns 0 or -E_TIMEDOUT. */
int rcu_barrier(uint64_t us);

#endif
