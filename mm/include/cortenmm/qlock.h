/* Queue locks on one mm_lock_t word, for a platform to put behind its lock
 * hooks (platform.h): FIFO, and waiters spin on their own node, not on the
 * word. Each hart (index `self`, below 65535) has one node, used only
 * while it waits for a lock, so a hart must wait for one lock at a time (a
 * kernel waits with interrupts off). ctx->node maps a hart index to its
 * node; ctx->relax is the spin-wait hint. These functions do no preemption
 * control: the hooks around them do. A readers-writer word holds at most
 * 16383 readers.
 *
 * The fast paths (one atomic) are inline here so that a hook costs no
 * more calls than the core's own locks; waiting is in mm/core/qlock.c.
 * Every lock function returns what the hook needs for lock statistics
 * (platform.h, lock_stat's `waited`): 0 when the lock was free at the first
 * try, else 1 + the relax() calls it spent waiting (saturating). */
#ifndef CORTENMM_QLOCK_H
#define CORTENMM_QLOCK_H

#include "platform.h"

struct mm_qnode {
	uint32_t next;   /* successor's hart index + 1, 0 none */
	uint32_t wait;   /* 1 while a predecessor is ahead in the queue */
};
struct mm_qctx {
	struct mm_qnode *(*node)(uint32_t hart);
	void (*relax)(void);
};

/* Word layout. Upper 16 bits: the queue's tail (hart index + 1, 0 empty).
 * Spin lock: bit 0 held. Readers-writer: bit 0 a writer holds it, bit 1
 * the queue's head is a writer waiting for readers to leave, bits 2..15
 * readers. */
#define MM_Q_TAIL_SHIFT 16
#define MM_QS_HELD 1u
#define MM_QR_WRITER 1u
#define MM_QR_WWAIT 2u
#define MM_QR_READER 4u

/* Slow paths: queue up, wait, take the lock (qlock.c). Return 1 + the
 * relax() calls made (saturating). */
uint32_t mm_qspin_wait(const struct mm_qctx *q, uint32_t self, mm_lock_t *l);
uint32_t mm_qread_wait(const struct mm_qctx *q, uint32_t self, mm_lock_t *l);
uint32_t mm_qwrite_wait(const struct mm_qctx *q, uint32_t self, mm_lock_t *l);

/* Bit 0 (spin: held, rw: writer) from a free word, nobody queued: 1, else 0. */
static inline bool mm_q_take_free(mm_lock_t *l)
{
	uint32_t v = 0;
	return __atomic_compare_exchange_n(&l->v, &v, 1u, false, __ATOMIC_ACQUIRE, __ATOMIC_RELAXED);
}

static inline void mm_q_drop_bit0(mm_lock_t *l)
{
	__atomic_fetch_and(&l->v, ~1u, __ATOMIC_RELEASE);
}

static inline uint32_t mm_qspin_lock(const struct mm_qctx *q, uint32_t self, mm_lock_t *l)
{
	if (__builtin_expect(mm_q_take_free(l), 1))
		return 0;
	return mm_qspin_wait(q, self, l);
}

static inline void mm_qspin_unlock(mm_lock_t *l) { mm_q_drop_bit0(l); }

/* A reader enters with one fetch-and-add unless a writer holds the word or
 * waits at the queue's head (then it backs out and queues). */
static inline uint32_t mm_qread_lock(const struct mm_qctx *q, uint32_t self, mm_lock_t *l)
{
	if (__builtin_expect(!(__atomic_fetch_add(&l->v, MM_QR_READER, __ATOMIC_ACQUIRE) &
			       (MM_QR_WRITER | MM_QR_WWAIT)), 1))
		return 0;
	return mm_qread_wait(q, self, l);
}

static inline void mm_qread_unlock(mm_lock_t *l)
{
	__atomic_fetch_sub(&l->v, MM_QR_READER, __ATOMIC_RELEASE);
}

static inline uint32_t mm_qwrite_lock(const struct mm_qctx *q, uint32_t self, mm_lock_t *l)
{
	if (__builtin_expect(mm_q_take_free(l), 1))
		return 0;
	return mm_qwrite_wait(q, self, l);
}

static inline void mm_qwrite_unlock(mm_lock_t *l) { mm_q_drop_bit0(l); }

#endif
