/* IPC fast path: SYS_CALL to a waiting receiver and SYS_REPLY_RECV to a
 * waiting caller, the two halves of a client/server round trip, on one
 * hart. user_vector calls it for every ecall before the general dispatch;
 * it either completes the call and tells user_vector to hand the hart to
 * the partner, or returns having changed nothing, and the slow path
 * (ipc.c) does the whole call.
 *
 * It takes the call only when the slow path would do exactly the same
 * thing with nothing more to check:
 *   - SYS_CALL without a cap transfer, on an endpoint cap with R_SEND in a
 *     valid slot, whose endpoint has a receiver waiting;
 *   - SYS_REPLY_RECV with a valid (or no) receive slot, on an endpoint cap
 *     with R_RECV, no sender queued there, and a caller (not saved as a
 *     reply cap) waiting for our reply;
 *   - the caller is not being killed, and the partner was blocked in an
 *     IPC system call (ipc_user_resumable) and may run here now
 *     (sched_can_direct: affinity, no hart on its stack, no queued thread
 *     of a higher level).
 * Everything else (cap transfers, queued senders, saved reply caps,
 * page-fault calls, partners on other harts, killed threads, errors) goes
 * the slow way. The checks and the state change happen under mk_lock, the
 * lock the slow path and every cap operation take, so a cap deleted or
 * revoked on another hart is either seen deleted here or deleted after
 * this call completed, as in the slow path.
 *
 * The words go straight from our saved registers to the partner's; we
 * block (state as the slow path leaves it) and the handoff (sched_handoff,
 * then sched_resume_on from user_vector) resumes the partner through the
 * user-return path without switching kernel contexts. */
#include "mk.h"

/* user_vector (arch-riscv/uentry.S) loads the partner's frame pointer. */
_Static_assert(offsetof(struct thread, uf) == 184, "THREAD_UF in uentry.S");

/* Needs mk_lock. The receiver p takes our words and the badge of cap c;
 * we wait for its reply. As deliver() + the call half of do_send(). */
static void fast_call(struct thread *me, struct endpoint *e, const struct cap *c, struct thread *p)
{
	struct trap_frame *from = &me->uf->tf, *to = &p->uf->tf;
	e->receivers = p->rq_next;
	if (!e->receivers)
		e->receivers_tail = NULL;
	p->rq_next = NULL;
	for (int i = 0; i < IPC_WORDS; i++)
		to->regs[11 + i] = from->regs[11 + i];
	to->regs[15] = c->badge;
	to->regs[16] = 0;
	to->regs[10] = 0;
	me->call_seq++;      /* a new call: reply caps for older ones are dead */
	me->ep_slot = (long)from->regs[10];
	p->caller = me;
	me->block = B_REPLY;
}

/* Needs mk_lock. Our caller p gets our words as its reply; we wait on e
 * (its receiver queue is ours to join: no sender is queued). As
 * do_reply() + the waiting half of do_recv(). */
static void fast_reply_recv(struct thread *me, struct endpoint *e, struct thread *p)
{
	struct trap_frame *from = &me->uf->tf, *to = &p->uf->tf;
	for (int i = 0; i < IPC_WORDS; i++)
		to->regs[11 + i] = from->regs[11 + i];
	to->regs[15] = 0;
	to->regs[16] = 0;
	to->regs[10] = 0;
	me->caller = NULL;
	me->recv_slot = (long)from->regs[15];
	me->ep_slot = (long)from->regs[10];
	me->block = B_RECV;
	me->ep = e;
	me->rq_next = NULL;
	if (e->receivers_tail)
		e->receivers_tail->rq_next = me;
	else
		e->receivers = me;
	e->receivers_tail = me;
	from->regs[10] = (uint64_t)-E_DEAD;   /* overwritten when a sender comes */
}

/* Needs: irqs off (trap entry), the current thread trapped from user with
 * an ecall, uf its saved registers. Returns { NULL, NULL }, with nothing
 * changed, when the call is not one the fast path takes. Otherwise
 * completes it, makes the partner current (its address space in effect),
 * drops mk_lock and returns { caller, partner }: user_vector then goes on
 * with sched_resume_on, still on nothing but the caller's frame. A leaf
 * function on purpose (no frame, no saved registers): everything that
 * would need a call falls back to the slow path. */
struct ipc_handoff ipc_fastpath(struct uframe *uf)
{
	struct ipc_handoff h = { NULL, NULL };
	struct trap_frame *tf = &uf->tf;
	uint64_t nr = tf->regs[17];
	uint64_t slot = tf->regs[10];
	uint64_t extra = tf->regs[15];
	if (nr == SYS_CALL) {
		if (extra != (uint64_t)SLOT_NONE)
			return h;
	} else if (nr == SYS_REPLY_RECV) {
		if (extra != (uint64_t)SLOT_NONE && extra >= CSPACE_SLOTS)
			return h;
	} else {
		return h;
	}
	if (slot >= CSPACE_SLOTS)
		return h;
	struct rq *rq = this_rq();
	struct thread *me = rq->cur;
	const struct cap *c = &me->task->cspace[slot];
	spin_lock(&mk_lock);
	if (me->killed || c->type != CAP_ENDPOINT)
		goto slow;
	struct endpoint *e = c->o.ep;
	struct thread *p;
	if (nr == SYS_CALL) {
		p = e->receivers;
		if (!(c->rights & R_SEND) || !e->recv_caps || !p || !ipc_user_resumable(p) ||
		    !sched_can_direct(rq, p) || !sched_as_ready(rq, p->task))
			goto slow;
		fast_call(me, e, c, p);
	} else {
		p = me->caller;
		if (!(c->rights & R_RECV) || e->senders || !p || p->state != T_BLOCKED ||
		    p->block != B_REPLY || !ipc_user_resumable(p) || !sched_can_direct(rq, p) ||
		    !sched_as_ready(rq, p->task))
			goto slow;
		fast_reply_recv(me, e, p);
	}
	tf->sepc += 4;
	me->state = T_BLOCKED;
	p->block = B_NONE;
	p->ep = NULL;
	sched_handoff(rq, me, p);
	if (p->task->satp != rq->cur_satp)
		sched_satp_write(rq, p->task, p->task->satp);
	h.prev = me;
	h.next = p;
slow:
	spin_unlock(&mk_lock);
	return h;
}
