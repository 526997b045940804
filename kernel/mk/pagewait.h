/* Page waits (pagewait.c): threads blocked until a page is fixed, and
 * the one kernel message that asks a pager to fix it.
 *
 * A wait is keyed (struct pw_key) by a page of an address space (task,
 * page address) or by a page of a memory object (object, generation and
 * page offset: mobj.c), so the threads of every task faulting on one
 * object page share its wait. The first thread to wait on a
 * page creates the page's entry and its message; later ones join it. A
 * commit that makes pages present wakes every thread waiting on a page of
 * its range (pagewait_wake_range), each with a verdict: 0 (retry the
 * access), -E_INVAL (the pager refused it), -E_DEAD (the pager's endpoint
 * can no longer receive). Entries come from a static pool that holds one
 * per thread and then some: a waiting thread owns at most one entry, so
 * nothing here allocates.
 *
 * Lock: one spinlock (class pagewait, rank 27): above mk_lock, below the
 * endpoint locks (a message is posted under it). Taken with irqs off. */
#ifndef MK_PAGEWAIT_H
#define MK_PAGEWAIT_H

#include "mk.h"

/* Needs: no lock but possibly mk_lock; irqs on. Register me as waiting on
 * the page holding va in t: 0, or -E_NOMEM (pool exhausted; nothing
 * registered). After it the caller either looks at the page once more
 * and leaves (pagewait_leave) or sleeps (pagewait_sleep): a commit that
 * runs after the registration wakes me, one that ran before it is seen by
 * that look. */
enum { PW_TASK, PW_OBJECT };
/* owner: the task (PW_TASK; page = the page's address) or the object
 * (PW_OBJECT; page = whatever word the object's code names its page by). */
struct pw_key { int kind; void *owner; uint64_t page; };
int pagewait_enter_key(struct thread *me, const struct pw_key *k);
static inline int pagewait_enter(struct thread *me, struct task *t, uint64_t va)
{
	struct pw_key k = { PW_TASK, t, va & ~(uint64_t)(PAGE_SIZE - 1) };
	return pagewait_enter_key(me, &k);
}

/* Needs: me registered (pagewait_enter), no lock held, irqs on. Leave the
 * wait without sleeping. */
void pagewait_leave(struct thread *me);

/* Needs: me registered, no lock held, irqs on; the caller holds a
 * reference on e. If the page's entry has sent no message yet, send msg
 * on e with badge (a kernel message received like a SYS_SEND: notice.c),
 * then sleep until woken. Returns the verdict: 0 (retry the access; also
 * when me was killed meanwhile), -E_INVAL (refused: SYS_FAULT_KILL), or
 * -E_DEAD (nobody can receive on the endpoint the message went to). */
int pagewait_sleep(struct thread *me, struct endpoint *e, uint64_t badge,
		   const uint64_t msg[IPC_WORDS]);

/* Needs: called after the commit that may have fixed pages of t (its
 * cursor released). Whether any thread of t may wait on a page: a full
 * fence (the commit before this look: pagewait.c's rule) and one load.
 * 0: nothing to wake, and pagewait_wake would do nothing either. */
static inline int pagewait_pending(const struct task *t)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&t->pw_count, __ATOMIC_RELAXED) != 0;
}

/* A range [lo, hi) of pages. */
struct pw_range { uint64_t lo, hi; };

/* Needs: no lock but possibly mk_lock; irqs either way; called after the
 * commit that fixed the pages (its cursor released). Wake every thread
 * waiting on a page of t inside any of the n ranges with verdict (0,
 * -E_INVAL), in one pass; the pages' entries go with their messages (a
 * queued one is taken back). Returns how many pages were waited on.
 * Costs one atomic load when t has no waiting thread. */
long pagewait_wake_key(int kind, void *owner, const struct pw_range *r, int n, int verdict);
static inline long pagewait_wake(struct task *t, const struct pw_range *r, int n, int verdict)
{
	return pagewait_pending(t) ? pagewait_wake_key(PW_TASK, t, r, n, verdict) : 0;
}
static inline long pagewait_wake_range(struct task *t, uint64_t lo, uint64_t hi, int verdict)
{
	struct pw_range r = { lo, hi };
	return pagewait_wake(t, &r, 1, verdict);
}

/* As pagewait_pending, for the waits on object pages (any object). */
int pagewait_obj_pending(void);

/* Needs: no lock but possibly mk_lock; called after the object's commit.
 * pagewait_wake for the object pages [lo, hi) (key words) of owner. */
static inline long pagewait_wake_obj(void *owner, uint64_t lo, uint64_t hi, int verdict)
{
	struct pw_range r = { lo, hi };
	return pagewait_obj_pending() ? pagewait_wake_key(PW_OBJECT, owner, &r, 1, verdict) : 0;
}

/* Needs mk_lock; th->killed set (thread_kill_locked). If th sleeps in a
 * page wait, end it (verdict 0): th runs to its exit. */
void pagewait_kill(struct thread *th);

/* Needs mk_lock; nobody can receive on e any more (notice_ep_gone); q is
 * the notice queue taken off e. Every page entry whose message went to e
 * ends: its threads wake with -E_DEAD. Returns q less the page messages
 * (what is left: death and interrupt notices). */
struct notice *pagewait_ep_gone(struct endpoint *e, struct notice *q);

/* Needs: irqs off, no lock held. A receive took n, a page message
 * (NK_FAULT): it was delivered; the entry stays until its page is fixed. */
void pagewait_msg_received(struct notice *n);

/* Page entries in use, and threads waiting on them (leak checks). */
unsigned long pagewait_live(void);
unsigned long pagewait_threads(void);

#endif
