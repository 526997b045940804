/* Client buffers: frames clients share with the driver for the data of
 * their requests, each owned by the badge of the cap it came through. */
#include "ulib.h"
#include "vblk.h"

void buf_init(struct vblk *v)
{
	for (unsigned i = 0; i < NBUF; i++)
		v->bufs[i].frame = -1;
}

/* Take frame cap `frame` (a slot of ours, just received) as a buffer of
 * `badge`: its index (the lowest free one, so a client attaching pages in
 * a row gets consecutive ones), or -E_* with the cap deleted: -E_BADCAP
 * (not a frame cap), -E_PERM (no R_READ), -E_NOMEM (table full), or
 * SYS_DMA_ADDR's error. On success the slot is the buffer's. */
long buf_attach(struct vblk *v, uint64_t badge, long frame)
{
	struct cap_info ci;
	long r = cap_info(frame, &ci);
	unsigned i = 0;
	if (!r && ci.type != CAP_FRAME)
		r = -E_BADCAP;
	if (!r && !(ci.rights & R_READ))
		r = -E_PERM;
	while (!r && i < NBUF && v->bufs[i].frame >= 0)
		i++;
	if (!r && i == NBUF)
		r = -E_NOMEM;
	long a = r ? r : sc2(SYS_DMA_ADDR, v->mmio, frame);
	if (a < 0) {
		cap_delete(frame);
		slot_release(frame);
		return a;
	}
	v->bufs[i] = (struct vblk_buf){ .frame = frame, .badge = badge, .dma = (uint64_t)a,
					.writable = (ci.rights & R_WRITE) != 0 };
	return i;
}

/* Drop buffer index of badge: 0, -E_PERM (not its buffer, or none),
 * -E_BUSY (a request in flight uses it: the device may still touch it). */
long buf_detach(struct vblk *v, uint64_t badge, unsigned index)
{
	if (index >= NBUF || v->bufs[index].frame < 0 || v->bufs[index].badge != badge)
		return -E_PERM;
	struct vblk_buf *b = &v->bufs[index];
	if (b->busy)
		return -E_BUSY;
	cap_delete(b->frame);
	slot_release(b->frame);
	b->frame = -1;
	return 0;
}

/* Buffers first .. first + pages - 1 all belong to badge (and, when the
 * device writes them, came with R_WRITE): 0 or -E_PERM. */
long buf_check(struct vblk *v, uint64_t badge, unsigned first, unsigned pages, int device_writes)
{
	if (first >= NBUF || pages > NBUF - first)
		return -E_PERM;
	for (unsigned p = first; p < first + pages; p++) {
		struct vblk_buf *b = &v->bufs[p];
		if (b->frame < 0 || b->badge != badge || (device_writes && !b->writable))
			return -E_PERM;
	}
	return 0;
}
