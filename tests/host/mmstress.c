/* mmstress: N threads run random transactions on overlapping (--overlap
 * high: one shared window) or disjoint (--overlap low: a slot each) ranges
 * of one address space.
 *
 * The spec array is shared and written WITHOUT atomics, only for pages
 * inside the range the writer holds: if two transactions ever held
 * overlapping ranges, the checks below (and ThreadSanitizer) see it.
 * Each transaction checks its whole range against the spec right after
 * lock and right before release (nobody else changed it while held),
 * checks every operation's result against the spec, and writes a token
 * unique to the transaction (a pager tag) to make foreign changes visible.
 * At the end: tree == spec, tree well-formed, every frame back.
 * Exit 0 iff every check held. */
#include "arch_registry.h"
#include "host_platform.h"
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

#define PG MM_PAGE_SIZE
#define MB2 (1ull << 21)

static const struct pt_arch *A;
static const struct mm_protocol *P;
static struct mm_as as;
static struct spec sp;
static int nthreads = 4;
static long total_ops = 10000;
static uint64_t seed = 1;
static bool high = true;
static uint64_t window;   /* 0: 2048 shared pages (high), 1024 per thread (low) */
static atomic_int failed;
static atomic_long n_map, n_mark, n_unmap, n_query, n_txn;

#define FAILF(...)                                                    \
	do {                                                          \
		fprintf(stderr, "mmstress FAIL: " __VA_ARGS__);       \
		fputc('\n', stderr);                                  \
		atomic_store(&failed, 1);                             \
	} while (0)

struct th {
	pthread_t tid;
	int id;
	uint64_t rng;
	uint64_t lo, npages;   /* the window this thread draws ranges from */
	long ops;
	struct spec_page *mine;   /* private model of the range held */
};

static uint64_t rndn(struct th *t, uint64_t n) { return xorshift64_below(&t->rng, n); }

static bool check_range(struct mm_cursor *c, struct spec *want, uint64_t lo, uint64_t hi,
			const char *when)
{
	for (uint64_t va = lo; va < hi; va += PG) {
		struct mm_info in;
		int err = mm_query(c, va, &in);
		atomic_fetch_add_explicit(&n_query, 1, memory_order_relaxed);
		if (err) {
			FAILF("query %#" PRIx64 ": %s", va, mm_strerror(err));
			return false;
		}
		if (spec_check_info(want, va, &in, when)) {
			FAILF("range [%#" PRIx64 ", %#" PRIx64 ") changed under its holder (%s)", lo, hi, when);
			return false;
		}
	}
	return true;
}

static bool same_pages(const struct spec_page *a, const struct spec_page *b, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		if (a[i].kind != b[i].kind || a[i].prot != b[i].prot || a[i].dev != b[i].dev ||
		    a[i].pa != b[i].pa || a[i].arg != b[i].arg)
			return false;
	return true;
}

static void sub(struct th *t, uint64_t lo, uint64_t hi, uint64_t *va, uint64_t *len)
{
	uint64_t n = (hi - lo) / PG, a = rndn(t, n), b = rndn(t, n);
	if (a > b) {
		uint64_t x = a;
		a = b;
		b = x;
	}
	*va = lo + a * PG;
	*len = (b - a + 1) * PG;
}

/* Apply an operation to the core, to the transaction's private model and
 * to the shared spec: all three must agree. */
static void one_op(struct th *t, struct mm_cursor *c, struct spec *mine, uint64_t lo, uint64_t hi,
		   uint64_t token)
{
	uint64_t va = 0, len;
	int got, want, shared;
	switch (rndn(t, 6)) {
	case 0:
	case 1: {
		unsigned level = 1;
		uint64_t blo = (lo + MB2 - 1) & ~(MB2 - 1);
		if (rndn(t, 4) == 0 && blo + MB2 <= hi) {
			level = 2;
			va = blo + rndn(t, (hi - blo) / MB2) * MB2;
		} else {
			va = lo + rndn(t, (hi - lo) / PG) * PG;
		}
		uint64_t pa = host_frame_alloc(level);
		if (pa == MM_NOFRAME) {
			FAILF("arena exhausted");
			return;
		}
		unsigned prot = MM_PROT_R | (rndn(t, 2) ? MM_PROT_W : 0) | MM_PROT_U;
		unsigned flags = rndn(t, 6) == 0 ? MM_MAP_COW : 0;
		want = spec_map(mine, va, pa, 1ull << pt_shift(A, level), prot, flags);
		shared = spec_map(&sp, va, pa, 1ull << pt_shift(A, level), prot, flags);
		got = mm_map(c, va, pa, level, prot, flags);
		if (got != MM_OK)
			host_frame_free(pa, level);
		atomic_fetch_add_explicit(&n_map, 1, memory_order_relaxed);
		break;
	}
	case 2:
	case 3: {
		sub(t, lo, hi, &va, &len);
		struct mm_status st = { .kind = MM_PAGER, .prot = MM_PROT_R, .arg = token };
		if (rndn(t, 3) == 0)
			st = (struct mm_status){ .kind = MM_RESERVED, .prot = MM_PROT_R | MM_PROT_W };
		else if (rndn(t, 4) == 0)
			st = (struct mm_status){ .kind = MM_SWAPPED, .dev = (uint8_t)t->id, .arg = token };
		want = spec_mark(mine, va, len, &st);
		shared = spec_mark(&sp, va, len, &st);
		got = mm_mark(c, va, len, &st);
		atomic_fetch_add_explicit(&n_mark, 1, memory_order_relaxed);
		break;
	}
	default:
		sub(t, lo, hi, &va, &len);
		want = spec_unmap(mine, va, len);
		shared = spec_unmap(&sp, va, len);
		got = mm_unmap(c, va, len);
		atomic_fetch_add_explicit(&n_unmap, 1, memory_order_relaxed);
		break;
	}
	if (got != want || shared != want)
		FAILF("op on %#" PRIx64 ": core %s, private model %s, shared spec %s", va,
		      mm_strerror(got), mm_strerror(want), mm_strerror(shared));
}

static atomic_int go;

static void *worker(void *arg)
{
	struct th *t = arg;
	while (!atomic_load(&go))
		sched_yield();
	for (long k = 0; k < t->ops && !atomic_load(&failed); k++) {
		uint64_t n;
		switch (rndn(t, 16)) {
		case 0: n = 1 + rndn(t, t->npages); break;
		case 1: case 2: n = 512; break;
		default: n = 1 + rndn(t, 16); break;
		}
		if (n > t->npages)
			n = t->npages;
		uint64_t s = rndn(t, t->npages - n + 1);
		if (n == 512)
			s &= ~511ull;
		uint64_t lo = t->lo + s * PG, hi = lo + n * PG;
		struct mm_cursor c;
		int err = mm_lock(&c, &as, lo, hi);
		if (err) {
			FAILF("lock: %s", mm_strerror(err));
			break;
		}
		uint64_t token = (((uint64_t)t->id << 28) | (uint64_t)k) & MM_STATUS_ARG_MAX;
		if (check_range(&c, &sp, lo, hi, "at lock")) {
			/* private copy of our range: only we change it */
			struct spec mine = { .base = lo, .npages = n, .mem_types = sp.mem_types,
					     .pg = t->mine };
			memcpy(mine.pg, spec_at(&sp, lo), n * sizeof(*mine.pg));
			unsigned nops = 1 + (unsigned)rndn(t, 3);
			for (unsigned i = 0; i < nops; i++) {
				one_op(t, &c, &mine, lo, hi, token);
				if (rndn(t, 8) == 0)
					sched_yield();   /* let others pile up on our range */
			}
			if (check_range(&c, &mine, lo, hi, "before release") &&
			    !same_pages(mine.pg, spec_at(&sp, lo), n))
				FAILF("someone else wrote the spec of [%#" PRIx64 ", %#" PRIx64 ")", lo, hi);
		}
		mm_release(&c);
		atomic_fetch_add_explicit(&n_txn, 1, memory_order_relaxed);
		if (k % 32 == 0)
			host_rcu_poll();
	}
	host_pool_drain();
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: mmstress --arch %s --mm adv|rw|vma --threads N --ops N "
			"--seed N --overlap low|high [--window PAGES] [--lock queue|tas]\n"
			"       mmstress --list-arch\n", mm_arch_names());
	exit(2);
}

int main(int argc, char **argv)
{
	const char *arch = "sv39", *mm = "adv";
	if (mm_arch_list_requested(argc, argv))
		return 0;
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			usage();
		const char *o = argv[i], *v = argv[++i];
		if (!strcmp(o, "--arch"))
			arch = v;
		else if (!strcmp(o, "--mm"))
			mm = v;
		else if (!strcmp(o, "--threads"))
			nthreads = atoi(v);
		else if (!strcmp(o, "--ops"))
			total_ops = atol(v);
		else if (!strcmp(o, "--seed"))
			seed = strtoull(v, NULL, 0);
		else if (!strcmp(o, "--window"))   /* pages: shared window (high) or slot (low) */
			window = strtoull(v, NULL, 0);
		else if (!strcmp(o, "--overlap"))
			high = !strcmp(v, "high") ? true : !strcmp(v, "low") ? false : (usage(), false);
		else if (strcmp(o, "--lock") || host_lock_select(v))   /* queue | tas */
			usage();
	}
	A = mm_arch_by_name(arch);
	P = mm_proto_by_name(mm);
	if (!P && !strcmp(mm, "nolock"))   /* seeded bug, for the expected-failure test */
		P = &host_proto_nolock;
	if (!A || !P || nthreads < 1 || total_ops < 0)
		usage();
	host_init((size_t)1 << 18);
	if (mm_as_init(&as, A, P, &host_plat, A->user_lo, A->user_last, NULL)) {
		fprintf(stderr, "as_init failed\n");
		return 1;
	}
	/* high: 2048 shared pages straddling the 1 GiB boundary; low: one slot
	 * of slot_pages per thread, side by side from there */
	if (!window)
		window = high ? 2048 : 1024;
	if (window < 2 || window > 65536)
		usage();
	uint64_t slot_pages = window;
	uint64_t base = (1ull << 30) - (window / 2) * PG;
	uint64_t npages = high ? window : slot_pages * (uint64_t)nthreads;
	spec_init(&sp, base, npages, A->mem_types);
	struct th *ts = calloc((size_t)nthreads, sizeof(*ts));
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < nthreads; i++) {
		ts[i].id = i;
		ts[i].rng = (seed + 1) * 0x9E3779B97F4A7C15ull + (uint64_t)i * 0xBF58476D1CE4E5B9ull + 1;
		ts[i].lo = high ? base : base + (uint64_t)i * slot_pages * PG;
		ts[i].npages = high ? npages : slot_pages;
		ts[i].ops = total_ops / nthreads + (i < total_ops % nthreads);
		ts[i].mine = calloc(ts[i].npages, sizeof(struct spec_page));
		pthread_create(&ts[i].tid, NULL, worker, &ts[i]);
	}
	atomic_store(&go, 1);
	for (int i = 0; i < nthreads; i++)
		pthread_join(ts[i].tid, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	host_rcu_barrier();

	/* tree == spec */
	struct mm_cursor c;
	if (mm_lock(&c, &as, base, base + npages * PG) == MM_OK) {
		check_range(&c, &sp, base, base + npages * PG, "final");
		mm_release(&c);
	} else {
		FAILF("final lock");
	}
	const char *why = NULL;
	if (mm_wf_check(&as, &why))
		FAILF("tree not well-formed: %s", why);
	mm_as_destroy(&as);
	host_rcu_barrier();
	host_pool_drain();
	size_t left = host_frames_used();
	if (left)
		FAILF("%zu frames not returned", left);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	printf("mmstress arch=%s mm=%s threads=%d overlap=%s txns=%ld maps=%ld marks=%ld unmaps=%ld "
	       "queries=%ld tlb_flushes=%lu time=%.2fs frames_left=%zu: %s\n",
	       arch, mm, nthreads, high ? "high" : "low", atomic_load(&n_txn), atomic_load(&n_map),
	       atomic_load(&n_mark), atomic_load(&n_unmap), atomic_load(&n_query), host_tlb_flushes(),
	       secs, left, atomic_load(&failed) ? "FAIL" : "ok");
	spec_free(&sp);
	for (int i = 0; i < nthreads; i++)
		free(ts[i].mine);
	free(ts);
	host_fini();
	return atomic_load(&failed) ? 1 : 0;
}
