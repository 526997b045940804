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
/* Memory type, a 2-bit field of the permissions (MM_PROT_MT): how the
 * page may be cached and how accesses to it may be merged, reordered or
 * speculated. Normal (0) is ordinary cacheable RAM; non-cacheable is RAM
 * the caches do not hold (frame buffers, buffers shared with devices that
 * do not snoop); device is MMIO (no caching, merging, speculation or
 * reordering). Value 3 is not a type. A table can encode only some types
 * (struct pt_arch.mem_types); a map or mark with another one fails with
 * MM_EPROT. The type travels with prot everywhere prot goes: query, mark,
 * COW, protect (which changes R/W/X only and keeps it). */
#define MM_PROT_MT_SHIFT 5
#define MM_PROT_MT     (3u << MM_PROT_MT_SHIFT)
#define MM_MT_NORMAL   0u
#define MM_MT_NC       1u
#define MM_MT_DEVICE   2u
#define MM_MT_COUNT    3u
#define MM_PROT_NC     (MM_MT_NC << MM_PROT_MT_SHIFT)      /* prot | MM_PROT_NC */
#define MM_PROT_DEVICE (MM_MT_DEVICE << MM_PROT_MT_SHIFT)  /* prot | MM_PROT_DEVICE */
#define MM_PROT_MASK 0x7fu

/* The memory type (MM_MT_*) of permissions prot. */
static inline unsigned mm_prot_mt(unsigned prot)
{
	return (prot & MM_PROT_MT) >> MM_PROT_MT_SHIFT;
}

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

/* A status word: a status packed in 64 bits the way the core stores it,
 * in an entry (through the table's status_encode, pt_arch.h) or in a
 * metadata array. 0 means no status. kind in bits 0-2, prot 3-9 (memory
 * type included), dev 10-17, arg 18-57; bits 58-63 are always 0. Leaves
 * use it too: COW (prot = the logical permissions, dev = its
 * MM_MAP_NOSHARE limit) and MAPPED with limits (dev = its MM_MAP_LIMITS,
 * prot and arg 0). */
#define MM_STATUS_WORD_BITS 58
static inline uint64_t mm_status_word(const struct mm_status *st)
{
	return (uint64_t)(st->kind & 7) | ((uint64_t)(st->prot & MM_PROT_MASK) << 3) |
	       ((uint64_t)st->dev << 10) | ((st->arg & MM_STATUS_ARG_MAX) << 18);
}
static inline struct mm_status mm_status_of_word(uint64_t w)
{
	return (struct mm_status){ .kind = (uint8_t)(w & 7), .prot = (uint8_t)((w >> 3) & MM_PROT_MASK),
				   .dev = (uint8_t)(w >> 10), .arg = (w >> 18) & MM_STATUS_ARG_MAX };
}

/* What query() returns for one virtual address. */
struct mm_info {
	uint8_t kind;       /* enum mm_kind */
	uint8_t prot;       /* MAPPED: hardware perms; COW: logical perms; RESERVED/PAGER: perms */
	uint8_t dev;        /* SWAPPED */
	uint8_t level;      /* level of the entry holding it: 1 = 4 KiB, 2 = 2 MiB, 3 = 1 GiB ... */
	bool accessed, dirty; /* MAPPED/COW: the leaf's accessed/dirty bits (set by the
			       * MMU, or by mm_touch where the table's hw_ad is false) */
	uint64_t pa;        /* MAPPED/COW: physical address of the 4 KiB page holding va */
	uint64_t arg;       /* SWAPPED offset / PAGER tag */
	uint8_t limits;     /* MAPPED/COW: the MM_MAP_LIMITS the mapping carries (below) */
};

/* Flags for mm_map(). */
#define MM_MAP_COW      0x1u  /* install read-only, remember prot as the logical one */
/* Make the leaf with its accessed (and dirty) bit already set: a mapping
 * made because of an access (a fault) saves the MMU, or, where the table's
 * hw_ad is false, the next fault, the update. */
#define MM_MAP_ACCESSED 0x2u
#define MM_MAP_DIRTY    0x4u  /* implies MM_MAP_ACCESSED */
/* Limits a mapping carries for its whole life, kept in the entry's
 * metadata word (so they survive splits, protect, COW and unshare) and
 * reported by query. They say what the authority that made the mapping
 * allowed, which the page table alone cannot remember:
 *  - NOWRITE: the frame may never be written through this mapping;
 *    mm_protect refuses to give it W (MM_EPROT), so a read-only grant
 *    stays read-only. A COW mapping never writes its frame (a write
 *    gets a copy), so COW drops it; the copy carries no limits.
 *  - NOSHARE: the frame is not to be shared into another address space;
 *    the core only keeps and reports it (COW keeps it too), the caller
 *    that shares frames (fork's clone) refuses such pages. */
#define MM_MAP_NOWRITE  0x8u
#define MM_MAP_NOSHARE  0x10u
#define MM_MAP_LIMITS   (MM_MAP_NOWRITE | MM_MAP_NOSHARE)
#define MM_MAP_FLAGS    (MM_MAP_COW | MM_MAP_ACCESSED | MM_MAP_DIRTY | MM_MAP_LIMITS)

#endif
