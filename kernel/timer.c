#include <patina/errno.h>
#include "timer.h"
#include "arch.h"
#include "cpu.h"
#include "printk.h"
#include "rcu.h"
#include "mk/mk.h"      /* ipc_timeouts_tick */

static uint64_t timebase;
static uint64_t period;
static int sstc;

int timer_init(uint64_t timebase_hz, int use_sstc)
{
	if (timebase_hz < TICK_HZ)
		return -E_INVAL;
	timebase = timebase_hz;
	period = timebase_hz / TICK_HZ;
	sstc = use_sstc;
	return 0;
}

/* Program the next event at absolute time t. */
static int arm(uint64_t t)
{
	return arch_timer_set(t, sstc) ? -E_IO : 0;
}

int timer_start_hart(void)
{
	struct cpu *c = this_cpu();
	c->next_tick = arch_time_now() + period;
	int err = arm(c->next_tick);
	if (err)
		return err;
	arch_timer_irq_on();
	return 0;
}

void timer_interrupt(int irqs_were_on)
{
	struct cpu *c = this_cpu();
	c->ticks++;
	uint64_t now = arch_time_now();
	/* Skip missed periods instead of firing a burst after a long stall. */
	c->next_tick += period;
	if (c->next_tick <= now)
		c->next_tick = now + period;
	if (arm(c->next_tick)) {
		/* Without a timer this hart cannot tick; stop asking. */
		arch_timer_irq_off();
		printk("patina: hart %u: SBI set_timer failed, timer off\n", c->hartid);
	}
	rcu_tick(irqs_were_on);
	ipc_timeouts_tick(now);
}

uint64_t timer_timebase(void) { return timebase; }
uint64_t timer_tick_period(void) { return period; }
int timer_uses_sstc(void) { return sstc; }

uint64_t time_after_us(uint64_t us)
{
	return arch_time_now() + us * timebase / 1000000;
}

void udelay(uint64_t us)
{
	uint64_t end = time_after_us(us);
	while (arch_time_now() < end)
		cpu_relax();
}
