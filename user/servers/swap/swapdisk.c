/* The swap pager's disk store (swapdisk.h). */
#include "ulib.h"
#include "uva.h"
#include "swapdisk.h"

#define PG 4096UL

long swapdisk_init(struct swapdisk *d, struct blk *b, unsigned long pages, uint64_t first,
		   unsigned long nslots)
{
	memset(d, 0, sizeof *d);
	d->frame = -1;
	uint64_t have = b->sectors > first ? (b->sectors - first) / BLK_PAGE_SECTORS : 0;
	if (!nslots || nslots > have)
		nslots = have;
	if (!pages || !nslots || nslots > (1UL << 31))
		return -E_INVAL;
	d->blk = b;
	d->first = first;
	d->nslots = nslots;
	d->pages = pages;
	uint64_t words = (nslots + 63) / 64;
	d->maplen = (words * 8 + pages * 4 + PG - 1) & ~(PG - 1);
	uint64_t meta = 0, va = 0;
	long r = mem_map(d->maplen, &meta);
	if (r)
		return r;
	d->map = (uint64_t *)meta;
	d->slot = (uint32_t *)(meta + words * 8);
	memset(d->slot, 0xff, pages * 4);
	if ((r = blk_buffers_new(b, 1, &va, &d->frame, &d->bufidx))) {
		d->frame = -1;
		swapdisk_fini(d);
		return r;
	}
	d->buf = (uint8_t *)va;
	return 0;
}

/* A free slot (next fit from the hint), marked used, or -1 when full. */
static long slot_take(struct swapdisk *d)
{
	for (unsigned long n = 0; n < d->nslots; n++) {
		unsigned long s = (d->hint + n) % d->nslots;
		if (d->map[s / 64] & (1ULL << (s % 64)))
			continue;
		d->map[s / 64] |= 1ULL << (s % 64);
		d->used++;
		d->hint = s + 1;
		return (long)s;
	}
	return -1;
}

static void slot_give(struct swapdisk *d, unsigned long s)
{
	d->map[s / 64] &= ~(1ULL << (s % 64));
	d->used--;
}

long swapdisk_write(struct swapdisk *d, unsigned long idx, const void *page)
{
	if (idx >= d->pages)
		return -E_INVAL;
	int fresh = d->slot[idx] == SWAPDISK_NOSLOT;
	if (fresh) {
		long s = slot_take(d);
		if (s < 0) {
			d->full++;
			return -E_NOMEM;
		}
		d->slot[idx] = (uint32_t)s;
	}
	memcpy(d->buf, page, PG);
	uint64_t t0 = rdtime();
	long r = blk_write(d->blk, d->first + (uint64_t)d->slot[idx] * BLK_PAGE_SECTORS, d->bufidx, 1);
	d->wticks += rdtime() - t0;
	if (r) {
		d->errors++;
		if (fresh) {
			slot_give(d, d->slot[idx]);
			d->slot[idx] = SWAPDISK_NOSLOT;
		}
		return r;
	}
	d->written++;
	return 0;
}

long swapdisk_read(struct swapdisk *d, unsigned long idx, void *page)
{
	if (idx >= d->pages || d->slot[idx] == SWAPDISK_NOSLOT)
		return -E_NOENT;
	uint64_t t0 = rdtime();
	long r = blk_read(d->blk, d->first + (uint64_t)d->slot[idx] * BLK_PAGE_SECTORS, d->bufidx, 1);
	d->rticks += rdtime() - t0;
	if (r) {
		d->errors++;
		return r;
	}
	memcpy(page, d->buf, PG);
	d->readback++;
	return 0;
}

void swapdisk_reset(struct swapdisk *d)
{
	memset(d->map, 0, (d->nslots + 63) / 64 * 8);
	memset(d->slot, 0xff, d->pages * 4);
	d->used = d->hint = 0;
}

void swapdisk_fini(struct swapdisk *d)
{
	if (d->buf)
		blk_buffers_free(d->blk, 1, (uint64_t)d->buf, &d->frame, d->bufidx);
	if (d->map)
		mem_unmap((uint64_t)d->map, d->maplen);
	d->buf = NULL;
	d->map = NULL;
	d->frame = -1;
}
