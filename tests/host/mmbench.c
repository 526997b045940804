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
#define LEAF_SPAN (512 * PG)      /* what one leaf PT page maps: 2 MiB */
#define MARK 0x5a                 /* the byte a faulting store writes */
#define CORE_REGION (1ull << 32)  /* base VA of the region in the core's AS */

enum bench { B_MMAP, B_MMAP_PF, B_PF, B_UNMAP_VIRT, B_UNMAP, B_N };
static const char *names[B_N] = { "mmap", "mmap-pf", "pf", "unmap-virt", "unmap" };

/* what a page of the region must be once a run is over */
enum want { W_GONE, W_RESERVED, W_MAPPED };

/* configuration */
static const struct pt_arch *A;
static const struct mm_protocol *P;   /* NULL: --mm linux */
static int nthreads = 1;
static long nops = 32;
static bool high;
static uint64_t seed = 1;
static int pin_cpu[HOST_MAX_THREADS]; /* CPU of thread i, when pinned */
static bool pinned;
static const char *lock_name = "queue";
static bool frame_inside;         /* --fault-frame inside: take the frame under the lock */
static bool flush_locked;         /* --flush locked: mm_as.flush_locked */

/* the run in progress */
static struct mm_as as;
static uint64_t region;           /* base VA: in the core's AS, or a host address */
static uint64_t total;            /* bytes of the region */
static uint64_t *offsets;         /* [thread * nops + j] -> offset */
static pthread_barrier_t start;   /* every thread and main: the start flag */
static atomic_int half, done;
static atomic_int errors;

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

static uint64_t req_size(enum bench b) { return b == B_MMAP ? 4 * PG : PG; }

/* A thread's slot for requests of `size` bytes: its --ops requests padded
 * to whole leaf PT pages (the paper's artifact pads to 512 pages). */
static uint64_t slot_of(uint64_t size)
{
	return (size * (uint64_t)nops + LEAF_SPAN - 1) / LEAF_SPAN * LEAF_SPAN;
}

/* Count a failed check and say what failed. Returns false. */
static bool fail(const char *what, uint64_t va, const char *why)
{
	fprintf(stderr, "mmbench: %s at %#" PRIx64 ": %s\n", what, va, why);
	atomic_fetch_add(&errors, 1);
	return false;
}

/* err must be MM_OK; otherwise fail. Returns err == MM_OK. */
static bool must(int err, const char *what, uint64_t va)
{
	return err == MM_OK || fail(what, va, mm_strerror(err));
}

/* Wait until *v reaches want, answering TLB flush requests meanwhile. */
static void wait_for(atomic_int *v, int want)
{
	while (atomic_load(v) < want) {
		host_tlb_poll();
		sched_yield();
	}
}

/* ---- the requests, on the core ---- */

/* Anonymous mmap at a fixed address: lock, check the range is free, mark
 * it reserved read-write. */
static void core_mmap(uint64_t va, uint64_t len)
{
	struct mm_cursor c;
	if (!must(mm_lock(&c, &as, va, va + len), "mmap: lock", va))
		return;
	bool ok = true;
	for (uint64_t o = 0; o < len && ok; o += PG) {
		struct mm_info in;
		ok = must(mm_query(&c, va + o, &in), "mmap: query", va + o) &&
		     (in.kind == MM_INVALID || fail("mmap", va + o, "target not free"));
	}
	struct mm_status st = { .kind = MM_RESERVED, .prot = MM_PROT_R | MM_PROT_W | MM_PROT_U };
	if (ok)
		must(mm_mark(&c, va, len, &st), "mmap: mark", va);
	mm_release(&c);
}

/* The anonymous-fault path for a store to va: a zeroed frame (taken and
 * zeroed before the lock, or with --fault-frame inside under it), mapped
 * under the cursor if va is reserved; then the store is retried and lands. */
static void core_fault(uint64_t va)
{
	uint64_t pa = frame_inside ? MM_NOFRAME : host_frame_alloc_zeroed(1);
	if (!frame_inside && pa == MM_NOFRAME) {
		fail("fault", va, "out of frames");
		return;
	}
	struct mm_cursor c;
	if (!must(mm_lock(&c, &as, va, va + PG), "fault: lock", va)) {
		if (pa != MM_NOFRAME)
			host_frame_free(pa, 1);
		return;
	}
	if (frame_inside && (pa = host_frame_alloc_zeroed(1)) == MM_NOFRAME) {
		mm_release(&c);
		fail("fault", va, "out of frames");
		return;
	}
	struct mm_info in;
	bool ok = must(mm_query(&c, va, &in), "fault: query", va) &&
		  (in.kind == MM_RESERVED || fail("fault", va, "page not reserved")) &&
		  must(mm_map(&c, va, pa, 1, in.prot, 0), "fault: map", va);
	mm_release(&c);
	if (!ok) {
		host_frame_free(pa, 1);
		return;
	}
	*(volatile uint8_t *)host_plat.phys_to_virt(pa) = MARK;
}

static void core_unmap(uint64_t va, uint64_t len)
{
	struct mm_cursor c;
	if (!must(mm_lock(&c, &as, va, va + len), "unmap: lock", va))
		return;
	must(mm_unmap(&c, va, len), "unmap", va);
	mm_release(&c);
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

static void linux_fault(uint64_t va) { *(volatile uint8_t *)va = MARK; }

static void linux_unmap(uint64_t va, uint64_t len)
{
	if (munmap((void *)va, len))
		fail("munmap", va, strerror(errno));
}

/* One request of bench b at region offset off. */
static void request(enum bench b, uint64_t off)
{
	uint64_t va = region + off;
	switch (b) {
	case B_MMAP:
		P ? core_mmap(va, 4 * PG) : linux_mmap(va, 4 * PG);
		break;
	case B_MMAP_PF:
		P ? core_mmap(va, PG) : linux_mmap(va, PG);
		P ? core_fault(va) : linux_fault(va);
		break;
	case B_PF:
		P ? core_fault(va) : linux_fault(va);
		break;
	default:
		P ? core_unmap(va, PG) : linux_unmap(va, PG);
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
		host_tlb_join(&as);
	pthread_barrier_wait(&start);
	for (long j = 0; j < nops; j++) {
		if (j == nops / 2) {
			atomic_fetch_add(&half, 1);
			wait_for(&half, nthreads);
			t->t0 = now_ns();
		}
		request(t->b, offsets[t->id * nops + j]);
		host_tlb_poll();
	}
	t->t1 = now_ns();
	atomic_fetch_add(&done, 1);
	wait_for(&done, nthreads);
	if (P) {
		host_tlb_leave();
		host_pool_drain();
	}
	return NULL;
}

/* ---- set-up and checks ---- */

/* The state page `off` of the region must be in after bench b, given
 * whether some request covered it. */
static enum want want_of(enum bench b, bool requested)
{
	switch (b) {
	case B_MMAP: return requested ? W_RESERVED : W_GONE;
	case B_MMAP_PF: return requested ? W_MAPPED : W_GONE;
	case B_PF: return requested ? W_MAPPED : W_RESERVED;
	default: return requested ? W_GONE : W_RESERVED;
	}
}

/* A mapped page's contents: the written byte, then zeros. */
static bool page_ok(const uint8_t *p, uint64_t va)
{
	if (p[0] != MARK)
		return fail("check", va, "the faulting store is not in the page");
	for (uint64_t k = 1; k < PG; k++)
		if (p[k])
			return fail("check", va, "new page not zeroed");
	return true;
}

/* Core: every page of the region against want_of (mapped pages are then
 * dirtied); then well-formedness. */
static void core_check(enum bench b, const uint8_t *requested)
{
	struct mm_cursor c;
	if (!must(mm_lock(&c, &as, region, region + total), "check: lock", region))
		return;
	for (uint64_t o = 0; o < total; o += PG) {
		struct mm_info in;
		if (!must(mm_query(&c, region + o, &in), "check: query", region + o))
			break;
		enum want w = want_of(b, requested[o / PG]);
		bool ok = w == W_GONE ? in.kind == MM_INVALID
			: w == W_RESERVED ? in.kind == MM_RESERVED
			: in.kind == MM_MAPPED;
		if (!ok) {
			fail("check", region + o, w == W_GONE ? "page still there"
				: w == W_RESERVED ? "page not reserved" : "page not mapped");
			break;
		}
		if (w == W_MAPPED) {
			uint8_t *p = host_plat.phys_to_virt(in.pa);
			if (!page_ok(p, region + o))
				break;
			/* the program used its page: the frame goes back dirty,
			 * so a later fault that forgot to zero it shows */
			memset(p, 0xa5, PG);
		}
	}
	mm_release(&c);
	const char *why = NULL;
	if (mm_wf_check(&as, &why))
		fail("check", region, why);
}

/* Linux: the same through mincore (ENOMEM: nothing mapped there). */
static void linux_check(enum bench b, const uint8_t *requested)
{
	for (uint64_t o = 0; o < total; o += PG) {
		uint64_t va = region + o;
		unsigned char vec = 0;
		int rc = mincore((void *)va, PG, &vec);
		if (rc && errno != ENOMEM) {
			fail("check: mincore", va, strerror(errno));
			return;
		}
		enum want w = want_of(b, requested[o / PG]);
		bool ok = w == W_GONE ? rc != 0 : w == W_RESERVED ? rc == 0 : rc == 0 && (vec & 1);
		if (!ok) {
			fail("check", va, w == W_GONE ? "page still mapped"
				: w == W_RESERVED ? "page not mapped" : "page not resident");
			return;
		}
		if (w == W_MAPPED && !page_ok((const uint8_t *)va, va))
			return;
	}
}

/* Linux: 2 MiB-aligned room for the region, away from where the process's
 * own mmap(NULL) calls (thread stacks, the allocator) go: at 4 GiB or
 * 32 TiB or a little above (one of them is outside the shadow memory of
 * each sanitizer), else where the kernel puts it. Reserved to be sure it
 * is free, then given back; 0 if there is none. */
static uint64_t linux_room(void)
{
	const uint64_t bases[] = { 1ull << 32, 1ull << 45 };
	for (unsigned k = 0; k < 2 * 16; k++) {
		uint64_t at = bases[k / 16] + (k % 16) * (1ull << 34);
		void *p = mmap((void *)at, total, PROT_NONE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != MAP_FAILED)
			munmap(p, total);
		if (p == (void *)at)
			return at;
	}
	void *p = mmap(NULL, total + LEAF_SPAN, PROT_NONE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return 0;
	munmap(p, total + LEAF_SPAN);
	return ((uint64_t)p + LEAF_SPAN - 1) & ~(LEAF_SPAN - 1);
}

/* Put the region in the state bench b starts from: nothing (mmap
 * benches), reserved (pf, unmap-virt), or reserved with every requested
 * page faulted in (unmap). */
static void setup(enum bench b)
{
	if (b == B_MMAP || b == B_MMAP_PF)
		return;
	if (P) {
		core_mmap(region, total);
	} else {
		void *p = mmap((void *)region, total, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
		if (p != (void *)region) {
			fail("set-up mmap", region, p == MAP_FAILED ? strerror(errno) : "placed elsewhere");
			return;
		}
		/* 4 KiB pages, as the core maps them */
		if (madvise(p, total, MADV_NOHUGEPAGE))
			fail("set-up madvise", region, strerror(errno));
	}
	if (b == B_UNMAP)
		for (long k = 0; k < nthreads * nops; k++)
			P ? core_fault(region + offsets[k]) : linux_fault(region + offsets[k]);
}

/* Offsets of every request: thread i's requests one after another in its
 * slot; high contention shuffles all of them together.
 * Fills requested[] (one byte per page of the region). */
static void layout(enum bench b, uint8_t *requested)
{
	uint64_t size = req_size(b), slot = slot_of(size);
	for (int i = 0; i < nthreads; i++)
		for (long j = 0; j < nops; j++) {
			uint64_t off = (uint64_t)i * slot + (uint64_t)j * size;
			offsets[i * nops + j] = off;
			memset(requested + off / PG, 1, size / PG);
		}
	if (high) {
		uint64_t rng = seed * 0x9E3779B97F4A7C15ull + 1;
		for (long k = nthreads * nops - 1; k > 0; k--) {
			long r = (long)xorshift64_below(&rng, (uint64_t)(k + 1));
			uint64_t x = offsets[k];
			offsets[k] = offsets[r];
			offsets[r] = x;
		}
	}
}

static const char *host_machine(void)
{
	static struct utsname u;
	return uname(&u) ? "unknown" : u.machine;
}

/* One run of bench b: set up, start every thread together, time the
 * second half, check the region, print the JSON line, tear down and check
 * that nothing is left. */
static void run(enum bench b)
{
	int errors_before = atomic_load(&errors);
	total = slot_of(req_size(b)) * (uint64_t)nthreads;
	offsets = malloc(sizeof(*offsets) * (size_t)nthreads * (size_t)nops);
	uint8_t *requested = calloc(total / PG, 1);
	struct th *ts = calloc((size_t)nthreads, sizeof(*ts));
	if (!offsets || !requested || !ts) {
		fprintf(stderr, "mmbench: out of memory\n");
		exit(1);
	}
	layout(b, requested);
	if (P) {
		/* set up before any thread joins the AS: no flush of the set-up
		 * can wait for a thread that is not polling yet */
		region = CORE_REGION;
		if (!must(mm_as_init(&as, A, P, &host_plat, A->user_lo, A->user_last, NULL),
			  "as_init", 0))
			exit(1);
		as.flush_locked = flush_locked;
		setup(b);
	}
	pthread_barrier_init(&start, NULL, (unsigned)nthreads + 1);
	atomic_store(&half, 0);
	atomic_store(&done, 0);
	for (int i = 0; i < nthreads; i++) {
		ts[i].id = i;
		ts[i].b = b;
		if (pthread_create(&ts[i].tid, NULL, worker, &ts[i])) {
			fprintf(stderr, "mmbench: cannot start thread %d\n", i);
			exit(1);
		}
	}
	if (!P) {
		/* after the threads exist, so that no stack lands in the region */
		if (!(region = linux_room())) {
			fprintf(stderr, "mmbench: no room for %" PRIu64 " bytes\n", total);
			exit(1);
		}
		setup(b);
	}
	pthread_barrier_wait(&start);
	/* the counted time: from the first thread past the half-way wait to
	 * the last one done (with more threads than CPUs, their counted
	 * halves do not overlap, and this is still the time they all took) */
	uint64_t first = UINT64_MAX, last = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(ts[i].tid, NULL);
		first = ts[i].t0 < first ? ts[i].t0 : first;
		last = ts[i].t1 > last ? ts[i].t1 : last;
	}
	uint64_t ns = last - first;
	if (P)
		core_check(b, requested);
	else
		linux_check(b, requested);

	long counted = (nops - nops / 2) * nthreads;
	double ops_per_sec = ns ? (double)counted * 1e9 / (double)ns : 0;
	double ns_per_op = ops_per_sec ? 1e9 * nthreads / ops_per_sec : 0;
	printf("{\"bench\":\"%s\",\"contention\":\"%s\",\"threads\":%d,\"mm\":\"%s\",\"paging\":\"%s\","
	       "\"lock\":\"%s\",\"fault_frame\":\"%s\",\"flush\":\"%s\",\"ops\":%ld,\"ns_per_op\":%.1f,\"ops_per_sec\":%.1f,\"instret_per_op\":null}\n",
	       names[b], high ? "high" : "low", nthreads, P ? P->name : "linux",
	       P ? A->name : host_machine(), P ? lock_name : "linux",
	       frame_inside ? "inside" : "before", flush_locked ? "locked" : "late", counted,
	       ns_per_op, ops_per_sec);
	fflush(stdout);

	if (P) {
		struct mm_stats ms;
		mm_as_stats(&as, &ms);
		fprintf(stderr, "mmbench memory %s/%s/%s: %" PRIu64 " PT pages, %" PRIu64
			" metadata arrays (%.1f%% of PT memory), %" PRIu64 " leaves, %" PRIu64
			" status entries, %" PRIu64 " VMAs in %" PRIu64 " frames, %lu TLB flushes so far,"
			" threads %spinned\n",
			names[b], high ? "high" : "low", P->name, ms.pt_pages, ms.meta_arrays,
			ms.pt_pages ? 100.0 * (double)ms.meta_arrays / (double)ms.pt_pages : 0.0,
			ms.leaves, ms.statuses, ms.vmas, ms.vma_frames, host_tlb_flushes(),
			pinned ? "" : "not ");
		mm_as_destroy(&as);
		host_rcu_barrier();
		host_pool_drain();
		if (host_frames_used())
			fail("end", region, "frames not returned");
	} else if (munmap((void *)region, total)) {
		fail("end: munmap", region, strerror(errno));
	}
	if (atomic_load(&errors) != errors_before)
		fprintf(stderr, "mmbench: %s %s/%s FAILED its checks\n", names[b],
			high ? "high" : "low", P ? P->name : "linux");
	pthread_barrier_destroy(&start);
	free(ts);
	free(requested);
	free(offsets);
}

/* Pin thread i to the i-th CPU this process may use, if there are at least
 * as many CPUs as threads. */
static void plan_pinning(void)
{
	cpu_set_t set;
	if (sched_getaffinity(0, sizeof(set), &set) || CPU_COUNT(&set) < nthreads)
		return;
	int k = 0;
	for (int c = 0; c < CPU_SETSIZE && k < nthreads; c++)
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
		if (!strcmp(o, "--bench"))
			bench = v;
		else if (!strcmp(o, "--arch"))
			arch = v;
		else if (!strcmp(o, "--mm"))
			mm = v;
		else if (!strcmp(o, "--threads"))
			nthreads = atoi(v);
		else if (!strcmp(o, "--ops"))
			nops = atol(v);
		else if (!strcmp(o, "--seed"))
			seed = strtoull(v, NULL, 0);
		else if (!strcmp(o, "--overlap") && (!strcmp(v, "low") || !strcmp(v, "high")))
			high = !strcmp(v, "high");
		else if (!strcmp(o, "--lock") && !host_lock_select(v))
			lock_name = v;
		else if (!strcmp(o, "--fault-frame") && (!strcmp(v, "before") || !strcmp(v, "inside")))
			frame_inside = !strcmp(v, "inside");
		else if (!strcmp(o, "--flush") && (!strcmp(v, "late") || !strcmp(v, "locked")))
			flush_locked = !strcmp(v, "locked");
		else
			usage();
	}
	A = mm_arch_by_name(arch);
	P = strcmp(mm, "linux") ? mm_proto_by_name(mm) : NULL;
	bool known = !strcmp(bench, "all");
	for (int b = 0; b < B_N; b++)
		known |= !strcmp(bench, names[b]);
	if (!A || (!P && strcmp(mm, "linux")) || !known) {
		fprintf(stderr, "mmbench: unknown %s\n", !A ? "--arch" : !known ? "--bench" : "--mm");
		usage();
	}
	/* one slot of the host platform stays with the main thread */
	if (nthreads < 1 || nthreads >= HOST_MAX_THREADS || nops < 2 || nops > (1l << 20)) {
		fprintf(stderr, "mmbench: --threads 1..%d, --ops 2..%ld\n", HOST_MAX_THREADS - 1,
			1l << 20);
		usage();
	}
	/* the largest region (mmap: 16 KiB a request) must fit the user half */
	if (P && CORE_REGION + slot_of(req_size(B_MMAP)) * (uint64_t)nthreads - 1 > A->user_last) {
		fprintf(stderr, "mmbench: %d threads x %ld ops do not fit the %s user half\n",
			nthreads, nops, A->name);
		usage();
	}
	plan_pinning();
	if (P) {
		/* a frame per request, a leaf table and a metadata array per
		 * thread (and some for splits), each thread's pool of PT frames
		 * and frame cache, the upper tables; all backed by host memory
		 * before any timing */
		size_t per_thread = (size_t)nops + 4 + MM_POOL_SIZE + HOST_FRAME_CACHE;
		host_init((size_t)(nthreads + 1) * per_thread + 256);
		host_arena_touch();
		host_frame_cache(true);
		host_tlb_shootdown(true);
	}
	for (int b = 0; b < B_N; b++)
		if (!strcmp(bench, "all") || !strcmp(bench, names[b]))
			run((enum bench)b);
	if (P)
		host_fini();
	return atomic_load(&errors) ? 1 : 0;
}
