/* The virtio-mmio register window: bringing the device up (reset,
 * features, the queue, DRIVER_OK) through the legacy (version 1) or the
 * modern (version 2) interface, and stopping it. */
#include "ulib.h"
#include <patina/device.h>
#include "vblk.h"

#define PG 4096UL

/* One region op on our own page(s) at va. */
static long own_txn(uint32_t opc, uint64_t va, uint64_t len, unsigned prot, long arg)
{
	struct region_op op = { .op = opc, .prot = prot, .va = va, .len = len, .arg = arg };
	long r = region_txn(SLOT_SELF_AS, va, va + (len ? len : PG), &op, 1);
	return r < 0 ? r : op.result;
}

/* Map one page of the window (all we use) read-write as device memory.
 * 0, or the error of the map; -E_NOENT when it is not a virtio block
 * device, -E_NOSYS for an interface version we do not know. */
long vdev_map(struct vblk *v)
{
	long r = own_txn(ROP_MAP, VBLK_MMIO_VA, PG, PROT_R | PROT_W, v->mmio);
	if (r)
		return r;
	v->regs = (volatile uint8_t *)VBLK_MMIO_VA;
	if (reg_read(v, VIO_MAGIC) != VIO_MAGIC_VALUE || reg_read(v, VIO_DEVICE_ID) != VIO_ID_BLOCK)
		return -E_NOENT;
	v->version = reg_read(v, VIO_VERSION);
	return v->version == 1 || v->version == 2 ? 0 : -E_NOSYS;
}

/* A fresh zeroed frame mapped read-write at va, and its address for the
 * device: 0 and *frame, *dma, or the error (nothing kept). */
long vdev_dma_frame(struct vblk *v, uint64_t va, long *frame, uint64_t *dma)
{
	long f = slot_alloc();
	if (f < 0)
		return f;
	long r = frame_alloc(f);
	if (!r)
		r = own_txn(ROP_MAP, va, PG, PROT_R | PROT_W, f);
	if (!r) {
		long a = sc2(SYS_DMA_ADDR, v->mmio, f);
		if (a < 0) {
			own_txn(ROP_UNMAP, va, PG, 0, 0);
			r = a;
		} else {
			*dma = (uint64_t)a;
		}
	}
	if (r) {
		cap_delete(f);
		slot_release(f);
		return r;
	}
	*frame = f;
	return 0;
}

/* Status 0 and wait until the device says it took it (a modern device
 * may take a while; a legacy one is reset at once). */
static void dev_reset(struct vblk *v)
{
	reg_write(v, VIO_STATUS, 0);
	io_fence();
	for (int i = 0; i < 1000 && reg_read(v, VIO_STATUS); i++)
		sys_yield();
}

/* Feature negotiation: we need nothing of the block device's optional
 * features; a modern device must be told we speak version 1. */
static long dev_features(struct vblk *v)
{
	reg_write(v, VIO_DEV_FEATURES_SEL, 0);
	(void)reg_read(v, VIO_DEV_FEATURES);
	reg_write(v, VIO_DRV_FEATURES_SEL, 0);
	reg_write(v, VIO_DRV_FEATURES, 0);
	if (v->version == 1)
		return 0;
	reg_write(v, VIO_DEV_FEATURES_SEL, 1);
	if (!(reg_read(v, VIO_DEV_FEATURES) & VIO_F_VERSION_1_WORD1))
		return -E_NOSYS;
	reg_write(v, VIO_DRV_FEATURES_SEL, 1);
	reg_write(v, VIO_DRV_FEATURES, VIO_F_VERSION_1_WORD1);
	reg_write(v, VIO_STATUS, VIO_S_ACKNOWLEDGE | VIO_S_DRIVER | VIO_S_FEATURES_OK);
	io_fence();
	return reg_read(v, VIO_STATUS) & VIO_S_FEATURES_OK ? 0 : -E_NOSYS;
}

/* Queue 0 at the ring page: size, and where its three parts are. */
static long dev_queue(struct vblk *v)
{
	reg_write(v, VIO_QUEUE_SEL, 0);
	io_fence();
	if (reg_read(v, v->version == 1 ? VIO_QUEUE_PFN : VIO_QUEUE_READY))
		return -E_BUSY;
	unsigned max = reg_read(v, VIO_QUEUE_NUM_MAX), q = VQ_MAX;
	if (!max)
		return -E_NOENT;
	while (q > max)
		q >>= 1;      /* a legacy queue's size must be a power of 2 */
	v->qsize = q;
	v->avail_off = q * sizeof(struct vq_desc);
	/* The spec's legacy layout counts the avail ring's used_event, QEMU
	 * does not: with VQ_ALIGN 16 both round to the same place. */
	v->used_off = (v->avail_off + 6 + 2 * q + VQ_ALIGN - 1) & ~(VQ_ALIGN - 1u);
	ring_init(v);
	reg_write(v, VIO_QUEUE_NUM, q);
	if (v->version == 1) {
		reg_write(v, VIO_QUEUE_ALIGN, VQ_ALIGN);
		reg_write(v, VIO_QUEUE_PFN, (uint32_t)(v->ring_dma / PG));
	} else {
		uint64_t d = v->ring_dma, a = d + v->avail_off, u = d + v->used_off;
		reg_write(v, VIO_QUEUE_DESC_LO, (uint32_t)d);
		reg_write(v, VIO_QUEUE_DESC_HI, (uint32_t)(d >> 32));
		reg_write(v, VIO_QUEUE_AVAIL_LO, (uint32_t)a);
		reg_write(v, VIO_QUEUE_AVAIL_HI, (uint32_t)(a >> 32));
		reg_write(v, VIO_QUEUE_USED_LO, (uint32_t)u);
		reg_write(v, VIO_QUEUE_USED_HI, (uint32_t)(u >> 32));
		reg_write(v, VIO_QUEUE_READY, 1);
	}
	return 0;
}

/* The capacity in sectors; a modern device's config generation makes the
 * two halves one reading. */
static uint64_t dev_capacity(struct vblk *v)
{
	uint32_t gen, lo, hi;
	do {
		gen = v->version == 2 ? reg_read(v, VIO_CONFIG_GEN) : 0;
		lo = reg_read(v, VIO_CONFIG);
		hi = reg_read(v, VIO_CONFIG + 4);
	} while (v->version == 2 && gen != reg_read(v, VIO_CONFIG_GEN));
	return (uint64_t)hi << 32 | lo;
}

/* Needs: the window mapped (vdev_map), the ring page made (ring_frame,
 * ring_dma). The whole start-up sequence of virtio 3.1.1: reset,
 * ACKNOWLEDGE, DRIVER, features, queue, DRIVER_OK. On failure the device
 * is marked FAILED and reset, and the error returned. Also used to
 * restart a device that needs a reset (every request in flight has been
 * failed first). */
long vdev_start(struct vblk *v)
{
	dev_reset(v);
	reg_write(v, VIO_STATUS, VIO_S_ACKNOWLEDGE);
	reg_write(v, VIO_STATUS, VIO_S_ACKNOWLEDGE | VIO_S_DRIVER);
	long r = dev_features(v);
	if (!r && v->version == 1)
		reg_write(v, VIO_GUEST_PAGE_SIZE, PG);
	if (!r)
		r = dev_queue(v);
	if (r) {
		reg_write(v, VIO_STATUS, reg_read(v, VIO_STATUS) | VIO_S_FAILED);
		dev_reset(v);
		return r;
	}
	v->sectors = dev_capacity(v);
	io_fence();
	reg_write(v, VIO_STATUS, reg_read(v, VIO_STATUS) | VIO_S_DRIVER_OK);
	return 0;
}

/* Stop all DMA: the device forgets the queue. */
void vdev_stop(struct vblk *v)
{
	if (v->regs)
		dev_reset(v);
}

/* Needs: the chains' descriptors and the avail index written. */
void vdev_notify(struct vblk *v)
{
	io_fence();
	reg_write(v, VIO_QUEUE_NOTIFY, 0);
}

/* Read and acknowledge the device's interrupt causes (VIO_INT_*). */
uint32_t vdev_irq_status_ack(struct vblk *v)
{
	uint32_t s = reg_read(v, VIO_INTERRUPT_STATUS);
	if (s)
		reg_write(v, VIO_INTERRUPT_ACK, s);
	io_fence();
	return s;
}

int vdev_needs_reset(struct vblk *v)
{
	return (reg_read(v, VIO_STATUS) & (VIO_S_NEEDS_RESET | VIO_S_FAILED)) != 0;
}
