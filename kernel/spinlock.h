/* Ticket spinlocks. The _irqsave forms disable this hart's interrupts for
 * the hold time, so a lock taken in thread context can also be taken by an
 * interrupt handler on the same hart without deadlock.
 *
 * Every lock belongs to a class (lockclass.h), whose rank is its place in
 * the lock order: SPINLOCK_INIT_CLASS(&lock_class_x) for a static lock,
 * spin_lock_init_class(l, &lock_class_x) for one set up at run time.
 * Builds with -Dlock_check=true check the order at each take (lockcheck.h).
 * Every build counts each take in its class's lock statistics
 * (lockstat.h), which is why a lock carries its class pointer always. */
#ifndef KERNEL_SPINLOCK_H
#define KERNEL_SPINLOCK_H

#include <stdint.h>
#include "arch.h"
#include "cpu.h"
#include "lockcheck.h"

typedef struct {
	uint32_t next;
	uint32_t serving;
	const struct lock_class *cls;   /* never NULL: every take reads it */
} spinlock_t;

#define SPINLOCK_INIT_CLASS(c) { 0, 0, (c) }

/* Needs: l is not held and nobody waits on it. */
static inline void spin_lock_init_class(spinlock_t *l, const struct lock_class *c)
{
	l->next = 0;
	l->serving = 0;
	l->cls = c;
}

/* The lock's class for the checker. */
#define spin_lock_class(l) ((l)->cls)

/* The spins of a wait count in the lock statistics: none means the
 * ticket was served at the first look (uncontended). */
static inline void spin_lock(spinlock_t *l)
{
	lockcheck_acquire(spin_lock_class(l), l);
	uint32_t me = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
	uint32_t spins = 0;
	while (__atomic_load_n(&l->serving, __ATOMIC_ACQUIRE) != me) {
		cpu_relax();
		spins++;
	}
	lockstat_count(l->cls->stat, spins ? spins + 1 : 0);
}

/* Take the lock only if it is free now. Returns 1 if taken (counted as an
 * uncontended acquisition; a failed try is not counted). */
static inline int spin_trylock(spinlock_t *l)
{
	uint32_t s = __atomic_load_n(&l->serving, __ATOMIC_RELAXED);
	uint32_t want = s;
	int got = __atomic_compare_exchange_n(&l->next, &want, s + 1, 0,
					      __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
	if (got) {
		lockcheck_acquired_try(spin_lock_class(l), l);
		lockstat_count(l->cls->stat, 0);
	}
	return got;
}

static inline void spin_unlock(spinlock_t *l)
{
	lockcheck_release(l);
	__atomic_store_n(&l->serving, l->serving + 1, __ATOMIC_RELEASE);
}

static inline int spin_is_locked(spinlock_t *l)
{
	return __atomic_load_n(&l->next, __ATOMIC_RELAXED) !=
	       __atomic_load_n(&l->serving, __ATOMIC_RELAXED);
}

static inline unsigned long spin_lock_irqsave(spinlock_t *l)
{
	unsigned long f = irq_save();
	spin_lock(l);
	return f;
}

static inline void spin_unlock_irqrestore(spinlock_t *l, unsigned long f)
{
	spin_unlock(l);
	irq_restore(f);
}

#endif
