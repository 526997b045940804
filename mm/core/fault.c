/* The end of a fault that finds its page already resolved (a spurious
 * fault), shared by every fault path so each table's TLB rules
 * (pt_arch.tlb_caches_invalid, hw_ad) are applied in one place. */
#include "internal.h"

int mm_fault_settle(struct mm_cursor *c, uint64_t va, bool write, bool *flush_local)
{
	const struct pt_arch *a = c->as->arch;
	*flush_local = false;
	if (!a->hw_ad) {
		int err = mm_touch(c, va, write);
		if (err)
			return err;
	}
	/* When the leaf changed, mm_touch flushed it everywhere; when it did
	 * not, nothing else will drop what this hart cached of the faulting
	 * translation, and a TLB that keeps such entries faults again on
	 * every retry. */
	*flush_local = a->tlb_caches_invalid;
	return MM_OK;
}
