/* A read-only ext2 reader with no I/O of its own: every byte of the disk
 * comes through the caller's read callback, so the same code runs in user
 * programs (over the block driver) and on the host (over an image file).
 *
 * Everything read from the disk is checked before it is used: block
 * numbers against the block count, inode numbers against the inode count,
 * directory records against their block, sizes against what the block map
 * can address. A corrupt image makes calls fail (-E_INVAL) or return wrong
 * bytes; it never makes them read outside their buffers or loop for ever.
 *
 * Not supported (mount or the call says -E_NOSYS): extents, 64-bit block
 * numbers, meta_bg, compression, a journal that needs recovery, and any
 * other incompatible feature. Hashed (htree) directories are read as the
 * linear directories they also are. Symbolic links are listed, not
 * followed. Errors are -E_* of <patina/errno.h>. */
#ifndef LIB_EXT2_H
#define LIB_EXT2_H

#include <stddef.h>
#include <stdint.h>

#define EXT2_SECTOR      512u
#define EXT2_MAX_BLOCK   4096u
#define EXT2_NAME_MAX    255u
#define EXT2_PATH_MAX    1024u
#define EXT2_ROOT_INO    2u

/* Read `count` 512-byte sectors from `sector` on into buf: 0 or -E_*
 * (a read past the end of the disk must fail, not return garbage). */
typedef long (*ext2_read_fn)(void *ctx, uint64_t sector, uint32_t count, void *buf);

/* File types, as ext2_type() reports them. */
enum { EXT2_T_UNKNOWN, EXT2_T_REG, EXT2_T_DIR, EXT2_T_LNK, EXT2_T_OTHER };

struct ext2_inode {
	uint32_t ino;
	uint16_t mode;
	uint32_t flags;
	uint64_t size;
	uint32_t block[15];      /* 12 direct, single, double, triple indirect */
};

struct ext2_dirent {
	uint32_t ino;
	unsigned type;           /* EXT2_T_*, from the entry (filetype feature) or the inode */
	uint64_t size;           /* the inode's size */
	char name[EXT2_NAME_MAX + 1];
};

/* A position in a directory, for ext2_dir_next. */
struct ext2_dir {
	struct ext2_inode inode;
	uint64_t pos;
};

struct ext2 {
	ext2_read_fn read;
	void *ctx;
	uint32_t block_size, sectors_per_block, ptrs_per_block;
	uint32_t blocks, inodes, first_data_block;
	uint32_t blocks_per_group, inodes_per_group, groups;
	uint32_t inode_size, rev, incompat;
	uint64_t max_size;       /* the most bytes the block map addresses */
	/* A one-block cache per use, keyed by block number (0: empty): the
	 * indirect block of each depth, the group descriptor block, the
	 * inode table block and the file or directory block last read. */
	uint32_t ind_no[3], gd_no, itab_no, data_no;
	uint8_t ind[3][EXT2_MAX_BLOCK];
	uint8_t gd[EXT2_MAX_BLOCK];
	uint8_t itab[EXT2_MAX_BLOCK];
	uint8_t data[EXT2_MAX_BLOCK];
};

/* Read and check the superblock. 0; -E_INVAL (not ext2, or a field out of
 * range); -E_NOSYS (an incompatible feature); or the callback's error. */
long ext2_mount(struct ext2 *fs, ext2_read_fn read, void *ctx);

/* Inode `ino` (1 .. inode count). 0, -E_INVAL, -E_NOSYS (extents) or the
 * callback's error. */
long ext2_inode(struct ext2 *fs, uint32_t ino, struct ext2_inode *out);

/* EXT2_T_* of an inode's mode. */
unsigned ext2_type(const struct ext2_inode *in);
/* One letter for a type: f d l ? o. */
char ext2_type_char(unsigned type);

/* The disk block holding logical block `lblock` of the inode: *pblock, or
 * 0 for a hole. *run: how many blocks from lblock on follow it on disk
 * without a gap (1 for a hole, at most max_run). 0 or -E_*. */
long ext2_bmap(struct ext2 *fs, const struct ext2_inode *in, uint64_t lblock, uint32_t max_run,
	       uint32_t *pblock, uint32_t *run);

/* Up to len bytes of the file from off into buf (holes read as zeros):
 * how many were read (0 at or past the end), or -E_*. Runs of blocks that
 * lie together on disk become one callback of many sectors. */
long ext2_read(struct ext2 *fs, const struct ext2_inode *in, uint64_t off, void *buf, uint64_t len);

/* Start listing directory inode `in` (-E_INVAL: not a directory). */
long ext2_dir_open(struct ext2 *fs, const struct ext2_inode *in, struct ext2_dir *d);
/* The next entry (1), the end (0) or -E_*. "." and ".." are returned
 * like any other entry. */
long ext2_dir_next(struct ext2 *fs, struct ext2_dir *d, struct ext2_dirent *out);

/* Look up an absolute or root-relative path ("/a/b", "a/b", "/" for the
 * root; repeated slashes allowed). 0 and *out; -E_NOENT (a component is
 * missing or not a directory); -E_INVAL (a component longer than
 * EXT2_NAME_MAX or the path longer than EXT2_PATH_MAX); or -E_*. */
long ext2_lookup(struct ext2 *fs, const char *path, struct ext2_inode *out);

#endif
