#include <patina/errno.h>
#include "smp.h"
#include "sbi.h"
#include "riscv.h"
#include "printk.h"
#include "timer.h"
#include "kernel.h"
#include "kstring.h"
#include "panic.h"

void sched_idle_loop(void) __attribute__((noreturn));

struct cpu cpus[MAX_HARTS];
uint32_t ncpus = 1;

static uint8_t stacks[MAX_HARTS][KSTACK_SIZE] __attribute__((aligned(16)));
extern char _start_secondary[];
extern char boot_stack[], boot_stack_top[];

int cpu_index_of_hartid(uint32_t hartid)
{
	for (uint32_t i = 0; i < ncpus; i++)
		if (cpus[i].hartid == hartid)
			return (int)i;
	return -1;
}

/* Start hart `hartid` at _start_secondary with c as its struct cpu and wait
 * for it to come online. A hart that OpenSBI 1.1 sent to _start instead (a
 * race in its HSM start, see entry.S) stops itself; it is then started
 * again, a few times at most. Returns 1 online, 0 not online in time, -1
 * when SBI refused the start (reported). */
static int start_one(uint32_t hartid, struct cpu *c)
{
	for (int attempt = 0; attempt < 4; attempt++) {
		struct sbiret r = sbi_hart_start(hartid, virt_to_phys(_start_secondary),
						 (unsigned long)(uintptr_t)c);
		if (r.error) {
			printk("patina: hart %u did not start (SBI error %ld)\n",
			       hartid, r.error);
			return -1;
		}
		uint64_t deadline = time_after_us(5000000);
		while (!__atomic_load_n(&c->online, __ATOMIC_ACQUIRE) && rdtime() < deadline) {
			/* Stopped again: it went to _start and stopped itself. */
			struct sbiret st = sbi_hart_get_status(hartid);
			if (!st.error && st.value == SBI_HSM_STOPPED)
				break;
			cpu_relax();
		}
		if (__atomic_load_n(&c->online, __ATOMIC_ACQUIRE))
			return 1;
		struct sbiret st = sbi_hart_get_status(hartid);
		if (st.error || st.value != SBI_HSM_STOPPED)
			return 0;
		printk("patina: hart %u went astray at start, starting it again\n", hartid);
	}
	return 0;
}

uint32_t smp_start_harts(const struct boot_info *bi)
{
	uint32_t boot_hart = this_cpu()->hartid;
	for (int i = 0; i < bi->ncpus; i++) {
		const struct bi_cpu *bc = &bi->cpus[i];
		if (bc->hartid == boot_hart || !bc->okay || !bc->has_mmu)
			continue;
		if (ncpus >= MAX_HARTS) {
			printk("patina: more than %d harts, hart %u left out\n",
			       MAX_HARTS, bc->hartid);
			continue;
		}
		struct cpu *c = &cpus[ncpus];
		memset(c, 0, sizeof *c);
		c->index = ncpus;
		c->hartid = bc->hartid;
		c->stack_bottom = (uint64_t)(uintptr_t)stacks[ncpus];
		c->stack_top = c->stack_bottom + KSTACK_SIZE;
		__atomic_thread_fence(__ATOMIC_SEQ_CST);

		int started = start_one(bc->hartid, c);
		if (started < 0)
			continue;
		if (!started) {
			/* It may still arrive; it would then run with an index
			 * nobody counts, so stop counting from here. */
			printk("patina: hart %u did not come online\n", bc->hartid);
			break;
		}
		__atomic_store_n(&ncpus, ncpus + 1, __ATOMIC_RELEASE);
	}
	return ncpus;
}

void secondary_main(uint64_t hartid, void *opaque)
{
	struct cpu *c = opaque;
	(void)hartid;
	csr_write(satp, boot_config.kernel_satp);
	local_flush_tlb_all();
	trap_init_hart();
	if (timer_start_hart())
		printk("patina: hart %u: timer did not start\n", c->hartid);
	csr_set(sie, SIE_SSIE);
	__atomic_store_n(&c->online, 1, __ATOMIC_RELEASE);
	sched_idle_loop();   /* kernel/mk/sched.c */
}

void idle_loop(void)
{
	irq_enable();
	for (;;)
		wfi();
}

int ipi_send(uint32_t idx)
{
	struct sbiret r = sbi_send_ipi(1, cpus[idx].hartid);
	return r.error ? -E_IO : 0;
}

int ipi_ping(uint32_t from, uint32_t target)
{
	__atomic_fetch_or(&cpus[target].ping_from, 1ULL << from, __ATOMIC_RELEASE);
	return ipi_send(target);
}

void ipi_interrupt(void)
{
	struct cpu *c = this_cpu();
	/* Clear first: a request posted after this point re-raises SSIP. */
	csr_clear(sip, SIP_SSIP);
	c->ipis++;
	uint64_t p = __atomic_exchange_n(&c->ping_from, 0, __ATOMIC_ACQ_REL);
	if (p)
		__atomic_fetch_or(&c->pings_seen, p, __ATOMIC_RELAXED);
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
		if (rdtime() > deadline)
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
