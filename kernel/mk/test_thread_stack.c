/* In-kernel tests of thread kernel stacks taken on demand (thread.c):
 * made and given back, refused by the frame quota, refused for want of
 * memory (failalloc_here),
 * run by the user-level selftest (DBG_KTEST). */
#include <patina/errno.h>
#include "mk.h"
#include "ktest.h"
#include "arch.h"
#include "frame.h"
#include "failalloc.h"

#define TS_MANY 1000

/* Whether every frame of th's stack is allocated (want 1) or free (want 0). */
static int stack_frames_are(const uint8_t *stack, int allocated)
{
	paddr_t pa = virt_to_phys(stack);
	for (unsigned i = 0; i < THREAD_KSTACK_FRAMES; i++)
		if (frame_is_free(pa + (paddr_t)i * FRAME_SIZE) == allocated)
			return 0;
	return 1;
}

/* Needs mk_lock. A thread thread_alloc just made and nobody ran: dead
 * and unreferenced, back to the pool (its stack with it). */
static void unmake(struct thread *th)
{
	th->state = T_DEAD;
	th->refs = 0;
	thread_put(th);
}

/* Needs mk_lock. unmake for a thread thread_alloc made for task t: off
 * t's list and counts, its stack's charge back, as thread_exit would. */
static void unmake_user(struct task *t, struct thread *th)
{
	struct thread **pp = &t->threads;
	while (*pp && *pp != th)
		pp = &(*pp)->task_next;
	if (*pp)
		*pp = th->task_next;
	t->nthreads--;
	quota_release_frames(t, THREAD_KSTACK_FRAMES);
	unmake(th);
}

/* TS_MANY kernel threads made at once: each has its own stack of
 * THREAD_KSTACK_FRAMES allocated frames, 16 KiB aligned (what
 * frame_alloc_run_aligned gives), in the direct map; the live count rises
 * by TS_MANY. Put back, every stack frame is free again and the count is
 * back: no stack leaks. */
KTEST(61, thread_stack_many)
{
	static struct thread *made[TS_MANY];
	static uint8_t *stacks[TS_MANY];
	unsigned long f = spin_lock_irqsave(&mk_lock);
	unsigned long live0 = threads_live();
	int n = 0, err = 0, bad = -1;
	while (n < TS_MANY && (made[n] = thread_alloc(NULL, &err)))
		stacks[n] = made[n]->kstack, n++;
	unsigned long live1 = threads_live();
	for (int i = 0; i < n && bad < 0; i++)
		if (!stacks[i] || ((uintptr_t)stacks[i] & (THREAD_KSTACK - 1)) ||
		    !stack_frames_are(stacks[i], 1) ||
		    (uint8_t *)(made[i]->uf + 1) != stacks[i] + THREAD_KSTACK)
			bad = i;
	for (int i = 0; i < n; i++)
		unmake(made[i]);
	unsigned long live2 = threads_live();
	int freed = 1;
	for (int i = 0; i < n; i++)
		freed &= stack_frames_are(stacks[i], 0) && !made[i]->kstack;
	spin_unlock_irqrestore(&mk_lock, f);
	if (n < TS_MANY)
		return KFAIL("%d threads made, then %d", n, err);
	if (bad >= 0)
		return KFAIL("thread %d: its stack %p is not %d aligned allocated frames under its registers", bad,
			     (void *)stacks[bad], THREAD_KSTACK_FRAMES);
	if (live1 != live0 + TS_MANY || live2 != live0)
		return KFAIL("live threads %lu -> %lu -> %lu (want +%d, back)", live0, live1, live2, TS_MANY);
	if (!freed)
		return KFAIL("a stack's frames stayed allocated after its thread went back");
	return 0;
}

/* A user thread whose task's frame quota has no room for its stack: -E_QUOTA,
 * and nothing is made: no struct taken, the task's threads, thread count
 * and frame use as before. With room for exactly one stack, one thread is
 * made, charged THREAD_KSTACK_FRAMES, and the next refused. */
KTEST(61, thread_stack_quota)
{
	struct task *t = cur_thread() ? cur_thread()->task : NULL;
	if (!t)
		return 0;   /* run from the boot console: no task */
	unsigned long f = spin_lock_irqsave(&mk_lock);
	long saved = t->frame_quota;
	long u0 = quota_frames_used(t), room = u0 + (long)__atomic_load_n(&t->as.nr_frames, __ATOMIC_RELAXED) +
					    __atomic_load_n(&t->pt_resv, __ATOMIC_RELAXED);
	unsigned long live0 = threads_live();
	int n0 = t->nthreads;
	struct thread *list0 = t->threads;
	int e1 = 0, e2 = 0, e3 = 0;
	t->frame_quota = room + THREAD_KSTACK_FRAMES - 1;
	struct thread *th1 = thread_alloc(t, &e1);
	int unchanged = !th1 && threads_live() == live0 && t->nthreads == n0 && t->threads == list0 &&
			quota_frames_used(t) == u0;
	t->frame_quota = room + THREAD_KSTACK_FRAMES;
	struct thread *th2 = thread_alloc(t, &e2);
	long u2 = quota_frames_used(t);
	struct thread *th3 = th2 ? thread_alloc(t, &e3) : NULL;
	t->frame_quota = saved;
	struct thread *undo[] = { th1, th2, th3 };
	for (unsigned i = 0; i < 3; i++)
		if (undo[i])
			unmake_user(t, undo[i]);
	long u4 = quota_frames_used(t);
	spin_unlock_irqrestore(&mk_lock, f);
	if (th1 || e1 != -E_QUOTA)
		return KFAIL("a stack over the frame quota: %d (want -E_QUOTA)", e1);
	if (!unchanged)
		return KFAIL("a refused thread left something made");
	if (!th2 || u2 != u0 + THREAD_KSTACK_FRAMES)
		return KFAIL("room for one stack: %d, use %ld -> %ld (want +%d)", e2, u0, u2,
			     THREAD_KSTACK_FRAMES);
	if (th3 || e3 != -E_QUOTA)
		return KFAIL("a second stack with room for one: %d (want -E_QUOTA)", e3);
	if (u4 != u0 || threads_live() != live0)
		return KFAIL("use %ld, live threads %lu after (before %ld, %lu)", u4, threads_live(), u0, live0);
	return 0;
}

/* Out of memory for a user thread: no free struct (the first allocation
 * thread_alloc counts fails), then no frames for its stack (the second):
 * -E_NOMEM both times, and nothing made or charged: the live count, the
 * task's threads and its frame use as before. */
KTEST(61, thread_stack_nomem)
{
	struct task *t = cur_thread() ? cur_thread()->task : NULL;
	if (!t)
		return 0;   /* run from the boot console: no task */
	int err[2] = { 0, 0 }, changed = -1;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	long u0 = quota_frames_used(t);
	unsigned long live0 = threads_live();
	int n0 = t->nthreads;
	struct thread *list0 = t->threads;
	for (unsigned skip = 0; skip < 2; skip++) {
		failalloc_here(skip);
		struct thread *th = thread_alloc(t, &err[skip]);
		failalloc_here_end();
		if (th)
			unmake_user(t, th);
		if (changed < 0 && (th || threads_live() != live0 || t->nthreads != n0 || t->threads != list0 ||
				    quota_frames_used(t) != u0))
			changed = (int)skip;
	}
	spin_unlock_irqrestore(&mk_lock, f);
	if (err[0] != -E_NOMEM || err[1] != -E_NOMEM)
		return KFAIL("no struct: %d, no stack frames: %d (want -E_NOMEM both)", err[0], err[1]);
	if (changed >= 0)
		return KFAIL("%s: something was made or charged", changed ? "no stack frames" : "no struct");
	return 0;
}
