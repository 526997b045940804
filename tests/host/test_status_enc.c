/* Golden test of one paging table's software-status encoding
 * (pt_arch.status_encode / status_decode): every status kind with extreme
 * field values must come back unchanged from its entry, and the entry must
 * be one the hardware walker ignores. The hardware's valid bit and one
 * exact encoding are written here per ISA from its manual, not taken from
 * the table, so a table whose present() agrees with a wrong encoding
 * still fails.
 *   test_status_enc --arch NAME     (exit 0: all checks passed) */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "arch_registry.h"
#include "cortenmm/status.h"

/* Per ISA (by table-name prefix): the bit whose clear value makes an entry
 * invalid to the walker, and the entry expected for the reference status
 * below (SWAPPED, prot 0x7f, dev 0xff, arg MM_STATUS_ARG_MAX). */
static const struct isa {
	const char *prefix;
	uint64_t valid;
	uint64_t golden;
	uint64_t ignored;   /* leaf bits the walker ignores (software bits) */
} isas[] = {
	/* RISC-V: V; RSW 8-9 */
	{ "sv", 1ull << 0, 0x07fffffffffffff6ull, 3ull << 8 },
	/* x86-64: P; 9-11 and 52-58 */
	{ "x86_64", 1ull << 0, 0x07fffffffffffff6ull, (7ull << 9) | (0x7full << 52) },
	/* AArch64: descriptor bit 0; 55-58 */
	{ "aarch64", 1ull << 0, 0x07fffffffffffff6ull, 0xfull << 55 },
};

static int fails;

#define CHECK(cond, ...)                                                   \
	do {                                                               \
		if (!(cond)) {                                             \
			fails++;                                           \
			fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                      \
			fputc('\n', stderr);                               \
		}                                                          \
	} while (0)

static void one(const struct pt_arch *a, const struct isa *isa, struct mm_status st)
{
	uint64_t w = mm_status_word(&st), pte = 0;
	bool ok = a->status_encode(w, &pte);
	CHECK(ok, "%s: kind %u prot %#x dev %u arg %#" PRIx64 " not encoded", a->name, st.kind,
	      st.prot, st.dev, st.arg);
	if (!ok)
		return;
	CHECK(!(pte & isa->valid), "%s: status entry %#" PRIx64 " has the valid bit", a->name, pte);
	CHECK(!a->present(pte), "%s: status entry %#" PRIx64 " reads as present", a->name, pte);
	CHECK(pte != 0, "%s: status %#" PRIx64 " encoded as the empty entry", a->name, w);
	struct mm_status back = mm_status_of_word(a->status_decode(pte));
	CHECK(back.kind == st.kind && back.prot == st.prot && back.dev == st.dev &&
	      back.arg == st.arg,
	      "%s: kind %u prot %#x dev %u arg %#" PRIx64 " decodes as %u %#x %u %#" PRIx64,
	      a->name, st.kind, st.prot, st.dev, st.arg, back.kind, back.prot, back.dev, back.arg);
}

/* A leaf status on a leaf at level L: where the table encodes it, the
 * leaf stays the same leaf to the walker (only ignored bits change) and
 * gives the word back. Returns whether it was encoded. */
static bool one_leaf(const struct pt_arch *a, const struct isa *isa, unsigned L,
		     struct mm_status st, unsigned hw)
{
	uint64_t pa = (0x123456ull << 21) & ~((1ull << pt_shift(a, L)) - 1);
	uint64_t leaf = a->make_leaf(pa, hw, L, PT_AD_A), pte = leaf, w = mm_status_word(&st);
	CHECK(!a->leaf_status_decode || !(leaf & a->leaf_status_bits), "%s: a fresh leaf has status bits",
	      a->name);
	if (!a->leaf_status_encode || !a->leaf_status_encode(w, &pte, L))
		return false;
	CHECK(!((pte ^ leaf) & ~isa->ignored), "%s L%u: status %#" PRIx64 " changed bits the walker reads"
	      " (%#" PRIx64 " -> %#" PRIx64 ")", a->name, L, w, leaf, pte);
	CHECK(!(pte & ~leaf & ~a->leaf_status_bits), "%s: status outside leaf_status_bits", a->name);
	CHECK(a->present(pte) && a->is_leaf(pte, L) && a->addr(pte, L) == pa && a->prot(pte, L) == hw &&
	      a->accessed(pte, L) && !a->dirty(pte, L), "%s L%u: the leaf reads differently with a status",
	      a->name, L);
	CHECK(a->leaf_status_decode(pte, L) == w, "%s L%u: leaf status %#" PRIx64 " decodes as %#" PRIx64,
	      a->name, L, w, a->leaf_status_decode(pte, L));
	uint64_t clr = pte;
	CHECK(a->leaf_status_encode(0, &clr, L) && clr == leaf, "%s: clearing the status", a->name);
	return true;
}

/* Every leaf kind on every leaf level; the statuses fork and read-only
 * grants make (COW of a writable or a read-only page, a NOWRITE mapping)
 * must fit on every table that offers leaf bits. */
static unsigned leaves(const struct pt_arch *a, const struct isa *isa)
{
	const unsigned rw = MM_PROT_R | MM_PROT_W | MM_PROT_U, ro = MM_PROT_R | MM_PROT_U;
	unsigned n = 0;
	for (unsigned L = 1; L <= a->levels; L++) {
		if (!pt_leaf_ok(a, L))
			continue;
		bool cw = one_leaf(a, isa, L, (struct mm_status){ .kind = MM_COW, .prot = rw }, ro);
		bool cr = one_leaf(a, isa, L, (struct mm_status){ .kind = MM_COW, .prot = ro }, ro);
		bool nw = one_leaf(a, isa, L, (struct mm_status){ .kind = MM_MAPPED,
								    .dev = MM_MAP_NOWRITE }, ro);
		CHECK(!a->leaf_status_encode || (cw && cr && nw),
		      "%s L%u: a common leaf status does not fit (COW rw %d, COW ro %d, NOWRITE %d)",
		      a->name, L, cw, cr, nw);
		one_leaf(a, isa, L, (struct mm_status){ .kind = MM_COW, .prot = rw | MM_PROT_X,
							.dev = MM_MAP_NOSHARE }, ro | MM_PROT_X);
		one_leaf(a, isa, L, (struct mm_status){ .kind = MM_MAPPED, .dev = MM_MAP_LIMITS }, ro);
		one_leaf(a, isa, L, (struct mm_status){ .kind = MM_MAPPED, .dev = MM_MAP_NOSHARE }, rw);
		/* a COW word whose permissions do not match the leaf's cannot be
		 * rebuilt from it: refused, never misread */
		uint64_t pte = a->make_leaf(0, ro, L, 0);
		struct mm_status bad = { .kind = MM_COW, .prot = rw | MM_PROT_X };
		CHECK(!a->leaf_status_encode || !a->leaf_status_encode(mm_status_word(&bad), &pte, L),
		      "%s: COW with other permissions than the leaf's accepted", a->name);
		n += 7;
	}
	return n;
}

int main(int argc, char **argv)
{
	if (mm_arch_list_requested(argc, argv))
		return 0;
	const struct pt_arch *a = argc == 3 && !strcmp(argv[1], "--arch") ?
				  mm_arch_by_name(argv[2]) : NULL;
	if (!a) {
		fprintf(stderr, "usage: %s --arch %s\n", argv[0], mm_arch_names());
		return 2;
	}
	const struct isa *isa = NULL;
	for (unsigned i = 0; i < sizeof isas / sizeof *isas; i++)
		if (!strncmp(a->name, isas[i].prefix, strlen(isas[i].prefix)))
			isa = &isas[i];
	if (!isa) {
		fprintf(stderr, "%s: no valid bit known for this table: add its ISA to isas[]\n",
			a->name);
		return 1;
	}
	/* Every kind an entry may hold, non-present ones and (while a live
	 * leaf is broken before it is made) the leaf kinds, each with every
	 * field at its extremes. */
	static const uint8_t kinds[] = { MM_RESERVED, MM_MAPPED, MM_SWAPPED, MM_PAGER, MM_COW };
	static const uint8_t prots[] = { 0, MM_PROT_R, MM_PROT_MASK };
	static const uint8_t devs[] = { 0, 1, 0xff };
	static const uint64_t args[] = { 0, 1, 1ull << 39, MM_STATUS_ARG_MAX };
	unsigned n = 0;
	for (unsigned k = 0; k < sizeof kinds; k++)
		for (unsigned p = 0; p < sizeof prots; p++)
			for (unsigned d = 0; d < sizeof devs; d++)
				for (unsigned g = 0; g < sizeof args / sizeof *args; g++, n++)
					one(a, isa, (struct mm_status){ .kind = kinds[k], .prot = prots[p],
									.dev = devs[d], .arg = args[g] });
	struct mm_status ref = { .kind = MM_SWAPPED, .prot = MM_PROT_MASK, .dev = 0xff,
				 .arg = MM_STATUS_ARG_MAX };
	uint64_t pte = 0;
	CHECK(a->status_encode(mm_status_word(&ref), &pte) && pte == isa->golden,
	      "%s: reference status encoded as %#" PRIx64 ", expected %#" PRIx64, a->name, pte,
	      isa->golden);
	unsigned nl = leaves(a, isa);
	printf("%s: %u statuses round-tripped through invalid entries, %u leaf cases, %d failures\n",
	       a->name, n, nl, fails);
	return fails ? 1 : 0;
}
