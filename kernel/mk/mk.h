/* The microkernel's objects: threads, tasks, endpoints, capabilities, and
 * the per-hart scheduler state. (Owner: microkernel.)
 *
 * Lock order (the ranks of kernel/lockclass.h, checked with
 * -Dlock_check=true; a lock is taken only above every lock held):
 *   10 authority  the revoke barrier (authority.c): writer lock and read side.
 *      mm cursor  (page-table locks, unchecked) under the barrier's read
 *                 side; never under mk_lock or anything below.
 *   20 mk_lock    one spinlock (irqsave) over the derivation tree (cap
 *                 install, copy, mint, delete, revoke, transfer), object
 *                 reference counts and quotas, task and thread lifecycle
 *                 (create, start, kill, exit, reap), task waits,
 *                 fault-endpoint settings and death notices (notice.c).
 *                 Off the IPC paths: an IPC takes it only when a cap may
 *                 move (a transfer slot or a receive slot is given), for
 *                 reply caps, or to free a death notice it received (after
 *                 the endpoint lock is dropped). Never held while user
 *                 code runs, while an mm cursor is held, or across a
 *                 context switch.
 *   30 endpoint   per endpoint (ep_lock): its queues and the IPC waits
 *                 through it; never two at once.
 *   40 cspace     task->cspace_lock: the slot fields a lookup reads
 *                 (cap_install and cap_delete write them under it, bumping
 *                 the slot's sequence count; an IPC transfer installs under
 *                 an endpoint lock), and the adding of CSpace chunks.
 *   50 fault      task->fault_lock: fault-endpoint settings (fault.c).
 *   60 rq         rq->lock, per-hart run queue; never two at once.
 *   70 asid, 80 frame_pool, 90 console: leaves outside the microkernel.
 * IPC reads endpoint caps with no lock at all (ep_cap_lock: a sequence
 * count per slot, checked again under the endpoint lock). No lock is held
 * across switch_context or sched_resume_on (sched.c asserts it in
 * lock-check builds).
 */
#ifndef KERNEL_MK_H
#define KERNEL_MK_H

#include <stdint.h>
#include <stddef.h>
#include <stdbool.h>
#include <patina/errno.h>
#include <patina/cap.h>
#include <patina/syscall.h>
#include <cortenmm/mm.h>
#include <cortenmm/cursor.h>
#include "arch.h"
#include "trapentry.h"
#include "hartmask.h"
#include "spinlock.h"
#include "cpu.h"

#define MAX_THREADS   4096  /* structs only: a live thread's stack is taken on demand */
#define MAX_TASKS     64
#define MAX_ENDPOINTS 256
#define KTHREADS_RESERVED 8   /* thread structs init's quota leaves to kernel threads */
#define THREAD_KSTACK (THREAD_KSTACK_FRAMES * 4096)   /* THREAD_KSTACK_FRAMES: patina/syscall.h */
_Static_assert(MAX_THREADS - 1 <= QUOTA_THREADS_MAX, "a thread quota word holds every thread");
/* Priority levels, higher runs first. User threads get 0..PRIO_USER_MAX,
 * each no higher than its task's maximum controlled priority (mcp,
 * carved from the parent's); kernel threads (the reaper) run above every
 * user level, so no user thread can starve them. */
#define PRIO_KERNEL   (PRIO_USER_MAX + 1)     /* PRIO_USER_MAX: patina/syscall.h */
#define NPRIO         (PRIO_KERNEL + 1)
#define PRIO_DEFAULT  1

extern spinlock_t mk_lock;

/* struct kctx (a saved kernel context) and struct uframe (the top of a
 * thread's kernel stack: its user registers, member tf) are the arch's
 * (kernel/arch.h): held here, their fields are not named. */

enum tstate { T_FREE, T_RUNNABLE, T_RUNNING, T_BLOCKED, T_DEAD };
/* Why a T_BLOCKED thread waits. B_SEND, B_RECV and B_REPLY are IPC waits,
 * owned by the endpoint th->ep (see ipc.c); B_WAIT (task wait) and B_BORN
 * (allocated, not started yet) are owned by mk_lock; B_PAGE (an asynchronous page fault waits for its
 * page) by the page-wait lock (pagewait.c). */
enum tblock { B_NONE, B_SEND, B_RECV, B_REPLY, B_WAIT, B_BORN, B_PAGE };

struct task;
struct endpoint;
struct pw_page;

struct thread {
	struct kctx ctx;            /* first: switch_context's pointer */
	volatile int state;         /* enum tstate */
	int block;                  /* enum tblock while T_BLOCKED */
	volatile int on_cpu;        /* 0: no hart on its stack; 1: a hart runs on it; 2: that, and it was
	                             * made runnable meanwhile (the hart leaving it queues it). Never
	                             * set while queued (sched.c); non-zero: not reusable yet */
	int killed;                 /* exit at the next return to user */
	int ctx_fresh;              /* 1: ctx is stale, the thread's continuation is only its return
	                             * to user (a handoff left it): switch_to starts it afresh */
	int prio;                   /* 0..NPRIO-1, higher runs first */
	int affinity;               /* logical hart index, -1 = any */
	int last_cpu;
	int refs;                   /* kernel-internal holds + 1 while alive (caps do not pin it) */
	int id;
	uint32_t gen;               /* bumped at each allocation: caps name (thread, gen) */
	uint32_t task_gen;          /* gen of task when allocated (thread-quota refund) */
	uint64_t call_seq;          /* bumped at each call it makes, never reset (not even when the slot
	                             * is reused): (thread, call_seq) names one call for ever */
	struct task *task;          /* NULL: kernel thread */
	struct thread *rq_next;     /* run queue / endpoint queue link */
	struct uframe *uf;          /* user registers (top of kstack) */
	uint8_t *kstack;
	void (*kfn)(void *);        /* kernel threads: body */
	void *karg;
	/* IPC. ep is not NULL exactly while the thread is in an IPC wait
	 * (B_SEND, B_RECV, B_REPLY) through that endpoint, whose lock guards
	 * the wait: its state, block, ep, queue link and result registers
	 * change only under it. */
	struct endpoint *ep;
	uint64_t msg[IPC_WORDS];
	uint64_t badge;             /* badge of the cap it sent through */
	long ep_slot;               /* blocked in IPC: the endpoint cap slot it used (deleting that cap fails the wait) */
	long xfer_slot;             /* sender: cap slot to transfer, or -1 */
	long recv_slot;             /* receiver: slot for an arriving cap */
	int got_cap;
	struct thread *caller;      /* receiver: whom to reply to, the call being caller_seq */
	uint64_t caller_seq;
	int is_call;                /* blocked sender expects a reply */
	int reply_saved;            /* B_REPLY: a reply cap (not a server's caller field) answers it */
	struct task *wait_task;     /* B_WAIT: the task it waits for */
	struct thread *task_next;   /* task's thread list */
	/* fault endpoint (fault.c): its own setting (a kernel-held reference on
	 * the endpoint, with the badge of the cap it was set from), and the
	 * page-fault call in progress: while in_fault is IN_FAULT_CALL, IPC
	 * results and reply words land in fault_result/fault_reply, not in
	 * the user registers. Any non-zero in_fault also means the thread
	 * resumes through its own kernel context, never by a handoff
	 * (ipc_user_resumable): IN_TIMED_WAIT marks an IPC system call with a
	 * deadline, which that context ends (ipc.c, timed IPC). */
	struct endpoint *fault_ep;
	uint64_t fault_badge;
	int in_fault;
	uint64_t deadline;          /* IN_TIMED_WAIT: time counter value its wait ends at */
	long fault_result;
	uint64_t fault_reply[IPC_WORDS];
	int fault_async;            /* its own setting is asynchronous (FAULT_EP_ASYNC) */
	/* asynchronous page fault (pagewait.c, under its lock): the page it
	 * waits on, the next thread waiting there, the verdict it woke with */
	struct pw_page *pw;
	struct thread *pw_next;
	int pw_verdict;
	/* user-access fault recovery */
	int in_uaccess;
	int quota_refused;          /* a PT-frame charge of its transaction hit the frame quota */
	uint64_t ticks;             /* timer ticks while it ran (accounting) */
};

enum task_state { TASK_FREE, TASK_ALIVE, TASK_DYING, TASK_DEAD };

/* CSpace chunks (abi/patina/cap.h): CCHUNK_SLOTS caps and their sequence
 * counts in one 4 KiB frame. */
#define CCHUNK_SHIFT   5
#define CCHUNK_SLOTS   (1 << CCHUNK_SHIFT)
#define CSPACE_NCHUNKS ((CSPACE_MAX_SLOTS - CSPACE_FIXED_SLOTS) / CCHUNK_SLOTS)
_Static_assert(CCHUNK_SLOTS == CSPACE_CHUNK_SLOTS, "chunk size");
_Static_assert(CSPACE_FIXED_SLOTS % CCHUNK_SLOTS == 0 && CSPACE_MAX_SLOTS % CCHUNK_SLOTS == 0,
	       "slot ranges in whole chunks");

struct cap {
	uint16_t type;              /* enum cap_type */
	uint16_t rights;
	uint32_t slot;              /* its slot number in owner's CSpace (fixed, like owner) */
	uint64_t badge;
	uint64_t lo, hi;            /* region range [lo, hi) */
	uint32_t gen;               /* CAP_THREAD, CAP_REPLY: the thread's gen when the cap was made */
	uint64_t seq;               /* CAP_REPLY: the call it answers (thread's call_seq) */
	union {
		struct task *task;      /* CAP_TASK, CAP_REGION */
		struct thread *thread;
		struct endpoint *ep;
		uint64_t pa;            /* CAP_FRAME */
		uint32_t dev;           /* CAP_MMIO, CAP_IRQ: the device's index (kernel/devices.h) */
		struct mobj *mobj;      /* CAP_MOBJ (mobj.h) */
	} o;
	struct task *owner;         /* whose CSpace holds it */
	struct cap *parent, *child, *next, *prev; /* derivation tree */
};

struct cchunk {
	struct cap cap[CCHUNK_SLOTS];
	uint32_t seq[CCHUNK_SLOTS];
};
_Static_assert(sizeof(struct cchunk) <= 4096, "a CSpace chunk is one frame");

struct task {
	int state;                  /* enum task_state */
	int id;
	uint32_t gen;               /* bumped at each allocation of the slot */
	int reap_queued;
	int refs;                   /* caps naming it (task + region caps) */
	int nthreads;               /* threads not yet dead */
	int exit_status;
	int is_init;
	struct task *parent;        /* charged for our quota; NULL for init */
	uint32_t parent_gen;        /* parent's gen when it became our parent */
	struct mm_as as;
	int as_live;                /* as exists (created, not yet destroyed) */
	uint16_t asid;
	/* The token selecting as (arch_as_token; fixed while as_live): no
	 * recompute per switch. */
	uint64_t as_token;
	struct hartmask hart_mask;  /* logical harts with this AS loaded now (TLB shootdown) */
	uint32_t tlb_gen;           /* moves on at each flush of this AS (uvm.c) */
	uint32_t icache_gen;        /* moves on when code may have changed (uvm_icache_sync) */
	uint32_t as_gen;            /* moves on after each move of tlb_gen or icache_gen (uvm.c) */
	struct thread *threads;
	/* The CSpace (cap.c): slots below CSPACE_FIXED_SLOTS here, the others
	 * in chunks (struct cchunk) added as they are first needed. */
	struct cap cspace[CSPACE_FIXED_SLOTS];
	/* Per-slot sequence counts, odd while cap_install or cap_delete writes
	 * the slot: IPC reads an endpoint cap with no lock (ep_cap_lock). */
	uint32_t cseq[CSPACE_FIXED_SLOTS];
	/* Chunk k holds slots CSPACE_FIXED_SLOTS + k * CSPACE_CHUNK_SLOTS on.
	 * While the task lives a pointer only goes from NULL to a chunk
	 * (stored with release order under cspace_lock, read with acquire
	 * order and no lock), so a reader with no lock never sees one go;
	 * the reaper frees them (cspace_clear) once no thread of the task
	 * runs. cextent: the end of the highest chunk (CSPACE_FIXED_SLOTS
	 * with none), also only growing. */
	struct cchunk *cchunk[CSPACE_NCHUNKS];
	long cextent;
	/* Guards what a lookup reads of a slot (type, rights, range, object):
	 * cap_install and cap_delete write those under it, so a region
	 * transaction can decode its caps without mk_lock. A leaf lock: taken
	 * inside mk_lock or an endpoint lock (an IPC transfer installs a
	 * cap), never the other way round. */
	spinlock_t cspace_lock;
	/* Quotas, carved from the parent's at creation (see task.c). Frames:
	 * data frames charged to us (frames_used, which includes the per-hart
	 * reserves taken from it, task.c) + PT pages and metadata arrays
	 * (as.nr_frames) + frames a transaction has reserved for PT pages
	 * (pt_resv). Objects: thread structs, endpoints, child tasks (a
	 * child's own carve counts in our *_used until it is reaped). */
	long frame_quota, frames_used, pt_resv;
	int thread_quota, threads_used;
	int ep_quota, eps_used;
	int task_quota, tasks_used;
	int mcp;                    /* highest priority a thread of ours may have (<= parent's) */
	struct thread *waiters;     /* threads in SYS_TASK_WAIT on us */
	int as_users;               /* transactions from other tasks in flight */
	int tearing_down;           /* reaper is destroying the AS: no hart runs it */
	int reap_waiting;           /* the reaper sleeps until its threads are off every hart
	                             * and as_users is 0; whoever ends either wakes it */
	/* Guards the fault-endpoint settings of the task and of its threads
	 * (fault_ep, fault_badge): set under mk_lock and this, read by a
	 * faulting thread under this alone. Taken with no endpoint lock
	 * held, nothing is taken under it. */
	spinlock_t fault_lock;
	struct endpoint *fault_ep;  /* task-wide fault endpoint (kernel-held reference), badge */
	uint64_t fault_badge;
	int fault_async;            /* the task-wide setting is asynchronous */
	struct pw_page *pw_pages;   /* pages its threads wait on (pagewait.c, its lock) */
	unsigned pw_count;          /* how many: read with no lock by a commit */
	struct task *reap_next;
	struct notice *notices;     /* death notices registered on us, not sent yet (notice.c; mk_lock) */
};

/* The endpoint lock (ep_lock) guards its queues and every IPC wait
 * through it (struct thread's ep). charged is mk_lock's; refs is atomic,
 * and only a drop under mk_lock may take it to 0 (ep_put, ep_put_nolock);
 * recv_caps is atomic. A freed endpoint keeps its lock word: a stale
 * th->ep or a cap read with no lock may still take it, then sees the
 * change and lets go. */
struct endpoint {
	uint32_t lock;              /* test-and-set: held for a few dozen instructions */
	int refs;                   /* caps naming it; freed at 0 */
	int id;
	struct thread *senders, *senders_tail;   /* blocked in send/call */
	struct thread *receivers, *receivers_tail;
	/* Death notices sent here and not received yet (notice.c): a receive
	 * takes them before any sender; never queued while a receiver waits. */
	struct notice *notices, *notices_tail;
	int recv_caps;              /* caps with R_RECV naming it: at 0 nobody can receive, sends fail E_DEAD */
	struct task *charged;       /* whose object quota pays for it */
	uint32_t charged_gen;       /* ... if that task slot still holds it */
};

/* A message the kernel sends (notice.c), received like a SYS_SEND with
 * nothing to reply to. Three kinds: a death notice, one SYS_TASK_NOTIFY
 * registration and the message it becomes (from the notice pool; mk_lock's
 * fields); an interrupt message, the one message of a bound interrupt
 * line (kernel/mk/irq.c: part of the line, the line lock's fields); and a
 * page-fault message, the one message of a waited-on page (pagewait.c:
 * part of its entry, the page-wait lock's fields). Each is its endpoint's while queued there (that endpoint's lock) and a
 * receiver's once it took it (N_TAKEN), until notice_received. */
enum notice_state { N_FREE, N_REGISTERED, N_QUEUED, N_TAKEN };
enum notice_kind { NK_DEATH, NK_IRQ, NK_FAULT };
struct notice {
	int state;                  /* enum notice_state; NK_IRQ: N_REGISTERED when not queued or taken */
	int kind;                   /* enum notice_kind */
	struct task *watched;       /* N_REGISTERED: whose death it announces */
	struct task *watcher;       /* who registered it (with watcher_gen: the pair's key) */
	uint32_t watcher_gen;
	struct endpoint *ep;        /* N_REGISTERED: where it goes (no reference: e's death frees it) */
	uint64_t badge;
	uint64_t msg[IPC_WORDS];    /* filled in at the death */
	struct task *charged;       /* whose endpoint quota pays for it */
	uint32_t charged_gen;       /* ... if that task slot still holds it */
	struct notice *next;        /* watched's list, or the endpoint's queue */
};

/* Per-hart scheduler state. */
struct rq {
	spinlock_t lock;
	struct thread *head[NPRIO], *tail[NPRIO];
	uint32_t levels;            /* bit p: head[p] is not empty (read without the lock) */
	int len;
	volatile int idle;          /* hart is (about to be) in wfi */
	struct thread *cur;
	struct thread *idle_thread;
	uint16_t cur_asid;
	uint64_t cur_token;         /* the address-space token in effect here */
	/* Bit i: this hart has loaded task i's address space since it last
	 * ran on the kernel's (idle, kernel threads); its bit in that task's
	 * hart_mask is set. Loading the kernel's clears them all. */
	uint64_t loaded;
	/* as_ready[t->id]: t's as_gen when this hart last
	 * activated t's address space in full (sched_activate: hart_mask bit,
	 * ASID flush check, fence.i), 0 when it has not since t was created or
	 * when t has no ASID. While it is current, switching to t is a token
	 * switch (sched_as_ready). */
	uint32_t as_ready[MAX_TASKS];
	/* Switches made by sched_switch: the idle loop's look for progress.
	 * IPC handoffs are not counted; none starts from the idle thread. */
	uint64_t switches;
};
/* struct thread's on_cpu (sched.c). */
#define ONCPU_OFF     0
#define ONCPU_ON      1
#define ONCPU_REQUEUE 2

extern struct rq *rqs;      /* harts_max of them (sched_init_harts) */

static inline struct rq *this_rq(void) { return this_cpu()->rq; }   /* == &rqs[index] */
static inline struct thread *cur_thread(void) { return this_rq()->cur; }

/* Needs the lock of the endpoint next waits through; irqs off; next is
 * T_BLOCKED and about to be made runnable by the caller without being
 * queued. Whether IPC may switch to next on
 * this hart at once (the current thread blocks): its affinity allows this
 * hart, no hart is still on its stack (it blocked elsewhere and that hart
 * has not switched away yet), and this hart's queue holds no thread of a
 * higher level (a direct switch to a lower-priority server would run it
 * ahead of them). While next waits, under that lock nobody else can wake
 * it or put a hart on it, so on_cpu 0 seen here stays 0 until we switch
 * to it. The queue's levels are looked at without its lock: a thread
 * queued by another hart a moment later counts as queued after the
 * decision. On refusal the caller
 * wakes next normally (sched_wake defers the queueing to the hart leaving
 * it when one is still on it). */
static inline __attribute__((always_inline)) int sched_can_direct(struct rq *rq, struct thread *next)
{
	if (__atomic_load_n(&next->on_cpu, __ATOMIC_ACQUIRE) != ONCPU_OFF)
		return 0;
	if (next->affinity >= 0 && next->affinity != (int)this_cpu()->index)
		return 0;
	return !(__atomic_load_n(&rq->levels, __ATOMIC_RELAXED) >> (next->prio + 1));
}

/* --- thread.c --- */
struct thread *thread_alloc(struct task *t, int *err); /* mk_lock held; NULL + *err */
int thread_start_user(struct thread *th, uint64_t pc, uint64_t sp, uint64_t arg);
/* As thread_start_user with the first four argument registers set. */
int thread_start_user_args(struct thread *th, uint64_t pc, uint64_t sp, const uint64_t args[4]);
struct thread *kthread_create(void (*fn)(void *), void *arg, int affinity);
void thread_put(struct thread *th);                 /* mk_lock held */
void thread_exit(void) __attribute__((noreturn));
void thread_kill_locked(struct thread *th);         /* mk_lock held */
void thread_first_run(struct kctx *prev);
extern struct thread threads[MAX_THREADS];

/* --- sched.c --- */
void sched_wake(struct thread *th);                 /* make runnable (state set by caller); queued now, or by its hart once it leaves */
void sched_yield(void);
void sched_block(void);                             /* state already T_BLOCKED; irqs off */
void sched_direct(struct thread *next);             /* irqs off; switch straight to next (runnable, not queued) */
void sched_switch(void);                            /* irqs off */
void sched_idle_loop(void) __attribute__((noreturn));
void sched_finish_switch(struct kctx *prev);
void sched_activate(struct thread *next);
void sched_unload_all(struct rq *rq);                /* irqs off: see sched_as_write */
/* Needs: irqs off; t's bit in t->hart_mask set and its TLB state settled
 * here (sched_activate, sched_as_ready), or t NULL for the kernel's
 * address space. Put token (t's) in effect here. Loading the kernel's
 * address space (the hart goes idle or runs a kernel thread) takes this
 * hart out of the hart_mask of every task it loaded since it last did
 * (sched_unload_all): flushes of those stop targeting it. A user address
 * space left for another keeps its bit until then, so a hart passing IPCs
 * between tasks needs no atomic per switch; that bit only makes flushes
 * of that space reach this hart too. */
static inline void sched_as_write(struct rq *rq, struct task *t, uint64_t token)
{
	arch_as_switch(token);
	rq->cur_token = token;
	if (!t && rq->loaded)
		sched_unload_all(rq);
}
int sched_init_harts(void);                         /* boot, before harts start: run queues, idle threads */


/* --- uvm.c: user address spaces through the mm core --- */
extern const struct mm_platform uvm_platform;
int uvm_init(void);                                 /* boot, once */
int uvm_as_create(struct task *t);
void uvm_as_destroy(struct task *t);
uint32_t uvm_asid_activate(struct task *t);          /* irqs off; returns the as_gen synchronised with */
void uvm_icache_sync(struct task *t);               /* mk_lock NOT held */
int uvm_fault(struct task *t, uint64_t va, int write, int exec, uint64_t *status);
int uvm_frame_alloc(struct task *charge, uint64_t *pa);   /* zeroed, refs = 1 */
/* 2^order zeroed frames in one run aligned to its size, each refs = 1 and
 * charged to `charge` (-E_QUOTA), or -E_NOMEM (no such run free). */
int uvm_frame_alloc_run(struct task *charge, unsigned order, uint64_t *pa);
void uvm_frame_get(uint64_t pa);
void uvm_frame_put(uint64_t pa);
int uvm_frame_valid(uint64_t pa);
long uvm_frames_in_use(void);
unsigned long uvm_pooled_frames(void);            /* zeroed PT frames parked in per-hart pools */
extern uint64_t user_top;                           /* first address above user space */

/* --- uaccess.c --- */
int copy_from_user(void *dst, uint64_t usrc, size_t n);
int copy_to_user(uint64_t udst, const void *src, size_t n);
int uaccess_fixup(struct trap_frame *tf, uint64_t addr, unsigned kind, int page_fault);
extern volatile unsigned long uaccess_faults_fixed;

/* --- task.c --- */
struct task *task_alloc(struct task *parent, long frame_quota);  /* mk_lock NOT held */
long sys_task_create(struct task *t, long self, long dst, long quota);
void task_exit(struct task *t, int status);          /* mk_lock held: kill all threads */
void task_put(struct task *t);                       /* mk_lock held */
unsigned long cspace_decode_lock(struct task *t);      /* region decode: t's CSpace lock (see cap.c) */
void cspace_decode_unlock(struct task *t, unsigned long f);
int task_txn_try_begin(struct task *t);              /* mk_lock NOT held: a transaction on t's AS starts (0), or t is not alive (-E_DEAD) */
void task_txn_end(struct task *t);                   /* mk_lock NOT held: it ended */
void task_thread_left(struct thread *th);            /* mk_lock held: dead th is off every hart */
void task_wait_cancel(struct thread *th);            /* mk_lock held: th blocked in B_WAIT leaves its waiter list */
void reaper_start(void);
/* A task's quotas as asked for at spawn (abi QUOTA() unpacked). */
struct quota { long frames; int threads, eps, tasks, mcp; };
/* A spawned task's first thread, held until task_start starts it. */
struct spawned { struct thread *th; uint64_t entry, arg, sp, argc, argv, module; };
/* A spawn's arguments and handed-over caps, checked (spawn_args.c). */
struct spawn_args {
	char buf[SPAWN_ARGS_MAX];
	size_t len;
	int argc;
	long kernel, console;     /* caller's slots, or SLOT_NONE */
};
int spawn_args_fetch(uint64_t uext, struct spawn_args *a);
int spawn_args_place(struct task *t, const struct spawn_args *a, uint64_t *sp, uint64_t *argv);
/* A quota word (abi QUOTA()) of a child of t as a struct quota: 0, or
 * -E_INVAL (stray bits) or -E_PERM (an mcp above t's). */
int quota_decode(const struct task *t, long quota, struct quota *q);
int task_spawn_module(struct task *parent, int module, uint64_t arg, const struct spawn_args *args,
		      const struct quota *q, int is_init, struct task **out, struct spawned *sp);
int task_start(struct spawned *sp);
int quota_charge_frames(struct task *t, long n);      /* -E_QUOTA if n more frames do not fit */
void quota_release_frames(struct task *t, long n);
long quota_frames_used(struct task *t);               /* exact: less the per-hart reserves */
void quota_reclaim(struct task *t);                   /* every hart's reserve back to the shared count */
int quota_charge_locked(struct task *t, long n);      /* under mk_lock: no shootdown wait */
int quota_charge_pt(struct task *t, long n);          /* PT frames: shared count only, see task.c */
void quota_release_pt(struct task *t, long n);
int quota_init(void);                                 /* the per-hart reserves; 0 or -E_NOMEM */
extern struct task tasks[MAX_TASKS];

/* --- cap.c (mk_lock held for all, unless said otherwise) --- */
struct cap *cap_lookup(struct task *t, long slot, int type, unsigned rights, int *err);
int cap_slot_check(struct task *t, long slot);        /* mk_lock or t's cspace_lock: 0, -E_BADCAP, -E_EXIST */
struct cap *cap_slot_free(struct task *t, long slot, int *err);  /* check, then grow: the slot to fill */
int cspace_prepare(struct task *t, long slot, struct cchunk **spare);  /* any lock or none */
void cspace_unprepare(struct task *t, struct cchunk *spare);           /* any lock or none */
struct cap *cspace_commit(struct task *t, long slot, struct cchunk *spare);  /* t's cspace_lock NOT held */
int cspace_grow(struct task *t, long slot);           /* t's cspace_lock NOT held */
long cspace_extent(const struct task *t);             /* any lock or none */
void cspace_init(struct task *t);                     /* a new task's empty CSpace */
int cspace_self_refs(const struct task *t);           /* caps of t naming t (task, region) */
void cap_install(struct cap *dst, const struct cap *proto, struct cap *parent);
void cap_delete(struct cap *c);
void cap_revoke(struct cap *c);
void cspace_clear(struct task *t);
void cap_get_obj(const struct cap *c);
int cap_derive_ok(const struct cap *src, unsigned rights, uint64_t lo, uint64_t hi);
struct thread *cap_thread(const struct cap *c);       /* live thread of a thread cap, or NULL */
int cap_transferable(const struct cap *c);
unsigned long caps_live(void);

/* --- authority.c: the revoke barrier (before mk_lock) --- */
void auth_read_lock(void);
void auth_read_unlock(void);
void auth_write_lock(void);
void auth_write_unlock(void);
int auth_init_harts(void);                          /* boot, before harts start: per-hart reader counts */

/* --- ipc.c --- */
/* Endpoint lock: test-and-set, interrupts already off (IPC runs with them
 * off), never two held together; class "endpoint" for the lock-order
 * checker and the lock statistics. Cheaper than a ticket lock on the IPC
 * fast path, and held for a few dozen instructions. */
static inline __attribute__((always_inline)) void ep_lock(struct endpoint *e)
{
	lockcheck_acquire(&lock_class_endpoint, e);
	uint32_t waited = 0;      /* lockstat_count's: 0, or 1 + the spins */
	while (__atomic_exchange_n(&e->lock, 1, __ATOMIC_ACQUIRE)) {
		waited += !waited;
		while (__atomic_load_n(&e->lock, __ATOMIC_RELAXED)) {
			cpu_relax();
			waited++;
		}
	}
	lockstat_count_irqoff(LOCK_CLASS_IDX_endpoint, waited);   /* irqs are off */
}
static inline __attribute__((always_inline)) void ep_unlock(struct endpoint *e)
{
	lockcheck_release(e);
	__atomic_store_n(&e->lock, 0, __ATOMIC_RELEASE);
}
/* Needs e locked, me the running thread; b an IPC wait (B_SEND, B_RECV,
 * B_REPLY). me waits on e from now on: 0. Or me was killed: -E_DEAD with
 * nothing changed. The exchange orders the wait before the look at
 * killed, and thread_kill_locked orders killed before its look at ep: one
 * of the two sees the other, so a killed thread never starts a wait its
 * killer missed. */
static inline __attribute__((always_inline)) int ipc_block(struct thread *me, struct endpoint *e, int b)
{
	me->block = b;
	me->ep = e;
	__atomic_exchange_n(&me->state, T_BLOCKED, __ATOMIC_SEQ_CST);
	if (!__atomic_load_n(&me->killed, __ATOMIC_RELAXED))
		return 0;
	me->state = T_RUNNING;
	me->ep = NULL;
	me->block = B_NONE;
	return -E_DEAD;
}
/* An endpoint cap read with no lock (ipc.c ep_cap_lock, ipc_fast.c). */
struct ep_snap {
	const uint32_t *sq;         /* the slot's sequence count */
	uint32_t seq;               /* its value at the read */
	unsigned type, rights;
	uint64_t badge;
	struct endpoint *e;         /* meaningful when type is CAP_ENDPOINT */
};
/* Needs: slot >= CSPACE_FIXED_SLOTS and < CSPACE_MAX_SLOTS; any lock or
 * none. The chunk of t holding slot, or NULL while it has not been added
 * (the slot is empty). The acquire pairs with the release that published
 * it (cap.c): its contents are seen as initialised. */
static inline __attribute__((always_inline))
struct cchunk *cspace_chunk(const struct task *t, unsigned long slot)
{
	return __atomic_load_n(&t->cchunk[(slot - CSPACE_FIXED_SLOTS) >> CCHUNK_SHIFT],
			       __ATOMIC_ACQUIRE);
}
/* A sequence count that stays 0: the one of a slot whose chunk is not
 * there (cap.c). */
extern const uint32_t cseq_absent;
/* Read t's cap in slot between two looks at the slot's sequence count
 * (cap.c slot_write_*): 0 when both were the same even value, so *s is
 * one cap as installed (of any type; CAP_NULL for a slot in a chunk not
 * added yet or out of range); -1 when the slot was being written or
 * changed meanwhile (read again or give up). A fixed slot costs the one
 * compare a range check of the fixed table did. */
static inline __attribute__((always_inline))
int ep_snap_read(const struct task *t, unsigned long slot, struct ep_snap *s)
{
	const struct cap *c;
	const uint32_t *sq;
	if (__builtin_expect(slot < CSPACE_FIXED_SLOTS, 1)) {
		c = &t->cspace[slot];
		sq = &t->cseq[slot];
	} else {
		const struct cchunk *k = slot < CSPACE_MAX_SLOTS ? cspace_chunk(t, slot) : NULL;
		if (!k) {
			s->sq = &cseq_absent;
			s->seq = 0;
			s->type = CAP_NULL;
			s->rights = 0;
			s->badge = 0;
			s->e = NULL;
			return 0;
		}
		unsigned long i = (slot - CSPACE_FIXED_SLOTS) & (CCHUNK_SLOTS - 1);
		c = &k->cap[i];
		sq = &k->seq[i];
	}
	s->sq = sq;
	s->seq = __atomic_load_n(sq, __ATOMIC_ACQUIRE);
	s->type = c->type;
	s->rights = c->rights;
	s->badge = c->badge;
	s->e = c->o.ep;
	__atomic_thread_fence(__ATOMIC_ACQUIRE);
	return (s->seq & 1) || __atomic_load_n(sq, __ATOMIC_RELAXED) != s->seq ? -1 : 0;
}
/* Needs s->e locked (taken after ep_snap_read). Whether the slot is still
 * as read: then a delete of that cap comes after us (it takes the
 * endpoint lock after changing the slot) and finds whatever we leave. */
static inline __attribute__((always_inline))
int ep_snap_holds(const struct ep_snap *s)
{
	return __atomic_load_n(s->sq, __ATOMIC_RELAXED) == s->seq;
}
/* Needs e locked. Whether thread c waits through e for the reply to its
 * call `seq` (the wait's endpoint stays the same for the whole call). */
static inline __attribute__((always_inline))
int ipc_reply_waits(const struct thread *c, const struct endpoint *e, uint64_t seq)
{
	return c->ep == e && c->block == B_REPLY && c->call_seq == seq;
}
struct endpoint *ep_alloc(struct task *charge);       /* mk_lock held */
void ep_put(struct endpoint *e);                      /* mk_lock held */
void ep_put_nolock(struct endpoint *e);               /* mk_lock NOT held: ep_put, taking mk_lock only for the last reference */
void ipc_cancel(struct thread *me);                   /* mk_lock held; me exits: fail the call it was answering */
void ipc_kill_wait(struct thread *th);                /* mk_lock held, th->killed set: end its IPC wait */
void ipc_reply_dropped(const struct cap *rc);         /* mk_lock held: a reply cap went away */
void ep_recharge(struct task *from, struct task *to); /* mk_lock held: endpoints paid by from */
void ipc_ep_cap_gone(const struct cap *c, long slot); /* mk_lock held: c, in slot of c->owner, was just deleted */
void ipc_ep_cap_added(const struct cap *c);           /* mk_lock held: c was just installed */
long ipc_fault_call(struct thread *me, struct endpoint *e, uint64_t badge, const uint64_t *w); /* irqs off, no lock held; returns after the call */
long sys_ipc(struct uframe *uf, long nr);
/* th->in_fault values (struct thread). */
#define IN_FAULT_CALL 1
#define IN_TIMED_WAIT 2
/* Timer tick, any hart, interrupts off, no lock held: end every timed
 * IPC wait whose deadline has passed with E_TIMEDOUT (only hart 0 scans;
 * nothing to do unless a timed wait is in progress). */
void ipc_timeouts_tick(uint64_t now);
/* From user_vector, irqs off, with the caller's a0, a5 and frame
 * (ipc_fast.c): { NULL, NULL } when not taken, else the threads to hand
 * the hart over between (user_vector does it). */
struct ipc_handoff { struct thread *prev, *next; };
struct ipc_handoff ipc_fast_call(uint64_t slot, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
				 uint64_t extra, struct uframe *uf);
struct ipc_handoff ipc_fast_reply_recv(uint64_t slot, uint64_t a1, uint64_t a2, uint64_t a3,
				       uint64_t a4, uint64_t extra, struct uframe *uf);
/* The same fast path where the arch's entry does not take it
 * (ARCH_IPC_FAST_IN_ENTRY 0): from utrap_syscall, irqs off, uf the
 * current thread's system call. Returns only when it did not take the
 * call (nothing changed); else it hands the hart to the partner. */
void ipc_fast_syscall(struct uframe *uf);
/* Whether th's kernel continuation, while it is blocked in IPC, is just
 * the return to user with its saved registers (an IPC system call, not a
 * page-fault call and not a kernel thread): then it can be resumed by
 * a handoff (sched_handoff) without its own kernel context. */
static inline int ipc_user_resumable(const struct thread *th)
{
	return th->task && !th->in_fault;
}
/* The same as its task (fixed while th waits), or NULL when th is not
 * resumable so: one load of th->task for both uses. */
static inline __attribute__((always_inline)) struct task *ipc_user_task(const struct thread *th)
{
	struct task *t = th->task;
	return t && !th->in_fault ? t : NULL;
}
#define RET_KEEP (-1000000L)   /* syscall result already written to the frame */
unsigned long eps_live(void);

/* --- region.c --- */
long sys_region_txn(struct task *t, long slot, uint64_t lo, uint64_t hi, uint64_t uops, long n);
long sys_region_bitmap(struct task *t, long slot, uint64_t lo, uint64_t hi, uint64_t ubuf, long flags);
long region_txn(struct task *t, long slot, uint64_t lo, uint64_t hi, struct region_op *ops, long n);

/* --- fault.c: fault endpoints (pagers) --- */
long sys_fault_ep_set(struct task *t, long target, long ep, long flags);
long sys_fault_kill(struct task *t, long region, uint64_t va);
int fault_to_pager(uint64_t va, unsigned kind, uint64_t status); /* 0: retry the access; -E_FAULT: no pager; else kill */
/* The current thread's fault call on e (its reference, dropped here) with
 * badge and the words w: 0 resumed (or killed meanwhile), -E_DEAD, -E_INVAL
 * (FAULT_KILL or garbage). mk_lock NOT held. */
int fault_call(struct endpoint *e, uint64_t badge, const uint64_t *w);
unsigned fault_access(unsigned trap_kind);           /* TRAP_*_FAULT -> FA_* */
uint64_t fault_status_word(const struct mm_info *info);   /* pager.h's status word of a page */
void fault_ep_drop_thread(struct thread *th);        /* mk_lock held */
void fault_ep_drop_task(struct task *t);             /* mk_lock held */

/* --- notice.c: death notices (SYS_TASK_NOTIFY) --- */
long sys_task_notify(struct task *t, long tslot, long eslot);
void notice_task_dead(struct task *t);               /* mk_lock held; t just became TASK_DEAD: send its notices */
void notice_free(struct notice *n);                  /* mk_lock held; n on no list: back to the pool, refunded */
void notice_ep_gone(struct endpoint *e, struct notice *q); /* mk_lock held; nobody can receive on e: free q and e's registrations */
void notice_recharge(struct task *from, struct task *to);  /* mk_lock held: notices paid by from */
unsigned long notices_live(void);
void notice_received(struct notice *n);              /* irqs off, no lock held: a receive took n (N_TAKEN) */
int ipc_notice_post(struct endpoint *e, struct notice *n); /* n's lock held: 1 queued on e, 0 delivered or dropped */
int ipc_notice_unqueue(struct endpoint *e, struct notice *n); /* n's lock held: off e's queue if it is there (0: queued elsewhere) */
struct notice *ipc_notice_take(struct endpoint *e);  /* e locked, a notice queued: the first, N_TAKEN */

/* --- irq.c: interrupt lines bound to endpoints (SYS_IRQ_BIND, SYS_IRQ_ACK) --- */
int irq_init(void);                                  /* boot, after irqchip_init: 0 or -E_NOMEM */
long sys_irq_bind(struct task *t, long islot, long eslot);
long sys_irq_ack(struct task *t, long islot);
int irq_bind(uint32_t line, struct endpoint *e, uint64_t badge, struct task *binder); /* mk_lock held */
int irq_unbind(uint32_t line);                       /* mk_lock held: 0 or -E_NOENT */
int irq_ack(uint32_t line);                          /* mk_lock held: 0 or -E_AGAIN */
void irq_msg_received(struct notice *n);             /* as notice_received, n an NK_IRQ */
void irq_ep_gone(struct endpoint *e);                /* mk_lock held; nobody can receive on e: end its bindings */
void irq_task_gone(struct task *t);                  /* mk_lock held; t is being reaped: end its bindings */
unsigned long irq_unbound_count(void);               /* interrupts taken on lines with no binding */

/* --- device.c: devices for user-space drivers (patina/device.h) --- */
long sys_device_info(struct task *t, long kslot, uint64_t index, uint64_t uout);
long sys_device_caps(struct task *t, long kslot, uint64_t index, long mslot, long islot);
long sys_dma_addr(struct task *t, long mslot, long fslot);
/* Needs mk_lock; t is being reaped, its caps not deleted yet and its
 * address space still there. Every device t holds an MMIO cap with R_DMA
 * for is reset if the kernel knows how (DEVF_RESET), so it stops using
 * frames t named to it before they are freed. */
void device_task_dying(struct task *t);

/* --- clone.c: copy-on-write clone of a range (fork) --- */
long sys_region_clone(struct task *t, long src, long dst, uint64_t lo, uint64_t hi, uint64_t ustats);

/* --- elf.c --- */
int elf_load(struct task *t, const uint8_t *img, size_t len, uint64_t *entry);

/* --- modules.c --- */
struct boot_module { const char *name; const uint8_t *start; const uint8_t *end; };
extern const struct boot_module boot_modules[];
extern const int nboot_modules;

/* --- syscall.c / utrap.c --- */
void syscall_dispatch(struct uframe *uf);
/* Does t hold, in slot, a cap of this type with these rights? 0 or the
 * lookup's error; takes t's cspace_lock (mk_lock NOT needed). */
int has_cap(struct task *t, long slot, int type, unsigned rights);
extern void user_return(struct uframe *uf) __attribute__((noreturn));
extern struct kctx *switch_context(struct kctx *from, struct kctx *to);
/* uentry.S: move to the kernel stack whose top is uf (nothing on it in
 * use) and continue in sched_handoff_done(prev, next) there. */
extern void sched_resume_on(struct thread *prev, struct thread *next, struct uframe *uf)
	__attribute__((noreturn));
void sched_handoff_done(struct thread *prev, struct thread *next) __attribute__((noreturn));
void sched_handoff_requeue(struct thread *prev);

/* Whether switching this hart to t's address space needs nothing but a
 * token switch: this hart has activated t in full since t's code last
 * changed and since t's address space was last flushed (rq->as_ready
 * holds t->as_gen as read at that activation, before icache_gen and
 * tlb_gen, uvm_asid_activate; as_gen moves on after either of them, and
 * all three only grow). While as_ready[t] is not 0 this hart's bit in
 * t->hart_mask is set (sched_unload_all clears both), set by a
 * sequentially consistent RMW before these reads: a flush either targets
 * this hart or moves as_gen where we see it. The caller has seen that
 * t's token is not the one in effect (that needs no check at all). */
static inline __attribute__((always_inline)) int sched_as_ready(const struct rq *rq, const struct task *t)
{
	return rq->as_ready[t->id] == __atomic_load_n(&t->as_gen, __ATOMIC_ACQUIRE);
}

/* Needs the endpoint lock of next's wait, irqs off, rq this hart's; prev
 * is the current thread, blocked in IPC (ipc_block); next was blocked in an IPC system call
 * (ipc_user_resumable: its kernel stack holds nothing but its user
 * registers still to be restored), its result is written and
 * sched_can_direct(rq, next) said yes. The scheduler's half of a handoff
 * (next runs here without going back through either kernel context):
 * prev is left so that whoever runs it next returns it to user
 * (ctx_fresh: thread_trampoline on an empty stack), next becomes this hart's current
 * thread. The caller then puts next's address space in effect, drops
 * the endpoint lock and calls sched_resume_on(prev, next, next->uf), which moves the
 * hart to next's stack, where sched_handoff_done releases prev as after
 * any switch and returns next to user. */
static inline __attribute__((always_inline))
void sched_handoff(struct rq *rq, struct thread *prev, struct thread *next)
{
	prev->ctx_fresh = 1;         /* one store here; switch_to writes ctx if it needs it */
	next->on_cpu = ONCPU_ON;     /* volatile: one store (a relaxed atomic store is an AMO here) */
	next->state = T_RUNNING;
	next->last_cpu = (int)this_cpu()->index;
	rq->cur = next;
}

/* --- mkinit.c --- */
void mk_start(const char *command) __attribute__((noreturn));
extern const char *mk_command;
unsigned long threads_live(void);
/* One past the highest thread struct index ever allocated: every struct
 * from there on has never been used (scans of threads[] stop there; it
 * only grows, and the lowest free struct is taken first, so it stays near
 * the most threads ever alive at once). Any context. */
int threads_end(void);
unsigned long tasks_live(void);

#define USER_STACK_TOP   0x40000000UL
#define USER_STACK_PAGES 16

#endif
