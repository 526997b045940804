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
 * ep_cap_lock).
 *
 * The table (abi/patina/cap.h): slots below CSPACE_FIXED_SLOTS live in
 * struct task; the others in chunks of CCHUNK_SLOTS, one frame each,
 * charged to the task's frame quota and added the first time a slot in
 * them is to be filled. A call that fills a slot checks it first
 * (cap_slot_check: no change), makes its other checks, and only then
 * adds the chunk: cap_slot_free when nothing can fail after it, or
 * cspace_prepare / cspace_commit around an allocation that can (the
 * chunk is made first, published only once the allocation worked, and
 * given back with cspace_unprepare otherwise). A chunk pointer goes from
 * NULL to the chunk once, under the task's cspace_lock, with release
 * order, and stays until the reaper clears the CSpace (cspace_clear),
 * when no thread of the task runs any more: lookups with no lock (IPC)
 * and lookups under either lock need nothing else. */
#include "mk.h"
#include "kernel.h"
#include "kstring.h"
#include "frame.h"
#include "shootdown.h"
#include "panic.h"
#include "mobj.h"

static unsigned long ncaps;
unsigned long caps_live(void) { return ncaps; }

const uint32_t cseq_absent;

/* Needs: 0 <= slot < CSPACE_MAX_SLOTS; any lock or none. The cap in slot
 * of t, or NULL when slot's chunk has not been added (the slot is empty). */
static struct cap *slot_cap(const struct task *t, long slot)
{
	if (slot < CSPACE_FIXED_SLOTS)
		return (struct cap *)&t->cspace[slot];
	struct cchunk *k = cspace_chunk(t, (unsigned long)slot);
	return k ? &k->cap[(unsigned long)(slot - CSPACE_FIXED_SLOTS) & (CCHUNK_SLOTS - 1)] : NULL;
}

/* The sequence count of slot c of owner (c in a fixed slot or a chunk that
 * is there). */
static uint32_t *slot_seq(struct task *owner, const struct cap *c)
{
	long slot = c->slot;
	if (slot < CSPACE_FIXED_SLOTS)
		return &owner->cseq[slot];
	return &cspace_chunk(owner, (unsigned long)slot)->seq[(slot - CSPACE_FIXED_SLOTS) &
							       (CCHUNK_SLOTS - 1)];
}

/* The cap in slot of t if it has `type` (0 = any non-null) and all of
 * `rights`; otherwise NULL with *err = -E_BADCAP or -E_PERM. */
struct cap *cap_lookup(struct task *t, long slot, int type, unsigned rights, int *err)
{
	if (slot < 0 || slot >= CSPACE_MAX_SLOTS) {
		*err = -E_BADCAP;
		return NULL;
	}
	struct cap *c = slot_cap(t, slot);
	if (!c || c->type == CAP_NULL || (type && c->type != type)) {
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

/* Needs mk_lock or t's cspace_lock. Whether slot of t may be filled:
 * 0 when it is in range and empty (its chunk may not be there yet),
 * -E_BADCAP out of range, -E_EXIST when it holds a cap. Changes nothing. */
int cap_slot_check(struct task *t, long slot)
{
	if (slot < 0 || slot >= CSPACE_MAX_SLOTS)
		return -E_BADCAP;
	struct cap *c = slot_cap(t, slot);
	return c && c->type != CAP_NULL ? -E_EXIST : 0;
}

/* Needs: 0 <= slot < CSPACE_MAX_SLOTS; any lock or none (it allocates a
 * frame: frame_pool is a leaf, the quota charge is atomics). Make ready
 * what filling slot of t needs: *spare = NULL and 0 when its chunk is
 * there; else 0 and *spare a new empty chunk for it, its frame charged to
 * t's frame quota but not part of t yet (cspace_commit publishes it,
 * cspace_unprepare gives it back); or -E_QUOTA / -E_NOMEM with nothing
 * charged or allocated. */
int cspace_prepare(struct task *t, long slot, struct cchunk **spare)
{
	*spare = NULL;
	if (slot < CSPACE_FIXED_SLOTS || cspace_chunk(t, (unsigned long)slot))
		return 0;
	if (quota_charge_frames(t, 1))
		return -E_QUOTA;
	paddr_t pa;
	if (frame_alloc(FRAME_ZERO, &pa)) {
		shootdown_settle();    /* frames parked behind a shootdown */
		if (frame_alloc(FRAME_ZERO, &pa)) {
			quota_release_frames(t, 1);
			return -E_NOMEM;
		}
	}
	struct cchunk *k = phys_to_virt(pa);
	long base = CSPACE_FIXED_SLOTS +
		    ((slot - CSPACE_FIXED_SLOTS) & ~(long)(CCHUNK_SLOTS - 1));
	for (int i = 0; i < CCHUNK_SLOTS; i++) {
		k->cap[i].owner = t;
		k->cap[i].slot = (uint32_t)(base + i);
	}
	*spare = k;
	return 0;
}

/* Give back a chunk cspace_prepare made for t and nobody published (NULL:
 * nothing to do): its frame and its charge. Any lock or none. */
void cspace_unprepare(struct task *t, struct cchunk *spare)
{
	if (!spare)
		return;
	if (frame_free(virt_to_phys(spare)))
		panic("cspace: chunk %p freed twice", (void *)spare);
	quota_release_frames(t, 1);
}

/* Needs: t's cspace_lock NOT held (taken here); slot as given to
 * cspace_prepare, which returned spare. The chunk of slot becomes part of
 * t: spare is published, or given back when another chunk for it was
 * published meanwhile (a region transaction adds them without mk_lock).
 * Returns slot's cap; cannot fail. The release store orders the chunk's
 * initialisation before any reader with no lock can reach it. */
struct cap *cspace_commit(struct task *t, long slot, struct cchunk *spare)
{
	if (!spare)
		return slot_cap(t, slot);
	unsigned long f = spin_lock_irqsave(&t->cspace_lock);
	struct cchunk **p = &t->cchunk[(slot - CSPACE_FIXED_SLOTS) >> CCHUNK_SHIFT];
	if (*p) {
		cspace_unprepare(t, spare);
	} else {
		__atomic_store_n(p, spare, __ATOMIC_RELEASE);
		long end = spare->cap[CCHUNK_SLOTS - 1].slot + 1L;
		if (end > t->cextent)
			__atomic_store_n(&t->cextent, end, __ATOMIC_RELAXED);
	}
	spin_unlock_irqrestore(&t->cspace_lock, f);
	return slot_cap(t, slot);
}

/* Needs mk_lock (so no other call fills slot meanwhile). An empty slot of
 * t to install a cap into, its chunk added now if need be: NULL with *err
 * set (-E_BADCAP, -E_EXIST, or -E_QUOTA / -E_NOMEM for the chunk, nothing
 * changed) otherwise. For the last check of a call: nothing after it may
 * fail, since a chunk once added stays. */
struct cap *cap_slot_free(struct task *t, long slot, int *err)
{
	struct cchunk *spare;
	int e = cap_slot_check(t, slot);
	if (!e)
		e = cspace_prepare(t, slot, &spare);
	if (e) {
		*err = e;
		return NULL;
	}
	return cspace_commit(t, slot, spare);
}

/* Needs t's cspace_lock NOT held. Make sure the chunk of slot exists (a
 * receive slot, whatever it holds): 0, -E_BADCAP out of range, or
 * -E_QUOTA / -E_NOMEM with nothing changed. */
int cspace_grow(struct task *t, long slot)
{
	struct cchunk *spare;
	if (slot < 0 || slot >= CSPACE_MAX_SLOTS)
		return -E_BADCAP;
	int e = cspace_prepare(t, slot, &spare);
	if (!e)
		cspace_commit(t, slot, spare);
	return e;
}

/* Any lock or none. One past the highest slot of t that may hold a cap
 * (the end of its highest chunk, CSPACE_FIXED_SLOTS with none); it only
 * grows while t lives. */
long cspace_extent(const struct task *t)
{
	long x = __atomic_load_n(&t->cextent, __ATOMIC_RELAXED);
	return x > CSPACE_FIXED_SLOTS ? x : CSPACE_FIXED_SLOTS;
}

/* Needs mk_lock; t new and zeroed. Its fixed slots know their owner and
 * number; no chunk yet. */
void cspace_init(struct task *t)
{
	for (int i = 0; i < CSPACE_FIXED_SLOTS; i++) {
		t->cspace[i].owner = t;
		t->cspace[i].slot = (uint32_t)i;
	}
	t->cextent = CSPACE_FIXED_SLOTS;
}

/* Needs mk_lock. How many caps in t's own CSpace name t (task and region
 * caps): what of t->refs t holds on itself. */
int cspace_self_refs(const struct task *t)
{
	int n = 0;
	for (long s = 0; s < cspace_extent(t); s++) {
		const struct cap *c = slot_cap(t, s);
		if (!c) {
			s |= CCHUNK_SLOTS - 1;     /* the whole chunk is absent */
			continue;
		}
		if ((c->type == CAP_TASK || c->type == CAP_REGION) && c->o.task == t)
			n++;
	}
	return n;
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
	case CAP_MOBJ:
		mobj_get(c->o.mobj);
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
	case CAP_MOBJ:
		mobj_put(c->o.mobj, 1);
		break;
	}
}

/* Needs owner's cspace_lock. Open and close a write of slot c: its
 * sequence count is odd in between, and a lock-free reader that saw it
 * odd or changed reads again. */
static uint32_t *slot_write_begin(struct task *owner, const struct cap *c)
{
	uint32_t *sq = slot_seq(owner, c);
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
	uint32_t slot = dst->slot;
	spin_lock(&owner->cspace_lock);
	uint32_t *sq = slot_write_begin(owner, dst);
	*dst = *proto;
	dst->owner = owner;
	dst->slot = slot;
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

/* May this cap leave its task (IPC transfer, spawn's give)? Reply caps
 * answer one call of one server; the kernel cap is boot authority that
 * stays with init; a device cap only with R_GRANT, so whoever hands a
 * driver its device can keep it from passing the device on. */
int cap_transferable(const struct cap *c)
{
	if (c->type == CAP_MMIO || c->type == CAP_IRQ)
		return (c->rights & R_GRANT) != 0;
	return c->type != CAP_REPLY && c->type != CAP_KERNEL;
}

/* May src be derived into a cap with these rights and range? */
int cap_derive_ok(const struct cap *src, unsigned rights, uint64_t lo, uint64_t hi)
{
	if (src->type == CAP_REPLY)
		return 0;      /* one-shot: never copied */
	if (rights & ~src->rights)
		return 0;
	/* A region, or a device's register window: a page-aligned piece of
	 * the source's range (a mapping of it is whole pages). */
	if (src->type == CAP_REGION || src->type == CAP_MMIO)
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
	uint32_t slot = c->slot;
	spin_lock(&owner->cspace_lock);
	uint32_t *sq = slot_write_begin(owner, c);
	memset(c, 0, sizeof *c);
	c->owner = owner;
	c->slot = slot;
	slot_write_end(sq);
	spin_unlock(&owner->cspace_lock);
	/* After the slot is empty: an IPC that read the cap before takes the
	 * endpoint lock before this does, and is then found waiting here. */
	if (copy.type == CAP_ENDPOINT)
		ipc_ep_cap_gone(&copy, slot);
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

/* Needs mk_lock; t is being reaped: no thread of it runs or will (so no
 * lookup with no lock reads its slots). Delete every cap of t, then give
 * back its chunks (frames and charges, before the reaper reads what t
 * still has charged). */
void cspace_clear(struct task *t)
{
	for (int i = 0; i < CSPACE_FIXED_SLOTS; i++)
		cap_delete(&t->cspace[i]);
	for (int k = 0; k < CSPACE_NCHUNKS; k++) {
		struct cchunk *ch = t->cchunk[k];
		if (!ch)
			continue;
		for (int i = 0; i < CCHUNK_SLOTS; i++)
			cap_delete(&ch->cap[i]);
	}
	/* Every slot is empty now (a delete only empties its own slot), so
	 * nothing reaches the chunks any more. */
	for (int k = 0; k < CSPACE_NCHUNKS; k++) {
		struct cchunk *ch = t->cchunk[k];
		if (!ch)
			continue;
		__atomic_store_n(&t->cchunk[k], NULL, __ATOMIC_RELAXED);
		cspace_unprepare(t, ch);
	}
	t->cextent = CSPACE_FIXED_SLOTS;
}
