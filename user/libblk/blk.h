/* The block protocol: a client and a block driver server (user/drivers/
 * virtio-blk) over IPC, data in frames the client shares with the driver.
 *
 * Messages (SYS_CALL on an endpoint cap to the driver; w0 = the op; the
 * reply's w0 is 0 or -E_*):
 *   BLK_INFO              -> w1 = capacity in 512-byte sectors,
 *                            w2 = most pages one request may carry (BLK_MAX_PAGES),
 *                            w3 = the most requests the device has had in
 *                            flight at once so far (a measure, for tests)
 *   BLK_ATTACH + frame cap (xfer) -> w1 = the buffer's index. The driver
 *                            keeps the cap (and so the frame) until the client
 *                            detaches it, dies or the driver ends; the client
 *                            keeps its own mapping of the frame and reads and
 *                            writes the data there.
 *   BLK_DETACH  w1 = index -> 0, -E_PERM (not attached), -E_BUSY (a request
 *                            in flight uses it)
 *   BLK_READ    w1 = first sector, w2 = first buffer index, w3 = pages
 *   BLK_WRITE   same       -> 0, or -E_IO (the device said so), -E_RANGE
 *                            (past the end of the disk), -E_PERM (a buffer the
 *                            caller did not attach), -E_INVAL (pages 0 or more
 *                            than BLK_MAX_PAGES), -E_AGAIN (the driver holds
 *                            as many requests as it can: 64); pages p of the request use
 *                            buffers first + 0 .. first + pages - 1. A READ
 *                            also needs each buffer's frame cap to have had
 *                            R_WRITE (the device writes it), else -E_PERM.
 *
 *   BLK_FORGET  w1 = badge -> w1 = buffers dropped now. Owner only (badge 0,
 *                            else -E_PERM): a client is gone (its parent
 *                            learnt it, e.g. from a death notice) and the
 *                            driver drops every buffer of that badge; one a
 *                            request in flight still uses goes when the
 *                            request completes. The driver has no task cap
 *                            of its clients and cannot learn their death
 *                            itself: without BLK_FORGET a dead client's
 *                            buffers stay until the driver ends.
 *
 * Set-up (from the driver's parent, on the unbadged cap; badge 0 is the
 * owner): the driver is spawned with `give` = the endpoint it serves (with
 * R_RECV: it holds the only such cap) and no kernel cap, then gets
 *   BLK_SETUP_MMIO + MMIO cap (xfer)  -> 0
 *   BLK_SETUP_IRQ  + IRQ cap (xfer)   -> 0 once the device is running, or the
 *                            error that stopped it (the driver then exits).
 * Either order; the second one starts the device. Before set-up is done every
 * other request gets -E_AGAIN; a set-up message from a badged cap -E_PERM,
 * a repeated one -E_EXIST, one without its cap -E_BADCAP.
 * Badges with bit 63 set are the driver's own (its interrupt messages): a
 * client cap never carries one (blk_client_cap refuses them).
 * Buffers belong to the client that attached them, told apart by the badge
 * of its endpoint cap. Each client numbers its own buffers from 0 (an
 * attach gets the lowest index that client has free, so pages attached one
 * after another get consecutive indexes whatever other clients do), so no
 * index can name another client's buffer: an index the caller has not
 * attached is refused (-E_PERM). Many requests may be in flight at once (from several threads
 * or tasks); each is answered when the device completes it, in any order.
 * When the driver dies, every call in flight and every later one fails
 * (-E_DEAD): nothing hangs. */
#ifndef PATINA_BLK_H
#define PATINA_BLK_H

#include <stdint.h>

#define BLK_SECTOR      512u
#define BLK_PAGE_SECTORS 8u
#define BLK_MAX_PAGES   16u

enum blk_op {
	BLK_INFO = 0xb10c01,
	BLK_ATTACH,
	BLK_DETACH,
	BLK_READ,
	BLK_WRITE,
	BLK_SETUP_MMIO,
	BLK_SETUP_IRQ,
	BLK_FORGET,
};
#define BLK_BADGE_OWNER  0ull          /* the parent's unbadged cap */
#define BLK_BADGE_DRIVER (1ull << 63)  /* reserved for the driver's own messages */

/* A client's view of one disk. */
struct blk {
	long ep;               /* endpoint cap to the driver (our badge) */
	long driver;           /* task cap of the driver when we started it, else SLOT_NONE */
	long owner;            /* unbadged send cap when we started it (to mint client
	                        * caps), else SLOT_NONE */
	uint64_t sectors;      /* capacity */
	unsigned max_pages;
};

/* Find the first virtio-blk device (needs the kernel cap in SLOT_KERNEL),
 * start the driver program on it and connect: b->ep, b->driver set.
 * Returns 0, -E_NOENT (no disk attached), or the error of the step that
 * failed (nothing left behind). */
long blk_start(struct blk *b);

/* The virtio status register of the device blk_start would pick (needs
 * the kernel cap): 0 once it is reset, with VIRTIO_STATUS_DRIVER_OK while
 * a driver runs it; -E_NOENT with no disk. For tests of the device's
 * life across a driver's death. */
#define VIRTIO_STATUS_DRIVER_OK 4
long blk_device_status(void);

/* Connect through an endpoint cap we were given (a badged cap to a driver
 * someone else started): asks BLK_INFO. */
long blk_connect(struct blk *b, long ep);

/* Mint a cap to b's driver for another client into slot dst: R_SEND |
 * R_GRANT with `badge` (its buffers are told apart by it). Needs b started
 * by blk_start (else -E_PERM); badge 0 or with bit 63 set: -E_INVAL. */
long blk_client_cap(struct blk *b, uint64_t badge, long dst);

/* BLK_FORGET badge on b's driver (b started by blk_start, else -E_PERM):
 * the number of buffers dropped now, or -E_*. */
long blk_forget(struct blk *b, uint64_t badge);

/* Share frame `frame` (a frame cap; a copy is sent) with the driver:
 * its buffer index, or -E_*. */
long blk_attach(struct blk *b, long frame);
long blk_detach(struct blk *b, unsigned index);

/* n (1..BLK_MAX_PAGES) fresh zeroed frames mapped read-write at *va
 * (an address uva_alloc chose) and attached in a row: the first index in
 * *first (page p is buffer *first + p), the frame caps in frames[0..n).
 * 0, or -E_BUSY when the driver did not give consecutive indexes (another
 * thread of ours attached meanwhile, or we detached in the middle of a
 * run), or the error of the step that failed:
 * nothing is kept either way. Not thread safe (it takes CSpace slots). */
long blk_buffers_new(struct blk *b, unsigned n, uint64_t *va, long *frames, unsigned *first);
/* Undo blk_buffers_new: detach, unmap, drop the frames. A dead driver
 * makes the detaches fail; the rest is done all the same. */
void blk_buffers_free(struct blk *b, unsigned n, uint64_t va, long *frames, unsigned first);

/* One request, synchronous for the calling thread (other threads may have
 * theirs in flight meanwhile): 0 or -E_*. */
long blk_read(struct blk *b, uint64_t sector, unsigned buf, unsigned pages);
long blk_write(struct blk *b, uint64_t sector, unsigned buf, unsigned pages);

/* Stop the driver we started (kill, wait) and drop our caps. */
void blk_stop(struct blk *b);

#endif
