/* RCU for the mm core's adv protocol (PT pages freed after a grace period).
 *
 * Quiescent states: context switch, return to user, and the idle loop. A
 * hart in idle counts as quiescent the whole time it is there, so idle
 * harts never stall a grace period. Read-side sections need no marking: the
 * kernel is not preemptible and passes no quiescent state inside an mm
 * operation.
 *
 * Callbacks queue on `next`; a grace period takes a snapshot of every
 * hart's counter, moving `next` to `wait`; it ends when every hart's counter
 * moved or the hart is idle. Callbacks run on whichever hart notices. */
#include "mk.h"
#include "riscv.h"

static spinlock_t rcu_lock = SPINLOCK_INIT;
static struct mm_rcu_head *next_list, *wait_list;
static int gp_active;
static uint64_t snap[MAX_HARTS];
static volatile uint64_t qs_count[MAX_HARTS];
static volatile int in_idle[MAX_HARTS];

void rcu_defer_call(struct mm_rcu_head *h, void (*fn)(struct mm_rcu_head *))
{
	h->fn = fn;
	unsigned long f = spin_lock_irqsave(&rcu_lock);
	h->next = next_list;
	next_list = h;
	spin_unlock_irqrestore(&rcu_lock, f);
}

void rcu_idle(int idle)
{
	__atomic_store_n(&in_idle[this_cpu()->index], idle, __ATOMIC_SEQ_CST);
}

static int gp_done(void)
{
	for (uint32_t i = 0; i < ncpus; i++)
		if (qs_count[i] == snap[i] && !in_idle[i])
			return 0;
	return 1;
}

void rcu_quiescent(void)
{
	uint32_t me = this_cpu()->index;
	__atomic_fetch_add(&qs_count[me], 1, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&gp_active, __ATOMIC_RELAXED) &&
	    !__atomic_load_n(&next_list, __ATOMIC_RELAXED))
		return;
	struct mm_rcu_head *run = NULL;
	unsigned long f = spin_lock_irqsave(&rcu_lock);
	if (gp_active && gp_done()) {
		run = wait_list;
		wait_list = NULL;
		gp_active = 0;
	}
	if (!gp_active && next_list) {
		wait_list = next_list;
		next_list = NULL;
		for (uint32_t i = 0; i < ncpus; i++)
			snap[i] = __atomic_load_n(&qs_count[i], __ATOMIC_SEQ_CST);
		gp_active = 1;
	}
	spin_unlock_irqrestore(&rcu_lock, f);
	while (run) {
		struct mm_rcu_head *n = run->next;
		run->fn(run);
		run = n;
	}
}
