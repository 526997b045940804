/* Lock statistics, per lock class, in every build: acquisitions,
 * contended acquisitions (the lock was not free at the first try) and
 * spin iterations (spin-wait steps, cpu_relax or the mm core's relax(),
 * spent waiting). Each hart counts into its own struct lockstat_hart
 * (struct cpu), so the acquire path writes no shared line: one relaxed
 * atomic add to this hart's counter (an amoadd, which an interrupt handler
 * taking a lock on the same hart cannot tear), and two more only when the
 * lock was contended (lockstat_count, in cpu.h next to struct cpu). A
 * wait loop counts its spins in a register. The shell command `lockstat`
 * sums the harts.
 *
 * The classes: slot 0 (LOCKSTAT_OTHER) for lock classes outside the table
 * (the lock-order checker's tests), then every class of lockclass.h in
 * table order (their spinlocks, and ep_lock as "endpoint"), then the mm
 * core's kinds of lock (enum mm_lock_kind, same order), counted through
 * the kernel's mm lock hooks and the platform's lock_stat hook. */
#ifndef KERNEL_LOCKSTAT_H
#define KERNEL_LOCKSTAT_H

#include <stdint.h>
#include "lockclass.h"
#include "cortenmm/platform.h"

#define LOCKSTAT_OTHER 0
#define LOCKSTAT_MM (LOCK_CLASS_END)           /* + enum mm_lock_kind */
#define LOCKSTAT_N (LOCKSTAT_MM + MM_LK_KINDS)

/* Per hart (struct cpu). */
struct lockstat_hart {
	uint64_t acq[LOCKSTAT_N];
	uint64_t contended[LOCKSTAT_N];
	uint64_t spins[LOCKSTAT_N];
};

/* Sums over the harts online, for one slot. */
struct lockstat_sum {
	uint64_t acq, contended, spins;
};

/* The name of a slot, or NULL past the last. */
const char *lockstat_name(unsigned slot);
/* The counters of one slot summed over the harts (relaxed reads: counts
 * taken meanwhile may or may not be in). */
void lockstat_read(unsigned slot, struct lockstat_sum *out);
/* Zero every hart's counters (counts taken meanwhile may survive). */
void lockstat_reset(void);

#endif
