/* AArch64 paging trait table: VMSAv8-64 stage 1, 4 KiB granule, 48-bit
 * VA, 4 levels (ARM ARM D8.3, descriptor formats). Our level 1 is the
 * architecture's lookup level 3 (pages), 2 and 3 its levels 2 and 1
 * (2 MiB and 1 GiB blocks), 4 its level 0 (tables only).
 * Descriptor bits used: valid 0; 1: table (levels 0-2) or page (level 3),
 * 0 in a block; AttrIndx 4:2 (MAIR_EL1 index, arm64.h); AP[1] 6 (EL0
 * access); AP[2] 7 (read-only); SH 9:8 (inner shareable); AF 10; nG 11;
 * output address 47:12 (blocks: from their alignment up); PXN 53; UXN 54;
 * bits 58:55 are ignored by the hardware and hold software state.
 * Table descriptors are permissive (no APTable/XNTable): the leaf alone
 * decides the rights.
 * Accessed and dirty are software-managed (hw_ad false: no FEAT_HAFDBS is
 * assumed): a leaf without AF takes an Access flag fault on its first
 * access, and the writable (software bit) clean (no software dirty bit)
 * leaf is read-only in AP[2], so the first write takes a permission fault;
 * mm_touch then sets AF, or the dirty bit and clears AP[2].
 * Execute: a user page is never kernel-executable (PXN) and a kernel page
 * never user-executable (UXN); X clears the other one.
 * TLB (tlb_caches_invalid): entries that give a Translation, Address size
 * or Access flag fault are never cached (ARM ARM D8.13), but a valid
 * entry that gives a Permission fault may be, and software dirty
 * tracking makes every first write one (AP[2] set on a clean leaf): a
 * fault that finds the leaf already writable flushes the page locally. */
#include "cortenmm/pt_arch.h"
#include "cortenmm/status.h"
#include "arm64.h"

#define ARM64_VALID      (1ull << 0)
#define ARM64_TABLE      (1ull << 1)   /* table, or page at level 3 */
#define ARM64_ATTR_SHIFT 2
#define ARM64_AP_USER    (1ull << 6)   /* AP[1] */
#define ARM64_AP_RO      (1ull << 7)   /* AP[2] */
#define ARM64_SH_INNER   (3ull << 8)
#define ARM64_AF         (1ull << 10)
#define ARM64_NG         (1ull << 11)
#define ARM64_ADDR       0x0000fffffffff000ull
#define ARM64_PXN        (1ull << 53)
#define ARM64_UXN        (1ull << 54)
#define ARM64_SW_DIRTY   (1ull << 55)
#define ARM64_SW_WRITE   (1ull << 56)

static uint64_t arm64_span_mask(unsigned level)
{
	return (1ull << (MM_PAGE_SHIFT + 9 * (level - 1))) - 1;
}

/* The MAIR_EL1 index of each memory type (MM_MT_*): ARM64_MAIR_EL1's
 * attribute number. */
static const unsigned arm64_attr[MM_MT_COUNT] = {
	[MM_MT_NORMAL] = 0, [MM_MT_NC] = 1, [MM_MT_DEVICE] = 2,
};

static uint64_t arm64_make_leaf(uint64_t pa, unsigned prot, unsigned level, unsigned ad)
{
	uint64_t e = ARM64_VALID | ARM64_SH_INNER | (pa & ARM64_ADDR & ~arm64_span_mask(level));
	if (level == 1)
		e |= ARM64_TABLE;           /* a page, not a reserved level-3 entry */
	if (mm_prot_mt(prot) < MM_MT_COUNT)
		e |= (uint64_t)arm64_attr[mm_prot_mt(prot)] << ARM64_ATTR_SHIFT;
	if (prot & MM_PROT_U)
		e |= ARM64_AP_USER | ARM64_PXN | ((prot & MM_PROT_X) ? 0 : ARM64_UXN);
	else
		e |= ARM64_UXN | ((prot & MM_PROT_X) ? 0 : ARM64_PXN);
	if (prot & MM_PROT_W)
		e |= ARM64_SW_WRITE;
	if (!(prot & MM_PROT_W) || !(ad & PT_AD_D))
		e |= ARM64_AP_RO;          /* clean: the first write faults */
	if (!(prot & MM_PROT_G))
		e |= ARM64_NG;
	if (ad & PT_AD_A)
		e |= ARM64_AF;
	if (ad & PT_AD_D)
		e |= ARM64_SW_DIRTY;
	return e;
}

static uint64_t arm64_make_table(uint64_t child_pa)
{
	return ARM64_VALID | ARM64_TABLE | (child_pa & ARM64_ADDR);
}

static bool arm64_present(uint64_t pte) { return pte & ARM64_VALID; }

static bool arm64_is_leaf(uint64_t pte, unsigned level)
{
	return level == 1 || !(pte & ARM64_TABLE);
}

static uint64_t arm64_addr(uint64_t pte, unsigned level)
{
	if (level > 1 && !(pte & ARM64_TABLE))
		return pte & ARM64_ADDR & ~arm64_span_mask(level);
	return pte & ARM64_ADDR;
}

static unsigned arm64_prot(uint64_t pte, unsigned level)
{
	(void)level;   /* page and block descriptors share their attribute bits */
	unsigned p = MM_PROT_R;
	bool user = pte & ARM64_AP_USER;
	if (pte & ARM64_SW_WRITE) p |= MM_PROT_W;
	if (user) p |= MM_PROT_U;
	if (!(pte & (user ? ARM64_UXN : ARM64_PXN))) p |= MM_PROT_X;
	if (!(pte & ARM64_NG)) p |= MM_PROT_G;
	unsigned idx = (unsigned)(pte >> ARM64_ATTR_SHIFT) & 7;
	for (unsigned t = 0; t < MM_MT_COUNT; t++)
		if (arm64_attr[t] == idx)
			p |= t << MM_PROT_MT_SHIFT;
	return p;
}

static bool arm64_accessed(uint64_t pte, unsigned level) { (void)level; return pte & ARM64_AF; }
static bool arm64_dirty(uint64_t pte, unsigned level) { (void)level; return pte & ARM64_SW_DIRTY; }

/* Software status of an invalid descriptor: with bit 0 clear the
 * hardware ignores bits 63:1 (ARM ARM D8.3.1), so the status word sits
 * in bits 1..58 (pt_status_encode_bit0) and bit 0 stays clear.
 * Software status of a leaf: bits 58:57, ignored by the hardware and
 * left free by the software write and dirty bits (56, 55), hold
 * pt_leaf_code2's code. */
#define ARM64_SW_STATUS_SHIFT 57
#define ARM64_SW_STATUS (3ull << ARM64_SW_STATUS_SHIFT)

static bool arm64_leaf_status_encode(uint64_t word, uint64_t *pte, unsigned level)
{
	return pt_leaf_encode2(word, pte, ARM64_SW_STATUS_SHIFT, arm64_prot(*pte, level));
}

static uint64_t arm64_leaf_status_decode(uint64_t pte, unsigned level)
{
	return pt_leaf_word2((unsigned)((pte & ARM64_SW_STATUS) >> ARM64_SW_STATUS_SHIFT),
			     arm64_prot(pte, level));
}

/* Each half has a root of its own, as the hardware has them (arm64.h:
 * ARM64_TCR_TXSZ): the user half [0, 2^48) under TTBR0, the kernel half
 * [2^64 - 2^48, 2^64) under TTBR1. A live entry is replaced by a
 * different one only after an invalid entry and a TLB flush
 * (break-before-make, the architecture's rule). */
const struct pt_arch mm_arch_aarch64 = {
	.name = "aarch64", .levels = 4, .bits_per_level = 9, .va_bits = 48,
	.leaf_levels = (1u << 1) | (1u << 2) | (1u << 3),
	.user_lo = 0, .user_last = (1ull << 48) - 1,
	.kernel_lo = ~0ull << 48, .kernel_last = ~0ull,
	.mem_types = (1u << MM_MT_NORMAL) | (1u << MM_MT_NC) | (1u << MM_MT_DEVICE),
	.hw_ad = false, .needs_bbm = true, .split_roots = true,
	.tlb_caches_invalid = true,   /* see above */
	.make_leaf = arm64_make_leaf, .make_table = arm64_make_table,
	.present = arm64_present, .is_leaf = arm64_is_leaf, .addr = arm64_addr,
	.prot = arm64_prot, .accessed = arm64_accessed, .dirty = arm64_dirty,
	.status_encode = pt_status_encode_bit0, .status_decode = pt_status_decode_bit0,
	.leaf_status_bits = ARM64_SW_STATUS, .leaf_status_encode = arm64_leaf_status_encode,
	.leaf_status_decode = arm64_leaf_status_decode,
};
