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
 *   - SYS_REPLY_RECV with a valid (or no) receive slot whose CSpace chunk
 *     is there (the slow path adds a missing one first), on an endpoint cap
 *     with R_RECV, no sender and no death
 *     notice queued there, and a caller (not saved as a
 *     reply cap) waiting for our reply;
 *   - the caller is not being killed, and the partner was blocked in an
 *     IPC system call (ipc_user_resumable) and may run here now
 *     (sched_can_direct: affinity, no hart on its stack, no queued thread
 *     of a higher level).
 * Everything else (cap transfers, queued senders, saved reply caps,
 * page-fault calls, partners on other harts, killed threads, errors) goes
 * the slow way. Locking is the slow path's (ipc.c): the endpoint cap is
 * read with no lock under its slot's sequence count, and the checks and
 * the state change happen under the endpoint's lock, so a cap deleted or
 * revoked on another hart is either seen deleted here or deleted after
 * this call completed, as in the slow path. No global lock is taken.
 *
 * The words go straight from our saved registers to the partner's; we
 * block (state as the slow path leaves it) and the handoff (sched_handoff
 * here, then the end of user_vector, arch-riscv/uentry.S) resumes the
 * partner through the user-return path without switching kernel
 * contexts. */
#include "mk.h"

/* user_vector (arch-riscv/uentry.S) reads these thread fields itself. */
_Static_assert(offsetof(struct thread, uf) == 184, "THREAD_UF in uentry.S");
_Static_assert(offsetof(struct thread, on_cpu) == 120, "THREAD_ON_CPU in uentry.S");
_Static_assert(offsetof(struct thread, killed) == 124, "THREAD_KILLED in uentry.S");
_Static_assert(ONCPU_REQUEUE == 2, "ONCPU_REQUEUE in uentry.S");

/* Needs e locked; we already wait (ipc_block). The receiver p takes our
 * words and the badge; we wait for its reply. As deliver() + the call
 * half of do_send(). */
static inline __attribute__((always_inline))
void fast_call(struct thread *me, struct endpoint *e, uint64_t slot, uint64_t badge,
	       const struct trap_frame *from, struct thread *p)
{
	struct trap_frame *to = &p->uf->tf;
	e->receivers = p->rq_next;
	if (!e->receivers)
		e->receivers_tail = NULL;
	p->rq_next = NULL;
	for (int i = 0; i < IPC_WORDS; i++)
		to->regs[11 + i] = from->regs[11 + i];
	to->regs[15] = badge;
	to->regs[16] = 0;
	to->regs[10] = 0;
	uint64_t seq = ++me->call_seq;      /* a new call: replies for older ones find nothing */
	me->ep_slot = (long)slot;
	p->caller = me;
	p->caller_seq = seq;
}

/* Needs e locked; we already wait (ipc_block). Our caller p, waiting
 * through e, gets our words as its reply; we join e's receiver queue (no
 * sender is queued). As do_reply() + the waiting half of do_recv(). */
static inline __attribute__((always_inline))
void fast_reply_recv(struct thread *me, struct endpoint *e, uint64_t slot, uint64_t recv_slot,
		     struct trap_frame *from, struct thread *p)
{
	struct trap_frame *to = &p->uf->tf;
	for (int i = 0; i < IPC_WORDS; i++)
		to->regs[11 + i] = from->regs[11 + i];
	to->regs[15] = 0;
	to->regs[16] = 0;
	to->regs[10] = 0;
	me->caller = NULL;
	me->recv_slot = (long)recv_slot;
	me->ep_slot = (long)slot;
	me->rq_next = NULL;
	if (e->receivers_tail)
		e->receivers_tail->rq_next = me;
	else
		e->receivers = me;
	e->receivers_tail = me;
	from->regs[10] = (uint64_t)-E_DEAD;   /* overwritten when a sender comes */
}

/* Needs: irqs off (trap entry), stvec still user_vector (so: take no
 * trap, call nothing), the current thread trapped from user with an
 * ecall, uf its saved registers (all of them, sepc already past the
 * ecall); slot, w0..w3, extra and nr are its a0..a5 and a7 as saved
 * there, passed in registers by user_vector so that they need no loads.
 * Returns { NULL, NULL }, with nothing changed, when the call is not one
 * the fast path takes. Otherwise completes it, makes the partner current
 * (its address space in effect), drops the endpoint lock and returns
 * { caller, partner }: user_vector then hands the hart over, still on
 * nothing but the caller's frame. A leaf function on purpose, without a
 * frame pointer (no stack at all): everything that would need a call
 * falls back to the slow path. */
__attribute__((optimize("omit-frame-pointer")))
struct ipc_handoff ipc_fastpath(uint64_t slot, uint64_t w0, uint64_t w1, uint64_t w2, uint64_t w3,
				uint64_t extra, struct uframe *uf, uint64_t nr)
{
	struct ipc_handoff h = { NULL, NULL };
	/* The words are read from the frame where they are copied: held in
	 * registers all the way they would cost more in spills. */
	(void)w0, (void)w1, (void)w2, (void)w3;
	if (nr == SYS_CALL) {
		if (extra != (uint64_t)SLOT_NONE)
			return h;
	} else if (nr == SYS_REPLY_RECV) {
		if (__builtin_expect(extra != (uint64_t)SLOT_NONE && extra >= CSPACE_FIXED_SLOTS, 0) &&
		    (extra >= CSPACE_MAX_SLOTS || !cspace_chunk(this_rq()->cur->task, extra)))
			return h;
	} else {
		return h;
	}
	struct rq *rq = this_rq();
	struct thread *me = rq->cur;
	struct task *t = me->task;
	/* The cap, read with no lock (ipc.c ep_cap_lock); a slot out of range
	 * reads as empty. */
	struct ep_snap s;
	if (ep_snap_read(t, slot, &s) || s.type != CAP_ENDPOINT)
		return h;
	struct endpoint *e = s.e;
	unsigned rights = s.rights;
	ep_lock(e);
	if (!ep_snap_holds(&s))
		goto slow;
	struct thread *p;
	if (nr == SYS_CALL) {
		p = e->receivers;
		if (!(rights & R_SEND) || !__atomic_load_n(&e->recv_caps, __ATOMIC_RELAXED) || !p ||
		    !ipc_user_resumable(p) || !sched_can_direct(rq, p) || !sched_as_ready(rq, p->task))
			goto slow;
	} else {
		p = me->caller;
		if (!(rights & R_RECV) || e->senders || e->notices || !p ||
		    !ipc_reply_waits(p, e, me->caller_seq) ||
		    !ipc_user_resumable(p) || !sched_can_direct(rq, p) ||
		    !sched_as_ready(rq, p->task))
			goto slow;
	}
	/* Fixed while p's task lives (it does: p waits in it); read before
	 * the blocking exchange, which makes the compiler read again. */
	struct task *pt = p->task;
	uint64_t satp = pt->satp;
	int switch_as = satp != rq->cur_satp;
	if (nr == SYS_CALL) {
		if (ipc_block(me, e, B_REPLY))
			goto slow;
		fast_call(me, e, slot, s.badge, &uf->tf, p);
	} else {
		if (ipc_block(me, e, B_RECV))
			goto slow;
		fast_reply_recv(me, e, slot, extra, &uf->tf, p);
	}
	p->block = B_NONE;
	p->ep = NULL;
	sched_handoff(rq, me, p);
	if (switch_as)
		sched_satp_write(rq, pt, satp);
	h.prev = me;
	h.next = p;
slow:
	ep_unlock(e);
	return h;
}
