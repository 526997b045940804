#include <patina/errno.h>
#include "smp.h"
#include "arch.h"
#include "printk.h"
#include "timer.h"
#include "kernel.h"
#include "kstring.h"
#include "panic.h"
#include "frame.h"
#include "shootdown.h"
#include "irqchip.h"

void sched_idle_loop(void) __attribute__((noreturn));

uint32_t ncpus = 1;

extern char _start_secondary[];
extern char boot_stack[], boot_stack_top[];

int cpu_index_of_hartid(uint32_t hartid)
{
	for (uint32_t i = 0; i < ncpus; i++)
		if (cpus[i].hartid == hartid)
			return (int)i;
	return -1;
}

/* Give up on a hart that is not online yet: its online word goes from 0
 * to 2, and a hart that arrives later finds it so and stops itself
 * (secondary_main), so it never runs with an index nobody counts.
 * Returns 1 when it came online after all (the exchange lost), else 0. */
static int give_up(struct cpu *c)
{
	uint32_t waiting = 0;
	return __atomic_compare_exchange_n(&c->online, &waiting, 2, 0, __ATOMIC_ACQ_REL,
					   __ATOMIC_ACQUIRE) ? 0 : 1;
}

/* Start hart `hartid` at _start_secondary with c as its struct cpu and wait
 * for it to come online: 5 s, or up to 60 s while the firmware still
 * reports it START_PENDING (OpenSBI 1.1 lets its harts through its warm
 * boot one at a time under a lock, which takes long with many harts on
 * few host cores). A hart that OpenSBI 1.1 sent to _start instead (a
 * race in its HSM start, see entry.S) stops itself; it is then started
 * again, a few times at most. Returns 1 online, 0 not online in time, or
 * the SBI error (negative) when SBI refused the start. */
static int start_one(uint32_t hartid, struct cpu *c)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		long e = arch_hart_start(hartid, virt_to_phys(_start_secondary),
					 (unsigned long)(uintptr_t)c);
		if (e)
			return e < 0 ? (int)e : -1;
		uint64_t soft = time_after_us(5000000), hard = time_after_us(60000000);
		while (!__atomic_load_n(&c->online, __ATOMIC_ACQUIRE)) {
			/* Stopped again: it went to _start and stopped itself. */
			long st = arch_hart_state(hartid);
			if (st == ARCH_HART_STOPPED)
				break;
			uint64_t now = arch_time_now();
			int pending = st == ARCH_HART_START_PENDING;
			if (now >= hard || (now >= soft && !pending))
				break;
			cpu_relax();
		}
		if (__atomic_load_n(&c->online, __ATOMIC_ACQUIRE))
			return 1;
		if (arch_hart_state(hartid) != ARCH_HART_STOPPED)
			return give_up(c);
		printk("patina: hart %u went astray at start, starting it again\n", hartid);
	}
	return give_up(c);
}

uint32_t smp_start_harts(const struct boot_info *bi)
{
	uint32_t boot_hart = this_cpu()->hartid, refused = 0;
	for (int i = 0; i < bi->ncpus; i++) {
		const struct bi_cpu *bc = &bi->cpus[i];
		if (bc->hartid == boot_hart || !bc->okay || !bc->has_mmu)
			continue;
		if (ncpus >= harts_max) {
			printk("patina: more than %u harts, hart %u left out\n",
			       harts_max, bc->hartid);
			continue;
		}
		struct cpu *c = &cpus[ncpus];
		/* A slot a failed start left keeps its stack. */
		uint64_t stack = c->stack_bottom;
		paddr_t pa;
		if (!stack) {
			if (frame_alloc_run(KSTACK_SIZE / FRAME_SIZE, &pa)) {
				printk("patina: no memory for the stack of hart %u\n", bc->hartid);
				break;
			}
			stack = (uint64_t)(uintptr_t)phys_to_virt(pa);
		}
		/* Keep what boot set per hart before any started: the RCU
		 * snapshot array and the run queue (sched_init_harts). */
		uint64_t *snap = c->rcu_snap;
		struct rq *rq = c->rq;
		memset(c, 0, sizeof *c);
		c->rcu_snap = snap;
		c->rq = rq;
		c->index = ncpus;
		c->hartid = bc->hartid;
		hart_ids[ncpus] = bc->hartid;
		c->stack_bottom = stack;
		c->stack_top = c->stack_bottom + KSTACK_SIZE;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);

		int started = start_one(bc->hartid, c);
		if (started < 0) {
			/* OpenSBI 1.1 manages 128 harts: with more, the rest
			 * are refused, one line each would be hundreds. */
			if (refused++ < 4)
				printk("patina: hart %u did not start (the firmware or platform refused: error %d)\n",
				       bc->hartid, started);
			continue;
		}
		if (!started) {
			/* It may still arrive; it would then run with an index
			 * nobody counts, so stop counting from here. */
			printk("patina: hart %u did not come online\n", bc->hartid);
			break;
		}
		__atomic_store_n(&ncpus, ncpus + 1, __ATOMIC_RELEASE);
	}
	if (refused > 4)
		printk("patina: %u harts did not start (refused), %u more not listed\n",
		       refused, refused - 4);
	return ncpus;
}

void secondary_main(uint64_t hartid, void *opaque)
{
	struct cpu *c = opaque;
	(void)hartid;
	arch_as_switch(boot_config.kernel_as_token);
	arch_tlb_flush_all();
	trap_init_hart();
	if (timer_start_hart())
		printk("patina: hart %u: timer did not start\n", c->hartid);
	arch_ipi_irq_on();
	irqchip_init_hart(c->hartid);
	uint32_t waiting = 0;
	if (!__atomic_compare_exchange_n(&c->online, &waiting, 1, 0, __ATOMIC_ACQ_REL,
					 __ATOMIC_ACQUIRE)) {
		/* Too late: the boot hart gave up on this hart and goes on
		 * without it, so it must run nothing. */
		arch_irqs_mask_all();
		arch_hart_stop();
		for (;;)
			arch_wait_for_interrupt();
	}
	sched_idle_loop();   /* kernel/mk/sched.c */
}

void idle_loop(void)
{
	irq_enable();
	for (;;)
		arch_wait_for_interrupt();
}

int ipi_send(uint32_t idx)
{
	return arch_ipi_send(cpus[idx].hartid) ? -E_IO : 0;
}

int ipi_ping(uint32_t from, uint32_t target)
{
	hartmask_set(&cpus[target].ping_from, from);
	return ipi_send(target);
}

void ipi_interrupt(void)
{
	struct cpu *c = this_cpu();
	/* Clear first: a request posted after this point re-raises SSIP. */
	arch_ipi_clear();
	c->ipis++;
	/* TLB shootdowns first: acknowledged, then applied, before this
	 * handler returns (shootdown.h). */
	shootdown_service();
	struct hartmask p;
	hartmask_take(&p, &c->ping_from);
	hartmask_or(&c->pings_seen, &p);
	smp_fn_t fn = __atomic_load_n(&c->call_fn, __ATOMIC_ACQUIRE);
	if (fn) {
		fn(c->call_arg);
		__atomic_store_n(&c->call_fn, NULL, __ATOMIC_RELEASE);
		__atomic_store_n(&c->call_busy, 0, __ATOMIC_RELEASE);
	}
}

int smp_call_async(uint32_t idx, smp_fn_t fn, void *arg)
{
	if (idx >= ncpus || idx == this_cpu()->index)
		return -E_INVAL;
	struct cpu *t = &cpus[idx];
	uint32_t zero = 0;
	while (!__atomic_compare_exchange_n(&t->call_busy, &zero, 1, 0,
					    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)) {
		zero = 0;
		cpu_relax();
	}
	t->call_arg = arg;
	__atomic_store_n(&t->call_fn, fn, __ATOMIC_RELEASE);
	int err = ipi_send(idx);
	if (err) {
		__atomic_store_n(&t->call_fn, NULL, __ATOMIC_RELEASE);
		__atomic_store_n(&t->call_busy, 0, __ATOMIC_RELEASE);
	}
	return err;
}

int smp_call_wait(uint32_t idx, uint64_t us)
{
	if (idx >= ncpus)
		return -E_INVAL;
	uint64_t deadline = time_after_us(us);
	while (__atomic_load_n(&cpus[idx].call_fn, __ATOMIC_ACQUIRE)) {
		if (arch_time_now() > deadline)
			return -E_TIMEDOUT;
		cpu_relax();
	}
	return 0;
}

int smp_call_others_async(smp_fn_t fn, void *arg, uint32_t *bad)
{
	uint32_t me = this_cpu()->index;
	for (uint32_t i = 0; i < ncpus; i++) {
		if (i == me)
			continue;
		int err = smp_call_async(i, fn, arg);
		if (err) {
			*bad = i;
			return err;
		}
	}
	return 0;
}

int smp_call_others_wait(uint64_t us, uint32_t *bad)
{
	uint32_t me = this_cpu()->index;
	for (uint32_t i = 0; i < ncpus; i++) {
		if (i == me)
			continue;
		int err = smp_call_wait(i, us);
		if (err) {
			*bad = i;
			return err;
		}
	}
	return 0;
}
