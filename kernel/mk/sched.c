/* Scheduler: one run queue per hart with NPRIO FIFO levels (highest level
 * first, round robin inside a level), timer preemption of user code, idle
 * harts in wfi woken by IPI.
 *
 * Placement and load balancing (simple on purpose):
 *  - a woken thread goes to its affinity hart if pinned; otherwise to the
 *    hart it last ran on, unless that hart is busy and another is idle, in
 *    which case the idle one gets it;
 *  - a hart whose queue is empty steals the oldest unpinned thread from the
 *    hart with the longest queue before it goes idle.
 * The kernel is not preemptible: a thread switches only in sched_switch
 * (block, yield, exit, or a timer tick taken from user mode). */
#include "mk.h"
#include "riscv.h"
#include "smp.h"
#include "kernel.h"
#include "panic.h"
#include "usatp.h"

/* How long (timebase units, 10 MHz on QEMU virt: 50 us) an idle hart
 * polls its queue before wfi. */
#define IDLE_POLL_TICKS 500

struct rq rqs[MAX_HARTS];
static struct thread idle_threads[MAX_HARTS];

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
}

/* Needs rq->lock. Remove the first thread at the highest level for which
 * ok(th) holds (ok NULL = any). */
static struct thread *rq_take(struct rq *rq, int thief)
{
	for (int p = NPRIO - 1; p >= 0; p--) {
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
			return th;
		}
	}
	return NULL;
}

/* Needs: irqs off. Pick the next thread for this hart: own queue, else
 * steal from the longest other queue. */
static struct thread *pick_next(struct rq *rq)
{
	spin_lock(&rq->lock);
	struct thread *th = rq_take(rq, -1);
	spin_unlock(&rq->lock);
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
	th = rq_take(&rqs[best], (int)me);
	spin_unlock(&rqs[best].lock);
	return th;
}

void sched_wake(struct thread *th)
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

void sched_activate(struct thread *next)
{
	struct rq *rq = this_rq();
	uint64_t satp = next->task ? uvm_satp(next->task) : boot_config.kernel_satp;
	if (satp == rq->cur_satp)
		return;      /* same address space: its hart_mask bit is already set */
	if (next->task) {
		__atomic_fetch_or(&next->task->hart_mask, 1ULL << this_cpu()->index,
				  __ATOMIC_SEQ_CST);
		uvm_asid_activate(next->task);
	}
	csr_write(satp, satp);
	/* Without ASIDs every AS shares tag 0: flush on each switch. */
	if (!next->task || !arch_satp_asid(satp))
		local_flush_tlb_all();
	rq->cur_satp = satp;
}

void sched_finish_switch(struct kctx *pctx)
{
	struct thread *prev = (struct thread *)pctx;
	__atomic_store_n(&prev->on_cpu, 0, __ATOMIC_RELEASE);
	if (prev->state == T_DEAD) {
		unsigned long f = spin_lock_irqsave(&mk_lock);
		thread_put(prev);
		spin_unlock_irqrestore(&mk_lock, f);
	}
}

static void switch_to(struct rq *rq, struct thread *prev, struct thread *next);

void sched_switch(void)
{
	struct rq *rq = this_rq();
	struct thread *prev = rq->cur;
	struct thread *next = pick_next(rq);
	if (!next) {
		if (prev->state == T_RUNNING)
			return;
		next = rq->idle_thread;
	}
	if (next == prev) {
		prev->state = T_RUNNING;
		return;
	}
	switch_to(rq, prev, next);
}

/* IPC fast path: the current thread just blocked and `next` (made
 * runnable, not queued) runs here at once, skipping the run queues. */
int sched_can_direct(struct thread *next)
{
	return next->affinity < 0 || next->affinity == (int)this_cpu()->index;
}

void sched_direct(struct thread *next)
{
	struct rq *rq = this_rq();
	switch_to(rq, rq->cur, next);
}

static void switch_to(struct rq *rq, struct thread *prev, struct thread *next)
{
	while (__atomic_load_n(&next->on_cpu, __ATOMIC_ACQUIRE))
		cpu_relax();
	next->on_cpu = 1;
	next->state = T_RUNNING;
	__atomic_store_n(&rq->idle, next == rq->idle_thread, __ATOMIC_RELAXED);
	next->last_cpu = (int)this_cpu()->index;
	rq->cur = next;
	rq->switches++;
	sched_activate(next);
	struct kctx *p = switch_context(&prev->ctx, &next->ctx);
	sched_finish_switch(p);
}

void sched_yield(void)
{
	unsigned long f = irq_save();
	struct rq *rq = this_rq();
	struct thread *cur = rq->cur;
	if (cur != rq->idle_thread && cur->state == T_RUNNING) {
		cur->state = T_RUNNABLE;
		spin_lock(&rq->lock);
		rq_push(rq, cur);
		spin_unlock(&rq->lock);
	}
	sched_switch();
	irq_restore(f);
}

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
	csr_write(scounteren, 7);   /* user may read cycle, time, instret */
	idle->state = T_RUNNING;
	idle->on_cpu = 1;
	idle->affinity = (int)idx;
	idle->id = -1 - (int)idx;
	rq->idle_thread = idle;
	rq->cur = idle;
	rq->cur_satp = csr_read(satp);
	for (;;) {
		irq_disable();
		if (rq->cur_satp != boot_config.kernel_satp)
			sched_activate(idle);
		/* Announce idleness before the last look at the queues; see
		 * sched_wake. */
		__atomic_store_n(&rq->idle, 1, __ATOMIC_RELAXED);
		__atomic_thread_fence(__ATOMIC_SEQ_CST);
		uint64_t sw = rq->switches;
		sched_switch();      /* own queue, else steal */
		if (rq->switches == sw) {
			/* Poll a little before sleeping: waking a hart from wfi
			 * costs an IPI round through the firmware, which is most
			 * of a cross-hart IPC when the partner answers quickly. */
			uint64_t until = rdtime() + IDLE_POLL_TICKS;
			while (__atomic_load_n(&rq->len, __ATOMIC_RELAXED) == 0 && rdtime() < until)
				cpu_relax();
			if (__atomic_load_n(&rq->len, __ATOMIC_RELAXED) == 0)
				wfi();   /* returns on a pending interrupt even with SIE off */
		}
		irq_enable();   /* take the interrupt that woke us */
	}
}
