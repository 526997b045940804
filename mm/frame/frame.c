/* See frame.h for the design. Lock order: interrupts off, then pool_lock. */
#include <stdint.h>
#include <stddef.h>
#include <patina/errno.h>
#include "frame.h"
#include "cpu.h"
#include "kstring.h"
#include "spinlock.h"
#include "panic.h"
#include "failalloc.h"

struct region {
	paddr_t base;        /* first managed frame */
	uint64_t nframes;
	paddr_t pool_pa;     /* bitmap, bit set: frame is in the global pool */
	paddr_t isfree_pa;   /* bitmap, bit set: frame is free (pool or a magazine) */
	paddr_t desc_pa;     /* desc_size bytes per frame, or 0 */
	uint64_t hint;       /* word index where the last search stopped */
};

static uint32_t desc_bytes;
static uint64_t meta_frames;

static inline uint64_t *pool_bits(const struct region *r) { return phys_to_virt(r->pool_pa); }
static inline uint64_t *free_bits(const struct region *r) { return phys_to_virt(r->isfree_pa); }

static struct region regions[FRAME_MAX_REGIONS];
static int nregions;
static spinlock_t pool_lock = SPINLOCK_INIT_CLASS(&lock_class_frame_pool);
static uint64_t pool_count;   /* frames in the global pool; pool_lock */
static uint64_t total_frames;
static int initialised;

/* Index of the lowest set bit of a nonzero word. Written out because the
 * kernel links no libgcc (and the base ISA has no ctz instruction). */
static int lowest_bit(uint64_t w)
{
	int n = 0;
	if (!(w & 0xffffffffULL)) { n += 32; w >>= 32; }
	if (!(w & 0xffffULL)) { n += 16; w >>= 16; }
	if (!(w & 0xffULL)) { n += 8; w >>= 8; }
	if (!(w & 0xfULL)) { n += 4; w >>= 4; }
	if (!(w & 0x3ULL)) { n += 2; w >>= 2; }
	if (!(w & 0x1ULL)) { n += 1; }
	return n;
}

/* Region holding pa, or NULL. */
static struct region *region_of(paddr_t pa)
{
	for (int i = 0; i < nregions; i++) {
		struct region *r = &regions[i];
		if (pa >= r->base && (pa - r->base) / FRAME_SIZE < r->nframes)
			return r;
	}
	return NULL;
}

int frame_init(const struct phys_range *ranges, int n, uint32_t desc_size)
{
	if (initialised || (desc_size & 7))
		return -E_INVAL;
	struct region tmp[FRAME_MAX_REGIONS];
	uint64_t tmp_meta = 0;
	int nt = 0;
	for (int i = 0; i < n; i++) {
		paddr_t lo = (ranges[i].base + FRAME_SIZE - 1) & ~(FRAME_SIZE - 1);
		paddr_t hi = (ranges[i].base + ranges[i].size) & ~(FRAME_SIZE - 1);
		if (hi <= lo)
			continue;
		uint64_t frames = (hi - lo) / FRAME_SIZE;
		uint64_t words = (frames + 63) / 64;
		uint64_t bitmap_frames = (2 * words * 8 + FRAME_SIZE - 1) / FRAME_SIZE;
		/* Descriptors for every frame of the range (a few unused ones
		 * for the metadata frames keep the arithmetic simple). */
		uint64_t desc_frames = (frames * desc_size + FRAME_SIZE - 1) / FRAME_SIZE;
		uint64_t meta = bitmap_frames + desc_frames;
		if (meta >= frames)
			continue;
		if (nt >= FRAME_MAX_REGIONS)
			return -E_INVAL;
		tmp[nt].pool_pa = lo;
		tmp[nt].isfree_pa = lo + words * 8;
		tmp[nt].desc_pa = desc_size ? lo + bitmap_frames * FRAME_SIZE : 0;
		tmp[nt].base = lo + meta * FRAME_SIZE;
		tmp[nt].nframes = frames - meta;
		tmp[nt].hint = 0;
		tmp_meta += meta;
		nt++;
	}

	for (int i = 0; i < nt; i++) {
		struct region *r = &tmp[i];
		uint64_t words = (r->nframes + 63) / 64;
		uint64_t *pool = pool_bits(r), *isfree = free_bits(r);
		for (uint64_t w = 0; w < words; w++) {
			uint64_t bits = ~0ULL;
			if (w == words - 1 && (r->nframes & 63))
				bits = (1ULL << (r->nframes & 63)) - 1;
			pool[w] = bits;
			isfree[w] = bits;
		}
		if (r->desc_pa)
			memset(phys_to_virt(r->desc_pa), 0,
			       (size_t)(r->base - r->desc_pa));
		regions[i] = *r;
		total_frames += r->nframes;
	}
	nregions = nt;
	desc_bytes = desc_size;
	meta_frames = tmp_meta;
	pool_count = total_frames;
	initialised = 1;
	return 0;
}

/* Move up to `want` frames from the pool into out[]. Needs pool_lock.
 * Returns how many were moved. */
static uint32_t pool_take(paddr_t *out, uint32_t want)
{
	uint32_t got = 0;
	for (int i = 0; i < nregions && got < want; i++) {
		struct region *r = &regions[i];
		uint64_t words = (r->nframes + 63) / 64;
		uint64_t *pool = pool_bits(r);
		uint64_t start = r->hint;   /* updated below; scan from a fixed origin */
		for (uint64_t k = 0; k < words && got < want; k++) {
			uint64_t w = (start + k) % words;
			while (pool[w] && got < want) {
				int b = lowest_bit(pool[w]);
				pool[w] &= pool[w] - 1;
				out[got++] = r->base + (w * 64 + (uint64_t)b) * FRAME_SIZE;
			}
			if (pool[w])
				r->hint = w;
			else
				r->hint = (w + 1) % words;
		}
	}
	pool_count -= got;
	return got;
}

/* Put frames back into the pool. Needs pool_lock; frames are managed. */
static void pool_put(const paddr_t *in, uint32_t n)
{
	for (uint32_t i = 0; i < n; i++) {
		struct region *r = region_of(in[i]);
		uint64_t idx = (in[i] - r->base) / FRAME_SIZE;
		pool_bits(r)[idx / 64] |= 1ULL << (idx % 64);
	}
	pool_count += n;
}

static uint64_t *isfree_word(paddr_t pa, uint64_t *bit)
{
	struct region *r = region_of(pa);
	if (!r)
		return NULL;
	uint64_t idx = (pa - r->base) / FRAME_SIZE;
	*bit = 1ULL << (idx % 64);
	return &free_bits(r)[idx / 64];
}

int frame_alloc(unsigned flags, paddr_t *pa)
{
	if (failalloc_fail())
		return -E_NOMEM;
	unsigned long f = irq_save();
	struct frame_magazine *m = &this_cpu()->mag;
	if (m->count == 0) {
		spin_lock(&pool_lock);
		m->count = pool_take(m->frames, FRAME_MAG_BATCH);
		spin_unlock(&pool_lock);
		if (m->count == 0) {
			irq_restore(f);
			return -E_NOMEM;
		}
	}
	paddr_t p = m->frames[--m->count];
	irq_restore(f);

	uint64_t bit;
	uint64_t *w = isfree_word(p, &bit);
	if (!w || !(__atomic_fetch_and(w, ~bit, __ATOMIC_ACQ_REL) & bit))
		panic("frame: handing out %lx which is not a free managed frame",
		      (unsigned long)p);
	if (flags & FRAME_ZERO)
		memset(phys_to_virt(p), 0, FRAME_SIZE);
	*pa = p;
	return 0;
}

int frame_free(paddr_t pa)
{
	if (pa & (FRAME_SIZE - 1))
		return -E_INVAL;
	uint64_t bit;
	uint64_t *w = isfree_word(pa, &bit);
	if (!w)
		return -E_INVAL;
	if (__atomic_fetch_or(w, bit, __ATOMIC_ACQ_REL) & bit)
		return -E_INVAL;      /* already free: the OR changed nothing */

	unsigned long f = irq_save();
	struct frame_magazine *m = &this_cpu()->mag;
	if (m->count == FRAME_MAG_SIZE) {
		spin_lock(&pool_lock);
		m->count -= FRAME_MAG_BATCH;
		pool_put(&m->frames[m->count], FRAME_MAG_BATCH);
		spin_unlock(&pool_lock);
	}
	m->frames[m->count++] = pa;
	irq_restore(f);
	return 0;
}

/* Whether frames [first, first + n) of r are all in the pool. Needs
 * pool_lock; the run lies inside r. */
static int pool_run_free(const struct region *r, uint64_t first, uint64_t n)
{
	const uint64_t *pool = pool_bits(r);
	for (uint64_t i = first; i < first + n; i++)
		if (!(pool[i / 64] & (1ULL << (i % 64))))
			return 0;
	return 1;
}

/* Take frames [first, first + n) of r out of the pool (all in it). Needs
 * pool_lock. */
static void pool_claim(struct region *r, uint64_t first, uint64_t n)
{
	for (uint64_t i = first; i < first + n; i++) {
		pool_bits(r)[i / 64] &= ~(1ULL << (i % 64));
		__atomic_fetch_and(&free_bits(r)[i / 64], ~(1ULL << (i % 64)), __ATOMIC_ACQ_REL);
	}
	pool_count -= n;
}

/* The first run of n pool frames whose address is a multiple of `align`
 * bytes (a power of two, at least a frame): 0 and it claimed in *pa,
 * zeroed, or -E_NOMEM. */
static int alloc_run(uint64_t n, uint64_t align, paddr_t *pa)
{
	if (n == 0)
		return -E_INVAL;
	if (failalloc_fail())
		return -E_NOMEM;
	unsigned long f = spin_lock_irqsave(&pool_lock);
	for (int k = 0; k < nregions; k++) {
		struct region *r = &regions[k];
		uint64_t skip = ((align - r->base % align) % align) / FRAME_SIZE;
		uint64_t step = align / FRAME_SIZE;
		for (uint64_t first = skip; first + n <= r->nframes; first += step) {
			if (!pool_run_free(r, first, n))
				continue;
			pool_claim(r, first, n);
			spin_unlock_irqrestore(&pool_lock, f);
			*pa = r->base + first * FRAME_SIZE;
			memset(phys_to_virt(*pa), 0, (size_t)(n * FRAME_SIZE));
			return 0;
		}
	}
	spin_unlock_irqrestore(&pool_lock, f);
	return -E_NOMEM;
}

int frame_alloc_run(uint64_t n, paddr_t *pa)
{
	return alloc_run(n, FRAME_SIZE, pa);
}

int frame_alloc_run_aligned(uint64_t n, paddr_t *pa)
{
	if (n & (n - 1))
		return -E_INVAL;
	return alloc_run(n, n * FRAME_SIZE, pa);
}

uint64_t frame_free_count(void)
{
	unsigned long f = spin_lock_irqsave(&pool_lock);
	uint64_t n = pool_count;
	spin_unlock_irqrestore(&pool_lock, f);
	for (uint32_t i = 0; i < harts_max; i++)
		n += __atomic_load_n(&cpus[i].mag.count, __ATOMIC_RELAXED);
	return n;
}

uint64_t frame_total_count(void)
{
	return total_frames;
}

int frame_is_managed(paddr_t pa)
{
	return region_of(pa) != NULL;
}

int frame_is_free(paddr_t pa)
{
	uint64_t bit;
	uint64_t *w = isfree_word(pa & ~(FRAME_SIZE - 1), &bit);
	return w && (__atomic_load_n(w, __ATOMIC_ACQUIRE) & bit);
}

void *frame_desc(paddr_t pa)
{
	struct region *r = region_of(pa);
	if (!r || !r->desc_pa)
		return NULL;
	uint64_t idx = (pa - r->base) / FRAME_SIZE;
	/* Slots are laid out for the whole original range, which starts at
	 * pool_pa; the managed frames come after the metadata. */
	uint64_t slot = (r->base - r->pool_pa) / FRAME_SIZE + idx;
	return (uint8_t *)phys_to_virt(r->desc_pa) + slot * desc_bytes;
}

uint64_t frame_meta_count(void)
{
	return meta_frames;
}

int frame_regions(struct phys_range *out, int max)
{
	for (int i = 0; i < nregions && i < max; i++) {
		out[i].base = regions[i].base;
		out[i].size = regions[i].nframes * FRAME_SIZE;
	}
	return nregions;
}
