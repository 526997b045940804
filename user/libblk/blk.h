/* The block protocol: a client and a block driver server (user/drivers/
 * virtio-blk) over IPC, data in frames the client shares with the driver.
 *
 * Messages (SYS_CALL on an endpoint cap to the driver; w0 = the op; the
 * reply's w0 is 0 or -E_*):
 *   BLK_INFO              -> w1 = capacity in 512-byte sectors,
 *                            w2 = most pages one request may carry (BLK_MAX_PAGES)
 *   BLK_ATTACH + frame cap (xfer) -> w1 = the buffer's index. The driver
 *                            keeps the cap (and so the frame) until the client
 *                            detaches it, dies or the driver ends; the client
 *                            keeps its own mapping of the frame and reads and
 *                            writes the data there.
 *   BLK_DETACH  w1 = index -> 0
 *   BLK_READ    w1 = first sector, w2 = first buffer index, w3 = pages
 *   BLK_WRITE   same       -> 0, or -E_IO (the device said so), -E_RANGE
 *                            (past the end of the disk), -E_PERM (a buffer the
 *                            caller did not attach), -E_INVAL (pages 0 or more
 *                            than BLK_MAX_PAGES); pages p of the request use
 *                            buffers first + 0 .. first + pages - 1.
 * Buffers belong to the client that attached them, told apart by the badge
 * of its endpoint cap: a request naming another client's buffer is refused
 * (-E_PERM). Many requests may be in flight at once (from several threads
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
};

/* A client's view of one disk. */
struct blk {
	long ep;               /* endpoint cap to the driver (our badge) */
	long driver;           /* task cap of the driver when we started it, else SLOT_NONE */
	uint64_t sectors;      /* capacity */
	unsigned max_pages;
};

/* Find the first virtio-blk device (needs the kernel cap in SLOT_KERNEL),
 * start the driver program on it and connect: b->ep, b->driver set.
 * Returns 0, -E_NOENT (no disk attached), or the error of the step that
 * failed (nothing left behind). */
long blk_start(struct blk *b);

/* Connect through an endpoint cap we were given (a badged cap to a driver
 * someone else started): asks BLK_INFO. */
long blk_connect(struct blk *b, long ep);

/* Share frame `frame` (a frame cap; a copy is sent) with the driver:
 * its buffer index, or -E_*. */
long blk_attach(struct blk *b, long frame);
long blk_detach(struct blk *b, unsigned index);

/* One request, synchronous for the calling thread (other threads may have
 * theirs in flight meanwhile): 0 or -E_*. */
long blk_read(struct blk *b, uint64_t sector, unsigned buf, unsigned pages);
long blk_write(struct blk *b, uint64_t sector, unsigned buf, unsigned pages);

/* Stop the driver we started (kill, wait) and drop our caps. */
void blk_stop(struct blk *b);

#endif
