/* Synchronous endpoints: call, send, recv, reply, reply+recv. IPC_WORDS
 * words travel in registers (a1..a4), the badge of the sender's endpoint
 * cap arrives in a5, and one capability can ride along (a5 names it on the
 * send side, the receive slot on the receive side; a6 bit 0 says one came).
 *
 * Direct switch: when a call finds a receiver waiting (or a reply finds
 * its caller), the sender blocks and the kernel switches straight to the
 * partner on this hart, without going through a run queue, when the
 * partner's affinity and priority allow it (sched_can_direct). The common
 * cases of that never get here: ipc_fast.c takes them first.
 *
 * All queue state is under mk_lock. Results for a thread that was blocked
 * are written into its saved registers by whoever completes it (for a
 * thread blocked in a page-fault call, into its fault_result/fault_reply).
 *
 * An endpoint counts the caps with R_RECV that name it (recv_caps). When
 * the last one goes nobody can ever receive there again: every queued
 * sender fails with E_DEAD at once, and so does every later send or call
 * (so a fault call to a dead pager kills its client instead of hanging). */
#include "mk.h"
#include "kstring.h"
#include "arch.h"

static struct endpoint eps[MAX_ENDPOINTS];

unsigned long eps_live(void)
{
	unsigned long n = 0;
	for (int i = 0; i < MAX_ENDPOINTS; i++)
		if (eps[i].refs)
			n++;
	return n;
}

/* Needs mk_lock. A new endpoint with one reference, charged to `charge`
 * (its endpoint quota counts live endpoints plus what it carved for its
 * children). NULL when the quota or the pool is exhausted. */
struct endpoint *ep_alloc(struct task *charge)
{
	if (charge->eps_used >= charge->ep_quota)
		return NULL;
	for (int i = 0; i < MAX_ENDPOINTS; i++)
		if (!eps[i].refs) {
			memset(&eps[i], 0, sizeof eps[i]);
			eps[i].refs = 1;
			eps[i].id = i;
			eps[i].charged = charge;
			eps[i].charged_gen = charge->gen;
			charge->eps_used++;
			return &eps[i];
		}
	return NULL;
}

/* A thread in a page-fault call (fault.c) gets its result and reply in
 * kernel-side slots: its user registers hold its interrupted state. */
static void set_result(struct thread *th, long a0)
{
	if (th->in_fault)
		th->fault_result = a0;
	else
		th->uf->tf.regs[10] = (uint64_t)a0;
}

static void wake(struct thread *th)
{
	th->block = B_NONE;
	th->ep = NULL;
	th->state = T_RUNNABLE;
	sched_wake(th);
}

static void q_push(struct thread **h, struct thread **t, struct thread *th)
{
	th->rq_next = NULL;
	if (*t)
		(*t)->rq_next = th;
	else
		*h = th;
	*t = th;
}

static struct thread *q_pop(struct thread **h, struct thread **t)
{
	struct thread *th = *h;
	if (th) {
		*h = th->rq_next;
		if (!*h)
			*t = NULL;
		th->rq_next = NULL;
	}
	return th;
}

static void q_remove(struct thread **h, struct thread **t, struct thread *th)
{
	struct thread *prev = NULL;
	for (struct thread *x = *h; x; prev = x, x = x->rq_next)
		if (x == th) {
			if (prev)
				prev->rq_next = x->rq_next;
			else
				*h = x->rq_next;
			if (*t == x)
				*t = prev;
			x->rq_next = NULL;
			return;
		}
}

/* Needs mk_lock. Drop a reference; at zero every waiter fails E_DEAD. */
void ep_put(struct endpoint *e)
{
	if (--e->refs > 0)
		return;
	struct thread *th;
	while ((th = q_pop(&e->senders, &e->senders_tail))) {
		set_result(th, -E_DEAD);
		wake(th);
	}
	while ((th = q_pop(&e->receivers, &e->receivers_tail))) {
		set_result(th, -E_DEAD);
		wake(th);
	}
	if (e->charged && e->charged->state != TASK_FREE && e->charged->gen == e->charged_gen)
		e->charged->eps_used--;
	e->charged = NULL;
}

/* Needs mk_lock. Task `from` is being reaped: endpoints it paid for that
 * are still named elsewhere are paid by `to` (its parent, whose quota
 * return leaves them counted) or by nobody when there is no parent. */
void ep_recharge(struct task *from, struct task *to)
{
	for (int i = 0; i < MAX_ENDPOINTS; i++) {
		struct endpoint *e = &eps[i];
		if (!e->refs || e->charged != from || e->charged_gen != from->gen)
			continue;
		e->charged = to;
		e->charged_gen = to ? to->gen : 0;
	}
}

/* Needs mk_lock. Endpoint cap c was just installed in a CSpace. */
void ipc_ep_cap_added(const struct cap *c)
{
	if (c->rights & R_RECV)
		c->o.ep->recv_caps++;
}

/* Needs mk_lock. Endpoint cap c is being deleted: a thread of its task
 * blocked sending or receiving through that very slot loses the authority
 * it waited with, so its wait fails with E_PERM now (revoke takes effect at
 * once, not at some later delivery). If it was the last cap that could
 * receive there, every queued sender fails with E_DEAD. */
void ipc_ep_cap_gone(const struct cap *c)
{
	struct endpoint *e = c->o.ep;
	long slot = c - c->owner->cspace;
	struct thread *q[2] = { e->senders, e->receivers };
	for (int k = 0; k < 2; k++)
		for (struct thread *th = q[k], *n; th; th = n) {
			n = th->rq_next;
			if (th->task != c->owner || th->ep_slot != slot)
				continue;
			if (k == 0)
				q_remove(&e->senders, &e->senders_tail, th);
			else
				q_remove(&e->receivers, &e->receivers_tail, th);
			set_result(th, -E_PERM);
			wake(th);
		}
	if ((c->rights & R_RECV) && --e->recv_caps == 0) {
		struct thread *th;
		while ((th = q_pop(&e->senders, &e->senders_tail))) {
			set_result(th, -E_DEAD);
			wake(th);
		}
	}
}

/* Needs mk_lock. Take th out of whatever IPC or wait it is part of: queues,
 * a server's pending reply to it, callers waiting on its reply. */
void ipc_cancel(struct thread *th)
{
	if (th->state == T_BLOCKED && th->block == B_SEND && th->ep)
		q_remove(&th->ep->senders, &th->ep->senders_tail, th);
	if (th->state == T_BLOCKED && th->block == B_RECV && th->ep)
		q_remove(&th->ep->receivers, &th->ep->receivers_tail, th);
	if (th->state == T_BLOCKED && th->block == B_WAIT && th->wait_task) {
		struct thread **pp = &th->wait_task->waiters;
		while (*pp && *pp != th)
			pp = &(*pp)->rq_next;
		if (*pp)
			*pp = th->rq_next;
	}
	th->reply_saved = 0;
	if (th->block == B_REPLY) {
		for (int i = 0; i < MAX_THREADS; i++)
			if (threads[i].caller == th)
				threads[i].caller = NULL;
	}
	if (th->caller) {
		struct thread *c = th->caller;
		th->caller = NULL;
		if (c->state == T_BLOCKED && c->block == B_REPLY) {
			set_result(c, -E_DEAD);
			wake(c);
		}
	}
	th->ep = NULL;
	th->wait_task = NULL;
	if (th->state == T_BLOCKED)
		th->block = B_NONE;
}

/* Needs mk_lock. Move the message (and cap) of sender s into receiver r's
 * registers. The cap is re-checked now: the sender's slot may have changed
 * while it waited; a bad one is silently not sent. */
static void deliver(struct thread *s, struct thread *r)
{
	struct trap_frame *tf = &r->uf->tf;
	for (int i = 0; i < IPC_WORDS; i++)
		tf->regs[11 + i] = s->msg[i];
	tf->regs[15] = s->badge;
	tf->regs[16] = 0;
	tf->regs[10] = 0;
	if (s->xfer_slot != SLOT_NONE && r->recv_slot != SLOT_NONE) {
		int err;
		struct cap *src = cap_lookup(s->task, s->xfer_slot, 0, 0, &err);
		if (src && !cap_transferable(src))
			src = NULL;
		struct cap *dst = src ? cap_slot_free(r->task, r->recv_slot, &err) : NULL;
		if (src && dst) {
			cap_get_obj(src);
			cap_install(dst, src, src);
			tf->regs[16] = IPC_GOT_CAP;
		}
	}
}

/* Needs mk_lock; the thread about to block sets up the rest. Blocks the
 * current thread and either switches straight to `partner` (direct switch)
 * or wakes it normally. Drops mk_lock. irqs are off. When both sides are
 * in IPC system calls (kernel continuation: return to user) the switch is
 * a handoff to the partner's user-return path, and does not return. */
static void block_and_run(struct thread *me, struct thread *partner)
{
	me->state = T_BLOCKED;
	struct rq *rq = this_rq();
	if (partner && sched_can_direct(rq, partner)) {
		partner->block = B_NONE;
		partner->ep = NULL;
		if (ipc_user_resumable(me) && ipc_user_resumable(partner)) {
			sched_handoff(rq, me, partner);
			sched_activate(partner);
			spin_unlock(&mk_lock);
			sched_resume_on(me, partner, partner->uf);
		}
		partner->state = T_RUNNABLE;
		spin_unlock(&mk_lock);
		sched_direct(partner);
		return;
	}
	if (partner)
		wake(partner);
	spin_unlock(&mk_lock);
	sched_block();
}

static long do_send(struct thread *me, struct endpoint *e, int call)
{
	if (call)
		me->call_seq++;      /* a new call: reply caps for older ones are dead */
	if (!e->recv_caps) {
		/* Nobody can ever receive here: fail now rather than wait forever. */
		set_result(me, -E_DEAD);
		spin_unlock(&mk_lock);
		return RET_KEEP;
	}
	struct thread *r = q_pop(&e->receivers, &e->receivers_tail);
	if (r) {
		deliver(me, r);
		if (call) {
			r->caller = me;
			me->block = B_REPLY;
			block_and_run(me, r);
		} else {
			wake(r);
			spin_unlock(&mk_lock);
			set_result(me, 0);
		}
		return RET_KEEP;
	}
	me->block = B_SEND;
	me->ep = e;
	me->is_call = call;
	me->state = T_BLOCKED;
	q_push(&e->senders, &e->senders_tail, me);
	set_result(me, -E_DEAD);     /* overwritten when a receiver takes it */
	spin_unlock(&mk_lock);
	sched_block();
	return RET_KEEP;
}

static long do_recv(struct thread *me, struct endpoint *e)
{
	struct thread *s = q_pop(&e->senders, &e->senders_tail);
	if (s) {
		deliver(s, me);
		if (s->is_call) {
			me->caller = s;
			s->block = B_REPLY;
			s->ep = NULL;
		} else {
			set_result(s, 0);
			wake(s);
		}
		spin_unlock(&mk_lock);
		return RET_KEEP;
	}
	me->block = B_RECV;
	me->ep = e;
	me->state = T_BLOCKED;
	q_push(&e->receivers, &e->receivers_tail, me);
	set_result(me, -E_DEAD);
	spin_unlock(&mk_lock);
	sched_block();
	return RET_KEEP;
}

/* Needs mk_lock; c blocked in B_REPLY. Its call returns 0 with words w
 * (a1..a4) and no cap or badge (a5, a6 zero). Does not wake c. */
static void set_reply(struct thread *c, const uint64_t *w)
{
	if (c->in_fault) {
		c->fault_result = 0;
		for (int i = 0; i < IPC_WORDS; i++)
			c->fault_reply[i] = w[i];
		return;
	}
	struct trap_frame *tf = &c->uf->tf;
	tf->regs[10] = 0;
	for (int i = 0; i < IPC_WORDS; i++)
		tf->regs[11 + i] = w[i];
	tf->regs[15] = 0;
	tf->regs[16] = 0;
}

/* Needs mk_lock. Answer me->caller with words w; returns the caller to run
 * (not yet woken) or NULL. */
static struct thread *do_reply(struct thread *me, const uint64_t *w)
{
	struct thread *c = me->caller;
	me->caller = NULL;
	if (!c || c->state != T_BLOCKED || c->block != B_REPLY)
		return NULL;
	set_reply(c, w);
	return c;
}

/* Needs mk_lock. The caller a reply cap answers, if that exact call is
 * still waiting for it: same thread incarnation (gen), same call (seq),
 * saved and blocked for the reply. NULL otherwise. */
static struct thread *reply_target(const struct cap *rc)
{
	struct thread *c = rc->o.thread;
	if (c->gen != rc->gen || c->call_seq != rc->seq || !c->reply_saved ||
	    c->state != T_BLOCKED || c->block != B_REPLY)
		return NULL;
	return c;
}

/* Needs mk_lock. Reply cap rc is gone unused: the call it was saved for
 * fails with E_DEAD instead of waiting forever. */
void ipc_reply_dropped(const struct cap *rc)
{
	struct thread *c = reply_target(rc);
	if (c) {
		c->reply_saved = 0;
		set_result(c, -E_DEAD);
		wake(c);
	}
}

/* Needs mk_lock. SYS_REPLY_SAVE and SYS_REPLY_CAP. */
static long reply_cap_op(struct thread *me, long nr, long slot, const uint64_t *w)
{
	int err = 0;
	if (nr == SYS_REPLY_SAVE) {
		struct cap *d = cap_slot_free(me->task, slot, &err);
		struct thread *c = me->caller;
		if (!d)
			return err;
		if (!c || c->state != T_BLOCKED || c->block != B_REPLY)
			return -E_NOENT;
		struct cap nc = { .type = CAP_REPLY, .rights = R_SEND, .o.thread = c,
				  .gen = c->gen, .seq = c->call_seq };
		cap_install(d, &nc, NULL);
		c->reply_saved = 1;
		me->caller = NULL;
		return 0;
	}
	struct cap *rc = cap_lookup(me->task, slot, CAP_REPLY, 0, &err);
	if (!rc)
		return err;
	struct thread *c = reply_target(rc);
	if (c) {
		c->reply_saved = 0;
		set_reply(c, w);
		wake(c);
	}
	cap_delete(rc);      /* one shot */
	return c ? 0 : -E_DEAD;
}

/* Needs mk_lock, irqs off; me->in_fault set. The page-fault call of
 * fault.c: a call on e with words w and the badge of the fault endpoint's
 * cap, through no slot of any CSpace (ep_slot -1: deleting caps of the
 * client does not fail it). Drops mk_lock; returns with irqs off once the
 * call was answered, failed or the thread was killed; the outcome is in
 * me->fault_result / fault_reply. */
long ipc_fault_call(struct thread *me, struct endpoint *e, uint64_t badge, const uint64_t *w)
{
	for (int i = 0; i < IPC_WORDS; i++)
		me->msg[i] = w[i];
	me->badge = badge;
	me->xfer_slot = SLOT_NONE;
	me->ep_slot = -1;
	return do_send(me, e, 1);
}

long sys_ipc(struct uframe *uf, long nr)
{
	struct thread *me = cur_thread();
	struct task *t = me->task;
	struct trap_frame *tf = &uf->tf;
	long slot = (long)tf->regs[10];
	uint64_t w[IPC_WORDS];
	for (int i = 0; i < IPC_WORDS; i++)
		w[i] = tf->regs[11 + i];
	long extra = (long)tf->regs[15];
	int err = 0;

	irq_disable();
	spin_lock(&mk_lock);
	/* Killed while it ran (a kill then only sets the flag): it must not
	 * block now, as nobody would wake it and its task could never finish
	 * dying. It exits on its way back to user (thread_exit cancels any
	 * IPC it is part of). Checked under mk_lock, which a kill takes. */
	if (me->killed) {
		spin_unlock(&mk_lock);
		irq_enable();
		return -E_DEAD;
	}
	if (nr == SYS_REPLY_SAVE || nr == SYS_REPLY_CAP) {
		long r = reply_cap_op(me, nr, slot, w);
		spin_unlock(&mk_lock);
		irq_enable();
		return r;
	}
	if (nr == SYS_REPLY) {
		struct thread *c = do_reply(me, w);
		if (c)
			wake(c);
		spin_unlock(&mk_lock);
		irq_enable();
		return c ? 0 : -E_NOENT;
	}
	unsigned need = (nr == SYS_RECV || nr == SYS_REPLY_RECV) ? R_RECV : R_SEND;
	struct cap *ec = cap_lookup(t, slot, CAP_ENDPOINT, need, &err);
	if (ec && (nr == SYS_CALL || nr == SYS_SEND) && extra != SLOT_NONE) {
		/* Decode the transfer now so a bad one fails the call. */
		struct cap *xc;
		if (!(ec->rights & R_GRANT))
			err = -E_PERM, ec = NULL;
		else if (!(xc = cap_lookup(t, extra, 0, 0, &err)))
			ec = NULL;
		else if (!cap_transferable(xc))
			err = -E_PERM, ec = NULL;
	}
	if (ec && (nr == SYS_RECV || nr == SYS_REPLY_RECV) && extra != SLOT_NONE) {
		if (extra < 0 || extra >= CSPACE_SLOTS)
			err = -E_BADCAP, ec = NULL;
	}
	if (!ec) {
		spin_unlock(&mk_lock);
		irq_enable();
		return err;
	}
	struct endpoint *e = ec->o.ep;
	me->ep_slot = slot;
	long r;
	switch (nr) {
	case SYS_CALL:
	case SYS_SEND:
		for (int i = 0; i < IPC_WORDS; i++)
			me->msg[i] = w[i];
		me->badge = ec->badge;
		me->xfer_slot = extra;
		r = do_send(me, e, nr == SYS_CALL);
		break;
	case SYS_RECV:
		me->recv_slot = extra;
		r = do_recv(me, e);
		break;
	default: { /* SYS_REPLY_RECV */
		struct thread *c = do_reply(me, w);
		me->recv_slot = extra;
		struct thread *s = e->senders;
		if (c && !s && sched_can_direct(this_rq(), c)) {
			/* Direct switch: wait on e and run the caller right here. */
			me->block = B_RECV;
			me->ep = e;
			q_push(&e->receivers, &e->receivers_tail, me);
			set_result(me, -E_DEAD);
			block_and_run(me, c);
			r = RET_KEEP;
			break;
		}
		if (c)
			wake(c);
		r = do_recv(me, e);
		break;
	}
	}
	irq_enable();
	return r;
}
