/* Conversions between the region ABI (<patina/cap.h>) and the mm core,
 * one copy for region transactions, clone and the fault path. */
#include "region.h"
#include "mobj.h"
#include "uvm_frames.h"
#include "devices.h"

uint32_t prot_from_mm(unsigned m)
{
	return ((m & MM_PROT_R) ? PROT_R : 0) | ((m & MM_PROT_W) ? PROT_W : 0) |
	       ((m & MM_PROT_X) ? PROT_X : 0);
}

uint32_t prot_of_rights(unsigned rights)
{
	return ((rights & R_READ) ? PROT_R : 0) | ((rights & R_WRITE) ? PROT_W : 0) |
	       ((rights & R_EXEC) ? PROT_X : 0);
}

int err_from_mm_slow(int e)
{
	struct thread *me = cur_thread();
	switch (e) {
	case MM_OK: return 0;
	case MM_EEXIST: case MM_EMAPPED: return -E_EXIST;
	case MM_EPROT: return -E_PERM;  /* decode checked prot: only a mapping's limits refuse */
	case MM_ENOMEM:
		if (me && me->quota_refused) {
			me->quota_refused = 0;
			return -E_QUOTA;
		}
		return -E_NOMEM;
	default: return -E_INVAL;
	}
}

/* The QF_* flags that report a mapping's limits. */
static uint64_t limit_flags(unsigned limits)
{
	return ((limits & MM_MAP_NOWRITE) ? QF_NOWRITE : 0) | ((limits & MM_MAP_NOSHARE) ? QF_NOSHARE : 0);
}

void report_info(struct region_op *op, const struct mm_info *info)
{
	op->out_kind = info->kind;
	op->out_prot = prot_from_mm(info->prot);
	if (info->kind == MM_MAPPED || info->kind == MM_COW)
		op->out_prot |= (info->accessed ? QF_ACCESSED : 0) | (info->dirty ? QF_DIRTY : 0) |
				limit_flags(info->limits) |
				(info->kind == MM_MAPPED && device_pa(info->pa) ? QF_DEVICE : 0);
	op->out_tag = (info->kind == MM_PAGER || info->kind == MM_SWAPPED) ? info->arg : 0;
	if (mobj_status_is(info)) {      /* an object page not mapped here yet: its offset */
		op->out_kind = RK_OBJECT;
		op->out_tag = ((op->va >> PAGE_SHIFT) + info->arg) & ((1u << MOBJ_OFF_BITS) - 1);
	}
}

int frame_can_leave(const struct mm_info *info)
{
	if (info->kind != MM_MAPPED)
		return -E_NOENT;
	if (info->level != 1 || device_pa(info->pa))
		return -E_INVAL;     /* a device's registers are no frame to hand on */
	return uvm_frame_refs(info->pa) != 1 ? -E_BUSY : 0;
}
