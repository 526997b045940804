/* SMP tests: rendezvous at a barrier, and IPIs between every pair. */
#include "ktest.h"
#include "cpu.h"
#include "smp.h"
#include "timer.h"
#include "arch.h"

static volatile uint32_t arrived;
static struct hartmask arrived_mask;
static volatile uint32_t barrier_timeouts;

/* Whether m holds exactly the logical harts 0..n-1 except `but` (-1: none). */
static int mask_is_first(const struct hartmask *m, uint32_t n, long but)
{
	for (uint32_t i = 0; i < HARTS_MAX; i++)
		if (hartmask_test(m, i) != (i < n && (long)i != but))
			return 0;
	return 1;
}

static void barrier_body(void *arg)
{
	(void)arg;
	hartmask_set(&arrived_mask, this_cpu()->index);
	__atomic_fetch_add(&arrived, 1, __ATOMIC_ACQ_REL);
	uint64_t deadline = time_after_us(10000000);
	while (__atomic_load_n(&arrived, __ATOMIC_ACQUIRE) < ncpus) {
		if (arch_time_now() > deadline) {
			__atomic_fetch_add(&barrier_timeouts, 1, __ATOMIC_RELAXED);
			return;
		}
		cpu_relax();
	}
}

KTEST(30, smp_rendezvous)
{
	arrived = 0;
	hartmask_clear_all(&arrived_mask);
	barrier_timeouts = 0;
	uint32_t bad;
	if (smp_call_others_async(barrier_body, NULL, &bad))
		return KFAIL("cannot post to hart %u", cpus[bad].hartid);
	barrier_body(NULL);
	if (smp_call_others_wait(10000000, &bad))
		return KFAIL("hart %u never left the barrier", cpus[bad].hartid);
	if (barrier_timeouts)
		return KFAIL("%u harts timed out at the barrier (%u of %u arrived)",
			     barrier_timeouts, arrived, ncpus);
	if (arrived != ncpus || !mask_is_first(&arrived_mask, ncpus, -1))
		return KFAIL("arrived %u (first word %lx), want %u", arrived,
			     (unsigned long)arrived_mask.w[0], ncpus);
	return 0;
}

static volatile uint32_t ping_errors;

static void ping_others(void *arg)
{
	(void)arg;
	uint32_t me = this_cpu()->index;
	for (uint32_t t = 0; t < ncpus; t++)
		if (t != me && ipi_ping(me, t))
			__atomic_fetch_add(&ping_errors, 1, __ATOMIC_RELAXED);
}

KTEST(30, ipi_all_pairs)
{
	ping_errors = 0;
	for (uint32_t i = 0; i < ncpus; i++)
		hartmask_clear_all(&cpus[i].pings_seen);
	uint32_t bad;
	if (smp_call_others_async(ping_others, NULL, &bad))
		return KFAIL("cannot post to hart %u", cpus[bad].hartid);
	ping_others(NULL);
	if (smp_call_others_wait(10000000, &bad))
		return KFAIL("hart %u did not run its pings", cpus[bad].hartid);
	if (ping_errors)
		return KFAIL("%u SBI send_ipi errors", ping_errors);
	uint64_t deadline = time_after_us(5000000);
	for (uint32_t i = 0; i < ncpus; i++) {
		while (!mask_is_first(&cpus[i].pings_seen, ncpus, (long)i)) {
			if (arch_time_now() > deadline)
				return KFAIL("hart %u got pings from mask %lx (first word), want every other",
					     cpus[i].hartid, (unsigned long)cpus[i].pings_seen.w[0]);
			cpu_relax();
		}
	}
	return 0;
}

/* A cross-call runs on the hart it was sent to (calls go one at a time). */
static volatile uint32_t ran_on;

static void record_hart(void *arg)
{
	(void)arg;
	ran_on = this_cpu()->hartid + 1;
}

KTEST(30, smp_call_targets)
{
	uint32_t me = this_cpu()->index;
	for (uint32_t i = 0; i < ncpus; i++) {
		if (i == me)
			continue;
		ran_on = 0;
		if (smp_call_async(i, record_hart, NULL) || smp_call_wait(i, 10000000))
			return KFAIL("call to hart %u failed", cpus[i].hartid);
		if (ran_on != cpus[i].hartid + 1)
			return KFAIL("call for hart %u did not run there", cpus[i].hartid);
	}
	if (smp_call_async(me, record_hart, NULL) == 0)
		return KFAIL("a call to the current hart was accepted");
	return 0;
}
