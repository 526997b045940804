/* The local APIC (xAPIC, memory-mapped): the timer and IPIs of kernel/
 * arch.h. Its registers are mapped on first use, which the generic boot
 * makes timer_start_hart, after the switch to the kernel page table (the
 * boot CPU; before that nothing reaches this file but a mask request,
 * which then has nothing to mask: the APIC is still software-disabled).
 * The timer runs in TSC-deadline mode where CPUID has it, else one-shot
 * counting at the APIC's own rate, measured against the TSC.
 * A timer that runs out while its LVT entry is masked interrupts no one
 * (in both modes), where kernel/arch.h wants the interrupt held until it
 * is enabled: each CPU remembers an armed timer that has not interrupted
 * yet, and unmasking re-arms it to fire at once if it ran out. */
#include "arch.h"
#include "memlayout.h"
#include "mm_platform.h"
#include "panic.h"
#include "timer.h"
#include "x86.h"
#include "cpu.h"

#define LAPIC_ID      0x020
#define LAPIC_TPR     0x080
#define LAPIC_EOI     0x0b0
#define LAPIC_SVR     0x0f0
#define LAPIC_ICR_LO  0x300
#define LAPIC_ICR_HI  0x310
#define LAPIC_LVT_TIMER 0x320
#define LAPIC_TIMER_INIT 0x380
#define LAPIC_TIMER_CUR  0x390
#define LAPIC_TIMER_DIV  0x3e0
#define SVR_ENABLE    (1u << 8)
#define LVT_MASKED    (1u << 16)
#define LVT_TSC_DEADLINE (2u << 17)
#define ICR_PENDING   (1u << 12)
#define ICR_ASSERT    (1u << 14)
#define TIMER_DIV_1   0xb

static volatile uint32_t *lapic;
static uint64_t armed_at[HARTS_MAX];  /* per CPU: the armed deadline, 0 when none */
static uint64_t apic_per_tsc_q32;   /* one-shot mode: APIC counts per TSC tick, 32.32 */

static uint32_t rd(uint32_t reg) { return lapic[reg / 4]; }
static void wr(uint32_t reg, uint32_t v) { lapic[reg / 4] = v; }

/* The APIC timer's count rate against the TSC's, over 10 ms. */
static void calibrate_oneshot(void)
{
	uint64_t tsc_hz = timer_timebase(), span = tsc_hz / 100;
	wr(LAPIC_TIMER_DIV, TIMER_DIV_1);
	wr(LAPIC_LVT_TIMER, LVT_MASKED | VEC_TIMER);
	wr(LAPIC_TIMER_INIT, 0xffffffffu);
	uint64_t t0 = rdtsc();
	while (rdtsc() - t0 < span)
		cpu_relax();
	uint64_t counted = 0xffffffffu - rd(LAPIC_TIMER_CUR);
	wr(LAPIC_TIMER_INIT, 0);
	apic_per_tsc_q32 = (counted << 32) / span;
}

/* Map the registers and turn this APIC on, its timer masked. Boot CPU,
 * interrupts off, under the kernel page table. */
static void lapic_setup(void)
{
	if (phys_map_base != DIRECT_MAP_BASE)
		panic("lapic: used before the kernel page table");
	paddr_t pa = rdmsr(MSR_APIC_BASE) & 0xffffff000ull;
	void *va;
	if (kmap_mmio(pa, PAGE_SIZE, &va))
		panic("lapic: cannot map its registers at %lx", (unsigned long)pa);
	lapic = va;
	wr(LAPIC_SVR, SVR_ENABLE | VEC_SPURIOUS);
	wr(LAPIC_TPR, 0);
	if (x86_feat.tsc_deadline)
		wr(LAPIC_LVT_TIMER, LVT_MASKED | LVT_TSC_DEADLINE | VEC_TIMER);
	else
		calibrate_oneshot();
}

static volatile uint32_t *regs(void)
{
	if (!lapic)
		lapic_setup();
	return lapic;
}

/* Program the timer for TSC value `when`. */
static void program(uint64_t when)
{
	if (x86_feat.tsc_deadline) {
		wrmsr(MSR_TSC_DEADLINE, when);
		return;
	}
	uint64_t now = rdtsc(), delta = when > now ? when - now : 1;
	unsigned __int128 c = (unsigned __int128)delta * apic_per_tsc_q32;
	uint64_t count = (uint64_t)(c >> 32);
	wr(LAPIC_TIMER_INIT, count == 0 ? 1 : count > 0xffffffffu ? 0xffffffffu : (uint32_t)count);
}

long x86_timer_set(uint64_t when)
{
	regs();
	armed_at[this_cpu()->index] = when ? when : 1;
	program(when);
	return 0;
}

/* trap.c, on the timer vector: the armed deadline was delivered. */
void x86_timer_fired(void)
{
	armed_at[this_cpu()->index] = 0;
}

void x86_timer_irq(int on)
{
	regs();
	uint32_t v = rd(LAPIC_LVT_TIMER);
	wr(LAPIC_LVT_TIMER, on ? v & ~LVT_MASKED : v | LVT_MASKED);
	uint64_t when = armed_at[this_cpu()->index];
	int ran_out = x86_feat.tsc_deadline ? rdmsr(MSR_TSC_DEADLINE) == 0
					    : rd(LAPIC_TIMER_CUR) == 0;
	if (on && when && ran_out)
		program(when);       /* ran out while masked: fires now (or at when) */
}

/* Fixed delivery, physical destination `apic_id`; waits until the APIC
 * took the previous command. */
long x86_ipi_send(uint32_t apic_id)
{
	regs();
	while (rd(LAPIC_ICR_LO) & ICR_PENDING)
		cpu_relax();
	wr(LAPIC_ICR_HI, apic_id << 24);
	wr(LAPIC_ICR_LO, ICR_ASSERT | VEC_IPI);
	return 0;
}

void x86_lapic_tpr(uint32_t tpr)
{
	if (lapic)
		wr(LAPIC_TPR, tpr);
}

void x86_lapic_eoi(void)
{
	wr(LAPIC_EOI, 0);
}
