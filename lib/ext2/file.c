/* The ext2 reader: the block map (direct and indirect blocks) and reads
 * of file bytes. */
#include <string.h>
#include <patina/errno.h>
#include "ext2_int.h"

/* The longest run one read callback gets: bounds its sector count. */
#define RUN_MAX 4096u

/* How many of the n pointers at p, from the first on, continue block b
 * (b, b + 1, ...; or zeros when b is 0), at most max. */
static uint32_t run_of(const uint8_t *p, uint32_t n, uint32_t max, uint32_t b)
{
	uint32_t k = 1;
	while (k < n && k < max) {
		uint32_t next = ext2_le32(p + 4 * k);
		if (b ? next != b + k : next != 0)
			break;
		k++;
	}
	return k;
}

long ext2_bmap(struct ext2 *fs, const struct ext2_inode *in, uint64_t lblock, uint32_t max_run,
	       uint32_t *pblock, uint32_t *run)
{
	uint64_t p = fs->ptrs_per_block;
	if (!max_run)
		max_run = 1;
	if (lblock < 12) {
		uint8_t direct[12 * 4];
		for (unsigned i = 0; i < 12; i++) {
			uint32_t v = in->block[i];
			direct[4 * i] = (uint8_t)v;
			direct[4 * i + 1] = (uint8_t)(v >> 8);
			direct[4 * i + 2] = (uint8_t)(v >> 16);
			direct[4 * i + 3] = (uint8_t)(v >> 24);
		}
		*pblock = in->block[lblock];
		if (*pblock >= fs->blocks)
			return -E_INVAL;
		*run = run_of(direct + 4 * lblock, (uint32_t)(12 - lblock), max_run, *pblock);
		return 0;
	}
	/* depth 1, 2 or 3 pointer blocks; idx[] the index at each level. */
	uint64_t rest = lblock - 12, span = p;
	unsigned depth = 1;
	while (rest >= span) {
		rest -= span;
		if (++depth > 3)
			return -E_INVAL;   /* past what the triple indirect block addresses */
		span *= p;
	}
	uint32_t b = in->block[11 + depth];
	for (unsigned level = 0; level < depth; level++) {
		span /= p;
		uint32_t idx = (uint32_t)(rest / span);
		rest %= span;
		if (!b) {                   /* a hole spanning this whole pointer block */
			*pblock = 0;
			*run = 1;
			return 0;
		}
		long r = ext2_block(fs, b, fs->ind[level], &fs->ind_no[level]);
		if (r)
			return r;
		b = ext2_le32(fs->ind[level] + 4 * idx);
		if (b >= fs->blocks)
			return -E_INVAL;
		if (level == depth - 1)
			*run = run_of(fs->ind[level] + 4 * idx, (uint32_t)(p - idx), max_run, b);
	}
	*pblock = b;
	return 0;
}

long ext2_read(struct ext2 *fs, const struct ext2_inode *in, uint64_t off, void *buf, uint64_t len)
{
	unsigned type = ext2_type(in);
	if (type != EXT2_T_REG && type != EXT2_T_DIR)
		return -E_INVAL;
	if (off >= in->size)
		return 0;
	if (len > in->size - off)
		len = in->size - off;
	uint8_t *out = buf;
	uint32_t bs = fs->block_size;
	uint64_t done = 0;
	while (done < len) {
		uint64_t pos = off + done, left = len - done;
		uint64_t lb = pos / bs;
		uint32_t boff = (uint32_t)(pos % bs), pb, run;
		if (!boff && left >= bs) {
			/* Whole blocks straight into buf, a disk run at a time. */
			uint64_t want = left / bs < RUN_MAX ? left / bs : RUN_MAX;
			long r = ext2_bmap(fs, in, lb, (uint32_t)want, &pb, &run);
			if (r)
				return r;
			if (!pb)
				memset(out + done, 0, (size_t)run * bs);
			else if ((uint64_t)pb + run > fs->blocks)
				return -E_INVAL;
			else if ((r = fs->read(fs->ctx, (uint64_t)pb * fs->sectors_per_block,
					       run * fs->sectors_per_block, out + done)))
				return r;
			done += (uint64_t)run * bs;
			continue;
		}
		/* A block's head or tail through the data cache. */
		uint32_t n = bs - boff < left ? bs - boff : (uint32_t)left;
		long r = ext2_bmap(fs, in, lb, 1, &pb, &run);
		if (r)
			return r;
		if (!pb) {
			memset(out + done, 0, n);
		} else {
			if ((r = ext2_block(fs, pb, fs->data, &fs->data_no)))
				return r;
			memcpy(out + done, fs->data + boff, n);
		}
		done += n;
	}
	return (long)done;
}
