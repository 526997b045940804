/* The revoke barrier: when SYS_CAP_DELETE or SYS_CAP_REVOKE returns, no
 * region transaction authorised by a cap it removed is still running, and
 * none starts afterwards (the cap is gone from every CSpace).
 *
 * A region transaction checks its cap at decode and then runs without
 * mk_lock (it may take a while: it walks and edits page tables). It holds
 * the barrier's read side from decode to commit; a delete or revoke takes
 * the write side around its CSpace changes, which waits for every
 * transaction in flight to finish. Readers only touch their own hart's
 * counter (the kernel is not preemptible, so a thread cannot change hart
 * inside a transaction), so transactions on different harts do not share
 * a cache line.
 *
 * Lock order: authority (either side) before mk_lock; an mm cursor may be
 * taken under the read side. Neither side is held while user code runs. */
#include "mk.h"
#include "harts.h"

struct auth_reader {
	volatile long n;
	char pad[64 - sizeof(long)];
};
static struct auth_reader *readers;    /* harts_max of them, cache-line aligned */
static volatile int writer;
static spinlock_t writer_lock = SPINLOCK_INIT_CLASS(&lock_class_authority);

/* Boot, before any other hart starts: one reader count per logical hart
 * (harts_alloc gives whole frames, so the array starts on a cache line).
 * 0 or -E_NOMEM. */
int auth_init_harts(void)
{
	readers = harts_alloc(sizeof *readers);
	return readers ? 0 : -E_NOMEM;
}

/* Needs: interrupts may be on; the caller stays on this hart until
 * auth_read_unlock (no blocking in between). Waits while a writer runs. */
void auth_read_lock(void)
{
	struct auth_reader *r = &readers[this_cpu()->index];
	for (;;) {
		__atomic_add_fetch(&r->n, 1, __ATOMIC_SEQ_CST);
		if (!__atomic_load_n(&writer, __ATOMIC_SEQ_CST))
			return;
		__atomic_sub_fetch(&r->n, 1, __ATOMIC_RELEASE);
		while (__atomic_load_n(&writer, __ATOMIC_ACQUIRE))
			cpu_relax();
	}
}

void auth_read_unlock(void)
{
	__atomic_sub_fetch(&readers[this_cpu()->index].n, 1, __ATOMIC_RELEASE);
}

/* Needs: mk_lock NOT held, no read side held by the caller. Returns with
 * no transaction in flight and none able to start until auth_write_unlock. */
void auth_write_lock(void)
{
	spin_lock(&writer_lock);     /* writers in turn; no interrupt path takes it */
	__atomic_store_n(&writer, 1, __ATOMIC_SEQ_CST);
	for (uint32_t i = 0; i < ncpus; i++)
		while (__atomic_load_n(&readers[i].n, __ATOMIC_ACQUIRE))
			cpu_relax();
}

void auth_write_unlock(void)
{
	__atomic_store_n(&writer, 0, __ATOMIC_RELEASE);
	spin_unlock(&writer_lock);
}
