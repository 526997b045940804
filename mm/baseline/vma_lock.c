/* The baseline's locks on the core's 32-bit lock words: mmap_lock, a
 * writer-preferring readers-writer lock that a reader can upgrade, and the
 * split page-table locks (spin locks on PT page descriptors) taken with
 * trylock. They always use these atomics (the platform's optional lock
 * hooks have neither upgrade nor trylock); like the core's own locks they
 * keep preemption off while held (platform preempt_disable, which nests).
 * Each acquisition is reported to the platform's optional lock_stat hook
 * (an upgrade as a write acquisition; page-table locks by their callers,
 * which do the waiting: vma_proto.c).
 *
 * mmap_lock word: bits 0..15 readers, 16..27 readers waiting to upgrade,
 * bit 30 a writer waiting, bit 31 a writer holding it. A pending upgrade
 * holds off new readers and new writers alike; upgraders take the write
 * lock one after the other as the running readers leave. */
#include "vma.h"

#define ML_READERS 0x0000ffffu
#define ML_UPG_ONE 0x00010000u
#define ML_UPG     0x0fff0000u
#define ML_WAIT    0x40000000u
#define ML_WRITER  0x80000000u

static bool cas(mm_lock_t *l, uint32_t *old, uint32_t v)
{
	return __atomic_compare_exchange_n(&l->v, old, v, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

/* Needs: nothing of this address space held (a reader that waits here
 * holding a page-table lock could block an upgrader forever). */
void mmap_read_lock(const struct mm_platform *p, mm_lock_t *l)
{
	mm_guard_on(p);
	uint32_t waited = 0;
	for (;;) {
		uint32_t v = __atomic_load_n(&l->v, __ATOMIC_RELAXED);
		if (!(v & (ML_WRITER | ML_WAIT | ML_UPG)) && cas(l, &v, v + 1))
			break;
		mm_lock_relax(p, &waited);
	}
	mm_lock_stat(p, MM_LK_MMAP_READ, waited);
}

void mmap_read_unlock(const struct mm_platform *p, mm_lock_t *l)
{
	__atomic_fetch_sub(&l->v, 1, __ATOMIC_RELEASE);
	mm_guard_off(p);
}

/* Needs: nothing of this address space held. */
void mmap_write_lock(const struct mm_platform *p, mm_lock_t *l)
{
	mm_guard_on(p);
	uint32_t waited = 0;
	for (;;) {
		uint32_t v = __atomic_load_n(&l->v, __ATOMIC_RELAXED);
		if (!(v & (ML_WRITER | ML_UPG | ML_READERS))) {
			if (cas(l, &v, ML_WRITER))
				break;
			mm_lock_missed(&waited);
			continue;
		}
		if (!(v & ML_WAIT))
			__atomic_fetch_or(&l->v, ML_WAIT, __ATOMIC_RELAXED);
		mm_lock_relax(p, &waited);
	}
	mm_lock_stat(p, MM_LK_MMAP_WRITE, waited);
}

/* Also ends an upgraded hold; upgraders still waiting keep their count. */
void mmap_write_unlock(const struct mm_platform *p, mm_lock_t *l)
{
	__atomic_fetch_and(&l->v, ~ML_WRITER, __ATOMIC_RELEASE);
	mm_guard_off(p);
}

/* Needs: l held for reading by the caller, who may also hold page-table
 * locks (readers never wait for those while an upgrade is pending). */
void mmap_upgrade(const struct mm_platform *p, mm_lock_t *l)
{
	__atomic_fetch_add(&l->v, ML_UPG_ONE - 1, __ATOMIC_ACQ_REL);
	mmap_upgrade_wait(p, l);
}

/* Seq_cst: a writer that sees the VMA reader gone (its count dropped
 * after this) sees the pending upgrade too, and backs off. */
void mmap_upgrade_announce(mm_lock_t *l)
{
	__atomic_fetch_add(&l->v, ML_UPG_ONE, __ATOMIC_SEQ_CST);
}

/* Needs: this caller's upgrade announced (counted in ML_UPG). Takes
 * preemption off like the other acquisitions. */
void mmap_upgrade_wait(const struct mm_platform *p, mm_lock_t *l)
{
	uint32_t waited = 0;
	for (;;) {
		uint32_t v = __atomic_load_n(&l->v, __ATOMIC_RELAXED);
		if (!(v & (ML_READERS | ML_WRITER))) {
			if (cas(l, &v, (v - ML_UPG_ONE) | ML_WRITER))
				break;
			mm_lock_missed(&waited);
			continue;
		}
		mm_lock_relax(p, &waited);
	}
	mm_lock_stat(p, MM_LK_MMAP_WRITE, waited);
}

bool mmap_write_held(const mm_lock_t *l)
{
	return __atomic_load_n(&l->v, __ATOMIC_RELAXED) & ML_WRITER;
}

bool mmap_upgrade_pending(const mm_lock_t *l)
{
	return __atomic_load_n(&l->v, __ATOMIC_RELAXED) & ML_UPG;
}

bool ptl_trylock(const struct mm_platform *p, struct mm_page *pg)
{
	mm_guard_on(p);
	uint32_t z = 0;
	if (__atomic_compare_exchange_n(&pg->lock.v, &z, 1, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
		return true;
	mm_guard_off(p);
	return false;
}

void ptl_unlock(const struct mm_platform *p, struct mm_page *pg)
{
	__atomic_store_n(&pg->lock.v, 0, __ATOMIC_RELEASE);
	mm_guard_off(p);
}
