/* The atomic spec (docs/architecture.md section 6): an executable reference
 * model of an address-space window, one status per 4 KiB virtual page.
 * Each operation returns what the core must return and changes the model
 * only on success. */
#ifndef SPEC_H
#define SPEC_H

#include <stdint.h>
#include <stddef.h>
#include "cortenmm/status.h"

struct spec_page {
	uint8_t kind, prot, dev;
	uint8_t limits; /* MAPPED/COW: MM_MAP_LIMITS (COW: NOSHARE only) */
	uint64_t pa;   /* MAPPED/COW */
	uint64_t arg;  /* SWAPPED offset / PAGER tag */
};

struct spec {
	uint64_t base;         /* VA of page 0 */
	size_t npages;
	unsigned mem_types;    /* memory types the table can carry (pt_arch.mem_types) */
	struct spec_page *pg;
};

void spec_init(struct spec *s, uint64_t base, size_t npages, unsigned mem_types);
void spec_free(struct spec *s);
struct spec_page *spec_at(struct spec *s, uint64_t va);

/* Preconditions (validated by the caller): range inside the window,
 * aligned, prot and flags well-formed. Return MM_OK / MM_EEXIST /
 * MM_EMAPPED like the core, or MM_EPROT for a memory type outside
 * s->mem_types. */
int spec_map(struct spec *s, uint64_t va, uint64_t pa, uint64_t size, unsigned prot, unsigned flags);
int spec_mark(struct spec *s, uint64_t va, uint64_t len, const struct mm_status *st);
int spec_unmap(struct spec *s, uint64_t va, uint64_t len);
/* prot: R/W/X; mapped, COW (logical), reserved and pager pages get it
 * (keeping their other bits); swapped and invalid pages are untouched.
 * MM_EPROT, nothing changed, if prot has W and a mapped page in the range
 * carries MM_MAP_NOWRITE. */
int spec_protect(struct spec *s, uint64_t va, uint64_t len, unsigned prot);
/* Mapped pages become COW with their permissions as the logical ones
 * (limits: NOSHARE kept, NOWRITE dropped). */
int spec_make_cow(struct spec *s, uint64_t va, uint64_t len);
/* COW pages become mapped (same frame, logical permissions). */
int spec_unshare(struct spec *s, uint64_t va, uint64_t len);

/* mm_touch: MM_OK on a mapped page (write: only if its prot has W), or on
 * a COW page for a read; MM_EPROT for a write the hardware does not allow
 * (COW, no W); MM_EINVAL where nothing is mapped. Changes no status (the
 * accessed/dirty bits it sets are checked by the caller's query). */
int spec_touch(struct spec *s, uint64_t va, int write);

/* Compare one core query result with the model; 0 if equal, else prints
 * the difference (with `who`) and returns -1. */
int spec_check_info(struct spec *s, uint64_t va, const struct mm_info *in, const char *who);

#endif
