/* Lock classes: every spinlock names the class it belongs to, and the
 * class's rank is its place in the kernel's one lock order. A hart may
 * take a lock only while every lock it holds has a lower rank (the checker
 * in lockcheck.c enforces this in builds with -Dlock_check=true). This
 * table IS the documented lock order (docs/microkernel.md, "Lock order");
 * ranks are multiples of 10 so a new lock can go between two.
 *
 *   rank name        the lock
 *    10  authority   the revoke barrier's writer lock (authority.c); its
 *                    read side (not a spinlock) sits at the same place
 *        -           an mm cursor (page-table locks, not spinlocks): taken
 *                    under the barrier's read side, never under mk_lock or
 *                    anything below it here (region_txn_no_mk_lock is the
 *                    one deliberate exception, a test)
 *    20  mk          mk_lock: derivation tree, lifecycle (kernel/mk/mk.h)
 *    25  irq         the interrupt-line table (kernel/mk/irq.c): taken
 *                    under mk_lock, and alone by the interrupt handler,
 *                    which posts under it (an endpoint lock)
 *    27  pagewait    the page-wait table (kernel/mk/pagewait.c): taken
 *                    under mk_lock or alone; posts a fault message under it
 *    30  endpoint    an endpoint's IPC lock (ipc.c ep_lock, test-and-set)
 *    40  cspace      a task's CSpace lock (task.c, cap.c); an IPC transfer
 *                    installs a cap under an endpoint lock
 *    50  fault       a task's fault-endpoint settings (fault.c)
 *    55  mobj        memory objects, their page indexes and mapping records
 *                    (kernel/mk/mobj.h): under a cursor or mk_lock
 *    60  rq          a hart's run-queue lock (sched.c); never two at once
 *    65  sd_mailbox  a hart's TLB-shootdown mailbox (shootdown.c); also
 *                    taken in the IPI handler; never two at once
 *    70  asid        the ASID allocator (uvm.c)
 *    75  sd_park     a hart's ring of frames parked behind shootdowns
 *    80  frame_pool  the frame allocator's shared pool (mm/frame)
 *    85  irqchip     the interrupt controller's shared enable registers
 *                    (arch-riscv/plic.c)
 *    90  console     printk's console lock: anything may print
 *
 * Two locks of one class may be held together only when the class says
 * LOCK_NEST_BY_ADDR, and then only in ascending address order. No class
 * allows it today. */
#ifndef KERNEL_LOCKCLASS_H
#define KERNEL_LOCKCLASS_H

#include <stdint.h>

/* Class flag: locks of this class may nest, lowest address first. */
#define LOCK_NEST_BY_ADDR 1u

/* stat: the class's slot in the lock statistics (lockstat.h): a table
 * class's LOCK_CLASS_IDX_*; 0 (LOCKSTAT_OTHER) for a class defined
 * elsewhere (the checker's tests), so such a class needs no slot. */
struct lock_class {
	const char *name;
	uint16_t rank;
	uint16_t flags;
	uint8_t stat;
};

/* X(ident, name, rank, flags): one line per class, in lock order. */
#define LOCK_CLASSES(X) \
	X(authority,  "authority",  10, 0) \
	X(mk,         "mk",         20, 0) \
	X(irq,        "irq",        25, 0) \
	X(pagewait,   "pagewait",   27, 0) \
	X(endpoint,   "endpoint",   30, 0) \
	X(cspace,     "cspace",     40, 0) \
	X(fault,      "fault",      50, 0) \
	X(mobj,       "mobj",       55, 0) \
	X(rq,         "rq",         60, 0) \
	X(sd_mailbox, "sd_mailbox", 65, 0) \
	X(asid,       "asid",       70, 0) \
	X(sd_park,    "sd_park",    75, 0) \
	X(frame_pool, "frame_pool", 80, 0) \
	X(irqchip,    "irqchip",    85, 0) \
	X(console,    "console",    90, 0)

#define LOCK_CLASS_DECLARE(id, nm, rk, fl) \
	extern const struct lock_class lock_class_##id; \
	enum { LOCK_RANK_##id = rk };
LOCK_CLASSES(LOCK_CLASS_DECLARE)
#undef LOCK_CLASS_DECLARE

/* Each table class's statistics slot, in table order from 1 (slot 0 is
 * LOCKSTAT_OTHER); LOCK_CLASS_END is one past the last. */
#define LOCK_CLASS_INDEX(id, nm, rk, fl) LOCK_CLASS_IDX_##id,
enum { LOCK_CLASS_IDX_FIRST_ = 0, LOCK_CLASSES(LOCK_CLASS_INDEX) LOCK_CLASS_END };
#undef LOCK_CLASS_INDEX

#endif
