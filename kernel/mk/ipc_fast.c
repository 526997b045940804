/* IPC fast path: SYS_CALL to a waiting receiver and SYS_REPLY_RECV to a
 * waiting caller, the two halves of a client/server round trip, on one
 * hart. RISC-V's user_vector calls it for every ecall before the general
 * dispatch; it either completes the call and tells user_vector to hand
 * the hart to the partner, or returns having changed nothing, and the
 * slow path (ipc.c) does the whole call. An ISA whose entry does not call
 * it (ARCH_IPC_FAST_IN_ENTRY 0: x86-64) gets it from the generic
 * system-call entry instead (ipc_fast_syscall, at the end).
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
 *     IPC system call (ipc_user_task) and may run here now
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

/* user_vector (arch-riscv/uentry.S) reads these thread fields itself;
 * elsewhere the hand-over is C (ipc_fast_syscall) and the offsets (which
 * differ with struct kctx) are nobody's business. */
#ifdef __riscv
_Static_assert(offsetof(struct thread, uf) == 184, "THREAD_UF in uentry.S");
_Static_assert(offsetof(struct thread, on_cpu) == 120, "THREAD_ON_CPU in uentry.S");
_Static_assert(offsetof(struct thread, killed) == 124, "THREAD_KILLED in uentry.S");
#endif
_Static_assert(ONCPU_REQUEUE == 2, "ONCPU_REQUEUE in uentry.S");
_Static_assert(SYS_CALL == 18 && SYS_REPLY_RECV == 22, "SYS_CALL, SYS_REPLY_RECV in uentry.S");

/* Needs e locked; we already wait (ipc_block). The receiver p takes our
 * call and the badge; we wait for its reply. As deliver() + the call half
 * of do_send(), but for the words themselves, which user_vector moves
 * from our registers straight into p's (a0 and a6 it zeroes). */
static inline __attribute__((always_inline))
void fast_call(struct thread *me, struct endpoint *e, uint64_t slot, uint64_t badge,
	       struct thread *p)
{
	e->receivers = p->rq_next;
	if (!e->receivers)
		e->receivers_tail = NULL;
	p->rq_next = NULL;
	uf_set_arg(&p->uf->tf, 5, badge);   /* a message's badge register */
	uint64_t seq = ++me->call_seq;      /* a new call: replies for older ones find nothing */
	me->ep_slot = (long)slot;
	p->caller = me;
	p->caller_seq = seq;
}

/* Needs e locked; we already wait (ipc_block). Our caller, waiting
 * through e, gets our reply: the words as in fast_call, and a5 = 0,
 * which user_vector writes too. We join e's receiver queue (no sender is
 * queued). As do_reply() + the waiting half of do_recv(). */
static inline __attribute__((always_inline))
void fast_reply_recv(struct thread *me, struct endpoint *e, uint64_t slot, uint64_t recv_slot,
		     struct trap_frame *from)
{
	me->caller = NULL;
	me->recv_slot = (long)recv_slot;
	me->ep_slot = (long)slot;
	me->rq_next = NULL;
	if (e->receivers_tail)
		e->receivers_tail->rq_next = me;
	else
		e->receivers = me;
	e->receivers_tail = me;
	uf_set(from, UREG_RET, (uint64_t)-E_DEAD);   /* overwritten when a sender comes */
}

/* The fast path of one call kind (call: SYS_CALL, else SYS_REPLY_RECV;
 * a constant, so each entry below is its own straight line). Needs: irqs
 * off (trap entry), stvec still user_vector (so: take no trap, call
 * nothing), the current thread trapped from user with that ecall, uf its
 * saved registers (sepc already past the ecall; t0..t6 not saved: a
 * system call does not keep them); slot and extra are its a0 and a5,
 * passed in registers by user_vector so that they need no loads; its
 * words wait in s2..s5 (user_vector's, untouched here). Returns { NULL,
 * NULL }, with nothing changed, when the call is not one the fast path
 * takes. Otherwise completes it, makes the partner current (its address
 * space in effect), drops the endpoint lock and returns { caller,
 * partner }: user_vector then hands the hart over, still on nothing but
 * the caller's frame. A leaf on purpose, built without a frame pointer
 * (kernel/meson.build: s0 is one more register for it): everything that
 * would need a call falls back to the slow path. */
static inline __attribute__((always_inline))
struct ipc_handoff fastpath(int call, uint64_t slot, uint64_t extra, struct uframe *uf)
{
	struct ipc_handoff h = { NULL, NULL };
	if (call) {
		if (extra != (uint64_t)SLOT_NONE)
			return h;
	} else {
		if (__builtin_expect(extra != (uint64_t)SLOT_NONE && extra >= CSPACE_FIXED_SLOTS, 0) &&
		    (extra >= CSPACE_MAX_SLOTS || !cspace_chunk(this_rq()->cur->task, extra)))
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
	struct task *pt;      /* p's task: fixed while p waits in it */
	if (call) {
		p = e->receivers;
		if (!(rights & R_SEND) || !__atomic_load_n(&e->recv_caps, __ATOMIC_RELAXED) || !p ||
		    !(pt = ipc_user_task(p)) || !sched_can_direct(rq, p))
			goto slow;
	} else {
		p = me->caller;
		if (!(rights & R_RECV) || e->senders || e->notices || !p ||
		    !ipc_reply_waits(p, e, me->caller_seq) ||
		    !(pt = ipc_user_task(p)) || !sched_can_direct(rq, p))
			goto slow;
	}
	/* Read before the blocking exchange, which makes the compiler read
	 * again. */
	uint64_t token = pt->as_token;
	int switch_as = token != rq->cur_token;
	if (switch_as && !sched_as_ready(rq, pt))
		goto slow;
	if (call) {
		if (ipc_block(me, e, B_REPLY))
			goto slow;
		fast_call(me, e, slot, s.badge, p);
	} else {
		if (ipc_block(me, e, B_RECV))
			goto slow;
		fast_reply_recv(me, e, slot, extra, &uf->tf);
	}
	p->block = B_NONE;
	p->ep = NULL;
	sched_handoff(rq, me, p);
	if (switch_as)
		sched_as_write(rq, pt, token);
	h.prev = me;
	h.next = p;
slow:
	ep_unlock(e);
	return h;
}

/* user_vector's two entries (the contract above; the unused parameters
 * keep slot, extra and uf in the registers the ecall left them in). */
struct ipc_handoff ipc_fast_call(uint64_t slot, uint64_t a1, uint64_t a2, uint64_t a3, uint64_t a4,
				 uint64_t extra, struct uframe *uf)
{
	(void)a1, (void)a2, (void)a3, (void)a4;
	return fastpath(1, slot, extra, uf);
}

struct ipc_handoff ipc_fast_reply_recv(uint64_t slot, uint64_t a1, uint64_t a2, uint64_t a3,
				       uint64_t a4, uint64_t extra, struct uframe *uf)
{
	(void)a1, (void)a2, (void)a3, (void)a4;
	return fastpath(0, slot, extra, uf);
}

#if !ARCH_IPC_FAST_IN_ENTRY
/* The generic entry's fast path (mk.h). What user_vector's hand-over
 * does after a taken call, in C: the words (arguments 1..4) into the
 * partner's frame, its result 0, its cap-transfer word 0, and its badge
 * 0 after a reply (fast_call wrote it after a call); then the partner
 * back to user through sched_handoff_done on the free stack below its
 * frame. */
void ipc_fast_syscall(struct uframe *uf)
{
	const struct trap_frame *tf = &uf->tf;
	uint64_t nr = uf_get(tf, UREG_SYSNO);
	if (nr != SYS_CALL && nr != SYS_REPLY_RECV)
		return;
	int call = nr == SYS_CALL;
	struct ipc_handoff h = call ? fastpath(1, uf_arg(tf, 0), uf_arg(tf, 5), uf)
				    : fastpath(0, uf_arg(tf, 0), uf_arg(tf, 5), uf);
	if (!h.next)
		return;
	struct trap_frame *to = &h.next->uf->tf;
	for (unsigned i = 1; i <= 4; i++)
		uf_set_arg(to, i, uf_arg(tf, i));
	uf_set_arg(to, 6, 0);
	if (!call)
		uf_set_arg(to, 5, 0);
	uf_set(to, UREG_RET, 0);     /* last: it may be argument 0's register */
	sched_resume_on(h.prev, h.next, h.next->uf);
}
#endif
