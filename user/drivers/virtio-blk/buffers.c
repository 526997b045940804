/* Client buffers: frames clients share with the driver for the data of
 * their requests. Each client (badge) numbers its own buffers from 0, so
 * one client's attaches never break another's run of indexes, and no
 * index can name another client's frame. */
#include "ulib.h"
#include "vblk.h"

void buf_init(struct vblk *v)
{
	for (unsigned i = 0; i < NBUF; i++)
		v->bufs[i].frame = -1;
}

/* The table entry of badge's buffer index, or -1. */
static long buf_find(struct vblk *v, uint64_t badge, unsigned index)
{
	for (unsigned i = 0; i < NBUF; i++)
		if (v->bufs[i].frame >= 0 && v->bufs[i].badge == badge && v->bufs[i].index == index &&
		    !v->bufs[i].orphan)
			return i;
	return -1;
}

/* The lowest index badge has not attached, and a free table entry in
 * *slot; -E_NOMEM when the table is full. */
static long buf_free_index(struct vblk *v, uint64_t badge, unsigned *slot)
{
	uint64_t used[NBUF / 64] = { 0 };
	long free_slot = -1;
	for (unsigned i = 0; i < NBUF; i++) {
		struct vblk_buf *b = &v->bufs[i];
		if (b->frame < 0) {
			if (free_slot < 0)
				free_slot = i;
		} else if (b->badge == badge && !b->orphan) {
			used[b->index / 64] |= 1ull << (b->index % 64);
		}
	}
	if (free_slot < 0)
		return -E_NOMEM;
	*slot = (unsigned)free_slot;
	unsigned k = 0;
	while (used[k / 64] & (1ull << (k % 64)))
		k++;             /* fewer than NBUF are used: one is clear */
	return k;
}

/* Take frame cap `frame` (a slot of ours, just received) as a buffer of
 * `badge`: its index (the lowest that badge has free, so a client
 * attaching pages one after another gets consecutive ones), or -E_* with
 * the cap deleted: -E_BADCAP (not a frame cap), -E_PERM (no R_READ),
 * -E_NOMEM (table full), or SYS_DMA_ADDR's error. On success the slot is
 * the buffer's. */
long buf_attach(struct vblk *v, uint64_t badge, long frame)
{
	struct cap_info ci;
	unsigned slot = 0;
	long r = cap_info(frame, &ci), index = 0;
	if (!r && ci.type != CAP_FRAME)
		r = -E_BADCAP;
	if (!r && !(ci.rights & R_READ))
		r = -E_PERM;
	if (!r && (index = buf_free_index(v, badge, &slot)) < 0)
		r = index;
	long a = r ? r : sc2(SYS_DMA_ADDR, v->mmio, frame);
	if (a < 0) {
		cap_delete(frame);
		slot_release(frame);
		return a;
	}
	v->bufs[slot] = (struct vblk_buf){ .frame = frame, .badge = badge, .index = (unsigned)index,
					   .dma = (uint64_t)a, .writable = (ci.rights & R_WRITE) != 0 };
	return index;
}

/* Free entry i now if nothing uses it, else mark it to go when its last
 * request completes (buf_release). 1 when freed now. */
static int buf_drop(struct vblk *v, unsigned i)
{
	struct vblk_buf *b = &v->bufs[i];
	if (b->busy) {
		b->orphan = 1;
		return 0;
	}
	cap_delete(b->frame);
	slot_release(b->frame);
	b->frame = -1;
	return 1;
}

/* A request that used entry i is over. */
void buf_release(struct vblk *v, unsigned i)
{
	if (!--v->bufs[i].busy && v->bufs[i].orphan)
		buf_drop(v, i);
}

/* Every buffer of badge goes (BLK_FORGET): how many went now; the rest
 * go with their requests and can no longer be named meanwhile. */
long buf_forget(struct vblk *v, uint64_t badge)
{
	long n = 0;
	for (unsigned i = 0; i < NBUF; i++)
		if (v->bufs[i].frame >= 0 && v->bufs[i].badge == badge && !v->bufs[i].orphan)
			n += buf_drop(v, i);
	return n;
}

/* Drop badge's buffer index: 0, -E_PERM (it has no such buffer), -E_BUSY
 * (a request in flight uses it: the device may still touch it). */
long buf_detach(struct vblk *v, uint64_t badge, unsigned index)
{
	long i = buf_find(v, badge, index);
	if (i < 0)
		return -E_PERM;
	if (v->bufs[i].busy)
		return -E_BUSY;
	buf_drop(v, (unsigned)i);
	return 0;
}

/* badge's buffers first .. first + pages - 1 all exist (and, when the
 * device writes them, came with R_WRITE): 0 and their table entries in
 * out[0..pages), or -E_PERM. */
long buf_check(struct vblk *v, uint64_t badge, unsigned first, unsigned pages, int device_writes,
	       uint16_t *out)
{
	if (first >= NBUF || pages > NBUF - first)
		return -E_PERM;
	for (unsigned p = 0; p < pages; p++) {
		long i = buf_find(v, badge, first + p);
		if (i < 0 || (device_writes && !v->bufs[i].writable))
			return -E_PERM;
		out[p] = (uint16_t)i;
	}
	return 0;
}
