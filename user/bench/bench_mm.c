/* The five memory microbenchmarks (docs/performance.md), run
 * through the system calls and the fault path every user program has:
 * "map anonymous RW" is a region transaction ROP_MARK PROT_R|PROT_W on
 * our own region cap (filled by the kernel's fault path on first touch),
 * "unmap" is ROP_UNMAP.
 *
 *   mmap        map 16 KiB
 *   mmap-pf     map 4 KiB, write its first byte
 *   pf          (the whole region mapped first) write a byte of a fresh page
 *   unmap-virt  (the region mapped, never touched) unmap 4 KiB
 *   unmap       (the region mapped, every page touched) unmap 4 KiB: frees
 *               the frame and flushes the page on every hart that ran us
 *
 * A run starts T threads, thread i pinned to hart i, released together by
 * a flag; each makes BM_WARM requests, then the timed ones, and records
 * the rdtime at the start and end of its timed window (and rdinstret over
 * it). A run whose shortest window is under 10 ms is made again with more
 * timed requests (bm_next_timed), so the windows are long next to the
 * threads' start skew and the clock's 100 ns tick; the line printed is the
 * last run's. Request j of thread i works at BM_BASE + i*slot + j*size,
 * where the slot is padded to a multiple of 2 MiB (as the paper's artifact
 * and the host mmbench do): at low contention each thread has leaf
 * page-table pages of its own; at high contention all offsets are shuffled
 * together (fixed seed), so threads hit random places of one shared region.
 *
 * With more than one thread the line also says how the windows lay:
 * union_ns (first start to last end), overlap_ns (latest start to
 * earliest end, 0 if none), overlap_pct, concurrent (overlap at least 90%
 * of the union) and ops_per_sec_union; ops_per_sec is that union rate
 * too, so a run whose threads took turns does not count as parallel. */
#include "ulib.h"
#include "bench.h"
#include "testlib.h"

#define BM_BASE 0x2000000000UL   /* 128 GiB: no other program uses it; below Sv39's top */
#define BM_WARM 16                /* untimed requests first: code, caches and TLB warm */
#define BM_TIMED_MIN 16           /* timed requests per thread in a first run */
#define BM_TIMED_MAX 16384        /* per thread */
#define BM_TOTAL_MAX 32768        /* requests of all threads: frames for at most 128 MiB */
#define BM_WINDOW_TICKS (ticks_per_sec() / 100)   /* 10 ms: each thread's window at least */
#define BM_PAD (512 * BENCH_PG)   /* one leaf page-table page */
#define BM_MAX_THREADS 64
#define BM_PRIO 1                 /* the shell's own level: it must get a turn on a yield */
#define BM_SEED 0x9e3779b97f4a7c15UL

enum bm_kind { BM_MMAP, BM_MMAP_PF, BM_PF, BM_UNMAP_VIRT, BM_UNMAP, BM_N };
static const char *const bm_names[BM_N] = { "mmap", "mmap-pf", "pf", "unmap-virt", "unmap" };

/* go: 0 wait, 1 run, 2 give up (the run could not start every thread). */
enum { GO_WAIT, GO_RUN, GO_ABORT };

struct bm_run;
struct bm_thread {
	struct bm_run *run;
	int id;
	long err;                  /* the first request that failed */
	uint64_t t0, t1;           /* rdtime at the start and end of the timed requests */
	uint64_t instret;          /* rdinstret over them */
};

struct bm_run {
	enum bm_kind kind;
	int reqs;                  /* requests per thread: BM_WARM + the timed */
	long done_ep;              /* each thread sends here when done */
	int ready, go;             /* atomic */
	uint32_t off[BM_TOTAL_MAX];   /* page index of each request from BM_BASE, thread by thread */
	struct bm_thread th[BM_MAX_THREADS];
};
/* The run's state (about 131 KiB) lives in anonymous memory of its own at
 * BM_RUN_VA while the command runs, not in init's bss: every task spawned
 * from init's ELF would pay for it. */
#define BM_RUN_VA (BM_BASE - 0x100000UL)
#define BM_RUN_LEN ((sizeof(struct bm_run) + BENCH_PG - 1) & ~(BENCH_PG - 1))
_Static_assert(BM_RUN_LEN <= 0x100000UL, "struct bm_run fits below BM_BASE");
_Static_assert(BM_TOTAL_MAX / BM_MAX_THREADS > BM_WARM, "every thread count gets timed requests");

/* How the threads' timed windows of one run lay, in rdtime ticks. */
struct bm_span {
	uint64_t first_start, last_start, first_end, last_end;
	uint64_t shortest, longest;   /* one thread's window */
	uint64_t instret;             /* over all threads */
	int clock;                    /* rdinstret was -icount's clock (bench_instret_is_clock) */
};

static int bm_find(const char *name)
{
	for (int k = 0; k < BM_N; k++)
		if (!strcmp(name, bm_names[k]))
			return k;
	return -1;
}

int bench_mm_known(const char *name) { return !strcmp(name, "all") || bm_find(name) >= 0; }


/* Fill r->off for n threads of r->reqs requests; returns the span of the
 * region they use. */
static uint64_t bm_layout(struct bm_run *r, int n, int high)
{
	uint64_t size = r->kind == BM_MMAP ? 4 * BENCH_PG : BENCH_PG;
	uint64_t slot = ((uint64_t)r->reqs * size + BM_PAD - 1) / BM_PAD * BM_PAD;
	int total = n * r->reqs;
	for (int i = 0; i < total; i++)
		r->off[i] = (uint32_t)(((uint64_t)(i / r->reqs) * slot +
					(uint64_t)(i % r->reqs) * size) / BENCH_PG);
	uint64_t s = BM_SEED;
	for (int i = total - 1; high && i > 0; i--) {
		int k = (int)(xorshift64(&s) % (uint64_t)(i + 1));
		uint32_t x = r->off[i];
		r->off[i] = r->off[k];
		r->off[k] = x;
	}
	return slot * (uint64_t)n;
}

/* What the region holds before the threads start: nothing (mmap,
 * mmap-pf), all of it mapped (pf, unmap-virt), mapped and touched (unmap). */
static long bm_setup(enum bm_kind k, uint64_t span)
{
	if (k == BM_MMAP || k == BM_MMAP_PF)
		return 0;
	long r = mem_reserve(BM_BASE, span);
	for (uint64_t o = 0; !r && k == BM_UNMAP && o < span; o += BENCH_PG)
		*(volatile char *)(BM_BASE + o) = 1;
	return r;
}

/* One request of the benchmark at va: 0 or -E_*. */
static long bm_request(enum bm_kind k, uint64_t va)
{
	long r = 0;
	switch (k) {
	case BM_MMAP:
		return mem_reserve(va, 4 * BENCH_PG);
	case BM_MMAP_PF:
		r = mem_reserve(va, BENCH_PG);
		if (!r)
			*(volatile char *)va = 1;
		return r;
	case BM_PF:
		*(volatile char *)va = 1;
		return 0;
	default:
		return bench_unmap(va, BENCH_PG);
	}
}

/* A benchmark thread: wait for the flag, make the requests, record the
 * window of all but the first BM_WARM, report on the done endpoint. */
static void bm_worker(void *a)
{
	struct bm_thread *t = a;
	struct bm_run *r = t->run;
	const uint32_t *off = &r->off[t->id * r->reqs];
	__atomic_add_fetch(&r->ready, 1, __ATOMIC_ACQ_REL);
	int go;
	while ((go = __atomic_load_n(&r->go, __ATOMIC_ACQUIRE)) == GO_WAIT)
		sys_yield();
	if (go != GO_RUN)
		return;
	uint64_t i0 = 0;
	for (int j = 0; j < r->reqs && !t->err; j++) {
		if (j == BM_WARM) {
			t->t0 = rdtime();
			i0 = rdinstret();
		}
		t->err = bm_request(r->kind, BM_BASE + (uint64_t)off[j] * BENCH_PG);
	}
	t->instret = rdinstret() - i0;
	t->t1 = rdtime();
	uint64_t w[4] = { (uint64_t)t->id, 0, 0, 0 };
	ipc(SYS_SEND, r->done_ep, w, SLOT_NONE);
}

/* Start n pinned threads on r (slots in slots[]): how many started; the
 * first error in *err. */
static int bm_start(struct bm_run *r, int n, long *slots, long *err)
{
	int i = 0;
	for (; i < n && !*err; i++) {
		r->th[i] = (struct bm_thread){ .run = r, .id = i };
		slots[i] = uthread_start(bm_worker, &r->th[i], i, BM_PRIO);
		if (slots[i] < 0) {
			*err = slots[i];
			break;
		}
	}
	return i;
}

/* One run of benchmark k with n threads of timed requests each; the
 * windows are in r->th[0..n). 0, or -E_* with *what naming the step that
 * failed. Leaves the region empty and no slot behind. */
static long bm_once(struct bm_run *r, enum bm_kind k, int n, int high, int timed,
		    const char **what)
{
	long slots[BM_MAX_THREADS];
	r->kind = k;
	r->reqs = BM_WARM + timed;
	r->ready = 0;
	r->go = GO_WAIT;
	uint64_t span = bm_layout(r, n, high);
	*what = "set-up";
	long err = bm_setup(k, span);
	r->done_ep = slot_alloc();
	if (!err)
		err = r->done_ep < 0 ? r->done_ep : ep_create(r->done_ep);
	int started = err ? 0 : bm_start(r, n, slots, &err);
	if (err) {
		__atomic_store_n(&r->go, GO_ABORT, __ATOMIC_RELEASE);
		if (started < n)
			*what = "thread start";
	} else {
		while (__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE) < n)
			sys_yield();
		__atomic_store_n(&r->go, GO_RUN, __ATOMIC_RELEASE);
		uint64_t w[4] = { 0 };
		for (int i = 0; i < n && !err; i++)
			err = ipc(SYS_RECV, r->done_ep, w, SLOT_NONE).a0;
		*what = "wait";
	}
	for (int i = 0; i < n && !err; i++)
		if (r->th[i].err)
			err = r->th[i].err, *what = "request";
	long un = bench_unmap(BM_BASE, span);
	for (int i = 0; i < started; i++)
		cap_delete(slots[i]), slot_release(slots[i]);
	if (r->done_ep >= 0)
		cap_delete(r->done_ep), slot_release(r->done_ep);
	if (!err && un)
		err = un, *what = "clean-up";
	return err;
}

/* The windows of r->th[0..n) after a run that succeeded. rdtime is one
 * counter for all harts, so the threads' readings compare. */
static struct bm_span bm_windows(const struct bm_run *r, int n)
{
	struct bm_span s = { .first_start = UINT64_MAX, .first_end = UINT64_MAX,
			     .shortest = UINT64_MAX, .clock = 1 };
	for (int i = 0; i < n; i++) {
		const struct bm_thread *t = &r->th[i];
		uint64_t len = t->t1 - t->t0;
		s.first_start = t->t0 < s.first_start ? t->t0 : s.first_start;
		s.last_start = t->t0 > s.last_start ? t->t0 : s.last_start;
		s.first_end = t->t1 < s.first_end ? t->t1 : s.first_end;
		s.last_end = t->t1 > s.last_end ? t->t1 : s.last_end;
		s.shortest = len < s.shortest ? len : s.shortest;
		s.longest = len > s.longest ? len : s.longest;
		s.instret += t->instret;
		s.clock = s.clock && bench_instret_is_clock(len, t->instret);
	}
	return s;
}

/* The most timed requests per thread for n threads: a power of two within
 * BM_TIMED_MAX, and n * (BM_WARM + it) within BM_TOTAL_MAX. */
static int bm_timed_cap(int n)
{
	int room = BM_TOTAL_MAX / n - BM_WARM, cap = BM_TIMED_MIN;
	while (cap * 2 <= room && cap * 2 <= BM_TIMED_MAX)
		cap *= 2;
	return cap;
}

/* The timed requests per thread for the next run after one of timed
 * requests whose shortest window was shortest ticks: timed itself when
 * that window reached 10 ms or timed is the cap, else at least twice
 * timed, a power-of-two multiple aimed at 1.25 times 10 ms, within cap. */
static int bm_next_timed(int timed, uint64_t shortest, int cap)
{
	if (shortest >= BM_WINDOW_TICKS || timed >= cap)
		return timed;
	uint64_t want = (uint64_t)timed * BM_WINDOW_TICKS * 5 / 4 / (shortest ? shortest : 1);
	int next = timed * 2;
	while ((uint64_t)next < want && next < cap)
		next *= 2;
	return next < cap ? next : cap;
}

/* Print the line of a run of k with n threads of timed requests each whose
 * windows were s: the standard fields, and for n > 1 how the windows lay. */
static void bm_print(enum bm_kind k, int n, int high, int timed, const struct bm_span *s)
{
	struct bench_line l = { .bench = bm_names[k], .contention = high ? "high" : "low",
				.threads = n, .ops = (unsigned long)n * (unsigned long)timed,
				.per_thread = (unsigned long)timed, .ticks = s->longest,
				.instret = s->instret, .instret_clock = s->clock };
	char extra[192], pct[32];
	if (n > 1) {
		uint64_t un = s->last_end - s->first_start;
		uint64_t ov = s->first_end > s->last_start ? s->first_end - s->last_start : 0;
		l.union_ticks = un;
		snprintf(extra, sizeof extra,
			 "\"union_ns\":%lu,\"overlap_ns\":%lu,\"overlap_pct\":%s,\"concurrent\":%s,"
			 "\"ops_per_sec_union\":%lu",
			 BENCH_NS(un), BENCH_NS(ov), bench_tenths(pct, sizeof pct, ov * 100, un),
			 un && ov * 10 >= un * 9 ? "true" : "false", bench_rate(l.ops, un));
		l.extra = extra;
	}
	bench_print(&l);
}

/* Benchmark k with n threads: runs with more timed requests until every
 * thread's window is at least 10 ms or the cap is reached, then prints the
 * last run's line. 0, or 1 after printing what failed. */
static int bm_point(struct bm_run *r, enum bm_kind k, int n, int high)
{
	int timed = BM_TIMED_MIN, cap = bm_timed_cap(n);
	for (;;) {
		const char *what;
		long err = bm_once(r, k, n, high, timed, &what);
		if (err) {
			printf("bench: %s %s %d threads: %s failed: %s\n", bm_names[k],
			       high ? "high" : "low", n, what, err_name(err));
			return 1;
		}
		struct bm_span s = bm_windows(r, n);
		int next = bm_next_timed(timed, s.shortest, cap);
		if (next == timed) {
			bm_print(k, n, high, timed, &s);
			return 0;
		}
		timed = next;
	}
}

int bench_mm(const char *name, const int *threads, int n, int mask)
{
	int all = !strcmp(name, "all"), one = bm_find(name), st = 0;
	for (int i = 0; i < n; i++)
		if (threads[i] < 1 || threads[i] > BM_MAX_THREADS) {
			printf("bench: %d threads: 1 to %d\n", threads[i], BM_MAX_THREADS);
			return 1;
		}
	long err = mem_reserve(BM_RUN_VA, BM_RUN_LEN);
	if (err) {
		printf("bench: %s: no memory for the run state: %s\n", name, err_name(err));
		return 1;
	}
	struct bm_run *r = (struct bm_run *)BM_RUN_VA;
	for (int k = 0; k < BM_N && !st; k++) {
		if (!all && k != one)
			continue;
		for (int high = 0; high < 2 && !st; high++) {
			if (!(mask & (high ? BENCH_HIGH : BENCH_LOW)))
				continue;
			for (int i = 0; i < n && !st; i++)
				st = bm_point(r, (enum bm_kind)k, threads[i], high);
		}
	}
	bench_unmap(BM_RUN_VA, BM_RUN_LEN);
	return st;
}
