/* The attached disk as an ext2 file system: the block driver started
 * through libblk, a row of data buffers attached to it once, and the ext2
 * reader (lib/ext2) reading through them. */
#ifndef USER_FSDISK_H
#define USER_FSDISK_H

#include <stdint.h>
#include "blk.h"
#include "ext2.h"

#define FSDISK_BUFS 16u           /* pages of data buffers: one request's most */

struct fsdisk {
	struct blk blk;
	struct ext2 fs;
	uint64_t va;                  /* the buffers, mapped in a row */
	long frames[FSDISK_BUFS];
	unsigned first, nbuf;         /* the first buffer's index, how many */
	unsigned long requests, pages_read;  /* block requests made, pages they read */
};

/* Start the driver on the first disk (needs SLOT_KERNEL), attach the
 * buffers, mount the file system. 0, or the error of the step that failed
 * (-E_NOENT: no disk; -E_INVAL/-E_NOSYS: not an ext2 this reader takes),
 * with everything undone. */
long fsdisk_open(struct fsdisk *d);
/* Detach the buffers and stop the driver. */
void fsdisk_close(struct fsdisk *d);

/* The reader's read callback (ext2_read_fn) over d: count sectors from
 * `sector` into buf, as block requests of up to nbuf pages through the
 * shared buffers. 0, -E_RANGE past the end of the disk, or the driver's
 * error. One thread at a time. */
long fsdisk_read(void *d, uint64_t sector, uint32_t count, void *buf);

#endif
