/* Exploit-style test of frame charges that outlive their task (selftest
 * name sec_dead_charge).
 *
 * A child fills a page of anonymous memory (charged to the child), we
 * share it by cloning the child's range into ours, and the child dies.
 * The frame is still in use (our mapping), so the child's carve cannot
 * all come back: that frame stays charged to us, its parent, who holds
 * the carve. What must hold: when we drop the frame, the charge comes
 * back to us, so our frame usage ends exactly where it began. (Before,
 * the release was counted on the dead child and our quota shrank for
 * good, one frame per such page.)
 *
 * Judged by events: the child's page must become mapped (a query that
 * must change), the child must be reaped (task_wait); the 10 s bound only
 * keeps a broken kernel from hanging the run. */
#include "ulib.h"
#include "selftest.h"
#include <patina/pager.h>

#define TICKS_PER_SEC ticks_per_sec()
#define DC_CODE 0x6e400000UL      /* the child's code page */
#define DC_DATA 0x6e600000UL      /* the page it writes, which we then share */
#define DC_TMP  0x6e800000UL      /* where we write its code */

#define CK(c, ...) do { if (!(c)) { if (!why[0]) snprintf(why, 160, __VA_ARGS__); goto out; } } while (0)

/* One op on one page; the kind a query found in *kind. */
static long txn1(long region, uint32_t op, uint32_t prot, uint64_t va, int64_t arg, uint64_t *kind)
{
	struct region_op o;
	long r = txn_one(region, op, prot, va, arg, &o);
	if (kind)
		*kind = o.out_kind;
	return r;
}

/* Frames charged to us now (data frames and PT pages), exact. */
static long usage(void)
{
	struct cap_info ci;
	return cap_info(SLOT_SELF_TASK, &ci) == 0 ? (long)ci.lo : -1;
}

static __attribute__((noinline)) void prefault(void)
{
	volatile char buf[8192];
	for (int i = 0; i < (int)sizeof buf; i += 512)
		buf[i] = 0;
}

int sec_dead_charge(char *why)
{
	long code = -1, task = -1, rc = -1, th = -1;
	int shared = 0;
	why[0] = 0;
	prefault();
	long u0 = usage();
	code = slot_alloc();
	CK(code >= 0 && frame_alloc(code) == 0, "frame_alloc");
	CK(txn1(SLOT_SELF_AS, ROP_MAP, PROT_R | PROT_W, DC_TMP, code, NULL) == 0, "map code RW");
	uarch_code_store_arg((volatile uint8_t *)DC_TMP);   /* faults in the page it is given */
	CK(txn1(SLOT_SELF_AS, ROP_UNMAP, 0, DC_TMP, 0, NULL) == 0, "unmap code");

	task = slot_alloc();
	rc = slot_alloc();
	CK(task >= 0 && rc >= 0, "slots");
	CK(sc3(SYS_TASK_CREATE, SLOT_SELF_TASK, task, QUOTA(64, 1, 0, 0)) == 0, "create the child");
	CK(task_region(task, rc) == 0, "child region");
	CK(txn1(rc, ROP_MAP, PROT_R | PROT_X, DC_CODE, code, NULL) == 0, "map the child's code");
	CK(txn1(rc, ROP_MARK, PROT_R | PROT_W, DC_DATA, 0, NULL) == 0, "reserve the child's page");
	th = slot_alloc();
	/* At our level: a yield of ours lets it run on a single hart too. */
	CK(th >= 0 && sc6(SYS_THREAD_CREATE, task, DC_CODE, 0, DC_DATA, th, 1L << 16) == 0, "child thread");
	uint64_t kind = 0, t0 = rdtime();
	while (txn1(rc, ROP_QUERY, 0, DC_DATA, 0, &kind) == 0 && kind != RK_MAPPED &&
	       rdtime() - t0 < 10 * TICKS_PER_SEC)
		sys_yield();
	CK(kind == RK_MAPPED, "the child never filled its page (kind %lu)", kind);
	struct clone_stats st;
	long r = sc6(SYS_REGION_CLONE, rc, SLOT_SELF_AS, DC_DATA, DC_DATA + 4096, (long)&st, 0);
	CK(r == 0 && st.frames == 1, "share the child's page: %ld", r);
	shared = 1;

	CK(task_kill(task) == 0, "kill the child");
	task_wait(task);
	slot_drop(&th);
	slot_drop(&rc);
	slot_drop(&task);
	/* The child is gone; its page lives on in our mapping. Drop it: its
	 * charge must come back to us with everything else. */
	CK(txn1(SLOT_SELF_AS, ROP_UNMAP, 0, DC_DATA, 0, NULL) == 0, "unmap the shared page");
	shared = 0;
	slot_drop(&code);
	/* Removed page-table pages are freed after a grace period: wait for
	 * the count to settle (an event; the bound only guards a hang). */
	long u1 = usage();
	for (t0 = rdtime(); u1 != u0 && rdtime() - t0 < 10 * TICKS_PER_SEC; u1 = usage())
		sys_yield();
	CK(u1 == u0, "frames charged to us: %ld before, %ld after the child died and its page "
	   "was dropped", u0, u1);
out:
	if (shared)
		txn1(SLOT_SELF_AS, ROP_UNMAP, 0, DC_DATA, 0, NULL);
	if (task >= 0) {
		task_kill(task);
		task_wait(task);
	}
	slot_drop(&th);
	slot_drop(&rc);
	slot_drop(&task);
	slot_drop(&code);
	return why[0] ? 1 : 0;
}
