/* Suite 'mm': host tests of the CortenMM core against the atomic spec.
 *   test_mm <arch|diff|bad|oom|charge|kernel|huge|wide|pager|lockoom|maprange|touch|adbits|leaves|
 *            top|bbm>
 *           --arch A --mm P [--seed N] [--steps N]
 *   test_mm --list-arch       (the registered paging tables, one a line)
 * Every test checks the tree's well-formedness after each step and that
 * every frame is back at the end. Exit 0 iff every check held. */
#include "arch_registry.h"
#include "host_platform.h"
#include "../../mm/baseline/vma.h"
#include "spec.h"
#include "testutil.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct pt_arch *A;
static const struct mm_protocol *P;
static int fails;
static uint64_t rng = 88172645463325252ull;

static void check_failed(void)
{
	if (++fails > 20)
		exit(1);
}

static uint64_t rndn(uint64_t n) { return xorshift64_below(&rng, n); }

#define PG MM_PAGE_SIZE
#define MB2 (1ull << 21)

static void check_wf(struct mm_as *as, const char *when)
{
	const char *why = NULL;
	int err = mm_wf_check(as, &why);
	CHECK(err == MM_OK, "well-formedness after %s: %s", when, why ? why : "?");
}

/* Every page of the spec window equals the core's view. */
static void check_window(struct mm_as *as, struct spec *s, const char *when)
{
	struct mm_cursor c;
	int err = mm_lock(&c, as, s->base, s->base + s->npages * PG);
	CHECK(err == MM_OK, "lock window: %s", mm_strerror(err));
	if (err)
		return;
	int bad = 0;
	for (size_t i = 0; i < s->npages && bad < 5; i++) {
		struct mm_info in;
		uint64_t va = s->base + i * PG;
		err = mm_query(&c, va, &in);
		CHECK(err == MM_OK, "query: %s", mm_strerror(err));
		if (spec_check_info(s, va, &in, when))
			bad++;
	}
	mm_release(&c);
	CHECK(!bad, "window differs from spec after %s", when);
}

static unsigned rnd_prot(void)
{
	static const unsigned base[] = { MM_PROT_R, MM_PROT_R | MM_PROT_W, MM_PROT_R | MM_PROT_X,
					 MM_PROT_R | MM_PROT_W | MM_PROT_X };
	unsigned t = (unsigned)rndn(MM_MT_COUNT);
	if (rndn(2) || !((A->mem_types >> t) & 1))
		t = MM_MT_NORMAL;       /* half normal; others as the table offers them */
	return base[rndn(4)] | (rndn(2) ? MM_PROT_U : 0) | (rndn(4) == 0 ? MM_PROT_G : 0) |
	       (t << MM_PROT_MT_SHIFT);
}

/* Random mm_map flags: COW one time in five, the accessed / dirty bits
 * a fault-made leaf gets, and each limit one time in four. */
static unsigned rnd_map_flags(void)
{
	static const unsigned ad[] = { 0, MM_MAP_ACCESSED, MM_MAP_DIRTY | MM_MAP_ACCESSED, MM_MAP_DIRTY };
	return (rndn(5) == 0 ? MM_MAP_COW : 0) | ad[rndn(4)] |
	       (rndn(4) == 0 ? MM_MAP_NOWRITE : 0) | (rndn(4) == 0 ? MM_MAP_NOSHARE : 0);
}

static struct mm_status rnd_status(void)
{
	struct mm_status st = { 0 };
	static const uint8_t kinds[] = { MM_INVALID, MM_RESERVED, MM_SWAPPED, MM_PAGER };
	st.kind = kinds[rndn(4)];
	if (st.kind != MM_INVALID) {
		st.prot = (uint8_t)rnd_prot();
		if (st.kind == MM_SWAPPED) {
			st.dev = (uint8_t)rndn(256);
			st.arg = rndn(MM_STATUS_ARG_MAX + 1);
		}
		if (st.kind == MM_PAGER)
			st.arg = rndn(MM_STATUS_ARG_MAX + 1);
	}
	return st;
}

static void new_as(struct mm_as *as)
{
	int err = mm_as_init(as, A, P, &host_plat, A->user_lo, A->user_last, NULL);
	CHECK(err == MM_OK, "as_init: %s", mm_strerror(err));
	if (err)
		exit(1);
}

static void end_as(struct mm_as *as)
{
	mm_as_destroy(as);
	host_rcu_barrier();
	host_pool_drain();
	CHECK(host_frames_used() == 0, "frames leaked: %zu still allocated", host_frames_used());
}

/* ---- arch: trait-table round trips ---- */
static void t_arch(void)
{
	for (unsigned L = 1; L <= A->levels; L++) {
		if (!pt_leaf_ok(A, L))
			continue;
		for (unsigned prot = 0; prot <= MM_PROT_MASK; prot++) {
			if (!(prot & MM_PROT_R) || !pt_mt_ok(A, prot))
				continue;
			for (unsigned ad = 0; ad <= (PT_AD_A | PT_AD_D); ad++) {
				uint64_t pa = (0x123456ull << 21) & ~((1ull << pt_shift(A, L)) - 1);
				uint64_t e = A->make_leaf(pa, prot, L, ad);
				CHECK(A->present(e) && A->is_leaf(e, L), "%s leaf L%u not a present leaf",
				      A->name, L);
				CHECK(A->addr(e, L) == pa, "%s leaf L%u addr %#" PRIx64, A->name, L,
				      A->addr(e, L));
				CHECK(A->prot(e, L) == prot, "%s leaf L%u prot %#x != %#x", A->name, L,
				      A->prot(e, L), prot);
				CHECK(A->accessed(e, L) == !!(ad & PT_AD_A) &&
				      A->dirty(e, L) == !!(ad & PT_AD_D),
				      "%s leaf made with A/D %u reads A %d D %d", A->name, ad,
				      A->accessed(e, L), A->dirty(e, L));
			}
		}
		if (L > 1) {
			uint64_t t = A->make_table(0x80123000ull);
			CHECK(A->present(t) && !A->is_leaf(t, L), "%s table L%u", A->name, L);
			CHECK(A->addr(t, L) == 0x80123000ull, "%s table addr", A->name);
		}
	}
	CHECK(A->mem_types & (1u << MM_MT_NORMAL), "%s cannot map normal memory", A->name);
	CHECK(!(A->mem_types & ~((1u << MM_MT_COUNT) - 1)), "%s offers a memory type that is none",
	      A->name);
	CHECK(!A->present(0), "zero entry present");
	CHECK(A->user_last < A->kernel_lo, "halves overlap");
	if (A->split_roots) {
		unsigned root_bits = pt_shift(A, A->levels) + A->bits_per_level;
		CHECK(pt_index(A, A->user_lo, A->levels) == 0 && pt_index(A, A->kernel_lo, A->levels) == 0,
		      "a half does not start at its root's entry 0");
		CHECK(!((A->user_last - A->user_lo) >> root_bits) &&
		      !((A->kernel_last - A->kernel_lo) >> root_bits), "a half is wider than its root");
	} else {
		CHECK(pt_index(A, A->kernel_lo, A->levels) == pt_entries(A) / 2,
		      "kernel half starts mid-root");
	}
	/* what mm_as_init accepts: one root's worth of addresses, and break-
	 * before-make only from a platform that can flush for it */
	struct mm_as as;
	uint64_t wide = A->split_roots ? A->kernel_last : (1ull << A->va_bits) - 1;
	CHECK(mm_as_init(&as, A, P, &host_plat, A->user_lo, wide, NULL) == MM_ERANGE,
	      "%s: an AS over %#" PRIx64 "..%#" PRIx64 " accepted", A->name, A->user_lo, wide);
	struct mm_platform nobbm = host_plat;
	nobbm.tlb_flush_bbm = NULL;
	int err = mm_as_init(&as, A, P, &nobbm, A->user_lo, A->user_last, NULL);
	CHECK(err == (A->needs_bbm ? MM_EINVAL : MM_OK), "as_init without tlb_flush_bbm: %s",
	      mm_strerror(err));
	if (err == MM_OK)
		end_as(&as);
}

/* ---- diff: random transactions, core vs spec ---- */
struct ctx {
	struct mm_as as;
	struct spec s;
};

static void rnd_subrange(uint64_t lo, uint64_t hi /*excl*/, uint64_t *va, uint64_t *len)
{
	uint64_t n = (hi - lo) / PG;
	uint64_t a = rndn(n), b = rndn(n);
	if (a > b) {
		uint64_t t = a;
		a = b;
		b = t;
	}
	*va = lo + a * PG;
	*len = (b - a + 1) * PG;
}

/* One random op inside the locked [lo, hi). */
static void diff_op(struct ctx *x, struct mm_cursor *c, uint64_t lo, uint64_t hi)
{
	int got, want;
	uint64_t va, len;
	switch (rndn(8)) {
	case 0:
	case 1: { /* map */
		unsigned level = 1;
		uint64_t blo = (lo + MB2 - 1) & ~(MB2 - 1);
		if (rndn(3) == 0 && blo + MB2 <= hi) {
			level = 2;
			va = blo + rndn((hi - blo) / MB2) * MB2;
		} else {
			va = lo + rndn((hi - lo) / PG) * PG;
		}
		uint64_t size = 1ull << pt_shift(A, level);
		uint64_t pa = host_frame_alloc(level);
		CHECK(pa != MM_NOFRAME, "test arena exhausted");
		unsigned prot = rnd_prot(), flags = rnd_map_flags();
		want = spec_map(&x->s, va, pa, size, prot, flags);
		got = mm_map(c, va, pa, level, prot, flags);
		CHECK(got == want, "map %#" PRIx64 " L%u: core %s spec %s", va, level,
		      mm_strerror(got), mm_strerror(want));
		if (got != MM_OK) {
			host_frame_free(pa, level);
			break;
		}
		struct mm_info in;
		bool wa = flags & (MM_MAP_ACCESSED | MM_MAP_DIRTY), wd = flags & MM_MAP_DIRTY;
		CHECK(mm_query(c, va + size - PG, &in) == MM_OK && in.accessed == wa && in.dirty == wd,
		      "map flags %#x: leaf reads A %d D %d", flags, in.accessed, in.dirty);
		break;
	}
	case 2: { /* mark */
		rnd_subrange(lo, hi, &va, &len);
		struct mm_status st = rnd_status();
		want = spec_mark(&x->s, va, len, &st);
		got = mm_mark(c, va, len, &st);
		CHECK(got == want, "mark %#" PRIx64 "+%#" PRIx64 " kind %u: core %s spec %s", va, len,
		      st.kind, mm_strerror(got), mm_strerror(want));
		break;
	}
	case 3: /* unmap */
		rnd_subrange(lo, hi, &va, &len);
		want = spec_unmap(&x->s, va, len);
		got = mm_unmap(c, va, len);
		CHECK(got == want, "unmap %#" PRIx64 "+%#" PRIx64 ": core %s", va, len, mm_strerror(got));
		break;
	case 4: { /* protect */
		static const unsigned prots[] = { MM_PROT_R, MM_PROT_R | MM_PROT_W, MM_PROT_R | MM_PROT_X,
						  MM_PROT_R | MM_PROT_W | MM_PROT_X };
		unsigned prot = prots[rndn(4)];
		rnd_subrange(lo, hi, &va, &len);
		want = spec_protect(&x->s, va, len, prot);
		got = mm_protect(c, va, len, prot);
		CHECK(got == want, "protect %#" PRIx64 "+%#" PRIx64 ": core %s", va, len, mm_strerror(got));
		break;
	}
	case 5: /* make copy-on-write, or back */
		rnd_subrange(lo, hi, &va, &len);
		if (rndn(3)) {
			want = spec_make_cow(&x->s, va, len);
			got = mm_make_cow(c, va, len);
		} else {
			want = spec_unshare(&x->s, va, len);
			got = mm_unshare(c, va, len);
		}
		CHECK(got == want, "make_cow/unshare %#" PRIx64 "+%#" PRIx64 ": core %s", va, len,
		      mm_strerror(got));
		break;
	case 6: { /* age: a query that also clears A; or touch, which sets A (and D) */
		struct mm_info in;
		va = lo + rndn((hi - lo) / PG) * PG;
		if (rndn(2)) {
			got = mm_age(c, va, &in);
			CHECK(got == MM_OK, "age: %s", mm_strerror(got));
			CHECK(!spec_check_info(&x->s, va, &in, "age"), "age mismatch");
			break;
		}
		int write = (int)rndn(2);
		want = spec_touch(&x->s, va, write);
		got = mm_touch(c, va, write);
		CHECK(got == want, "touch %#" PRIx64 " w%d: core %s spec %s", va, write,
		      mm_strerror(got), mm_strerror(want));
		CHECK(mm_query(c, va, &in) == MM_OK, "query");
		CHECK(!spec_check_info(&x->s, va, &in, "touch"), "touch changed the status");
		if (got == MM_OK)
			CHECK(in.accessed && (in.dirty || !write), "touch w%d: A %d D %d", write,
			      in.accessed, in.dirty);
		break;
	}
	default: { /* query */
		struct mm_info in;
		va = lo + rndn((hi - lo) / PG) * PG;
		got = mm_query(c, va, &in);
		CHECK(got == MM_OK, "query: %s", mm_strerror(got));
		CHECK(!spec_check_info(&x->s, va, &in, "query"), "query mismatch");
		break;
	}
	}
}

/* A window that straddles a 1 GiB boundary (and so a level-3 entry). */
#define WIN_PAGES 2048
static uint64_t win_base(void) { return (1ull << 30) - (WIN_PAGES / 2) * PG; }

static void rnd_lock_range(uint64_t base, size_t npages, uint64_t *lo, uint64_t *hi)
{
	uint64_t n;
	switch (rndn(8)) {
	case 0: n = 1 + rndn(npages); break;
	case 1: n = 512; break;
	default: n = 1 + rndn(64); break;
	}
	if (n > npages)
		n = npages;
	uint64_t s = rndn(npages - n + 1);
	if (n == 512 && rndn(2))
		s &= ~511ull;
	*lo = base + s * PG;
	*hi = *lo + n * PG;
}

static void t_diff(long steps)
{
	struct ctx x;
	new_as(&x.as);
	spec_init(&x.s, win_base(), WIN_PAGES, A->mem_types);
	for (long st = 0; st < steps && fails == 0; st++) {
		uint64_t lo, hi;
		rnd_lock_range(x.s.base, x.s.npages, &lo, &hi);
		struct mm_cursor c;
		int err = mm_lock(&c, &x.as, lo, hi);
		CHECK(err == MM_OK, "lock: %s", mm_strerror(err));
		if (err)
			break;
		unsigned nops = 1 + (unsigned)rndn(4);
		for (unsigned k = 0; k < nops; k++)
			diff_op(&x, &c, lo, hi);
		mm_release(&c);
		check_wf(&x.as, "diff step");
		if (st % 64 == 0)
			check_window(&x.as, &x.s, "diff");
		host_rcu_poll();
	}
	check_window(&x.as, &x.s, "diff end");
	spec_free(&x.s);
	end_as(&x.as);
}

/* ---- txn: several operations planned as one transaction (cursor.h):
 * an op whose range no earlier op of the transaction touched takes no
 * more frames than its dry run said before the first op ran, any other
 * no more than mm_txn_need_max; with those reserved, no op draws a frame
 * of its own (mm_txn_overdraws stays 0). Ops are maps (4 KiB and 2 MiB),
 * marks, unmaps and protects in a window over a 1 GiB boundary, checked
 * against the spec as they run; a dry run's error must be the op's. */
struct txop {
	int kind;             /* 0 map, 1 mark, 2 unmap, 3 protect */
	uint64_t va, len, pa;
	unsigned level, prot, flags;
	struct mm_status st;
	int dry;              /* untouched: its dry run's error */
};

static void txn_rnd_op(struct txop *o, uint64_t lo, uint64_t hi)
{
	static const unsigned prots[] = { MM_PROT_R, MM_PROT_R | MM_PROT_W, MM_PROT_R | MM_PROT_X };
	*o = (struct txop){ .kind = (int)rndn(4) };
	if (o->kind == 0) {
		uint64_t blo = (lo + MB2 - 1) & ~(MB2 - 1);
		o->level = 1;
		if (rndn(3) == 0 && blo + MB2 <= hi && pt_leaf_ok(A, 2)) {
			o->level = 2;
			o->va = blo + rndn((hi - blo) / MB2) * MB2;
		} else {
			o->va = lo + rndn((hi - lo) / PG) * PG;
		}
		o->len = 1ull << pt_shift(A, o->level);
		o->prot = rnd_prot();
		o->flags = rnd_map_flags();
		return;
	}
	rnd_subrange(lo, hi, &o->va, &o->len);
	if (o->kind == 1)
		o->st = rnd_status();
	o->prot = prots[rndn(3)];
}

/* The dry run of o (cursor.h mm_*_need). */
static int txn_need(struct mm_cursor *c, const struct txop *o, unsigned *need)
{
	switch (o->kind) {
	case 0: return mm_map_need(c, o->va, 0, o->level, o->prot, o->flags, need);
	case 1: return mm_mark_need(c, o->va, o->len, &o->st, need);
	case 2: return mm_unmap_need(c, o->va, o->len, need);
	default: return mm_protect_need(c, o->va, o->len, o->prot, need);
	}
}

/* Run o on the core and the spec; they must agree. */
static int txn_run(struct ctx *x, struct mm_cursor *c, struct txop *o)
{
	int got, want;
	switch (o->kind) {
	case 0:
		o->pa = host_frame_alloc(o->level);
		CHECK(o->pa != MM_NOFRAME, "test arena exhausted");
		want = spec_map(&x->s, o->va, o->pa, o->len, o->prot, o->flags);
		got = mm_map(c, o->va, o->pa, o->level, o->prot, o->flags);
		if (got)
			host_frame_free(o->pa, o->level);
		break;
	case 1:
		want = spec_mark(&x->s, o->va, o->len, &o->st);
		got = mm_mark(c, o->va, o->len, &o->st);
		break;
	case 2:
		want = spec_unmap(&x->s, o->va, o->len);
		got = mm_unmap(c, o->va, o->len);
		break;
	default:
		want = spec_protect(&x->s, o->va, o->len, o->prot);
		got = mm_protect(c, o->va, o->len, o->prot);
		break;
	}
	CHECK(got == want, "txn op %d %#" PRIx64 "+%#" PRIx64 ": core %s spec %s", o->kind, o->va,
	      o->len, mm_strerror(got), mm_strerror(want));
	return got;
}

static void t_txn(long steps)
{
	struct ctx x;
	new_as(&x.as);
	spec_init(&x.s, win_base(), WIN_PAGES, A->mem_types);
	unsigned long od0 = mm_txn_overdraws;
	long planned = 0, bounded = 0;
	for (long st = 0; st < steps && fails == 0; st++) {
		uint64_t lo, hi;
		rnd_lock_range(x.s.base, x.s.npages, &lo, &hi);
		struct mm_cursor c;
		CHECK(mm_lock(&c, &x.as, lo, hi) == MM_OK, "lock");
		mm_txn_begin(&c);
		struct txop ops[8];
		unsigned n = 1 + (unsigned)rndn(8), total = 0;
		for (unsigned k = 0; k < n; k++) {
			txn_rnd_op(&ops[k], lo, hi);
			bool touched = false;
			for (unsigned j = 0; j < k; j++)
				touched |= ops[j].va < ops[k].va + ops[k].len && ops[k].va < ops[j].va + ops[j].len;
			unsigned need;
			if (touched) {
				ops[k].dry = 1;          /* no dry run: anything goes */
				need = mm_txn_need_max(&c, ops[k].va, ops[k].len);
				bounded++;
			} else {
				ops[k].dry = txn_need(&c, &ops[k], &need);
				planned++;
			}
			total += need;
		}
		CHECK(mm_txn_reserve(&c, total) == MM_OK, "reserve %u", total);
		for (unsigned k = 0; k < n; k++) {
			int got = txn_run(&x, &c, &ops[k]);
			CHECK(got == ops[k].dry || ops[k].dry == 1, "step %ld op %u: dry run %s, run %s",
			      st, k, mm_strerror(ops[k].dry), mm_strerror(got));
		}
		CHECK(mm_txn_overdraws == od0, "step %ld: an op drew %lu frames past its plan", st,
		      mm_txn_overdraws - od0);
		mm_txn_finish(&c);
		mm_release(&c);
		check_wf(&x.as, "txn step");
		if (st % 64 == 0)
			check_window(&x.as, &x.s, "txn");
		host_rcu_poll();
	}
	check_window(&x.as, &x.s, "txn end");
	printf("txn: %ld ops planned by their dry run, %ld by the bound\n", planned, bounded);
	spec_free(&x.s);
	end_as(&x.as);
}

/* ---- bad input: each error distinct, tree unchanged ---- */
static void unchanged(struct ctx *x, size_t used, uint64_t nr, const char *what)
{
	CHECK(host_frames_used() == used, "%s: frames %zu -> %zu", what, used, host_frames_used());
	CHECK(x->as.nr_frames == nr, "%s: PT frames changed", what);
}

static void t_bad(void)
{
	struct ctx x;
	new_as(&x.as);
	uint64_t B = win_base();
	spec_init(&x.s, B, WIN_PAGES, A->mem_types);
	struct mm_cursor c;
	/* populate: a mapped 4K page, a reserved range, a 2M huge page */
	CHECK(mm_lock(&c, &x.as, B, B + WIN_PAGES * PG) == MM_OK, "lock");
	uint64_t pa = host_frame_alloc(1);
	CHECK(mm_map(&c, B, pa, 1, MM_PROT_R | MM_PROT_W, 0) == MM_OK, "map");
	spec_map(&x.s, B, pa, PG, MM_PROT_R | MM_PROT_W, 0);
	struct mm_status rs = { .kind = MM_RESERVED, .prot = MM_PROT_R | MM_PROT_W };
	CHECK(mm_mark(&c, B + 16 * PG, 64 * PG, &rs) == MM_OK, "mark");
	spec_mark(&x.s, B + 16 * PG, 64 * PG, &rs);
	uint64_t hb = (B + MB2) & ~(MB2 - 1), hpa = host_frame_alloc(2);
	CHECK(mm_map(&c, hb, hpa, 2, MM_PROT_R, 0) == MM_OK, "map huge");
	spec_map(&x.s, hb, hpa, MB2, MM_PROT_R, 0);
	mm_release(&c);
	host_rcu_barrier();
	host_pool_drain();
	host_pool_enable(false);
	size_t used = host_frames_used();
	uint64_t nr = x.as.nr_frames;

	/* lock */
	CHECK(mm_lock(&c, &x.as, B + 1, B + PG) == MM_EALIGN, "unaligned start");
	CHECK(mm_lock(&c, &x.as, B, B + PG + 8) == MM_EALIGN, "unaligned end");
	CHECK(mm_lock(&c, &x.as, B + PG, B + PG) == MM_ERANGE, "empty range");
	CHECK(mm_lock(&c, &x.as, B + 2 * PG, B + PG) == MM_ERANGE, "inverted range");
	CHECK(mm_lock(&c, &x.as, A->user_last + 1, A->user_last + 1 + PG) == MM_EOUTSIDE, "kernel half");
	CHECK(mm_lock(&c, &x.as, A->user_last + 1 - PG, A->user_last + 1 + PG) == MM_EOUTSIDE, "straddle");
	CHECK(mm_lock(&c, &x.as, A->kernel_lo, A->kernel_lo + PG) == MM_EOUTSIDE, "kernel page");
	unchanged(&x, used, nr, "bad lock");

	CHECK(mm_lock(&c, &x.as, B, B + 128 * PG) == MM_OK, "lock");
	uint64_t f = host_frame_alloc(1);
	struct mm_info in;
	CHECK(mm_map(&c, B + 200 * PG, f, 1, MM_PROT_R, 0) == MM_ENOTLOCKED, "map outside lock");
	CHECK(mm_map(&c, B + PG + 8, f, 1, MM_PROT_R, 0) == MM_EALIGN, "map unaligned va");
	CHECK(mm_map(&c, B + PG, f + 8, 1, MM_PROT_R, 0) == MM_EALIGN, "map unaligned pa");
	CHECK(mm_map(&c, B + PG, f, 2, MM_PROT_R, 0) == MM_EALIGN || A->levels < 2, "map huge unaligned");
	CHECK(mm_map(&c, B + PG, f, A->levels + 1, MM_PROT_R, 0) == MM_EHUGE, "map beyond root");
	CHECK(mm_map(&c, B + PG, f, 0, MM_PROT_R, 0) == MM_EHUGE, "map level 0");
	CHECK(mm_map(&c, B + PG, f, 1, MM_PROT_W, 0) == MM_EPROT, "map without R");
	CHECK(mm_map(&c, B + PG, f, 1, MM_PROT_R | 0x80, 0) == MM_EPROT, "map unknown prot");
	CHECK(mm_map(&c, B + PG, f, 1, MM_PROT_R | MM_PROT_MT, 0) == MM_EPROT, "map type 3");
	for (unsigned t = 0; t < MM_MT_COUNT; t++) {
		struct mm_status ms = { .kind = MM_RESERVED, .prot = MM_PROT_R | (t << MM_PROT_MT_SHIFT) };
		if ((A->mem_types >> t) & 1)
			continue;
		CHECK(mm_map(&c, B + PG, f, 1, ms.prot, 0) == MM_EPROT, "map of type %u the arch lacks", t);
		CHECK(mm_mark(&c, B + PG, PG, &ms) == MM_EPROT, "mark of type %u the arch lacks", t);
	}
	CHECK(mm_touch(&c, B + PG, false) == MM_EINVAL, "touch of nothing");
	CHECK(mm_touch(&c, B + 16 * PG, false) == MM_EINVAL, "touch of reserved");
	CHECK(mm_touch(&c, B + 200 * PG, false) == MM_ENOTLOCKED, "touch outside lock");
	CHECK(mm_map(&c, B + PG, f, 1, MM_PROT_R, 0x40) == MM_EINVAL, "map bad flags");
	CHECK(mm_map(&c, B, f, 1, MM_PROT_R, 0) == MM_EEXIST, "map over mapped");
	CHECK(mm_map(&c, B, f, 1, MM_PROT_R, MM_MAP_COW) == MM_EEXIST, "cow over mapped");
	struct mm_status st = { .kind = MM_PAGER, .arg = 7 };
	CHECK(mm_mark(&c, B, 4 * PG, &st) == MM_EMAPPED, "mark over mapped");
	st.kind = MM_MAPPED;
	CHECK(mm_mark(&c, B + PG, PG, &st) == MM_EINVAL, "mark MAPPED");
	st.kind = MM_COW;
	CHECK(mm_mark(&c, B + PG, PG, &st) == MM_EINVAL, "mark COW");
	st = (struct mm_status){ .kind = MM_SWAPPED, .arg = MM_STATUS_ARG_MAX + 1 };
	CHECK(mm_mark(&c, B + PG, PG, &st) == MM_EINVAL, "mark arg too big");
	st = (struct mm_status){ .kind = MM_RESERVED, .prot = 0x80 };
	CHECK(mm_mark(&c, B + PG, PG, &st) == MM_EINVAL, "mark bad prot");
	st = (struct mm_status){ .kind = MM_RESERVED };
	CHECK(mm_mark(&c, B + PG, 0, &st) == MM_ERANGE, "mark empty");
	CHECK(mm_mark(&c, B + PG, PG / 2, &st) == MM_EALIGN, "mark unaligned len");
	CHECK(mm_mark(&c, B + 100 * PG, 100 * PG, &st) == MM_ENOTLOCKED, "mark past lock");
	CHECK(mm_unmap(&c, B, 0) == MM_ERANGE, "unmap empty");
	CHECK(mm_unmap(&c, B + 4, PG) == MM_EALIGN, "unmap unaligned");
	CHECK(mm_unmap(&c, B - PG, 2 * PG) == MM_ENOTLOCKED, "unmap before lock");
	CHECK(mm_query(&c, B + 128 * PG, &in) == MM_ENOTLOCKED, "query past lock");
	mm_release(&c);
	host_frame_free(f, 1);
	unchanged(&x, used, nr, "bad ops");
	check_wf(&x.as, "bad ops");
	check_window(&x.as, &x.s, "bad ops");

	/* each code distinct */
	int codes[] = { MM_EINVAL, MM_EALIGN, MM_ERANGE, MM_EOUTSIDE, MM_ENOTLOCKED, MM_EEXIST,
			MM_EMAPPED, MM_ENOMEM, MM_EHUGE, MM_EPROT };
	for (unsigned i = 0; i < sizeof codes / sizeof *codes; i++)
		for (unsigned j = i + 1; j < sizeof codes / sizeof *codes; j++)
			CHECK(codes[i] != codes[j] && strcmp(mm_strerror(codes[i]), mm_strerror(codes[j])),
			      "codes %d %d not distinct", codes[i], codes[j]);
	host_pool_enable(true);
	spec_free(&x.s);
	end_as(&x.as);
}

/* ---- oom: allocation failure injected at every allocation point ---- */
enum { O_MAP, O_MAPH, O_COW, O_MARK, O_UNMAP, O_PROT, O_MKCOW };
struct oop {
	int kind;
	uint64_t va, len;
	struct mm_status st;
};

static long points;

/* Charge mode (test "charge"): instead of failing the k-th allocation, the
 * platform's frames_charge hook refuses once the address space would own
 * more than charge_limit PT frames (nr_frames + charged, not yet used). */
static bool charge_mode;
static long charge_limit = -1, charged;
static int charge_hook(struct mm_as *as, unsigned n)
{
	if (charge_limit >= 0 && (long)as->nr_frames + charged + (long)n > charge_limit)
		return -1;
	charged += n;
	return 0;
}
static void uncharge_hook(struct mm_as *as, unsigned n)
{
	(void)as;
	charged -= n;
	CHECK(charged >= 0, "uncharged more than was charged");
}
static struct mm_platform charge_plat;

static void fail_at(long k, uint64_t nr)
{
	if (charge_mode)
		charge_limit = (long)nr + k - 1;
	else
		host_fail_at(k);
}
static void fail_off(void)
{
	charge_limit = -1;
	host_fail_off();
}

/* Run op with the k-th allocation failing (or, in charge mode, with room
 * for k - 1 more PT frames), k = 1, 2, ... until it succeeds; after each
 * failure the tree must be exactly as before, and every charge returned. */
static void oom_op(struct ctx *x, const struct oop *o)
{
	for (long k = 1;; k++) {
		host_rcu_barrier();
		size_t used = host_frames_used();
		uint64_t nr = x->as.nr_frames;
		unsigned level = o->kind == O_MAPH ? 2 : 1;
		uint64_t pa = (o->kind <= O_COW) ? host_frame_alloc(level) : 0;
		struct mm_cursor c;
		fail_at(k, nr);
		uint64_t len = o->len ? o->len : (1ull << pt_shift(A, level));
		uint64_t lo = o->va & ~(MB2 - 1), hi = (o->va + len + MB2 - 1) & ~(MB2 - 1);
		int err = mm_lock(&c, &x->as, lo, hi);
		if (err == MM_ENOMEM) {
			fail_off();
			CHECK(charged == 0, "failed lock kept a charge of %ld", charged);
			if (pa)
				host_frame_free(pa, level);
			points++;
			check_wf(&x->as, "failed lock");
			check_window(&x->as, &x->s, "failed lock");
			continue;
		}
		CHECK(err == MM_OK, "oom lock: %s", mm_strerror(err));
		size_t used_locked = host_frames_used();
		uint64_t nr_locked = x->as.nr_frames;
		switch (o->kind) {
		case O_MAP: err = mm_map(&c, o->va, pa, 1, MM_PROT_R | MM_PROT_W, 0); break;
		case O_MAPH: err = mm_map(&c, o->va, pa, 2, MM_PROT_R, 0); break;
		case O_COW: err = mm_map(&c, o->va, pa, 1, MM_PROT_R | MM_PROT_W, MM_MAP_COW); break;
		case O_MARK: err = mm_mark(&c, o->va, o->len, &o->st); break;
		case O_PROT: err = mm_protect(&c, o->va, o->len, MM_PROT_R); break;
		case O_MKCOW: err = mm_make_cow(&c, o->va, o->len); break;
		default: err = mm_unmap(&c, o->va, o->len); break;
		}
		long limit = charge_limit;
		fail_off();
		if (err == MM_ENOMEM) {
			CHECK(host_frames_used() == used_locked && x->as.nr_frames == nr_locked,
			      "failed op %d at alloc %ld changed frame counts", o->kind, k);
			mm_release(&c);
			CHECK(charged == 0, "failed op kept a charge of %ld", charged);
			if (pa)
				host_frame_free(pa, level);
			points++;
			check_wf(&x->as, "failed op");
			check_window(&x->as, &x->s, "failed op");
			(void)used;
			(void)nr;
			continue;
		}
		CHECK(err == MM_OK, "oom op %d: %s", o->kind, mm_strerror(err));
		CHECK(limit < 0 || (long)x->as.nr_frames <= limit,
		      "op %d owns %lu PT frames, over its limit %ld", o->kind,
		      (unsigned long)x->as.nr_frames, limit);
		/* Refused only when it did not fit: the limit it finally fit
		 * under is exactly what it drew (no frame counted twice). Ops
		 * that remove tables are left out: they unlink PT pages too. */
		bool grows = o->kind != O_UNMAP && !(o->kind == O_MARK && o->st.kind == MM_INVALID);
		CHECK(limit < 0 || !grows || (long)x->as.nr_frames == limit,
		      "op %d fit only under limit %ld but owns %lu PT frames", o->kind, limit,
		      (unsigned long)x->as.nr_frames);
		switch (o->kind) {
		case O_MAP: spec_map(&x->s, o->va, pa, PG, MM_PROT_R | MM_PROT_W, 0); break;
		case O_MAPH: spec_map(&x->s, o->va, pa, MB2, MM_PROT_R, 0); break;
		case O_COW: spec_map(&x->s, o->va, pa, PG, MM_PROT_R | MM_PROT_W, MM_MAP_COW); break;
		case O_MARK: spec_mark(&x->s, o->va, o->len, &o->st); break;
		case O_PROT: spec_protect(&x->s, o->va, o->len, MM_PROT_R); break;
		case O_MKCOW: spec_make_cow(&x->s, o->va, o->len); break;
		default: spec_unmap(&x->s, o->va, o->len); break;
		}
		mm_release(&c);
		check_wf(&x->as, "oom op");
		check_window(&x->as, &x->s, "oom op");
		return;
	}
}

static void t_oom(void)
{
	struct ctx x;
	host_pool_enable(false);
	if (charge_mode) {
		charge_plat = host_plat;
		charge_plat.frames_charge = charge_hook;
		charge_plat.frames_uncharge = uncharge_hook;
		int err = mm_as_init(&x.as, A, P, &charge_plat, A->user_lo, A->user_last, NULL);
		CHECK(err == MM_OK, "as_init: %s", mm_strerror(err));
	} else {
		new_as(&x.as);
	}
	uint64_t B = 1ull << 30;   /* window [1G - 4M, 1G + 4M) */
	spec_init(&x.s, B - 2 * MB2, 4 * 512, A->mem_types);
	struct mm_status res = { .kind = MM_RESERVED, .prot = MM_PROT_R | MM_PROT_W };
	struct mm_status swp = { .kind = MM_SWAPPED, .dev = 3, .arg = 12345 };
	struct mm_status pgr = { .kind = MM_PAGER, .prot = MM_PROT_R, .arg = 99 };
	struct mm_status inv = { .kind = MM_INVALID };
	struct oop ops[] = {
		{ O_MAP, B + 5 * PG, 0, { 0 } },               /* new path of tables */
		{ O_MARK, B - 2 * MB2, 2 * MB2, res },          /* covers whole 2M blocks */
		{ O_MAP, B - MB2 + 7 * PG, 0, { 0 } },          /* split reserved 2M: a table */
		{ O_COW, B - MB2 + 9 * PG, 0, { 0 } },          /* COW: metadata where leaves lack bits */
		{ O_MARK, B - 3 * PG, 6 * PG, swp },            /* splits at both edges */
		{ O_MAPH, B + MB2, 0, { 0 } },                  /* huge page over reserved */
		{ O_PROT, B + MB2 + 9 * PG, PG, { 0 } },        /* protect splits the huge page */
		{ O_MKCOW, B + 5 * PG, PG, { 0 } },             /* COW of a mapped page */
		{ O_PROT, B - 2 * MB2 + 3 * PG, 2 * PG, { 0 } },/* protect splits a reserved 2M */
		{ O_UNMAP, B + MB2 + 3 * PG, 2 * PG, { 0 } },   /* split a mapped huge page */
		{ O_MARK, B - 2 * MB2 + 5 * PG, 3 * PG, pgr },
		{ O_UNMAP, B - 2 * MB2, 4 * MB2, { 0 } },       /* everything: frees tables */
		{ O_MARK, B - 2 * MB2 + 11 * PG, 2 * PG, inv },
	};
	for (unsigned i = 0; i < sizeof ops / sizeof *ops; i++)
		oom_op(&x, &ops[i]);
	printf("%s: %ld allocation points failed and recovered\n", charge_mode ? "charge" : "oom",
	       points);
	/* statuses in entries need no arrays: fewer points than tables + arrays */
	CHECK(points >= 6, "too few allocation points exercised (%ld)", points);
	spec_free(&x.s);
	end_as(&x.as);
	host_pool_enable(true);
}

/* ---- wide: make_cow over more leaf tables than one reservation holds ----
 * One mapped page in each of WIDE_TABLES leaf tables (2 MiB apart), mapped
 * straight onto invalid pages, so no table has a metadata array yet: COW
 * needs one array per table wherever a leaf's software bits cannot say
 * COW (sv48_split offers none). With the k-th
 * allocation failing, every failure leaves the tree and the frame counts
 * as they were; then it succeeds. Where the leaves can say it, make_cow
 * draws no frame at all. */
#define WIDE_TABLES 40
static void t_wide(void)
{
	struct ctx x;
	new_as(&x.as);
	host_pool_enable(false);
	uint64_t B = 1ull << 30;
	spec_init(&x.s, B, WIDE_TABLES * 512, A->mem_types);
	struct mm_cursor c;
	uint64_t len = WIDE_TABLES * MB2;
	CHECK(mm_lock(&c, &x.as, B, B + len) == MM_OK, "lock");
	for (unsigned i = 0; i < WIDE_TABLES; i++) {
		uint64_t va = B + i * MB2 + (i % 512) * PG, pa = host_frame_alloc(1);
		CHECK(mm_map(&c, va, pa, 1, MM_PROT_R | MM_PROT_W | MM_PROT_U, 0) == MM_OK, "map %u", i);
		spec_map(&x.s, va, pa, PG, MM_PROT_R | MM_PROT_W | MM_PROT_U, 0);
	}
	mm_release(&c);
	/* does a COW leaf fit in this table's leaf bits? */
	struct mm_status cw = { .kind = MM_COW, .prot = MM_PROT_R | MM_PROT_W | MM_PROT_U };
	uint64_t leaf = A->make_leaf(0x80000000ull, MM_PROT_R | MM_PROT_U, 1, 0);
	bool fits = A->leaf_status_encode && A->leaf_status_encode(mm_status_word(&cw), &leaf, 1);
	long k;
	for (k = 1;; k++) {
		host_rcu_barrier();
		size_t used = host_frames_used();
		uint64_t nr = x.as.nr_frames;
		CHECK(mm_lock(&c, &x.as, B, B + len) == MM_OK, "lock");
		host_fail_at(k);
		int err = mm_make_cow(&c, B, len);
		host_fail_off();
		if (err == MM_OK) {
			spec_make_cow(&x.s, B, len);
			mm_release(&c);
			break;
		}
		CHECK(err == MM_ENOMEM, "make_cow: %s", mm_strerror(err));
		CHECK(host_frames_used() == used && x.as.nr_frames == nr,
		      "failed make_cow at alloc %ld changed frame counts", k);
		mm_release(&c);
		check_wf(&x.as, "failed wide make_cow");
		check_window(&x.as, &x.s, "failed wide make_cow");
		if (fails)
			break;
	}
	if (fits)
		CHECK(k == 1, "make_cow drew %ld frames though the leaves hold COW", k - 1);
	else
		CHECK(k > WIDE_TABLES, "make_cow drew only %ld frames for %d tables", k - 1, WIDE_TABLES);
	check_wf(&x.as, "wide make_cow");
	check_window(&x.as, &x.s, "wide make_cow");
	host_pool_enable(true);
	spec_free(&x.s);
	end_as(&x.as);
}

/* ---- top: both halves end to end, from their first page to their last ---- */
static void t_top(void)
{
	uint64_t halves[2][2] = { { A->user_lo, A->user_last }, { A->kernel_lo, A->kernel_last } };
	unsigned prot = MM_PROT_R | MM_PROT_W;
	for (unsigned h = 0; h < 2; h++) {
		struct mm_as as;
		struct mm_cursor c;
		uint64_t lo = halves[h][0], last = halves[h][1];
		/* the page at 2^64 - 4K cannot be locked (cursor.h): stop below it */
		uint64_t end = last + 1 ? last + 1 : last + 1 - PG;
		uint64_t mid = lo + ((last - lo) >> 1) + 1, vas[3] = { lo, mid, (end - MB2) & ~(MB2 - 1) };
		int err = mm_as_init(&as, A, P, &host_plat, lo, last, NULL);
		CHECK(err == MM_OK, "as_init %#" PRIx64 "..%#" PRIx64 ": %s", lo, last, mm_strerror(err));
		if (err)
			continue;
		for (unsigned k = 0; k < 3; k++) {
			uint64_t pa = host_frame_alloc(2);
			CHECK(mm_lock(&c, &as, vas[k], vas[k] + MB2) == MM_OK, "lock %#" PRIx64, vas[k]);
			CHECK(mm_map(&c, vas[k], pa, 2, prot, 0) == MM_OK, "map 2M at %#" PRIx64, vas[k]);
			mm_release(&c);
		}
		check_wf(&as, "top: mapped");
		CHECK(mm_lock(&c, &as, lo, end) == MM_OK, "lock the half");
		CHECK(mm_protect(&c, lo + PG, end - lo - 2 * PG, MM_PROT_R) == MM_OK, "protect the half");
		struct mm_info in;
		CHECK(mm_query(&c, mid + PG, &in) == MM_OK && in.kind == MM_MAPPED && in.level == 2 &&
		      in.prot == MM_PROT_R, "2M page in the middle: kind %u level %u prot %#x", in.kind,
		      in.level, in.prot);
		CHECK(mm_unmap(&c, lo + PG, end - lo - PG) == MM_OK, "unmap all but the first page");
		CHECK(mm_query(&c, lo, &in) == MM_OK && in.kind == MM_MAPPED && in.level == 1,
		      "first page, split off");
		struct mm_status rs = { .kind = MM_RESERVED, .prot = MM_PROT_R };
		CHECK(mm_mark(&c, lo + PG, end - lo - PG, &rs) == MM_OK, "mark the half");
		CHECK(mm_unmap(&c, lo, end - lo) == MM_OK, "unmap the half");
		mm_release(&c);
		check_wf(&as, "top: cleared");
		CHECK(as.nr_frames == 1 + (host_plat.page_desc(as.root_pa)->meta_pa ? 1 : 0),
		      "PT pages left after clearing the half: %" PRIu64, as.nr_frames);
		end_as(&as);
	}
}

/* ---- huge: 1 GiB page split down by a 4 KiB unmap ---- */
static void t_huge(void)
{
	struct ctx x;
	new_as(&x.as);
	uint64_t G = 1ull << 30;
	if (!pt_leaf_ok(A, 3)) {
		printf("huge: %s has no 1 GiB leaves, skipped\n", A->name);
		end_as(&x.as);
		return;
	}
	spec_init(&x.s, G, G / PG, A->mem_types);
	uint64_t pa = host_frame_alloc(3);
	CHECK(pa != MM_NOFRAME, "no 1G frame");
	struct mm_cursor c;
	CHECK(mm_lock(&c, &x.as, G, 2 * G) == MM_OK, "lock 1G");
	CHECK(mm_map(&c, G, pa, 3, MM_PROT_R | MM_PROT_W | MM_PROT_U, 0) == MM_OK, "map 1G");
	spec_map(&x.s, G, pa, G, MM_PROT_R | MM_PROT_W | MM_PROT_U, 0);
	struct mm_info in;
	CHECK(mm_query(&c, G + 12345 * PG, &in) == MM_OK && in.level == 3 && in.pa == pa + 12345 * PG,
	      "1G query");
	mm_release(&c);
	uint64_t nr = x.as.nr_frames;
	uint64_t cut = G + 300 * MB2 + 17 * PG;
	CHECK(mm_lock(&c, &x.as, cut, cut + PG) == MM_OK, "lock cut");
	CHECK(mm_unmap(&c, cut, PG) == MM_OK, "unmap in 1G");
	spec_unmap(&x.s, cut, PG);
	mm_release(&c);
	CHECK(x.as.nr_frames >= nr + 2, "split did not add tables");
	check_wf(&x.as, "split 1G");
	check_window(&x.as, &x.s, "split 1G");
	CHECK(mm_lock(&c, &x.as, G, 2 * G) == MM_OK, "lock 1G");
	CHECK(mm_query(&c, G + 5 * PG, &in) == MM_OK && in.level == 2, "2M piece");
	CHECK(mm_query(&c, cut + PG, &in) == MM_OK && in.level == 1, "4K piece");
	CHECK(mm_unmap(&c, G, G) == MM_OK, "unmap 1G");
	spec_unmap(&x.s, G, G);
	mm_release(&c);
	check_wf(&x.as, "unmap 1G");
	/* every PT page under the unmapped range is gone: only the root is left */
	CHECK(x.as.nr_frames == 1, "empty PT pages left after unmap: %" PRIu64, x.as.nr_frames);
	spec_free(&x.s);
	end_as(&x.as);
}

static uint64_t *leaf_of(struct mm_as *as, uint64_t va, unsigned *level);

/* ---- kernel: direct map with huge pages, seal, shared kernel half ---- */
static void t_kernel(void)
{
	struct mm_as kas, uas;
	int err = mm_as_init(&kas, A, P, &host_plat, A->kernel_lo, A->kernel_last, NULL);
	CHECK(err == MM_OK, "kernel as: %s", mm_strerror(err));
	uint64_t pa = host_frame_alloc(3);
	CHECK(pa != MM_NOFRAME, "no 1G frame");
	/* direct map: [KB + 4K, KB + 4K + 6M) -> [pa + 4K, ...): 4K pages up to
	 * the first 2M boundary, then 2M pages, then 4K again. */
	uint64_t KB = A->kernel_lo + (1ull << 30), len = 3 * MB2 + 2 * PG;
	struct mm_cursor c;
	CHECK(mm_lock(&c, &kas, KB, KB + (1ull << 30)) == MM_OK, "lock kernel");
	err = mm_map_range(&c, KB + PG, pa + PG, len, MM_PROT_R | MM_PROT_W | MM_PROT_G);
	CHECK(err == MM_OK, "map_range: %s", mm_strerror(err));
	struct mm_info in;
	CHECK(mm_query(&c, KB + PG, &in) == MM_OK && in.kind == MM_MAPPED && in.level == 1 &&
	      in.pa == pa + PG && in.prot == (MM_PROT_R | MM_PROT_W | MM_PROT_G), "first 4K page");
	CHECK(mm_query(&c, KB + MB2 + 5 * PG, &in) == MM_OK && in.level == 2 && in.pa == pa + MB2 + 5 * PG,
	      "2M page");
	CHECK(mm_query(&c, KB + 3 * MB2 + PG, &in) == MM_OK && in.level == 1 && in.pa == pa + 3 * MB2 + PG,
	      "tail 4K page");
	CHECK(mm_query(&c, KB + 3 * MB2 + 3 * PG, &in) == MM_OK && in.kind == MM_INVALID, "past end");
	mm_release(&c);
	check_wf(&kas, "kernel map");
	CHECK(mm_as_kernel_seal(&kas) == MM_OK, "seal");
	check_wf(&kas, "seal");
	/* sealed: root entries cannot change, everything below can; with
	 * split roots every AS uses the kernel root itself: nothing to seal */
	CHECK(kas.sealed == !A->split_roots, "sealed: %d", kas.sealed);
	int sealed_err = A->split_roots ? MM_OK : MM_EINVAL;
	uint64_t rspan = 1ull << pt_shift(A, A->levels);
	uint64_t rlo = A->kernel_lo + (A->split_roots ? rspan : 0);   /* split: an empty entry */
	uint64_t nr = kas.nr_frames;
	CHECK(mm_lock(&c, &kas, rlo, rlo + rspan) == MM_OK, "lock root entry");
	CHECK(mm_unmap(&c, rlo, rspan) == sealed_err, "unmap of a sealed root entry");
	struct mm_status rs = { .kind = MM_RESERVED, .prot = MM_PROT_R };
	CHECK(mm_mark(&c, rlo, rspan, &rs) == sealed_err, "mark of a sealed root entry");
	CHECK(mm_map(&c, rlo, pa, A->levels, MM_PROT_R, 0) == MM_EINVAL || !pt_leaf_ok(A, A->levels),
	      "root leaf in a sealed AS");
	CHECK(mm_mark(&c, rlo + PG, PG, &rs) == MM_OK, "mark below a sealed root entry");
	CHECK(mm_unmap(&c, rlo + PG, PG) == MM_OK, "unmap below a sealed root entry");
	if (A->split_roots)
		CHECK(mm_unmap(&c, rlo, rspan) == MM_OK, "clear an unsealed root entry");
	mm_release(&c);
	/* split roots: the root itself may have got a status array */
	if (A->split_roots && host_plat.page_desc(kas.root_pa)->meta_pa)
		nr++;
	CHECK(kas.nr_frames == nr, "sealed root-level tables pruned or added (%" PRIu64 " -> %" PRIu64 ")",
	      nr, kas.nr_frames);
	check_wf(&kas, "sealed ops");
	new_as(&uas);
	mm_as_share_kernel(&uas, &kas);
	uint64_t *kr = host_plat.phys_to_virt(kas.root_pa), *ur = host_plat.phys_to_virt(uas.root_pa);
	for (unsigned i = pt_entries(A) / 2; i < pt_entries(A) && !A->split_roots; i++)
		CHECK(kr[i] == ur[i] && A->present(kr[i]), "root slot %u not shared", i);
	for (unsigned i = 0; i < pt_entries(A) && A->split_roots; i++)
		CHECK(!ur[i], "split roots: user root slot %u holds %#" PRIx64, i, ur[i]);
	/* a walk of the user AS reaches the direct map through the right root */
	unsigned lv;
	uint64_t *e = leaf_of(&uas, KB + MB2 + 5 * PG, &lv);
	CHECK(e && lv == 2 && A->addr(*e, 2) == pa + MB2, "direct map not reached from the user AS");
	CHECK(mm_as_root_pa_for(&uas, KB) == kas.root_pa || !A->split_roots, "kernel root of uas");
	CHECK(mm_as_root_pa_for(&kas, 0x10000) == 0 || !A->split_roots, "kas has no user root");
	/* a user mapping leaves the kernel half alone */
	uint64_t f = host_frame_alloc(1);
	CHECK(mm_lock(&c, &uas, 0x10000, 0x20000) == MM_OK, "lock user");
	CHECK(mm_map(&c, 0x10000, f, 1, MM_PROT_R | MM_PROT_U, 0) == MM_OK, "map user");
	mm_release(&c);
	check_wf(&uas, "user");
	check_wf(&kas, "kernel after user");
	mm_as_destroy(&uas);
	for (unsigned i = pt_entries(A) / 2; i < pt_entries(A) && !A->split_roots; i++)
		CHECK(A->present(kr[i]), "kernel slot %u lost", i);
	CHECK(leaf_of(&kas, KB + MB2, &lv) == e, "direct map lost with the user AS");
	/* give back the parts of the 1G frame the direct map did not take */
	for (uint64_t o = 0; o < (1ull << 30); o += PG)
		if (o < PG || o >= PG + len)
			host_frame_free(pa + o, 1);
	end_as(&kas);
}

/* ---- bbm: break-before-make, seen through the platform's hook ---- */
static struct mm_as *bbm_as;
static unsigned bbm_n, bbm_live;
static uint64_t bbm_start, bbm_end;

/* At the flush, no hardware walk may find a translation in the range. */
static void bbm_hook(struct mm_as *as, uint64_t start, uint64_t end)
{
	unsigned lv;
	bbm_n++;
	bbm_start = start;
	bbm_end = end;
	for (uint64_t va = start; va != end && as == bbm_as; va += PG)
		bbm_live += leaf_of(as, va, &lv) != NULL;
}

/* One transaction on [lo, lo + len): fn, then commit. want 0: it made no
 * BBM flush; 1: it made some, the last of them of [flo, flo + flen) (an
 * unmap that empties tables removes them, so the map after it breaks
 * their entries too). */
static void bbm_case(struct mm_as *as, uint64_t lo, uint64_t len, const char *what,
		     void (*fn)(struct mm_cursor *c, uint64_t lo), unsigned want, uint64_t flo,
		     uint64_t flen)
{
	struct mm_cursor c;
	bbm_n = bbm_live = 0;
	CHECK(mm_lock(&c, as, lo, lo + len) == MM_OK, "%s: lock", what);
	fn(&c, lo);
	mm_release(&c);
	CHECK(want ? bbm_n >= 1 : bbm_n == 0, "%s: %u break-before-make flushes, want %s", what,
	      bbm_n, want ? "some" : "none");
	CHECK(!want || (bbm_start == flo && bbm_end == flo + flen),
	      "%s: flushed [%#" PRIx64 ", %#" PRIx64 "), want [%#" PRIx64 ", %#" PRIx64 ")", what,
	      bbm_start, bbm_end, flo, flo + flen);
	CHECK(!bbm_live, "%s: %u pages still translated when flushed", what, bbm_live);
	check_wf(as, what);
}

static const unsigned bbm_prot = MM_PROT_R | MM_PROT_W | MM_PROT_U;
static void bbm_map2m(struct mm_cursor *c, uint64_t lo)
{
	CHECK(mm_map(c, lo, host_frame_alloc(2), 2, bbm_prot, 0) == MM_OK, "map 2M");
}
static void bbm_cut4k(struct mm_cursor *c, uint64_t lo)
{
	CHECK(mm_unmap(c, lo + 7 * PG, PG) == MM_OK, "unmap 4K in 2M");
}
static void bbm_unmap2m(struct mm_cursor *c, uint64_t lo)
{
	CHECK(mm_unmap(c, lo, MB2) == MM_OK, "unmap 2M");
}
static void bbm_reserve4k(struct mm_cursor *c, uint64_t lo)
{
	struct mm_status rs = { .kind = MM_RESERVED, .prot = bbm_prot };
	CHECK(mm_mark(c, lo + PG, PG, &rs) == MM_OK, "reserve 4K");
}
static void bbm_remap4k(struct mm_cursor *c, uint64_t lo)
{
	CHECK(mm_map(c, lo, host_frame_alloc(1), 1, bbm_prot, 0) == MM_OK, "map 4K");
	CHECK(mm_unmap(c, lo, PG) == MM_OK, "unmap 4K");
	CHECK(mm_map(c, lo, host_frame_alloc(1), 1, bbm_prot, 0) == MM_OK, "map 4K again");
}

static void t_bbm(void)
{
	struct ctx x;
	new_as(&x.as);
	bbm_as = &x.as;
	host_tlb_bbm_hook = bbm_hook;
	unsigned b = A->needs_bbm ? 1 : 0;
	uint64_t B = 1ull << 30;
	/* a 4 KiB unmap inside a live 2 MiB block: the block goes, then the table */
	bbm_case(&x.as, B, MB2, "map 2M", bbm_map2m, 0, 0, 0);
	bbm_case(&x.as, B, MB2, "split 2M", bbm_cut4k, b, B, MB2);
	/* a 2 MiB map over a table that holds only a status */
	bbm_case(&x.as, B, MB2, "unmap 2M", bbm_unmap2m, 0, 0, 0);
	bbm_case(&x.as, B, MB2, "reserve 4K", bbm_reserve4k, 0, 0, 0);
	/* the baseline keeps statuses elsewhere: no table there */
	uint64_t e = 0, t = mm_as_root_pa(&x.as);
	for (unsigned L = A->levels; L >= 2 && (L == A->levels || A->present(e)); L--)
		t = A->addr(e = ((uint64_t *)host_plat.phys_to_virt(t))[pt_index(A, B, L)], L);
	CHECK(A->present(e) == !P->query && (!A->present(e) || !A->is_leaf(e, 2)),
	      "status in a table: %#" PRIx64, e);
	bbm_case(&x.as, B, MB2, "2M over a table", bbm_map2m, P->query ? 0 : b, B, MB2);
	/* an unmap and a map of another frame in one transaction */
	bbm_case(&x.as, B, MB2, "unmap 2M", bbm_unmap2m, 0, 0, 0);
	bbm_case(&x.as, B + MB2, PG, "remap 4K", bbm_remap4k, b, B + MB2, PG);
	host_tlb_bbm_hook = NULL;
	end_as(&x.as);
	printf("bbm: %s needs %sbreak-before-make\n", A->name, b ? "" : "no ");
}

/* ---- pager: protect, make_cow, age, take, next_used ---- */

/* White-box: the leaf entry holding va, walked as the hardware would from
 * the root that translates it (the test pokes A/D bits the way the
 * hardware would). NULL if none. */
static uint64_t *leaf_of(struct mm_as *as, uint64_t va, unsigned *level)
{
	uint64_t pa = mm_as_root_pa_for(as, va);
	for (unsigned L = A->levels; L >= 1; L--) {
		uint64_t *e = (uint64_t *)host_plat.phys_to_virt(pa) + pt_index(A, va, L);
		if (!A->present(*e))
			return NULL;
		if (A->is_leaf(*e, L)) {
			*level = L;
			return e;
		}
		pa = A->addr(*e, L);
	}
	return NULL;
}

/* The A and D bits of this arch's 4 KiB leaves, found through its decoders. */
static uint64_t ad_bit(bool dirty)
{
	for (unsigned b = 0; b < 64; b++)
		if (dirty ? A->dirty(1ull << b, 1) : A->accessed(1ull << b, 1))
			return 1ull << b;
	return 0;
}

static void t_pager(void)
{
	struct ctx x;
	new_as(&x.as);
	uint64_t B = win_base();    /* 2048 pages around 1 GiB */
	spec_init(&x.s, B, WIN_PAGES, A->mem_types);
	struct mm_cursor c;
	struct mm_info in;
	const unsigned RW = MM_PROT_R | MM_PROT_W, U = MM_PROT_U;
	uint64_t Abit = ad_bit(false), Dbit = ad_bit(true);
	CHECK(Abit && Dbit, "arch has no A/D bits");

	/* Populate: 4 mapped pages, a COW page, reserved, pager, swapped, a 2M leaf. */
	CHECK(mm_lock(&c, &x.as, B, B + WIN_PAGES * PG) == MM_OK, "lock");
	uint64_t pa[4];
	for (int i = 0; i < 4; i++) {
		pa[i] = host_frame_alloc(1);
		CHECK(mm_map(&c, B + i * PG, pa[i], 1, RW | U, 0) == MM_OK, "map %d", i);
		spec_map(&x.s, B + i * PG, pa[i], PG, RW | U, 0);
	}
	uint64_t cpa = host_frame_alloc(1);
	CHECK(mm_map(&c, B + 4 * PG, cpa, 1, RW | U, MM_MAP_COW) == MM_OK, "map cow");
	spec_map(&x.s, B + 4 * PG, cpa, PG, RW | U, MM_MAP_COW);
	struct mm_status rs = { .kind = MM_RESERVED, .prot = RW };
	struct mm_status ps = { .kind = MM_PAGER, .prot = MM_PROT_R, .arg = 1234 };
	struct mm_status ss = { .kind = MM_SWAPPED, .arg = 77 };
	CHECK(mm_mark(&c, B + 8 * PG, 8 * PG, &rs) == MM_OK, "mark reserved");
	spec_mark(&x.s, B + 8 * PG, 8 * PG, &rs);
	CHECK(mm_mark(&c, B + 16 * PG, 4 * PG, &ps) == MM_OK, "mark pager");
	spec_mark(&x.s, B + 16 * PG, 4 * PG, &ps);
	CHECK(mm_mark(&c, B + 20 * PG, 4 * PG, &ss) == MM_OK, "mark swapped");
	spec_mark(&x.s, B + 20 * PG, 4 * PG, &ss);
	uint64_t hb = (B + MB2) & ~(MB2 - 1), hpa = host_frame_alloc(2);
	CHECK(mm_map(&c, hb, hpa, 2, RW | U, 0) == MM_OK, "map huge");
	spec_map(&x.s, hb, hpa, MB2, RW | U, 0);
	mm_release(&c);
	check_window(&x.as, &x.s, "pager setup");

	/* protect: everything in [B, B+24 pages) and 2 pages of the huge leaf
	 * to R; swapped untouched; the huge leaf is split; flushed. */
	unsigned long fl = host_tlb_flushes();
	CHECK(mm_lock(&c, &x.as, B, B + WIN_PAGES * PG) == MM_OK, "lock");
	CHECK(mm_protect(&c, B, 24 * PG, MM_PROT_R) == MM_OK, "protect");
	spec_protect(&x.s, B, 24 * PG, MM_PROT_R);
	CHECK(mm_protect(&c, hb + 5 * PG, 2 * PG, MM_PROT_R | MM_PROT_X) == MM_OK, "protect in huge");
	spec_protect(&x.s, hb + 5 * PG, 2 * PG, MM_PROT_R | MM_PROT_X);
	CHECK(mm_query(&c, hb + 5 * PG, &in) == MM_OK && in.level == 1, "huge leaf not split");
	CHECK(mm_query(&c, hb + 100 * PG, &in) == MM_OK && in.level == 1 && in.prot == (RW | U),
	      "rest of the huge leaf changed");
	mm_release(&c);
	CHECK(host_tlb_flushes() > fl, "protect downgrade not flushed");
	check_wf(&x.as, "protect");
	check_window(&x.as, &x.s, "protect");
	/* COW stays COW, read-only in hardware, logical prot R now */
	unsigned lv;
	uint64_t *e = leaf_of(&x.as, B + 4 * PG, &lv);
	CHECK(e && !(A->prot(*e, lv) & MM_PROT_W), "COW leaf writable");
	/* upgrade back to RW: mapped pages become writable, A/D kept */
	e = leaf_of(&x.as, B, &lv);
	*e |= Abit | Dbit;
	CHECK(mm_lock(&c, &x.as, B, B + 24 * PG) == MM_OK, "lock");
	CHECK(mm_protect(&c, B, 24 * PG, RW) == MM_OK, "protect RW");
	spec_protect(&x.s, B, 24 * PG, RW);
	mm_release(&c);
	e = leaf_of(&x.as, B, &lv);
	CHECK(e && (A->prot(*e, lv) & MM_PROT_W) && (*e & Abit) && (*e & Dbit), "RW leaf / A/D lost");
	e = leaf_of(&x.as, B + 4 * PG, &lv);
	CHECK(e && !(A->prot(*e, lv) & MM_PROT_W), "COW leaf made writable by protect");
	check_window(&x.as, &x.s, "protect RW");

	/* make_cow: mapped pages become COW (logical RW), hardware read-only */
	CHECK(mm_lock(&c, &x.as, B, B + 8 * PG) == MM_OK, "lock");
	CHECK(mm_make_cow(&c, B + PG, 2 * PG) == MM_OK, "make_cow");
	spec_make_cow(&x.s, B + PG, 2 * PG);
	CHECK(mm_query(&c, B + PG, &in) == MM_OK && in.kind == MM_COW && in.prot == (RW | U) &&
	      in.pa == pa[1], "make_cow query");
	mm_release(&c);
	e = leaf_of(&x.as, B + PG, &lv);
	CHECK(e && !(A->prot(*e, lv) & MM_PROT_W), "made-COW leaf writable");
	check_wf(&x.as, "make_cow");
	check_window(&x.as, &x.s, "make_cow");

	/* unshare: COW back to a plain writable mapping of the same frame */
	CHECK(mm_lock(&c, &x.as, B, B + 8 * PG) == MM_OK, "lock");
	CHECK(mm_unshare(&c, B + 2 * PG, PG) == MM_OK, "unshare");
	spec_unshare(&x.s, B + 2 * PG, PG);
	CHECK(mm_query(&c, B + 2 * PG, &in) == MM_OK && in.kind == MM_MAPPED && in.prot == (RW | U) &&
	      in.pa == pa[2], "unshare query");
	CHECK(mm_unshare(&c, B + 8, PG) == MM_EALIGN, "unshare unaligned");
	mm_release(&c);
	check_wf(&x.as, "unshare");
	check_window(&x.as, &x.s, "unshare");

	/* age: reports A, clears it, keeps D; flushes only when A was set */
	e = leaf_of(&x.as, B + 3 * PG, &lv);
	*e |= Abit | Dbit;
	fl = host_tlb_flushes();
	CHECK(mm_lock(&c, &x.as, B, B + 8 * PG) == MM_OK, "lock");
	CHECK(mm_age(&c, B + 3 * PG, &in) == MM_OK && in.accessed && in.dirty, "age: A/D not seen");
	CHECK(mm_age(&c, B + 3 * PG, &in) == MM_OK && !in.accessed && in.dirty, "age: A not cleared");
	mm_release(&c);
	CHECK(host_tlb_flushes() == fl + 1, "age flushes %lu, want 1", host_tlb_flushes() - fl);
	fl = host_tlb_flushes();
	CHECK(mm_lock(&c, &x.as, B, B + 16 * PG) == MM_OK, "lock");
	CHECK(mm_age(&c, B + 3 * PG, &in) == MM_OK && !in.accessed, "age again");
	CHECK(mm_age(&c, B + 10 * PG, &in) == MM_OK && in.kind == MM_RESERVED, "age of reserved");
	mm_release(&c);
	CHECK(host_tlb_flushes() == fl, "age of a clear A flushed");

	/* take: the frame is handed over (not released), D reported */
	size_t used = host_frames_used();
	CHECK(mm_lock(&c, &x.as, B, B + 8 * PG) == MM_OK, "lock");
	CHECK(mm_take(&c, B + 3 * PG, &in) == MM_OK && in.pa == pa[3] && in.dirty && in.kind == MM_MAPPED,
	      "take");
	spec_unmap(&x.s, B + 3 * PG, PG);
	mm_release(&c);
	host_rcu_barrier();
	CHECK(host_frames_used() == used, "take released the frame");
	host_frame_free(pa[3], 1);
	check_wf(&x.as, "take");
	check_window(&x.as, &x.s, "take");

	/* next_used: walks [B+4, ...) over the used pieces, skipping empties */
	CHECK(mm_lock(&c, &x.as, B, B + WIN_PAGES * PG) == MM_OK, "lock");
	uint64_t nx = 0, sk = 0;
	CHECK(mm_next_used(&c, B + 3 * PG, &nx, &sk) == 1 && nx == B + 4 * PG, "next after taken page");
	CHECK(mm_next_used(&c, B + 24 * PG, &nx, &sk) == 1 && nx == hb, "next is the old huge leaf");
	CHECK(mm_next_used(&c, hb + MB2, &nx, &sk) == 0, "nothing after the huge range");
	CHECK(sk > 0, "no empty subtree skipped");
	mm_release(&c);

	/* bad input: each error, nothing changed */
	host_rcu_barrier();
	used = host_frames_used();
	uint64_t nr = x.as.nr_frames;
	fl = host_tlb_flushes();
	CHECK(mm_lock(&c, &x.as, B, B + 32 * PG) == MM_OK, "lock");
	CHECK(mm_protect(&c, B + 8, PG, MM_PROT_R) == MM_EALIGN, "protect unaligned");
	CHECK(mm_protect(&c, B, 0, MM_PROT_R) == MM_ERANGE, "protect empty");
	CHECK(mm_protect(&c, B, 64 * PG, MM_PROT_R) == MM_ENOTLOCKED, "protect past lock");
	CHECK(mm_protect(&c, B, PG, MM_PROT_W) == MM_EPROT, "protect without R");
	CHECK(mm_protect(&c, B, PG, MM_PROT_R | MM_PROT_U) == MM_EPROT, "protect with U");
	CHECK(mm_make_cow(&c, B + 8, PG) == MM_EALIGN, "make_cow unaligned");
	CHECK(mm_make_cow(&c, B, 0) == MM_ERANGE, "make_cow empty");
	CHECK(mm_make_cow(&c, B - PG, 2 * PG) == MM_ENOTLOCKED, "make_cow before lock");
	CHECK(mm_age(&c, B + 32 * PG, &in) == MM_ENOTLOCKED, "age past lock");
	CHECK(mm_take(&c, B + 8, &in) == MM_EALIGN, "take unaligned");
	CHECK(mm_take(&c, B + 32 * PG, &in) == MM_ENOTLOCKED, "take past lock");
	CHECK(mm_take(&c, B + 10 * PG, &in) == MM_EINVAL, "take of reserved");
	CHECK(mm_take(&c, B + 3 * PG, &in) == MM_EINVAL, "take of invalid");
	CHECK(mm_take(&c, B + 4 * PG, &in) == MM_EINVAL, "take of COW");
	CHECK(mm_next_used(&c, B + 8, &nx, NULL) == MM_EALIGN, "next_used unaligned");
	CHECK(mm_next_used(&c, B + 32 * PG, &nx, NULL) == MM_ENOTLOCKED, "next_used past lock");
	mm_release(&c);
	/* a huge leaf cannot be taken */
	uint64_t h2 = hb + 4 * MB2;
	if (h2 + MB2 <= B + WIN_PAGES * PG) {
		uint64_t h2pa = host_frame_alloc(2);
		CHECK(mm_lock(&c, &x.as, h2, h2 + MB2) == MM_OK, "lock");
		CHECK(mm_map(&c, h2, h2pa, 2, RW, 0) == MM_OK, "map huge 2");
		spec_map(&x.s, h2, h2pa, MB2, RW, 0);
		mm_release(&c);
		host_rcu_barrier();
		used = host_frames_used();
		nr = x.as.nr_frames;
		fl = host_tlb_flushes();
		CHECK(mm_lock(&c, &x.as, h2, h2 + MB2) == MM_OK, "lock");
		CHECK(mm_take(&c, h2 + PG, &in) == MM_EHUGE, "take of a huge leaf");
		mm_release(&c);
	}
	host_rcu_barrier();
	CHECK(host_frames_used() == used && x.as.nr_frames == nr, "bad pager ops changed frames");
	CHECK(host_tlb_flushes() == fl, "bad pager ops flushed");
	check_wf(&x.as, "bad pager ops");
	check_window(&x.as, &x.s, "bad pager ops");
	spec_free(&x.s);
	end_as(&x.as);
}

/* ---- lockoom: a lock that runs out of frames while it adds the tables
 * on its path takes them away again ----
 * Four-page window at 1 GiB + 2 MiB; a one-page lock there first over
 * empty space, then inside a reserved 1 GiB, with the k-th allocation
 * failing, k = 1, 2, ... until it succeeds: after each failure the frame
 * counts, the tree (well-formed) and every status are as before. */
static void t_lockoom(void)
{
	struct ctx x;
	new_as(&x.as);
	host_pool_enable(false);
	uint64_t G = 1ull << 30, W = G + MB2;
	spec_init(&x.s, W, 4, A->mem_types);
	struct mm_status res = { .kind = MM_RESERVED, .prot = MM_PROT_R | MM_PROT_W, .arg = 0 };
	long failed = 0;
	for (int round = 0; round < 2; round++) {
		struct mm_cursor c;
		if (round == 1) {   /* a status high up: every table on the path splits it */
			CHECK(mm_lock(&c, &x.as, G, 2 * G) == MM_OK, "lock 1G");
			CHECK(mm_mark(&c, G, G, &res) == MM_OK, "mark 1G reserved");
			spec_mark(&x.s, W, 4 * PG, &res);
			mm_release(&c);
		}
		for (long k = 1;; k++) {
			host_rcu_barrier();
			size_t used = host_frames_used();
			uint64_t nr = x.as.nr_frames;
			host_fail_at(k);
			int err = mm_lock(&c, &x.as, W + 2 * PG, W + 3 * PG);
			host_fail_off();
			if (err == MM_OK) {
				mm_release(&c);
				break;
			}
			CHECK(err == MM_ENOMEM, "lock: %s", mm_strerror(err));
			failed++;
			host_rcu_barrier();
			CHECK(host_frames_used() == used && x.as.nr_frames == nr,
			      "round %d: failed lock at alloc %ld left frames: %zu -> %zu, PT %" PRIu64
			      " -> %" PRIu64, round, k, used, host_frames_used(), nr, x.as.nr_frames);
			check_wf(&x.as, "failed lock");
			check_window(&x.as, &x.s, "failed lock");
			if (fails)
				break;
		}
	}
	printf("lockoom: %ld failed locks undone\n", failed);
	/* rw adds no table when it locks; nor does the baseline's one-page
	 * lock (the operation that needs one makes it, as Linux's fault does),
	 * so its lock cannot run out of memory. */
	if (P == &mm_proto_vma)
		CHECK(failed == 0, "vma: a one-page lock allocated (%ld failures)", failed);
	else
		CHECK(P == &mm_proto_rw || failed >= 3, "too few failing locks (%ld)", failed);
	spec_free(&x.s);
	end_as(&x.as);
	host_pool_enable(true);
}

/* ---- maprange: mm_map_range failing half way changes nothing ----
 * Statuses first: a reserved 2 MiB block (one entry), pager and swapped
 * pages, a reserved run with other permissions. A map_range over all of
 * them (a 2 MiB page, then 4 KiB pages in a part of the tree with no
 * tables yet) runs with the k-th allocation failing until it succeeds;
 * then one that meets a mapped page (MM_EEXIST) after its 2 MiB piece.
 * After each failure: frame counts, tree and every status as before. */
static void maprange_try(struct ctx *x, uint64_t va, uint64_t pa, uint64_t len, long k, int *errp)
{
	struct mm_cursor c;
	uint64_t lo = va & ~(MB2 - 1), hi = (va + len + MB2 - 1) & ~(MB2 - 1);
	host_rcu_barrier();
	size_t used = host_frames_used();
	uint64_t nr = x->as.nr_frames;
	CHECK(mm_lock(&c, &x->as, lo, hi) == MM_OK, "lock");
	if (k)
		host_fail_at(k);
	int err = mm_map_range(&c, va, pa, len, MM_PROT_R | MM_PROT_W);
	host_fail_off();
	*errp = err;
	if (err == MM_OK) {
		spec_map(&x->s, va, pa, len, MM_PROT_R | MM_PROT_W, 0);
		mm_release(&c);
		check_wf(&x->as, "map_range");
		check_window(&x->as, &x->s, "map_range");
		return;
	}
	mm_release(&c);
	host_rcu_barrier();
	CHECK(host_frames_used() == used && x->as.nr_frames == nr,
	      "failed map_range (%s, alloc %ld) changed frame counts: %zu -> %zu, PT %" PRIu64
	      " -> %" PRIu64, mm_strerror(err), k, used, host_frames_used(), nr, x->as.nr_frames);
	check_wf(&x->as, "failed map_range");
	check_window(&x->as, &x->s, "failed map_range");
}

static void t_maprange(void)
{
	struct ctx x;
	new_as(&x.as);
	host_pool_enable(false);
	uint64_t B = 1ull << 30;   /* window [1G - 4M, 1G + 4M) */
	spec_init(&x.s, B - 2 * MB2, 4 * 512, A->mem_types);
	struct mm_status res = { .kind = MM_RESERVED, .prot = MM_PROT_R | MM_PROT_W };
	struct mm_status rx = { .kind = MM_RESERVED, .prot = MM_PROT_R | MM_PROT_X | MM_PROT_U };
	struct mm_status pgr = { .kind = MM_PAGER, .prot = MM_PROT_R, .arg = 4242 };
	struct mm_status swp = { .kind = MM_SWAPPED, .dev = 3, .arg = 12345 };
	/* [va, va + len): 8 pager / swapped pages, a 2 MiB reserved block (one
	 * 2 MiB piece), then 24 pages of a reserved 1 GiB block recorded in
	 * one entry (their 4 KiB pieces need two new tables and arrays) */
	uint64_t va = B - MB2 - 8 * PG, len = MB2 + 32 * PG;
	uint64_t P = host_frame_alloc(3), pa = P + MB2 - 8 * PG;
	CHECK(P != MM_NOFRAME, "no 1G frame");
	struct mm_cursor c;
	int err;
	for (int round = 0; round < 2 && !fails; round++) {
		CHECK(mm_lock(&c, &x.as, B - 2 * MB2, 2 * B) == MM_OK, "lock");
		const struct { uint64_t va, len; const struct mm_status *st; } marks[] = {
			{ va, 4 * PG, &pgr }, { va + 4 * PG, 4 * PG, &swp },
			{ B - MB2, MB2, &res }, { B, B, &rx },
		};
		for (unsigned i = 0; i < 4; i++) {
			CHECK(mm_mark(&c, marks[i].va, marks[i].len, marks[i].st) == MM_OK, "mark %u", i);
			spec_mark(&x.s, marks[i].va, i == 3 ? 2 * MB2 : marks[i].len, marks[i].st);
		}
		mm_release(&c);
		if (round == 1) {
			/* a mapped page among the last pieces: MM_EEXIST */
			uint64_t f = host_frame_alloc(1);
			CHECK(mm_lock(&c, &x.as, B, B + MB2) == MM_OK, "lock");
			CHECK(mm_map(&c, B + 22 * PG, f, 1, MM_PROT_R, 0) == MM_OK, "map blocker");
			spec_map(&x.s, B + 22 * PG, f, PG, MM_PROT_R, 0);
			mm_release(&c);
			maprange_try(&x, va, pa, len, 0, &err);
			CHECK(err == MM_EEXIST, "map_range over a mapped page: %s", mm_strerror(err));
			break;
		}
		/* out of memory at each allocation in turn */
		long k;
		for (k = 1; !fails; k++) {
			maprange_try(&x, va, pa, len, k, &err);
			if (err == MM_OK)
				break;
			CHECK(err == MM_ENOMEM, "map_range: %s", mm_strerror(err));
		}
		printf("maprange: %ld allocation points failed and recovered\n", k - 1);
		CHECK(k > 1, "map_range never ran out of memory");
		CHECK(mm_lock(&c, &x.as, B - 2 * MB2, B + MB2) == MM_OK, "lock");
		CHECK(mm_unmap(&c, va, len) == MM_OK, "unmap");   /* releases [pa, pa + len) */
		spec_unmap(&x.s, va, len);
		mm_release(&c);
	}
	for (uint64_t o = 0; o < (1ull << 30); o += PG)
		if (P + o < pa || P + o >= pa + len)
			host_frame_free(P + o, 1);
	CHECK(mm_lock(&c, &x.as, B, 2 * B) == MM_OK, "lock");
	CHECK(mm_unmap(&c, B, B) == MM_OK, "unmap blocker");
	spec_unmap(&x.s, B, 2 * MB2);
	mm_release(&c);
	spec_free(&x.s);
	end_as(&x.as);
	host_pool_enable(true);
}

/* ---- touch: accessed/dirty bits set by software, and by faults ---- */

/* What a kernel fault handler does about A/D (kernel/mk/uvm.c): a leaf a
 * fault makes gets A, and D on a write (MM_MAP_ACCESSED/DIRTY); a fault on
 * a mapped page, where the table leaves A/D to software (hw_ad false), is
 * the first access or write through the leaf and is recorded by mm_touch.
 * MM_OK or the core's error. */
static int sim_fault(struct mm_as *as, uint64_t va, bool write)
{
	struct mm_cursor c;
	struct mm_info in;
	int err = mm_lock(&c, as, va, va + PG);
	if (err)
		return err;
	mm_query(&c, va, &in);
	if (in.kind == MM_RESERVED) {
		uint64_t pa = host_frame_alloc(1);
		err = mm_map(&c, va, pa, 1, in.prot, write ? MM_MAP_DIRTY : MM_MAP_ACCESSED);
		if (err)
			host_frame_free(pa, 1);
	} else if (in.kind == MM_MAPPED && !A->hw_ad) {
		err = mm_touch(&c, va, write);
	}
	mm_release(&c);
	return err;
}

/* A and D as a query reports them, at va. */
static void ad_at(struct mm_as *as, uint64_t va, bool *a, bool *d, unsigned *level)
{
	struct mm_cursor c;
	struct mm_info in = { 0 };
	CHECK(mm_lock(&c, as, va, va + PG) == MM_OK, "lock");
	CHECK(mm_query(&c, va, &in) == MM_OK, "query");
	mm_release(&c);
	*a = in.accessed, *d = in.dirty, *level = in.level;
}

static void t_touch(void)
{
	struct ctx x;
	new_as(&x.as);
	uint64_t B = 1ull << 30, hb = B + MB2;
	const unsigned RW = MM_PROT_R | MM_PROT_W | MM_PROT_U;
	struct mm_cursor c;
	bool a, d;
	unsigned lv;

	/* 4 reserved pages, a read-only page, a COW page, a 2 MiB leaf: all
	 * made without A/D. */
	CHECK(mm_lock(&c, &x.as, B, B + 2 * MB2) == MM_OK, "lock");
	struct mm_status rs = { .kind = MM_RESERVED, .prot = RW };
	CHECK(mm_mark(&c, B, 4 * PG, &rs) == MM_OK, "mark");
	uint64_t ro = host_frame_alloc(1), cw = host_frame_alloc(1), hp = host_frame_alloc(2);
	CHECK(mm_map(&c, B + 4 * PG, ro, 1, MM_PROT_R | MM_PROT_U, 0) == MM_OK, "map ro");
	CHECK(mm_map(&c, B + 5 * PG, cw, 1, RW, MM_MAP_COW) == MM_OK, "map cow");
	CHECK(mm_map(&c, hb, hp, 2, RW, 0) == MM_OK, "map huge");
	mm_release(&c);
	ad_at(&x.as, B + 4 * PG, &a, &d, &lv);
	CHECK(!a && !d, "fresh leaf has A %d D %d", a, d);

	/* Faults on reserved pages make leaves that already record them. */
	CHECK(sim_fault(&x.as, B, false) == MM_OK, "read fault");
	ad_at(&x.as, B, &a, &d, &lv);
	CHECK(a && !d, "read-fault leaf: A %d D %d, want 1 0", a, d);
	CHECK(sim_fault(&x.as, B + PG, true) == MM_OK, "write fault");
	ad_at(&x.as, B + PG, &a, &d, &lv);
	CHECK(a && d, "write-fault leaf: A %d D %d, want 1 1", a, d);

	/* Software A/D: the next write through the read-faulted leaf faults
	 * and sets D; a read through an untouched leaf sets A only. */
	if (!A->hw_ad) {
		CHECK(sim_fault(&x.as, B, true) == MM_OK, "write after read");
		ad_at(&x.as, B, &a, &d, &lv);
		CHECK(a && d, "write fault on a clean leaf: A %d D %d", a, d);
		CHECK(sim_fault(&x.as, B + 4 * PG, false) == MM_OK, "first read");
		ad_at(&x.as, B + 4 * PG, &a, &d, &lv);
		CHECK(a && !d, "first read of a mapped leaf: A %d D %d", a, d);
		CHECK(sim_fault(&x.as, B + 4 * PG, true) == MM_EPROT, "write to read-only");
	}

	/* mm_touch itself, on every table: the whole huge leaf, no split;
	 * flushed only when the entry changed; COW and read-only refuse a
	 * write (that is a protection fault, not a dirty update). */
	unsigned long fl = host_tlb_flushes();
	CHECK(mm_lock(&c, &x.as, B, B + 2 * MB2) == MM_OK, "lock");
	CHECK(mm_touch(&c, hb + 300 * PG, false) == MM_OK, "touch huge");
	mm_release(&c);
	CHECK(host_tlb_flushes() == fl + 1, "touch that set A flushed %lu times",
	      host_tlb_flushes() - fl);
	ad_at(&x.as, hb + 7 * PG, &a, &d, &lv);
	CHECK(a && !d && lv == 2, "huge leaf after touch: A %d D %d level %u", a, d, lv);
	fl = host_tlb_flushes();
	CHECK(mm_lock(&c, &x.as, B, B + 2 * MB2) == MM_OK, "lock");
	CHECK(mm_touch(&c, hb, false) == MM_OK, "touch again");
	CHECK(mm_touch(&c, B + 5 * PG, true) == MM_EPROT, "write touch of COW");
	CHECK(mm_touch(&c, B + 4 * PG, true) == MM_EPROT, "write touch of read-only");
	mm_release(&c);
	CHECK(host_tlb_flushes() == fl, "touch that changed nothing flushed");
	CHECK(mm_lock(&c, &x.as, B, B + 2 * MB2) == MM_OK, "lock");
	CHECK(mm_touch(&c, B + 5 * PG, false) == MM_OK, "read touch of COW");
	CHECK(mm_touch(&c, hb + 511 * PG, true) == MM_OK, "write touch of huge");
	mm_release(&c);
	ad_at(&x.as, B + 5 * PG, &a, &d, &lv);
	CHECK(a && !d, "COW after read touch: A %d D %d", a, d);
	ad_at(&x.as, hb, &a, &d, &lv);
	CHECK(a && d && lv == 2, "huge leaf after write touch: A %d D %d", a, d);

	/* A/D set in software survive what rewrites the leaf: protect keeps
	 * them, make_cow keeps them, a split gives them to every piece. */
	CHECK(mm_lock(&c, &x.as, B, B + 2 * MB2) == MM_OK, "lock");
	CHECK(mm_protect(&c, hb + 9 * PG, PG, MM_PROT_R) == MM_OK, "protect in huge");
	CHECK(mm_make_cow(&c, B + PG, PG) == MM_OK, "make_cow");
	mm_release(&c);
	ad_at(&x.as, hb + 9 * PG, &a, &d, &lv);
	CHECK(a && d && lv == 1, "protected piece: A %d D %d level %u", a, d, lv);
	ad_at(&x.as, hb + 100 * PG, &a, &d, &lv);
	CHECK(a && d && lv == 1, "other piece: A %d D %d level %u", a, d, lv);
	ad_at(&x.as, B + PG, &a, &d, &lv);
	CHECK(a && d, "made-COW leaf: A %d D %d", a, d);
	check_wf(&x.as, "touch");
	CHECK(mm_lock(&c, &x.as, B, B + 2 * MB2) == MM_OK, "lock");
	CHECK(mm_unmap(&c, B, 2 * MB2) == MM_OK, "unmap");
	mm_release(&c);
	end_as(&x.as);
}

/* ---- leaves: mm_leaves against the spec and per-page queries; mm_clean ----
 *
 * A 4 MiB window gets random 4 KiB and 2 MiB mappings (with random A/D
 * bits), COW, reservations, unmaps, touches and cleans. After each step a
 * random subrange is walked with mm_leaves: the leaves come in address
 * order without overlap, cover exactly the pages the spec holds mapped or
 * COW, and carry the kind, level and A/D bits a query of each page
 * reports. A clean must leave every page of its range clean, every other
 * bit and status as it was, report dirt iff there was some, take no more
 * frames than its dry run said, and flush only when it changed a leaf. */

#define LV_PAGES 1024u

struct lv_seen {
	uint64_t lo;
	uint64_t next;          /* first page not yet covered */
	uint8_t kind[LV_PAGES];
	uint8_t level[LV_PAGES];
	bool a[LV_PAGES], d[LV_PAGES];
	int bad;
};

static void lv_collect(void *arg, const struct mm_leaf *l)
{
	struct lv_seen *v = arg;
	if (l->lo < v->next || l->last < l->lo || ((l->last + 1) & (PG - 1)) || (l->lo & (PG - 1))) {
		v->bad++;
		return;
	}
	for (uint64_t va = l->lo; va <= l->last; va += PG) {
		size_t i = (va - v->lo) / PG;
		v->kind[i] = l->kind, v->level[i] = (uint8_t)l->level, v->a[i] = l->accessed,
		v->d[i] = l->dirty;
	}
	v->next = l->last + 1;
}

/* Per-page query of the whole window. */
static void lv_snap(struct mm_cursor *c, uint64_t B, struct mm_info *q)
{
	for (unsigned i = 0; i < LV_PAGES; i++)
		CHECK(mm_query(c, B + i * PG, &q[i]) == MM_OK, "query");
}

static void lv_check_walk(struct ctx *x, struct mm_cursor *c, uint64_t B)
{
	static struct lv_seen v;
	static struct mm_info q[LV_PAGES];
	uint64_t va, len;
	rnd_subrange(B, B + LV_PAGES * PG, &va, &len);
	memset(&v, 0, sizeof v);
	v.lo = B, v.next = va;
	uint64_t sk = 0;
	CHECK(mm_leaves(c, va, len, lv_collect, &v, &sk) == MM_OK, "mm_leaves");
	CHECK(!v.bad, "leaves out of order or misaligned");
	lv_snap(c, B, q);
	for (unsigned i = (unsigned)((va - B) / PG); i < (va + len - B) / PG; i++) {
		struct spec_page *sp = spec_at(&x->s, B + i * PG);
		bool res = sp->kind == MM_MAPPED || sp->kind == MM_COW;
		CHECK(res == (v.kind[i] != 0), "page %u: spec kind %u, leaves kind %u", i, sp->kind,
		      v.kind[i]);
		if (!res || !v.kind[i])
			continue;
		CHECK(v.kind[i] == q[i].kind && v.level[i] == q[i].level && v.a[i] == q[i].accessed &&
		      v.d[i] == q[i].dirty, "page %u: leaves say kind %u level %u A%d D%d, query %u %u A%d D%d",
		      i, v.kind[i], v.level[i], v.a[i], v.d[i], q[i].kind, q[i].level, q[i].accessed,
		      q[i].dirty);
	}
}

static void lv_clean(struct ctx *x, struct mm_cursor *c, uint64_t B)
{
	static struct mm_info q0[LV_PAGES], q1[LV_PAGES];
	uint64_t va, len;
	rnd_subrange(B, B + LV_PAGES * PG, &va, &len);
	lv_snap(c, B, q0);
	bool any = false;
	for (uint64_t p = va; p < va + len; p += PG)
		any |= q0[(p - B) / PG].dirty && (q0[(p - B) / PG].kind == MM_MAPPED || q0[(p - B) / PG].kind == MM_COW);
	unsigned need = 0;
	CHECK(mm_clean_need(c, va, len, &need) == MM_OK, "clean_need");
	uint64_t nr = x->as.nr_frames;
	unsigned long fl = host_tlb_flushes();
	bool was = !any;
	CHECK(mm_clean(c, va, len, &was) == MM_OK, "clean");
	CHECK(x->as.nr_frames <= nr + need, "clean took %" PRIu64 " frames, dry run said %u",
	      x->as.nr_frames - nr, need);
	CHECK(was == any, "clean reported dirty %d, want %d", was, any);
	mm_flush(c);
	CHECK(any || host_tlb_flushes() == fl, "a clean that changed nothing flushed");
	lv_snap(c, B, q1);
	for (unsigned i = 0; i < LV_PAGES; i++) {
		bool in = B + i * PG >= va && B + i * PG < va + len;
		CHECK(q0[i].kind == q1[i].kind && q0[i].prot == q1[i].prot && q0[i].pa == q1[i].pa &&
		      q0[i].accessed == q1[i].accessed && q1[i].dirty == (in ? false : q0[i].dirty),
		      "page %u (%s the clean): kind %u->%u prot %x->%x A%d->%d D%d->%d", i,
		      in ? "in" : "outside", q0[i].kind, q1[i].kind, q0[i].prot, q1[i].prot,
		      q0[i].accessed, q1[i].accessed, q0[i].dirty, q1[i].dirty);
	}
}

/* A 2 MiB leaf on a free, aligned 2 MiB of the window (random A/D). */
static void lv_map_huge(struct ctx *x, struct mm_cursor *c, uint64_t B)
{
	uint64_t hb = B + rndn(LV_PAGES * PG / MB2) * MB2;
	for (uint64_t p = hb; p < hb + MB2; p += PG)
		if (spec_at(&x->s, p)->kind == MM_MAPPED || spec_at(&x->s, p)->kind == MM_COW)
			return;
	static const unsigned ad[] = { 0, MM_MAP_ACCESSED, MM_MAP_ACCESSED | MM_MAP_DIRTY };
	unsigned fl = ad[rndn(3)], prot = MM_PROT_R | MM_PROT_W | MM_PROT_U;
	uint64_t pa = host_frame_alloc(2);
	int got = mm_map(c, hb, pa, 2, prot, fl);
	CHECK(got == spec_map(&x->s, hb, pa, MB2, prot, fl), "huge map: %s", mm_strerror(got));
	if (got)
		host_frame_free(pa, 2);
}

static void t_leaves(long steps)
{
	struct ctx x;
	new_as(&x.as);
	uint64_t B = 1ull << 30;
	spec_init(&x.s, B, LV_PAGES, A->mem_types);
	const unsigned RW = MM_PROT_R | MM_PROT_W | MM_PROT_U;
	bool huge = pt_leaf_ok(A, 2);
	if (huge) {
		/* A dirty 2 MiB leaf cut by a clean is split: the dry run counts
		 * the table, the pieces inside come out clean, those outside
		 * stay dirty; a clean 2 MiB leaf cut by one stays whole. */
		struct mm_cursor c;
		uint64_t pa = host_frame_alloc(2), pb = host_frame_alloc(2);
		CHECK(mm_lock(&c, &x.as, B, B + LV_PAGES * PG) == MM_OK, "lock");
		CHECK(mm_map(&c, B, pa, 2, RW, MM_MAP_ACCESSED | MM_MAP_DIRTY) == MM_OK, "map dirty 2M");
		CHECK(mm_map(&c, B + MB2, pb, 2, RW, MM_MAP_ACCESSED) == MM_OK, "map clean 2M");
		spec_map(&x.s, B, pa, MB2, RW, 0);
		spec_map(&x.s, B + MB2, pb, MB2, RW, 0);
		unsigned need = 0;
		bool was = false;
		CHECK(mm_clean_need(&c, B + 3 * PG, MB2 + 5 * PG, &need) == MM_OK && need >= 1,
		      "dry run of a clean cutting a dirty 2M leaf: need %u", need);
		CHECK(mm_clean(&c, B + 3 * PG, MB2 + 5 * PG, &was) == MM_OK && was, "clean in 2M");
		struct mm_info in;
		CHECK(mm_query(&c, B + 2 * PG, &in) == MM_OK && in.level == 1 && in.dirty && in.accessed,
		      "piece before the clean: level %u D%d", in.level, in.dirty);
		CHECK(mm_query(&c, B + 3 * PG, &in) == MM_OK && in.level == 1 && !in.dirty && in.accessed,
		      "piece in the clean: level %u D%d", in.level, in.dirty);
		CHECK(mm_query(&c, B + MB2 + 9 * PG, &in) == MM_OK && in.level == 2 && !in.dirty,
		      "clean 2M leaf: level %u D%d", in.level, in.dirty);
		CHECK(mm_clean(&c, B, 2 * MB2, &was) == MM_OK && was, "clean the rest");
		CHECK(mm_clean(&c, B, 2 * MB2, &was) == MM_OK && !was, "clean again: nothing dirty");
		/* the next write records dirt again (the fault path's mm_touch
		 * where the table has no hardware A/D) */
		CHECK(mm_touch(&c, B + 3 * PG, true) == MM_OK, "write after the clean");
		CHECK(mm_query(&c, B + 3 * PG, &in) == MM_OK && in.dirty, "dirty again after a write");
		CHECK(mm_clean(&c, B, 2 * MB2, &was) == MM_OK && was, "clean after the write");
		mm_release(&c);
		check_wf(&x.as, "clean of a 2M leaf");
		check_window(&x.as, &x.s, "clean of a 2M leaf");
	}
	for (long k = 0; k < steps; k++) {
		struct mm_cursor c;
		CHECK(mm_lock(&c, &x.as, B, B + LV_PAGES * PG) == MM_OK, "lock");
		uint64_t va = B + rndn(LV_PAGES) * PG, len;
		int got, want;
		switch (rndn(8)) {
		case 0:
		case 1: {
			static const unsigned ad[] = { 0, MM_MAP_ACCESSED, MM_MAP_ACCESSED | MM_MAP_DIRTY };
			unsigned fl = ad[rndn(3)] | (rndn(5) == 0 ? MM_MAP_COW : 0);
			uint64_t pa = host_frame_alloc(1);
			got = mm_map(&c, va, pa, 1, RW, fl);
			want = spec_map(&x.s, va, pa, PG, RW, fl);
			CHECK(got == want, "map: %s, spec %s", mm_strerror(got), mm_strerror(want));
			if (got)
				host_frame_free(pa, 1);
			break;
		}
		case 2:
			if (huge)
				lv_map_huge(&x, &c, B);
			break;
		case 3:
			rnd_subrange(B, B + LV_PAGES * PG, &va, &len);
			if (rndn(2)) {
				got = mm_unmap(&c, va, len);
				want = spec_unmap(&x.s, va, len);
			} else {
				got = mm_make_cow(&c, va, len);
				want = spec_make_cow(&x.s, va, len);
			}
			CHECK(got == want, "unmap/make_cow: %s, spec %s", mm_strerror(got), mm_strerror(want));
			break;
		case 4: {
			struct mm_status st = { .kind = MM_RESERVED, .prot = RW };
			rnd_subrange(B, B + LV_PAGES * PG, &va, &len);
			got = mm_mark(&c, va, len, &st);
			want = spec_mark(&x.s, va, len, &st);
			CHECK(got == want, "mark: %s, spec %s", mm_strerror(got), mm_strerror(want));
			break;
		}
		case 5: {
			bool w = rndn(2);
			got = mm_touch(&c, va, w);
			want = spec_touch(&x.s, va, w);
			CHECK(got == want, "touch: %s, spec %s", mm_strerror(got), mm_strerror(want));
			break;
		}
		default:
			lv_clean(&x, &c, B);
			break;
		}
		lv_check_walk(&x, &c, B);
		mm_release(&c);
		check_wf(&x.as, "leaves step");
	}
	check_window(&x.as, &x.s, "leaves");
	/* An empty window: nothing visited, the walk skips instead. */
	struct mm_cursor c;
	CHECK(mm_lock(&c, &x.as, B, B + LV_PAGES * PG) == MM_OK, "lock");
	CHECK(mm_unmap(&c, B, LV_PAGES * PG) == MM_OK, "unmap");
	struct lv_seen *v = calloc(1, sizeof *v);
	uint64_t sk = 0;
	v->lo = B, v->next = B;
	CHECK(mm_leaves(&c, B, LV_PAGES * PG, lv_collect, v, &sk) == MM_OK && v->next == B && sk > 0,
	      "empty window: leaves reported, or nothing skipped");
	CHECK(mm_leaves(&c, B + 1, PG, lv_collect, v, NULL) == MM_EALIGN, "unaligned walk");
	CHECK(mm_leaves(&c, B, 0, lv_collect, v, NULL) == MM_ERANGE, "empty walk");
	CHECK(mm_leaves(&c, B - PG, 2 * PG, lv_collect, v, NULL) == MM_ENOTLOCKED, "walk outside");
	CHECK(mm_clean(&c, B + LV_PAGES * PG, PG, NULL) == MM_ENOTLOCKED, "clean outside");
	free(v);
	mm_release(&c);
	spec_free(&x.s);
	end_as(&x.as);
}

/* ---- adbits: accessed/dirty bits survive splits and racing updates ---- */

static uint64_t ld(uint64_t *e) { return __atomic_load_n(e, __ATOMIC_ACQUIRE); }

/* Every 4 KiB leaf of [va, va + 2M) except skip has all of `bits`; counts
 * those that do not. */
static int leaves_missing(struct mm_as *as, uint64_t va, uint64_t skip, uint64_t bits)
{
	int missing = 0;
	for (unsigned j = 0; j < 512; j++) {
		unsigned lv;
		uint64_t p = va + j * PG;
		uint64_t *e = leaf_of(as, p, &lv);
		if (p == skip)
			continue;
		if (!e || lv != 1 || (ld(e) & bits) != bits)
			missing++;
	}
	return missing;
}

/* The simulated hardware A/D update: what an MMU walker does to a live
 * leaf (an atomic compare-and-swap that sets the bits only while the entry
 * is still that leaf). */
struct hw_setter {
	uint64_t *volatile slot;   /* the huge leaf's entry */
	uint64_t bits;
	_Atomic unsigned go, armed, done;
	_Atomic long delay_ns;
	_Atomic int stop, result;  /* result: 1 bits set on the leaf, 2 no leaf any more */
};

static long now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

static void *hw_setter_main(void *arg)
{
	struct hw_setter *h = arg;
	unsigned seen = 0;
	while (!atomic_load(&h->stop)) {
		unsigned g = atomic_load(&h->go);
		if (g == seen) {
			sched_yield();
			continue;
		}
		seen = g;
		atomic_store(&h->armed, g);
		long until = now_ns() + atomic_load(&h->delay_ns);
		while (now_ns() < until)
			;
		int r;
		for (;;) {
			uint64_t e = __atomic_load_n(h->slot, __ATOMIC_ACQUIRE);
			if (!A->present(e) || !A->is_leaf(e, 2)) {
				r = 2;
				break;
			}
			if (__atomic_compare_exchange_n(h->slot, &e, e | h->bits, false, __ATOMIC_ACQ_REL,
							__ATOMIC_ACQUIRE)) {
				r = 1;
				break;
			}
		}
		atomic_store(&h->result, r);
		atomic_store(&h->done, g);
	}
	return NULL;
}

static void t_adbits(long steps)
{
	struct ctx x;
	new_as(&x.as);
	uint64_t B = 1ull << 30;
	spec_init(&x.s, B, 4 * 512, A->mem_types);
	const unsigned RW = MM_PROT_R | MM_PROT_W | MM_PROT_U;
	uint64_t Abit = ad_bit(false), Dbit = ad_bit(true), AD = Abit | Dbit;
	CHECK(Abit && Dbit, "arch has no A/D bits");
	struct mm_cursor c;
	unsigned lv;
	uint64_t hpa[3];

	/* A huge leaf with A (and D) set, cut by protect, unmap, make_cow:
	 * every piece keeps the bits, none are invented. */
	CHECK(mm_lock(&c, &x.as, B, B + 3 * MB2) == MM_OK, "lock");
	for (int i = 0; i < 3; i++) {
		hpa[i] = host_frame_alloc(2);
		CHECK(mm_map(&c, B + i * MB2, hpa[i], 2, RW, 0) == MM_OK, "map huge %d", i);
		spec_map(&x.s, B + i * MB2, hpa[i], MB2, RW, 0);
	}
	mm_release(&c);
	for (int i = 0; i < 3; i++) {
		uint64_t *e = leaf_of(&x.as, B + i * MB2, &lv);
		CHECK(e && lv == 2, "huge leaf %d", i);
		__atomic_fetch_or(e, i == 2 ? Abit : AD, __ATOMIC_ACQ_REL);
	}
	CHECK(mm_lock(&c, &x.as, B, B + 3 * MB2) == MM_OK, "lock");
	CHECK(mm_protect(&c, B + 5 * PG, PG, MM_PROT_R) == MM_OK, "protect in huge");
	spec_protect(&x.s, B + 5 * PG, PG, MM_PROT_R);
	CHECK(mm_unmap(&c, B + MB2 + 7 * PG, PG) == MM_OK, "unmap in huge");
	spec_unmap(&x.s, B + MB2 + 7 * PG, PG);
	CHECK(mm_make_cow(&c, B + 2 * MB2 + 9 * PG, PG) == MM_OK, "make_cow in huge");
	spec_make_cow(&x.s, B + 2 * MB2 + 9 * PG, PG);
	mm_release(&c);
	int m0 = leaves_missing(&x.as, B, ~0ull, AD);
	int m1 = leaves_missing(&x.as, B + MB2, B + MB2 + 7 * PG, AD);
	int m2 = leaves_missing(&x.as, B + 2 * MB2, ~0ull, Abit);
	CHECK(!m0, "protect split: %d of 512 pieces lost A/D", m0);
	CHECK(!m1, "unmap split: %d of 511 pieces lost A/D", m1);
	CHECK(!m2, "make_cow split: %d of 512 pieces lost A", m2);
	uint64_t *e = leaf_of(&x.as, B + 2 * MB2 + 100 * PG, &lv);
	CHECK(e && !(ld(e) & Dbit), "make_cow split invented D");
	check_wf(&x.as, "splits");
	check_window(&x.as, &x.s, "splits");
	CHECK(mm_lock(&c, &x.as, B, B + 3 * MB2) == MM_OK, "lock");
	CHECK(mm_unmap(&c, B, 3 * MB2) == MM_OK, "unmap all");
	spec_unmap(&x.s, B, 3 * MB2);
	mm_release(&c);

	/* A simulated MMU sets A and D on a huge leaf at a random moment while
	 * a protect splits it: when the bits reached the leaf, every piece
	 * must have them, whichever side of the split they landed on. Only
	 * where an MMU sets them (hw_ad): elsewhere nothing writes a live
	 * leaf behind the cursor (t_touch covers those tables). */
	if (!A->hw_ad) {
		printf("adbits: %s leaves A/D to software: no racing MMU to simulate\n", A->name);
		steps = 0;
	}
	struct hw_setter h = { .bits = AD };
	pthread_t th;
	CHECK(pthread_create(&th, NULL, hw_setter_main, &h) == 0, "thread");
	long span = 20000, on_leaf = 0, too_late = 0, lost = 0;
	uint64_t hb = B + MB2;
	for (long it = 0; it < steps && lost < 5; it++) {
		uint64_t p = host_frame_alloc(2);
		CHECK(mm_lock(&c, &x.as, hb, hb + MB2) == MM_OK, "lock");
		CHECK(mm_map(&c, hb, p, 2, RW, 0) == MM_OK, "map huge");
		mm_release(&c);
		h.slot = leaf_of(&x.as, hb, &lv);
		atomic_store(&h.delay_ns, (long)rndn((uint64_t)span));
		atomic_store(&h.result, 0);
		unsigned g = (unsigned)it + 1;
		atomic_store(&h.go, g);
		while (atomic_load(&h.armed) != g)
			;
		long t0 = now_ns();
		CHECK(mm_lock(&c, &x.as, hb, hb + MB2) == MM_OK, "lock");
		CHECK(mm_protect(&c, hb + 9 * PG, PG, MM_PROT_R) == MM_OK, "protect");
		mm_release(&c);
		long took = now_ns() - t0;
		span = 4 * (took > 1000 ? took : 1000);
		while (atomic_load(&h.done) != g)
			sched_yield();
		if (atomic_load(&h.result) == 1) {
			on_leaf++;
			int m = leaves_missing(&x.as, hb, ~0ull, AD);
			lost += m != 0;
			CHECK(!m, "iteration %ld: A/D set on the leaf, lost in %d pieces", it, m);
		} else {
			too_late++;
		}
		CHECK(mm_lock(&c, &x.as, hb, hb + MB2) == MM_OK, "lock");
		CHECK(mm_unmap(&c, hb, MB2) == MM_OK, "unmap");
		mm_release(&c);
		host_rcu_poll();
	}
	atomic_store(&h.stop, 1);
	pthread_join(th, NULL);
	printf("adbits: %ld races: bits reached the leaf in %ld (lost in %ld), came after the split in %ld\n",
	       on_leaf + too_late, on_leaf, lost, too_late);
	check_wf(&x.as, "adbits");
	spec_free(&x.s);
	end_as(&x.as);
}

/* ---- lockstat: the core reports each acquisition of a lock it
 * implements itself to the platform's lock_stat hook ---- */
static unsigned long lk_acq[MM_LK_KINDS], lk_waited;

static void count_lock(unsigned kind, uint32_t waited)
{
	CHECK(kind < MM_LK_KINDS, "lock_stat kind %u", kind);
	if (kind < MM_LK_KINDS)
		lk_acq[kind]++;
	lk_waited += waited != 0;
}

/* The baseline's per-VMA locks, one thread, core locks: a fault holds
 * its VMA for reading and no mmap_lock; with the VMA write-locked it falls
 * back to mmap_lock for reading; a one-page mark of new memory and a
 * one-page unmap of memory never touched allocate nothing. */
static void lockstat_vma(void)
{
	struct mm_as as;
	new_as(&as);
	uint64_t B = 1ull << 30, V = B + 64 * MB2;   /* V: far from any table */
	struct mm_cursor c;
	struct mm_status res = { .kind = MM_RESERVED, .prot = MM_PROT_R | MM_PROT_W | MM_PROT_U };
	CHECK(mm_lock(&c, &as, B, B + 16 * PG) == MM_OK && mm_mark(&c, B, 16 * PG, &res) == MM_OK,
	      "mark 16 pages");
	mm_release(&c);
	struct mm_stats st0, st1;
	mm_as_stats(&as, &st0);
	uint64_t frames = as.nr_frames;
	struct mm_vma *v = vma_first(as.vma.root, B);
	CHECK(v && v->start == B, "the VMA");
	CHECK(mm_lock(&c, &as, B + PG, B + 2 * PG) == MM_OK, "lock a page of it");
	CHECK(c.vma_mode == VMA_VREAD && c.vma_held == v && v->readers == 1 && !as.vma.mmap_lock.v,
	      "vma: a fault holds mode %u, VMA %p (readers %u), mmap_lock %#x", c.vma_mode,
	      (void *)c.vma_held, v->readers, as.vma.mmap_lock.v);
	struct mm_info in;
	CHECK(mm_query(&c, B + PG, &in) == MM_OK && in.kind == MM_RESERVED, "query under the VMA lock");
	mm_release(&c);
	CHECK(v->readers == 0, "vma: %u readers left", v->readers);
	v->wseq = as.vma.wseq;          /* as a writer changing it would */
	CHECK(mm_lock(&c, &as, B + PG, B + 2 * PG) == MM_OK, "lock a page of a locked VMA");
	CHECK(c.vma_mode == VMA_READ && v->readers == 0 && as.vma.mmap_lock.v == 1,
	      "vma: fallback mode %u readers %u mmap_lock %#x", c.vma_mode, v->readers,
	      as.vma.mmap_lock.v);
	CHECK(mm_query(&c, B + PG, &in) == MM_OK && in.kind == MM_RESERVED, "query under mmap_lock");
	mm_release(&c);
	v->wseq = as.vma.wseq - 1;
	mm_as_stats(&as, &st1);
	CHECK(st1.pt_pages == st0.pt_pages && as.nr_frames == frames, "vma: a query allocated");
	/* mmap of one new page, then munmap of a page never touched */
	CHECK(mm_lock(&c, &as, V, V + PG) == MM_OK, "lock a new page");
	CHECK(c.vma_mode == VMA_PAGEW, "vma: a new page locked in mode %u", c.vma_mode);
	CHECK(mm_mark(&c, V, PG, &res) == MM_OK, "mark it");
	mm_release(&c);
	mm_as_stats(&as, &st1);
	CHECK(st1.pt_pages == st0.pt_pages && st1.vmas == st0.vmas + 1,
	      "vma: a one-page mark: PT pages %" PRIu64 " -> %" PRIu64 ", VMAs %" PRIu64 " -> %" PRIu64,
	      st0.pt_pages, st1.pt_pages, st0.vmas, st1.vmas);
	CHECK(mm_lock(&c, &as, B + 3 * PG, B + 4 * PG) == MM_OK, "lock a page never touched");
	CHECK(mm_unmap(&c, B + 3 * PG, PG) == MM_OK, "unmap it");
	CHECK(c.vma_mode == VMA_UPGRADED && v->readers == 0, "vma: unmap in mode %u, readers %u",
	      c.vma_mode, v->readers);
	mm_release(&c);
	mm_as_stats(&as, &st1);
	CHECK(st1.pt_pages == st0.pt_pages, "vma: a one-page unmap of untouched memory made PT pages");
	/* the fault makes the tables below the page it locked */
	uint64_t f = host_frame_alloc(1);
	CHECK(mm_lock(&c, &as, B + 5 * PG, B + 6 * PG) == MM_OK, "lock for a fault");
	unsigned L = c.cover_level;
	CHECK(mm_map(&c, B + 5 * PG, f, 1, MM_PROT_R | MM_PROT_W | MM_PROT_U, 0) == MM_OK, "map");
	mm_release(&c);
	mm_as_stats(&as, &st1);
	CHECK(L > 1 && st1.pt_pages == st0.pt_pages + L - 1, "vma: the map below level %u made %"
	      PRIu64 " PT pages", L, st1.pt_pages - st0.pt_pages);
	check_wf(&as, "vma locks");
	end_as(&as);
}

/* On the core's own locks (tas), one thread: one-page and wider
 * transactions count in the kinds the protocol takes, none waits. With
 * the queue hooks the platform counts, so the core reports only the
 * baseline's locks, which never go through the hooks. */
static void t_lockstat(void)
{
	bool vma = !strcmp(P->name, "vma");
	for (int q = 0; q < 2; q++) {
		CHECK(!host_lock_select(q ? "queue" : "tas"), "lock select");
		memset(lk_acq, 0, sizeof lk_acq);
		lk_waited = 0;
		host_plat.lock_stat = count_lock;
		struct mm_as as;
		new_as(&as);
		uint64_t B = 1ull << 30, f = host_frame_alloc(1);
		struct mm_cursor c;
		struct mm_status res = { .kind = MM_RESERVED, .prot = MM_PROT_R | MM_PROT_U };
		unsigned long w0 = lk_acq[MM_LK_MMAP_WRITE], r0 = lk_acq[MM_LK_MMAP_READ];
		CHECK(mm_lock(&c, &as, B + PG, B + 2 * PG) == MM_OK, "lock one page");
		CHECK(mm_mark(&c, B + PG, PG, &res) == MM_OK, "mark");
		mm_release(&c);
		/* The baseline maps new memory the way mmap does: one page with
		 * no VMA (looked up without a lock) is locked for writing. */
		if (vma)
			CHECK(lk_acq[MM_LK_MMAP_WRITE] == w0 + 1 && lk_acq[MM_LK_MMAP_READ] == r0,
			      "vma: a one-page mark took mmap_read %lu mmap_write %lu times",
			      lk_acq[MM_LK_MMAP_READ] - r0, lk_acq[MM_LK_MMAP_WRITE] - w0);
		w0 = lk_acq[MM_LK_MMAP_WRITE];
		unsigned long p0 = lk_acq[MM_LK_PTL];
		CHECK(mm_lock(&c, &as, B + PG, B + 2 * PG) == MM_OK, "lock the reserved page");
		CHECK(mm_map(&c, B + PG, f, 1, MM_PROT_R | MM_PROT_U, 0) == MM_OK, "map");
		mm_release(&c);
		/* and faults in a VMA under the VMA's read lock: no mmap_lock */
		if (vma)
			CHECK(lk_acq[MM_LK_MMAP_WRITE] == w0 && lk_acq[MM_LK_MMAP_READ] == r0 &&
			      lk_acq[MM_LK_PTL] > p0, "vma: a fault took mmap_read %lu mmap_write %lu "
			      "ptl %lu times", lk_acq[MM_LK_MMAP_READ] - r0,
			      lk_acq[MM_LK_MMAP_WRITE] - w0, lk_acq[MM_LK_PTL] - p0);
		CHECK(mm_lock(&c, &as, B, B + 16 * PG) == MM_OK, "lock 16 pages");
		mm_release(&c);
		host_plat.lock_stat = NULL;
		end_as(&as);
		unsigned long core = lk_acq[MM_LK_SPIN] + lk_acq[MM_LK_READ] + lk_acq[MM_LK_WRITE];
		if (vma)
			CHECK(lk_acq[MM_LK_MMAP_WRITE] && lk_acq[MM_LK_PTL],
			      "vma (%s): mmap_read %lu mmap_write %lu ptl %lu", q ? "queue" : "tas",
			      lk_acq[MM_LK_MMAP_READ], lk_acq[MM_LK_MMAP_WRITE], lk_acq[MM_LK_PTL]);
		else
			CHECK(q ? !core : !strcmp(P->name, "adv") ? lk_acq[MM_LK_SPIN] > 0 :
			      lk_acq[MM_LK_WRITE] > 0,
			      "%s (%s): spin %lu read %lu write %lu", P->name, q ? "queue" : "tas",
			      lk_acq[MM_LK_SPIN], lk_acq[MM_LK_READ], lk_acq[MM_LK_WRITE]);
		CHECK(!lk_waited, "%lu waits with one thread", lk_waited);
	}
	if (vma)
		lockstat_vma();
}

int main(int argc, char **argv)
{
	if (mm_arch_list_requested(argc, argv))
		return 0;
	if (argc < 2) {
		fprintf(stderr, "usage: test_mm TEST --arch %s --mm P [--seed N] [--steps N]\n"
			"       test_mm --list-arch\n", mm_arch_names());
		return 2;
	}
	const char *test = argv[1], *arch = "sv39", *mm = "adv";
	long steps = 2000;
	for (int i = 2; i + 1 < argc; i += 2) {
		if (!strcmp(argv[i], "--arch"))
			arch = argv[i + 1];
		else if (!strcmp(argv[i], "--mm"))
			mm = argv[i + 1];
		else if (!strcmp(argv[i], "--seed"))
			rng = strtoull(argv[i + 1], NULL, 0) * 2654435761ull + 1;
		else if (!strcmp(argv[i], "--steps"))
			steps = strtol(argv[i + 1], NULL, 0);
	}
	A = mm_arch_by_name(arch);
	P = mm_proto_by_name(mm);
	if (!A || !P) {
		fprintf(stderr, "unknown arch or protocol\n");
		return 2;
	}
	bool big = !strcmp(test, "huge") || !strcmp(test, "kernel") || !strcmp(test, "maprange");
	host_init(big ? (size_t)1 << 19 : (size_t)1 << 15);
	if (!strcmp(test, "arch"))
		t_arch();
	else if (!strcmp(test, "diff"))
		t_diff(steps);
	else if (!strcmp(test, "bad"))
		t_bad();
	else if (!strcmp(test, "txn"))
		t_txn(steps);
	else if (!strcmp(test, "oom"))
		t_oom();
	else if (!strcmp(test, "charge")) {
		/* PT frames charged to whoever pays for the AS: refused charges
		 * fail the op cleanly, and no op ends owning more than allowed. */
		charge_mode = true;
		t_oom();
	}
	else if (!strcmp(test, "huge"))
		t_huge();
	else if (!strcmp(test, "top"))
		t_top();
	else if (!strcmp(test, "bbm"))
		t_bbm();
	else if (!strcmp(test, "wide"))
		t_wide();
	else if (!strcmp(test, "pager"))
		t_pager();
	else if (!strcmp(test, "kernel"))
		t_kernel();
	else if (!strcmp(test, "lockoom"))
		t_lockoom();
	else if (!strcmp(test, "maprange"))
		t_maprange();
	else if (!strcmp(test, "touch"))
		t_touch();
	else if (!strcmp(test, "leaves"))
		t_leaves(steps > 400 ? 400 : steps);
	else if (!strcmp(test, "lockstat"))
		t_lockstat();
	else if (!strcmp(test, "adbits"))
		t_adbits(steps > 500 ? 500 : steps);
	else {
		fprintf(stderr, "unknown test %s\n", test);
		return 2;
	}
	printf("%s %s %s: %s (%d failures)\n", test, arch, mm, fails ? "FAIL" : "ok", fails);
	return fails ? 1 : 0;
}
