/* Exhaustive small-scope refinement test (P2, docs/architecture.md section 6).
 *
 *   refine --arch A --mm rw|adv|vma [--depth L] [--mutate]
 *   refine --list-arch        (the registered paging tables A)
 *
 * On a tiny window of NPAGES 4 KiB pages that straddles a 1 GiB boundary
 * (so its two halves live under different root entries, and every level of
 * the tree is created and removed), every sequence of L operations drawn
 * from a fixed alphabet (map, map COW, map device memory, mark reserved /
 * reserved non-cacheable / swapped / invalid, unmap, over every page or
 * every range of the window, and a recorded write, mm_touch) runs on the real
 * core, in its own transaction locking exactly the operation's range, and
 * on the atomic spec (tests/host/spec.c). After every step: the result codes
 * match, a query of every page of the window matches the spec, and the tree
 * is well-formed (mm_wf_check). After every sequence the address space is
 * destroyed and every frame must be back. Prints how many sequences and
 * steps were checked. Exit 0 iff every check held. --mutate breaks the
 * spec on purpose (multi-page unmaps forgotten): the run must then fail. */
#include "arch_registry.h"
#include "host_platform.h"
#include "spec.h"
#include "testutil.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PG MM_PAGE_SIZE
#define NPAGES 4
#define MAX_DEPTH 6

enum op_kind { OP_MAP, OP_MAP_COW, OP_MARK_RES, OP_MARK_SWAP, OP_MARK_INV, OP_UNMAP,
	       OP_MAP_DEV, OP_MARK_NC, OP_TOUCH };

struct op {
	enum op_kind kind;
	unsigned first, n;   /* pages [first, first + n) of the window */
};

static struct op alphabet[64];
static unsigned nalpha;

static const struct pt_arch *A;
static const struct mm_protocol *P;
static uint64_t base;     /* VA of window page 0 */
static unsigned long fails;
static int mutate;

static void check_failed(void)
{
	fails++;
}

static const char *kind_name[] = { "map", "map-cow", "mark-reserved", "mark-swapped",
				   "mark-invalid", "unmap", "map-device", "mark-reserved-nc",
				   "touch-write" };

/* The alphabet: maps on single pages, marks and unmaps on every range. */
static void build_alphabet(void)
{
	for (unsigned i = 0; i < NPAGES; i++)
		alphabet[nalpha++] = (struct op){ OP_MAP, i, 1 };
	for (unsigned i = 1; i < NPAGES; i += 2)
		alphabet[nalpha++] = (struct op){ OP_MAP_COW, i, 1 };
	for (unsigned f = 0; f < NPAGES; f++)
		for (unsigned n = 1; f + n <= NPAGES; n++) {
			alphabet[nalpha++] = (struct op){ OP_MARK_RES, f, n };
			alphabet[nalpha++] = (struct op){ OP_UNMAP, f, n };
		}
	/* swapped and invalid marks on the ranges that cross the boundary or
	 * cover one page: enough to put every status on both sides */
	alphabet[nalpha++] = (struct op){ OP_MARK_SWAP, 0, 1 };
	alphabet[nalpha++] = (struct op){ OP_MARK_SWAP, 1, 2 };
	alphabet[nalpha++] = (struct op){ OP_MARK_INV, 1, 2 };
	alphabet[nalpha++] = (struct op){ OP_MARK_INV, 0, NPAGES };
	/* memory types (refused with MM_EPROT where the table has no such
	 * type) and a recorded write (mm_touch) */
	alphabet[nalpha++] = (struct op){ OP_MAP_DEV, 0, 1 };
	alphabet[nalpha++] = (struct op){ OP_MAP_DEV, 2, 1 };
	alphabet[nalpha++] = (struct op){ OP_MARK_NC, 1, 2 };
	alphabet[nalpha++] = (struct op){ OP_TOUCH, 1, 1 };
}

static void describe(const unsigned *seq, unsigned len, unsigned upto)
{
	fprintf(stderr, "  sequence (%s, %s):", A->name, P->name);
	for (unsigned k = 0; k < len && k <= upto; k++) {
		const struct op *o = &alphabet[seq[k]];
		fprintf(stderr, " %s[%u,%u)", kind_name[o->kind], o->first, o->first + o->n);
	}
	fputc('\n', stderr);
}

/* Run one operation in its own transaction on core and spec; 0 if the
 * results agree. */
static int step(struct mm_as *as, struct spec *s, const struct op *o, unsigned k)
{
	uint64_t va = base + o->first * PG, len = o->n * PG;
	struct mm_cursor c;
	int err = mm_lock(&c, as, va, va + len);
	if (err != MM_OK) {
		CHECK(0, "lock [%u,%u): %s", o->first, o->first + o->n, mm_strerror(err));
		return -1;
	}
	int got = MM_OK, want = MM_OK;
	struct mm_status st = { 0 };
	switch (o->kind) {
	case OP_MAP:
	case OP_MAP_COW:
	case OP_MAP_DEV: {
		uint64_t pa = host_frame_alloc(1);
		if (pa == MM_NOFRAME) {
			CHECK(0, "test arena exhausted");
			mm_release(&c);
			return -1;
		}
		/* COW keeps RW as the logical permission and installs R */
		unsigned prot = MM_PROT_R | MM_PROT_W | MM_PROT_U |
				(o->kind == OP_MAP_DEV ? MM_PROT_DEVICE : 0);
		unsigned flags = o->kind == OP_MAP_COW ? MM_MAP_COW : 0;
		want = spec_map(s, va, pa, PG, prot, flags);
		got = mm_map(&c, va, pa, 1, prot, flags);
		if (got != MM_OK)
			host_frame_free(pa, 1);
		break;
	}
	case OP_MARK_RES:
	case OP_MARK_NC:
		st.kind = MM_RESERVED;
		st.prot = MM_PROT_R | MM_PROT_W | MM_PROT_U |
			  (o->kind == OP_MARK_NC ? MM_PROT_NC : 0);
		goto mark;
	case OP_MARK_SWAP:
		st.kind = MM_SWAPPED;
		st.prot = MM_PROT_R | MM_PROT_U;
		st.dev = 3;
		st.arg = 7 + k;   /* distinct slots per step */
		goto mark;
	case OP_MARK_INV:
		st.kind = MM_INVALID;
	mark:
		want = spec_mark(s, va, len, &st);
		got = mm_mark(&c, va, len, &st);
		break;
	case OP_UNMAP:
		/* --mutate: a spec that forgets multi-page unmaps, to show the
		 * comparison catches a wrong model */
		want = (mutate && o->n > 1) ? MM_OK : spec_unmap(s, va, len);
		got = mm_unmap(&c, va, len);
		break;
	case OP_TOUCH: {
		struct mm_info in;
		want = spec_touch(s, va, 1);
		got = mm_touch(&c, va, true);
		if (got == MM_OK && (mm_query(&c, va, &in) || !in.accessed || !in.dirty)) {
			CHECK(0, "step %u: touch-write left A %d D %d", k, in.accessed, in.dirty);
			mm_release(&c);
			return -1;
		}
		break;
	}
	}
	mm_release(&c);
	host_rcu_poll();
	if (got != want) {
		CHECK(0, "step %u %s[%u,%u): core %s, spec %s", k, kind_name[o->kind], o->first,
		      o->first + o->n, mm_strerror(got), mm_strerror(want));
		return -1;
	}
	return 0;
}

/* Query every page of the window, compare with the spec, check the tree. */
static int check_state(struct mm_as *as, struct spec *s, unsigned k)
{
	struct mm_cursor c;
	int err = mm_lock(&c, as, base, base + NPAGES * PG);
	if (err != MM_OK) {
		CHECK(0, "lock window: %s", mm_strerror(err));
		return -1;
	}
	int bad = 0;
	for (unsigned i = 0; i < NPAGES; i++) {
		struct mm_info in;
		err = mm_query(&c, base + i * PG, &in);
		if (err != MM_OK) {
			CHECK(0, "query page %u: %s", i, mm_strerror(err));
			bad = -1;
		} else if (spec_check_info(s, base + i * PG, &in, "refine")) {
			CHECK(0, "page %u differs from the spec after step %u", i, k);
			bad = -1;
		}
	}
	mm_release(&c);
	const char *why = NULL;
	if (mm_wf_check(as, &why) != MM_OK) {
		CHECK(0, "tree not well-formed after step %u: %s", k, why ? why : "?");
		bad = -1;
	}
	return bad;
}

/* Run one sequence from an empty address space; 0 if every check held. */
static int run_seq(const unsigned *seq, unsigned len)
{
	struct mm_as as;
	struct spec s;
	int err = mm_as_init(&as, A, P, &host_plat, A->user_lo, A->user_last, NULL);
	if (err != MM_OK) {
		CHECK(0, "as_init: %s", mm_strerror(err));
		return -1;
	}
	spec_init(&s, base, NPAGES, A->mem_types);
	int bad = 0;
	for (unsigned k = 0; k < len && !bad; k++) {
		bad = step(&as, &s, &alphabet[seq[k]], k);
		if (!bad)
			bad = check_state(&as, &s, k);
		if (bad)
			describe(seq, len, k);
	}
	spec_free(&s);
	mm_as_destroy(&as);
	host_rcu_barrier();
	host_pool_drain();
	if (host_frames_used() != 0) {
		CHECK(0, "%zu frames not returned", host_frames_used());
		describe(seq, len, len);
		bad = -1;
	}
	return bad;
}

int main(int argc, char **argv)
{
	const char *arch = "sv39", *proto = "adv";
	unsigned depth = 3;
	if (mm_arch_list_requested(argc, argv))
		return 0;
	for (int i = 1; i < argc; i++) {
		if (arg_arch_mm(argc, argv, &i, &arch, &proto))
			continue;
		if (!strcmp(argv[i], "--depth") && i + 1 < argc)
			depth = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--mutate"))
			mutate = 1;
		else {
			fprintf(stderr, "usage: refine --arch %s --mm rw|adv|vma [--depth L] [--mutate]\n"
				"       refine --list-arch\n", mm_arch_names());
			return 2;
		}
	}
	A = mm_arch_by_name(arch);
	P = mm_proto_by_name(proto);
	if (!A || !P || depth < 1 || depth > MAX_DEPTH) {
		fprintf(stderr, "refine: bad --arch, --mm or --depth (1..%d)\n", MAX_DEPTH);
		return 2;
	}
	/* Straddle a 1 GiB boundary: pages 0..1 below it, 2..3 above. */
	base = (1ull << 30) - (NPAGES / 2) * PG;
	if (base < A->user_lo || base + NPAGES * PG - 1 > A->user_last) {
		fprintf(stderr, "refine: window outside the user half of %s\n", A->name);
		return 2;
	}
	build_alphabet();
	host_init((size_t)1 << 12);

	unsigned seq[MAX_DEPTH] = { 0 };
	unsigned long nseq = 0, nsteps = 0;
	for (;;) {
		if (run_seq(seq, depth))
			break;    /* the first failing sequence is reported; stop */
		nseq++;
		nsteps += depth;
		unsigned k = depth;
		while (k > 0 && ++seq[k - 1] == nalpha)
			seq[--k] = 0;
		if (k == 0)
			break;
	}
	host_fini();
	printf("refine %s %s: alphabet %u ops on %u pages, depth %u: %lu sequences, "
	       "%lu steps checked, %s\n", A->name, P->name, nalpha, NPAGES, depth, nseq, nsteps,
	       fails ? "FAILED" : "all match the spec");
	return fails ? 1 : 0;
}
