/* The remote TLB and instruction-fetch hooks (kernel/arch.h) through SBI
 * RFENCE, and the many-hart IPI through SBI IPI: one call per 64-hart-id
 * window (kernel/hartmask.h). */
#include "arch.h"
#include "cpu.h"
#include "sbi.h"

struct sfence_req {
	uint64_t start, size;
	long asid;
};

static long sfence_window(unsigned long mask, unsigned long base, void *arg)
{
	const struct sfence_req *q = arg;
	struct sbiret r = q->asid == ARCH_NO_ASID
		? sbi_remote_sfence_vma(mask, base, q->start, q->size)
		: sbi_remote_sfence_vma_asid(mask, base, q->start, q->size, (unsigned long)q->asid);
	return r.error;
}

static long fence_i_window(unsigned long mask, unsigned long base, void *arg)
{
	(void)arg;
	return sbi_remote_fence_i(mask, base).error;
}

long arch_tlb_flush_remote(const struct hartmask *m, uint64_t start, uint64_t size, long asid)
{
	struct sfence_req q = { start, size, asid };
	uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE);
	return hartmask_windows(m, (long)this_cpu()->index, hart_ids, n, sfence_window, &q);
}

long arch_icache_sync_remote(const struct hartmask *m)
{
	uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE);
	return hartmask_windows(m, (long)this_cpu()->index, hart_ids, n, fence_i_window, NULL);
}

static long ipi_window(unsigned long mask, unsigned long base, void *arg)
{
	(void)arg;
	return sbi_send_ipi(mask, base).error;
}

long arch_ipi_send_mask(const struct hartmask *m)
{
	uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE);
	return hartmask_windows(m, (long)this_cpu()->index, hart_ids, n, ipi_window, NULL);
}
