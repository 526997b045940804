/* mmbench: the five microbenchmarks of ARCHITECTURE.md section 5 run
 * against the CortenMM core on the host, one thread per "hart".
 *   mmbench [--bench mmap|mmap-pf|pf|unmap-virt|unmap|all] --arch A --mm P
 *           --threads N --ops N --seed N --overlap low|high
 * Each thread does --ops requests (default 32, as the paper's artifact);
 * the time of the second half counts. Request j of thread i works at
 * i*slot + j*size (low), or at a shuffled slot of one shared region (high).
 * A "page fault" here is what the kernel's handler does under one cursor:
 * lock the page, query it, take a frame, map it. One JSON line per run:
 * {"bench","contention","threads","mm","paging","ops","ns_per_op",
 *  "ops_per_sec","instret_per_op"} (instret_per_op is null on the host). */
#include "host_platform.h"
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

enum bench { B_MMAP, B_MMAP_PF, B_PF, B_UNMAP_VIRT, B_UNMAP, B_N };
static const char *names[B_N] = { "mmap", "mmap-pf", "pf", "unmap-virt", "unmap" };

static const struct pt_arch *A;
static const struct mm_protocol *P;
static struct mm_as as;
static int nthreads = 1;
static long nops = 32;
static bool high;
static uint64_t seed = 1;
static uint64_t region;           /* base VA of the benchmark region */
static uint64_t *offsets;         /* [thread * nops + j] -> offset */
static atomic_int ready, go;
static atomic_int errors;

struct th {
	pthread_t tid;
	int id;
	enum bench b;
	uint64_t ns;    /* time of the counted half */
};

static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

static uint64_t req_size(enum bench b) { return b == B_MMAP ? 4 * PG : PG; }

static void must(int err, const char *what)
{
	if (err) {
		fprintf(stderr, "mmbench: %s: %s\n", what, mm_strerror(err));
		atomic_fetch_add(&errors, 1);
	}
}

/* lock, check free, mark reserved (anonymous mmap at a fixed address) */
static void do_mmap(uint64_t va, uint64_t len)
{
	struct mm_cursor c;
	must(mm_lock(&c, &as, va, va + len), "lock");
	for (uint64_t o = 0; o < len; o += PG) {
		struct mm_info in;
		mm_query(&c, va + o, &in);
		if (in.kind != MM_INVALID)
			must(MM_EEXIST, "mmap target not free");
	}
	struct mm_status st = { .kind = MM_RESERVED, .prot = MM_PROT_R | MM_PROT_W | MM_PROT_U };
	must(mm_mark(&c, va, len, &st), "mark");
	mm_release(&c);
}

/* the anonymous-fault path: zero-fill one reserved page */
static void do_fault(uint64_t va)
{
	struct mm_cursor c;
	must(mm_lock(&c, &as, va, va + PG), "lock");
	struct mm_info in;
	mm_query(&c, va, &in);
	if (in.kind != MM_RESERVED) {
		must(MM_EINVAL, "fault on a page that is not reserved");
	} else {
		uint64_t pa = host_frame_alloc(1);
		must(pa == MM_NOFRAME ? MM_ENOMEM : MM_OK, "frame");
		if (pa != MM_NOFRAME)
			must(mm_map(&c, va, pa, 1, in.prot, 0), "map");
	}
	mm_release(&c);
}

static void do_unmap(uint64_t va, uint64_t len)
{
	struct mm_cursor c;
	must(mm_lock(&c, &as, va, va + len), "lock");
	must(mm_unmap(&c, va, len), "unmap");
	mm_release(&c);
}

static void request(enum bench b, uint64_t va)
{
	switch (b) {
	case B_MMAP: do_mmap(va, 4 * PG); break;
	case B_MMAP_PF: do_mmap(va, PG); do_fault(va); break;
	case B_PF: do_fault(va); break;
	default: do_unmap(va, PG); break;
	}
}

static void *worker(void *arg)
{
	struct th *t = arg;
	atomic_fetch_add(&ready, 1);
	while (!atomic_load(&go))
		;
	uint64_t t0 = 0;
	for (long j = 0; j < nops; j++) {
		if (j == nops / 2)
			t0 = now_ns();
		request(t->b, region + offsets[t->id * nops + j]);
	}
	t->ns = now_ns() - t0;
	host_pool_drain();
	return NULL;
}

static uint64_t rng = 1;
static uint64_t rnd(void) { return xorshift64(&rng); }

static void run(enum bench b)
{
	uint64_t size = req_size(b), slot = size * (uint64_t)nops;
	uint64_t total = slot * (uint64_t)nthreads;
	region = 1ull << 32;
	offsets = malloc(sizeof(*offsets) * (size_t)(nthreads * nops));
	for (int i = 0; i < nthreads; i++)
		for (long j = 0; j < nops; j++)
			offsets[i * nops + j] = (uint64_t)i * slot + (uint64_t)j * size;
	if (high) {  /* shuffle all offsets together */
		rng = seed * 0x9E3779B97F4A7C15ull + 1;
		for (long k = nthreads * nops - 1; k > 0; k--) {
			long r = (long)(rnd() % (uint64_t)(k + 1));
			uint64_t x = offsets[k];
			offsets[k] = offsets[r];
			offsets[r] = x;
		}
	}
	must(mm_as_init(&as, A, P, &host_plat, A->user_lo, A->user_last, NULL), "as_init");
	/* set-up */
	if (b == B_PF || b == B_UNMAP_VIRT || b == B_UNMAP)
		do_mmap(region, total);
	if (b == B_UNMAP)
		for (uint64_t o = 0; o < total; o += PG)
			do_fault(region + o);
	atomic_store(&ready, 0);
	atomic_store(&go, 0);
	struct th *ts = calloc((size_t)nthreads, sizeof(*ts));
	for (int i = 0; i < nthreads; i++) {
		ts[i].id = i;
		ts[i].b = b;
		pthread_create(&ts[i].tid, NULL, worker, &ts[i]);
	}
	while (atomic_load(&ready) < nthreads)
		sched_yield();
	atomic_store(&go, 1);
	uint64_t maxns = 0;
	for (int i = 0; i < nthreads; i++) {
		pthread_join(ts[i].tid, NULL);
		if (ts[i].ns > maxns)
			maxns = ts[i].ns;
	}
	long counted = (nops - nops / 2) * nthreads;
	double ops_per_sec = maxns ? (double)counted * 1e9 / (double)maxns : 0;
	double ns_per_op = ops_per_sec ? 1e9 * nthreads / ops_per_sec : 0;
	printf("{\"bench\":\"%s\",\"contention\":\"%s\",\"threads\":%d,\"mm\":\"%s\",\"paging\":\"%s\","
	       "\"ops\":%ld,\"ns_per_op\":%.1f,\"ops_per_sec\":%.1f,\"instret_per_op\":null}\n",
	       names[b], high ? "high" : "low", nthreads, P->name, A->name, counted, ns_per_op,
	       ops_per_sec);
	fflush(stdout);
	struct mm_stats ms;
	mm_as_stats(&as, &ms);
	fprintf(stderr, "mmbench memory %s/%s/%s: %" PRIu64 " PT pages, %" PRIu64 " metadata arrays "
		"(%.1f%% of PT memory), %" PRIu64 " leaves, %" PRIu64 " status entries\n",
		names[b], high ? "high" : "low", P->name, ms.pt_pages, ms.meta_arrays,
		ms.pt_pages ? 100.0 * (double)ms.meta_arrays / (double)ms.pt_pages : 0.0,
		ms.leaves, ms.statuses);
	mm_as_destroy(&as);
	host_rcu_barrier();
	host_pool_drain();
	if (host_frames_used()) {
		fprintf(stderr, "mmbench: %zu frames leaked\n", host_frames_used());
		atomic_fetch_add(&errors, 1);
	}
	free(ts);
	free(offsets);
}

int main(int argc, char **argv)
{
	const char *arch = "sv39", *mm = "adv", *bench = "all";
	for (int i = 1; i + 1 < argc; i += 2) {
		const char *o = argv[i], *v = argv[i + 1];
		if (!strcmp(o, "--bench")) bench = v;
		else if (!strcmp(o, "--arch")) arch = v;
		else if (!strcmp(o, "--mm")) mm = v;
		else if (!strcmp(o, "--threads")) nthreads = atoi(v);
		else if (!strcmp(o, "--ops")) nops = atol(v);
		else if (!strcmp(o, "--seed")) seed = strtoull(v, NULL, 0);
		else if (!strcmp(o, "--overlap")) high = !strcmp(v, "high");
		else {
			fprintf(stderr, "mmbench: unknown option %s\n", o);
			return 2;
		}
	}
	A = mm_arch_by_name(arch);
	P = mm_proto_by_name(mm);
	if (!A || !P || nthreads < 1 || nops < 2) {
		fprintf(stderr, "usage: mmbench [--bench NAME|all] --arch sv39|sv48|x86_64 --mm adv|rw "
				"--threads N --ops N --seed N --overlap low|high\n");
		return 2;
	}
	host_init((size_t)1 << 18);
	for (int b = 0; b < B_N; b++)
		if (!strcmp(bench, "all") || !strcmp(bench, names[b]))
			run((enum bench)b);
	host_fini();
	return atomic_load(&errors) ? 1 : 0;
}
