#include "rcu.h"
#include "cpu.h"
#include "arch.h"
#include "timer.h"
#include <patina/errno.h>

void preempt_disable(void)
{
	unsigned long f = irq_save();
	struct cpu *c = this_cpu();
	if (c->preempt_count++ == 0)
		c->preempt_saved = f;
}

void preempt_enable(void)
{
	struct cpu *c = this_cpu();
	if (--c->preempt_count == 0)
		irq_restore(c->preempt_saved);
}

void rcu_defer(struct mm_rcu_head *head, void (*fn)(struct mm_rcu_head *))
{
	unsigned long f = irq_save();
	struct cpu *c = this_cpu();
	head->fn = fn;
	head->next = c->rcu_next;
	c->rcu_next = head;
	irq_restore(f);
}

/* Has every hart passed a quiescent state since the snapshot? */
static int grace_period_over(const struct cpu *c)
{
	for (uint32_t i = 0; i < c->rcu_snap_n; i++)
		if (__atomic_load_n(&cpus[i].rcu_qs, __ATOMIC_ACQUIRE) == c->rcu_snap[i])
			return 0;
	return 1;
}

void rcu_tick(int quiescent)
{
	struct cpu *c = this_cpu();
	if (quiescent)
		__atomic_store_n(&c->rcu_qs, c->rcu_qs + 1, __ATOMIC_RELEASE);
	if (c->rcu_wait && grace_period_over(c)) {
		struct mm_rcu_head *h = c->rcu_wait;
		c->rcu_wait = NULL;
		while (h) {
			struct mm_rcu_head *next = h->next;
			h->fn(h);
			h = next;
		}
	}
	if (!c->rcu_wait && c->rcu_next) {
		c->rcu_wait = c->rcu_next;
		c->rcu_next = NULL;
		/* Order the unlinks before reading the counters. */
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE);
		for (uint32_t i = 0; i < n; i++)
			c->rcu_snap[i] = __atomic_load_n(&cpus[i].rcu_qs, __ATOMIC_ACQUIRE);
		c->rcu_snap_n = n;
	}
}

unsigned rcu_pending(void)
{
	unsigned long f = irq_save();
	struct cpu *c = this_cpu();
	unsigned n = 0;
	for (struct mm_rcu_head *h = c->rcu_next; h; h = h->next)
		n++;
	for (struct mm_rcu_head *h = c->rcu_wait; h; h = h->next)
		n++;
	irq_restore(f);
	return n;
}

int rcu_barrier(uint64_t us)
{
	uint64_t end = time_after_us(us);
	while (rcu_pending()) {
		if (!irq_enabled() || arch_time_now() > end)
			return -E_TIMEDOUT;
		arch_wait_for_interrupt();
	}
	return 0;
}
