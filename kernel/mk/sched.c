/* Scheduler: one run queue per hart with NPRIO FIFO levels (highest level
 * first, round robin inside a level), timer preemption of user code, idle
 * harts in wfi woken by IPI (no polling).
 *
 * Placement and load balancing (simple on purpose):
 *  - a woken thread goes to its affinity hart if pinned; otherwise to the
 *    hart it last ran on, unless that hart is busy and another is idle, in
 *    which case the idle one gets it;
 *  - a hart whose queue is empty steals the oldest unpinned thread from the
 *    hart with the longest queue before it goes idle.
 * The kernel is not preemptible: a thread switches only in sched_switch
 * (block, yield, exit, or a timer tick taken from user mode).
 *
 * No hart ever waits for another to leave a thread. The invariant:
 *
 *   a thread in a run queue never has on_cpu set, and switch_to is only
 *   ever given a thread with on_cpu == 0.
 *
 * on_cpu is ONCPU_OFF (no hart on its stack), ONCPU_ON (a hart runs on
 * it) or ONCPU_REQUEUE (a hart runs on it and it was made runnable
 * meanwhile). A thread that becomes runnable while its old hart is still
 * on its stack (woken just after it blocked, or yielding) is not queued
 * by the waker: on_cpu goes to ONCPU_REQUEUE, and the hart leaving it
 * queues it in sched_finish_switch, once it runs on the next thread's
 * stack. So whatever a hart takes from a queue is off every stack, and
 * switch_to never spins; a cycle of harts each waiting for the next to
 * leave its thread cannot form. The IPC direct switch (sched_can_direct,
 * mk.h) refuses a partner that is not yet off its old hart.
 *
 * A thread's saved kernel context (ctx) is what switch_context resumes;
 * it is valid whenever on_cpu is ONCPU_OFF. The IPC handoff (sched_handoff,
 * mk.h) leaves a thread without saving its context: it marks ctx stale
 * (ctx_fresh), and switch_to starts such a thread at thread_trampoline on
 * its empty stack (its continuation is only the return to user) instead
 * of resuming ctx; sched_handoff_done
 * releases it (on_cpu) from the next thread's stack, as
 * sched_finish_switch does after a switch. */
#include "mk.h"
#include "arch.h"
#include "smp.h"
#include "kernel.h"
#include "panic.h"
#include "harts.h"

struct rq *rqs;
static struct thread *idle_threads;

/* Boot, before any other hart starts: one run queue and one idle thread
 * per logical hart the device tree allows. 0 or -E_NOMEM. */
int sched_init_harts(void)
{
	struct rq *r = harts_alloc(sizeof *r);
	struct thread *idle = harts_alloc(sizeof *idle);
	if (!r || !idle)
		return -E_NOMEM;
	for (uint32_t i = 0; i < harts_max; i++) {
		spin_lock_init_class(&r[i].lock, &lock_class_rq);
		cpus[i].rq = &r[i];
	}
	rqs = r;
	idle_threads = idle;
	return 0;
}

/* Needs rq->lock. */
static void rq_push(struct rq *rq, struct thread *th)
{
	int p = th->prio;
	th->rq_next = NULL;
	if (rq->tail[p])
		rq->tail[p]->rq_next = th;
	else
		rq->head[p] = th;
	rq->tail[p] = th;
	rq->len++;
	__atomic_store_n(&rq->levels, rq->levels | 1u << p, __ATOMIC_RELAXED);
}

/* Needs rq->lock. Remove the first thread at the highest level, down to
 * level minprio; a thief (hart index, -1 = the queue's own hart) skips
 * threads pinned elsewhere. */
static struct thread *rq_take(struct rq *rq, int thief, int minprio)
{
	for (int p = NPRIO - 1; p >= minprio; p--) {
		struct thread *prev = NULL;
		for (struct thread *th = rq->head[p]; th; prev = th, th = th->rq_next) {
			if (thief >= 0 && th->affinity >= 0 && th->affinity != thief)
				continue;
			if (prev)
				prev->rq_next = th->rq_next;
			else
				rq->head[p] = th->rq_next;
			if (rq->tail[p] == th)
				rq->tail[p] = prev;
			th->rq_next = NULL;
			rq->len--;
			if (!rq->head[p])
				__atomic_store_n(&rq->levels, rq->levels & ~(1u << p), __ATOMIC_RELAXED);
			return th;
		}
	}
	return NULL;
}

/* Needs: irqs off. Take a thread of level minprio or higher from this
 * hart's own queue, or NULL. */
static struct thread *pick_local(struct rq *rq, int minprio)
{
	spin_lock(&rq->lock);
	struct thread *th = rq_take(rq, -1, minprio);
	spin_unlock(&rq->lock);
	return th;
}

/* Needs: irqs off. Pick the next thread for this hart: own queue, else
 * steal from the longest other queue. Whatever it returns has on_cpu 0
 * (it came from a queue). */
static struct thread *pick_next(struct rq *rq)
{
	struct thread *th = pick_local(rq, 0);
	if (th)
		return th;
	uint32_t me = this_cpu()->index;
	int best = -1, bestlen = 0;
	for (uint32_t i = 0; i < ncpus; i++) {
		int l = __atomic_load_n(&rqs[i].len, __ATOMIC_RELAXED);
		if (i != me && l > bestlen) {
			best = (int)i;
			bestlen = l;
		}
	}
	if (best < 0)
		return NULL;
	spin_lock(&rqs[best].lock);
	th = rq_take(&rqs[best], (int)me, 0);
	spin_unlock(&rqs[best].lock);
	return th;
}

/* Needs: th runnable, on_cpu 0 (no hart on its stack) and in no queue; irqs
 * may be on or off, any lock but an rq lock may be held. Put th on the run
 * queue of a hart that may run it and kick that hart out of wfi. */
static void enqueue(struct thread *th)
{
	uint32_t me = this_cpu()->index;
	int target = th->affinity;
	if (target < 0 || target >= (int)ncpus) {
		target = th->last_cpu;
		if (target < 0 || target >= (int)ncpus)
			target = (int)me;
		if (!rqs[target].idle && rqs[target].cur != rqs[target].idle_thread) {
			for (uint32_t i = 0; i < ncpus; i++)
				if (rqs[i].idle) {
					target = (int)i;
					break;
				}
		}
	}
	struct rq *rq = &rqs[target];
	unsigned long f = spin_lock_irqsave(&rq->lock);
	rq_push(rq, th);
	spin_unlock_irqrestore(&rq->lock, f);
	/* Pairs with the idle loop's fence: either it sees our thread or we
	 * see it idle and kick it out of wfi. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if ((uint32_t)target != me && __atomic_load_n(&rq->idle, __ATOMIC_RELAXED))
		ipi_send((uint32_t)target);
}

/* Needs: the caller just set th->state = T_RUNNABLE (under the lock that owns
 * its wait: an endpoint's or mk_lock) after it was T_BLOCKED, so no other waker and no direct switch can race
 * for it. Make th run again: queue it now if no hart is on its stack;
 * otherwise (it blocked but its hart has not switched away yet) leave that
 * to the hart leaving it: on_cpu ON -> REQUEUE, and sched_finish_switch
 * (or sched_switch, if it ends up keeping th) takes it from there. The
 * compare-and-swap decides which side queues it, exactly once: a failed
 * CAS means finish_switch already cleared on_cpu, so th is off every
 * stack and we queue it. */
void sched_wake(struct thread *th)
{
	int old = ONCPU_ON;
	if (__atomic_compare_exchange_n(&th->on_cpu, &old, ONCPU_REQUEUE, 0,
					__ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
		return;
	if (old != ONCPU_OFF)
		panic("sched_wake: thread %d on_cpu %d", th->id, old);
	enqueue(th);
}

/* Needs: irqs off. Switch this hart to next's address space unless it is
 * already on it: token cached per task (uvm_as_create), no switch and
 * no flush when the address space does not change. */
void sched_activate(struct thread *next)
{
	struct rq *rq = this_rq();
	uint64_t token = next->task ? next->task->as_token : boot_config.kernel_as_token;
	if (token == rq->cur_token)
		return;      /* same address space: its hart_mask bit is already set */
	struct task *t = next->task;
	if (t) {
		hartmask_set(&t->hart_mask, this_cpu()->index);
		rq->loaded |= 1ull << t->id;
		uint32_t ig = uvm_asid_activate(t);
		/* Without an ASID every switch must flush: never "ready". */
		rq->as_ready[t->id] = arch_as_token_asid(token) ? ig : 0;
	}
	sched_as_write(rq, t, token);
	/* Without ASIDs every AS shares tag 0: flush on each switch. */
	if (!t || !arch_as_token_asid(token))
		arch_tlb_flush_all();
}

_Static_assert(MAX_TASKS <= 64, "rq->loaded has a bit per task slot");

void sched_unload_all(struct rq *rq)
{
	uint32_t me = this_cpu()->index;
	uint64_t m = rq->loaded;
	rq->loaded = 0;
	for (int id = 0; m; id++, m >>= 1)    /* no libgcc: no ctz */
		if (m & 1) {
			rq->as_ready[id] = 0;
			hartmask_clear(&tasks[id].hart_mask, me);
		}
}

/* Runs on the new thread's stack right after switch_context (and first
 * in thread_first_run); irqs off. prev's stack is free now: clear its
 * on_cpu (release: the old hart's last writes to it are visible to whoever
 * runs it next). If it was made runnable while we were still on it
 * (ONCPU_REQUEUE), queue it now; a dead one may go back to the pool, its
 * kernel stack freed with it (no hart is on that stack any more). */
void sched_finish_switch(struct kctx *pctx)
{
	struct thread *prev = (struct thread *)pctx;
	int old = __atomic_exchange_n(&prev->on_cpu, ONCPU_OFF, __ATOMIC_ACQ_REL);
	if (old == ONCPU_REQUEUE) {
		enqueue(prev);
		return;
	}
	if (prev->state == T_DEAD) {
		unsigned long f = spin_lock_irqsave(&mk_lock);
		task_thread_left(prev);
		thread_put(prev);
		spin_unlock_irqrestore(&mk_lock, f);
	}
}

static void switch_to(struct rq *rq, struct thread *prev, struct thread *next);

/* Needs: irqs off, no lock held; prev = the current thread, which is
 * running (idle loop), yielding or woken before it left (state
 * T_RUNNABLE, on_cpu REQUEUE), blocked or dead. Run the next thread here.
 * A prev that is runnable again keeps the hart unless this hart's own
 * queue has a thread of its level or higher (what a yield means; prev
 * then goes to a queue in sched_finish_switch). A blocked or dead prev
 * gives way to anything, stolen if need be, else to the idle thread.
 * prev is never in a queue here (its on_cpu is set), so next != prev. */
void sched_switch(void)
{
	lockcheck_assert_none("a context switch");
	struct rq *rq = this_rq();
	struct thread *prev = rq->cur;
	/* Acquire: a REQUEUE written by a waker comes after its state store. */
	if (__atomic_load_n(&prev->on_cpu, __ATOMIC_ACQUIRE) == ONCPU_REQUEUE) {
		struct thread *next = pick_local(rq, prev->prio);
		if (next) {
			switch_to(rq, prev, next);
			return;
		}
		/* Nothing better: keep running prev. Nobody else writes its
		 * on_cpu now: it is runnable, so no waker will touch it. */
		__atomic_store_n(&prev->on_cpu, ONCPU_ON, __ATOMIC_RELAXED);
		prev->state = T_RUNNING;
		return;
	}
	struct thread *next = pick_next(rq);
	if (!next) {
		if (prev->state == T_RUNNING)
			return;
		/* Blocked (a wake from now on sets REQUEUE and the idle
		 * thread's finish_switch queues prev) or dead. */
		next = rq->idle_thread;
	}
	switch_to(rq, prev, next);
}

/* Needs: irqs off, no lock held; the current thread is blocked and
 * sched_can_direct(next) said yes under the endpoint lock. Switch to next here. */
void sched_direct(struct thread *next)
{
	lockcheck_assert_none("a context switch");
	struct rq *rq = this_rq();
	switch_to(rq, rq->cur, next);
}

/* On next's stack (sched_resume_on, after sched_handoff); irqs off. What
 * sched_finish_switch does after a switch, for a prev blocked in IPC (not
 * dead: only the thread itself ends itself), then next back to user (its
 * tf.sstatus is the one its last return to user wrote: blocked in a
 * system call, it has been in user mode). */
void sched_handoff_done(struct thread *prev, struct thread *next)
{
	lockcheck_assert_none("the IPC hand-over (sched_resume_on)");
	if (__atomic_exchange_n(&prev->on_cpu, ONCPU_OFF, __ATOMIC_ACQ_REL) == ONCPU_REQUEUE)
		enqueue(prev);
	if (next->killed)
		thread_exit();
	user_return(next->uf);
}

/* Needs: irqs off, no lock held; on next's stack after the fast path's
 * handoff (user_vector), which has just let prev go from this hart and
 * found it made runnable while it was still on it (on_cpu REQUEUE):
 * queue it, as sched_handoff_done does. */
void sched_handoff_requeue(struct thread *prev)
{
	enqueue(prev);
}

/* Needs: irqs off, no lock held; next came from a run queue or passed
 * sched_can_direct, so no hart is on its stack. No wait here: a hart that
 * spun for another to leave its thread could spin forever (two harts each
 * waiting for the other's current thread). */
static void switch_to(struct rq *rq, struct thread *prev, struct thread *next)
{
	if (__atomic_load_n(&next->on_cpu, __ATOMIC_ACQUIRE) != ONCPU_OFF)
		panic("switch_to: thread %d still on a hart (on_cpu %d)", next->id, next->on_cpu);
	__atomic_store_n(&next->on_cpu, ONCPU_ON, __ATOMIC_RELAXED);
	next->state = T_RUNNING;
	__atomic_store_n(&rq->idle, next == rq->idle_thread, __ATOMIC_RELAXED);
	next->last_cpu = (int)this_cpu()->index;
	rq->cur = next;
	rq->switches++;
	sched_activate(next);
	/* A handoff left next with only its return to user to do (and did
	 * not write ctx, to stay short); prev's ctx is saved for real now. */
	if (next->ctx_fresh) {
		arch_kctx_init(&next->ctx, next->uf);
		next->ctx_fresh = 0;
	}
	prev->ctx_fresh = 0;
	struct kctx *p = switch_context(&prev->ctx, &next->ctx);
	sched_finish_switch(p);
}

/* Needs: no lock held. Let other threads of this hart at the current
 * thread's level or higher run. The current thread is not queued here:
 * its hart is still on its stack. It is marked runnable with on_cpu
 * REQUEUE (no waker can touch it: it is not blocked), so sched_switch
 * either keeps it or switches away, and then sched_finish_switch queues
 * it. */
void sched_yield(void)
{
	unsigned long f = irq_save();
	struct rq *rq = this_rq();
	struct thread *cur = rq->cur;
	if (cur != rq->idle_thread && cur->state == T_RUNNING) {
		cur->state = T_RUNNABLE;
		__atomic_store_n(&cur->on_cpu, ONCPU_REQUEUE, __ATOMIC_RELAXED);
	}
	sched_switch();
	irq_restore(f);
}

/* Needs: irqs off, no lock held; the current thread is T_BLOCKED (set
 * under the lock that owns its wait, which the caller dropped). It may already have been
 * woken again; sched_switch handles that. */
void sched_block(void)
{
	sched_switch();
}

/* Every hart ends here after boot; the boot hart after starting init. */
void sched_idle_loop(void)
{
	uint32_t idx = this_cpu()->index;
	struct rq *rq = &rqs[idx];
	struct thread *idle = &idle_threads[idx];
	irq_disable();
	arch_user_counters_on();
	idle->state = T_RUNNING;
	idle->on_cpu = ONCPU_ON;
	idle->affinity = (int)idx;
	idle->id = -1 - (int)idx;
	rq->idle_thread = idle;
	rq->cur = idle;
	rq->cur_token = arch_as_current();
	for (;;) {
		irq_disable();
		if (rq->cur_token != boot_config.kernel_as_token)
			sched_activate(idle);
		/* Announce idleness before the last look at the queues; see
		 * sched_wake. */
		__atomic_store_n(&rq->idle, 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		uint64_t sw = rq->switches;
		sched_switch();      /* own queue, else steal */
		/* Sleep at once, no polling. No wakeup is lost: interrupts
		 * are off from the look at the queues to the sleep, which
		 * enables them in the same step, so an IPI sent by an enqueue
		 * that saw rq->idle stays pending and ends the sleep at once;
		 * an enqueue that came before our fence is seen by the look.
		 * The tick keeps running here: it is this hart's quiescent
		 * state for RCU (rcu.c). */
		if (rq->switches == sw && __atomic_load_n(&rq->len, __ATOMIC_RELAXED) == 0)
			arch_idle_sleep();   /* returns with the interrupt that woke us taken */
		else
			irq_enable();
	}
}
