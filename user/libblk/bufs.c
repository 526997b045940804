/* Data buffers for block requests: frames mapped in the client and
 * attached to the driver in a row (blk.h). */
#include "ulib.h"
#include "uva.h"
#include "blk.h"

#define PG 4096UL

/* Map or unmap frames[0..n) at va as one transaction. */
static long map_all(unsigned n, uint64_t va, const long *frames, int map)
{
	struct region_op ops[BLK_MAX_PAGES];
	for (unsigned p = 0; p < n; p++)
		ops[p] = map ? (struct region_op){ .op = ROP_MAP, .prot = PROT_R | PROT_W,
						   .va = va + p * PG, .arg = frames[p] }
			     : (struct region_op){ .op = ROP_UNMAP, .va = va + p * PG, .len = PG };
	long r = region_txn(SLOT_SELF_AS, va, va + n * PG, ops, n);
	return r < 0 ? r : 0;
}

/* Detach buffers first .. first + k - 1, and drop frames[0..n). */
static void undo(struct blk *b, unsigned n, unsigned k, long *frames, unsigned first)
{
	for (unsigned p = 0; p < k; p++)
		blk_detach(b, first + p);
	for (unsigned p = 0; p < n; p++) {
		cap_delete(frames[p]);
		slot_release(frames[p]);
	}
}

long blk_buffers_new(struct blk *b, unsigned n, uint64_t *va, long *frames, unsigned *first)
{
	if (!n || n > BLK_MAX_PAGES)
		return -E_INVAL;
	unsigned made = 0;
	long r = 0;
	for (; made < n && !r; made++) {
		if ((frames[made] = slot_alloc()) < 0)
			r = -E_NOMEM;
		else if ((r = frame_alloc(frames[made])))
			slot_release(frames[made]);
	}
	if (r) {
		undo(b, made - 1, 0, frames, 0);
		return r;
	}
	uint64_t at = uva_alloc(self_hart(), n * PG);
	if (!at || (r = map_all(n, at, frames, 1))) {
		if (at)
			uva_free(at, n * PG);
		undo(b, n, 0, frames, 0);
		return at ? r : -E_NOMEM;
	}
	unsigned k = 0;
	long i0 = -1;
	for (; k < n; k++) {
		long i = blk_attach(b, frames[k]);
		if (i < 0 || (k && i != i0 + (long)k)) {
			r = i < 0 ? i : -E_BUSY;
			if (i >= 0)
				blk_detach(b, (unsigned)i);
			break;
		}
		if (!k)
			i0 = i;
	}
	if (r) {
		map_all(n, at, frames, 0);
		uva_free(at, n * PG);
		undo(b, n, k, frames, (unsigned)i0);
		return r;
	}
	*va = at;
	*first = (unsigned)i0;
	return 0;
}

void blk_buffers_free(struct blk *b, unsigned n, uint64_t va, long *frames, unsigned first)
{
	map_all(n, va, frames, 0);
	uva_free(va, n * PG);
	undo(b, n, n, frames, first);
}
