/* Internals of the ext2 reader shared by its files (not an interface). */
#ifndef LIB_EXT2_INT_H
#define LIB_EXT2_INT_H

#include "ext2.h"

static inline uint16_t ext2_le16(const uint8_t *p)
{
	return (uint16_t)(p[0] | p[1] << 8);
}

static inline uint32_t ext2_le32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Block b into buf, a one-block cache whose block number is *cached (the
 * read is skipped when it already holds b; emptied when a read fails).
 * -E_INVAL for 0 or a block past the end of the file system. */
long ext2_block(struct ext2 *fs, uint32_t b, uint8_t *buf, uint32_t *cached);

#endif
