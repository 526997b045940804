/* Lock statistics (lockstat.h): takes of a private lock count as
 * acquisitions of its class, a wait as a contended one with its spins, and
 * the mm platform's lock hooks count into the mm slots. The private class
 * ranks above every kernel class and has no slot of its own (slot
 * "other"), so nothing else counts where the test looks; the exact checks
 * read this hart's own counters with interrupts off. */
#include "ktest.h"
#include "cpu.h"
#include "lockstat.h"
#include "mm_platform.h"
#include "smp.h"
#include "spinlock.h"
#include "timer.h"
#include "arch.h"

static const struct lock_class lc_stat = { "lockstat_test", 95, 0, LOCKSTAT_OTHER };
static spinlock_t lk = SPINLOCK_INIT_CLASS(&lc_stat);
static volatile uint32_t go, took;

/* This hart's counters of one slot. */
static struct lockstat_sum here(unsigned slot)
{
	struct lockstat_hart *h = &this_cpu()->lockstat;
	return (struct lockstat_sum){ h->acq[slot], h->contended[slot], h->spins[slot] };
}

static int delta(struct lockstat_sum a, struct lockstat_sum b, uint64_t acq, uint64_t cont,
		 uint64_t spins, const char *what, char *why, size_t whylen)
{
	if (b.acq - a.acq != acq || b.contended - a.contended != cont ||
	    b.spins - a.spins != spins)
		return KFAIL("%s: acq %lu contended %lu spins %lu, want %lu %lu %lu", what,
			     (unsigned long)(b.acq - a.acq), (unsigned long)(b.contended - a.contended),
			     (unsigned long)(b.spins - a.spins), (unsigned long)acq,
			     (unsigned long)cont, (unsigned long)spins);
	return 0;
}

/* Runs on another hart in its IPI handler: once told, waits for lk, which
 * the test holds. */
static void taker(void *arg)
{
	(void)arg;
	while (!__atomic_load_n(&go, __ATOMIC_ACQUIRE))
		cpu_relax();
	spin_lock(&lk);
	spin_unlock(&lk);
	__atomic_store_n(&took, 1, __ATOMIC_RELEASE);
}

KTEST(30, lockstat_counts)
{
	for (unsigned s = 0; s < LOCKSTAT_N; s++)
		if (!lockstat_name(s))
			return KFAIL("slot %u has no name", s);
	if (lockstat_name(LOCKSTAT_N))
		return KFAIL("a name past the last slot");

	unsigned long f = irq_save();
	struct lockstat_sum a = here(LOCKSTAT_OTHER);
	for (int i = 0; i < 3; i++) {
		spin_lock(&lk);
		spin_unlock(&lk);
	}
	int got = spin_trylock(&lk);
	int again = got && spin_trylock(&lk);   /* held: fails, not counted */
	if (got)
		spin_unlock(&lk);
	struct lockstat_sum b = here(LOCKSTAT_OTHER);
	int r = !got || again ? KFAIL("trylock of a free lock %d, of a held one %d", got, again)
			      : delta(a, b, 4, 0, 0, "free takes", why, whylen);
	/* A wait reports 1 + its spins: contended once, spins 4. */
	if (!r) {
		lockstat_count(LOCKSTAT_OTHER, 5);
		r = delta(b, here(LOCKSTAT_OTHER), 1, 1, 4, "a wait of 4 spins", why, whylen);
	}
	/* The core's own locks count through lock_stat; the kernel's queue
	 * locks (when built) in their hooks. */
	const struct mm_platform *p = &kernel_mm_platform;
	if (!r) {
		a = here(LOCKSTAT_MM + MM_LK_PTL);
		p->lock_stat(MM_LK_PTL, 3);
		r = delta(a, here(LOCKSTAT_MM + MM_LK_PTL), 1, 1, 2, "lock_stat", why, whylen);
	}
	if (!r && p->spin_lock) {
		mm_lock_t w = { 0 };
		a = here(LOCKSTAT_MM + MM_LK_SPIN);
		p->spin_lock(&w);
		p->spin_unlock(&w);
		r = delta(a, here(LOCKSTAT_MM + MM_LK_SPIN), 1, 0, 0, "PT spin lock hook", why, whylen);
	}
	irq_restore(f);
	if (r || ncpus < 2)
		return r;

	/* Another hart waits for lk while this one holds it past the other's
	 * ticket: its take is contended. Summed over harts. The call is
	 * posted first (not with interrupts off) and lk held with them off
	 * (no handler's lock lands on top of it). */
	struct lockstat_sum s0, s1;
	uint32_t other = this_cpu()->index == 0 ? 1 : 0;
	lockstat_read(LOCKSTAT_OTHER, &s0);
	go = took = 0;
	if (smp_call_async(other, taker, NULL))
		return KFAIL("cannot post the taker");
	f = irq_save();
	spin_lock(&lk);
	uint32_t mine = lk.serving;
	__atomic_store_n(&go, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&lk.next, __ATOMIC_RELAXED) == mine + 1)
		cpu_relax();
	/* Its ticket is drawn; hold a while longer so its first look at the
	 * lock surely finds it taken. */
	uint64_t until = arch_time_now() + 10 * (uint64_t)(timer_timebase() / 1000);
	while (arch_time_now() < until)
		cpu_relax();
	spin_unlock(&lk);
	irq_restore(f);
	while (!__atomic_load_n(&took, __ATOMIC_ACQUIRE))
		cpu_relax();
	smp_call_wait(other, 10000000);
	lockstat_read(LOCKSTAT_OTHER, &s1);
	if (s1.acq - s0.acq != 2 || s1.contended - s0.contended != 1 || s1.spins == s0.spins)
		return KFAIL("two harts: acq %lu contended %lu spins %lu, want 2, 1, > 0",
			     (unsigned long)(s1.acq - s0.acq),
			     (unsigned long)(s1.contended - s0.contended),
			     (unsigned long)(s1.spins - s0.spins));
	return 0;
}
