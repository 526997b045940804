/* The ext2 reader: directories (linked lists of records in blocks) and
 * path lookup. */
#include <string.h>
#include <patina/errno.h>
#include "ext2_int.h"

#define INCOMPAT_FILETYPE 0x0002u

long ext2_dir_open(struct ext2 *fs, const struct ext2_inode *in, struct ext2_dir *d)
{
	/* A directory is whole blocks: a tail would end in a partial record. */
	if (ext2_type(in) != EXT2_T_DIR || in->size % fs->block_size)
		return -E_INVAL;
	d->inode = *in;
	d->pos = 0;
	return 0;
}

/* The next record naming an inode: 1 with *ino, *ftype (EXT2_T_*, or
 * EXT2_T_UNKNOWN without the filetype feature), name (not terminated,
 * *len bytes, pointing into the data cache until the next read); 0 at
 * the end; -E_INVAL for a record that does not fit its block. */
static long next_record(struct ext2 *fs, struct ext2_dir *d, uint32_t *ino, unsigned *ftype,
			const char **name, unsigned *len)
{
	static const unsigned ftypes[8] = { EXT2_T_UNKNOWN, EXT2_T_REG, EXT2_T_DIR, EXT2_T_OTHER,
					     EXT2_T_OTHER, EXT2_T_OTHER, EXT2_T_OTHER, EXT2_T_LNK };
	uint32_t bs = fs->block_size;
	while (d->pos < d->inode.size) {
		uint32_t boff = (uint32_t)(d->pos % bs), pb, run;
		long r = ext2_bmap(fs, &d->inode, d->pos / bs, 1, &pb, &run);
		if (r)
			return r;
		if (!pb)
			return -E_INVAL;          /* directories have no holes */
		if ((r = ext2_block(fs, pb, fs->data, &fs->data_no)))
			return r;
		const uint8_t *p = fs->data + boff;
		uint32_t rec = ext2_le16(p + 4);
		unsigned n = p[6];
		if (!(fs->incompat & INCOMPAT_FILETYPE))
			n |= (unsigned)p[7] << 8;
		if (rec < 8 || rec % 4 || rec > bs - boff || n + 8 > rec)
			return -E_INVAL;
		d->pos += rec;
		uint32_t i = ext2_le32(p);
		if (!i)
			continue;                 /* an unused record */
		if (i > fs->inodes || !n || n > EXT2_NAME_MAX)
			return -E_INVAL;
		*ino = i;
		*ftype = fs->incompat & INCOMPAT_FILETYPE ? ftypes[p[7] & 7] : EXT2_T_UNKNOWN;
		*name = (const char *)p + 8;
		*len = n;
		return 1;
	}
	return 0;
}

long ext2_dir_next(struct ext2 *fs, struct ext2_dir *d, struct ext2_dirent *out)
{
	const char *name;
	unsigned len, ftype;
	uint32_t ino;
	long r = next_record(fs, d, &ino, &ftype, &name, &len);
	if (r <= 0)
		return r;
	memcpy(out->name, name, len);
	out->name[len] = 0;
	out->ino = ino;
	struct ext2_inode in;
	if ((r = ext2_inode(fs, ino, &in)))
		return r;
	out->type = ftype != EXT2_T_UNKNOWN ? ftype : ext2_type(&in);
	out->size = in.size;
	return 1;
}

/* The inode that name[0 .. len) names in directory `dir`: 0, -E_NOENT. */
static long lookup_in(struct ext2 *fs, const struct ext2_inode *dir, const char *name, unsigned len,
		      struct ext2_inode *out)
{
	struct ext2_dir d;
	if (ext2_type(dir) != EXT2_T_DIR)
		return -E_NOENT;
	long r = ext2_dir_open(fs, dir, &d);
	while (!r) {
		const char *n;
		unsigned nlen, ftype;
		uint32_t ino;
		r = next_record(fs, &d, &ino, &ftype, &n, &nlen);
		if (r < 0)
			return r;
		if (!r)
			return -E_NOENT;
		if (nlen == len && !memcmp(n, name, len))
			return ext2_inode(fs, ino, out);
		r = 0;
	}
	return r;
}

long ext2_lookup(struct ext2 *fs, const char *path, struct ext2_inode *out)
{
	unsigned plen = 0;
	while (path[plen])
		if (++plen > EXT2_PATH_MAX)
			return -E_INVAL;
	struct ext2_inode cur;
	long r = ext2_inode(fs, EXT2_ROOT_INO, &cur);
	const char *p = path;
	while (!r) {
		while (*p == '/')
			p++;
		if (!*p)
			break;
		unsigned len = 0;
		while (p[len] && p[len] != '/')
			len++;
		if (len > EXT2_NAME_MAX)
			return -E_INVAL;
		struct ext2_inode next;
		r = lookup_in(fs, &cur, p, len, &next);
		if (!r)
			cur = next;
		p += len;
	}
	if (!r)
		*out = cur;
	return r;
}
