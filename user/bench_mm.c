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
 * a flag; each makes 32 requests and times the last 16 with rdtime and
 * rdinstret. Request j of thread i works at BM_BASE + i*slot + j*size,
 * where slot is padded to 2 MiB (as the paper's artifact and the host
 * mmbench do): at low contention each thread has a leaf page-table page of
 * its own; at high contention all offsets are shuffled together (fixed
 * seed), so threads hit random places of one shared region. */
#include "ulib.h"
#include "bench.h"

#define BM_BASE 0x2000000000UL   /* 128 GiB: no other program uses it; below Sv39's top */
#define BM_REQS 32
#define BM_TIMED 16               /* the last BM_TIMED requests count */
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
	uint64_t ticks, instret;   /* over the timed requests */
};

struct bm_run {
	enum bm_kind kind;
	long done_ep;              /* each thread sends here when done */
	int ready, go;             /* atomic */
	uint64_t off[BM_MAX_THREADS * BM_REQS];
	struct bm_thread th[BM_MAX_THREADS];
};
/* The run's state (19 KiB) lives in anonymous memory of its own at
 * BM_RUN_VA while the command runs, not in init's bss: every task spawned
 * from init's ELF would pay for it. */
#define BM_RUN_VA (BM_BASE - 0x100000UL)
#define BM_RUN_LEN ((sizeof(struct bm_run) + BENCH_PG - 1) & ~(BENCH_PG - 1))
_Static_assert(BM_RUN_LEN <= 0x100000UL, "struct bm_run fits below BM_BASE");

static int bm_find(const char *name)
{
	for (int k = 0; k < BM_N; k++)
		if (!strcmp(name, bm_names[k]))
			return k;
	return -1;
}

int bench_mm_known(const char *name) { return !strcmp(name, "all") || bm_find(name) >= 0; }


/* Fill r->off for n threads; returns the span of the region they use. */
static uint64_t bm_layout(struct bm_run *r, int n, int high)
{
	uint64_t size = r->kind == BM_MMAP ? 4 * BENCH_PG : BENCH_PG, slot = BM_PAD;
	int total = n * BM_REQS;
	for (int i = 0; i < total; i++)
		r->off[i] = (uint64_t)(i / BM_REQS) * slot + (uint64_t)(i % BM_REQS) * size;
	uint64_t s = BM_SEED;
	for (int i = total - 1; high && i > 0; i--) {
		int k = (int)(xorshift64(&s) % (uint64_t)(i + 1));
		uint64_t x = r->off[i];
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

/* A benchmark thread: wait for the flag, make the requests, time the last
 * BM_TIMED, report on the done endpoint. */
static void bm_worker(void *a)
{
	struct bm_thread *t = a;
	struct bm_run *r = t->run;
	const uint64_t *off = &r->off[t->id * BM_REQS];
	__atomic_add_fetch(&r->ready, 1, __ATOMIC_ACQ_REL);
	int go;
	while ((go = __atomic_load_n(&r->go, __ATOMIC_ACQUIRE)) == GO_WAIT)
		sys_yield();
	if (go != GO_RUN)
		return;
	uint64_t t0 = 0, i0 = 0;
	for (int j = 0; j < BM_REQS && !t->err; j++) {
		if (j == BM_REQS - BM_TIMED) {
			t0 = rdtime();
			i0 = rdinstret();
		}
		t->err = bm_request(r->kind, BM_BASE + off[j]);
	}
	t->instret = rdinstret() - i0;
	t->ticks = rdtime() - t0;
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

/* One run of benchmark k with n threads: prints its line; 0, or 1 after
 * printing what failed. Leaves the region empty and no slot behind. */
static int bm_once(struct bm_run *r, enum bm_kind k, int n, int high)
{
	long slots[BM_MAX_THREADS];
	r->kind = k;
	r->ready = 0;
	r->go = GO_WAIT;
	uint64_t span = bm_layout(r, n, high);
	const char *what = "set-up";
	long err = bm_setup(k, span);
	r->done_ep = slot_alloc();
	if (!err)
		err = r->done_ep < 0 ? r->done_ep : ep_create(r->done_ep);
	int started = err ? 0 : bm_start(r, n, slots, &err);
	if (err) {
		__atomic_store_n(&r->go, GO_ABORT, __ATOMIC_RELEASE);
		if (started < n)
			what = "thread start";
	} else {
		while (__atomic_load_n(&r->ready, __ATOMIC_ACQUIRE) < n)
			sys_yield();
		__atomic_store_n(&r->go, GO_RUN, __ATOMIC_RELEASE);
		uint64_t w[4] = { 0 };
		for (int i = 0; i < n && !err; i++)
			err = ipc(SYS_RECV, r->done_ep, w, SLOT_NONE).a0;
		what = "wait";
	}
	struct bench_line l = { .bench = bm_names[k], .contention = high ? "high" : "low",
				.threads = n, .ops = (unsigned long)n * BM_TIMED, .per_thread = BM_TIMED };
	for (int i = 0; i < n && !err; i++) {
		if (r->th[i].err) {
			err = r->th[i].err;
			what = "request";
		}
		if (r->th[i].ticks > l.ticks)
			l.ticks = r->th[i].ticks;
		l.instret += r->th[i].instret;
	}
	if (!err)
		bench_print(&l);
	long un = bench_unmap(BM_BASE, span);
	for (int i = 0; i < started; i++)
		cap_delete(slots[i]), slot_release(slots[i]);
	if (r->done_ep >= 0)
		cap_delete(r->done_ep), slot_release(r->done_ep);
	if (!err && un)
		err = un, what = "clean-up";
	if (err)
		printf("bench: %s %s %d threads: %s failed: %s\n", bm_names[k], l.contention, n, what,
		       err_name(err));
	return err ? 1 : 0;
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
				st = bm_once(r, (enum bm_kind)k, threads[i], high);
		}
	}
	bench_unmap(BM_RUN_VA, BM_RUN_LEN);
	return st;
}
