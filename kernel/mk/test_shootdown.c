/* In-kernel test of the IPI shootdown (shootdown.c): two harts that shoot
 * at each other with interrupts off both finish, because a hart waiting
 * for acknowledgements serves its own mailbox. */
#include "ktest.h"
#include "arch.h"
#include "cpu.h"
#include "kernel.h"
#include "smp.h"
#include "shootdown.h"
#include "timer.h"

#define TS_VA 0x3000000000UL   /* a page no program uses; any tag */

struct ts_arg {
	uint32_t target;     /* the hart the other one shoots at (us) */
	int started;         /* set by the other hart as it starts shooting */
};

/* On the other hart, in its interrupt handler (interrupts off). */
static void ts_shoot_back(void *arg)
{
	struct ts_arg *a = arg;
	struct hartmask m = { { 0 } };
	hartmask_set(&m, a->target);
	__atomic_store_n(&a->started, 1, __ATOMIC_RELEASE);
	shootdown_flush(&m, ARCH_NO_ASID, TS_VA, TS_VA + 4096, 0);
}

/* This hart asks the other one to shoot at it (from its interrupt
 * handler) and waits, answering nothing, until it has started, then,
 * interrupts off, shoots at the other one: each waits for
 * the other's acknowledgement with interrupts off. Neither may need the
 * SBI fallback, which is what answering no request while waiting would
 * come to. Judged by the event (both acknowledged), not by a window: the
 * fallback's wait is stretched from 20 ms to 30 s for this test, so a
 * loaded host that keeps a vCPU off the CPU only slows it down, while a
 * waiter that serves no requests still deadlocks until the fallback and
 * fails it. A try that fell back anyway is repeated once. */
KTEST(60, shootdown_mutual_no_deadlock)
{
	if (ncpus < 2 || (boot_config.ablate & ABLATE_IPIFLUSH))
		return 0;
	int clean = 0, tries = 0, err = 0;
	uint64_t fb_me = 0, fb_other = 0;
	uint64_t wait_was = shootdown_ack_wait_us;
	shootdown_ack_wait_us = 30000000;
	for (; tries < 2 && !clean && !err; tries++) {
		unsigned long f = irq_save();
		uint32_t me = this_cpu()->index, other = me == 0 ? 1 : 0;
		struct ts_arg a = { me, 0 };
		struct shootdown_stats s0m, s0o, s1m, s1o;
		shootdown_stats(&s0m, (int)me);
		shootdown_stats(&s0o, (int)other);
		err = smp_call_async(other, ts_shoot_back, &a);
		uint64_t start_by = time_after_us(10000000);   /* hang guards: events end both */
		while (!err && !__atomic_load_n(&a.started, __ATOMIC_ACQUIRE) &&
		       arch_time_now() < start_by)
			cpu_relax();
		if (!err) {
			struct hartmask m = { { 0 } };
			hartmask_set(&m, other);
			shootdown_flush(&m, ARCH_NO_ASID, TS_VA, TS_VA + 4096, 0);
			/* Its call may still wait for us: keep answering. */
			uint64_t until = time_after_us(30000000);
			while (__atomic_load_n(&cpus[other].call_fn, __ATOMIC_ACQUIRE) &&
			       arch_time_now() < until)
				shootdown_service();
			err = smp_call_wait(other, 1);
		}
		shootdown_stats(&s1m, (int)me);
		shootdown_stats(&s1o, (int)other);
		irq_restore(f);
		fb_me = s1m.fallbacks - s0m.fallbacks;
		fb_other = s1o.fallbacks - s0o.fallbacks;
		clean = !fb_me && !fb_other;
	}
	shootdown_ack_wait_us = wait_was;
	if (err)
		return KFAIL("cross call to the other hart failed (%d)", err);
	if (!clean)
		return KFAIL("%d tries, each needed the SBI fallback (last: this hart %lu, the other %lu)",
			     tries, (unsigned long)fb_me, (unsigned long)fb_other);
	return 0;
}
