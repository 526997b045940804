/* Region transactions and fault decoding do not take mk_lock: a map or
 * unmap on one hart never waits for IPC or capability work on another.
 * The test holds mk_lock (interrupts off) on this hart and runs a whole
 * transaction on the caller's own address space through the region cap in
 * SLOT_SELF_AS. A transaction that took mk_lock would spin on its own hart
 * for good: the selftest run then never prints its summary line and the
 * suite calls the run failed. */
#include "ktest.h"
#include "mk.h"
#include "kernel.h"

#define TEST_VA 0x3800000000UL   /* 224 GiB: no program uses it; below Sv39's top */

KTEST(60, region_txn_no_mk_lock)
{
	struct thread *me = cur_thread();
	if (me && !me->task)
		return KSKIP("run from a kernel thread: no calling task");
	if (!me || !me->task)
		return KFAIL("no user task to run a transaction for");
	if (boot_config.ablate & ABLATE_MKLOCK)
		return KFAIL("booted with ablate=mklock: transactions take mk_lock on purpose");
	uint64_t len = 2 * PAGE_SIZE;
	struct region_op ops[3] = {
		{ .op = ROP_QUERY, .va = TEST_VA },
		{ .op = ROP_MARK, .va = TEST_VA, .len = len, .prot = PROT_R | PROT_W },
		{ .op = ROP_MARK_INVALID, .va = TEST_VA, .len = len },
	};
	unsigned long f = spin_lock_irqsave(&mk_lock);
	long done = region_txn(me->task, SLOT_SELF_AS, TEST_VA, TEST_VA + len, ops, 3);
	spin_unlock_irqrestore(&mk_lock, f);
	if (done != 3)
		return KFAIL("transaction under a held mk_lock: %ld of 3 ops (results %ld %ld %ld)",
			     done, (long)ops[0].result, (long)ops[1].result, (long)ops[2].result);
	if (ops[0].out_kind != MM_INVALID)
		return KFAIL("test range not empty (kind %lu)", (unsigned long)ops[0].out_kind);
	return 0;
}
