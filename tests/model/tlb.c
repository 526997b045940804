/* TLB-coherence harness (docs/architecture.md section 6; the paper proves
 * nothing here).
 *
 *   tlb --arch A --mm rw|adv|vma [--lazy | --threads T]
 *       [--steps N] [--seed N] [--mutate]
 *
 * NHARTS simulated harts share one address space. Each has a small TLB
 * that is filled only by walking the real page tables (the way hardware
 * does: lock-free, entry by entry), at random moments: before, inside and
 * after transactions. TLB entries disappear only through the core's flush
 * requests (platform tlb_flush) or by eviction. Checks:
 *  - after every commit (mm_release), every translation a hart can still
 *    use matches the page table: same frame, permissions not above the
 *    current ones. So nothing a transaction removed, split or downgraded
 *    survives its commit;
 *  - a data frame goes back to the allocator (frame_release) only when no
 *    hart can translate to it any more.
 * For a table that needs break-before-make (pt_arch.needs_bbm, AArch64)
 * the harts also cache the table entries a walk passes (a walk cache), and
 * may walk and fill at any access, even for an address they hold, as such
 * hardware may at any time. A hart that would then hold two translations
 * of one address that disagree (a block and a page or table under it, two
 * pages or two tables with different addresses) fails the run: the TLB
 * conflict break-before-make exists to prevent. After a commit its cached
 * table entries must match the page table too.
 * --lazy models lazy shootdown with early acknowledgement: tlb_flush only
 * queues the range on every hart and returns; a hart applies its queue
 * before its next access (it cannot reach user mode first); released
 * frames are parked until every hart has applied the flushes queued before
 * the release. "Usable" then means: not covered by the hart's queue. This
 * is what the kernel's user shootdown does (kernel/shootdown.h): a target
 * acknowledges on taking the interrupt, flushes before it returns to any
 * user access, and unmapped frames and PT pages are parked until every
 * hart applied what was posted before (its per-hart pend_lo marks play
 * flush_gen and hart.gen here; a full parking ring forces a flush of every
 * hart, as a full queue here). The kernel posts only to the harts that may
 * hold the address space, which this model, with one space on every hart,
 * does not distinguish. A build with -DTLB_MUTANT_FREE_AT_ACK
 * (tlb-mutant-lazy-free-at-ack) frees at once, before the queues are
 * applied: the run must fail.
 * --mutate drops every third flush request: the run must fail (the checks
 * bite). A core built with -DMM_BUG_NO_BBM (tlb_nobbm) replaces entries
 * without breaking them first: on a table that needs BBM the run must
 * fail with a TLB conflict (tests/model/bbm_mutant.py runs every registered
 * table so; --print-bbm prints 1 or 0, the table's needs_bbm, and exits,
 * so the script asks the table itself). --lazy does not apply to such a table (its
 * tlb_flush must be complete on return): exit 77, skipped.
 * --threads T (2 or 4, not with --lazy): T OS threads, each one hart,
 * transact concurrently on disjoint sets of 8-page chunks (sharing PT pages)
 * and access the whole window; each checks its own range after its commit
 * (nobody else may change it). A hart's walk+fill and a flush of that hart
 * exclude each other, as an IPI waits for an instruction to finish.
 * Without --threads the driver is one OS thread that interleaves the harts
 * with a seeded random schedule, so every check is exact and a failure
 * replays
 * (TLB_DEBUG=1 in the environment prints every lock, map, unmap, flush and
 * release). */
#include "arch_registry.h"
#include "host_platform.h"
#include "spec.h"
#include "testutil.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PG MM_PAGE_SIZE
#define MB2 (1ull << 21)
#define NHARTS 4
#define TLB_SIZE 8
#define WC_SIZE 8               /* walk cache (tables that need BBM only) */
#define WIN_PAGES 1024          /* two 2 MiB blocks */
#define MAX_PENDING 64
#define MAX_PARKED 4096

struct tlbe {
	bool valid;
	bool table;             /* walk cache: a table entry, pa = its child */
	uint64_t va, size, pa;
	unsigned prot;
};

struct hart {
	struct tlbe tlb[TLB_SIZE];
	struct tlbe wc[WC_SIZE];
	unsigned npend;
	uint64_t pend_lo[MAX_PENDING], pend_hi[MAX_PENDING];
	unsigned long gen;      /* flush generation applied */
	pthread_mutex_t mu;     /* walk+fill vs flush of this hart */
};

static struct hart harts[NHARTS];
static unsigned long flush_gen;  /* lazy: generations queued so far */
static const struct pt_arch *A;
static const struct mm_protocol *P;
static struct mm_platform plat;
static struct mm_as as;
static uint64_t base;
static int lazy, mutate;
static unsigned nthreads = 1;
static unsigned long fails, nflush, nfill, nhit, ncommit, nrelease, nbbm;
static __thread uint64_t rng = 0x9e3779b97f4a7c15ull;
static __thread unsigned my_hart;   /* --threads: this thread's hart */
#define INC(x) __atomic_add_fetch(&(x), 1, __ATOMIC_RELAXED)
#define CHUNK 8                     /* --threads: pages per owned chunk */

struct parked { uint64_t pa; unsigned level; unsigned long gen; };
static struct parked parked[MAX_PARKED];
static unsigned nparked;

static void check_failed(void)
{
	if (INC(fails) > 10)
		exit(1);
}

static uint64_t rndn(uint64_t n) { return xorshift64_below(&rng, n); }

/* The hardware walker: lock-free, one atomic load per level, from the
 * root that translates va. Fills *out with the leaf that translates va;
 * false if none. With tabs, also the table entries it passed, whatever it
 * found below them: tabs[0..*ntabs-1]. */
static bool walk_tabs(uint64_t va, struct tlbe *out, struct tlbe *tabs, unsigned *ntabs)
{
	uint64_t table = mm_as_root_pa_for(&as, va);
	for (unsigned L = A->levels; L >= 1 && table; L--) {
		uint64_t *t = plat.phys_to_virt(table);
		uint64_t e = __atomic_load_n(&t[pt_index(A, va, L)], __ATOMIC_ACQUIRE);
		if (!A->present(e))
			return false;
		uint64_t size = 1ull << pt_shift(A, L);
		bool leaf = L == 1 || A->is_leaf(e, L);
		struct tlbe x = { .valid = true, .table = !leaf, .va = va & ~(size - 1), .size = size,
				  .pa = A->addr(e, L), .prot = leaf ? A->prot(e, L) : 0 };
		if (leaf) {
			*out = x;
			return true;
		}
		if (tabs)
			tabs[(*ntabs)++] = x;
		table = x.pa;
	}
	return false;
}

static bool walk(uint64_t va, struct tlbe *out)
{
	return walk_tabs(va, out, NULL, NULL);
}

static bool overlaps(uint64_t a, uint64_t asz, uint64_t lo, uint64_t hi /*excl*/)
{
	return a < hi && lo < a + asz;
}

/* Drop every translation and cached table entry of h that overlaps
 * [lo, hi). */
static void drop_range(struct hart *h, uint64_t lo, uint64_t hi)
{
	for (unsigned k = 0; k < TLB_SIZE; k++)
		if (h->tlb[k].valid && overlaps(h->tlb[k].va, h->tlb[k].size, lo, hi))
			h->tlb[k].valid = false;
	for (unsigned k = 0; k < WC_SIZE; k++)
		if (h->wc[k].valid && overlaps(h->wc[k].va, h->wc[k].size, lo, hi))
			h->wc[k].valid = false;
}

/* A hart applies its queued flushes (lazy mode) before it runs user code. */
static void apply_pending(struct hart *h)
{
	for (unsigned i = 0; i < h->npend; i++)
		drop_range(h, h->pend_lo[i], h->pend_hi[i]);
	h->npend = 0;
	h->gen = flush_gen;
}

static bool covered_by_pending(const struct hart *h, const struct tlbe *e)
{
	for (unsigned i = 0; i < h->npend; i++)
		if (overlaps(e->va, e->size, h->pend_lo[i], h->pend_hi[i]))
			return true;
	return false;
}

/* Is this cached translation still allowed by the page table? */
static bool consistent(const struct tlbe *e)
{
	for (uint64_t off = 0; off < e->size; off += PG) {
		struct tlbe now;
		if (!walk(e->va + off, &now))
			return false;
		uint64_t pa_now = now.pa + (e->va + off - now.va);
		if (pa_now != e->pa + off || (e->prot & ~now.prot))
			return false;
	}
	return true;
}

/* Is this cached table entry still in the page table? */
static bool table_current(const struct tlbe *e)
{
	struct tlbe leaf, tabs[MM_MAX_LEVELS];
	unsigned n = 0;
	walk_tabs(e->va, &leaf, tabs, &n);
	for (unsigned i = 0; i < n; i++)
		if (tabs[i].size == e->size)
			return tabs[i].pa == e->pa;
	return false;
}

/* After a commit: every usable translation of every hart that overlaps
 * [lo, hi) is consistent with the page table, and so is every table entry
 * in its walk cache. */
static void check_range(const char *when, uint64_t lo, uint64_t hi)
{
	for (unsigned h = 0; h < NHARTS; h++) {
		pthread_mutex_lock(&harts[h].mu);
		for (unsigned k = 0; k < WC_SIZE; k++) {
			const struct tlbe *e = &harts[h].wc[k];
			if (e->valid && overlaps(e->va, e->size, lo, hi))
				CHECK(table_current(e),
				      "%s: hart %u still caches table %#" PRIx64 " for %#" PRIx64 "+%#" PRIx64
				      ", which the page table no longer holds", when, h, e->pa, e->va, e->size);
		}
		for (unsigned k = 0; k < TLB_SIZE; k++) {
			const struct tlbe *e = &harts[h].tlb[k];
			if (!e->valid || !overlaps(e->va, e->size, lo, hi) ||
			    (lazy && covered_by_pending(&harts[h], e)))
				continue;
			CHECK(consistent(e),
			      "%s: hart %u can still use %#" PRIx64 "+%#" PRIx64 " -> %#" PRIx64
			      " prot %#x, which the page table no longer allows", when, h, e->va,
			      e->size, e->pa, e->prot);
		}
		pthread_mutex_unlock(&harts[h].mu);
	}
}

/* Would one hart holding both x and y (overlapping) hold two disagreeing
 * translations? Two leaves: unless the same page. Two tables: the same
 * level pointing to different children. A table and a leaf: the leaf is
 * a block at or above the table's level. */
static bool conflict(const struct tlbe *x, const struct tlbe *y)
{
	if (!x->table && !y->table)
		return x->size != y->size || x->pa != y->pa;
	if (x->table && y->table)
		return x->size == y->size && x->pa != y->pa;
	const struct tlbe *t = x->table ? x : y, *l = x->table ? y : x;
	return l->size >= t->size;
}

/* Put e into cache[0..n-1] of hart h (h->mu held) unless h holds it
 * already (a leaf with other permissions is replaced: no BBM needed for
 * that); fail the run if anything h holds conflicts with it. */
static void fill_checked(unsigned h, struct tlbe *cache, unsigned n, const struct tlbe *e)
{
	struct hart *ht = &harts[h];
	struct tlbe *same = NULL;
	for (unsigned arr = 0; arr < 2; arr++) {
		struct tlbe *c = arr ? ht->wc : ht->tlb;
		for (unsigned k = 0; k < (arr ? WC_SIZE : TLB_SIZE); k++) {
			if (!c[k].valid || !overlaps(c[k].va, c[k].size, e->va, e->va + e->size))
				continue;
			if (c[k].table == e->table && c[k].size == e->size && c[k].pa == e->pa) {
				same = &c[k];
				continue;
			}
			CHECK(!conflict(&c[k], e),
			      "TLB conflict: hart %u holds %s %#" PRIx64 "+%#" PRIx64 " -> %#" PRIx64
			      " and fills %s %#" PRIx64 "+%#" PRIx64 " -> %#" PRIx64
			      " (replaced without break-before-make)", h, c[k].table ? "table" : "leaf",
			      c[k].va, c[k].size, c[k].pa, e->table ? "table" : "leaf", e->va, e->size,
			      e->pa);
		}
	}
	if (same) {
		*same = *e;
		INC(nhit);
		return;
	}
	cache[rndn(n)] = *e;   /* random eviction */
	INC(nfill);
}

/* A simulated access by hart h: apply its queue, then hit or walk+fill. */
static void access_va(unsigned h, uint64_t va)
{
	struct hart *ht = &harts[h];
	pthread_mutex_lock(&ht->mu);
	if (lazy)
		apply_pending(ht);
	if (A->needs_bbm) {
		/* such hardware may walk at any time, also for what it holds */
		struct tlbe e, tabs[MM_MAX_LEVELS];
		unsigned n = 0;
		bool leaf = walk_tabs(va, &e, tabs, &n);
		for (unsigned i = 0; i < n; i++)
			fill_checked(h, ht->wc, WC_SIZE, &tabs[i]);
		if (leaf)
			fill_checked(h, ht->tlb, TLB_SIZE, &e);
		pthread_mutex_unlock(&ht->mu);
		return;
	}
	for (unsigned k = 0; k < TLB_SIZE; k++)
		if (ht->tlb[k].valid && overlaps(ht->tlb[k].va, ht->tlb[k].size, va, va + 1)) {
			INC(nhit);
			pthread_mutex_unlock(&ht->mu);
			return;
		}
	struct tlbe e;
	if (walk(va, &e)) {
		ht->tlb[rndn(TLB_SIZE)] = e;   /* random eviction */
		INC(nfill);
	}
	pthread_mutex_unlock(&ht->mu);
}

/* Is any hart able to reach frame [pa, pa+size)? */
static bool frame_reachable(uint64_t pa, uint64_t size, bool honour_pending)
{
	bool found = false;
	for (unsigned h = 0; h < NHARTS && !found; h++) {
		pthread_mutex_lock(&harts[h].mu);
		for (unsigned k = 0; k < TLB_SIZE; k++) {
			const struct tlbe *e = &harts[h].tlb[k];
			if (!e->valid || (honour_pending && covered_by_pending(&harts[h], e)))
				continue;
			if (e->pa < pa + size && pa < e->pa + e->size) {
				fprintf(stderr, "  hart %u entry va %#" PRIx64 " size %#" PRIx64
					" pa %#" PRIx64 " reaches frame %#" PRIx64 "+%#" PRIx64 "\n",
					h, e->va, e->size, e->pa, pa, size);
				found = true;
				break;
			}
		}
		pthread_mutex_unlock(&harts[h].mu);
	}
	return found;
}

/* Free parked frames whose flushes every hart has applied. */
static void release_parked(void)
{
	unsigned long min_gen = flush_gen;
	for (unsigned h = 0; h < NHARTS; h++)
		if (harts[h].gen < min_gen)
			min_gen = harts[h].gen;
	unsigned j = 0;
	for (unsigned i = 0; i < nparked; i++) {
		struct parked *p = &parked[i];
		if (p->gen <= min_gen) {
			uint64_t size = 1ull << pt_shift(A, p->level);
			CHECK(!frame_reachable(p->pa, size, false),
			      "frame %#" PRIx64 " freed while a hart can still reach it", p->pa);
			host_plat.frame_release(p->pa, p->level);
		} else {
			parked[j++] = *p;
		}
	}
	nparked = j;
}

/* --- the platform wrappers the core calls --- */
/* Every hart drops [start, end) now (each between two of its accesses). */
static void flush_all(uint64_t start, uint64_t end)
{
	for (unsigned h = 0; h < NHARTS; h++) {
		pthread_mutex_lock(&harts[h].mu);
		drop_range(&harts[h], start, end);
		pthread_mutex_unlock(&harts[h].mu);
	}
}

static void sim_tlb_flush(struct mm_as *a, uint64_t start, uint64_t end)
{
	unsigned long nth = INC(nflush);
	if (getenv("TLB_DEBUG"))
		fprintf(stderr, "  flush [%#" PRIx64 ", %#" PRIx64 ")\n", start, end);
	host_plat.tlb_flush(a, start, end);
	if (mutate && nth % 3 == 0)
		return;                     /* the seeded bug: a lost flush */
	if (lazy) {
		for (unsigned h = 0; h < NHARTS; h++)
			if (harts[h].npend == MAX_PENDING)
				apply_pending(&harts[h]);   /* queue full: flush now */
		flush_gen++;
		for (unsigned h = 0; h < NHARTS; h++) {
			struct hart *ht = &harts[h];
			ht->pend_lo[ht->npend] = start;
			ht->pend_hi[ht->npend++] = end;
		}
		return;
	}
	flush_all(start, end);
}

/* Break-before-make: complete on every hart before it returns, also in
 * --lazy mode (whose queues only model tlb_flush). */
static void sim_tlb_flush_bbm(struct mm_as *a, uint64_t start, uint64_t end)
{
	INC(nbbm);
	if (getenv("TLB_DEBUG"))
		fprintf(stderr, "  bbm flush [%#" PRIx64 ", %#" PRIx64 ")\n", start, end);
	host_plat.tlb_flush_bbm(a, start, end);
	flush_all(start, end);
}

static void sim_frame_release(uint64_t pa, unsigned level)
{
	INC(nrelease);
	if (getenv("TLB_DEBUG"))
		fprintf(stderr, "  release %#" PRIx64 " L%u\n", pa, level);
	uint64_t size = 1ull << pt_shift(A, level);
	if (!lazy) {
		CHECK(!frame_reachable(pa, size, false),
		      "frame %#" PRIx64 " released while a hart can still reach it", pa);
		host_plat.frame_release(pa, level);
		return;
	}
	/* lazy: usable translations must already be gone; queued ones hold
	 * the frame until their hart has flushed */
	CHECK(!frame_reachable(pa, size, true),
	      "frame %#" PRIx64 " released with a usable translation to it", pa);
#ifdef TLB_MUTANT_FREE_AT_ACK
	/* Seeded bug: free at the acknowledgement, queues not yet applied. */
	CHECK(!frame_reachable(pa, size, false),
	      "frame %#" PRIx64 " freed while a hart can still reach it", pa);
	host_plat.frame_release(pa, level);
	return;
#endif
	if (nparked == MAX_PARKED) {
		/* no room: interrupt every hart so it flushes, then free */
		for (unsigned h = 0; h < NHARTS; h++)
			apply_pending(&harts[h]);
		release_parked();
	}
	parked[nparked++] = (struct parked){ pa, level, flush_gen };
}

/* --- the workload --- */
static uint64_t rnd_va_in(uint64_t lo, uint64_t hi)
{
	return lo + rndn((hi - lo) / PG) * PG;
}

static void rnd_access(uint64_t lo, uint64_t hi)
{
	for (unsigned n = 1 + (unsigned)rndn(6); n; n--)
		access_va(nthreads > 1 ? my_hart : (unsigned)rndn(NHARTS), rnd_va_in(lo, hi));
}

static void one_op(struct mm_cursor *c, uint64_t lo, uint64_t hi)
{
	unsigned prot = MM_PROT_R | MM_PROT_W | MM_PROT_U;
	switch (rndn(6)) {
	case 0:
	case 1: {   /* map 4 KiB, sometimes COW (read-only) */
		uint64_t va = rnd_va_in(lo, hi), pa = host_frame_alloc(1);
		if (pa == MM_NOFRAME)
			return;
		int r = mm_map(c, va, pa, 1, prot, rndn(4) ? 0 : MM_MAP_COW);
		if (getenv("TLB_DEBUG"))
			fprintf(stderr, "  map %#" PRIx64 " -> %#" PRIx64 ": %d\n", va, pa, r);
		if (r != MM_OK)
			host_frame_free(pa, 1);
		break;
	}
	case 2: {   /* map 2 MiB where the locked range holds a whole block */
		uint64_t b = (lo + MB2 - 1) & ~(MB2 - 1);
		if (b + MB2 > hi || !(A->leaf_levels & (1u << 2)))
			return;
		uint64_t pa = host_frame_alloc(2);
		if (pa == MM_NOFRAME)
			return;
		if (mm_map(c, b, pa, 2, prot, 0) != MM_OK)
			host_frame_free(pa, 2);
		break;
	}
	case 3: {   /* mark reserved: only succeeds over unmapped pages */
		struct mm_status st = { .kind = MM_RESERVED, .prot = (uint8_t)prot };
		uint64_t va = rnd_va_in(lo, hi);
		uint64_t len = (1 + rndn((hi - va) / PG)) * PG;
		(void)mm_mark(c, va, len, &st);
		break;
	}
	default: {  /* unmap a sub-range: may remove leaves, split huge pages */
		uint64_t va = rnd_va_in(lo, hi);
		uint64_t n = (hi - va) / PG;
		uint64_t len = (1 + (rndn(3) ? rndn(n < 4 ? n : 4) : rndn(n))) * PG;
		if (getenv("TLB_DEBUG"))
			fprintf(stderr, "  unmap %#" PRIx64 " +%#" PRIx64 "\n", va, len);
		CHECK(mm_unmap(c, va, len) == MM_OK, "unmap failed");
		break;
	}
	}
}

static void rnd_lock_range(uint64_t *lo, uint64_t *hi)
{
	uint64_t n;
	if (nthreads > 1) {
		/* a sub-range of one of this thread's chunks */
		uint64_t c = rndn(WIN_PAGES / CHUNK / nthreads) * nthreads + my_hart;
		uint64_t a = rndn(CHUNK);
		n = 1 + rndn(CHUNK - a);
		*lo = base + (c * CHUNK + a) * PG;
		*hi = *lo + n * PG;
		return;
	}
	switch (rndn(4)) {
	case 0: n = WIN_PAGES; break;
	case 1: n = 512; break;
	default: n = 1 + rndn(16); break;
	}
	uint64_t s = rndn(WIN_PAGES - n + 1);
	if (n == 512)
		s = rndn(2) * 512;
	*lo = base + s * PG;
	*hi = *lo + n * PG;
}

struct worker {
	unsigned id;
	long steps;
	uint64_t seed;
};

/* One thread's transactions: lock a range, a few operations with harts
 * walking in between, commit, check. */
static void *worker_main(void *arg)
{
	const struct worker *w = arg;
	rng = w->seed ? w->seed : 1;
	my_hart = w->id;
	for (long st = 0; st < w->steps && !__atomic_load_n(&fails, __ATOMIC_RELAXED); st++) {
		uint64_t lo, hi;
		rnd_lock_range(&lo, &hi);
		rnd_access(base, base + WIN_PAGES * PG);
		struct mm_cursor c;
		if (getenv("TLB_DEBUG"))
			fprintf(stderr, " lock [%#" PRIx64 ", %#" PRIx64 ")\n", lo, hi);
		int err = mm_lock(&c, &as, lo, hi);
		CHECK(err == MM_OK, "lock: %s", mm_strerror(err));
		if (err)
			break;
		for (unsigned k = 1 + (unsigned)rndn(3); k; k--) {
			one_op(&c, lo, hi);
			/* harts walk while the transaction is open */
			rnd_access(lo, hi);
		}
		mm_release(&c);
		INC(ncommit);
		/* alone: every translation; threaded: only our own range, which
		 * nobody else may change */
		if (nthreads > 1)
			check_range("after commit", lo, hi);
		else
			check_range("after commit", 0, ~0ull);
		if (lazy && rndn(4) == 0)
			release_parked();
		host_rcu_poll();
	}
	if (nthreads > 1)
		host_pool_drain();
	return NULL;
}

int main(int argc, char **argv)
{
	const char *arch = "sv39", *proto = "adv";
	long steps = 20000;
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	int print_bbm = 0;
	if (mm_arch_list_requested(argc, argv))
		return 0;
	for (int i = 1; i < argc; i++) {
		if (arg_arch_mm(argc, argv, &i, &arch, &proto))
			continue;
		if (!strcmp(argv[i], "--steps") && i + 1 < argc)
			steps = atol(argv[++i]);
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed ^= strtoull(argv[++i], NULL, 0) * 0x2545f4914f6cdd1dull;
		else if (!strcmp(argv[i], "--threads") && i + 1 < argc)
			nthreads = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--lazy"))
			lazy = 1;
		else if (!strcmp(argv[i], "--mutate"))
			mutate = 1;
		else if (!strcmp(argv[i], "--print-bbm"))
			print_bbm = 1;
		else {
			fprintf(stderr, "usage: tlb --arch %s --mm P [--lazy | --threads T] [--steps N] "
				"[--seed N] [--mutate]\n       tlb --arch A --print-bbm\n       tlb --list-arch\n", mm_arch_names());
			return 2;
		}
	}
	A = mm_arch_by_name(arch);
	P = mm_proto_by_name(proto);
	if (!A || !P || steps < 1 || !(nthreads == 1 || nthreads == 2 || nthreads == 4) ||
	    (nthreads > 1 && lazy)) {
		fprintf(stderr, "tlb: bad --arch, --mm, --steps or --threads (1, 2, 4; not with --lazy)\n");
		return 2;
	}
	if (print_bbm) {
		printf("%d\n", A->needs_bbm);
		return 0;
	}
	if (lazy && A->needs_bbm) {
		printf("tlb %s: --lazy does not apply to a table that needs break-before-make "
		       "(its tlb_flush must be complete on return): skipped\n", A->name);
		return 77;
	}
	for (unsigned h = 0; h < NHARTS; h++)
		pthread_mutex_init(&harts[h].mu, NULL);
	host_init((size_t)1 << 15);
	plat = host_plat;
	plat.tlb_flush = sim_tlb_flush;
	plat.tlb_flush_bbm = sim_tlb_flush_bbm;
	plat.frame_release = sim_frame_release;
	/* two 2 MiB blocks straddling 1 GiB: different root entries too */
	base = (1ull << 30) - MB2;
	int err = mm_as_init(&as, A, P, &plat, A->user_lo, A->user_last, NULL);
	if (err != MM_OK) {
		fprintf(stderr, "tlb: as_init: %s\n", mm_strerror(err));
		return 1;
	}
	pthread_t tid[NHARTS];
	struct worker w[NHARTS];
	for (unsigned t = 0; t < nthreads; t++) {
		w[t] = (struct worker){ t, steps, seed ^ (0x9e3779b97f4a7c15ull * (t + 1)) };
		if (nthreads == 1)
			worker_main(&w[t]);
		else if (pthread_create(&tid[t], NULL, worker_main, &w[t])) {
			fprintf(stderr, "tlb: pthread_create failed\n");
			return 1;
		}
	}
	if (nthreads > 1)
		for (unsigned t = 0; t < nthreads; t++)
			pthread_join(tid[t], NULL);
	/* tear down; every hart takes its pending flushes; all goes back */
	mm_as_destroy(&as);
	host_rcu_barrier();
	for (unsigned h = 0; h < NHARTS; h++)
		apply_pending(&harts[h]);
	release_parked();
	CHECK(nparked == 0, "%u frames still parked", nparked);
	host_pool_drain();
	CHECK(host_frames_used() == 0, "%zu frames not returned", host_frames_used());
	host_fini();
	printf("tlb %s %s%s%s: %lu commits, %lu flush requests, %lu break-before-make flushes, "
	       "%lu TLB fills, %lu hits, %lu frames released: %s\n", A->name, P->name,
	       lazy ? " lazy" : "", nthreads > 1 ? (nthreads == 2 ? " 2 threads" : " 4 threads") : "",
	       ncommit, nflush, nbbm, nfill, nhit, nrelease, fails ? "FAILED" : "coherent");
	return fails ? 1 : 0;
}
