/* Capabilities: per-task slot tables and the derivation tree.
 *
 * Every cap derived from another (copy, mint, IPC transfer) becomes its
 * child; revoke deletes all descendants, in every task. Delete hands a
 * cap's children to its parent, so deleting an intermediate copy does not
 * take other holders' caps with it. Caps hold a reference on what they name
 * (task, endpoint, frame); the last one frees it. Thread and reply caps
 * hold none: they name (thread, gen[, call]) and are dead once the thread
 * is (so dead threads never pin pool slots).
 * Everything here needs mk_lock. The slot fields a lookup reads are also
 * written under the owner's cspace_lock (install, delete), so a lookup
 * may run under that lock alone (region transactions, region.c); and
 * inside a write section of the slot's sequence count (slot_write_*),
 * so IPC may read an endpoint cap with no lock at all (ipc.c
 * ep_cap_lock). */
#include "mk.h"
#include "kernel.h"
#include "kstring.h"

static unsigned long ncaps;
unsigned long caps_live(void) { return ncaps; }

/* The cap in slot of t if it has `type` (0 = any non-null) and all of
 * `rights`; otherwise NULL with *err = -E_BADCAP or -E_PERM. */
struct cap *cap_lookup(struct task *t, long slot, int type, unsigned rights, int *err)
{
	if (slot < 0 || slot >= CSPACE_SLOTS) {
		*err = -E_BADCAP;
		return NULL;
	}
	struct cap *c = &t->cspace[slot];
	if (c->type == CAP_NULL || (type && c->type != type)) {
		*err = -E_BADCAP;
		return NULL;
	}
	if ((c->rights & rights) != rights) {
		*err = -E_PERM;
		return NULL;
	}
	return c;
}

/* Needs: mk_lock NOT held. Take t's CSpace lock for a decode that must
 * not wait for mk_lock (region transactions); with ablate=mklock also
 * mk_lock around it, as before the CSpace lock existed. Interrupts off
 * until cspace_decode_unlock; returns what to give it. */
unsigned long cspace_decode_lock(struct task *t)
{
	unsigned long f = irq_save();
	if (boot_config.ablate & ABLATE_MKLOCK)
		spin_lock(&mk_lock);
	spin_lock(&t->cspace_lock);
	return f;
}

void cspace_decode_unlock(struct task *t, unsigned long f)
{
	spin_unlock(&t->cspace_lock);
	if (boot_config.ablate & ABLATE_MKLOCK)
		spin_unlock(&mk_lock);
	irq_restore(f);
}

/* An empty slot of t, or NULL with *err set. */
struct cap *cap_slot_free(struct task *t, long slot, int *err)
{
	if (slot < 0 || slot >= CSPACE_SLOTS) {
		*err = -E_BADCAP;
		return NULL;
	}
	struct cap *c = &t->cspace[slot];
	if (c->type != CAP_NULL) {
		*err = -E_EXIST;
		return NULL;
	}
	return c;
}

void cap_get_obj(const struct cap *c)
{
	switch (c->type) {
	case CAP_TASK:
	case CAP_REGION:
		c->o.task->refs++;
		break;
	case CAP_ENDPOINT:
		__atomic_add_fetch(&c->o.ep->refs, 1, __ATOMIC_RELAXED);
		break;
	case CAP_FRAME:
		uvm_frame_get(c->o.pa);
		break;
	}
}

static void cap_put_obj(struct cap *c)
{
	switch (c->type) {
	case CAP_TASK:
	case CAP_REGION:
		c->o.task->refs--;
		task_put(c->o.task);
		break;
	case CAP_REPLY:
		ipc_reply_dropped(c);
		break;
	case CAP_ENDPOINT:
		ep_put(c->o.ep);
		break;
	case CAP_FRAME:
		uvm_frame_put(c->o.pa);
		break;
	}
}

/* Needs owner's cspace_lock. Open and close a write of slot c: its
 * sequence count is odd in between, and a lock-free reader that saw it
 * odd or changed reads again. */
static uint32_t *slot_write_begin(struct task *owner, const struct cap *c)
{
	uint32_t *sq = &owner->cseq[c - owner->cspace];
	__atomic_store_n(sq, *sq + 1, __ATOMIC_RELAXED);
	__atomic_thread_fence(__ATOMIC_RELEASE);   /* odd before the fields change */
	return sq;
}

static void slot_write_end(uint32_t *sq)
{
	__atomic_store_n(sq, *sq + 1, __ATOMIC_RELEASE);
}

/* Fill empty slot dst from proto (which must already hold its object
 * reference), as a child of parent (NULL: a root). */
void cap_install(struct cap *dst, const struct cap *proto, struct cap *parent)
{
	struct task *owner = dst->owner;
	spin_lock(&owner->cspace_lock);
	uint32_t *sq = slot_write_begin(owner, dst);
	*dst = *proto;
	dst->owner = owner;
	slot_write_end(sq);
	spin_unlock(&owner->cspace_lock);
	dst->child = NULL;
	dst->parent = parent;
	dst->prev = NULL;
	dst->next = parent ? parent->child : NULL;
	if (dst->next)
		dst->next->prev = dst;
	if (parent)
		parent->child = dst;
	ncaps++;
	if (dst->type == CAP_ENDPOINT)
		ipc_ep_cap_added(dst);     /* counts caps that can receive (ipc.c) */
}

/* Does thread cap c still name a live thread (not reused, not dead)? */
struct thread *cap_thread(const struct cap *c)
{
	struct thread *th = c->o.thread;
	if (th->gen != c->gen || th->state == T_FREE || th->state == T_DEAD)
		return NULL;
	return th;
}

/* May a cap of this type leave its task (IPC transfer, spawn's give)?
 * Reply caps answer one call of one server; the kernel cap is boot
 * authority that stays with init. */
int cap_transferable(const struct cap *c)
{
	return c->type != CAP_REPLY && c->type != CAP_KERNEL;
}

/* May src be derived into a cap with these rights and range? */
int cap_derive_ok(const struct cap *src, unsigned rights, uint64_t lo, uint64_t hi)
{
	if (src->type == CAP_REPLY)
		return 0;      /* one-shot: never copied */
	if (rights & ~src->rights)
		return 0;
	if (src->type == CAP_REGION)
		return lo < hi && lo >= src->lo && hi <= src->hi &&
		       !(lo & 4095) && !(hi & 4095);
	return 1;
}

static void unlink(struct cap *c)
{
	if (c->prev)
		c->prev->next = c->next;
	else if (c->parent)
		c->parent->child = c->next;
	if (c->next)
		c->next->prev = c->prev;
}

void cap_delete(struct cap *c)
{
	if (c->type == CAP_NULL)
		return;
	/* Children move up to our parent. */
	struct cap *ch = c->child;
	while (ch) {
		struct cap *n = ch->next;
		ch->parent = c->parent;
		ch->prev = NULL;
		ch->next = c->parent ? c->parent->child : NULL;
		if (ch->next)
			ch->next->prev = ch;
		if (c->parent)
			c->parent->child = ch;
		ch = n;
	}
	c->child = NULL;
	unlink(c);
	struct cap copy = *c;
	struct task *owner = c->owner;
	spin_lock(&owner->cspace_lock);
	uint32_t *sq = slot_write_begin(owner, c);
	memset(c, 0, sizeof *c);
	c->owner = owner;
	slot_write_end(sq);
	spin_unlock(&owner->cspace_lock);
	/* After the slot is empty: an IPC that read the cap before takes the
	 * endpoint lock before this does, and is then found waiting here. */
	if (copy.type == CAP_ENDPOINT)
		ipc_ep_cap_gone(&copy, c - owner->cspace);
	ncaps--;
	cap_put_obj(&copy);
}

void cap_revoke(struct cap *c)
{
	/* Depth first: delete leaves until no child is left. */
	while (c->child) {
		struct cap *d = c->child;
		while (d->child)
			d = d->child;
		cap_delete(d);
	}
}

void cspace_clear(struct task *t)
{
	for (int i = 0; i < CSPACE_SLOTS; i++)
		cap_delete(&t->cspace[i]);
}
