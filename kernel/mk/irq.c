/* Interrupts as messages (abi/patina/device.h SYS_IRQ_BIND, SYS_IRQ_ACK,
 * MSG_IRQ): a driver holding a line's IRQ cap binds the line to an
 * endpoint, and each interrupt of it becomes one message there.
 *
 * The line table has one entry per line of the interrupt controller
 * (kernel/irqchip.h). An entry is unbound (disabled at the controller) or
 * bound: an endpoint (no reference: the endpoint's death, or the loss of
 * its last receive cap, ends the binding, notice.c notice_ep_gone), the
 * badge of the cap it was bound with, the task that bound it (its reap
 * ends the binding), and its message: a struct notice of kind NK_IRQ,
 * delivered by the death notices' code (ipc.c ipc_notice_post, received
 * through recv_notice by SYS_RECV, SYS_REPLY_RECV and SYS_RECV_TIMED).
 *
 * Masking: the handler claims a line at the controller and does not
 * complete it; the controller forwards no new request of a claimed line,
 * so the line is masked with no register write at all until SYS_IRQ_ACK
 * completes it. So one message per line is outstanding at most, and a
 * level interrupt still asserted at the ack comes again. An ack is
 * accepted once the message was received (or dropped because nobody
 * could receive it), never while it waits on the endpoint. A line that
 * interrupts with no binding (a binding that just ended on another hart)
 * is completed and then disabled, so it cannot storm: completion first,
 * as the controller ignores completing a disabled line.
 *
 * Routing: every bound line goes to the first online hart with a context
 * on the controller: the boot hart (logical hart 0), except on a machine
 * with one controller a socket whose boot hart is not on the driven
 * one's socket. The boot hart is always online (a kernel booted with one
 * hart has only it), a line's
 * claim and completion then go through one context, and no interrupt
 * wakes every hart to find that one of them won the claim. A driver's
 * threads may run anywhere: the message wakes them on their own hart.
 *
 * Locking: the line lock (irq_lock, rank 25: after mk_lock, before the
 * endpoint locks) guards the table and every interrupt message that is
 * not queued or taken. SYS_IRQ_BIND, SYS_IRQ_ACK and the ends of a
 * binding hold mk_lock (cap lookups, task and endpoint lifetimes) and take
 * it inside; the interrupt handler takes it alone and posts under it
 * (an endpoint lock, then a run-queue lock to wake the receiver). Posting
 * straight from the handler is safe: those three locks are taken with
 * interrupts off everywhere, so the handler never interrupts their holder
 * on its own hart, it takes them in rank order, and it never takes
 * mk_lock (which may be held for long, DBG_HOLD_MKLOCK). */
#include <patina/device.h>
#include "mk.h"
#include "irqchip.h"
#include "frame.h"
#include "kstring.h"
#include "smp.h"

struct irq_line {
	struct endpoint *ep;        /* bound: where its interrupts go; NULL: unbound */
	uint64_t badge;             /* of the endpoint cap it was bound with */
	struct task *binder;        /* who bound it (with binder_gen) */
	uint32_t binder_gen;
	uint32_t hartid;            /* the hart it is routed to (its context claims it) */
	int claimed;                /* claimed, not completed: masked until the ack */
	int repost;                 /* an interrupt came while msg was still taken: post it again */
	struct notice msg;          /* its message (kind NK_IRQ) */
};

static spinlock_t irq_lock = SPINLOCK_INIT_CLASS(&lock_class_irq);
static struct irq_line *lines;      /* irqchip_lines() entries; NULL: no controller */
static uint32_t nlines;
static uint32_t nbound;             /* bound lines: the scans at ends are skipped at 0 */
static unsigned long unbound_irqs;  /* interrupts of unbound lines (irq_test_unbound) */

int irq_init(void)
{
	nlines = irqchip_lines();
	if (!nlines)
		return 0;
	uint64_t bytes = (uint64_t)nlines * sizeof(struct irq_line);
	paddr_t pa;
	if (frame_alloc_run((bytes + FRAME_SIZE - 1) / FRAME_SIZE, &pa)) {
		nlines = 0;
		return -E_NOMEM;
	}
	lines = phys_to_virt(pa);
	memset(lines, 0, bytes);
	for (uint32_t i = 1; i < nlines; i++) {
		struct notice *n = &lines[i].msg;
		n->state = N_REGISTERED;
		n->kind = NK_IRQ;
		n->msg[0] = MSG_IRQ;
		n->msg[1] = i;
	}
	return 0;
}

/* The hart bound lines go to: the first online hart (the boot hart) that
 * has a context on the controller; on a machine with one controller a
 * socket, only that socket's harts have one. */
static uint32_t route_hart(void)
{
	for (uint32_t i = 0; i < ncpus; i++)
		if (irqchip_hart_context(cpus[i].hartid) >= 0)
			return cpus[i].hartid;
	return cpus[0].hartid;
}

static struct irq_line *line_of(const struct notice *n)
{
	return (struct irq_line *)((char *)n - offsetof(struct irq_line, msg));
}

/* Needs irq_lock, L bound. Post L's message on its endpoint, or ask the
 * receive that still holds it to post it again once it gave it back. */
static void post(struct irq_line *L)
{
	/* A receive turns N_QUEUED into N_TAKEN under the endpoint lock
	 * alone: either way the message is not ours to post now. */
	if (__atomic_load_n(&L->msg.state, __ATOMIC_RELAXED) != N_REGISTERED) {
		L->repost = 1;
		return;
	}
	L->msg.badge = L->badge;
	ipc_notice_post(L->ep, &L->msg);
}

/* Needs irq_lock, L bound. The binding ends: its message is taken back
 * from the endpoint's queue, a claimed interrupt is completed, and the
 * line is disabled, so the next driver can bind it. */
static void line_end(struct irq_line *L, uint32_t line)
{
	if (!ipc_notice_unqueue(L->ep, &L->msg)) {
		L->msg.next = NULL;     /* the ended endpoint's queue is walked already */
		L->msg.state = N_REGISTERED;
	}
	if (L->claimed)
		irqchip_complete(line, L->hartid);
	irqchip_disable(line, L->hartid);
	L->ep = NULL;
	L->binder = NULL;
	L->claimed = 0;
	L->repost = 0;
	nbound--;
}

int irq_bind(uint32_t line, struct endpoint *e, uint64_t badge, struct task *binder)
{
	if (!line || line >= nlines)
		return -E_NOENT;
	int err = 0;
	spin_lock(&irq_lock);
	struct irq_line *L = &lines[line];
	if (L->ep && L->ep != e) {
		err = -E_BUSY;
	} else if (L->ep) {
		L->badge = badge;       /* the same endpoint: the latest cap's badge */
		L->binder = binder;
		L->binder_gen = binder->gen;
	} else {
		L->ep = e;
		L->badge = badge;
		L->binder = binder;
		L->binder_gen = binder->gen;
		L->hartid = route_hart();
		L->claimed = 0;
		L->repost = 0;
		nbound++;
		irqchip_enable(line, L->hartid);
	}
	spin_unlock(&irq_lock);
	return err;
}

int irq_unbind(uint32_t line)
{
	if (!line || line >= nlines)
		return -E_NOENT;
	int err = 0;
	spin_lock(&irq_lock);
	if (lines[line].ep)
		line_end(&lines[line], line);
	else
		err = -E_NOENT;
	spin_unlock(&irq_lock);
	return err;
}

int irq_ack(uint32_t line)
{
	if (!line || line >= nlines)
		return -E_AGAIN;
	int err = -E_AGAIN;
	spin_lock(&irq_lock);
	struct irq_line *L = &lines[line];
	if (L->ep && L->claimed &&
	    __atomic_load_n(&L->msg.state, __ATOMIC_RELAXED) == N_REGISTERED) {
		L->claimed = 0;
		irqchip_complete(line, L->hartid);
		err = 0;
	}
	spin_unlock(&irq_lock);
	return err;
}

void irq_msg_received(struct notice *n)
{
	struct irq_line *L = line_of(n);
	spin_lock(&irq_lock);
	n->state = N_REGISTERED;
	if (L->ep && L->repost) {
		L->repost = 0;
		post(L);
	}
	spin_unlock(&irq_lock);
}

void irq_ep_gone(struct endpoint *e)
{
	spin_lock(&irq_lock);
	for (uint32_t i = 1; nbound && i < nlines; i++)
		if (lines[i].ep == e)
			line_end(&lines[i], i);
	spin_unlock(&irq_lock);
}

void irq_task_gone(struct task *t)
{
	spin_lock(&irq_lock);
	for (uint32_t i = 1; nbound && i < nlines; i++)
		if (lines[i].ep && lines[i].binder == t && lines[i].binder_gen == t->gen)
			line_end(&lines[i], i);
	spin_unlock(&irq_lock);
}

void irq_external(void)
{
	uint32_t me = this_cpu()->hartid, line;
	while ((line = irqchip_claim(me))) {
		spin_lock(&irq_lock);
		struct irq_line *L = line < nlines ? &lines[line] : NULL;
		if (L && L->ep && L->hartid == me) {
			L->claimed = 1;
			post(L);
		} else {
			irqchip_complete(line, me);
			irqchip_disable(line, me);
			unbound_irqs++;
		}
		spin_unlock(&irq_lock);
	}
}

unsigned long irq_unbound_count(void)
{
	return __atomic_load_n(&unbound_irqs, __ATOMIC_RELAXED);
}

/* The IRQ cap in t's slot (R_CONTROL): its line in *line. Needs mk_lock.
 * 0, or the lookup's error. */
static int irq_cap_line(struct task *t, long slot, uint32_t *line)
{
	int err = 0;
	struct cap *c = cap_lookup(t, slot, CAP_IRQ, R_CONTROL, &err);
	if (c)
		*line = (uint32_t)c->lo;
	return err;
}

/* SYS_IRQ_BIND (patina/device.h). Needs: no lock held. Decode the caps
 * (an IRQ cap with R_CONTROL; an endpoint cap with R_SEND, or SLOT_NONE),
 * then bind or unbind: 0, or an error with nothing changed: -E_BADCAP /
 * -E_PERM (the caps), -E_BUSY (bound to another endpoint), -E_NOENT
 * (unbinding a line that is not bound, or a line the controller lacks). */
long sys_irq_bind(struct task *t, long islot, long eslot)
{
	uint32_t line = 0;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	int err = irq_cap_line(t, islot, &line);
	struct cap *ec = NULL;
	if (!err && eslot != SLOT_NONE)
		ec = cap_lookup(t, eslot, CAP_ENDPOINT, R_SEND, &err);
	if (!err)
		err = ec ? irq_bind(line, ec->o.ep, ec->badge, t) : irq_unbind(line);
	spin_unlock_irqrestore(&mk_lock, f);
	return err;
}

/* SYS_IRQ_ACK (patina/device.h). Needs: no lock held. 0 (the line is
 * completed: its next request comes), or -E_BADCAP / -E_PERM (the cap),
 * -E_AGAIN (no interrupt of the line waits for an acknowledgement). */
long sys_irq_ack(struct task *t, long islot)
{
	uint32_t line = 0;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	int err = irq_cap_line(t, islot, &line);
	if (!err)
		err = irq_ack(line);
	spin_unlock_irqrestore(&mk_lock, f);
	return err;
}
