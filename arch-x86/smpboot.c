/* Starting the other CPUs of an x86-64 machine (arch_hart_start and
 * arch_hart_state of kernel/arch.h): the start-up code (ap_boot.S) is
 * copied to its page below 1 MiB with a data block (ap_boot.h) naming the
 * CPU, the boot CPU's control registers, the entry and its argument; the
 * CPU gets INIT and two start-up IPIs (lapic.c), and comes to
 * _start_secondary (entry.S), then x86_ap_main below. smp.c starts one
 * CPU at a time (it waits for each before the next), so one data block
 * serves every start. */
#include "arch.h"
#include "ap_boot.h"
#include "bootfdt.h"
#include "cpu.h"
#include "kernel.h"
#include "kstring.h"
#include "mm_platform.h"
#include "panic.h"
#include "timer.h"
#include "x86.h"

extern const uint64_t boot_pml4_pa;   /* entry.S */

/* How long a CPU that got its start-up IPIs may take to reach the page
 * before arch_hart_state calls it stopped (smp.c then starts it again, or
 * gives up on it): what a few hundred instructions take even on a loaded
 * host running the guest's CPUs as threads. */
#define ARRIVE_WAIT_US 1000000

static volatile uint8_t *tramp;           /* the start-up page, mapped once */
static struct x86_ap_data *tramp_data;    /* its data block */
static uint32_t starting = ~0u;           /* APIC id of the latest start */
static uint64_t pending_until;            /* when it counts as not arriving */
static uint64_t bsp_pat;                  /* the boot CPU's IA32_PAT */

/* Map the start-up page and copy the code into it. 0, or X86_ERR_NOMEM
 * when no page-table page was left for the mapping. */
static long tramp_map(void)
{
	size_t len = (size_t)(x86_ap_tramp_end - x86_ap_tramp_start);
	if (len > PAGE_SIZE)
		panic("smpboot: start-up code of %lu bytes exceeds its page", (unsigned long)len);
	void *va;
	/* Device memory (uncached): not RAM the kernel page table knows. */
	if (kmap_mmio(X86_AP_TRAMP_PA, PAGE_SIZE, &va))
		return X86_ERR_NOMEM;
	memcpy(va, x86_ap_tramp_start, len);
	tramp_data = (struct x86_ap_data *)((char *)va + (x86_ap_tramp_data - x86_ap_tramp_start));
	tramp = va;
	return 0;
}

/* Needs: the kernel page table, the boot CPU (smp.c, one start at a
 * time). Validates, then fills the data block and sends INIT-SIPI-SIPI;
 * returns 0 once they are sent (the CPU comes online later, or not:
 * x86_hart_state), or an X86_ERR_* with nothing sent. */
long x86_hart_start(uint32_t hartid, uint64_t entry_pa, unsigned long opaque)
{
	/* xAPIC physical destinations are 8 bits, and 0xff is everyone. */
	if (hartid >= 0xff)
		return X86_ERR_NOT_SUPPORTED;
	if (hartid == this_cpu()->hartid || !entry_pa || entry_pa >= X86_BOOT_WINDOW || !opaque)
		return X86_ERR_INVALID;
	if (!tramp) {
		long e = tramp_map();
		if (e)
			return e;
	}
	struct x86_ap_data *d = tramp_data;
	uint64_t cr4 = read_cr4();
	d->cr0 = read_cr0();
	d->cr3 = boot_pml4_pa;
	d->cr4 = cr4;
	d->efer = rdmsr(MSR_EFER) & ~X86_EFER_LMA;
	d->xcr0 = cr4 & X86_CR4_OSXSAVE ? xgetbv(0) : 0;
	d->entry = entry_pa;
	d->arg = opaque;
	d->apic_id = hartid;
	d->arrived = 0;
	bsp_pat = rdmsr(MSR_PAT);
	starting = hartid;
	pending_until = ~0ull;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	x86_lapic_start_ap(hartid, X86_AP_TRAMP_PA >> 12);
	__atomic_store_n(&pending_until, time_after_us(ARRIVE_WAIT_US), __ATOMIC_RELEASE);
	return 0;
}

/* STARTED: the CPU of the latest start reached the start-up page, or an
 * earlier one came online (or it is the boot CPU); START_PENDING: the
 * latest was sent its IPIs less than ARRIVE_WAIT_US ago and has not
 * arrived; STOPPED: otherwise (never started, did not arrive in time, or
 * given up on, which then stops itself in secondary_main). */
long x86_hart_state(uint32_t hartid)
{
	if (hartid == this_cpu()->hartid)
		return ARCH_HART_STARTED;
	if (tramp && hartid == starting) {
		if (__atomic_load_n(&tramp_data->arrived, __ATOMIC_ACQUIRE))
			return ARCH_HART_STARTED;
		return arch_time_now() < __atomic_load_n(&pending_until, __ATOMIC_ACQUIRE)
			? ARCH_HART_START_PENDING : ARCH_HART_STOPPED;
	}
	int i = cpu_index_of_hartid(hartid);
	if (i >= 0 && __atomic_load_n(&cpus[i].online, __ATOMIC_ACQUIRE) == 1)
		return ARCH_HART_STARTED;
	return ARCH_HART_STOPPED;
}

/* _start_secondary (entry.S), on the kernel page table and c's stack,
 * interrupts off: the per-CPU pointer (GS base) first, as on the boot
 * CPU (boot.c), the boot CPU's memory types, then the generic part. */
void x86_ap_main(struct cpu *c) __attribute__((noreturn));
void x86_ap_main(struct cpu *c)
{
	x86_cpu_set(c);
	wrmsr(MSR_PAT, bsp_pat);
	secondary_main(c->hartid, c);
	panic("secondary_main returned");
}
