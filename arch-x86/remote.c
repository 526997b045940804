/* The cross-CPU hooks of kernel/arch.h on x86-64: IPIs through the local
 * APIC, and remote TLB flushes by NMI.
 *
 * Why an NMI: arch_tlb_flush_remote is what the generic shootdown
 * (kernel/mk/shootdown.c) falls back to when a target does not
 * acknowledge its IPI because it runs with interrupts off, what the
 * kernel page table's flush (kernel/mm_platform.c) uses directly, and
 * what forced flushes use; like RISC-V's SBI RFENCE it must reach a CPU
 * whatever its interrupt state. An NMI is taken with interrupts off, and
 * its handler waits for nothing (a lock an issuer holds for a few stores
 * at most), so CPUs that flush each other all go on.
 *
 * Each CPU has a request slot. An issuer, interrupts off, merges its
 * request into each target's slot under the slot's lock and takes the
 * slot's next request number, adds one to the target's NMI credit and
 * sends it an NMI; once every target of a window of 64 has its NMI it
 * waits for each to publish a done number at least its own. The target's
 * NMI handler takes its slot's pending request under the lock, flushes,
 * then publishes the request's number. Two requests of one tag merge
 * into their ranges' hull; requests of different tags into "every tag,
 * everything" (a CR4.PGE toggle, which drops global entries too).
 *
 * The credit tells a flush NMI from one nobody in the kernel sent (a
 * hardware error report, a watchdog): with none the NMI is reported and
 * the kernel panics, as before. NMIs that arrive while one is handled
 * merge into one, so credit can stay behind; a later stray NMI then
 * passes silently. That loses a report, never a flush: every NMI serves
 * whatever its slot holds. */
#include "arch.h"
#include "cpu.h"
#include "panic.h"
#include "timer.h"

/* A target that does not take an NMI in this long is broken (an NMI
 * reaches a CPU whatever it does, and the handler waits for nothing). */
#define FLUSH_WAIT_US 5000000
/* Ranges longer than this flush the whole tag, as the local flushes do. */
#define FLUSH_PAGES_MAX 64

struct flush_slot {
	uint32_t lock;
	uint32_t credit;      /* NMIs sent to this CPU and not taken yet */
	uint64_t posted;      /* number of the latest request */
	uint64_t done;        /* number of the latest request applied */
	int pending;          /* a request waits: the fields below */
	long asid;            /* its tag, ARCH_NO_ASID for every tag */
	uint64_t start, end;  /* its range; end 0: everything of the tag */
} __attribute__((aligned(64)));

static struct flush_slot slots[HARTS_MAX];

static void slot_lock(struct flush_slot *s)
{
	while (__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE))
		cpu_relax();
}

static void slot_unlock(struct flush_slot *s)
{
	__atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

/* Merge a request into target t's slot; its number. Interrupts off. */
static uint64_t post(uint32_t t, long asid, uint64_t start, uint64_t end)
{
	struct flush_slot *s = &slots[t];
	slot_lock(s);
	if (!s->pending) {
		s->asid = asid;
		s->start = start;
		s->end = end;
		s->pending = 1;
	} else if (s->asid != asid) {
		s->asid = ARCH_NO_ASID;
		s->end = 0;
	} else if (s->end && end) {
		s->start = start < s->start ? start : s->start;
		s->end = end > s->end ? end : s->end;
	} else {
		s->end = 0;
	}
	uint64_t n = ++s->posted;
	slot_unlock(s);
	__atomic_add_fetch(&s->credit, 1, __ATOMIC_SEQ_CST);
	return n;
}

/* This CPU's TLB: [start, end) of tag asid (ARCH_NO_ASID: every tag;
 * end 0: all of it). Kernel pages are global, which invlpg and a PGE
 * toggle both drop; invlpg of a user page reaches only the current PCID,
 * so without a tag such a page flushes everything. */
static void apply(long asid, uint64_t start, uint64_t end)
{
	if (!end || end - start > FLUSH_PAGES_MAX * PAGE_SIZE) {
		if (asid == ARCH_NO_ASID)
			arch_tlb_flush_all();
		else
			arch_tlb_flush_asid((unsigned long)asid);
		return;
	}
	if (asid == ARCH_NO_ASID && x86_feat.pcid && !(start >> 63)) {
		arch_tlb_flush_all();
		return;
	}
	for (uint64_t va = start & ~(uint64_t)(PAGE_SIZE - 1); va < end; va += PAGE_SIZE) {
		if (asid == ARCH_NO_ASID)
			arch_tlb_flush_page(va);
		else
			arch_tlb_flush_page_asid(va, (unsigned long)asid);
	}
}

void x86_nmi(struct trap_frame *tf)
{
	struct cpu *c = x86_nmi_cpu(tf);
	struct flush_slot *s = &slots[c->index];
	uint32_t credit = __atomic_load_n(&s->credit, __ATOMIC_SEQ_CST);
	do {
		if (!credit) {
			x86_nmi_kernel_gs(tf);
			panic_trap(tf);
		}
	} while (!__atomic_compare_exchange_n(&s->credit, &credit, credit - 1, 0,
					      __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST));
	slot_lock(s);
	if (!s->pending) {
		slot_unlock(s);
		return;
	}
	long asid = s->asid;
	uint64_t start = s->start, end = s->end, n = s->posted;
	s->pending = 0;
	slot_unlock(s);
	apply(asid, start, end);
	__atomic_store_n(&s->done, n, __ATOMIC_RELEASE);
}

long arch_ipi_send_mask(const struct hartmask *m)
{
	uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE), self = this_cpu()->index;
	for (uint32_t i = 0; i < n; i++) {
		if (i == self || !((m->w[i / 64] >> (i % 64)) & 1))
			continue;
		long e = x86_ipi_send(hart_ids[i]);
		if (e)
			return e;
	}
	return 0;
}

/* Interrupts off. The targets among the 64 logical CPUs from base: post
 * to each and send its NMI, then wait for each. */
static void flush_window(const struct hartmask *m, uint32_t base, uint32_t n, uint32_t self,
			 long asid, uint64_t start, uint64_t end)
{
	uint64_t seq[64];
	uint32_t top = n - base < 64 ? n - base : 64;
	for (uint32_t k = 0; k < top; k++) {
		uint32_t i = base + k;
		seq[k] = 0;
		if (i == self || !((m->w[i / 64] >> (i % 64)) & 1))
			continue;
		seq[k] = post(i, asid, start, end);
		x86_nmi_send(hart_ids[i]);
	}
	uint64_t deadline = time_after_us(FLUSH_WAIT_US);
	for (uint32_t k = 0; k < top; k++) {
		if (!seq[k])
			continue;
		while (__atomic_load_n(&slots[base + k].done, __ATOMIC_ACQUIRE) < seq[k]) {
			if (arch_time_now() > deadline)
				panic("tlb: CPU %u (APIC id %u) did not answer a flush NMI in %u ms",
				      base + k, hart_ids[base + k], FLUSH_WAIT_US / 1000);
			cpu_relax();
		}
	}
}

long arch_tlb_flush_remote(const struct hartmask *m, uint64_t start, uint64_t size, long asid)
{
	uint64_t end = size == (uint64_t)-1 || start + size < start ? 0 : start + size;
	if (end == 0)
		start = 0;
	unsigned long f = irq_save();
	uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE), self = this_cpu()->index;
	for (uint32_t base = 0; base < n; base += 64)
		if (m->w[base / 64])
			flush_window(m, base, n, self, asid, start, end);
	irq_restore(f);
	return 0;
}

/* Instruction fetch snoops stores on every CPU, and each one serialises
 * (iretq) before it runs user code again: nothing to send. */
long arch_icache_sync_remote(const struct hartmask *m)
{
	(void)m;
	return 0;
}
