/* SYS_REGION_ALLOC_CONTIG: 2^order (at most 512) physically contiguous
 * frames, aligned to their size, mapped 4 KiB each into the caller's own
 * space. A pager that fills such a block and supplies it whole to a
 * 2 MiB-aligned client page gets the client one 2 MiB leaf
 * (SYS_REGION_SUPPLY); until then each frame is an ordinary page of the
 * pager, charged to it, that it may also unmap, evict or supply alone. */
#include "region_supply.h"
#include "uvm_frames.h"
#include "frame.h"

/* Needs: no lock held. The region cap at slot (R_MAP, the page rights
 * prot needs, over the caller's own space, holding [va, va + len)):
 * 0 with the authority and the space held, or -E_*. */
static int contig_decode(struct task *t, long slot, uint64_t va, uint64_t len, uint32_t prot)
{
	int err = 0;
	auth_read_lock();
	unsigned long f = cspace_decode_lock(t);
	struct cap *rc = cap_lookup(t, slot, CAP_REGION, R_MAP, &err);
	if (rc && ((prot & ~prot_of_rights(rc->rights)) || rc->o.task != t))
		err = -E_PERM;
	else if (rc && (va < rc->lo || va + len > rc->hi))
		err = -E_RANGE;
	cspace_decode_unlock(t, f);
	if (!err)
		err = task_txn_try_begin(t);
	if (err)
		auth_read_unlock();
	return err;
}

/* Needs: no lock held. 0 with the run mapped at va, each frame charged
 * to t and counted as mapped; or -E_INVAL (order above 9, va not aligned
 * to the run, bad prot), -E_RANGE, the cap's -E_BADCAP / -E_PERM,
 * -E_QUOTA, -E_NOMEM (no such run free), -E_EXIST (a page there is
 * mapped), with nothing allocated or mapped. */
long sys_region_alloc_contig(struct task *t, long slot, uint64_t va, uint64_t order,
			     uint64_t prot)
{
	if (order > 9)
		return -E_INVAL;
	uint64_t n = 1ULL << order, len = n * PAGE_SIZE;
	if ((va & (len - 1)) || !(prot & PROT_R) || (prot & ~7ull) ||
	    (prot & (PROT_W | PROT_X)) == (PROT_W | PROT_X))
		return -E_INVAL;
	if (va + len < va)
		return -E_RANGE;
	paddr_t lp;
	if (frame_alloc(0, &lp))
		return -E_NOMEM;
	uint64_t *list = phys_to_virt(lp), pa;
	int err = contig_decode(t, slot, va, len, (uint32_t)prot);
	if (!err) {
		int huge;
		if (!(err = uvm_frame_alloc_run(t, (unsigned)order, &pa))) {
			for (uint64_t i = 0; i < n; i++)
				list[i] = pa + i * PAGE_SIZE;    /* ours already: no charge moves */
			err = supply_place(t, va, list, (unsigned)n, (uint32_t)prot, 0, &huge);
			for (uint64_t i = 0; i < n; i++) {
				if (err)
					uvm_frame_put(pa + i * PAGE_SIZE);
				else
					uvm_frame_mapped(pa + i * PAGE_SIZE);  /* counted as a fault fill is */
			}
		}
		task_txn_end(t);
		auth_read_unlock();
	}
	frame_free(lp);
	return err;
}
