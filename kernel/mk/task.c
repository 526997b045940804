/* Tasks: an address space (mm core), a CSpace, a frame quota and an object
 * quota, and their threads. Death is two-step: task_exit kills every
 * thread; when the last one is gone the reaper thread tears the task down
 * (caps, address space) on a kernel stack that belongs to no task, then
 * wakes whoever waits. */
#include "mobj.h"
#include "mk.h"
#include "uvm_frames.h"
#include "failalloc.h"
#include "kstring.h"
#include "panic.h"
#include "printk.h"
#include "arch.h"
#include "smp.h"
#include "shootdown.h"
#include "harts.h"

struct task tasks[MAX_TASKS];
spinlock_t mk_lock = SPINLOCK_INIT_CLASS(&lock_class_mk);
static struct task *reap_list;
static struct thread *reaper;

/* Needs mk_lock. Wake the reaper if it sleeps in reap_sleep_until_ready or
 * waits for work. */
static void reaper_poke(void)
{
	if (reaper && reaper->state == T_BLOCKED) {
		reaper->state = T_RUNNABLE;
		sched_wake(reaper);
	}
}


unsigned long tasks_live(void)
{
	unsigned long n = 0;
	for (int i = 0; i < MAX_TASKS; i++)
		if (tasks[i].state != TASK_FREE)
			n++;
	return n;
}

/* Per-hart frame-quota reserves, in the way of a per-CPU counter: hart h
 * keeps, for each task slot, frames already charged to that task's shared
 * frames_used but not used yet. A fault's charge (a data frame, the PT
 * frames a transaction reserves) takes them from its own hart's reserve,
 * a release puts them back there, and only a refill (QRES_BATCH at once)
 * or an overfull reserve (beyond QRES_MAX) touches the shared line.
 * Since the reserves count in frames_used, frames_used + as.nr_frames +
 * pt_resv <= frame_quota still bounds what the task really holds (every
 * change that raises the left side is checked: refills, exact charges,
 * and PT frames, charged to pt_resv and never to a reserve,
 * quota_charge_pt); the exact use is frames_used less the reserves, which
 * quota_frames_used reads after taking the reserves back. A charge that does
 * not fit takes every hart's reserve back first (quota_reclaim), so a
 * reserve never makes a charge fail that would fit.
 *
 * Each word is (task gen << 32) | frames: a reserve left by an earlier
 * incarnation of the slot (a release after the task was reaped) counts as
 * empty, and is overwritten. */
#define QRES_BATCH 16
#define QRES_MAX   32
static uint64_t *qres;      /* harts_max rows of MAX_TASKS words */

int quota_init(void)
{
	qres = harts_alloc(MAX_TASKS * sizeof *qres);
	return qres ? 0 : -E_NOMEM;
}

static uint64_t qres_tag(const struct task *t)
{
	return (uint64_t)__atomic_load_n(&t->gen, __ATOMIC_RELAXED) << 32;
}

/* Take n frames of t from this hart's reserve: 1, or 0 when it holds
 * fewer. Any hart may change any word (CAS), so a migration in between
 * only means another hart's reserve served us. */
static int qres_take(struct task *t, long n)
{
	uint64_t *w = &qres[(uint64_t)this_cpu()->index * MAX_TASKS + t->id];
	uint64_t tag = qres_tag(t), old = __atomic_load_n(w, __ATOMIC_RELAXED);
	do {
		if ((old & ~0xffffffffULL) != tag || (long)(old & 0xffffffffULL) < n)
			return 0;
	} while (!__atomic_compare_exchange_n(w, &old, old - (uint64_t)n, 0, __ATOMIC_RELAXED,
					      __ATOMIC_RELAXED));
	return 1;
}

/* Put n charged frames of t into this hart's reserve; what would pass
 * QRES_MAX is returned for the caller to uncharge. */
static long qres_put(struct task *t, long n)
{
	uint64_t *w = &qres[(uint64_t)this_cpu()->index * MAX_TASKS + t->id];
	uint64_t tag = qres_tag(t), old = __atomic_load_n(w, __ATOMIC_RELAXED), want;
	long excess;
	do {
		long have = (old & ~0xffffffffULL) == tag ? (long)(old & 0xffffffffULL) : 0;
		long keep = have + n > QRES_MAX ? QRES_MAX : have + n;
		excess = have + n - keep;
		want = tag | (uint64_t)keep;
	} while (!__atomic_compare_exchange_n(w, &old, want, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED));
	return excess;
}

/* Every hart's reserve for t back to the shared count. Any context. */
void quota_reclaim(struct task *t)
{
	uint64_t tag = qres_tag(t);
	for (uint32_t i = 0; qres && i < harts_max; i++) {
		uint64_t *w = &qres[(uint64_t)i * MAX_TASKS + t->id];
		uint64_t old = __atomic_load_n(w, __ATOMIC_RELAXED);
		while ((old & ~0xffffffffULL) == tag && (old & 0xffffffffULL) &&
		       !__atomic_compare_exchange_n(w, &old, tag, 0, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
			;
		if ((old & ~0xffffffffULL) == tag && (old & 0xffffffffULL))
			__atomic_sub_fetch(&t->frames_used, (long)(old & 0xffffffffULL), __ATOMIC_RELAXED);
	}
}

/* Charge n frames to the shared count: 0, or -E_QUOTA with nothing charged. */
static int shared_charge(struct task *t, long n)
{
	long used = __atomic_add_fetch(&t->frames_used, n, __ATOMIC_RELAXED);
	if (used + (long)__atomic_load_n(&t->as.nr_frames, __ATOMIC_RELAXED) +
	    __atomic_load_n(&t->pt_resv, __ATOMIC_RELAXED) > t->frame_quota) {
		__atomic_sub_fetch(&t->frames_used, n, __ATOMIC_RELAXED);
		return -E_QUOTA;
	}
	return 0;
}

/* Charge n PT frames to pt_resv: 0, or -E_QUOTA with nothing charged. */
static int pt_charge(struct task *t, long n)
{
	long resv = __atomic_add_fetch(&t->pt_resv, n, __ATOMIC_RELAXED);
	if (__atomic_load_n(&t->frames_used, __ATOMIC_RELAXED) +
	    (long)__atomic_load_n(&t->as.nr_frames, __ATOMIC_RELAXED) + resv <= t->frame_quota)
		return 0;
	__atomic_sub_fetch(&t->pt_resv, n, __ATOMIC_RELAXED);
	return -E_QUOTA;
}

/* PT pages and metadata arrays a transaction reserves: the core uncharges
 * each as it starts counting in as.nr_frames, so they must not come from a
 * reserve (that would grow nr_frames with no check), and they stay out of
 * frames_used (what a task uses is frames_used + nr_frames, the reserved
 * ones not yet). They are charged only when a table is actually created,
 * not on every fault. Before a refusal, as in quota_charge_frames. */
int quota_charge_pt(struct task *t, long n)
{
	if (!pt_charge(t, n))
		return 0;
	shootdown_settle();      /* its releases refill reserves: reclaim after */
	quota_reclaim(t);
	return pt_charge(t, n);
}

void quota_release_pt(struct task *t, long n)
{
	__atomic_sub_fetch(&t->pt_resv, n, __ATOMIC_RELAXED);
}

/* quota_charge_frames for a caller holding mk_lock (a thread's kernel
 * stack): the same check, every hart's reserve taken back before a
 * refusal, but no wait for frames parked behind a TLB shootdown (that
 * waits on other harts, which may be spinning on mk_lock). So a refusal
 * can come while some of t's released frames are still parked. 0, or
 * -E_QUOTA with nothing charged. */
int quota_charge_locked(struct task *t, long n)
{
	if (!shared_charge(t, n))
		return 0;
	quota_reclaim(t);
	return shared_charge(t, n);
}

/* Charge n (>= 0) more frames to t: 0, or -E_QUOTA (nothing charged) when
 * data frames + PT pages + reserved PT frames would pass the quota. Lock
 * free (atomics), so fault and transaction paths may call it (core PT
 * locks held included). n is at most 2^32 and every count is bounded by
 * RAM, so nothing can wrap. Before it refuses, the per-hart reserves and
 * the frames parked behind a TLB shootdown go back, so the refusal is
 * exact. */
int quota_charge_frames(struct task *t, long n)
{
	if (n < 0 || n > 0xffffffffL)
		return -E_QUOTA;
	if (n && n <= QRES_BATCH) {
		if (qres_take(t, n))
			return 0;
		if (!shared_charge(t, n + QRES_BATCH)) {
			long excess = qres_put(t, QRES_BATCH);
			if (excess)
				__atomic_sub_fetch(&t->frames_used, excess, __ATOMIC_RELAXED);
			return 0;
		}
	}
	if (!shared_charge(t, n))
		return 0;
	shootdown_settle();
	quota_reclaim(t);
	return shared_charge(t, n);
}

void quota_release_frames(struct task *t, long n)
{
	long excess = n <= QRES_MAX ? qres_put(t, n) : n;
	if (excess)
		__atomic_sub_fetch(&t->frames_used, excess, __ATOMIC_RELAXED);
}

long quota_frames_used(struct task *t)
{
	quota_reclaim(t);
	return __atomic_load_n(&t->frames_used, __ATOMIC_RELAXED);
}

/* Needs mk_lock. Carve q (plus one task struct) from parent's quotas:
 * 0, or -E_QUOTA with nothing charged. */
static int quota_carve(struct task *parent, const struct quota *q)
{
	if (parent->threads_used + q->threads > parent->thread_quota ||
	    parent->eps_used + q->eps > parent->ep_quota ||
	    parent->tasks_used + q->tasks + 1 > parent->task_quota)
		return -E_QUOTA;
	if (quota_charge_frames(parent, q->frames))
		return -E_QUOTA;
	parent->threads_used += q->threads;
	parent->eps_used += q->eps;
	parent->tasks_used += q->tasks + 1;
	return 0;
}

/* Needs mk_lock. Give back what quota_carve took for t, except what t
 * still has in use (its live child tasks, endpoints still charged to it,
 * data frames still referenced elsewhere): that stays charged to the
 * parent, who inherits those children and endpoints. The task struct's own
 * charge is returned when the struct is freed (task_put). */
static void quota_return(struct task *parent, struct task *t)
{
	quota_reclaim(t);
	long frames_left = __atomic_load_n(&t->frames_used, __ATOMIC_RELAXED);
	quota_release_frames(parent, t->frame_quota - frames_left);
	parent->threads_used -= t->thread_quota - t->threads_used;
	parent->eps_used -= t->ep_quota - t->eps_used;
	parent->tasks_used -= t->task_quota - t->tasks_used;
}

int quota_decode(const struct task *t, long quota, struct quota *q)
{
	if (!QUOTA_VALID(quota))
		return -E_INVAL;
	unsigned m = QUOTA_MCP_FIELD(quota);
	*q = (struct quota){ .frames = QUOTA_FRAMES(quota), .threads = QUOTA_THREADS(quota),
			     .eps = QUOTA_ENDPOINTS(quota), .tasks = QUOTA_TASKS(quota),
			     .mcp = m ? (int)m - 1 : t->mcp };
	return q->mcp > t->mcp ? -E_PERM : 0;
}

/* A new, empty task with its own address space; its quotas are carved
 * from the parent's (returned when it is reaped). Needs: mk_lock NOT held
 * (creating the address space allocates); q already validated. NULL with
 * *err on failure, nothing charged. */
static struct task *task_create(struct task *parent, const struct quota *q, int *err)
{
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct task *t = NULL;
	if (parent && quota_carve(parent, q)) {
		spin_unlock_irqrestore(&mk_lock, f);
		*err = -E_QUOTA;
		return NULL;
	}
	for (int i = failalloc_fail() ? MAX_TASKS : 0; i < MAX_TASKS; i++)
		if (tasks[i].state == TASK_FREE) {
			t = &tasks[i];
			uint32_t gen = t->gen + 1;
			memset(t, 0, sizeof *t);
			t->gen = gen;
			t->id = i;
			spin_lock_init_class(&t->cspace_lock, &lock_class_cspace);
			spin_lock_init_class(&t->fault_lock, &lock_class_fault);
			t->state = TASK_ALIVE;
			break;
		}
	if (!t) {
		if (parent) {
			struct task none = { .frame_quota = q->frames, .thread_quota = q->threads,
					     .ep_quota = q->eps, .task_quota = q->tasks };
			quota_return(parent, &none);
			parent->tasks_used--;
		}
		spin_unlock_irqrestore(&mk_lock, f);
		*err = -E_NOMEM;
		return NULL;
	}
	t->parent = parent;
	t->parent_gen = parent ? parent->gen : 0;
	t->frame_quota = q->frames;
	t->thread_quota = q->threads;
	t->ep_quota = q->eps;
	t->task_quota = q->tasks;
	t->mcp = q->mcp;
	cspace_init(t);
	spin_unlock_irqrestore(&mk_lock, f);
	if (uvm_as_create(t)) {
		f = spin_lock_irqsave(&mk_lock);
		if (parent) {
			quota_return(parent, t);
			parent->tasks_used--;
		}
		t->state = TASK_FREE;
		spin_unlock_irqrestore(&mk_lock, f);
		*err = -E_NOMEM;
		return NULL;
	}
	return t;
}

/* Needs mk_lock. Start t's death (first status wins); queue it for the
 * reaper once no thread is left. */
void task_exit(struct task *t, int status)
{
	if (t->state == TASK_ALIVE) {
		/* Before the reaper reads as_users: see task_txn_try_begin. */
		__atomic_store_n(&t->state, TASK_DYING, __ATOMIC_SEQ_CST);
		t->exit_status = status;
		for (struct thread *th = t->threads; th; th = th->task_next) {
			thread_kill_locked(th);
			if (th->state == T_RUNNING && th->last_cpu >= 0 &&
			    th != cur_thread())
				ipi_send((uint32_t)th->last_cpu);
		}
	}
	if (t->nthreads == 0 && !t->reap_queued && t->state == TASK_DYING) {
		t->reap_queued = 1;
		t->reap_next = reap_list;
		reap_list = t;
		reaper_poke();
	}
}

/* Needs mk_lock. Free a dead task nobody names; its struct stops counting
 * against its parent's task quota only now (a dead task pinned by caps
 * still holds a slot of the pool). */
void task_put(struct task *t)
{
	/* An empty task (SYS_TASK_CREATE, no thread yet) that no cap outside
	 * its own CSpace names can never be given a thread: it dies now
	 * rather than pin its slot and quota for good. */
	if (t->state == TASK_ALIVE && t->nthreads == 0 && t->refs <= cspace_extent(t) &&
	    t->refs == cspace_self_refs(t))
		task_exit(t, EXIT_KILLED);
	if (t->refs == 0 && t->state == TASK_DEAD) {
		struct task *p = t->parent;
		if (p && p->state != TASK_FREE && p->gen == t->parent_gen)
			p->tasks_used--;
		t->state = TASK_FREE;
	}
}

/* Needs: mk_lock NOT held; t named by a region cap the caller looked up
 * and cannot lose meanwhile (it holds the revoke barrier's read side), so
 * t's slot is not reused. Counts a transaction on t's address space so the
 * reaper does not destroy it underneath: 0, or -E_DEAD (nothing counted)
 * when t is no longer alive. Count first, then read the state, both
 * sequentially consistent; task_exit makes t not alive before the reaper
 * reads as_users (reap_ready), so either the reaper sees this count and
 * waits, or this sees the death and backs off. No mk_lock needed. */
int task_txn_try_begin(struct task *t)
{
	__atomic_add_fetch(&t->as_users, 1, __ATOMIC_SEQ_CST);
	if (__atomic_load_n(&t->state, __ATOMIC_SEQ_CST) == TASK_ALIVE)
		return 0;
	task_txn_end(t);
	return -E_DEAD;
}

/* Needs: mk_lock NOT held. The last transaction on a dying task's address
 * space wakes the reaper waiting for it. Pairs with reap_sleep_until: it
 * sets reap_waiting before it reads as_users, we drop as_users before we
 * read reap_waiting (both sequentially consistent), so one of us sees the
 * other. */
void task_txn_end(struct task *t)
{
	if (__atomic_sub_fetch(&t->as_users, 1, __ATOMIC_SEQ_CST) == 0 &&
	    __atomic_load_n(&t->reap_waiting, __ATOMIC_SEQ_CST)) {
		unsigned long f = spin_lock_irqsave(&mk_lock);
		reaper_poke();
		spin_unlock_irqrestore(&mk_lock, f);
	}
}

/* Needs mk_lock; th is dead and its hart has just left its stack (on_cpu
 * is 0). The reaper may be waiting for exactly that. */
void task_thread_left(struct thread *th)
{
	if (th->task && th->task->reap_waiting)
		reaper_poke();
}

/* Whether t's threads are off every hart and no other task's transaction
 * is in flight on its address space: then it can be torn down. */
static int reap_ready(struct task *t)
{
	for (int i = 0, end = threads_end(); i < end; i++)
		if (threads[i].task == t && __atomic_load_n(&threads[i].on_cpu, __ATOMIC_ACQUIRE))
			return 0;
	return __atomic_load_n(&t->as_users, __ATOMIC_SEQ_CST) == 0;
}

/* Runs on the reaper. Sleep until reap_ready(t); the hart leaving t's last
 * thread (task_thread_left) and the last transaction on t's address space
 * (task_txn_end) wake us. Both conditions only ever become true: a dead
 * task's threads never run again, and no new transaction starts on a task
 * that is not alive. Other wake-ups (a new task to reap) just re-check. */
static void reap_sleep_until_ready(struct task *t)
{
	for (;;) {
		irq_disable();
		spin_lock(&mk_lock);
		__atomic_store_n(&t->reap_waiting, 1, __ATOMIC_SEQ_CST);
		if (reap_ready(t)) {
			t->reap_waiting = 0;
			spin_unlock(&mk_lock);
			irq_enable();
			return;
		}
		cur_thread()->state = T_BLOCKED;
		spin_unlock(&mk_lock);
		sched_block();
		irq_enable();
	}
}

/* Needs mk_lock; th is blocked in B_WAIT (SYS_TASK_WAIT). Take it off
 * the waiter list of the task it waits for; the caller wakes it. */
void task_wait_cancel(struct thread *th)
{
	struct thread **pp = &th->wait_task->waiters;
	while (*pp && *pp != th)
		pp = &(*pp)->rq_next;
	if (*pp)
		*pp = th->rq_next;
	th->wait_task = NULL;
}

/* Tear one task down. Needs: mk_lock NOT held; every thread of t is dead. */
static void reap(struct task *t)
{
	/* Its last thread may still be switching away on some hart, and
	 * region transactions of other tasks that started before it died
	 * may still run. */
	reap_sleep_until_ready(t);
	unsigned long f = spin_lock_irqsave(&mk_lock);
	fault_ep_drop_task(t);
	/* A device t drove stops before the frames it named to it are
	 * freed (the frame caps below, the mappings after). */
	device_task_dying(t);
	irq_task_gone(t);        /* lines t bound: completed, disabled */
	cspace_clear(t);
	spin_unlock_irqrestore(&mk_lock, f);
	t->tearing_down = 1;
	uvm_as_destroy(t);
	mobj_task_gone(t);       /* its mapping records (their objects may go now) */
	/* Frames of t parked behind a shootdown go back now, so that what
	 * quota_return reads counts only frames still referenced elsewhere. */
	shootdown_settle();
	f = spin_lock_irqsave(&mk_lock);
	for (int i = 0, end = threads_end(); i < end; i++)
		if (threads[i].task == t && threads[i].state == T_FREE)
			threads[i].task = NULL;
	struct task *p = t->parent;
	if (p && (p->state == TASK_FREE || p->gen != t->parent_gen))
		p = NULL;
	/* Endpoints and frames we paid for that others still name: our
	 * parent, who holds our carve, pays on (and is refunded when they go). */
	ep_recharge(t, p);
	notice_recharge(t, p);
	uvm_frames_inherit(t, p);
	if (p)
		quota_return(p, t);
	/* Our children (live or dead but named) outlive us: their carve stays
	 * charged to our parent, who becomes theirs. */
	for (int i = 0; i < MAX_TASKS; i++)
		if (tasks[i].state != TASK_FREE && tasks[i].parent == t && &tasks[i] != t) {
			tasks[i].parent = p;
			tasks[i].parent_gen = p ? p->gen : 0;
		}
	t->state = TASK_DEAD;
	struct thread *w = t->waiters;
	t->waiters = NULL;
	while (w) {
		struct thread *n = w->rq_next;
		w->block = B_NONE;
		w->state = T_RUNNABLE;
		sched_wake(w);
		w = n;
	}
	notice_task_dead(t);      /* those watching us learn it now */
	int status = t->exit_status, init = t->is_init;
	task_put(t);
	spin_unlock_irqrestore(&mk_lock, f);
	if (init) {
		printk("patina: exit %d\n", status);
		machine_poweroff(0);
	}
}

static void reaper_main(void *arg)
{
	(void)arg;
	for (;;) {
		irq_disable();
		spin_lock(&mk_lock);
		struct task *t = reap_list;
		if (t)
			reap_list = t->reap_next;
		else
			cur_thread()->state = T_BLOCKED;
		spin_unlock(&mk_lock);
		if (!t) {
			sched_block();
			irq_enable();
			continue;
		}
		irq_enable();
		reap(t);
	}
}

void reaper_start(void)
{
	reaper = kthread_create(reaper_main, NULL, -1);
	if (!reaper)
		panic("cannot start the reaper thread");
}

/* Create a task from boot module `module`, charging its quota to parent,
 * with slots 0 (itself), 1 (its address space) and 3 (its first thread),
 * and args (checked by spawn_args_fetch; NULL: none) as argv on its stack.
 * Its first thread is ready to start at the ELF entry with a0 = arg,
 * a1 = argc, a2 = argv, a3 = module but not started: task_start(sp) does
 * that. 0, or an error with nothing left behind. */
int task_spawn_module(struct task *parent, int module, uint64_t arg, const struct spawn_args *args,
		      const struct quota *q, int is_init, struct task **out, struct spawned *sp)
{
	if (module < 0 || module >= nboot_modules)
		return -E_NOENT;
	if (q->frames < 16 || q->threads < 1 || q->eps < 0 || q->tasks < 0)
		return -E_INVAL;
	int err;
	struct task *t = task_create(parent, q, &err);
	if (!t)
		return err;
	uint64_t entry;
	const struct boot_module *m = &boot_modules[module];
	err = elf_load(t, m->start, (size_t)(m->end - m->start), &entry);
	if (!err) {
		/* Stack: reserved anonymous memory, filled on first touch. */
		struct mm_cursor c;
		uint64_t lo = USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE;
		struct mm_status st = { .kind = MM_RESERVED, .prot = MM_PROT_R | MM_PROT_W };
		err = mm_lock(&c, &t->as, lo, USER_STACK_TOP) ? -E_NOMEM : 0;
		if (!err) {
			if (mm_mark(&c, lo, USER_STACK_TOP - lo, &st))
				err = -E_NOMEM;
			mm_release(&c);
		}
	}
	static const struct spawn_args none = { .kernel = SLOT_NONE, .console = SLOT_NONE };
	uint64_t usp = 0, argv = 0;
	if (!err)
		err = spawn_args_place(t, args ? args : &none, &usp, &argv);
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct thread *th = err ? NULL : thread_alloc(t, &err);
	if (!err && !th)
		err = -E_NOMEM;
	if (!err) {
		struct cap self = { .type = CAP_TASK, .rights = R_ALL, .o.task = t };
		struct cap as = { .type = CAP_REGION, .rights = R_ALL, .o.task = t,
				  .lo = PAGE_SIZE, .hi = user_top };
		struct cap thc = { .type = CAP_THREAD, .rights = R_ALL, .o.thread = th, .gen = th->gen };
		cap_get_obj(&self);
		cap_install(&t->cspace[SLOT_SELF_TASK], &self, NULL);
		cap_get_obj(&as);
		cap_install(&t->cspace[SLOT_SELF_AS], &as, NULL);
		cap_get_obj(&thc);
		cap_install(&t->cspace[SLOT_SELF_THREAD], &thc, NULL);
		th->refs++;     /* the caller's, until task_start: th cannot be reused */
		if (is_init) {
			struct cap kc = { .type = CAP_KERNEL, .rights = R_CONTROL | R_READ | R_WRITE };
			cap_install(&t->cspace[SLOT_KERNEL], &kc, NULL);
			struct cap con = { .type = CAP_CONSOLE, .rights = R_READ | R_WRITE };
			cap_install(&t->cspace[SLOT_CONSOLE], &con, NULL);
			t->is_init = 1;
		}
	} else {
		t->state = TASK_DYING;
		t->reap_queued = 1;
	}
	spin_unlock_irqrestore(&mk_lock, f);
	if (err) {
		reap(t);
		return err;
	}
	*out = t;
	sp->th = th;
	sp->entry = entry;
	sp->arg = arg;
	sp->sp = usp;
	sp->argc = args ? (uint64_t)args->argc : 0;
	sp->argv = argv;
	sp->module = (uint64_t)module;
	return 0;
}

/* Start the first thread of a task task_spawn_module made, and drop the
 * hold on it. Needs: mk_lock NOT held. The caller installs whatever caps
 * the new task and its parent should have first, so the task cannot run
 * (or die and be reaped) before they exist. -E_DEAD if the task was
 * killed meanwhile (its thread then exits on its own). */
int task_start(struct spawned *sp)
{
	uint64_t args[4] = { sp->arg, sp->argc, sp->argv, sp->module };
	int err = thread_start_user_args(sp->th, sp->entry, sp->sp, args);
	unsigned long f = spin_lock_irqsave(&mk_lock);
	sp->th->refs--;
	thread_put(sp->th);
	spin_unlock_irqrestore(&mk_lock, f);
	return err;
}

/* SYS_TASK_CREATE: an empty task (an address space with nothing mapped,
 * no thread, slots 0 and 1 as at spawn) whose quotas are carved from the
 * caller's; the caller gets a task cap with every right in dst. It maps
 * code through SYS_TASK_REGION and starts threads with SYS_THREAD_CREATE.
 * A task with no thread lives until it is killed; once its last thread
 * exits it is reaped like any other. self must be the caller's own task
 * cap with R_CONTROL; the quota word follows SYS_TASK_SPAWN's rules and
 * needs at least 16 frames (the address space's first page-table pages). */
long sys_task_create(struct task *t, long self, long dst, long quota)
{
	struct quota q;
	int qe = quota_decode(t, quota, &q);
	if (qe)
		return qe;
	if (q.frames < 16)
		return -E_INVAL;
	int err = 0;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cap *sc = cap_lookup(t, self, CAP_TASK, R_CONTROL, &err);
	if (sc && sc->o.task != t)
		err = -E_INVAL;
	if (!err)
		err = cap_slot_check(t, dst);
	spin_unlock_irqrestore(&mk_lock, f);
	if (err)
		return err;
	struct task *nt = task_create(t, &q, &err);
	if (!nt)
		return err;
	f = spin_lock_irqsave(&mk_lock);
	struct cap *d = cap_slot_free(t, dst, &err);   /* another thread may have raced */
	if (d) {
		struct cap self_c = { .type = CAP_TASK, .rights = R_ALL, .o.task = nt };
		struct cap as = { .type = CAP_REGION, .rights = R_ALL, .o.task = nt,
				  .lo = PAGE_SIZE, .hi = user_top };
		struct cap mine = { .type = CAP_TASK, .rights = R_ALL, .o.task = nt };
		cap_get_obj(&self_c);
		cap_install(&nt->cspace[SLOT_SELF_TASK], &self_c, NULL);
		cap_get_obj(&as);
		cap_install(&nt->cspace[SLOT_SELF_AS], &as, NULL);
		cap_get_obj(&mine);
		cap_install(d, &mine, NULL);
	} else {
		nt->state = TASK_DYING;
		nt->reap_queued = 1;
	}
	spin_unlock_irqrestore(&mk_lock, f);
	if (!d) {
		reap(nt);
		return err;
	}
	return 0;
}
