/* RCU: a deferred callback waits for every hart's quiescent state. */
#include "ktest.h"
#include "cpu.h"
#include "rcu.h"
#include "smp.h"
#include "timer.h"
#include "arch.h"

static volatile uint32_t cb_ran;
static volatile uint32_t hold, holding;
static struct mm_rcu_head head;

static void cb(struct mm_rcu_head *h)
{
	(void)h;
	__atomic_store_n(&cb_ran, 1, __ATOMIC_RELEASE);
}

/* Runs on another hart in its IPI handler: interrupts off, so that hart
 * passes no quiescent state until released. */
static void reader(void *arg)
{
	(void)arg;
	rcu_read_lock();
	__atomic_store_n(&holding, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&hold, __ATOMIC_ACQUIRE))
		cpu_relax();
	rcu_read_unlock();
}

static int wait_ran(uint64_t periods)
{
	uint64_t end = arch_time_now() + periods * timer_tick_period();
	while (!__atomic_load_n(&cb_ran, __ATOMIC_ACQUIRE) && arch_time_now() < end)
		cpu_relax();
	return cb_ran;
}

KTEST(30, rcu_grace_period)
{
	if (!irq_enabled())
		return KFAIL("interrupts off in the test context");
	cb_ran = 0;
	uint32_t me = this_cpu()->index;
	uint32_t other = me == 0 ? 1 : 0;
	if (ncpus > 1) {
		hold = 1;
		holding = 0;
		if (smp_call_async(other, reader, NULL))
			return KFAIL("cannot post the reader");
		while (!__atomic_load_n(&holding, __ATOMIC_ACQUIRE))
			cpu_relax();
	}
	rcu_defer(&head, cb);
	if (ncpus > 1) {
		/* The reader's hart takes no ticks: the callback must wait. */
		int early = wait_ran(20);
		__atomic_store_n(&hold, 0, __ATOMIC_RELEASE);
		smp_call_wait(other, 10000000);
		if (early)
			return KFAIL("callback ran while hart %u was in a read section",
				     cpus[other].hartid);
	}
	/* Judged by the event (the callback ran), not by how soon: each
	 * hart's quiescent states come from its ticks, which a host busy
	 * with other QEMUs can delay for seconds. 3000 periods (30 s at
	 * 100 Hz) only guards against a grace period that never ends. */
	if (!wait_ran(3000))
		return KFAIL("callback did not run within 3000 ticks (hang guard) of the grace period");
	if (rcu_pending())
		return KFAIL("%u callbacks still pending", rcu_pending());
	return 0;
}
