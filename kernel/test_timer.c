/* Timer tests: ticks advance on every hart at roughly TICK_HZ. */
#include "ktest.h"
#include "cpu.h"
#include "timer.h"
#include "arch.h"
#include "frame.h"

KTEST(30, timer_tick_fires)
{
	if (!irq_enabled())
		return KFAIL("interrupts are off in the test context");
	struct cpu *c = this_cpu();
	uint64_t period = timer_tick_period();
	uint64_t t0 = c->ticks;
	uint64_t start = arch_time_now();
	/* The next tick is at most one period away. The slack is wide
	 * because under TCG the time CSR follows the host clock while the
	 * timer interrupt is raised by QEMU's main loop: on an overloaded
	 * host that thread can lag the vCPU by a good part of a second. */
	uint64_t limit = start + 100 * period;
	while (c->ticks == t0) {
		if (arch_time_now() > limit)
			return KFAIL("no timer interrupt within %lu ticks of time",
				     (unsigned long)(100 * period));
		cpu_relax();
	}
	return 0;
}

KTEST(30, timer_ticks_advance)
{
	uint64_t period = timer_tick_period();
	/* One frame holds a tick count for each of HARTS_MAX harts. */
	_Static_assert(HARTS_MAX * sizeof(uint64_t) <= FRAME_SIZE, "one frame of counts");
	paddr_t pa;
	if (frame_alloc(FRAME_ZERO, &pa))
		return KFAIL("no frame for the tick counts");
	uint64_t *before = phys_to_virt(pa);
	for (uint32_t i = 0; i < ncpus; i++)
		before[i] = cpus[i].ticks;
	/* Wait until every hart has taken 5 ticks. Under TCG a hart is a host
	 * thread that a loaded host may not run for a while, so the wait is
	 * bounded generously (1000 periods) rather than fixed at 20: the test
	 * is that ticks arrive on every hart, not how fast the host is. */
	uint64_t start = arch_time_now();
	for (;;) {
		uint32_t behind = 0;
		for (uint32_t i = 0; i < ncpus; i++)
			if (cpus[i].ticks - before[i] < 5)
				behind++;
		if (!behind || arch_time_now() - start >= 1000 * period)
			break;
		cpu_relax();
	}
	uint64_t elapsed = arch_time_now() - start;
	uint32_t bad = ncpus;
	uint64_t bad_d = 0;
	for (uint32_t i = 0; i < ncpus && bad == ncpus; i++) {
		uint64_t d = cpus[i].ticks - before[i];
		/* Too few, or more than the elapsed time allows (a burst). */
		if (d < 5 || d > elapsed / period + 2) {
			bad = i;
			bad_d = d;
		}
	}
	frame_free(pa);
	if (bad < ncpus)
		return KFAIL("hart %u: %lu ticks in %lu periods", cpus[bad].hartid,
			     (unsigned long)bad_d, (unsigned long)(elapsed / period));
	return 0;
}
