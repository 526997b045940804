/* x86-64 4-level paging trait table (Intel SDM vol. 3, 4.5).
 * Bits: P 0, RW 1, US 2, PWT 3, PCD 4, A 5, D 6, PS 7 (leaf at PDPT/PD
 * level), G 8, NX 63; address in bits 12..51 (huge leaves: from their
 * alignment up, bit 12 is PAT there). Reads are implied by P, so every
 * mapping is readable; X is the absence of NX (EFER.NXE assumed). Table
 * entries are permissive (P RW US): the leaf alone decides the rights.
 * The MMU sets A and D (hw_ad).
 * Memory types (SDM vol. 3, 11.12): the leaf's PAT, PCD and PWT bits
 * select one of 8 entries of IA32_PAT (index PAT*4 + PCD*2 + PWT). This
 * table leaves the PAT bit 0 and relies on the entries the power-on value
 * of IA32_PAT gives 0..3 (and that every OS keeps): 0 WB = normal, 2 UC-
 * (PCD) = non-cacheable, 3 UC (PCD PWT) = device. Entries 4..7 are the
 * OS's to reprogram, so a leaf with PAT set is of no type this table
 * knows. The PAT bit moves with the leaf size (SDM vol. 3, 4.5.4): bit 7
 * in a 4 KiB leaf, bit 12 in a 2 MiB / 1 GiB one, where bit 7 is PS; the
 * decoders therefore need the level.
 * TLB (tlb_caches_invalid false): no TLB entry is made from an entry with
 * P clear, and a page fault invalidates the TLB and paging-structure cache
 * entries of the faulting address (SDM vol. 3, 4.10.4.1 and 4.10.4.3), so
 * a retried access after a spurious fault walks afresh. */
#include "cortenmm/pt_arch.h"
#include "cortenmm/status.h"

#define X86_P  (1ull << 0)
#define X86_RW (1ull << 1)
#define X86_US (1ull << 2)
#define X86_PWT (1ull << 3)
#define X86_PCD (1ull << 4)
#define X86_A  (1ull << 5)
#define X86_D  (1ull << 6)
#define X86_PS (1ull << 7)
#define X86_G  (1ull << 8)
#define X86_PAT_4K   (1ull << 7)
#define X86_PAT_HUGE (1ull << 12)
#define X86_NX (1ull << 63)
#define X86_ADDR 0x000ffffffffff000ull

static uint64_t x86_span_mask(unsigned level)
{
	return (1ull << (MM_PAGE_SHIFT + 9 * (level - 1))) - 1;
}

/* PCD/PWT of each memory type (MM_MT_* index), PAT entries 0, 2, 3. */
static const uint64_t x86_mt_bits[MM_MT_COUNT] = {
	[MM_MT_NORMAL] = 0, [MM_MT_NC] = X86_PCD, [MM_MT_DEVICE] = X86_PCD | X86_PWT,
};

static uint64_t x86_make_leaf(uint64_t pa, unsigned prot, unsigned level, unsigned ad)
{
	uint64_t e = X86_P | (pa & X86_ADDR & ~x86_span_mask(level));
	if (mm_prot_mt(prot) < MM_MT_COUNT)
		e |= x86_mt_bits[mm_prot_mt(prot)];
	if (ad & PT_AD_A) e |= X86_A;
	if (ad & PT_AD_D) e |= X86_D;
	if (prot & MM_PROT_W) e |= X86_RW;
	if (prot & MM_PROT_U) e |= X86_US;
	if (prot & MM_PROT_G) e |= X86_G;
	if (!(prot & MM_PROT_X)) e |= X86_NX;
	if (level > 1) e |= X86_PS;
	return e;
}

static uint64_t x86_make_table(uint64_t child_pa)
{
	return X86_P | X86_RW | X86_US | (child_pa & X86_ADDR);
}

static bool x86_present(uint64_t pte) { return pte & X86_P; }

static bool x86_is_leaf(uint64_t pte, unsigned level)
{
	return level == 1 || (pte & X86_PS);
}

static uint64_t x86_addr(uint64_t pte, unsigned level)
{
	if (level > 1 && (pte & X86_PS))
		return pte & X86_ADDR & ~x86_span_mask(level);
	return pte & X86_ADDR;
}

/* The PAT bit of a leaf at level. */
static uint64_t x86_pat_bit(unsigned level)
{
	return level > 1 ? X86_PAT_HUGE : X86_PAT_4K;
}

/* The memory type of a leaf at level; a PAT index this table never makes
 * (PAT set, or PWT alone) gives the MM_PROT_MT field all ones, a type no
 * table lists in mem_types, so the leaf matches no mapping the core asks
 * for instead of passing for a normal one. */
static unsigned x86_leaf_mt(uint64_t pte, unsigned level)
{
	if (pte & x86_pat_bit(level))
		return MM_PROT_MT >> MM_PROT_MT_SHIFT;
	for (unsigned t = 0; t < MM_MT_COUNT; t++)
		if ((pte & (X86_PCD | X86_PWT)) == x86_mt_bits[t])
			return t;
	return MM_PROT_MT >> MM_PROT_MT_SHIFT;
}

static unsigned x86_prot(uint64_t pte, unsigned level)
{
	unsigned p = MM_PROT_R;
	if (pte & X86_RW) p |= MM_PROT_W;
	if (!(pte & X86_NX)) p |= MM_PROT_X;
	if (pte & X86_US) p |= MM_PROT_U;
	if (pte & X86_G) p |= MM_PROT_G;
	return p | x86_leaf_mt(pte, level) << MM_PROT_MT_SHIFT;
}

static bool x86_accessed(uint64_t pte, unsigned level) { (void)level; return pte & X86_A; }
static bool x86_dirty(uint64_t pte, unsigned level) { (void)level; return pte & X86_D; }

/* Software status of a non-present entry: with P (bit 0) clear the
 * processor ignores bits 1..63 (SDM vol. 3, 4.5.4), so the status word
 * sits in bits 1..58 (pt_status_encode_bit0) and P stays clear. */

/* Software status of a leaf, in bits the processor ignores in every leaf
 * (SDM vol. 3, 4.5.4: 9-11 and 52-58 without protection keys): COW 9,
 * its logical W 10, MM_MAP_NOSHARE 11, MM_MAP_NOWRITE 52. Every COW and
 * limits status fits. */
#define X86_SW_COW     (1ull << 9)
#define X86_SW_W       (1ull << 10)
#define X86_SW_NOSHARE (1ull << 11)
#define X86_SW_NOWRITE (1ull << 52)
#define X86_SW_STATUS  (X86_SW_COW | X86_SW_W | X86_SW_NOSHARE | X86_SW_NOWRITE)

static bool x86_leaf_status_encode(uint64_t word, uint64_t *pte, unsigned level)
{
	struct mm_status st = mm_status_of_word(word);
	uint64_t b = 0;
	if (!word)
		b = 0;
	else if (st.arg || (st.dev & ~MM_MAP_LIMITS))
		return false;
	else if (st.kind == MM_COW && !(st.dev & MM_MAP_NOWRITE) &&
		 (st.prot & ~MM_PROT_W) == x86_prot(*pte, level))
		b = X86_SW_COW | (st.prot & MM_PROT_W ? X86_SW_W : 0) |
		    (st.dev & MM_MAP_NOSHARE ? X86_SW_NOSHARE : 0);
	else if (st.kind == MM_MAPPED && !st.prot && st.dev)
		b = (st.dev & MM_MAP_NOSHARE ? X86_SW_NOSHARE : 0) |
		    (st.dev & MM_MAP_NOWRITE ? X86_SW_NOWRITE : 0);
	else
		return false;
	*pte = (*pte & ~X86_SW_STATUS) | b;
	return true;
}

static uint64_t x86_leaf_status_decode(uint64_t pte, unsigned level)
{
	struct mm_status st = { 0 };
	unsigned ns = pte & X86_SW_NOSHARE ? MM_MAP_NOSHARE : 0;
	if (pte & X86_SW_COW)
		st = (struct mm_status){ .kind = MM_COW, .dev = (uint8_t)ns,
					 .prot = (uint8_t)(x86_prot(pte, level) |
							   (pte & X86_SW_W ? MM_PROT_W : 0)) };
	else if (pte & (X86_SW_NOSHARE | X86_SW_NOWRITE))
		st = (struct mm_status){ .kind = MM_MAPPED,
					 .dev = (uint8_t)(ns | (pte & X86_SW_NOWRITE ? MM_MAP_NOWRITE : 0)) };
	return st.kind ? mm_status_word(&st) : 0;
}

const struct pt_arch mm_arch_x86_64 = {
	.name = "x86_64", .levels = 4, .bits_per_level = 9, .va_bits = 48,
	.leaf_levels = (1u << 1) | (1u << 2) | (1u << 3),
	.user_lo = 0, .user_last = (1ull << 47) - 1,
	.kernel_lo = ~0ull << 47, .kernel_last = ~0ull,
	.mem_types = (1u << MM_MT_NORMAL) | (1u << MM_MT_NC) | (1u << MM_MT_DEVICE),
	.hw_ad = true,
	.tlb_caches_invalid = false,   /* see above */
	.make_leaf = x86_make_leaf, .make_table = x86_make_table,
	.present = x86_present, .is_leaf = x86_is_leaf, .addr = x86_addr,
	.prot = x86_prot, .accessed = x86_accessed, .dirty = x86_dirty,
	.status_encode = pt_status_encode_bit0, .status_decode = pt_status_decode_bit0,
	.leaf_status_bits = X86_SW_STATUS, .leaf_status_encode = x86_leaf_status_encode,
	.leaf_status_decode = x86_leaf_status_decode,
};
