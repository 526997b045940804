/* Page waits: threads blocked on a page until a commit fixes it, and the
 * one message per page that asks a pager to (pagewait.h; the asynchronous
 * fault protocol of docs/pagers.md).
 *
 * An entry (struct pw_page) is one waited-on page: its key (a task's page
 * address, or a memory object's page), the threads waiting there, and its
 * message, a struct notice of kind NK_FAULT sent like a death notice
 * (ipc_notice_post). Entries of a task are on a list of that task
 * (t->pw_pages): the waits are few (one per blocked thread at most), a
 * commit walks the list once, and a task with none costs the commit one
 * load of t->pw_count. Entries of objects share one list (obj_pages,
 * counted in obj_count): an object keeps no field for them, and a supply
 * with no object page waited on anywhere costs one load.
 *
 * An entry's message is in one of three states: not queued (never sent,
 * or delivered), queued on its endpoint (or on the queue a dying
 * endpoint's last receive cap took off it, until pagewait_ep_gone), or
 * taken by a receiver that has not called notice_received yet. An entry
 * whose threads are all gone is unlisted at once; it goes back to the
 * pool when its message is not queued or taken, else as soon as that
 * ends (an orphan: pagewait_msg_received or pagewait_ep_gone frees it).
 *
 * The entry names its endpoint with no reference: the sleeping threads'
 * own references keep it while they wait, and the endpoint's end
 * (notice_ep_gone, under mk_lock, before the endpoint can be reused) ends
 * every entry that names it.
 *
 * No lost wake-up: pagewait_enter counts the wait in t->pw_count before
 * the caller's second look at the page (under that page's cursor); a
 * commit reads t->pw_count after its cursor is released. A full fence on
 * each side between the two: either the look sees the commit or the
 * commit sees the wait. */
#include "pagewait.h"
#include "kstring.h"

/* One entry per thread struct (each waits on one page at most), and half
 * as many again for orphans; an entry is 152 bytes, so at MAX_THREADS 4096
 * the pool takes about 0.9 MiB. Full, a fault cannot wait (-E_NOMEM). */
#define PW_POOL (MAX_THREADS + MAX_THREADS / 2)

struct pw_page {
	int used;
	int orphan;                 /* no thread waits: freed when its message is let go */
	int sent;                   /* its message was posted */
	struct pw_key key;
	struct thread *waiters;     /* linked by pw_next */
	struct pw_page *next;       /* task->pw_pages */
	struct notice msg;          /* NK_FAULT */
};

static struct pw_page pool[PW_POOL];
static spinlock_t pw_lock = SPINLOCK_INIT_CLASS(&lock_class_pagewait);
static unsigned long pw_used, pw_threads;
static struct pw_page *obj_pages;     /* entries keyed PW_OBJECT */
static unsigned obj_count;            /* how many: read with no lock by a supply */

/* The list an entry of owner (kind) goes on, and its count. */
static struct pw_page **list_of(int kind, void *owner, unsigned **count)
{
	if (kind == PW_OBJECT) {
		*count = &obj_count;
		return &obj_pages;
	}
	struct task *t = owner;
	*count = &t->pw_count;
	return &t->pw_pages;
}
static int pw_hint;             /* under pw_lock: no free entry lies below it */

unsigned long pagewait_live(void)
{
	return __atomic_load_n(&pw_used, __ATOMIC_RELAXED);
}

unsigned long pagewait_threads(void)
{
	return __atomic_load_n(&pw_threads, __ATOMIC_RELAXED);
}

static struct pw_page *page_of(struct notice *n)
{
	return (struct pw_page *)((char *)n - offsetof(struct pw_page, msg));
}

/* Needs pw_lock. p back to the pool. */
static void entry_free(struct pw_page *p)
{
	memset(p, 0, sizeof *p);
	pw_used--;
	if (p - pool < pw_hint)
		pw_hint = (int)(p - pool);
}

/* Needs pw_lock; p listed on its task and without waiters. Unlist it;
 * free it unless its message is queued where it cannot be taken back or
 * taken by a receiver (an orphan until that ends). */
static void entry_release(struct pw_page *p)
{
	unsigned *count;
	struct pw_page **pp = list_of(p->key.kind, p->key.owner, &count);
	while (*pp != p)
		pp = &(*pp)->next;
	*pp = p->next;
	p->next = NULL;
	__atomic_sub_fetch(count, 1, __ATOMIC_RELAXED);
	if (p->msg.state == N_QUEUED && ipc_notice_unqueue(p->msg.ep, &p->msg))
		p->msg.state = N_REGISTERED;
	if (p->msg.state == N_REGISTERED)
		entry_free(p);
	else
		p->orphan = 1;
}

/* Needs pw_lock; th waits on p. Take it off p's list with verdict v,
 * waking it if it sleeps; release p when th was its last thread. */
static void waiter_end(struct pw_page *p, struct thread *th, int v)
{
	struct thread **pp = &p->waiters;
	while (*pp != th)
		pp = &(*pp)->pw_next;
	*pp = th->pw_next;
	th->pw_next = NULL;
	th->pw = NULL;
	th->pw_verdict = v;
	pw_threads--;
	if (th->state == T_BLOCKED && th->block == B_PAGE) {
		th->block = B_NONE;
		th->state = T_RUNNABLE;
		sched_wake(th);
	}
	if (!p->waiters)
		entry_release(p);
}

/* Needs pw_lock. End every wait on p with verdict v (p is released). */
static void entry_end(struct pw_page *p, int v)
{
	while (p->waiters)
		waiter_end(p, p->waiters, v);
}

int pagewait_enter_key(struct thread *me, const struct pw_key *k)
{
	unsigned long f = spin_lock_irqsave(&pw_lock);
	unsigned *count;
	struct pw_page **head = list_of(k->kind, k->owner, &count);
	struct pw_page *p = *head;
	while (p && (p->key.owner != k->owner || p->key.page != k->page))
		p = p->next;
	for (int i = pw_hint; !p && i < PW_POOL; i++) {
		if (pool[i].used)
			continue;
		p = &pool[i];
		pw_hint = i + 1;
		p->used = 1;
		p->key = *k;
		p->msg.kind = NK_FAULT;
		p->msg.state = N_REGISTERED;
		p->next = *head;
		*head = p;
		pw_used++;
		__atomic_add_fetch(count, 1, __ATOMIC_RELAXED);
	}
	if (p) {
		me->pw = p;
		me->pw_verdict = 0;
		me->pw_next = p->waiters;
		p->waiters = me;
		pw_threads++;
	}
	spin_unlock_irqrestore(&pw_lock, f);
	/* The wait is counted before the caller looks at the page again. */
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return p ? 0 : -E_NOMEM;
}

void pagewait_leave(struct thread *me)
{
	unsigned long f = spin_lock_irqsave(&pw_lock);
	if (me->pw)
		waiter_end(me->pw, me, 0);
	spin_unlock_irqrestore(&pw_lock, f);
}

int pagewait_sleep(struct thread *me, struct endpoint *e, uint64_t badge,
		   const uint64_t msg[IPC_WORDS])
{
	unsigned long f = spin_lock_irqsave(&pw_lock);
	struct pw_page *p = me->pw;
	if (p && !p->sent) {
		p->sent = 1;
		p->msg.ep = e;
		p->msg.badge = badge;
		memcpy(p->msg.msg, msg, sizeof p->msg.msg);
		/* Not kept: delivered to a waiting receiver, or dropped because
		 * nobody can receive on e; then the wait cannot be answered. */
		if (!ipc_notice_post(e, &p->msg) && !__atomic_load_n(&e->recv_caps, __ATOMIC_RELAXED))
			entry_end(p, -E_DEAD);
	}
	if (me->pw) {
		me->block = B_PAGE;
		__atomic_exchange_n(&me->state, T_BLOCKED, __ATOMIC_SEQ_CST);
		if (__atomic_load_n(&me->killed, __ATOMIC_RELAXED)) {
			me->state = T_RUNNING;
			me->block = B_NONE;
			waiter_end(me->pw, me, 0);
		} else {
			spin_unlock(&pw_lock);
			sched_block();     /* irqs stay off until we run again */
			spin_lock(&pw_lock);
		}
	}
	int v = me->pw_verdict;
	spin_unlock_irqrestore(&pw_lock, f);
	return v;
}

/* Is page inside one of the n ranges? */
static int in_ranges(uint64_t page, const struct pw_range *r, int n)
{
	for (int i = 0; i < n; i++)
		if (page >= r[i].lo && page < r[i].hi)
			return 1;
	return 0;
}

int pagewait_obj_pending(void)
{
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return __atomic_load_n(&obj_count, __ATOMIC_RELAXED) != 0;
}

long pagewait_wake_key(int kind, void *owner, const struct pw_range *r, int nr, int verdict)
{
	long n = 0;
	unsigned *count;
	unsigned long f = spin_lock_irqsave(&pw_lock);
	for (struct pw_page *p = *list_of(kind, owner, &count), *next; p; p = next) {
		next = p->next;
		if (p->key.owner == owner && in_ranges(p->key.page, r, nr)) {
			entry_end(p, verdict);
			n++;
		}
	}
	spin_unlock_irqrestore(&pw_lock, f);
	return n;
}

void pagewait_kill(struct thread *th)
{
	if (__atomic_load_n(&th->block, __ATOMIC_RELAXED) != B_PAGE)
		return;
	spin_lock(&pw_lock);      /* irqs are off: mk_lock is held */
	if (th->pw && th->state == T_BLOCKED && th->block == B_PAGE)
		waiter_end(th->pw, th, 0);
	spin_unlock(&pw_lock);
}

struct notice *pagewait_ep_gone(struct endpoint *e, struct notice *q)
{
	spin_lock(&pw_lock);
	/* The page messages on q are every entry's that was queued on e:
	 * off q, not queued any more, ended below with the rest. */
	struct notice *rest = NULL, **tail = &rest;
	while (q) {
		struct notice *n = q;
		q = n->next;
		n->next = NULL;
		if (n->kind == NK_FAULT) {
			n->state = N_REGISTERED;
		} else {
			*tail = n;
			tail = &n->next;
		}
	}
	for (int i = 0; pw_used && i < PW_POOL; i++) {
		struct pw_page *p = &pool[i];
		if (!p->used || !p->sent || p->msg.ep != e)
			continue;
		if (p->orphan) {
			if (p->msg.state != N_TAKEN)
				entry_free(p);
		} else {
			entry_end(p, -E_DEAD);
		}
	}
	spin_unlock(&pw_lock);
	return rest;
}

void pagewait_msg_received(struct notice *n)
{
	struct pw_page *p = page_of(n);
	spin_lock(&pw_lock);
	if (p->orphan)
		entry_free(p);
	else
		n->state = N_REGISTERED;
	spin_unlock(&pw_lock);
}
