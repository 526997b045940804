/* Small helpers the tests and demos share. */
#include "ulib.h"
#include "testlib.h"

uint64_t ticks_per_sec(void)
{
	static uint64_t tps;
	if (!tps) {
		long r = dbg(DBG_TIMEBASE, 0, 0);    /* needs no authority: never refused */
		tps = r > 0 ? (uint64_t)r : 1;
	}
	return tps;
}

void slot_drop(long *s)
{
	if (*s >= 0) {
		cap_delete(*s);
		slot_release(*s);
	}
	*s = -1;
}

long txn_one(long region, uint32_t op, uint32_t prot, uint64_t va, int64_t arg,
	     struct region_op *out)
{
	struct region_op o = { .op = op, .prot = prot, .va = va, .len = 4096, .arg = arg };
	long r = region_txn(region, va, va + 4096, &o, 1);
	if (out)
		*out = o;
	return r < 0 ? r : (r == 1 ? 0 : o.result);
}

int given_cap_type(void)
{
	struct cap_info ci;
	for (int i = 0; i < 1000; i++) {
		if (cap_info(SLOT_GIVEN, &ci) == 0)
			return (int)ci.type;
		sys_yield();
	}
	return 0;
}

uint64_t page_prot(long region, uint64_t va, uint64_t *kind)
{
	struct region_op q;
	if (txn_one(region, ROP_QUERY, 0, va, 0, &q) != 0)
		return ~0ul;
	if (kind)
		*kind = q.out_kind;
	return q.out_prot;
}

int empty_child(long *task, long *region)
{
	*task = slot_alloc();
	*region = slot_alloc();
	if (*task < 0 || *region < 0)
		return -1;
	if (sc3(SYS_TASK_CREATE, SLOT_SELF_TASK, *task, QUOTA(64, 1, 0, 0)) != 0)
		return -1;
	return task_region(*task, *region) == 0 ? 0 : -1;
}
