/* The swap pager's disk store (swapdisk.h). */
#include "ulib.h"
#include "uva.h"
#include "swapdisk.h"

#define PG 4096UL

static long self_map_frame(long frame, uint64_t va)
{
	struct region_op op = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = va, .arg = frame };
	long r = region_txn(SLOT_SELF_AS, va, va + PG, &op, 1);
	return r < 0 ? r : op.result;
}

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
	r = -E_NOMEM;
	if ((d->frame = slot_alloc()) < 0 || (r = frame_alloc(d->frame)))
		goto fail;
	if (!(va = uva_alloc(self_hart(), PG))) {
		r = -E_NOMEM;
		goto fail;
	}
	if ((r = self_map_frame(d->frame, va))) {
		uva_free(va, PG);
		goto fail;
	}
	d->buf = (uint8_t *)va;
	r = blk_attach(b, d->frame);
	if (r >= 0) {
		d->bufidx = (unsigned)r;
		return 0;
	}
fail:
	swapdisk_fini(d);
	return r;
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
	if (d->buf) {
		blk_detach(d->blk, d->bufidx);
		mem_unmap((uint64_t)d->buf, PG);
	}
	if (d->frame >= 0) {
		cap_delete(d->frame);
		slot_release(d->frame);
	}
	if (d->map)
		mem_unmap((uint64_t)d->map, d->maplen);
	d->buf = NULL;
	d->map = NULL;
	d->frame = -1;
}
