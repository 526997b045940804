/* Ticket spinlocks. The _irqsave forms disable this hart's interrupts for
 * the hold time, so a lock taken in thread context can also be taken by an
 * interrupt handler on the same hart without deadlock. */
#ifndef KERNEL_SPINLOCK_H
#define KERNEL_SPINLOCK_H

#include <stdint.h>
#include "arch.h"

typedef struct {
	uint32_t next;
	uint32_t serving;
} spinlock_t;

#define SPINLOCK_INIT { 0, 0 }

static inline void spin_lock(spinlock_t *l)
{
	uint32_t me = __atomic_fetch_add(&l->next, 1, __ATOMIC_RELAXED);
	while (__atomic_load_n(&l->serving, __ATOMIC_ACQUIRE) != me)
		cpu_relax();
}

/* Take the lock only if it is free now. Returns 1 if taken. */
static inline int spin_trylock(spinlock_t *l)
{
	uint32_t s = __atomic_load_n(&l->serving, __ATOMIC_RELAXED);
	uint32_t want = s;
	return __atomic_compare_exchange_n(&l->next, &want, s + 1, 0,
					   __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline void spin_unlock(spinlock_t *l)
{
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
