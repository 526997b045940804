/* Virtual addresses for anonymous mappings whose address the program does
 * not care about (mem_map), chosen per hart so that threads on different
 * harts work in different parts of the address space (different
 * page-table pages, so CortenMM's per-PT-page locks do not collide).
 *
 * The window [UVA_BASE, UVA_BASE + UVA_CHUNKS * UVA_CHUNK) is cut into one
 * chunk per hart (hart index modulo UVA_CHUNKS). A chunk hands out ranges
 * from its free list (first fit) or else from its never-used tail; freed
 * ranges go back to the free list of the chunk they came from, merged with
 * their neighbours, and a range that ends at the tail moves the tail back,
 * so a program that maps and unmaps in a loop reuses the same addresses.
 * A hart whose chunk is exhausted takes from the other chunks (free lists
 * first, then tails). */
#ifndef USER_UVA_H
#define USER_UVA_H

#include <stdint.h>

#define UVA_BASE 0x1000000000UL    /* 64 GiB: used by no fixed-address program */
#define UVA_CHUNKS 32
#define UVA_CHUNK 0x20000000UL     /* 512 MiB a hart */
#define UVA_FREE_MAX 14            /* free-list entries a chunk keeps */

/* A range of len bytes (a nonzero multiple of 4 KiB) for hart `hart`:
 * its address, or 0 when no chunk has room. Thread safe. */
uint64_t uva_alloc(long hart, uint64_t len);
/* Give back [va, va + len) from uva_alloc. A range that fits no free list
 * (full, and it touches no neighbour) is lost to reuse. */
void uva_free(uint64_t va, uint64_t len);
/* The chunk index va lies in, or -1 outside the window. */
long uva_chunk_of(uint64_t va);

/* Anonymous RW memory at an address uva_alloc chose for this hart: 0 and
 * *va, or -E_* (nothing reserved, nothing taken). */
long mem_map(uint64_t len, uint64_t *va);
/* Unmap [va, va + len) from mem_map and give the addresses back. */
long mem_unmap(uint64_t va, uint64_t len);

#endif
