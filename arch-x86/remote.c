/* The cross-CPU hooks of kernel/arch.h on x86-64: IPIs through the local
 * APIC; remote TLB flushes are not implemented yet (they need a flush
 * request served by the target's IPI handler): with one CPU online there
 * is never a target, and a request naming another online CPU fails. */
#include "arch.h"
#include "cpu.h"

/* Whether m names an online CPU other than this one. */
static int has_other(const struct hartmask *m)
{
	uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE), self = this_cpu()->index;
	for (uint32_t i = 0; i < n; i++)
		if (i != self && (m->w[i / 64] >> (i % 64)) & 1)
			return 1;
	return 0;
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

long arch_tlb_flush_remote(const struct hartmask *m, uint64_t start, uint64_t size, long asid)
{
	(void)start; (void)size; (void)asid;
	return has_other(m) ? X86_ERR_NOT_SUPPORTED : 0;
}

/* Instruction fetch snoops stores on every CPU, and each one serialises
 * (iretq) before it runs user code again: nothing to send. */
long arch_icache_sync_remote(const struct hartmask *m)
{
	(void)m;
	return 0;
}
