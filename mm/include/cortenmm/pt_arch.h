/* The paging trait table: everything the core needs to know about one
 * ISA's radix page table. The core never asks which ISA it runs on; it
 * only calls through this table. Instances live in their own folders
 * (arch-riscv/pt/, arch-x86/), each registered by its folder's meson.build
 * (docs/porting.md); the core names none of them.
 *
 * Levels are numbered from the leaves: level 1 entries map 4 KiB, level 2
 * entries 4 KiB << bits_per_level, ..., level `levels` is the root. */
#ifndef CORTENMM_PT_ARCH_H
#define CORTENMM_PT_ARCH_H

#include <stdint.h>
#include <stdbool.h>
#include "status.h"

#define MM_PAGE_SHIFT 12
#define MM_PAGE_SIZE  (1ull << MM_PAGE_SHIFT)
#define MM_MAX_LEVELS 5

/* make_leaf's ad argument: which of the leaf's accessed/dirty bits are set. */
#define PT_AD_A 0x1u
#define PT_AD_D 0x2u

struct pt_arch {
	const char *name;          /* registry name, e.g. "sv39", "x86_64" */
	unsigned levels;           /* 3 (Sv39) .. MM_MAX_LEVELS (Sv57) */
	unsigned bits_per_level;   /* 9 everywhere here */
	unsigned va_bits;          /* e.g. 39, 48, 57: addresses sign-extend bit va_bits-1
	                            * (split_roots: the width of each half) */
	uint32_t leaf_levels;      /* bit L set: a leaf (page) may sit at level L */
	uint64_t user_lo, user_last;    /* user half, inclusive bounds */
	uint64_t kernel_lo, kernel_last;/* kernel half, inclusive bounds */
	/* Bit t set: the leaves can carry memory type t (MM_MT_*). Bit
	 * MM_MT_NORMAL is always set. */
	uint8_t mem_types;
	/* true: the MMU sets the accessed and dirty bits of live leaves
	 * itself, concurrently with software. false: an access through a leaf
	 * without A (a write through one without D) faults, and software sets
	 * the bits (mm_touch): they then change only under the cursor. */
	bool hw_ad;
	/* Break-before-make: the hardware may not see a live entry replaced
	 * by a different present one (block <-> table, another output
	 * address) without an invalid entry and a completed TLB flush in
	 * between (AArch64). The core then writes an invalid entry, calls the
	 * platform's tlb_flush_bbm and only then the replacement. */
	bool needs_bbm;
	/* The two halves live in separate roots (AArch64 TTBR0/TTBR1): each
	 * half is translated by a root of its own whose entry i maps
	 * half_lo + i * (span of a root entry), with no sign extension
	 * (va_bits is then the width of each half). false: one root holds
	 * both, addresses sign-extend bit va_bits-1. */
	bool split_roots;
	/* The TLB may keep a translation that faulted: a not-present entry,
	 * or a valid one whose permissions (or missing A/D with hw_ad false)
	 * made the access fault, so the access can fault again after the
	 * entry was fixed in memory, until the hart flushes it. A fault that
	 * finds its page already resolved (mm_fault_settle) then has the
	 * faulting hart flush the page locally before it retries; false: the
	 * fault itself drops the entry (x86-64) and the retry walks afresh. */
	bool tlb_caches_invalid;

	/* Entry constructors. pa is aligned to the level's page size; prot is
	 * MM_PROT_* and includes MM_PROT_R, its memory type one of mem_types;
	 * ad is PT_AD_* (the leaf's accessed/dirty bits: with hw_ad false a
	 * clean writable leaf is one the hardware does not let write). */
	uint64_t (*make_leaf)(uint64_t pa, unsigned prot, unsigned level, unsigned ad);
	uint64_t (*make_table)(uint64_t child_pa);

	/* Decoders. An entry is empty iff !present. A present entry at level 1
	 * is always a leaf. Every decoder of a present entry gets the level
	 * the entry sits at, because formats move bits between leaf sizes
	 * (x86-64: PAT is bit 7 in a 4 KiB leaf, where huge leaves have PS,
	 * and bit 12 in 2 MiB / 1 GiB leaves; LoongArch: G is bit 6 in a
	 * 4 KiB leaf and bit 12 in a huge one). present alone is level-free:
	 * empty and status entries (status_encode) must read as empty wherever
	 * they sit, and every valid bit here is bit 0 at every level. */
	bool (*present)(uint64_t pte);
	bool (*is_leaf)(uint64_t pte, unsigned level);
	uint64_t (*addr)(uint64_t pte, unsigned level);  /* table: child pa; leaf: page pa */
	/* leaf perms as MM_PROT_*, type included */
	unsigned (*prot)(uint64_t pte, unsigned level);
	bool (*accessed)(uint64_t pte, unsigned level);
	bool (*dirty)(uint64_t pte, unsigned level);

	/* Software statuses in non-present entries, so a page table needs no
	 * side array for them. word is a non-zero status word (status.h,
	 * mm_status_word). status_encode: true and *pte = the entry holding
	 * word, which the hardware must see as not present (present(*pte)
	 * false) and which no two words share; false (*pte untouched) when
	 * this table's entries cannot hold it: the core then keeps it in the
	 * page's metadata array. status_decode: the word a non-present entry
	 * made by status_encode holds. */
	bool (*status_encode)(uint64_t word, uint64_t *pte);
	uint64_t (*status_decode)(uint64_t pte);

	/* Software statuses of present leaves, in the few bits a leaf leaves
	 * to software (leaf_status_bits; 0 and both hooks NULL: none, every
	 * leaf status goes to the metadata array). leaf_status_encode: *pte
	 * is a leaf at level; word a status word of kind MM_COW or MM_MAPPED (limits),
	 * or 0. true: *pte with its leaf_status_bits replaced by word's
	 * encoding (0: cleared); false (*pte untouched) when the bits cannot
	 * say word for this leaf. leaf_status_decode: the word a leaf holds,
	 * 0 for none. Only the status bits may differ between leaves that
	 * hold different words; every other decoder ignores them. */
	uint64_t leaf_status_bits;
	bool (*leaf_status_encode)(uint64_t word, uint64_t *pte, unsigned level);
	uint64_t (*leaf_status_decode)(uint64_t pte, unsigned level);
};

/* The status encoding of a format whose valid bit is bit 0 and whose
 * walker ignores every other bit of an invalid entry (RISC-V, x86-64 and
 * AArch64 alike): the word in bits 1..58, the valid bit clear. A table
 * whose format says so names these as its status_encode / status_decode. */
static inline bool pt_status_encode_bit0(uint64_t word, uint64_t *pte)
{
	if (!word || word >> MM_STATUS_WORD_BITS)
		return false;
	*pte = word << 1;
	return true;
}
static inline uint64_t pt_status_decode_bit0(uint64_t pte)
{
	return pte >> 1;
}

/* The leaf-status code of a format with two software bits per leaf: 0
 * none, 1 COW whose logical permissions are the leaf's plus W, 2 COW with
 * the leaf's own, 3 a plain mapping limited to MM_MAP_NOWRITE. The common
 * statuses fit; NOSHARE does not. pt_leaf_code2: the code of word for a
 * leaf with permissions prot, -1 if it has none. */
static inline int pt_leaf_code2(uint64_t word, unsigned prot)
{
	struct mm_status st = mm_status_of_word(word);
	if (!word)
		return 0;
	if (st.arg)
		return -1;
	if (st.kind == MM_COW && !st.dev && (st.prot & ~MM_PROT_W) == prot)
		return st.prot & MM_PROT_W ? 1 : 2;
	if (st.kind == MM_MAPPED && !st.prot && st.dev == MM_MAP_NOWRITE)
		return 3;
	return -1;
}
/* *pte (a leaf with permissions prot) with its two status bits at shift
 * set to word's code; false if word has none. */
static inline bool pt_leaf_encode2(uint64_t word, uint64_t *pte, unsigned shift, unsigned prot)
{
	int code = pt_leaf_code2(word, prot);
	if (code < 0)
		return false;
	*pte = (*pte & ~(3ull << shift)) | ((uint64_t)code << shift);
	return true;
}
/* The word of code (pt_leaf_code2) on a leaf with permissions prot. */
static inline uint64_t pt_leaf_word2(unsigned code, unsigned prot)
{
	struct mm_status st = { 0 };
	if (code == 1 || code == 2)
		st = (struct mm_status){ .kind = MM_COW,
					 .prot = (uint8_t)(prot | (code == 1 ? MM_PROT_W : 0)) };
	else if (code == 3)
		st = (struct mm_status){ .kind = MM_MAPPED, .dev = MM_MAP_NOWRITE };
	return code ? mm_status_word(&st) : 0;
}

/* Span of one entry at level L (bytes): 4 KiB << (bits_per_level*(L-1)). */
static inline unsigned pt_shift(const struct pt_arch *a, unsigned level)
{
	return MM_PAGE_SHIFT + a->bits_per_level * (level - 1);
}
static inline unsigned pt_index(const struct pt_arch *a, uint64_t va, unsigned level)
{
	return (unsigned)((va >> pt_shift(a, level)) & ((1u << a->bits_per_level) - 1));
}
static inline unsigned pt_entries(const struct pt_arch *a)
{
	return 1u << a->bits_per_level;
}
/* May a leaf of this table carry permissions prot's memory type? */
static inline bool pt_mt_ok(const struct pt_arch *a, unsigned prot)
{
	return (a->mem_types >> mm_prot_mt(prot)) & 1u;
}
static inline bool pt_leaf_ok(const struct pt_arch *a, unsigned level)
{
	return (a->leaf_levels >> level) & 1u;
}

#endif
