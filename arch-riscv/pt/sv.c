/* RISC-V Sv39, Sv48 and Sv57 paging trait tables (privileged spec 1.12,
 * 4.4-4.6, and its Svpbmt chapter: bits 62:61 of a leaf).
 * PTE: V R W X U G A D in bits 0..7, PPN in bits 10..53, PBMT in 61..62.
 * A present entry with R=W=X=0 points to the next level. The MMU sets A
 * and D itself (hw_ad), so the core treats them as hardware-owned bits of
 * live entries.
 * Memory types: without Svpbmt bits 62:61 are reserved and must be 0 (a
 * leaf with them set faults), and a page's type is whatever the platform's
 * physical memory attributes say for its address (MMIO regions are I/O
 * there); so the plain tables offer MM_MT_NORMAL only and a map asking for
 * another type fails. The *_svpbmt tables, for harts whose riscv,isa lists
 * svpbmt, encode NC (PBMT 1) and device (IO, PBMT 2) in the leaf.
 * TLB (tlb_caches_invalid): SFENCE.VMA is an ordering fence, and a hart
 * may keep the result of a walk that found an invalid or too weak entry
 * until it executes one for that address (privileged spec 4.2.1; the
 * Svvptc extension exists to promise otherwise, and nothing here assumes
 * it), so a fault that finds its page already mapped fences locally. */
#include "cortenmm/pt_arch.h"
#include "cortenmm/status.h"
#include "sv.h"

#define SV_V (1ull << 0)
#define SV_R (1ull << 1)
#define SV_W (1ull << 2)
#define SV_X (1ull << 3)
#define SV_U (1ull << 4)
#define SV_G (1ull << 5)
#define SV_A (1ull << 6)
#define SV_D (1ull << 7)
#define SV_PBMT_SHIFT 61
#define SV_PBMT_MASK (3ull << SV_PBMT_SHIFT)
#define SV_PBMT_NC (1ull << SV_PBMT_SHIFT)
#define SV_PBMT_IO (2ull << SV_PBMT_SHIFT)
#define SV_PPN_SHIFT 10
#define SV_PPN_MASK  ((1ull << 44) - 1)

/* Each MM_PROT_* bit is one Sv PTE bit (both directions of the mapping). */
static const struct { unsigned prot; uint64_t pte; } sv_prot_bits[] = {
	{ MM_PROT_R, SV_R }, { MM_PROT_W, SV_W }, { MM_PROT_X, SV_X },
	{ MM_PROT_U, SV_U }, { MM_PROT_G, SV_G },
};

/* PBMT value of each memory type (MM_MT_* index); used only by the
 * Svpbmt tables, whose mem_types admit NC and device. */
static const uint64_t sv_pbmt[MM_MT_COUNT] = {
	[MM_MT_NORMAL] = 0, [MM_MT_NC] = SV_PBMT_NC, [MM_MT_DEVICE] = SV_PBMT_IO,
};

static uint64_t sv_make_leaf(uint64_t pa, unsigned prot, unsigned level, unsigned ad)
{
	(void)level;
	uint64_t e = SV_V | ((pa >> MM_PAGE_SHIFT) << SV_PPN_SHIFT);
	for (unsigned i = 0; i < sizeof(sv_prot_bits) / sizeof(sv_prot_bits[0]); i++)
		if (prot & sv_prot_bits[i].prot)
			e |= sv_prot_bits[i].pte;
	if (mm_prot_mt(prot) < MM_MT_COUNT)
		e |= sv_pbmt[mm_prot_mt(prot)];
	if (ad & PT_AD_A)
		e |= SV_A;
	if (ad & PT_AD_D)
		e |= SV_D;
	return e;
}

static uint64_t sv_make_table(uint64_t child_pa)
{
	return SV_V | ((child_pa >> MM_PAGE_SHIFT) << SV_PPN_SHIFT);
}

static bool sv_present(uint64_t pte) { return pte & SV_V; }

static bool sv_is_leaf(uint64_t pte, unsigned level)
{
	return level == 1 || (pte & (SV_R | SV_W | SV_X));
}

static uint64_t sv_addr(uint64_t pte, unsigned level)
{
	(void)level;
	return ((pte >> SV_PPN_SHIFT) & SV_PPN_MASK) << MM_PAGE_SHIFT;
}

static unsigned sv_prot(uint64_t pte, unsigned level)
{
	(void)level;   /* no Sv bit moves between leaf sizes */
	unsigned p = 0;
	for (unsigned i = 0; i < sizeof(sv_prot_bits) / sizeof(sv_prot_bits[0]); i++)
		if (pte & sv_prot_bits[i].pte)
			p |= sv_prot_bits[i].prot;
	for (unsigned t = 0; t < MM_MT_COUNT; t++)
		if ((pte & SV_PBMT_MASK) == sv_pbmt[t])
			p |= t << MM_PROT_MT_SHIFT;
	return p;
}

static bool sv_accessed(uint64_t pte, unsigned level) { (void)level; return pte & SV_A; }
static bool sv_dirty(uint64_t pte, unsigned level) { (void)level; return pte & SV_D; }

/* Software status of a non-present entry: with V (bit 0) clear the MMU
 * ignores every other bit (privileged spec 4.3.1), so the status word
 * sits in bits 1..58 (pt_status_encode_bit0) and V stays clear.
 * Software status of a leaf: the two RSW bits (8-9), which the MMU
 * ignores, can hold pt_leaf_code2's code; only the host test table
 * sv48_bbm offers them. The hart tables leave leaf statuses to the
 * metadata array: decoding the code needs the leaf's permissions, and
 * with it a 64 MiB fork (bench fork) ran 18% more instructions than with
 * the array. */
#define SV_RSW_SHIFT 8
#define SV_RSW (3ull << SV_RSW_SHIFT)

static bool sv_leaf_status_encode(uint64_t word, uint64_t *pte, unsigned level)
{
	return pt_leaf_encode2(word, pte, SV_RSW_SHIFT, sv_prot(*pte, level));
}

static uint64_t sv_leaf_status_decode(uint64_t pte, unsigned level)
{
	return pt_leaf_word2((unsigned)((pte & SV_RSW) >> SV_RSW_SHIFT), sv_prot(pte, level));
}

/* Sv39, Sv48 and Sv57 share the PTE format and differ only in the number
 * of levels and the VA width; the user half is the low canonical half, the
 * kernel half the high one. mt: the memory types the leaves may carry;
 * bbm, split: the paging rules (needs_bbm, split_roots). */
#define SV_MT_PLAIN (1u << MM_MT_NORMAL)
#define SV_MT_PBMT  ((1u << MM_MT_NORMAL) | (1u << MM_MT_NC) | (1u << MM_MT_DEVICE))
#define SV_ARCH_RULES(nm, lv, vb, mt, ulast, klo, bbm, split, lbits)           \
	{                                                                       \
		.name = nm, .levels = lv, .bits_per_level = 9, .va_bits = vb,   \
		.leaf_levels = (1u << 1) | (1u << 2) | (1u << 3),               \
		.user_lo = 0, .user_last = ulast,                               \
		.kernel_lo = klo, .kernel_last = ~0ull,                         \
		.mem_types = mt, .hw_ad = true,                                 \
		.needs_bbm = bbm, .split_roots = split,                         \
		.tlb_caches_invalid = true,                                     \
		.make_leaf = sv_make_leaf, .make_table = sv_make_table,         \
		.present = sv_present, .is_leaf = sv_is_leaf, .addr = sv_addr,  \
		.prot = sv_prot, .accessed = sv_accessed, .dirty = sv_dirty,    \
		.status_encode = pt_status_encode_bit0,                         \
		.status_decode = pt_status_decode_bit0,                         \
		.leaf_status_bits = (lbits) ? SV_RSW : 0,                       \
		.leaf_status_encode = (lbits) ? sv_leaf_status_encode : 0,      \
		.leaf_status_decode = (lbits) ? sv_leaf_status_decode : 0,      \
	}
#define SV_ARCH(nm, lv, vb, mt)                                                 \
	SV_ARCH_RULES(nm, lv, vb, mt, (1ull << ((vb) - 1)) - 1, ~0ull << ((vb) - 1), false, false, false)

const struct pt_arch mm_arch_sv39 = SV_ARCH("sv39", 3, 39, SV_MT_PLAIN);
const struct pt_arch mm_arch_sv39_svpbmt = SV_ARCH("sv39_svpbmt", 3, 39, SV_MT_PBMT);

/* Sv48 also allows 512 GiB leaves at level 4, and Sv57 256 TiB leaves at
 * level 5; we do not offer them (the other arches have no equivalent and
 * nothing here needs them). */
const struct pt_arch mm_arch_sv48 = SV_ARCH("sv48", 4, 48, SV_MT_PLAIN);
const struct pt_arch mm_arch_sv57 = SV_ARCH("sv57", 5, 57, SV_MT_PLAIN);
const struct pt_arch mm_arch_sv48_svpbmt = SV_ARCH("sv48_svpbmt", 4, 48, SV_MT_PBMT);
const struct pt_arch mm_arch_sv57_svpbmt = SV_ARCH("sv57_svpbmt", 5, 57, SV_MT_PBMT);

/* Test tables, registered only by the host suites (tests/host/meson.build)
 * and no paging mode of any hart: the Sv48 format under the paging rules
 * of AArch64, so the core's support for them is tested on the host.
 * sv48_bbm: one root, but entries are replaced break-before-make.
 * sv48_split: that, and each half in a root of its own (TTBR0/TTBR1), each
 * a full 48 bits wide: user [0, 2^48), kernel [2^64 - 2^48, 2^64); and its
 * leaves offer the core no software bits, so every leaf status goes to a
 * metadata array (the path a format without spare leaf bits takes). */
const struct pt_arch mm_arch_sv48_bbm =
	SV_ARCH_RULES("sv48_bbm", 4, 48, SV_MT_PLAIN, (1ull << 47) - 1, ~0ull << 47, true, false,
		      true);
const struct pt_arch mm_arch_sv48_split =
	SV_ARCH_RULES("sv48_split", 4, 48, SV_MT_PLAIN, (1ull << 48) - 1, ~0ull << 48, true, true,
		      false);
