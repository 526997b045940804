/* A swap store on a disk: window pages written to slots of one page each,
 * allocated on the device as pages are first evicted, through the block
 * driver (libblk). One buffer frame is shared with the driver; a page is
 * copied there before a write and out of it after a read. One thread uses
 * a struct swapdisk (the swap pager's). */
#ifndef USER_SWAPDISK_H
#define USER_SWAPDISK_H

#include <stdint.h>
#include "blk.h"

#define SWAPDISK_NOSLOT 0xffffffffu

struct swapdisk {
	struct blk *blk;
	long frame;                 /* the buffer frame's cap (blk_buffers_new) */
	uint8_t *buf;               /* its mapping */
	unsigned bufidx;            /* its index at the driver */
	uint64_t first;             /* first sector of slot 0 */
	unsigned long nslots, used, hint;
	uint64_t *map;              /* slot allocation bitmap (nslots bits) */
	uint32_t *slot;             /* per window page: its slot, or SWAPDISK_NOSLOT */
	unsigned long pages;
	uint64_t maplen;            /* map and slot, in one mapping */
	/* What happened, for the summary. */
	unsigned long written, readback, full, errors;
	uint64_t wticks, rticks;    /* timebase ticks spent in writes, reads */
};

/* A store for a window of `pages` pages on disk b, slots from sector
 * `first` on, at most `nslots` of them (0: as many as the disk holds past
 * first). 0 or -E_* (nothing kept). */
long swapdisk_init(struct swapdisk *d, struct blk *b, unsigned long pages, uint64_t first,
		   unsigned long nslots);
/* Write window page idx from `page`, taking a slot for it if it has none:
 * 0, -E_NOMEM when the disk is full (no slot), or the driver's error
 * (the slot, if new, is given back). */
long swapdisk_write(struct swapdisk *d, unsigned long idx, const void *page);
/* Read window page idx into `page`: 0, -E_NOENT (never written) or the
 * driver's error. */
long swapdisk_read(struct swapdisk *d, unsigned long idx, void *page);
/* Forget every page (a new client starts): all slots free again. */
void swapdisk_reset(struct swapdisk *d);
/* Give everything back (the driver's copy of the buffer too). */
void swapdisk_fini(struct swapdisk *d);

#endif
