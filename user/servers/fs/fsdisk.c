/* The attached disk as an ext2 file system (fsdisk.h). */
#include "ulib.h"
#include "fsdisk.h"

#define PG 4096UL

long fsdisk_read(void *ctx, uint64_t sector, uint32_t count, void *buf)
{
	struct fsdisk *d = ctx;
	uint64_t total = d->blk.sectors;
	if (sector > total || count > total - sector)
		return -E_RANGE;
	uint8_t *out = buf;
	while (count) {
		/* Whole pages from `start`; near the end of the disk the
		 * pages start earlier so that they stay on it. */
		uint32_t n = count < d->nbuf * BLK_PAGE_SECTORS ? count : d->nbuf * BLK_PAGE_SECTORS;
		unsigned pages = (n + BLK_PAGE_SECTORS - 1) / BLK_PAGE_SECTORS;
		uint64_t span = (uint64_t)pages * BLK_PAGE_SECTORS, start = sector;
		if (start + span > total) {
			if (span > total)
				return -E_RANGE;
			start = total - span;
		}
		long r = blk_read(&d->blk, start, d->first, pages);
		if (r)
			return r;
		d->requests++;
		d->pages_read += pages;
		memcpy(out, (const uint8_t *)d->va + (sector - start) * BLK_SECTOR, (size_t)n * BLK_SECTOR);
		out += (size_t)n * BLK_SECTOR;
		sector += n;
		count -= n;
	}
	return 0;
}

long fsdisk_open(struct fsdisk *d)
{
	memset(d, 0, sizeof *d);
	long r = blk_start(&d->blk);
	if (r)
		return r;
	d->nbuf = d->blk.max_pages < FSDISK_BUFS ? d->blk.max_pages : FSDISK_BUFS;
	if (!d->nbuf)
		r = -E_INVAL;
	else
		r = blk_buffers_new(&d->blk, d->nbuf, &d->va, d->frames, &d->first);
	if (r) {
		blk_stop(&d->blk);
		return r;
	}
	if ((r = ext2_mount(&d->fs, fsdisk_read, d)))
		fsdisk_close(d);
	return r;
}

void fsdisk_close(struct fsdisk *d)
{
	blk_buffers_free(&d->blk, d->nbuf, d->va, d->frames, d->first);
	blk_stop(&d->blk);
	d->nbuf = 0;
}
