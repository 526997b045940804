/* CRC-32 (lib/crc32.c): user programs and host tests. */
#ifndef LIB_CRC32_H
#define LIB_CRC32_H

#include <stddef.h>
#include <stdint.h>

/* zlib's CRC-32 of len bytes at buf, continuing from crc (0 to start). */
uint32_t crc32_update(uint32_t crc, const void *buf, size_t len);

#endif
