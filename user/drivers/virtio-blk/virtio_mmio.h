/* The virtio-mmio register window and the split virtqueue, as the virtio
 * 1.x specification lays them out (section 4.2 for MMIO, its legacy
 * interface in 4.2.4; 2.6 for the split queue; 5.2 for the block device).
 * Everything is little-endian, as this CPU is. */
#ifndef VIRTIO_MMIO_H
#define VIRTIO_MMIO_H

#include <stdint.h>

/* Register offsets. Legacy (version 1) only: HOST/GUEST features pairs
 * are the same registers as version 2's device/driver features;
 * GuestPageSize, QueueAlign and QueuePFN exist only there. */
enum {
	VIO_MAGIC = 0x000,          /* "virt" */
	VIO_VERSION = 0x004,        /* 1 legacy, 2 modern */
	VIO_DEVICE_ID = 0x008,      /* 2: block */
	VIO_VENDOR_ID = 0x00c,
	VIO_DEV_FEATURES = 0x010,
	VIO_DEV_FEATURES_SEL = 0x014,
	VIO_DRV_FEATURES = 0x020,
	VIO_DRV_FEATURES_SEL = 0x024,
	VIO_GUEST_PAGE_SIZE = 0x028,  /* v1 */
	VIO_QUEUE_SEL = 0x030,
	VIO_QUEUE_NUM_MAX = 0x034,
	VIO_QUEUE_NUM = 0x038,
	VIO_QUEUE_ALIGN = 0x03c,      /* v1 */
	VIO_QUEUE_PFN = 0x040,        /* v1 */
	VIO_QUEUE_READY = 0x044,      /* v2 */
	VIO_QUEUE_NOTIFY = 0x050,
	VIO_INTERRUPT_STATUS = 0x060,
	VIO_INTERRUPT_ACK = 0x064,
	VIO_STATUS = 0x070,
	VIO_QUEUE_DESC_LO = 0x080,    /* v2 */
	VIO_QUEUE_DESC_HI = 0x084,
	VIO_QUEUE_AVAIL_LO = 0x090,
	VIO_QUEUE_AVAIL_HI = 0x094,
	VIO_QUEUE_USED_LO = 0x0a0,
	VIO_QUEUE_USED_HI = 0x0a4,
	VIO_CONFIG_GEN = 0x0fc,       /* v2 */
	VIO_CONFIG = 0x100,           /* device-specific: virtio-blk's capacity first */
};
#define VIO_MAGIC_VALUE 0x74726976u
#define VIO_ID_BLOCK 2u

/* Device status bits. */
#define VIO_S_ACKNOWLEDGE 1u
#define VIO_S_DRIVER 2u
#define VIO_S_DRIVER_OK 4u
#define VIO_S_FEATURES_OK 8u
#define VIO_S_NEEDS_RESET 64u
#define VIO_S_FAILED 128u

/* InterruptStatus bits. */
#define VIO_INT_USED 1u
#define VIO_INT_CONFIG 2u

/* Feature bit 32 (word 1, bit 0): the modern interface; a version 2
 * device needs the driver to accept it. */
#define VIO_F_VERSION_1_WORD1 1u

/* The split virtqueue. */
struct vq_desc {
	uint64_t addr;
	uint32_t len;
	uint16_t flags;
	uint16_t next;
};
#define VQ_DESC_NEXT 1u
#define VQ_DESC_WRITE 2u    /* the device writes this buffer */

struct vq_avail {
	uint16_t flags;
	uint16_t idx;
	uint16_t ring[];
};
struct vq_used_elem {
	uint32_t id;
	uint32_t len;
};
struct vq_used {
	uint16_t flags;
	uint16_t idx;
	struct vq_used_elem ring[];
};

/* A virtio-blk request: this header, the data, one status byte. */
struct vblk_hdr {
	uint32_t type;
	uint32_t reserved;
	uint64_t sector;
};
#define VBLK_T_IN 0u     /* read */
#define VBLK_T_OUT 1u    /* write */
#define VBLK_S_OK 0u
#define VBLK_S_IOERR 1u
#define VBLK_S_UNSUPP 2u

#endif
