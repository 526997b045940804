/* The core's own spinlock and readers-writer lock on one 32-bit word, used
 * when the platform leaves its lock hooks NULL. Writer-preferring: a
 * waiting writer sets WAIT so new readers hold off (locks are only ever
 * taken top-down, so this cannot deadlock). Each acquisition is reported
 * to the platform's optional lock_stat hook (hooked locks count their
 * own). */
#include "internal.h"

#define RW_WRITER 0x80000000u
#define RW_WAIT   0x40000000u

void mm_guard_on(const struct mm_platform *p)
{
	if (p->preempt_disable)
		p->preempt_disable();
}

void mm_guard_off(const struct mm_platform *p)
{
	if (p->preempt_enable)
		p->preempt_enable();
}

void mm_spin_lock(const struct mm_platform *p, mm_lock_t *l)
{
	if (p->spin_lock) {
		p->spin_lock(l);
		return;
	}
	mm_guard_on(p);
	uint32_t waited = 0;
	for (;;) {
		uint32_t z = 0;
		if (__atomic_compare_exchange_n(&l->v, &z, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
		mm_lock_missed(&waited);
		while (__atomic_load_n(&l->v, __ATOMIC_RELAXED))
			mm_lock_relax(p, &waited);
	}
	mm_lock_stat(p, MM_LK_SPIN, waited);
}

void mm_spin_unlock(const struct mm_platform *p, mm_lock_t *l)
{
	if (p->spin_unlock) {
		p->spin_unlock(l);
		return;
	}
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
	mm_guard_off(p);
}

void mm_read_lock(const struct mm_platform *p, mm_lock_t *l)
{
	if (p->read_lock) {
		p->read_lock(l);
		return;
	}
	mm_guard_on(p);
	uint32_t waited = 0;
	for (;;) {
		uint32_t v = __atomic_load_n(&l->v, __ATOMIC_RELAXED);
		if (!(v & (RW_WRITER | RW_WAIT)) &&
		    __atomic_compare_exchange_n(&l->v, &v, v + 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
		mm_lock_relax(p, &waited);
	}
	mm_lock_stat(p, MM_LK_READ, waited);
}

void mm_read_unlock(const struct mm_platform *p, mm_lock_t *l)
{
	if (p->read_unlock) {
		p->read_unlock(l);
		return;
	}
	__atomic_fetch_sub(&l->v, 1, __ATOMIC_RELEASE);
	mm_guard_off(p);
}

void mm_write_lock(const struct mm_platform *p, mm_lock_t *l)
{
	if (p->write_lock) {
		p->write_lock(l);
		return;
	}
	mm_guard_on(p);
	uint32_t waited = 0;
	for (;;) {
		uint32_t v = __atomic_load_n(&l->v, __ATOMIC_RELAXED);
		if ((v & ~RW_WAIT) == 0) {
			if (__atomic_compare_exchange_n(&l->v, &v, RW_WRITER, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
				break;
			mm_lock_missed(&waited);
			continue;
		}
		if (!(v & RW_WAIT))
			__atomic_fetch_or(&l->v, RW_WAIT, __ATOMIC_RELAXED);
		mm_lock_relax(p, &waited);
	}
	mm_lock_stat(p, MM_LK_WRITE, waited);
}

void mm_write_unlock(const struct mm_platform *p, mm_lock_t *l)
{
	if (p->write_unlock) {
		p->write_unlock(l);
		return;
	}
	__atomic_store_n(&l->v, 0, __ATOMIC_RELEASE);
	mm_guard_off(p);
}
