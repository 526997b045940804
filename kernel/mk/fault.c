/* Fault endpoints: page faults the kernel cannot resolve become IPC calls
 * to a user-level pager (abi/patina/pager.h, docs/pagers.md).
 *
 * A task, and each thread on its own, may name a fault endpoint
 * (SYS_FAULT_EP_SET). The kernel keeps its own reference on that endpoint
 * and the badge of the cap it was set from, like a cap outside any CSpace:
 * it keeps the endpoint alive and is dropped when the setting is replaced
 * or cleared, when the thread exits (thread_exit) or when the task is
 * reaped (reap). A thread's own setting beats its task's.
 *
 * When uvm_fault gives up on a user page fault (-E_FAULT: invalid,
 * pager-managed, swapped, or the wrong permission) and the thread has a
 * fault endpoint, the faulting thread makes a call on it with the words
 * of pager.h, exactly as SYS_CALL would (same queues, same direct switch,
 * so the pager's RECV / REPLY_RECV / REPLY_SAVE + REPLY_CAP work as for
 * any call). Its user registers hold its interrupted state, so while the
 * call is in progress (thread->in_fault) the IPC code writes the call's
 * result and the reply words into thread->fault_result / fault_reply.
 * FAULT_RESUME retries the access; anything else, or E_DEAD (the pager
 * died, dropped the reply cap, or nobody can receive on the endpoint any
 * more), kills the task as an unhandled fault does (EXIT_TRAP(kind)).
 * The message speaks of the access (FA_*), never of the ISA's causes.
 *
 * An asynchronous setting (SYS_FAULT_EP_SETF with FAULT_EP_ASYNC) makes
 * no call: the thread sleeps on its page (pagewait.c), and the page's
 * one message goes on the endpoint; a commit that fixes the page wakes
 * it, SYS_FAULT_KILL refuses it. The setting's reference on the
 * endpoint is held for the sleep as for a call.
 *
 * The kernel never calls a pager from inside a system call: a user copy
 * that hits pager-managed or swapped memory fails with E_FAULT
 * (uaccess.c). */
#include "region.h"
#include "pagewait.h"
#include "arch.h"
#include <patina/pager.h>
#include "mobj.h"

/* Needs mk_lock. Replace a setting (*slot, *badge, *async: of t or of
 * one of its threads) with e, badge and async (e NULL: none); e's
 * reference is the caller's, now the setting's. The old setting's
 * reference is dropped after t's fault lock (ep_put takes the endpoint's
 * lock, which ranks lower). */
static void fault_ep_replace(struct task *t, struct endpoint **slot, uint64_t *badge, int *async,
			     struct endpoint *e, uint64_t b, int a)
{
	spin_lock(&t->fault_lock);
	struct endpoint *old = *slot;
	*slot = e;
	*badge = b;
	*async = a;
	spin_unlock(&t->fault_lock);
	if (old)
		ep_put(old);
}

/* Needs mk_lock. Drop th's own fault endpoint (thread exit). */
void fault_ep_drop_thread(struct thread *th)
{
	if (th->task)
		fault_ep_replace(th->task, &th->fault_ep, &th->fault_badge, &th->fault_async, NULL, 0, 0);
}

/* Needs mk_lock. Drop t's task-wide fault endpoint (reap). */
void fault_ep_drop_task(struct task *t)
{
	fault_ep_replace(t, &t->fault_ep, &t->fault_badge, &t->fault_async, NULL, 0, 0);
}

/* SYS_FAULT_EP_SET (flags 0) and SYS_FAULT_EP_SETF. Needs: mk_lock NOT
 * held. 0, or with nothing changed: -E_INVAL (unknown flags), -E_BADCAP /
 * -E_PERM (not a task or thread cap with R_CONTROL, or not an endpoint
 * cap with R_SEND), -E_DEAD (the task or thread is gone). */
long sys_fault_ep_set(struct task *t, long target, long ep, long flags)
{
	int err = 0;
	if ((unsigned long)flags & ~(unsigned long)FAULT_EP_ASYNC)
		return -E_INVAL;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cap *tc = cap_lookup(t, target, 0, 0, &err);
	struct cap *ec = NULL;
	struct task *tt = NULL;
	struct thread *th = NULL;
	if (tc && tc->type != CAP_TASK && tc->type != CAP_THREAD)
		err = -E_BADCAP;
	else if (tc && !(tc->rights & R_CONTROL))
		err = -E_PERM;
	if (!err && ep != SLOT_NONE)
		ec = cap_lookup(t, ep, CAP_ENDPOINT, R_SEND, &err);
	if (!err) {
		if (tc->type == CAP_TASK) {
			tt = tc->o.task;
			if (tt->state != TASK_ALIVE)
				err = -E_DEAD;    /* reaping drops the setting: none may be made after */
		} else if (!(th = cap_thread(tc))) {
			err = -E_DEAD;
		}
	}
	if (!err) {
		if (ec)
			__atomic_add_fetch(&ec->o.ep->refs, 1, __ATOMIC_RELAXED);
		fault_ep_replace(tt ? tt : th->task, tt ? &tt->fault_ep : &th->fault_ep,
				 tt ? &tt->fault_badge : &th->fault_badge,
				 tt ? &tt->fault_async : &th->fault_async, ec ? ec->o.ep : NULL,
				 ec ? ec->badge : 0, ec && (flags & FAULT_EP_ASYNC));
	}
	spin_unlock_irqrestore(&mk_lock, f);
	return err;
}

/* The status word of a page (pager.h) as a query reported it: kind |
 * prot << 8 | tag or swap slot << 16. uvm_fault fills it under the one
 * cursor it resolved the fault with, so a pager's fault costs no second
 * look-up. */
uint64_t fault_status_word(const struct mm_info *info)
{
	uint64_t prot = prot_from_mm(info->prot);
	uint64_t tag = (info->kind == MM_PAGER || info->kind == MM_SWAPPED) ? info->arg : 0;
	return (uint64_t)info->kind | prot << 8 | tag << 16;
}

/* Needs th's task's fault_lock. The fault endpoint that applies to th,
 * its badge and whether it is asynchronous. */
static struct endpoint *fault_ep_of(struct thread *th, uint64_t *badge, int *async)
{
	if (th->fault_ep) {
		*badge = th->fault_badge;
		*async = th->fault_async;
		return th->fault_ep;
	}
	*badge = th->task->fault_badge;
	*async = th->task->fault_async;
	return th->task->fault_ep;
}

/* SYS_FAULT_KILL. Needs: mk_lock NOT held. Every thread waiting on the
 * page of va in the address space of the region cap (R_MAP; va inside
 * its range) wakes refused: its task ends with EXIT_TRAP(kind). 0, or
 * -E_BADCAP / -E_PERM (the cap), -E_RANGE (va outside it), -E_NOENT (no
 * thread waits on that page). */
long sys_fault_kill(struct task *t, long region, uint64_t va)
{
	int err = 0;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cap *rc = cap_lookup(t, region, CAP_REGION, R_MAP, &err);
	if (rc && (va < rc->lo || va >= rc->hi))
		err = -E_RANGE;
	if (!err) {
		uint64_t page = va & ~(uint64_t)(PAGE_SIZE - 1);
		if (!pagewait_wake_range(rc->o.task, page, page + PAGE_SIZE, -E_INVAL))
			err = -E_NOENT;
	}
	spin_unlock_irqrestore(&mk_lock, f);
	return err;
}

/* An asynchronous fault at va (access acc; kind as fault_to_pager's) of
 * the current thread me, e (referenced by the caller) its setting's
 * endpoint: wait on the page, looking at it once more after the wait is
 * counted (a commit between the first look and now has fixed it), and
 * send the page's message if it has none. pagewait_sleep's verdict, or 0
 * when the second look resolved the fault or failed otherwise (the retry
 * faults again and is judged then). */
static int fault_async(struct thread *me, struct endpoint *e, uint64_t badge, uint64_t va,
		       unsigned kind, unsigned acc)
{
	if (pagewait_enter(me, me->task, va))
		return -E_DEAD;
	uint64_t status;
	int r = uvm_fault(me->task, va, kind == TRAP_WRITE_FAULT, kind == TRAP_EXEC_FAULT, &status);
	if (r != -E_FAULT) {
		pagewait_leave(me);
		return 0;
	}
	uint64_t w[IPC_WORDS] = { MSG_FAULT, va, status, acc | (uint64_t)me->id << 8 };
	return pagewait_sleep(me, e, badge, w);
}

/* A user page fault at va that uvm_fault could not resolve, in the
 * current thread; kind is its access, TRAP_READ_FAULT, TRAP_WRITE_FAULT
 * or TRAP_EXEC_FAULT, as the arch decoded it (kernel/trapentry.h), and
 * status the page's status word uvm_fault found under its cursor: the
 * message is built from these, nothing is decoded or looked up again.
 * 0: return to user (the access is retried, or the thread was killed
 * meanwhile and exits on the way out); -E_FAULT: no fault endpoint (the
 * caller kills as before); -E_DEAD: the pager is gone; -E_INVAL: the
 * pager answered FAULT_KILL or garbage. Needs: mk_lock NOT held. Takes
 * no global lock unless the call's reference on the endpoint turns out
 * to be the last one (ep_put_nolock). */
int fault_to_pager(uint64_t va, unsigned kind, uint64_t status)
{
	/* An object page goes to the object's pager; without one (an
	 * anonymous object's write-protected page) to the thread's, as any
	 * page the kernel cannot resolve. */
	if (FAULT_STATUS_KIND(status) == RK_OBJECT) {
		int r = mobj_fault_deliver(va, kind, &status);
		if (r != -E_FAULT)
			return r;
	}
	struct thread *me = cur_thread();
	struct task *t = me->task;
	uint64_t badge;
	int async;
	unsigned long f = spin_lock_irqsave(&t->fault_lock);
	struct endpoint *e = fault_ep_of(me, &badge, &async);
	if (e)     /* ours for the call: a new setting cannot free it under us */
		__atomic_add_fetch(&e->refs, 1, __ATOMIC_RELAXED);
	spin_unlock_irqrestore(&t->fault_lock, f);
	if (!e)
		return -E_FAULT;
	unsigned acc = fault_access(kind);
	if (async) {
		int r = fault_async(me, e, badge, va, kind, acc);
		ep_put_nolock(e);
		return me->killed ? 0 : r;
	}
	uint64_t w[IPC_WORDS] = { va, acc, status, (uint64_t)me->id };
	return fault_call(e, badge, w);
}

unsigned fault_access(unsigned kind)
{
	return kind == TRAP_WRITE_FAULT ? FA_WRITE : kind == TRAP_EXEC_FAULT ? FA_EXEC : FA_READ;
}

int fault_call(struct endpoint *e, uint64_t badge, const uint64_t *w)
{
	struct thread *me = cur_thread();
	irq_disable();
	me->in_fault = IN_FAULT_CALL;
	me->fault_result = -E_DEAD;
	me->fault_reply[0] = FAULT_KILL;
	ipc_fault_call(me, e, badge, w);    /* back once answered, failed or killed */
	me->in_fault = 0;
	long r = me->fault_result;
	uint64_t word = me->fault_reply[0];
	irq_enable();
	ep_put_nolock(e);
	if (me->killed)
		return 0;
	if (r)
		return -E_DEAD;
	return word == FAULT_RESUME ? 0 : -E_INVAL;
}
