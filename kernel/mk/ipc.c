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
 * Locking (mk.h): each endpoint has its own lock (ep_lock), which guards
 * its queues and every IPC wait through it: a thread in B_SEND, B_RECV
 * or B_REPLY has th->ep set to the endpoint it waits through, and its
 * state, block, ep and result registers change only under that lock.
 * IPC finds the endpoint with no lock (ep_cap_lock) and takes mk_lock
 * only when a cap may move (a transfer or receive slot is given) or for
 * reply caps, which are installed in and deleted from CSpaces. A reply
 * names the call it answers by (thread, call_seq): call_seq grows for
 * ever, so a reply for a call that ended (killed, failed) finds nothing.
 * Results for a thread that was blocked are written into its saved
 * registers by whoever completes it (for a thread blocked in a page-fault
 * call, into its fault_result/fault_reply).
 *
 * An endpoint counts the caps with R_RECV that name it (recv_caps). When
 * the last one goes nobody can ever receive there again: every queued
 * sender fails with E_DEAD at once, and so does every later send or call
 * (so a fault call to a dead pager kills its client instead of hanging).
 *
 * Death notices and interrupt messages (notice.c) are messages the
 * kernel sends: a notice sent when a receiver waits goes straight to it;
 * otherwise it is queued on the endpoint (e->notices), and a receive
 * takes queued notices before queued senders (a server learns of a death
 * or an interrupt before it serves more calls; notices are few: one per
 * registration or bound line, each received once). So
 * notices are never queued while a receiver waits, and every path that
 * makes a thread wait to receive looks at e->notices first (do_recv,
 * SYS_REPLY_RECV's direct switch, the fast path's one extra test). */
#include "mk.h"
#include "failalloc.h"

/* The IPC ABI's registers (abi/patina/syscall.h) as system-call argument
 * numbers (uf_arg): the slot first, then the message words, the badge
 * (or the extra slot), the transfer flags (or the timeout). */
#define IPC_ARG_WORD(i) (1u + (unsigned)(i))
#define IPC_ARG_BADGE   5u
#define IPC_ARG_FLAGS   6u
#include "kstring.h"
#include "timer.h"
#include "arch.h"

static struct endpoint eps[MAX_ENDPOINTS];

unsigned long eps_live(void)
{
	unsigned long n = 0;
	for (int i = 0; i < MAX_ENDPOINTS; i++)
		if (__atomic_load_n(&eps[i].refs, __ATOMIC_RELAXED))
			n++;
	return n;
}

/* Needs mk_lock. A new endpoint with one reference, charged to `charge`
 * (its endpoint quota counts live endpoints plus what it carved for its
 * children). NULL when the quota or the pool is exhausted. The fields are
 * set under the endpoint's lock: a stale reader of the old one may still
 * take it (ipc.c header). */
struct endpoint *ep_alloc(struct task *charge)
{
	if (charge->eps_used >= charge->ep_quota)
		return NULL;
	for (int i = failalloc_fail() ? MAX_ENDPOINTS : 0; i < MAX_ENDPOINTS; i++) {
		struct endpoint *e = &eps[i];
		if (__atomic_load_n(&e->refs, __ATOMIC_RELAXED))
			continue;
		ep_lock(e);
		e->senders = e->senders_tail = NULL;
		e->receivers = e->receivers_tail = NULL;
		e->notices = e->notices_tail = NULL;
		__atomic_store_n(&e->recv_caps, 0, __ATOMIC_RELAXED);
		__atomic_store_n(&e->refs, 1, __ATOMIC_RELAXED);
		e->id = i;
		e->charged = charge;
		e->charged_gen = charge->gen;
		ep_unlock(e);
		charge->eps_used++;
		return e;
	}
	return NULL;
}

/* A thread in a page-fault call (fault.c) gets its result and reply in
 * kernel-side slots: its user registers hold its interrupted state. */
static void set_result(struct thread *th, long a0)
{
	if (th->in_fault == IN_FAULT_CALL)
		th->fault_result = a0;
	else
		uf_set(&th->uf->tf, UREG_RET, (uint64_t)a0);
}

/* Needs th's endpoint locked; th waits there and is no longer queued. */
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

/* Needs e locked. Every thread queued on e (senders, and receivers too
 * when all) fails with `err`. */
static void fail_queued(struct endpoint *e, long err, int all)
{
	struct thread *th;
	while ((th = q_pop(&e->senders, &e->senders_tail))) {
		set_result(th, err);
		wake(th);
	}
	while (all && (th = q_pop(&e->receivers, &e->receivers_tail))) {
		set_result(th, err);
		wake(th);
	}
}

/* Needs e locked, and no cap naming e left (refs 0). Callers still
 * waiting for a reply through e are not queued on it, but their wait is
 * guarded by e's lock (th->ep == e): once e is free and reused, that lock
 * would guard another endpoint's waits. So their calls end here with
 * E_DEAD (a reply given later finds no waiter, as for a killed caller).
 * A scan of the thread pool: only at an endpoint's death. */
static void fail_reply_waits(struct endpoint *e)
{
	for (int i = 0, end = threads_end(); i < end; i++) {
		struct thread *th = &threads[i];
		if (__atomic_load_n(&th->ep, __ATOMIC_ACQUIRE) == e && th->block == B_REPLY) {
			set_result(th, -E_DEAD);
			wake(th);
		}
	}
}

/* Needs e locked. Take e's queue of death notices off it (the caller
 * frees them: notice_ep_gone). */
static struct notice *notices_take(struct endpoint *e)
{
	struct notice *q = e->notices;
	e->notices = e->notices_tail = NULL;
	return q;
}

/* Needs mk_lock. Drop a reference; at zero every waiter fails E_DEAD
 * (queued senders and receivers, and callers waiting for a reply through
 * e), every death notice for e is freed (queued or registered) and the
 * endpoint is free for ep_alloc (which runs under mk_lock too). */
void ep_put(struct endpoint *e)
{
	if (__atomic_sub_fetch(&e->refs, 1, __ATOMIC_ACQ_REL) > 0)
		return;
	ep_lock(e);
	fail_queued(e, -E_DEAD, 1);
	fail_reply_waits(e);
	struct notice *q = notices_take(e);
	ep_unlock(e);
	notice_ep_gone(e, q);
	if (e->charged && e->charged->state != TASK_FREE && e->charged->gen == e->charged_gen)
		e->charged->eps_used--;
	e->charged = NULL;
}

/* Needs: mk_lock NOT held, no endpoint lock held; the caller holds a
 * reference on e. Drop it: with no lock while it is not the last, else
 * under mk_lock through ep_put, so an endpoint reaches 0 only under
 * mk_lock and is finished there before ep_alloc can see it free. */
void ep_put_nolock(struct endpoint *e)
{
	int r = __atomic_load_n(&e->refs, __ATOMIC_RELAXED);
	while (r > 1)
		if (__atomic_compare_exchange_n(&e->refs, &r, r - 1, 0, __ATOMIC_ACQ_REL,
						__ATOMIC_RELAXED))
			return;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	ep_put(e);
	spin_unlock_irqrestore(&mk_lock, f);
}

/* Needs mk_lock. Task `from` is being reaped: endpoints it paid for that
 * are still named elsewhere are paid by `to` (its parent, whose quota
 * return leaves them counted) or by nobody when there is no parent. */
void ep_recharge(struct task *from, struct task *to)
{
	for (int i = 0; i < MAX_ENDPOINTS; i++) {
		struct endpoint *e = &eps[i];
		if (!__atomic_load_n(&e->refs, __ATOMIC_RELAXED) || e->charged != from ||
		    e->charged_gen != from->gen)
			continue;
		e->charged = to;
		e->charged_gen = to ? to->gen : 0;
	}
}

/* Needs mk_lock. Endpoint cap c was just installed in a CSpace (maybe by
 * an IPC transfer, under another endpoint's lock: so no lock here). */
void ipc_ep_cap_added(const struct cap *c)
{
	if (c->rights & R_RECV)
		__atomic_add_fetch(&c->o.ep->recv_caps, 1, __ATOMIC_RELAXED);
}

/* Needs mk_lock; c is a copy of the endpoint cap just deleted from `slot`
 * of c->owner (the slot is already empty). A thread of that task blocked
 * sending or receiving through that very slot loses the authority it
 * waited with, so its wait fails with E_PERM now (revoke takes effect at
 * once, not at some later delivery). If it was the last cap that could
 * receive there, every queued sender fails with E_DEAD and every death
 * notice for e (queued or registered) is freed. */
void ipc_ep_cap_gone(const struct cap *c, long slot)
{
	struct notice *nq = NULL;
	int gone = 0;
	struct endpoint *e = c->o.ep;
	ep_lock(e);
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
	if ((c->rights & R_RECV) && __atomic_sub_fetch(&e->recv_caps, 1, __ATOMIC_RELAXED) == 0) {
		fail_queued(e, -E_DEAD, 0);
		nq = notices_take(e);
		gone = 1;
	}
	ep_unlock(e);
	if (gone)
		notice_ep_gone(e, nq);
}

/* Needs irqs off, no endpoint lock held. Lock the endpoint thread c waits
 * through if c still waits for the reply to call `seq`: returns it
 * locked, else NULL. c->ep stays the same for the whole wait of one call,
 * so one look suffices. */
static struct endpoint *reply_lock(struct thread *c, uint64_t seq)
{
	struct endpoint *e = __atomic_load_n(&c->ep, __ATOMIC_ACQUIRE);
	if (!e)
		return NULL;
	ep_lock(e);
	if (ipc_reply_waits(c, e, seq))
		return e;
	ep_unlock(e);
	return NULL;
}

/* Needs mk_lock, th->killed set (and ordered before this: see
 * ipc_block). End th's IPC wait, if it has one: out of its queue, made
 * runnable (it exits on its way back to user). th->ep may change under
 * us (a partner completes the wait first, which is fine too); it cannot
 * start a new wait, so this ends. */
void ipc_kill_wait(struct thread *th)
{
	for (;;) {
		struct endpoint *e = __atomic_load_n(&th->ep, __ATOMIC_ACQUIRE);
		if (!e)
			return;
		ep_lock(e);
		if (th->ep == e) {
			if (th->block == B_SEND)
				q_remove(&e->senders, &e->senders_tail, th);
			else if (th->block == B_RECV)
				q_remove(&e->receivers, &e->receivers_tail, th);
			wake(th);
			ep_unlock(e);
			return;
		}
		ep_unlock(e);
	}
}

/* Needs mk_lock; me is exiting (running, in no wait). The call it was
 * answering, if any, fails with E_DEAD instead of waiting for ever. */
void ipc_cancel(struct thread *me)
{
	struct thread *c = me->caller;
	me->caller = NULL;
	me->reply_saved = 0;
	struct endpoint *e = c ? reply_lock(c, me->caller_seq) : NULL;
	if (e) {
		set_result(c, -E_DEAD);
		wake(c);
		ep_unlock(e);
	}
}

/* Needs the endpoint locked, and mk_lock when the sender names a cap to
 * transfer and the receiver a slot for it (whichever of the two is
 * running then asked for it, so holds it). Move the message (and cap) of
 * sender s into receiver r's registers. The cap is re-checked now: the
 * sender's slot may have changed while it waited; a bad one is silently
 * not sent, as is one whose receive slot is full by now. The receive
 * slot's chunk was added when the receive started (sys_ipc; the fast
 * path takes a receive slot only in a chunk that is there), so the
 * cap_slot_free here allocates nothing. */
static void deliver(struct thread *s, struct thread *r)
{
	struct trap_frame *tf = &r->uf->tf;
	for (int i = 0; i < IPC_WORDS; i++)
		uf_set_arg(tf, IPC_ARG_WORD(i), s->msg[i]);
	uf_set_arg(tf, IPC_ARG_BADGE, s->badge);
	uf_set_arg(tf, IPC_ARG_FLAGS, 0);
	uf_set(tf, UREG_RET, 0);
	if (s->xfer_slot != SLOT_NONE && r->recv_slot != SLOT_NONE) {
		int err;
		struct cap *src = cap_lookup(s->task, s->xfer_slot, 0, 0, &err);
		if (src && !cap_transferable(src))
			src = NULL;
		struct cap *dst = src ? cap_slot_free(r->task, r->recv_slot, &err) : NULL;
		if (src && dst) {
			cap_get_obj(src);
			cap_install(dst, src, src);
			uf_set_arg(tf, IPC_ARG_FLAGS, IPC_GOT_CAP);
		}
	}
}

/* Drop the endpoint lock, and mk_lock when this IPC took it. */
static void unlock_all(struct endpoint *e, int tree)
{
	ep_unlock(e);
	if (tree)
		spin_unlock(&mk_lock);
}

/* Needs e locked (and mk_lock when tree); irqs off; me already waits
 * (ipc_block). Either switches straight to `partner` (direct switch) or
 * wakes it normally, then gives up the hart. Drops the locks. When both
 * sides are in IPC system calls (kernel continuation: return to user) the
 * switch is a handoff to the partner's user-return path, and does not
 * return. */
static void block_and_run(struct thread *me, struct endpoint *e, struct thread *partner, int tree)
{
	struct rq *rq = this_rq();
	if (partner && sched_can_direct(rq, partner)) {
		partner->block = B_NONE;
		partner->ep = NULL;
		if (ipc_user_resumable(me) && ipc_user_resumable(partner)) {
			sched_handoff(rq, me, partner);
			sched_activate(partner);
			unlock_all(e, tree);
			sched_resume_on(me, partner, partner->uf);
		}
		partner->state = T_RUNNABLE;
		unlock_all(e, tree);
		sched_direct(partner);
		return;
	}
	if (partner)
		wake(partner);
	unlock_all(e, tree);
	sched_block();
}

/* Needs e locked (and mk_lock when tree); irqs off. Send or call on e.
 * Drops the locks; the result is in me's registers. */
static long do_send(struct thread *me, struct endpoint *e, int call, int tree)
{
	if (!__atomic_load_n(&e->recv_caps, __ATOMIC_RELAXED)) {
		/* Nobody can ever receive here: fail now rather than wait forever. */
		set_result(me, -E_DEAD);
		unlock_all(e, tree);
		return RET_KEEP;
	}
	struct thread *r = e->receivers;
	if (r && !call) {
		q_pop(&e->receivers, &e->receivers_tail);
		deliver(me, r);
		wake(r);
		unlock_all(e, tree);
		set_result(me, 0);
		return RET_KEEP;
	}
	if (ipc_block(me, e, r ? B_REPLY : B_SEND)) {
		set_result(me, -E_DEAD);
		unlock_all(e, tree);
		return RET_KEEP;
	}
	if (call)
		me->call_seq++;      /* a new call: replies for older ones find nothing */
	if (r) {
		q_pop(&e->receivers, &e->receivers_tail);
		deliver(me, r);
		r->caller = me;
		r->caller_seq = me->call_seq;
		block_and_run(me, e, r, tree);
		return RET_KEEP;
	}
	me->is_call = call;
	q_push(&e->senders, &e->senders_tail, me);
	set_result(me, -E_DEAD);     /* overwritten when a receiver takes it */
	unlock_all(e, tree);
	sched_block();
	return RET_KEEP;
}

/* Needs: r is receiving on n's endpoint (waiting there, or running its
 * receive) under that endpoint's lock. Put death notice n in r's result
 * registers as a message with no cap. */
static void notice_deliver(const struct notice *n, struct thread *r)
{
	struct trap_frame *tf = &r->uf->tf;
	uf_set(tf, UREG_RET, 0);
	for (int i = 0; i < IPC_WORDS; i++)
		uf_set_arg(tf, IPC_ARG_WORD(i), n->msg[i]);
	uf_set_arg(tf, IPC_ARG_BADGE, n->badge);
	uf_set_arg(tf, IPC_ARG_FLAGS, 0);
}

/* Needs the lock that guards n (mk_lock for a death notice, the line
 * lock for an interrupt message, the page-wait lock for a fault
 * message), n on no queue; n names e (so e is not
 * reused: its death ends what names it, under that lock, before ep_alloc
 * can see it free), no endpoint lock held, irqs off. Send n on e, never blocking: a receiver waiting there
 * gets it now and is woken (0: n is the caller's again); else it is
 * queued for the next receive (1: e holds it now); when nobody can ever
 * receive on e it is dropped (0). Any context, the interrupt handler's
 * too: every lock it takes is taken with irqs off everywhere. */
int ipc_notice_post(struct endpoint *e, struct notice *n)
{
	int kept = 0;
	ep_lock(e);
	struct thread *r = NULL;
	if (!__atomic_load_n(&e->recv_caps, __ATOMIC_RELAXED)) {
		kept = 0;      /* nobody can ever receive here: dropped */
	} else if ((r = q_pop(&e->receivers, &e->receivers_tail))) {
		notice_deliver(n, r);
		wake(r);
	} else {
		n->state = N_QUEUED;
		n->next = NULL;
		if (e->notices_tail)
			e->notices_tail->next = n;
		else
			e->notices = n;
		e->notices_tail = n;
		kept = 1;
	}
	ep_unlock(e);
	return kept;
}

/* Needs the lock guarding n, no endpoint lock held, irqs off. Take n
 * off e's queue if it is still there (back to N_REGISTERED); a notice a
 * receiver took already (N_TAKEN) is left to notice_received. 0 when n
 * is queued but not on e's queue: the end of e's last receive cap took
 * the queue (its notice_ep_gone has n, and n->next is its); else 1. */
int ipc_notice_unqueue(struct endpoint *e, struct notice *n)
{
	int ok = 1;
	ep_lock(e);
	if (n->state == N_QUEUED) {
		struct notice **pp = &e->notices, *prev = NULL;
		while (*pp && *pp != n) {
			prev = *pp;
			pp = &(*pp)->next;
		}
		if (*pp) {
			*pp = n->next;
			if (e->notices_tail == n)
				e->notices_tail = prev;
			n->next = NULL;
			n->state = N_REGISTERED;
		} else {
			ok = 0;
		}
	}
	ep_unlock(e);
	return ok;
}

/* Needs e locked, a notice queued on e. The first one, off the queue
 * (N_TAKEN): the taker's until it gives it to notice_received. */
struct notice *ipc_notice_take(struct endpoint *e)
{
	struct notice *n = e->notices;
	e->notices = n->next;
	if (!e->notices)
		e->notices_tail = NULL;
	n->next = NULL;
	n->state = N_TAKEN;
	return n;
}

/* Needs e locked (and mk_lock when tree), irqs off, a notice queued on
 * e. me receives the first one at once (words and badge, no cap; no call
 * to answer); drops the locks, then hands the notice back to its owner
 * (notice_received). */
static long recv_notice(struct thread *me, struct endpoint *e, int tree)
{
	struct notice *n = ipc_notice_take(e);
	notice_deliver(n, me);
	unlock_all(e, tree);
	notice_received(n);
	return RET_KEEP;
}

/* Needs e locked (and mk_lock when tree); irqs off. Receive on e: a
 * queued death notice first, then a queued sender, else wait. Drops the
 * locks. */
static long do_recv(struct thread *me, struct endpoint *e, int tree)
{
	if (e->notices)
		return recv_notice(me, e, tree);
	struct thread *s = q_pop(&e->senders, &e->senders_tail);
	if (s) {
		deliver(s, me);
		if (s->is_call) {
			me->caller = s;
			me->caller_seq = s->call_seq;
			s->block = B_REPLY;          /* still waits through e */
		} else {
			set_result(s, 0);
			wake(s);
		}
		unlock_all(e, tree);
		return RET_KEEP;
	}
	if (ipc_block(me, e, B_RECV)) {
		unlock_all(e, tree);
		return -E_DEAD;
	}
	q_push(&e->receivers, &e->receivers_tail, me);
	set_result(me, -E_DEAD);
	unlock_all(e, tree);
	sched_block();
	return RET_KEEP;
}

/* Needs c's endpoint locked (reply_lock); c waits for our reply. Its
 * call returns 0 with words w (a1..a4) and no cap or badge (a5, a6
 * zero). Does not wake c. */
static void set_reply(struct thread *c, const uint64_t *w)
{
	if (c->in_fault == IN_FAULT_CALL) {
		c->fault_result = 0;
		for (int i = 0; i < IPC_WORDS; i++)
			c->fault_reply[i] = w[i];
		return;
	}
	struct trap_frame *tf = &c->uf->tf;
	uf_set(tf, UREG_RET, 0);
	for (int i = 0; i < IPC_WORDS; i++)
		uf_set_arg(tf, IPC_ARG_WORD(i), w[i]);
	uf_set_arg(tf, IPC_ARG_BADGE, 0);
	uf_set_arg(tf, IPC_ARG_FLAGS, 0);
}

/* Needs irqs off, no endpoint lock held. Answer me->caller with words w
 * and wake it: 0, or -E_NOENT when no call waits for our answer. */
static long do_reply(struct thread *me, const uint64_t *w)
{
	struct thread *c = me->caller;
	me->caller = NULL;
	struct endpoint *e = c ? reply_lock(c, me->caller_seq) : NULL;
	if (!e)
		return -E_NOENT;
	set_reply(c, w);
	wake(c);
	ep_unlock(e);
	return 0;
}

/* Needs mk_lock. Reply cap rc is gone unused: the call it was saved for
 * fails with E_DEAD instead of waiting forever. */
void ipc_reply_dropped(const struct cap *rc)
{
	struct thread *c = rc->o.thread;
	struct endpoint *e = c->gen == rc->gen ? reply_lock(c, rc->seq) : NULL;
	if (!e)
		return;
	if (c->reply_saved) {
		c->reply_saved = 0;
		set_result(c, -E_DEAD);
		wake(c);
	}
	ep_unlock(e);
}

/* Needs mk_lock. SYS_REPLY_SAVE and SYS_REPLY_CAP. */
static long reply_cap_op(struct thread *me, long nr, long slot, const uint64_t *w)
{
	int err = 0;
	if (nr == SYS_REPLY_SAVE) {
		err = cap_slot_check(me->task, slot);
		if (err)
			return err;
		struct thread *c = me->caller;
		struct endpoint *e = c ? reply_lock(c, me->caller_seq) : NULL;
		if (!e)
			return -E_NOENT;
		struct cap *d = cap_slot_free(me->task, slot, &err);   /* last: its chunk */
		if (!d) {
			ep_unlock(e);
			return err;
		}
		struct cap nc = { .type = CAP_REPLY, .rights = R_SEND, .o.thread = c,
				  .gen = c->gen, .seq = c->call_seq };
		cap_install(d, &nc, NULL);
		c->reply_saved = 1;
		me->caller = NULL;
		ep_unlock(e);
		return 0;
	}
	struct cap *rc = cap_lookup(me->task, slot, CAP_REPLY, 0, &err);
	if (!rc)
		return err;
	struct thread *c = rc->o.thread;
	struct endpoint *e = c->gen == rc->gen ? reply_lock(c, rc->seq) : NULL;
	int done = 0;
	if (e) {
		if (c->reply_saved) {
			c->reply_saved = 0;
			set_reply(c, w);
			wake(c);
			done = 1;
		}
		ep_unlock(e);
	}
	cap_delete(rc);      /* one shot */
	return done ? 0 : -E_DEAD;
}

/* Needs irqs off, no lock held; me->in_fault set; the caller holds a
 * reference on e. The page-fault call of fault.c: a call on e with words
 * w and the badge of the fault endpoint's cap, through no slot of any
 * CSpace (ep_slot -1: deleting caps of the client does not fail it).
 * Returns with irqs off once the call was answered, failed or the thread
 * was killed; the outcome is in me->fault_result / fault_reply. */
long ipc_fault_call(struct thread *me, struct endpoint *e, uint64_t badge, const uint64_t *w)
{
	for (int i = 0; i < IPC_WORDS; i++)
		me->msg[i] = w[i];
	me->badge = badge;
	me->xfer_slot = SLOT_NONE;
	me->ep_slot = -1;
	ep_lock(e);
	return do_send(me, e, 1, 0);
}

/* Needs irqs off. The endpoint named by t's cap in slot, locked, if that
 * cap is an endpoint cap with `need` rights; its badge and rights in
 * *badge, *rights. Else NULL with *err. No lock is needed to read the
 * slot (ep_snap_read), as long as it still holds once the endpoint is
 * locked (ep_snap_holds). A cap deleted after that point is deleted after
 * this IPC: ipc_ep_cap_gone, which comes after the slot changed, takes
 * the endpoint lock after us and finds whatever wait we leave there. */
static struct endpoint *ep_cap_lock(struct task *t, long slot, unsigned need, uint64_t *badge,
				    unsigned *rights, int *err)
{
	if (slot < 0 || slot >= CSPACE_MAX_SLOTS) {
		*err = -E_BADCAP;
		return NULL;
	}
	for (;;) {
		struct ep_snap s;
		if (ep_snap_read(t, (unsigned long)slot, &s)) {
			cpu_relax();
			continue;
		}
		if (s.type != CAP_ENDPOINT) {
			*err = -E_BADCAP;
			return NULL;
		}
		if ((s.rights & need) != need) {
			*err = -E_PERM;
			return NULL;
		}
		ep_lock(s.e);
		if (ep_snap_holds(&s)) {
			*badge = s.badge;
			*rights = s.rights;
			return s.e;
		}
		ep_unlock(s.e);
	}
}

/* --- timed IPC ---
 * SYS_RECV_TIMED and SYS_CALL_TIMED are SYS_RECV and SYS_CALL with a
 * deadline (a6: microseconds, 1..IPC_TIMEOUT_MAX_US). The thread is marked
 * IN_TIMED_WAIT for the whole call, so nothing resumes it by a handoff and
 * it always comes back through sys_ipc, which clears the deadline: a stale
 * one can never end a later wait. Hart 0's tick ends every wait whose
 * deadline passed (ipc_timeouts_tick) under that wait's endpoint lock,
 * as a kill does: out of its queue, result E_TIMEDOUT. A call that times
 * out while its reply is pending is over: the late reply finds no waiter.
 * Resolution: one tick (10 ms). The untimed calls and the fast path do not
 * change. */
#define IPC_TIMEOUT_MAX_US (3600ull * 1000000ull)
static int timed_waits;             /* calls in progress with a deadline */

void ipc_timeouts_tick(uint64_t now)
{
	if (this_cpu()->index != 0 || !__atomic_load_n(&timed_waits, __ATOMIC_ACQUIRE))
		return;
	for (int i = 0, end = threads_end(); i < end; i++) {
		struct thread *th = &threads[i];
		uint64_t d = __atomic_load_n(&th->deadline, __ATOMIC_RELAXED);
		struct endpoint *e = __atomic_load_n(&th->ep, __ATOMIC_ACQUIRE);
		if (!d || d > now || !e)
			continue;
		ep_lock(e);
		/* Still that wait, still timed, still past its deadline. */
		if (th->ep == e && th->in_fault == IN_TIMED_WAIT && th->deadline &&
		    th->deadline <= now) {
			if (th->block == B_SEND)
				q_remove(&e->senders, &e->senders_tail, th);
			else if (th->block == B_RECV)
				q_remove(&e->receivers, &e->receivers_tail, th);
			set_result(th, -E_TIMEDOUT);
			wake(th);
		}
		ep_unlock(e);
	}
}

static long sys_ipc_op(struct uframe *uf, long nr);

long sys_ipc(struct uframe *uf, long nr)
{
	if (nr != SYS_RECV_TIMED && nr != SYS_CALL_TIMED)
		return sys_ipc_op(uf, nr);
	struct thread *me = cur_thread();
	uint64_t us = uf_arg(&uf->tf, IPC_ARG_FLAGS);
	if (!us || us > IPC_TIMEOUT_MAX_US)
		return -E_INVAL;
	__atomic_add_fetch(&timed_waits, 1, __ATOMIC_ACQ_REL);
	me->in_fault = IN_TIMED_WAIT;
	__atomic_store_n(&me->deadline, time_after_us(us), __ATOMIC_RELAXED);
	long r = sys_ipc_op(uf, nr == SYS_RECV_TIMED ? SYS_RECV : SYS_CALL);
	/* Back through our own context (no handoff while IN_TIMED_WAIT):
	 * whatever ended the wait, it is over. */
	__atomic_store_n(&me->deadline, 0, __ATOMIC_RELAXED);
	me->in_fault = 0;
	__atomic_sub_fetch(&timed_waits, 1, __ATOMIC_ACQ_REL);
	return r;
}

/* The untimed IPC system calls (and the timed ones, deadline set). */
static long sys_ipc_op(struct uframe *uf, long nr)
{
	struct thread *me = cur_thread();
	struct task *t = me->task;
	struct trap_frame *tf = &uf->tf;
	long slot = (long)uf_arg(tf, 0);
	uint64_t w[IPC_WORDS];
	for (int i = 0; i < IPC_WORDS; i++)
		w[i] = uf_arg(tf, IPC_ARG_WORD(i));
	long extra = (long)uf_arg(tf, IPC_ARG_BADGE);
	int err = 0;

	/* Killed while it ran (a kill then only sets the flag): it must not
	 * block now, as nobody would wake it and its task could never finish
	 * dying. It exits on its way back to user (thread_exit ends any IPC
	 * it is part of). A kill after this look is seen by ipc_block. */
	if (__atomic_load_n(&me->killed, __ATOMIC_RELAXED))
		return -E_DEAD;
	irq_disable();
	if (nr == SYS_REPLY_SAVE || nr == SYS_REPLY_CAP) {
		spin_lock(&mk_lock);
		long r = reply_cap_op(me, nr, slot, w);
		spin_unlock(&mk_lock);
		irq_enable();
		return r;
	}
	if (nr == SYS_REPLY) {
		long r = do_reply(me, w);
		irq_enable();
		return r;
	}
	int send = nr == SYS_CALL || nr == SYS_SEND;
	unsigned need = send ? R_SEND : R_RECV;
	/* A cap may move (transfer or receive slot): the derivation tree's
	 * lock, taken before the endpoint's. */
	int tree = extra != SLOT_NONE;
	if (tree)
		spin_lock(&mk_lock);
	uint64_t badge;
	unsigned rights;
	struct endpoint *e = ep_cap_lock(t, slot, need, &badge, &rights, &err);
	if (e && send && tree) {
		/* Decode the transfer now so a bad one fails the call. */
		struct cap *xc;
		if (!(rights & R_GRANT))
			err = -E_PERM;
		else if (!(xc = cap_lookup(t, extra, 0, 0, &err)))
			;
		else if (!cap_transferable(xc))
			err = -E_PERM;
	}
	/* A receive slot: in range, and its chunk there from now on (added
	 * now if need be, the last check), so a cap arriving later never
	 * needs one. */
	if (e && !send && tree)
		err = cspace_grow(t, extra);
	if (!e || err) {
		if (e)
			ep_unlock(e);
		if (tree)
			spin_unlock(&mk_lock);
		irq_enable();
		return err;
	}
	me->ep_slot = slot;
	long r;
	if (send) {
		for (int i = 0; i < IPC_WORDS; i++)
			me->msg[i] = w[i];
		me->badge = badge;
		me->xfer_slot = extra;
		r = do_send(me, e, nr == SYS_CALL, tree);
	} else if (nr == SYS_RECV) {
		me->recv_slot = extra;
		r = do_recv(me, e, tree);
	} else {
		/* SYS_REPLY_RECV. The caller waits through e (it called this
		 * endpoint): answer it and, when nobody else waits to send, wait
		 * on e and run it right here (direct switch). Otherwise answer
		 * it under its own endpoint's lock first. */
		struct thread *c = me->caller;
		me->recv_slot = extra;
		if (c && ipc_reply_waits(c, e, me->caller_seq)) {
			me->caller = NULL;
			set_reply(c, w);
			if (!e->senders && !e->notices && sched_can_direct(this_rq(), c) &&
			    !ipc_block(me, e, B_RECV)) {
				q_push(&e->receivers, &e->receivers_tail, me);
				set_result(me, -E_DEAD);
				block_and_run(me, e, c, tree);
				irq_enable();
				return RET_KEEP;
			}
			wake(c);
		} else if (c) {
			ep_unlock(e);
			do_reply(me, w);
			e = ep_cap_lock(t, slot, need, &badge, &rights, &err);
			if (!e) {
				if (tree)
					spin_unlock(&mk_lock);
				irq_enable();
				return err;
			}
		}
		r = do_recv(me, e, tree);
	}
	irq_enable();
	return r;
}
