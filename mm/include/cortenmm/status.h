/* The software view of one virtual page (or of a whole huge entry):
 * what the hardware PTE does not record. Used by query results, by mark,
 * and by the atomic spec in the host tests. */
#ifndef CORTENMM_STATUS_H
#define CORTENMM_STATUS_H

#include <stdint.h>
#include <stdbool.h>

/* Permissions, arch-neutral. An arch table translates them to PTE bits.
 * Every mapping must include MM_PROT_R (W without R, X-only etc. are not
 * expressible on all three arches). */
#define MM_PROT_R 0x01u
#define MM_PROT_W 0x02u
#define MM_PROT_X 0x04u
#define MM_PROT_U 0x08u  /* user accessible */
#define MM_PROT_G 0x10u  /* global (kernel mappings) */
#define MM_PROT_MASK 0x1fu

enum mm_kind {
	MM_INVALID  = 0, /* nothing: a fault here is an error */
	MM_RESERVED = 1, /* virtually allocated (anonymous), prot = future perms */
	MM_MAPPED   = 2, /* present in the page table */
	MM_SWAPPED  = 3, /* evicted: dev + offset (in pages) name the slot */
	MM_PAGER    = 4, /* managed by a user-level pager: tag names it */
	MM_COW      = 5, /* present read-only; prot is the logical permission */
};

/* A status as given to mark(). Only INVALID, RESERVED, SWAPPED and PAGER
 * can be marked; MAPPED and COW come from map(). */
struct mm_status {
	uint8_t kind;   /* enum mm_kind */
	uint8_t prot;   /* RESERVED: perms of the future mapping; PAGER: perms too */
	uint8_t dev;    /* SWAPPED: device number */
	uint64_t arg;   /* SWAPPED: offset in pages; PAGER: tag. < 2^40 */
};
#define MM_STATUS_ARG_MAX ((1ull << 40) - 1)

/* What query() returns for one virtual address. */
struct mm_info {
	uint8_t kind;       /* enum mm_kind */
	uint8_t prot;       /* MAPPED: hardware perms; COW: logical perms; RESERVED/PAGER: perms */
	uint8_t dev;        /* SWAPPED */
	uint8_t level;      /* level of the entry holding it: 1 = 4 KiB, 2 = 2 MiB, 3 = 1 GiB ... */
	bool accessed, dirty; /* MAPPED/COW: hardware A/D bits */
	uint64_t pa;        /* MAPPED/COW: physical address of the 4 KiB page holding va */
	uint64_t arg;       /* SWAPPED offset / PAGER tag */
};

/* Flags for mm_map(). */
#define MM_MAP_COW 0x1u  /* install read-only, remember prot as the logical one */

#endif
