/* The lock-order checker (builds with -Dlock_check=true, which define
 * LOCK_CHECK). Each hart keeps a small stack of the locks it holds (class
 * and address). Taking a lock whose class ranks at or below a held lock's
 * panics with both names; so does releasing a lock this hart does not
 * hold, holding a lock across a context switch, or a lock with no class.
 * Interrupt handlers share their hart's stack, so a lock taken in a
 * handler over a lock the interrupted code holds is checked the same way.
 * Without LOCK_CHECK every hook is an empty inline: no code, no data. */
#ifndef KERNEL_LOCKCHECK_H
#define KERNEL_LOCKCHECK_H

#include <stddef.h>
#include <stdint.h>
#include "lockclass.h"

#define LOCKCHECK_DEPTH 8

struct lockcheck_held {
	const struct lock_class *cls;
	const void *lock;
};

/* Per hart (struct cpu, LOCK_CHECK builds only). */
struct lockcheck_hart {
	uint32_t n;
	struct lockcheck_held held[LOCKCHECK_DEPTH];
};

#ifdef LOCK_CHECK
/* Before spinning for `lock` of class c: panics if the order forbids it,
 * else records it as held. */
void lockcheck_acquire(const struct lock_class *c, const void *lock);
/* After a successful trylock: records it as held. No order check: a
 * trylock never waits, so it cannot close a cycle. */
void lockcheck_acquired_try(const struct lock_class *c, const void *lock);
/* Before releasing `lock`: forgets it, wherever it sits in the stack
 * (locks may be dropped in any order). Panics if this hart holds none. */
void lockcheck_release(const void *lock);
/* Panics if this hart holds any lock; `where` names the place (a context
 * switch, a hand-over). */
void lockcheck_assert_none(const char *where);
/* Checking ends for good (a panic is under way: its printing must not
 * trip the checker again). */
void lockcheck_stop(void);
/* For tests: what lockcheck_acquire would say about taking `lock` of
 * class c now, into buf; 0 when it is allowed, -1 when not. */
int lockcheck_explain(const struct lock_class *c, const void *lock, char *buf, size_t len);
/* For tests: locks this hart holds now. */
uint32_t lockcheck_held_count(void);
#else
static inline void lockcheck_acquire(const struct lock_class *c, const void *lock)
{
	(void)c;
	(void)lock;
}
static inline void lockcheck_acquired_try(const struct lock_class *c, const void *lock)
{
	(void)c;
	(void)lock;
}
static inline void lockcheck_release(const void *lock) { (void)lock; }
static inline void lockcheck_assert_none(const char *where) { (void)where; }
static inline void lockcheck_stop(void) {}
#endif

#endif
