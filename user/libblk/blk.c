/* The block client library (blk.h): find a virtio block device, start its
 * driver, and talk the block protocol to it. */
#include "ulib.h"
#include "uva.h"
#include <patina/device.h>
#include "blk.h"

#define PG 4096UL
#define VIRTIO_DEVICE_ID_OFF 8
#define VIRTIO_STATUS_OFF 0x70
#define VIRTIO_ID_BLOCK 2
/* The driver's quota: its code, stack and heap, the ring and header
 * pages, and the CSpace chunks for up to 512 buffers and 64 saved
 * replies. Two threads, a few endpoints (it creates none today). */
#define DRIVER_QUOTA QUOTA(256, 2, 4, 0)

static long own_txn(uint32_t opc, uint64_t va, unsigned prot, long arg)
{
	struct region_op op = { .op = opc, .prot = prot, .va = va, .len = PG, .arg = arg };
	long r = region_txn(SLOT_SELF_AS, va, va + PG, &op, 1);
	return r < 0 ? r : op.result;
}

/* The 32-bit register at off of the window behind MMIO cap mmio: its
 * first page mapped read-only for the one read, then unmapped. The value
 * or -E_*. */
static long virtio_reg(long mmio, unsigned off)
{
	uint64_t va = uva_alloc(self_hart(), PG);
	if (!va)
		return -E_NOMEM;
	long r = own_txn(ROP_MAP, va, PROT_R, mmio);
	if (!r) {
		r = *(volatile uint32_t *)(va + off);
		own_txn(ROP_UNMAP, va, 0, 0);
	}
	uva_free(va, PG);
	return r;
}

/* The index of the first virtio-mmio device that is a block device, or
 * -E_NOENT. Needs the kernel cap (R_READ, R_CONTROL). */
static long find_disk(void)
{
	struct device_info di;
	long s = slot_alloc();
	if (s < 0)
		return s;
	long found = -E_NOENT;
	for (long i = 0; found == -E_NOENT; i++) {
		long r = sc3(SYS_DEVICE_INFO, SLOT_KERNEL, i, &di);
		if (r == -E_NOENT)
			break;
		if (r) {
			found = r;
			break;
		}
		di.compatible[DEV_COMPAT_MAX - 1] = 0;
		if (strcmp(di.compatible, "virtio,mmio"))
			continue;
		if ((r = sc6(SYS_DEVICE_CAPS, SLOT_KERNEL, i, s, SLOT_NONE, 0, 0)))
			continue;
		if (virtio_reg(s, VIRTIO_DEVICE_ID_OFF) == VIRTIO_ID_BLOCK)
			found = i;
		cap_delete(s);
	}
	slot_release(s);
	return found;
}

long blk_device_status(void)
{
	long dev = find_disk(), s = dev < 0 ? dev : slot_alloc();
	if (s < 0)
		return s;
	long r = sc6(SYS_DEVICE_CAPS, SLOT_KERNEL, dev, s, SLOT_NONE, 0, 0);
	if (!r) {
		r = virtio_reg(s, VIRTIO_STATUS_OFF);
		cap_delete(s);
	}
	slot_release(s);
	return r;
}

/* One call to the driver with a cap riding along (or SLOT_NONE): the
 * answer's word 0 (0 or -E_*: the call's own error comes the same way),
 * words 1..3 in out (may be NULL). */
static long blk_call(long ep, uint64_t op, uint64_t a, uint64_t b, uint64_t c, long xfer,
		     uint64_t out[3])
{
	uint64_t w[4] = { op, a, b, c };
	struct sysret r = ipc(SYS_CALL, ep, w, xfer);
	if (r.a0)
		return r.a0;
	if (out) {
		out[0] = (uint64_t)r.a2;
		out[1] = (uint64_t)r.a3;
		out[2] = (uint64_t)r.a4;
	}
	return r.a1;
}

static void drop(long *s)
{
	if (*s >= 0) {
		cap_delete(*s);
		slot_release(*s);
	}
	*s = SLOT_NONE;
}

/* BLK_INFO through ep: b's ep, sectors, max_pages set; 0 or the error
 * (b unchanged). */
static long blk_info(struct blk *b, long ep)
{
	uint64_t out[3];
	long r = blk_call(ep, BLK_INFO, 0, 0, 0, SLOT_NONE, out);
	if (r)
		return r;
	b->ep = ep;
	b->sectors = out[0];
	b->max_pages = (unsigned)out[1];
	return 0;
}

long blk_connect(struct blk *b, long ep)
{
	b->driver = b->owner = SLOT_NONE;
	return blk_info(b, ep);
}

/* Each step's error ends it; whatever was made is deleted again (the
 * driver killed and reaped first, so it holds nothing of ours). */
long blk_start(struct blk *b)
{
	long dev = find_disk();
	if (dev < 0)
		return dev;
	long mmio = slot_alloc(), irq = slot_alloc(), ep = slot_alloc(), task = slot_alloc(),
	     owner = slot_alloc(), mine = slot_alloc();
	long r = mine < 0 ? -E_NOMEM : sc6(SYS_DEVICE_CAPS, SLOT_KERNEL, dev, mmio, irq, 0, 0);
	long module = r ? r : module_find("virtio-blk");
	if (module < 0)
		r = module;
	if (!r)
		r = ep_create(ep);
	if (!r)
		r = program_spawn_give(module, 1, (char *[]){ "virtio-blk", NULL }, DRIVER_QUOTA, task,
				       ep, 0);
	if (!r)
		r = cap_mint(ep, owner, R_SEND | R_GRANT, BLK_BADGE_OWNER, 0, 0);
	if (!r)
		r = cap_mint(ep, mine, R_SEND | R_GRANT, 1, 0, 0);
	/* The driver holds the only cap that receives there now: when it
	 * dies, every call on the endpoint fails instead of waiting. */
	drop(&ep);
	if (!r)
		r = blk_call(owner, BLK_SETUP_MMIO, 0, 0, 0, mmio, NULL);
	if (!r)
		r = blk_call(owner, BLK_SETUP_IRQ, 0, 0, 0, irq, NULL);
	drop(&mmio);
	drop(&irq);
	if (!r) {
		b->driver = task;
		b->owner = owner;
		r = blk_info(b, mine);
	}
	if (!r)
		return 0;
	if (task >= 0 && cap_info(task, &(struct cap_info){ 0 }) == 0) {
		task_kill(task);
		task_wait(task);
	}
	drop(&task);
	drop(&owner);
	drop(&mine);
	b->driver = b->owner = b->ep = SLOT_NONE;
	return r;
}

long blk_client_cap(struct blk *b, uint64_t badge, long dst)
{
	if (b->owner < 0)
		return -E_PERM;
	if (badge == BLK_BADGE_OWNER || (badge & BLK_BADGE_DRIVER))
		return -E_INVAL;
	return cap_mint(b->owner, dst, R_SEND | R_GRANT, badge, 0, 0);
}

long blk_forget(struct blk *b, uint64_t badge)
{
	if (b->owner < 0)
		return -E_PERM;
	uint64_t out[3];
	long r = blk_call(b->owner, BLK_FORGET, badge, 0, 0, SLOT_NONE, out);
	return r ? r : (long)out[0];
}

long blk_attach(struct blk *b, long frame)
{
	uint64_t out[3];
	long r = blk_call(b->ep, BLK_ATTACH, 0, 0, 0, frame, out);
	return r ? r : (long)out[0];
}

long blk_detach(struct blk *b, unsigned index)
{
	return blk_call(b->ep, BLK_DETACH, index, 0, 0, SLOT_NONE, NULL);
}

long blk_read(struct blk *b, uint64_t sector, unsigned buf, unsigned pages)
{
	return blk_call(b->ep, BLK_READ, sector, buf, pages, SLOT_NONE, NULL);
}

long blk_write(struct blk *b, uint64_t sector, unsigned buf, unsigned pages)
{
	return blk_call(b->ep, BLK_WRITE, sector, buf, pages, SLOT_NONE, NULL);
}

void blk_stop(struct blk *b)
{
	if (b->driver >= 0) {
		task_kill(b->driver);
		task_wait(b->driver);
	}
	drop(&b->driver);
	drop(&b->owner);
	drop(&b->ep);
}
