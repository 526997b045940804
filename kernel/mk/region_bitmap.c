/* SYS_REGION_BITMAP: the resident, accessed and dirty pages of a range as
 * three bitmaps (layout and errors in <patina/cap.h>), for a pager that
 * writes back or snapshots without evicting.
 *
 * The range is read a chunk of REGION_BITMAP_CHUNK pages at a time: the
 * chunk's caps are decoded as a region transaction's are (txn_decode: the
 * revoke barrier holds the cap for the chunk), its range is locked, the
 * page table under it is walked once (mm_leaves: huge leaves fill all
 * their bits, empty subtrees are skipped), the lock is dropped, and only
 * then are its bits copied out: a copy may fault, and a fault handler may
 * need the very range (the buffer may lie in it), so no copy runs under
 * a cursor. The chunk's bits live in one kernel frame, not on the stack. */
#include "region.h"
#include "frame.h"
#include "mm_platform.h"

#define CHUNK_WORDS (REGION_BITMAP_CHUNK / 64)

/* One chunk's bitmaps, base the address of its first page. */
struct bitmaps {
	uint64_t base;
	uint64_t *res, *acc, *dirty;
	long resident;
};

/* Set bits [a, b] (inclusive) of bm. */
static void bits_set(uint64_t *bm, uint64_t a, uint64_t b)
{
	while (a <= b) {
		unsigned s = (unsigned)(a % 64);
		uint64_t n = b - a + 1 < 64 - s ? b - a + 1 : 64 - s;
		bm[a / 64] |= (n == 64 ? ~0ull : ((1ull << n) - 1)) << s;
		a += n;
	}
}

/* mm_leaves callback: the leaf's pages inside the chunk. */
static void leaf_bits(void *arg, const struct mm_leaf *l)
{
	struct bitmaps *bm = arg;
	uint64_t a = (l->lo - bm->base) / PAGE_SIZE, b = (l->last - bm->base) / PAGE_SIZE;
	bits_set(bm->res, a, b);
	if (l->accessed)
		bits_set(bm->acc, a, b);
	if (l->dirty)
		bits_set(bm->dirty, a, b);
	bm->resident += (long)(b - a + 1);
}

/* Read the chunk [clo, chi) of x's range into bm (zeroed here): decode
 * the cap over [dlo, dhi) (the whole range for the first chunk, so every
 * check runs before anything is read), lock, walk, release. 0 or -E_*. */
static int chunk_read(struct task *t, long slot, uint64_t dlo, uint64_t dhi, uint64_t clo,
		      uint64_t chi, struct bitmaps *bm)
{
	struct txn x = { .t = t, .lo = dlo, .hi = dhi };
	int err = txn_decode(&x, slot);
	if (err)
		return err;
	if (!(x.rights & R_QUERY)) {
		txn_undecode(&x);
		return -E_PERM;
	}
	for (unsigned i = 0; i < CHUNK_WORDS; i++)
		bm->res[i] = bm->acc[i] = bm->dirty[i] = 0;
	bm->base = clo;
	struct mm_cursor c;
	err = err_from_mm(mm_lock(&c, &x.target->as, clo, chi));
	if (!err) {
		err = err_from_mm(mm_leaves(&c, clo, chi - clo, leaf_bits, bm, NULL));
		mm_release(&c);
	}
	txn_undecode(&x);
	return err;
}

/* Needs: no lock held (it takes the cursor per chunk, and copies with
 * none). Every argument is checked before anything is read: flags, range
 * form and size, the buffer's extent, then (first chunk) the cap, its
 * range and R_QUERY. Returns the resident pages of [lo, hi), or -E_* (the
 * chunks before a copy that faulted stay written). */
long sys_region_bitmap(struct task *t, long slot, uint64_t lo, uint64_t hi, uint64_t ubuf, long flags)
{
	if (flags || ((lo | hi) & (PAGE_SIZE - 1)) || lo >= hi)
		return -E_INVAL;
	uint64_t pages = (hi - lo) / PAGE_SIZE;
	if (pages > REGION_BITMAP_MAX_PAGES)
		return -E_RANGE;
	uint64_t words = REGION_BITMAP_WORDS(lo, hi), bytes = 3 * words * 8;
	if ((ubuf & 7) || ubuf > user_top || bytes > user_top - ubuf)
		return -E_FAULT;
	paddr_t pa;
	if (frame_alloc(0, &pa))
		return -E_NOMEM;
	uint64_t *buf = kmm_phys_to_virt(pa);
	struct bitmaps bm = { .res = buf, .acc = buf + CHUNK_WORDS, .dirty = buf + 2 * CHUNK_WORDS };
	long err = 0;
	for (uint64_t clo = lo; !err && clo < hi; clo += REGION_BITMAP_CHUNK * PAGE_SIZE) {
		uint64_t chi = hi - clo > REGION_BITMAP_CHUNK * PAGE_SIZE ?
				       clo + REGION_BITMAP_CHUNK * PAGE_SIZE : hi;
		err = chunk_read(t, slot, clo == lo ? lo : clo, clo == lo ? hi : chi, clo, chi, &bm);
		uint64_t w0 = (clo - lo) / PAGE_SIZE / 64, nw = REGION_BITMAP_WORDS(clo, chi);
		for (unsigned k = 0; !err && k < 3; k++)
			if (copy_to_user(ubuf + (k * words + w0) * 8, buf + k * CHUNK_WORDS, nw * 8))
				err = -E_FAULT;
	}
	frame_free(pa);
	return err ? err : bm.resident;
}
