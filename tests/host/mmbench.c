/* mmbench: the five microbenchmarks of docs/architecture.md section 5, run on
 * the host, one thread per "hart".
 *   mmbench [--bench mmap|mmap-pf|pf|unmap-virt|unmap|all]
 *           [--arch A] [--mm PROTOCOL|linux] [--threads N]
 *           [--ops N] [--seed N] [--overlap low|high] [--lock queue|tas]
 *           [--fault-frame before|inside] [--flush late|locked]
 * --mm names a locking protocol of the CortenMM core (adv, rw, any other
 * mm_proto_by_name knows), which then runs on the host platform; --mm linux
 * runs the same workloads on the host kernel's own mmap, munmap and page
 * faults, as the outside anchor (--arch is then not used; "paging" says
 * the host's machine). A is any registered paging table: mmbench --list-arch.
 *
 * As the paper's artifact: each thread does --ops requests (default 32),
 * all start together on a flag, and the time of the second half counts
 * (all threads start it together too; the time is from the first to start
 * it to the last to finish, and ops_per_sec counts every thread's ops).
 * Request j of thread i works at i*slot + j*size, where a thread's slot is
 * its pages padded to a multiple of 512 pages (2 MiB), so that at low
 * contention each thread has leaf page tables of its own; at high
 * contention all offsets are shuffled together over the same region.
 * Threads are pinned one per CPU when the host has that many.
 *
 * With the core, a "page fault" is what the kernel's handler does: take a
 * zeroed frame, lock the page, check it is reserved, map it, then the
 * faulting store lands. TLB flushes are shootdowns: a flush posts a request
 * to every other benchmark thread and waits for all answers; threads answer
 * between requests and whenever they wait (host_tlb_*).
 *
 * Every request must succeed; afterwards each page of the region must be in
 * the state the benchmark leaves it in (reserved, mapped holding the
 * written byte and zeros, or gone), and at the end every frame must be back
 * (core) or the whole region unmapped (linux). Exit 0 iff all that held.
 * One JSON line per run:
 * --lock picks the PT-page locks the core runs with (host_lock_select;
 * default queue); --fault-frame inside takes and zeroes a fault's frame
 * under the page's lock instead of before it (default before); --flush
 * locked makes commits flush before they drop their locks
 * (mm_as.flush_locked) instead of after (default late).
 * {"bench","contention","threads","mm","paging","lock","fault_frame","flush","ops","ns_per_op",
 *  "ops_per_sec","instret_per_op"} (instret_per_op is null on the host);
 * on stderr, the page-table memory the core used. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE   /* sched_setaffinity, MAP_FIXED_NOREPLACE */
#endif
#include "arch_registry.h"
#include "benchcore.h"
#include "host_platform.h"
#include "testutil.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>

#define PG MM_PAGE_SIZE
#define LEAF_SPAN BENCH_LEAF_SPAN

/* configuration */
static const struct pt_arch *A;
static const struct mm_protocol *P;   /* NULL: --mm linux */
static int pin_cpu[HOST_MAX_THREADS]; /* CPU of thread i, when pinned */
static bool pinned;
static const char *lock_name = "queue";
static bool flush_locked;         /* --flush locked: mm_as.flush_locked */

/* the run in progress: configuration (nthreads, nops, high, seed,
 * frame_inside) and state (as, region: in the core's AS or a host address) */
static struct bench_run R = { .prog = "mmbench", .nthreads = 1, .nops = 32, .seed = 1 };
static pthread_barrier_t start;   /* every thread and main: the start flag */
static atomic_int half, done;

struct th {
	pthread_t tid;
	int id;
	enum bench b;
	uint64_t t0, t1;   /* when its counted half began and ended */
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* Count a failed check and say what failed. Returns false. */
static bool fail(const char *what, uint64_t va, const char *why)
{
	return bench_fail(&R, what, va, why);
}

/* Wait until *v reaches want, answering TLB flush requests meanwhile. */
static void wait_for(atomic_int *v, int want)
{
	while (atomic_load(v) < want) {
		host_tlb_poll();
		sched_yield();
	}
}

/* ---- the same requests, on the host kernel ---- */

static void linux_mmap(uint64_t va, uint64_t len)
{
	void *p = mmap((void *)va, len, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)va) {
		fail("mmap", va, p == MAP_FAILED ? strerror(errno) : "placed elsewhere");
		if (p != MAP_FAILED)
			munmap(p, len);
	}
}

static void linux_fault(uint64_t va) { *(volatile uint8_t *)va = BENCH_MARK; }

static void linux_unmap(uint64_t va, uint64_t len)
{
	if (munmap((void *)va, len))
		fail("munmap", va, strerror(errno));
}

/* One request of bench b at R.region offset off. */
static void request(enum bench b, uint64_t off)
{
	uint64_t va = R.region + off;
	if (P) {
		bench_core_request(&R, b, off);
		return;
	}
	switch (b) {
	case B_MMAP:
		linux_mmap(va, 4 * PG);
		break;
	case B_MMAP_PF:
		linux_mmap(va, PG);
		linux_fault(va);
		break;
	case B_PF:
		linux_fault(va);
		break;
	default:
		linux_unmap(va, PG);
		break;
	}
}

/* Pin the calling thread to its CPU, when the host has one for each. */
static void pin(int id)
{
	if (!pinned)
		return;
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(pin_cpu[id], &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		fprintf(stderr, "mmbench: thread %d not pinned to CPU %d: %s\n", id, pin_cpu[id],
			strerror(errno));
}

/* A benchmark thread: joins the AS (it may hold translations from now on),
 * waits at the start barrier (no flush is posted before everyone passes
 * it), runs the first half of its requests, waits
 * until every thread has, runs the second (counted) half, answering flush
 * requests between requests and while it waits; then stays reachable for
 * flushes until every thread is done, so each flush of a run has the same
 * targets. */
static void *worker(void *arg)
{
	struct th *t = arg;
	pin(t->id);
	if (P)
		host_tlb_join(&R.as);
	pthread_barrier_wait(&start);
	for (long j = 0; j < R.nops; j++) {
		if (j == R.nops / 2) {
			atomic_fetch_add(&half, 1);
			wait_for(&half, R.nthreads);
			t->t0 = now_ns();
		}
		request(t->b, R.offsets[t->id * R.nops + j]);
		host_tlb_poll();
	}
	t->t1 = now_ns();
	atomic_fetch_add(&done, 1);
	wait_for(&done, R.nthreads);
	if (P) {
		host_tlb_leave();
		host_pool_drain();
	}
	return NULL;
}

/* ---- set-up and checks ---- */

/* Linux: the same through mincore (ENOMEM: nothing mapped there). */
static void linux_check(enum bench b, const uint8_t *requested)
{
	for (uint64_t o = 0; o < R.total; o += PG) {
		uint64_t va = R.region + o;
		unsigned char vec = 0;
		int rc = mincore((void *)va, PG, &vec);
		if (rc && errno != ENOMEM) {
			fail("check: mincore", va, strerror(errno));
			return;
		}
		enum bench_want w = bench_want_of(b, requested[o / PG]);
		bool ok = w == W_GONE ? rc != 0 : w == W_RESERVED ? rc == 0 : rc == 0 && (vec & 1);
		if (!ok) {
			fail("check", va, w == W_GONE ? "page still mapped"
				: w == W_RESERVED ? "page not mapped" : "page not resident");
			return;
		}
		if (w == W_MAPPED && !bench_page_ok(&R, (const uint8_t *)va, va))
			return;
	}
}

/* Linux: 2 MiB-aligned room for the R.region, away from where the process's
 * own mmap(NULL) calls (thread stacks, the allocator) go: at 4 GiB or
 * 32 TiB or a little above (one of them is outside the shadow memory of
 * each sanitizer), else where the kernel puts it. Reserved to be sure it
 * is free, then given back; 0 if there is none. */
static uint64_t linux_room(void)
{
	const uint64_t bases[] = { 1ull << 32, 1ull << 45 };
	for (unsigned k = 0; k < 2 * 16; k++) {
		uint64_t at = bases[k / 16] + (k % 16) * (1ull << 34);
		void *p = mmap((void *)at, R.total, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, R.total);
		if (p == (void *)at)
			return at;
	}
	void *p = mmap(NULL, R.total + LEAF_SPAN, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	munmap(p, R.total + LEAF_SPAN);
	return ((uint64_t)p + LEAF_SPAN - 1) & ~(LEAF_SPAN - 1);
}

/* Put the R.region in the state bench b starts from (bench_core_setup; on
 * the host kernel the same: nothing, mapped, or mapped and touched). */
static void setup(enum bench b)
{
	if (P) {
		bench_core_setup(&R, b);
		return;
	}
	if (b == B_MMAP || b == B_MMAP_PF)
		return;
	void *p = mmap((void *)R.region, R.total, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p != (void *)R.region) {
		fail("set-up mmap", R.region, p == MAP_FAILED ? strerror(errno) : "placed elsewhere");
		return;
	}
	/* 4 KiB pages, as the core maps them */
	if (madvise(p, R.total, MADV_NOHUGEPAGE))
		fail("set-up madvise", R.region, strerror(errno));
	if (b == B_UNMAP)
		for (long k = 0; k < R.nthreads * R.nops; k++)
			linux_fault(R.region + R.offsets[k]);
}

static const char *host_machine(void)
{
	static struct utsname u;
	return uname(&u) ? "unknown" : u.machine;
}

/* One run of bench b: set up, start every thread together, time the
 * second half, check the R.region, print the JSON line, tear down and check
 * that nothing is left. */
static void run(enum bench b)
{
	int errors_before = atomic_load(&R.errors);
	R.total = bench_slot(&R, bench_req_size(b)) * (uint64_t)R.nthreads;
	R.offsets = malloc(sizeof(*R.offsets) * (size_t)R.nthreads * (size_t)R.nops);
	uint8_t *requested = calloc(R.total / PG, 1);
	struct th *ts = calloc((size_t)R.nthreads, sizeof(*ts));
	if (!R.offsets || !requested || !ts) {
		fprintf(stderr, "mmbench: out of memory\n");
		exit(1);
	}
	bench_layout(&R, b, requested);
	if (P) {
		/* set up before any thread joins the AS: no flush of the set-up
		 * can wait for a thread that is not polling yet */
		R.region = BENCH_CORE_REGION;
		if (!bench_must(&R, mm_as_init(&R.as, A, P, &host_plat, A->user_lo, A->user_last, NULL),
			  "as_init", 0))
			exit(1);
		R.as.flush_locked = flush_locked;
		setup(b);
	}
	pthread_barrier_init(&start, NULL, (unsigned)R.nthreads + 1);
	atomic_store(&half, 0);
	atomic_store(&done, 0);
	for (int i = 0; i < R.nthreads; i++) {
		ts[i].id = i;
		ts[i].b = b;
		if (pthread_create(&ts[i].tid, NULL, worker, &ts[i])) {
			fprintf(stderr, "mmbench: cannot start thread %d\n", i);
			exit(1);
		}
	}
	if (!P) {
		/* after the threads exist, so that no stack lands in the R.region */
		if (!(R.region = linux_room())) {
			fprintf(stderr, "mmbench: no room for %" PRIu64 " bytes\n", R.total);
			exit(1);
		}
		setup(b);
	}
	pthread_barrier_wait(&start);
	/* the counted time: from the first thread past the half-way wait to
	 * the last one done (with more threads than CPUs, their counted
	 * halves do not overlap, and this is still the time they all took) */
	uint64_t first = UINT64_MAX, last = 0;
	for (int i = 0; i < R.nthreads; i++) {
		pthread_join(ts[i].tid, NULL);
		first = ts[i].t0 < first ? ts[i].t0 : first;
		last = ts[i].t1 > last ? ts[i].t1 : last;
	}
	uint64_t ns = last - first;
	if (P)
		bench_core_check(&R, b, requested);
	else
		linux_check(b, requested);

	long counted = (R.nops - R.nops / 2) * R.nthreads;
	double ops_per_sec = ns ? (double)counted * 1e9 / (double)ns : 0;
	double ns_per_op = ops_per_sec ? 1e9 * R.nthreads / ops_per_sec : 0;
	printf("{\"bench\":\"%s\",\"contention\":\"%s\",\"threads\":%d,\"mm\":\"%s\",\"paging\":\"%s\","
	       "\"lock\":\"%s\",\"fault_frame\":\"%s\",\"flush\":\"%s\",\"ops\":%ld,\"ns_per_op\":%.1f,\"ops_per_sec\":%.1f,\"instret_per_op\":null}\n",
	       bench_names[b], R.high ? "high" : "low", R.nthreads, P ? P->name : "linux",
	       P ? A->name : host_machine(), P ? lock_name : "linux",
	       R.frame_inside ? "inside" : "before", flush_locked ? "locked" : "late", counted,
	       ns_per_op, ops_per_sec);
	fflush(stdout);

	if (P) {
		struct mm_stats ms;
		mm_as_stats(&R.as, &ms);
		fprintf(stderr, "mmbench memory %s/%s/%s: %" PRIu64 " PT pages, %" PRIu64
			" metadata arrays (%.1f%% of PT memory), %" PRIu64 " leaves, %" PRIu64
			" status entries, %" PRIu64 " VMAs in %" PRIu64 " frames, %lu TLB flushes so far,"
			" threads %spinned\n",
			bench_names[b], R.high ? "high" : "low", P->name, ms.pt_pages, ms.meta_arrays,
			ms.pt_pages ? 100.0 * (double)ms.meta_arrays / (double)ms.pt_pages : 0.0,
			ms.leaves, ms.statuses, ms.vmas, ms.vma_frames, host_tlb_flushes(),
			pinned ? "" : "not ");
		mm_as_destroy(&R.as);
		host_rcu_barrier();
		host_pool_drain();
		if (host_frames_used())
			fail("end", R.region, "frames not returned");
	} else if (munmap((void *)R.region, R.total)) {
		fail("end: munmap", R.region, strerror(errno));
	}
	if (atomic_load(&R.errors) != errors_before)
		fprintf(stderr, "mmbench: %s %s/%s FAILED its checks\n", bench_names[b],
			R.high ? "high" : "low", P ? P->name : "linux");
	pthread_barrier_destroy(&start);
	free(ts);
	free(requested);
	free(R.offsets);
}

/* Pin thread i to the i-th CPU this process may use, if there are at least
 * as many CPUs as threads. */
static void plan_pinning(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) || CPU_COUNT(&set) < R.nthreads)
		return;
	int k = 0;
	for (int c = 0; c < CPU_SETSIZE && k < R.nthreads; c++)
		if (CPU_ISSET(c, &set))
			pin_cpu[k++] = c;
	pinned = true;
}

static void usage(void)
{
	fprintf(stderr, "usage: mmbench [--bench mmap|mmap-pf|pf|unmap-virt|unmap|all] "
			"[--arch %s] [--mm PROTOCOL|linux] [--threads N] [--ops N] "
			"[--seed N] [--overlap low|high] [--lock queue|tas]\n"
			"               [--fault-frame before|inside] [--flush late|locked]\n"
			"       mmbench --list-arch\n"
			"  PROTOCOL: a locking protocol of the core (adv, rw, ...)\n", mm_arch_names());
	exit(2);
}

int main(int argc, char **argv)
{
	const char *arch = "sv39", *mm = "adv", *bench = "all";
	if (mm_arch_list_requested(argc, argv))
		return 0;
	for (int i = 1; i < argc; i += 2) {
		if (i + 1 >= argc)
			usage();
		const char *o = argv[i], *v = argv[i + 1];
		if (bench_run_option(&R, o, v))
			continue;
		if (!strcmp(o, "--bench"))
			bench = v;
		else if (!strcmp(o, "--arch"))
			arch = v;
		else if (!strcmp(o, "--mm"))
			mm = v;
		else if (!strcmp(o, "--overlap") && (!strcmp(v, "low") || !strcmp(v, "high")))
			R.high = !strcmp(v, "high");
		else if (!strcmp(o, "--lock") && !host_lock_select(v))
			lock_name = v;
		else if (!strcmp(o, "--fault-frame") && (!strcmp(v, "before") || !strcmp(v, "inside")))
			R.frame_inside = !strcmp(v, "inside");
		else if (!strcmp(o, "--flush") && (!strcmp(v, "late") || !strcmp(v, "locked")))
			flush_locked = !strcmp(v, "locked");
		else
			usage();
	}
	A = mm_arch_by_name(arch);
	P = strcmp(mm, "linux") ? mm_proto_by_name(mm) : NULL;
	bool known = !strcmp(bench, "all");
	for (int b = 0; b < B_N; b++)
		known |= !strcmp(bench, bench_names[b]);
	if (!A || (!P && strcmp(mm, "linux")) || !known) {
		fprintf(stderr, "mmbench: unknown %s\n", !A ? "--arch" : !known ? "--bench" : "--mm");
		usage();
	}
	/* one slot of the host platform stays with the main thread */
	if (R.nthreads < 1 || R.nthreads >= HOST_MAX_THREADS || R.nops < 2 || R.nops > (1l << 20)) {
		fprintf(stderr, "mmbench: --threads 1..%d, --ops 2..%ld\n", HOST_MAX_THREADS - 1,
			1l << 20);
		usage();
	}
	/* the largest R.region (mmap: 16 KiB a request) must fit the user half */
	if (P && BENCH_CORE_REGION + bench_slot(&R, bench_req_size(B_MMAP)) * (uint64_t)R.nthreads - 1 > A->user_last) {
		fprintf(stderr, "mmbench: %d threads x %ld ops do not fit the %s user half\n",
			R.nthreads, R.nops, A->name);
		usage();
	}
	plan_pinning();
	if (P) {
		/* a frame per request, a leaf table and a metadata array per
		 * thread (and some for splits), each thread's pool of PT frames
		 * and frame cache, the upper tables; all backed by host memory
		 * before any timing */
		size_t per_thread = (size_t)R.nops + 4 + MM_POOL_SIZE + HOST_FRAME_CACHE;
		host_init((size_t)(R.nthreads + 1) * per_thread + 256);
		host_arena_touch();
		host_frame_cache(true);
		host_tlb_shootdown(true);
	}
	for (int b = 0; b < B_N; b++)
		if (!strcmp(bench, "all") || !strcmp(bench, bench_names[b]))
			run((enum bench)b);
	if (P)
		host_fini();
	return atomic_load(&R.errors) ? 1 : 0;
}
