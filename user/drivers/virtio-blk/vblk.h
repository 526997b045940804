/* The virtio-blk driver server: its state and the parts that share it.
 *
 *   device.c   the register window: reset, features, the queue's set-up
 *              (legacy and modern interface), capacity, notify
 *   ring.c     the split virtqueue: descriptor free list, posting a
 *              request's chain, taking completions off the used ring
 *   request.c  block requests: checks, deferred replies, completion
 *   buffers.c  client buffers: attach, detach, ownership by badge
 *   main.c     set-up messages and the serve loop
 *
 * One thread runs all of it, so nothing here needs a lock. */
#ifndef VBLK_H
#define VBLK_H

#include <stdint.h>
#include "blk.h"
#include "ulib.h"         /* uarch_io_fence */
#include "virtio_mmio.h"

#define VQ_MAX 128          /* queue entries we use at most: the ring fits one page */
#define VQ_ALIGN 16         /* legacy QueueAlign: the used ring follows the avail ring */
#define NREQ 64             /* requests held at once (in flight or waiting for descriptors) */
#define NBUF 512            /* attached client buffers, all clients together */
#define BADGE_IRQ (1ull << 63)   /* our interrupt messages (blk.h: BLK_BADGE_DRIVER) */

/* Where the driver maps what it maps (its own address space; clear of the
 * runtime's anonymous-memory window). */
#define VBLK_MMIO_VA 0x2000000000UL
#define VBLK_RING_VA 0x2000100000UL
#define VBLK_HDR_VA  0x2000200000UL

struct vblk_buf {
	long frame;          /* our copy of the client's frame cap; -1: free */
	uint64_t badge;      /* whose it is */
	unsigned index;      /* its number among that client's buffers */
	uint64_t dma;        /* its physical address, for the device */
	int writable;        /* the cap had R_WRITE: the device may write it (READ) */
	unsigned busy;       /* requests in flight that use it: no detach meanwhile */
	int orphan;          /* forgotten (BLK_FORGET): freed when busy drops to 0 */
};

enum { RQ_FREE, RQ_WAITING, RQ_INFLIGHT };

struct vblk_req {
	int state;
	long reply;          /* our slot for its saved reply cap (fixed per record) */
	uint32_t type;       /* VBLK_T_IN / VBLK_T_OUT */
	uint64_t sector;
	unsigned pages;
	uint16_t buf[BLK_MAX_PAGES];   /* its buffers' table entries, page by page */
	uint16_t head;       /* its first descriptor while in flight */
	struct vblk_req *next;   /* the waiting list */
};

struct vblk {
	/* device */
	volatile uint8_t *regs;
	unsigned version;
	uint64_t sectors;
	long mmio, irq, ep;  /* our caps: the window, the line, the endpoint we serve */
	/* queue */
	unsigned qsize;
	struct vq_desc *desc;
	struct vq_avail *avail;
	struct vq_used *used;
	unsigned avail_off, used_off;
	uint16_t free_head;  /* descriptor free list, linked through desc[].next */
	unsigned nfree;
	uint16_t used_seen;  /* used->idx we have taken up to */
	int16_t head_req[VQ_MAX];   /* head descriptor -> request record, -1 none */
	long ring_frame, hdr_frame;
	uint64_t ring_dma, hdr_dma;
	/* requests */
	struct vblk_req reqs[NREQ];
	struct vblk_req *wait_head, *wait_tail;
	unsigned inflight, max_inflight;
	unsigned long completed;
	/* buffers */
	struct vblk_buf bufs[NBUF];
};

/* The header and status byte of request record i live in the header
 * frame: headers first, status bytes from byte 2048. */
#define HDR_OFF(i) ((unsigned)(i) * sizeof(struct vblk_hdr))
#define STATUS_OFF(i) (2048u + (unsigned)(i))

static inline void io_fence(void) { uarch_io_fence(); }
static inline uint32_t reg_read(struct vblk *v, unsigned off)
{
	return *(volatile uint32_t *)(v->regs + off);
}
static inline void reg_write(struct vblk *v, unsigned off, uint32_t val)
{
	*(volatile uint32_t *)(v->regs + off) = val;
}

/* device.c */
long vdev_map(struct vblk *v);
long vdev_start(struct vblk *v);
void vdev_stop(struct vblk *v);
void vdev_notify(struct vblk *v);
uint32_t vdev_irq_status_ack(struct vblk *v);
int vdev_needs_reset(struct vblk *v);
long vdev_dma_frame(struct vblk *v, uint64_t va, long *frame, uint64_t *dma);

/* ring.c */
void ring_init(struct vblk *v);
int ring_post(struct vblk *v, struct vblk_req *r, unsigned idx);
long ring_take(struct vblk *v, uint16_t *head);
void ring_free_chain(struct vblk *v, uint16_t head);

/* request.c */
long req_submit(struct vblk *v, uint64_t badge, uint32_t op, uint64_t sector, unsigned first,
		unsigned pages, int *deferred);
void req_complete_all(struct vblk *v);
void req_fail_all(struct vblk *v, long err);
long req_init(struct vblk *v);

/* buffers.c */
void buf_init(struct vblk *v);
long buf_attach(struct vblk *v, uint64_t badge, long frame);
long buf_detach(struct vblk *v, uint64_t badge, unsigned index);
long buf_forget(struct vblk *v, uint64_t badge);
void buf_release(struct vblk *v, unsigned i);
long buf_check(struct vblk *v, uint64_t badge, unsigned first, unsigned pages, int device_writes,
	       uint16_t *out);

#endif
