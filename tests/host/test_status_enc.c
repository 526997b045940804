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
} isas[] = {
	{ "sv", 1ull << 0, 0x07fffffffffffff6ull },      /* RISC-V: V */
	{ "x86_64", 1ull << 0, 0x07fffffffffffff6ull },  /* x86-64: P */
	{ "aarch64", 1ull << 0, 0x07fffffffffffff6ull }, /* AArch64: descriptor bit 0 */
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
	printf("%s: %u statuses round-tripped through invalid entries, %d failures\n", a->name, n,
	       fails);
	return fails ? 1 : 0;
}
