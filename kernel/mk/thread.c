/* Threads: a static pool of thread structs; each live one has its own
 * kernel stack, THREAD_KSTACK_FRAMES contiguous frames taken at
 * thread_alloc and given back when the struct returns to the pool. The
 * stack's top holds the user registers (struct uframe). Stacks are
 * reached through the kernel's direct map, which maps every frame at all
 * times: the trap entry and the IPC fast path may touch any thread's
 * stack without a fault. A user thread's stack counts in its task's frame
 * quota from its creation to its exit, as its thread quota does. */
#include "mk.h"
#include "pagewait.h"
#include "arch.h"
#include "kstring.h"
#include "panic.h"
#include "failalloc.h"
#include "frame.h"

struct thread threads[MAX_THREADS];
/* Under mk_lock: structs not T_FREE (threads_live), an index no free
 * struct lies below (the next search starts there), and threads_end. */
static unsigned long nlive;
static int free_hint, used_end;    /* used_end: threads_end */

unsigned long threads_live(void)
{
	return __atomic_load_n(&nlive, __ATOMIC_RELAXED);
}

int threads_end(void)
{
	return __atomic_load_n(&used_end, __ATOMIC_ACQUIRE);
}

/* Needs mk_lock. A T_FREE struct that no hart is on, or NULL. */
static struct thread *free_struct(void)
{
	for (int i = failalloc_fail() ? MAX_THREADS : free_hint; i < MAX_THREADS; i++)
		if (threads[i].state == T_FREE && !threads[i].on_cpu)
			return &threads[i];
	return NULL;
}

/* Needs mk_lock. A kernel stack for a thread of t (NULL: a kernel thread),
 * charged to t's frame quota: 0 and its base in *stack, or -E_QUOTA /
 * -E_NOMEM with nothing charged or taken. */
static int kstack_take(struct task *t, uint8_t **stack)
{
	paddr_t pa;
	if (t && quota_charge_locked(t, THREAD_KSTACK_FRAMES))
		return -E_QUOTA;
	if (frame_alloc_run_aligned(THREAD_KSTACK_FRAMES, &pa)) {
		if (t)
			quota_release_frames(t, THREAD_KSTACK_FRAMES);
		return -E_NOMEM;
	}
	*stack = phys_to_virt(pa);
	return 0;
}

/* Needs mk_lock; no hart is on th's stack (on_cpu 0) and nothing will
 * touch it again. Its frames back to the allocator (the quota charge went
 * back at the thread's exit). */
static void kstack_give_back(struct thread *th)
{
	paddr_t pa = virt_to_phys(th->kstack);
	for (unsigned i = 0; i < THREAD_KSTACK_FRAMES; i++)
		if (frame_free(pa + (paddr_t)i * FRAME_SIZE))
			panic("thread %d: its kernel stack was not allocated", th->id);
	th->kstack = NULL;
	th->uf = NULL;
}

/* Needs mk_lock. A fresh thread (state T_BLOCKED, one "alive" reference)
 * bound to task t (or a kernel thread when t is NULL), with its own kernel
 * stack, or NULL with *err and nothing changed: -E_QUOTA when t's thread
 * quota (its live threads plus what it carved for its children) is used
 * up or its frame quota has no room for the stack, -E_NOMEM when the
 * pool is empty or no frames are left for the stack. */
struct thread *thread_alloc(struct task *t, int *err)
{
	if (t && t->nthreads + t->threads_used >= t->thread_quota) {
		*err = -E_QUOTA;
		return NULL;
	}
	struct thread *th = free_struct();
	uint8_t *stack;
	*err = th ? kstack_take(t, &stack) : -E_NOMEM;
	if (*err)
		return NULL;
	int i = (int)(th - threads);
	uint32_t gen = th->gen + 1;
	uint64_t seq = th->call_seq;    /* calls of every incarnation differ */
	memset(th, 0, sizeof *th);
	th->gen = gen;
	th->call_seq = seq;
	th->id = i;
	th->state = T_BLOCKED;
	th->block = B_BORN;
	th->prio = PRIO_DEFAULT;
	th->affinity = -1;
	th->last_cpu = -1;
	th->refs = 1;
	th->task = t;
	th->task_gen = t ? t->gen : 0;
	th->kstack = stack;
	th->uf = (struct uframe *)(stack + THREAD_KSTACK) - 1;
	th->xfer_slot = SLOT_NONE;
	th->recv_slot = SLOT_NONE;
	/* Runnable from birth: a thread killed before it was started
	 * still goes through thread_first_run and exits cleanly. */
	memset(&th->uf->tf, 0, sizeof th->uf->tf);
	arch_kctx_init(&th->ctx, th->uf);
	th->ctx_fresh = 0;
	if (t) {
		th->task_next = t->threads;
		t->threads = th;
		t->nthreads++;
	}
	__atomic_store_n(&nlive, nlive + 1, __ATOMIC_RELAXED);   /* threads_live reads it unlocked */
	free_hint = i + 1;
	if (i >= used_end)
		__atomic_store_n(&used_end, i + 1, __ATOMIC_RELEASE);
	return th;
}

/* Needs mk_lock; the caller already dropped its reference. A dead thread
 * that no kernel path holds and no hart runs on goes back to the pool.
 * Caps do not hold it: they name (thread, gen) and see E_DEAD once the
 * struct is reused, so dead threads never pin pool slots. */
void thread_put(struct thread *th)
{
	if (th->refs == 0 && th->state == T_DEAD && !th->on_cpu) {
		kstack_give_back(th);
		th->state = T_FREE;
		__atomic_store_n(&nlive, nlive - 1, __ATOMIC_RELAXED);
		if (th->id < free_hint)
			free_hint = th->id;
	}
}

/* Set up a user thread's first registers and make it runnable.
 * Needs: mk_lock NOT held; the caller holds a reference on th (so the
 * struct cannot be reused meanwhile). -E_DEAD if it was killed first. */
int thread_start_user(struct thread *th, uint64_t pc, uint64_t sp, uint64_t arg)
{
	uint64_t args[4] = { arg, 0, 0, 0 };
	return thread_start_user_args(th, pc, sp, args);
}

int thread_start_user_args(struct thread *th, uint64_t pc, uint64_t sp, const uint64_t args[4])
{
	unsigned long f = spin_lock_irqsave(&mk_lock);
	int ok = th->state == T_BLOCKED && th->block == B_BORN && !th->killed;
	if (ok) {
		th->block = B_NONE;
		uf_set(&th->uf->tf, UREG_PC, pc);
		uf_set(&th->uf->tf, UREG_SP, sp);
		for (unsigned i = 0; i < 4; i++)
			uf_set_arg(&th->uf->tf, i, args[i]);
		th->state = T_RUNNABLE;
		sched_wake(th);
	}
	spin_unlock_irqrestore(&mk_lock, f);
	return ok ? 0 : -E_DEAD;
}

struct thread *kthread_create(void (*fn)(void *), void *arg, int affinity)
{
	unsigned long f = spin_lock_irqsave(&mk_lock);
	int err;
	struct thread *th = thread_alloc(NULL, &err);
	if (th) {
		th->block = B_NONE;
		th->kfn = fn;
		th->karg = arg;
		th->affinity = affinity;
		th->prio = PRIO_KERNEL;         /* above every user level */
		arch_kctx_init(&th->ctx, th->uf);
		th->state = T_RUNNABLE;
		sched_wake(th);
	}
	spin_unlock_irqrestore(&mk_lock, f);
	return th;
}

void thread_first_run(struct kctx *prev)
{
	sched_finish_switch(prev);
	struct thread *th = cur_thread();
	if (!th->task) {
		irq_enable();
		th->kfn(th->karg);
		thread_exit();
	}
	return_to_user();
}

/* Needs mk_lock. Mark th to die: a blocked thread dies now; a running or
 * runnable one dies at its next return to user (the hart running it gets
 * an IPI so that happens soon). Waits owned by mk_lock (task wait, not
 * started yet) are ended here; a page wait under its lock (pagewait_kill),
 * an IPC wait under its endpoint's lock (ipc_kill_wait). killed is ordered before the look at the wait: a
 * thread about to start an IPC wait sees it (ipc_block). */
void thread_kill_locked(struct thread *th)
{
	if (th->state == T_DEAD || th->state == T_FREE)
		return;
	__atomic_store_n(&th->killed, 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	if (th->state == T_BLOCKED && (th->block == B_WAIT || th->block == B_BORN)) {
		if (th->block == B_WAIT)
			task_wait_cancel(th);
		/* Let it run to its own exit so the stack is left cleanly. */
		th->block = B_NONE;
		th->state = T_RUNNABLE;
		sched_wake(th);
		return;
	}
	pagewait_kill(th);
	ipc_kill_wait(th);
}

/* The current thread ends. Its stack is reused only after the next thread
 * has switched away from it (sched_finish_switch). */
void thread_exit(void)
{
	irq_disable();
	struct thread *th = cur_thread();
	spin_lock(&mk_lock);
	ipc_cancel(th);
	fault_ep_drop_thread(th);
	struct task *t = th->task;
	if (t) {
		struct thread **pp = &t->threads;
		while (*pp && *pp != th)
			pp = &(*pp)->task_next;
		if (*pp)
			*pp = th->task_next;
		t->nthreads--;
		quota_release_frames(t, THREAD_KSTACK_FRAMES);   /* with its thread quota */
		if (t->nthreads == 0)
			task_exit(t, t->state == TASK_ALIVE ? 0 : t->exit_status);
	}
	th->state = T_DEAD;
	th->refs--;
	spin_unlock(&mk_lock);
	sched_switch();
	panic("a dead thread was scheduled");
}
