/* The lock-order checker (lockcheck.h), built only with LOCK_CHECK.
 *
 * The held stack belongs to the hart, not to a thread: the kernel is not
 * preemptible and no lock is held across a context switch (sched.c asserts
 * it at each switch and at the IPC hand-over), so what a hart holds is
 * exactly what the code running on it took. Every update runs with
 * interrupts off, so a handler that takes and drops locks on the same hart
 * sees and leaves a whole stack. */
#ifdef LOCK_CHECK
#include "lockcheck.h"
#include "cpu.h"
#include "panic.h"
#include "printk.h"
#include "fmt.h"

static volatile int stopped;

static struct lockcheck_hart *hart(void)
{
	return &this_cpu()->lockcheck;
}

void lockcheck_stop(void)
{
	__atomic_store_n(&stopped, 1, __ATOMIC_RELAXED);
}

/* Start an update of this hart's stack: interrupts off (*f gets what to
 * restore), the stack returned; NULL, interrupts as they were, once
 * checking has stopped. */
static struct lockcheck_hart *begin(unsigned long *f)
{
	if (__atomic_load_n(&stopped, __ATOMIC_RELAXED))
		return NULL;
	*f = irq_save();
	return hart();
}

/* Print what this hart holds, then panic with msg. Checking stops first,
 * and the console goes to its panic mode (bounded wait): this hart may
 * hold the console lock itself. */
static void __attribute__((noreturn)) fail(const char *msg)
{
	lockcheck_stop();
	printk_panic_mode();
	struct lockcheck_hart *h = hart();
	for (uint32_t i = 0; i < h->n; i++)
		printk("lockcheck: held %u: \"%s\" (rank %u) %p\n", i, h->held[i].cls->name,
		       h->held[i].cls->rank, h->held[i].lock);
	panic("%s", msg);
}

/* Needs: interrupts off. 0 when this hart may take `lock` of class c now
 * (ordered: by a wait, which the order must allow; else by a trylock,
 * which only needs a class and room); else -1 with the reason in buf. The
 * conflict reported is the held lock of highest rank that forbids it. */
static int order_check(struct lockcheck_hart *h, const struct lock_class *c, const void *lock,
		       int ordered, char *buf, size_t len)
{
	if (!c) {
		snprintf(buf, len, "lock order: lock %p has no class", lock);
		return -1;
	}
	const struct lockcheck_held *bad = NULL;
	for (uint32_t i = 0; ordered && i < h->n; i++) {
		const struct lockcheck_held *e = &h->held[i];
		if (e->lock == lock) {
			snprintf(buf, len, "lock order: taking \"%s\" (rank %u) %p again on this hart",
				 c->name, c->rank, lock);
			return -1;
		}
		int ok = e->cls == c ? (c->flags & LOCK_NEST_BY_ADDR) && e->lock < lock
				     : e->cls->rank < c->rank;
		if (!ok && (!bad || e->cls->rank > bad->cls->rank))
			bad = e;
	}
	if (bad) {
		snprintf(buf, len, "lock order: taking \"%s\" (rank %u) while holding \"%s\" (rank %u)%s",
			 c->name, c->rank, bad->cls->name, bad->cls->rank,
			 bad->cls == c ? ": same class, no nesting" : "");
		return -1;
	}
	if (h->n == LOCKCHECK_DEPTH) {
		snprintf(buf, len, "lock order: taking \"%s\" with %u locks held (the most the checker tracks)",
			 c->name, h->n);
		return -1;
	}
	return 0;
}

/* Check (see order_check) and record `lock` as held by this hart. */
static void record(const struct lock_class *c, const void *lock, int ordered)
{
	unsigned long f;
	struct lockcheck_hart *h = begin(&f);
	if (!h)
		return;
	char msg[160];
	if (order_check(h, c, lock, ordered, msg, sizeof msg))
		fail(msg);
	h->held[h->n].cls = c;
	h->held[h->n].lock = lock;
	h->n++;
	irq_restore(f);
}

void lockcheck_acquire(const struct lock_class *c, const void *lock)
{
	record(c, lock, 1);
}

void lockcheck_acquired_try(const struct lock_class *c, const void *lock)
{
	record(c, lock, 0);
}

void lockcheck_release(const void *lock)
{
	unsigned long f;
	struct lockcheck_hart *h = begin(&f);
	if (!h)
		return;
	uint32_t i = h->n;
	while (i > 0 && h->held[i - 1].lock != lock)
		i--;
	if (i == 0) {
		char msg[96];
		snprintf(msg, sizeof msg, "lock order: releasing lock %p, which this hart does not hold", lock);
		fail(msg);
	}
	for (; i < h->n; i++)
		h->held[i - 1] = h->held[i];
	h->n--;
	irq_restore(f);
}

void lockcheck_assert_none(const char *where)
{
	unsigned long f;
	struct lockcheck_hart *h = begin(&f);
	if (!h)
		return;
	if (h->n) {
		char msg[160];
		snprintf(msg, sizeof msg, "lock order: \"%s\" (rank %u) held across %s",
			 h->held[h->n - 1].cls->name, h->held[h->n - 1].cls->rank, where);
		fail(msg);
	}
	irq_restore(f);
}

int lockcheck_explain(const struct lock_class *c, const void *lock, char *buf, size_t len)
{
	unsigned long f = irq_save();
	int r = order_check(hart(), c, lock, 1, buf, len);
	irq_restore(f);
	return r;
}

uint32_t lockcheck_held_count(void)
{
	return hart()->n;
}
#endif
