/* Messages the kernel sends (struct notice, mk.h): death notices here,
 * and the interrupt messages of bound lines (irq.c), which share their
 * delivery (ipc.c ipc_notice_post, recv_notice) and come back through
 * notice_received and notice_ep_gone.
 *
 * Death notices (SYS_TASK_NOTIFY; the message: abi/patina/syscall.h
 * MSG_DEATH): a task can be asked to announce its death to an endpoint,
 * so a pager, a server or a parent learns it without polling.
 *
 * A registration is a struct notice from a static pool, made by one task
 * (the watcher) about a task (the watched; itself allowed): at most one
 * per (watched, watcher) pair, NOTIFY_WATCHERS_MAX per watched task.
 * Everything it will need is allocated at registration and charged then,
 * as one endpoint, to the watcher's endpoint quota: sending it at the
 * death can neither fail nor block. Its life:
 *   registered  on the watched task's list, naming its endpoint with no
 *               reference (the endpoint's death frees it, notice_ep_gone);
 *   sent        when the reaper has finished the watched task (TASK_DEAD:
 *               exit status final, threads gone, caps deleted), by
 *               ipc_notice_post: a receiver waiting on the endpoint gets
 *               it at once (the notice is freed), else it is queued on
 *               the endpoint; when nobody can receive there it is freed;
 *   queued      the next receive on the endpoint takes it, ahead of any
 *               queued sender (ipc.c recv_notice), and frees it once it
 *               has dropped its locks; losing the last receive cap frees
 *               it, and so does the endpoint's death.
 * The watcher may replace a registration (a new endpoint and badge, no new
 * charge) or cancel it while the watched task is not dead. The watcher's
 * own death does not cancel it: as for an endpoint it paid for, the charge
 * passes to its parent at the reap (notice_recharge), whose quota return
 * left it counted there, and goes back when the notice is freed.
 *
 * Locking: mk_lock guards the pool, the watched tasks' lists, the charges
 * and a registration's fields; a queued notice is its endpoint's (ep_lock,
 * taken under mk_lock as everywhere, mk.h); a notice a receiver took off
 * the queue is that receiver's until it frees it under mk_lock. */
#include "mk.h"
#include "pagewait.h"
#include "failalloc.h"
#include "kstring.h"

#define MAX_NOTICES 256     /* the pool: E_NOMEM beyond */

static struct notice notices[MAX_NOTICES];
static unsigned long nlive;         /* notices not free (mk_lock) */

unsigned long notices_live(void)
{
	return nlive;
}

/* Needs mk_lock. A free notice (state N_REGISTERED, on no list) charged
 * to t's endpoint quota, or NULL with *err: -E_QUOTA when the quota is
 * used up, -E_NOMEM when the pool is empty (nothing charged then). */
static struct notice *notice_alloc(struct task *t, int *err)
{
	if (t->eps_used >= t->ep_quota) {
		*err = -E_QUOTA;
		return NULL;
	}
	for (int i = failalloc_fail() ? MAX_NOTICES : 0; i < MAX_NOTICES; i++) {
		struct notice *n = &notices[i];
		if (n->state != N_FREE)
			continue;
		memset(n, 0, sizeof *n);
		n->state = N_REGISTERED;
		n->charged = t;
		n->charged_gen = t->gen;
		t->eps_used++;
		nlive++;
		return n;
	}
	*err = -E_NOMEM;
	return NULL;
}

void notice_free(struct notice *n)
{
	struct task *c = n->charged;
	if (c && c->state != TASK_FREE && c->gen == n->charged_gen)
		c->eps_used--;
	memset(n, 0, sizeof *n);      /* N_FREE */
	nlive--;
}

/* Needs mk_lock; n is registered on n->watched. Take it off that list. */
static void unregister(struct notice *n)
{
	struct notice **pp = &n->watched->notices;
	while (*pp && *pp != n)
		pp = &(*pp)->next;
	if (*pp)
		*pp = n->next;
	n->next = NULL;
	n->watched = NULL;
}

/* Needs mk_lock. w's registration made by task t, or NULL; *count is how
 * many registrations w has. */
static struct notice *notice_find(struct task *w, const struct task *t, int *count)
{
	struct notice *found = NULL;
	int k = 0;
	for (struct notice *n = w->notices; n; n = n->next, k++)
		if (n->watcher == t && n->watcher_gen == t->gen)
			found = n;
	*count = k;
	return found;
}

/* SYS_TASK_NOTIFY (abi/patina/syscall.h). Needs: mk_lock NOT held. Decode
 * (caps, the task's state, the limit, the quota, the pool) then perform:
 * 0, or an error with nothing changed: -E_BADCAP / -E_PERM (a slot that is
 * not a task cap with R_CONTROL or an endpoint cap with R_SEND), -E_DEAD
 * (registering on a task that is not alive), -E_NOENT (cancelling with
 * nothing registered), -E_BUSY (NOTIFY_WATCHERS_MAX watch it already),
 * -E_QUOTA, -E_NOMEM. */
long sys_task_notify(struct task *t, long tslot, long eslot)
{
	int err = 0, count = 0;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct cap *tc = cap_lookup(t, tslot, CAP_TASK, R_CONTROL, &err);
	struct cap *ec = NULL;
	if (tc && eslot != SLOT_NONE)
		ec = cap_lookup(t, eslot, CAP_ENDPOINT, R_SEND, &err);
	struct task *w = err ? NULL : tc->o.task;
	struct notice *n = w ? notice_find(w, t, &count) : NULL;
	if (w && !ec && !n)
		err = -E_NOENT;
	else if (w && ec && w->state != TASK_ALIVE)
		err = -E_DEAD;        /* the reaper may have sent them all already */
	else if (w && ec && !n && count >= NOTIFY_WATCHERS_MAX)
		err = -E_BUSY;
	else if (w && ec && !n)
		n = notice_alloc(t, &err);     /* last: nothing can fail after it */
	if (!err && !ec) {
		unregister(n);
		notice_free(n);
	} else if (!err) {
		if (n->state == N_REGISTERED && !n->watched) {   /* new */
			n->watched = w;
			n->watcher = t;
			n->watcher_gen = t->gen;
			n->next = w->notices;
			w->notices = n;
		}
		n->ep = ec->o.ep;
		n->badge = ec->badge;
	}
	spin_unlock_irqrestore(&mk_lock, f);
	return err;
}

/* Needs mk_lock; t has just become TASK_DEAD (reap). Send every notice
 * registered on t; none can fail or block (ipc_notice_post). */
void notice_task_dead(struct task *t)
{
	struct notice *n;
	while ((n = t->notices)) {
		t->notices = n->next;
		n->next = NULL;
		n->watched = NULL;
		n->msg[0] = MSG_DEATH;
		n->msg[1] = (uint64_t)(long)t->exit_status;
		n->msg[2] = (uint64_t)t->id;
		n->msg[3] = 0;
		if (!ipc_notice_post(n->ep, n))
			notice_free(n);
	}
}

/* A receive took n off its endpoint (ipc.c recv_notice): a death
 * notice is used up and freed; an interrupt message goes back to its
 * line (irq.c), a page-fault message to its page (pagewait.c). Needs:
 * irqs off, no lock held. */
void notice_received(struct notice *n)
{
	if (n->kind == NK_IRQ) {
		irq_msg_received(n);
		return;
	}
	if (n->kind == NK_FAULT) {
		pagewait_msg_received(n);
		return;
	}
	spin_lock(&mk_lock);
	notice_free(n);
	spin_unlock(&mk_lock);
}

/* Needs mk_lock; nobody can receive on e any more (its last receive cap
 * went, or e itself: ep_put), and q is the queue of notices the caller
 * took off e under e's lock. Free the death notices among them and every
 * registration naming e (a scan of the pool, skipped while no notice
 * exists); end every interrupt line bound to e, which takes its message
 * back whether it was on q or not (irq.c); end every page wait whose
 * message went to e, its threads killed (pagewait.c). */
void notice_ep_gone(struct endpoint *e, struct notice *q)
{
	q = pagewait_ep_gone(e, q);
	while (q) {
		struct notice *n = q;
		q = n->next;
		if (n->kind == NK_DEATH)
			notice_free(n);
	}
	irq_ep_gone(e);
	for (int i = 0; nlive && i < MAX_NOTICES; i++) {
		struct notice *n = &notices[i];
		if (n->state == N_REGISTERED && n->ep == e && n->watched) {
			unregister(n);
			notice_free(n);
		}
	}
}

/* Needs mk_lock. Task `from` is being reaped: notices it paid for (any
 * state) are paid by `to` (its parent, whose quota return leaves them
 * counted) or by nobody. */
void notice_recharge(struct task *from, struct task *to)
{
	for (int i = 0; nlive && i < MAX_NOTICES; i++) {
		struct notice *n = &notices[i];
		if (n->state == N_FREE || n->charged != from || n->charged_gen != from->gen)
			continue;
		n->charged = to;
		n->charged_gen = to ? to->gen : 0;
	}
}
