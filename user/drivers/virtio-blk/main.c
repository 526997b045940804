/* virtio-blk: the block driver server (blk.h's protocol).
 *
 * Spawned with the endpoint it serves in SLOT_GIVEN (it holds the only
 * cap that can receive there) and no kernel cap; its parent then sends it
 * the device's MMIO cap and IRQ cap (BLK_SETUP_MMIO, BLK_SETUP_IRQ). It
 * serves until it is killed: its death fails every call in flight and
 * every later one (E_DEAD), and the kernel resets the device before the
 * frames it gave the device are freed. */
#include "ulib.h"
#include <patina/device.h>
#include "blk.h"
#include "vblk.h"

static struct vblk vb;

/* Device up: window, ring page, header page, queue; then interrupts
 * bound to our endpoint through a cap badged BADGE_IRQ. 0 or the error
 * (the device reset). */
static long start(struct vblk *v)
{
	long r = vdev_map(v);
	if (!r)
		r = vdev_dma_frame(v, VBLK_RING_VA, &v->ring_frame, &v->ring_dma);
	if (!r)
		r = vdev_dma_frame(v, VBLK_HDR_VA, &v->hdr_frame, &v->hdr_dma);
	if (!r)
		r = req_init(v);
	if (!r)
		r = vdev_start(v);
	if (r)
		return r;
	long s = slot_alloc();
	if (s < 0 || cap_mint(v->ep, s, R_SEND, BADGE_IRQ, 0, 0)) {
		vdev_stop(v);
		return -E_NOMEM;
	}
	r = sc2(SYS_IRQ_BIND, v->irq, s);
	cap_delete(s);      /* the binding lasts as long as the endpoint: the cap only named it, badged */
	slot_release(s);
	if (r)
		vdev_stop(v);
	else
		printf("virtio-blk: virtio-mmio version %u, %lu sectors, queue of %u\n", v->version,
		       (unsigned long)v->sectors, v->qsize);
	return r;
}

/* An interrupt: causes read and acknowledged at the device, the used ring
 * drained, then the line unmasked (SYS_IRQ_ACK) so the next one comes. */
static void on_irq(struct vblk *v)
{
	vdev_irq_status_ack(v);
	req_complete_all(v);
	sc1(SYS_IRQ_ACK, v->irq);
}

/* A set-up message from badge with a cap in slot *cap (or -1). The
 * answer; the cap is taken (*cap = -1) when kept. */
static long on_setup(struct vblk *v, uint64_t badge, uint64_t op, long *cap)
{
	long *dst = op == BLK_SETUP_MMIO ? &v->mmio : &v->irq;
	if (badge != BLK_BADGE_OWNER)
		return -E_PERM;
	if (*dst >= 0)
		return -E_EXIST;
	if (*cap < 0)
		return -E_BADCAP;
	struct cap_info ci;
	if (cap_info(*cap, &ci) || ci.type != (op == BLK_SETUP_MMIO ? CAP_MMIO : CAP_IRQ))
		return -E_BADCAP;
	*dst = *cap;
	*cap = -1;
	return v->mmio >= 0 && v->irq >= 0 ? start(v) : 0;
}

/* One client message (not an interrupt). Returns the answer word, or 1
 * when the answer is deferred; w1..w3 of the answer in out. */
static long on_message(struct vblk *v, uint64_t badge, const struct sysret *m, long *cap,
		       int ready, uint64_t out[4])
{
	uint64_t op = (uint64_t)m->a1;
	if (op == BLK_SETUP_MMIO || op == BLK_SETUP_IRQ)
		return ready ? (badge == BLK_BADGE_OWNER ? -E_EXIST : -E_PERM) : on_setup(v, badge, op, cap);
	if (!ready)
		return -E_AGAIN;
	switch (op) {
	case BLK_INFO:
		out[1] = v->sectors;
		out[2] = BLK_MAX_PAGES;
		out[3] = v->max_inflight;
		return 0;
	case BLK_ATTACH: {
		if (*cap < 0)
			return -E_BADCAP;
		long i = buf_attach(v, badge, *cap);
		*cap = -1;                /* kept, or deleted on failure */
		if (i < 0)
			return i;
		out[1] = (uint64_t)i;
		return 0;
	}
	case BLK_DETACH:
		return buf_detach(v, badge, (unsigned)m->a2);
	case BLK_FORGET:
		if (badge != BLK_BADGE_OWNER)
			return -E_PERM;
		out[1] = (uint64_t)buf_forget(v, (uint64_t)m->a2);
		return 0;
	case BLK_READ:
	case BLK_WRITE: {
		int deferred;
		long r = req_submit(v, badge, (uint32_t)op, (uint64_t)m->a2, (unsigned)m->a3,
				    (unsigned)m->a4, &deferred);
		return deferred ? 1 : r;
	}
	default:
		return -E_INVAL;
	}
}

int main(int argc, char **argv)
{
	(void)argv;
	struct vblk *v = &vb;
	struct cap_info ci;
	if (argc > 1 || cap_info(SLOT_GIVEN, &ci) || ci.type != CAP_ENDPOINT)
		return prog_usage("virtio-blk (a server: libblk's blk_start starts it with its endpoint)");
	v->mmio = v->irq = -1;
	v->ep = SLOT_GIVEN;
	buf_init(v);
	uint64_t rw[4] = { 0 };
	int reply = 0, ready = 0;
	long rslot = -1;
	for (;;) {
		if (rslot < 0 && (rslot = slot_alloc()) < 0)
			break;
		/* Requests and interrupts (a message on the same endpoint) alike:
		 * we sleep here until either comes. */
		struct sysret m = ipc(reply ? SYS_REPLY_RECV : SYS_RECV, v->ep, rw, rslot);
		if (m.a0 == -E_QUOTA || m.a0 == -E_NOMEM)
			/* No frame for the receive slot's CSpace chunk: the call did
			 * nothing (not even the answer). Take this message without a
			 * slot: a cap riding on it is dropped (an attach then gets
			 * E_BADCAP), and the driver keeps serving. */
			m = ipc(reply ? SYS_REPLY_RECV : SYS_RECV, v->ep, rw, SLOT_NONE);
		reply = 0;
		memset(rw, 0, sizeof rw);
		if (m.a0)
			break;       /* our endpoint is gone: nobody can reach us */
		long cap = (m.a6 & IPC_GOT_CAP) ? rslot : -1;
		uint64_t badge = (uint64_t)m.a5;
		if (badge == BADGE_IRQ && (uint64_t)m.a1 == MSG_IRQ) {
			on_irq(v);
		} else {
			long r = on_message(v, badge, &m, &cap, ready, rw);
			if (r != 1) {
				rw[0] = (uint64_t)r;
				reply = 1;
			}
			if (!ready && v->mmio >= 0 && v->irq >= 0) {
				if (r)
					break;      /* the device would not start: the answer says why */
				ready = 1;
			}
		}
		if (cap >= 0)
			cap_delete(cap);    /* a cap that came with a message that keeps none */
		else if (m.a6 & IPC_GOT_CAP)
			rslot = -1;         /* kept: take a fresh receive slot */
	}
	if (reply)
		ipc(SYS_REPLY, 0, rw, SLOT_NONE);
	vdev_stop(v);
	req_fail_all(v, -E_DEAD);
	return 1;
}
