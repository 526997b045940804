/* The lock-order checker's bookkeeping and verdicts (LOCK_CHECK builds
 * only; without the checker there is nothing to test). Three test classes
 * ranked above every kernel class; interrupts stay off throughout, so no
 * handler's lock lands on top of them. The panic itself is shown by the
 * boot test lockcheck-planted (kernel/mk/test_lockorder.c). */
#ifdef LOCK_CHECK
#include "ktest.h"
#include "spinlock.h"
#include "kstring.h"

static const struct lock_class lc_low = { "lc_low", 101, 0, LOCKSTAT_OTHER };
static const struct lock_class lc_mid = { "lc_mid", 102, 0, LOCKSTAT_OTHER };
static const struct lock_class lc_nest = { "lc_nest", 103, LOCK_NEST_BY_ADDR, LOCKSTAT_OTHER };

static spinlock_t low = SPINLOCK_INIT_CLASS(&lc_low), low2 = SPINLOCK_INIT_CLASS(&lc_low);
static spinlock_t mid = SPINLOCK_INIT_CLASS(&lc_mid), mid2 = SPINLOCK_INIT_CLASS(&lc_mid);
static spinlock_t nest[3] = {
	SPINLOCK_INIT_CLASS(&lc_nest), SPINLOCK_INIT_CLASS(&lc_nest), SPINLOCK_INIT_CLASS(&lc_nest),
};

/* Whether `part` occurs in s. */
static int contains(const char *s, const char *part)
{
	size_t n = strlen(part);
	for (; *s; s++)
		if (!strncmp(s, part, n))
			return 1;
	return 0;
}

/* 0 when the checker refuses lock (class c) now and its reason contains
 * `want`; else a failure in why. */
static int refuses(const struct lock_class *c, spinlock_t *lock, const char *want,
		   char *why, size_t whylen)
{
	char msg[160];
	if (!lockcheck_explain(c, lock, msg, sizeof msg))
		return KFAIL("checker allows %s at %u held", c ? c->name : "(no class)",
			     lockcheck_held_count());
	if (!contains(msg, want))
		return KFAIL("checker says \"%s\", expected \"%s\"", msg, want);
	return 0;
}

static int held_is(uint32_t want, const char *when, char *why, size_t whylen)
{
	uint32_t n = lockcheck_held_count();
	return n == want ? 0 : KFAIL("%u locks held %s, expected %u", n, when, want);
}

static int run(char *why, size_t whylen)
{
	int r;
	if ((r = held_is(0, "at the start", why, whylen)))
		return r;
	spin_lock(&low);
	spin_lock(&mid);
	spin_lock(&nest[1]);
	spin_lock(&nest[2]);          /* same class, higher address: allowed */
	if ((r = held_is(4, "after four takes", why, whylen)) ||
	    (r = refuses(&lc_low, &low2, "taking \"lc_low\" (rank 101) while holding \"lc_nest\" (rank 103)",
			 why, whylen)) ||
	    (r = refuses(&lc_nest, &nest[0], "same class", why, whylen)) ||
	    (r = refuses(&lc_mid, &mid, "again on this hart", why, whylen)) ||
	    (r = refuses(NULL, &mid2, "has no class", why, whylen)))
		return r;
	/* A trylock below the held ranks never waits: taken and recorded. */
	if (!spin_trylock(&low2))
		return KFAIL("trylock of a free lock failed");
	if ((r = held_is(5, "after the trylock", why, whylen)))
		return r;
	/* Out of LIFO order: middle, bottom, top, the rest. */
	spin_unlock(&mid);
	spin_unlock(&low);
	if ((r = held_is(3, "after two non-LIFO releases", why, whylen)) ||
	    (r = refuses(&lc_nest, &nest[0], "same class", why, whylen)))
		return r;
	spin_unlock(&low2);
	spin_unlock(&nest[1]);
	if ((r = held_is(1, "with nest[2] left", why, whylen)) ||
	    (r = refuses(&lc_mid, &mid2, "while holding \"lc_nest\"", why, whylen)))
		return r;
	spin_unlock(&nest[2]);
	if ((r = held_is(0, "after every release", why, whylen)))
		return r;
	/* Same class without LOCK_NEST_BY_ADDR: refused in either order. */
	spin_lock(&mid2);
	r = refuses(&lc_mid, &mid, "same class", why, whylen);
	spin_unlock(&mid2);
	if (r)
		return r;
	char msg[160];
	if (lockcheck_explain(&lc_low, &low, msg, sizeof msg))
		return KFAIL("nothing held, yet the checker says \"%s\"", msg);
	return held_is(0, "at the end", why, whylen);
}

KTEST(15, lockcheck_bookkeeping)
{
	unsigned long f = irq_save();
	int r = run(why, whylen);
	/* A failure may leave test locks held: drop them, so the kernel
	 * goes on with a clean stack and the failure is what gets reported. */
	spinlock_t *all[] = { &low, &low2, &mid, &mid2, &nest[0], &nest[1], &nest[2] };
	for (size_t i = 0; i < sizeof all / sizeof all[0]; i++)
		if (spin_is_locked(all[i]))
			spin_unlock(all[i]);
	irq_restore(f);
	return r;
}
#endif
