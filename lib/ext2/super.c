/* The ext2 reader: the superblock, group descriptors and inodes. */
#include <string.h>
#include <patina/errno.h>
#include "ext2_int.h"

#define EXT2_MAGIC          0xef53u
#define INCOMPAT_FILETYPE   0x0002u
#define INCOMPAT_FLEX_BG    0x0200u
/* flex_bg only moves bitmaps and inode tables, which the descriptors
 * still locate: nothing else this reader does changes. */
#define INCOMPAT_OK         (INCOMPAT_FILETYPE | INCOMPAT_FLEX_BG)
#define GD_SIZE             32u
#define FL_EXTENTS          0x00080000u
#define FL_INLINE_DATA      0x10000000u

long ext2_block(struct ext2 *fs, uint32_t b, uint8_t *buf, uint32_t *cached)
{
	if (!b || b >= fs->blocks)
		return -E_INVAL;
	if (*cached == b)
		return 0;
	*cached = 0;
	long r = fs->read(fs->ctx, (uint64_t)b * fs->sectors_per_block, fs->sectors_per_block, buf);
	if (!r)
		*cached = b;
	return r;
}

static int pow2(uint32_t x)
{
	return x && !(x & (x - 1));
}

/* The superblock's fields into fs, each checked against the others. */
static long parse_super(struct ext2 *fs, const uint8_t *sb)
{
	if (ext2_le16(sb + 56) != EXT2_MAGIC)
		return -E_INVAL;
	uint32_t log_bs = ext2_le32(sb + 24);
	fs->rev = ext2_le32(sb + 76);
	if (fs->rev > 1 || log_bs > 2)
		return -E_INVAL;
	fs->block_size = 1024u << log_bs;
	fs->sectors_per_block = fs->block_size / EXT2_SECTOR;
	fs->ptrs_per_block = fs->block_size / 4;
	fs->inodes = ext2_le32(sb + 0);
	fs->blocks = ext2_le32(sb + 4);
	fs->first_data_block = ext2_le32(sb + 20);
	fs->blocks_per_group = ext2_le32(sb + 32);
	fs->inodes_per_group = ext2_le32(sb + 40);
	fs->inode_size = fs->rev ? ext2_le16(sb + 88) : 128;
	fs->incompat = fs->rev ? ext2_le32(sb + 96) : 0;
	uint32_t bits = fs->block_size * 8;
	if (fs->first_data_block != (fs->block_size == 1024) || fs->blocks <= fs->first_data_block + 1 ||
	    !fs->inodes || !fs->blocks_per_group || fs->blocks_per_group > bits ||
	    !fs->inodes_per_group || fs->inodes_per_group > bits ||
	    fs->inode_size < 128 || fs->inode_size > fs->block_size || !pow2(fs->inode_size))
		return -E_INVAL;
	uint64_t groups = (fs->blocks - fs->first_data_block + (uint64_t)fs->blocks_per_group - 1) /
			  fs->blocks_per_group;
	uint64_t gd_blocks = (groups * GD_SIZE + fs->block_size - 1) / fs->block_size;
	if ((uint64_t)fs->first_data_block + 1 + gd_blocks > fs->blocks ||
	    fs->inodes > groups * fs->inodes_per_group)
		return -E_INVAL;
	fs->groups = (uint32_t)groups;
	if (fs->incompat & ~INCOMPAT_OK)
		return -E_NOSYS;
	uint64_t p = fs->ptrs_per_block;
	fs->max_size = (12 + p + p * p + p * p * p) * fs->block_size;
	return 0;
}

long ext2_mount(struct ext2 *fs, ext2_read_fn read, void *ctx)
{
	memset(fs, 0, sizeof *fs);
	fs->read = read;
	fs->ctx = ctx;
	/* The superblock: 1024 bytes at byte 1024, whatever the block size. */
	long r = read(ctx, 1024 / EXT2_SECTOR, 1024 / EXT2_SECTOR, fs->data);
	if (!r)
		r = parse_super(fs, fs->data);
	if (r)
		memset(fs, 0, sizeof *fs);
	return r;
}

long ext2_inode(struct ext2 *fs, uint32_t ino, struct ext2_inode *out)
{
	if (!ino || ino > fs->inodes)
		return -E_INVAL;
	uint32_t group = (ino - 1) / fs->inodes_per_group, index = (ino - 1) % fs->inodes_per_group;
	uint64_t gd_off = (uint64_t)group * GD_SIZE;
	uint32_t gd_block = fs->first_data_block + 1 + (uint32_t)(gd_off / fs->block_size);
	long r = ext2_block(fs, gd_block, fs->gd, &fs->gd_no);
	if (r)
		return r;
	uint64_t table = ext2_le32(fs->gd + gd_off % fs->block_size + 8);
	uint64_t byte = (uint64_t)index * fs->inode_size;
	uint64_t b = table + byte / fs->block_size;
	if (!table || b >= fs->blocks)
		return -E_INVAL;
	r = ext2_block(fs, (uint32_t)b, fs->itab, &fs->itab_no);
	if (r)
		return r;
	const uint8_t *p = fs->itab + byte % fs->block_size;
	memset(out, 0, sizeof *out);
	out->ino = ino;
	out->mode = ext2_le16(p);
	out->flags = ext2_le32(p + 32);
	out->size = ext2_le32(p + 4);
	if (ext2_type(out) == EXT2_T_REG)
		out->size |= (uint64_t)ext2_le32(p + 108) << 32;
	for (unsigned i = 0; i < 15; i++)
		out->block[i] = ext2_le32(p + 40 + 4 * i);
	if (out->flags & (FL_EXTENTS | FL_INLINE_DATA))
		return -E_NOSYS;
	if (out->size > fs->max_size)
		return -E_INVAL;
	return 0;
}

unsigned ext2_type(const struct ext2_inode *in)
{
	switch (in->mode & 0xf000) {
	case 0x8000: return EXT2_T_REG;
	case 0x4000: return EXT2_T_DIR;
	case 0xa000: return EXT2_T_LNK;
	case 0:      return EXT2_T_UNKNOWN;
	default:     return EXT2_T_OTHER;
	}
}

char ext2_type_char(unsigned type)
{
	return "?fdlo"[type <= EXT2_T_OTHER ? type : 0];
}
