/* dtbfuzz: the kernel's DTB parser (kernel/fdt_*.c) fed hostile blobs on
 * the host. dtbfuzz.c drives it, dtbfuzz_mutate.c breaks seed blobs,
 * dtbfuzz_oracle.c runs every parser entry point on one input and checks
 * what comes back. */
#ifndef TESTS_HOST_DTBFUZZ_H
#define TESTS_HOST_DTBFUZZ_H

#include <stddef.h>
#include <stdint.h>
#include "bootinfo.h"

/* A blob being mutated: len bytes used of cap. */
struct dtb_buf {
	uint8_t *b;
	uint32_t len, cap;
};

/* A small deterministic generator (splitmix64). */
static inline uint64_t fz_next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

/* Uniform in [0, n); 0 when n is 0. */
static inline uint32_t fz_below(uint64_t *s, uint32_t n)
{
	return n ? (uint32_t)(fz_next(s) % n) : 0;
}

/* Apply 1 to 6 random mutations, drawn from *rng, to d (len may grow up
 * to cap or shrink to 0). `other` is a second seed for splicing. */
void dtb_mutate(struct dtb_buf *d, const struct dtb_buf *other, uint64_t *rng);

enum dtb_verdict { DTB_ACCEPTED, DTB_REFUSED, DTB_BROKEN };

/* Run every entry point of the parser on the len bytes at in (copied into
 * an allocation of exactly that size, so a sanitizer sees any read past
 * it) and check every value returned. Returns DTB_ACCEPTED if the boot
 * path (fdt_validate, then fdt_scan) takes the blob, with *bi what the
 * scan found; DTB_REFUSED if it refuses with -E_INVAL and a reason;
 * DTB_BROKEN, with a message in why[0..whysz), for any inconsistency. */
enum dtb_verdict dtb_check(const uint8_t *in, uint32_t len, struct boot_info *bi,
			   char *why, size_t whysz);

#endif
