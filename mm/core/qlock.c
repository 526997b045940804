/* The waiting half of the queue locks (cortenmm/qlock.h: the fast paths
 * and the word's layout).
 *
 * Waiters queue MCS-style on per-hart nodes the platform owns; the word's
 * upper 16 bits are the queue's tail (hart index + 1, 0 = empty). Only the
 * queue's head spins on the lock word; everyone behind it spins on its own
 * node, so a contended lock costs one cache-line transfer per hand-over
 * instead of one per waiter per release, and waiters are served in arrival
 * order. A hart is in a queue only while it waits: once it owns the lock it
 * leaves the queue (passing the head on), so a hart holding many locks (a
 * cursor holds a whole subtree under adv) needs just one node, as long as
 * it waits for one lock at a time. The kernel waits with interrupts off, so
 * it never does otherwise.
 *
 * Spin lock: bit 0 = held. Readers-writer lock: bit 0 = a writer holds it,
 * bit 1 = the queue's head is a writer waiting for readers to leave, bits
 * 2..15 = readers holding it (up to 16383). A reader takes the lock with
 * one fetch-and-add when no writer holds it or waits at the head, so
 * readers never retry on each other; a writer at the head holds new
 * readers off (writer preference, as the core's own lock: locks are taken
 * top-down, so this cannot deadlock). */
#include "internal.h"
#include "cortenmm/qlock.h"

#define Q_TAIL_SHIFT MM_Q_TAIL_SHIFT
#define Q_LOW ((1u << Q_TAIL_SHIFT) - 1)   /* everything but the tail */
#define QS_HELD MM_QS_HELD
#define QR_WRITER MM_QR_WRITER
#define QR_WWAIT MM_QR_WWAIT
#define QR_READER MM_QR_READER
#define QR_READERS (Q_LOW & ~3u)

/* One spin-wait step; *n counts them for the lock statistics (1 + steps
 * is what the wait functions return, so it stops one short of the top). */
static inline void q_relax(const struct mm_qctx *q, uint32_t *n)
{
	q->relax();
	if (*n < UINT32_MAX - 1)
		(*n)++;
}

/* Join l's queue as hart `self`; return once at its head. The enqueue
 * publishes our reset node (release) and reads the predecessor's (acquire). */
static struct mm_qnode *q_enter(const struct mm_qctx *q, uint32_t self, mm_lock_t *l,
			       uint32_t *spins)
{
	struct mm_qnode *me = q->node(self);
	__atomic_store_n(&me->next, 0, __ATOMIC_RELAXED);
	__atomic_store_n(&me->wait, 1, __ATOMIC_RELAXED);
	uint32_t tail = (self + 1) << Q_TAIL_SHIFT;
	uint32_t v = __atomic_load_n(&l->v, __ATOMIC_RELAXED);
	while (!__atomic_compare_exchange_n(&l->v, &v, (v & Q_LOW) | tail, false,
					    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
		;
	uint32_t prev = v >> Q_TAIL_SHIFT;
	if (prev) {
		__atomic_store_n(&q->node(prev - 1)->next, self + 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&me->wait, __ATOMIC_ACQUIRE))
			q_relax(q, spins);
	}
	return me;
}

/* Leave l's queue from its head (we own the lock now): clear the tail if
 * nobody queued behind us, else wait for the successor's link and make it
 * the head. After this nobody touches our node. */
static void q_exit(const struct mm_qctx *q, uint32_t self, mm_lock_t *l, struct mm_qnode *me,
		   uint32_t *spins)
{
	uint32_t tail = (self + 1) << Q_TAIL_SHIFT;
	uint32_t v = __atomic_load_n(&l->v, __ATOMIC_RELAXED);
	while ((v & ~Q_LOW) == tail)
		if (__atomic_compare_exchange_n(&l->v, &v, v & Q_LOW, false, __ATOMIC_RELAXED,
						__ATOMIC_RELAXED))
			return;
	uint32_t next;
	while (!(next = __atomic_load_n(&me->next, __ATOMIC_ACQUIRE)))
		q_relax(q, spins);
	__atomic_store_n(&q->node(next - 1)->wait, 0, __ATOMIC_RELEASE);
}

/* The fast path found the spin lock taken: queue, then take it as head. */
uint32_t mm_qspin_wait(const struct mm_qctx *q, uint32_t self, mm_lock_t *l)
{
	uint32_t v, spins = 0;
	struct mm_qnode *me = q_enter(q, self, l, &spins);
	for (;;) {
		v = __atomic_load_n(&l->v, __ATOMIC_RELAXED);
		if (v & QS_HELD)
			q_relax(q, &spins);
		else if (__atomic_compare_exchange_n(&l->v, &v, v | QS_HELD, false, __ATOMIC_ACQUIRE,
						     __ATOMIC_RELAXED))
			break;
	}
	q_exit(q, self, l, me, &spins);
	return 1 + spins;
}

/* The fast path added a reader and saw a writer: take it back, queue. */
uint32_t mm_qread_wait(const struct mm_qctx *q, uint32_t self, mm_lock_t *l)
{
	uint32_t spins = 0;
	__atomic_fetch_sub(&l->v, QR_READER, __ATOMIC_RELAXED);
	struct mm_qnode *me = q_enter(q, self, l, &spins);
	/* At the head no writer waits (only the head sets WWAIT); one that
	 * took the word while it was free may still hold it. */
	__atomic_fetch_add(&l->v, QR_READER, __ATOMIC_RELAXED);
	while (__atomic_load_n(&l->v, __ATOMIC_ACQUIRE) & QR_WRITER)
		q_relax(q, &spins);
	q_exit(q, self, l, me, &spins);
	return 1 + spins;
}

/* The fast path found the word in use: queue; at the head, hold new
 * readers off (WWAIT) until the ones inside have left. */
uint32_t mm_qwrite_wait(const struct mm_qctx *q, uint32_t self, mm_lock_t *l)
{
	uint32_t v, spins = 0;
	struct mm_qnode *me = q_enter(q, self, l, &spins);
	__atomic_fetch_or(&l->v, QR_WWAIT, __ATOMIC_RELAXED);
	for (;;) {
		v = __atomic_load_n(&l->v, __ATOMIC_RELAXED);
		if (v & (QR_READERS | QR_WRITER))
			q_relax(q, &spins);
		else if (__atomic_compare_exchange_n(&l->v, &v, (v & ~QR_WWAIT) | QR_WRITER, false,
						     __ATOMIC_ACQUIRE, __ATOMIC_RELAXED))
			break;
	}
	q_exit(q, self, l, me, &spins);
	return 1 + spins;
}
