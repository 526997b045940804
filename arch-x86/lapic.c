/* The local APIC (xAPIC, memory-mapped): the timer and IPIs of kernel/
 * arch.h, NMIs (remote.c's TLB flushes) and the INIT and start-up IPIs
 * that start the other CPUs (smpboot.c). Every CPU sees its own APIC at
 * the same physical address: the registers are mapped once, on the boot
 * CPU's first use, which the generic boot makes timer_start_hart, after
 * the switch to the kernel page table (before that nothing reaches this
 * file but a mask request, which then has nothing to mask: the APIC is
 * still software-disabled); each CPU turns its own APIC on at its first
 * use (another CPU's first is its timer_start_hart too).
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
#define ICR_NMI       (4u << 8)
#define ICR_INIT      (5u << 8)
#define ICR_STARTUP   (6u << 8)
#define ICR_PENDING   (1u << 12)
#define ICR_ASSERT    (1u << 14)
#define ICR_LEVEL     (1u << 15)
#define TIMER_DIV_1   0xb

static volatile uint32_t *lapic;
static uint8_t apic_on[HARTS_MAX];   /* per CPU: its APIC was turned on */
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

/* Turn this CPU's APIC on (after INIT it is software-disabled, every
 * LVT masked), taking every priority, its timer masked in the mode the
 * boot CPU chose. Interrupts off, the registers mapped. */
static void lapic_enable(void)
{
	wr(LAPIC_SVR, SVR_ENABLE | VEC_SPURIOUS);
	wr(LAPIC_TPR, 0);
	wr(LAPIC_TIMER_DIV, TIMER_DIV_1);
	if (x86_feat.tsc_deadline)
		wr(LAPIC_LVT_TIMER, LVT_MASKED | LVT_TSC_DEADLINE | VEC_TIMER);
	else
		wr(LAPIC_LVT_TIMER, LVT_MASKED | VEC_TIMER);
}

/* Map the registers and measure the one-shot timer's rate (every CPU's
 * APIC timer runs at the same rate). Boot CPU, once, interrupts off,
 * under the kernel page table. */
static void lapic_map(void)
{
	if (phys_map_base != DIRECT_MAP_BASE)
		panic("lapic: used before the kernel page table");
	paddr_t pa = rdmsr(MSR_APIC_BASE) & 0xffffff000ull;
	void *va;
	if (kmap_mmio(pa, PAGE_SIZE, &va))
		panic("lapic: cannot map its registers at %lx", (unsigned long)pa);
	lapic = va;
	lapic_enable();
	apic_on[this_cpu()->index] = 1;
	if (!x86_feat.tsc_deadline)
		calibrate_oneshot();
}

/* The registers, this CPU's APIC turned on. Interrupts off. */
static volatile uint32_t *regs(void)
{
	if (!lapic)
		lapic_map();
	uint32_t i = this_cpu()->index;
	if (!apic_on[i]) {
		lapic_enable();
		apic_on[i] = 1;
	}
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

/* Send one interrupt command to physical destination apic_id, once the
 * APIC took the previous one. Needs interrupts off: a handler that sends
 * between the two writes would retarget this command. */
static void icr_send(uint32_t apic_id, uint32_t lo)
{
	while (rd(LAPIC_ICR_LO) & ICR_PENDING)
		cpu_relax();
	wr(LAPIC_ICR_HI, apic_id << 24);
	wr(LAPIC_ICR_LO, lo);
}

/* icr_send from any context (interrupts off around it). 0. */
static long icr_send_irqsafe(uint32_t apic_id, uint32_t lo)
{
	unsigned long f = irq_save();
	regs();
	icr_send(apic_id, lo);
	irq_restore(f);
	return 0;
}

long x86_ipi_send(uint32_t apic_id) { return icr_send_irqsafe(apic_id, ICR_ASSERT | VEC_IPI); }
long x86_nmi_send(uint32_t apic_id) { return icr_send_irqsafe(apic_id, ICR_ASSERT | ICR_NMI); }

/* The MP initialisation of the SDM (vol. 3, 9.4.4): INIT (asserted, then
 * de-asserted, as CPUs before the Pentium 4 need), 10 ms, a start-up IPI,
 * 200 us, a second one (a CPU that took the first ignores it). */
void x86_lapic_start_ap(uint32_t apic_id, uint32_t page)
{
	icr_send_irqsafe(apic_id, ICR_INIT | ICR_ASSERT | ICR_LEVEL);
	icr_send_irqsafe(apic_id, ICR_INIT | ICR_LEVEL);
	udelay(10000);
	for (int i = 0; i < 2; i++) {
		icr_send_irqsafe(apic_id, ICR_STARTUP | (page & 0xff));
		udelay(200);
	}
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
