/* mmaudit: the coherence audit of one memory manager on one of the five
 * microbenchmarks (benchcore.h). It counts, instead of timing, the cache
 * lines the benchmark's threads pass between them.
 *   mmaudit [--mm PROTOCOL] [--bench NAME] [--contention low|high]
 *           [--threads N] [--ops N] [--seed N] [--quantum Q] [--arch A]
 *           [--top K]
 * The memory managers and the host platform are compiled with GCC's
 * -fsanitize=thread instrumentation, whose hooks report every load, store
 * and atomic to a model of 64-byte lines (audit_tsan.c, audit_count.h).
 * The N worker threads run one at a time under a seeded schedule
 * (audit_sched.h): the turn passes after each request, whenever a worker
 * waits (spin, mutex, TLB shootdown), and after a seeded draw of 1..2Q
 * observed accesses (--quantum, default 64; 0: never in between). The
 * same arguments give the same interleaving and the same counts.
 *
 * As in mmbench, each thread does --ops requests (default 32) and only the
 * second half counts: from the moment the last thread has finished its
 * first half to the moment the last finishes its second. The set-up (run
 * by the main thread before the workers start) stands for memory. TLB
 * flushes are shootdowns to every other thread, which answer between
 * requests and while they wait.
 *
 * One JSON line:
 * {"audit":"coherence","mm","bench","contention","threads","ops",
 *  "transfers_per_op","transfers","accesses_per_op","paging","seed","quantum"}
 * where ops counts the counted requests of all threads. With --top K, the
 * K code sites (pc offsets in this executable) that made the most
 * transfers go to stderr, each with the code that last wrote a line it
 * moved and that line's kind of memory.
 * Exit 0 iff every request succeeded and the region and the frame count
 * ended as the benchmark leaves them. */
#include "arch_registry.h"
#include "audit_count.h"
#include "audit_sched.h"
#include "benchcore.h"
#include "host_platform.h"
#include "testutil.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct pt_arch *A;
static const struct mm_protocol *P;
static struct bench_run R = { .prog = "mmaudit", .nthreads = 2, .nops = 32, .seed = 1 };
static enum bench B;
static unsigned quantum = 64;
static int top;
static size_t nframes;            /* the host arena's frames */
static int half, done;            /* threads past their first half / done */

/* Answer flush requests and let the others run until *v reaches want. */
static void wait_for(const int *v, int want)
{
	while (*v < want) {
		host_tlb_poll();
		audit_switch();
	}
}

/* A worker: joins the AS, runs its first half, waits for every thread to
 * have done so (the last one starts the count), runs the counted half
 * (the last to finish stops it), then answers flushes until all are done
 * and leaves, giving its pool and frame cache back. */
static void *worker(void *arg)
{
	int id = (int)(intptr_t)arg;
	audit_sched_enter(id);
	host_tlb_join(&R.as);
	for (long j = 0; j < R.nops; j++) {
		if (j == R.nops / 2) {
			if (++half == R.nthreads)
				audit_counting(true);
			wait_for(&half, R.nthreads);
		}
		bench_core_request(&R, B, R.offsets[id * R.nops + j]);
		host_tlb_poll();
		audit_switch();
	}
	if (++done == R.nthreads)
		audit_counting(false);
	wait_for(&done, R.nthreads);
	host_tlb_leave();
	host_pool_drain();
	audit_sched_leave();
	return NULL;
}

extern char __executable_start, _end;

/* What kind of memory the line at l is, for --top: a frame of the host
 * arena (PT page, metadata array or data page), a page descriptor (which
 * frame's, and the field's offset), this program's static data, or else
 * heap or a stack. */
static void describe(uintptr_t l, char *out, size_t n)
{
	uintptr_t arena = (uintptr_t)host_plat.phys_to_virt(HOST_PA_BASE);
	uintptr_t descs = (uintptr_t)host_plat.page_desc(HOST_PA_BASE);
	size_t dsz = sizeof(struct mm_page);
	if (l >= arena && l < arena + nframes * MM_PAGE_SIZE)
		snprintf(out, n, "arena frame %zu +%zu", (size_t)((l - arena) / MM_PAGE_SIZE),
			 (size_t)((l - arena) % MM_PAGE_SIZE));
	else if (l + AUDIT_LINE > descs && l < descs + nframes * dsz)
		snprintf(out, n, "page descriptors of frames %zu..%zu (struct mm_page is %zu bytes)",
			 l > descs ? (size_t)(l - descs) / dsz : 0,
			 (size_t)(l + AUDIT_LINE - 1 - descs) / dsz, dsz);
	else if (l >= (uintptr_t)&__executable_start && l < (uintptr_t)&_end)
		snprintf(out, n, "static data +%#zx", (size_t)(l - (uintptr_t)&__executable_start));
	else
		snprintf(out, n, "heap or stack");
}

/* Print the top sites to stderr. */
static void print_top(void)
{
	struct audit_site s[64];
	size_t k = audit_top(s, top < 64 ? (size_t)top : 64);
	for (size_t i = 0; i < k; i++) {
		char what[160];
		describe(s[i].line, what, sizeof(what));
		fprintf(stderr, "mmaudit: site %" PRIu64 " transfers pc +%#zx writer +%#zx line %s\n",
			s[i].transfers, (size_t)((uintptr_t)s[i].pc - (uintptr_t)&__executable_start),
			(size_t)((uintptr_t)s[i].writer_pc - (uintptr_t)&__executable_start), what);
	}
}

/* The run: lay out and set up (main thread), start the workers under the
 * scheduler, check the region, print the line, tear down and check every
 * frame came back. */
static void run(void)
{
	R.total = bench_slot(&R, bench_req_size(B)) * (uint64_t)R.nthreads;
	R.offsets = malloc(sizeof(*R.offsets) * (size_t)R.nthreads * (size_t)R.nops);
	uint8_t *requested = calloc(R.total / MM_PAGE_SIZE, 1);
	pthread_t *tids = calloc((size_t)R.nthreads, sizeof(*tids));
	if (!R.offsets || !requested || !tids) {
		fprintf(stderr, "mmaudit: out of memory\n");
		exit(1);
	}
	bench_layout(&R, B, requested);
	R.region = BENCH_CORE_REGION;
	if (!bench_must(&R, mm_as_init(&R.as, A, P, &host_plat, A->user_lo, A->user_last, NULL),
			"as_init", 0))
		exit(1);
	bench_core_setup(&R, B);
	audit_sched_init(R.nthreads, R.seed);
	audit_sched_quantum(quantum);
	for (int i = 0; i < R.nthreads; i++)
		if (pthread_create(&tids[i], NULL, worker, (void *)(intptr_t)i)) {
			fprintf(stderr, "mmaudit: cannot start thread %d\n", i);
			exit(1);
		}
	audit_sched_run(tids);
	bench_core_check(&R, B, requested);

	struct audit_totals t;
	audit_totals(&t);
	long ops = (R.nops - R.nops / 2) * R.nthreads;
	printf("{\"audit\":\"coherence\",\"mm\":\"%s\",\"bench\":\"%s\",\"contention\":\"%s\","
	       "\"threads\":%d,\"ops\":%ld,\"transfers_per_op\":%.3f,\"transfers\":%" PRIu64 ","
	       "\"accesses_per_op\":%.1f,\"paging\":\"%s\",\"seed\":%" PRIu64 ",\"quantum\":%u}\n",
	       P->name, bench_names[B], R.high ? "high" : "low", R.nthreads, ops,
	       (double)t.transfers / (double)ops, t.transfers, (double)t.accesses / (double)ops,
	       A->name, R.seed, quantum);
	fflush(stdout);
	if (top)
		print_top();

	mm_as_destroy(&R.as);
	host_rcu_barrier();
	host_pool_drain();
	if (host_frames_used())
		bench_fail(&R, "end", R.region, "frames not returned");
	free(tids);
	free(requested);
	free(R.offsets);
}

static void usage(void)
{
	fprintf(stderr, "usage: mmaudit [--mm PROTOCOL] [--bench mmap|mmap-pf|pf|unmap-virt|unmap] "
			"[--contention low|high]\n"
			"               [--threads 1..%d] [--ops N] [--seed N] [--quantum Q] "
			"[--arch %s] [--top K]\n", AUDIT_MAX_THREADS, mm_arch_names());
	exit(2);
}

int main(int argc, char **argv)
{
	const char *arch = "sv39", *mm = "adv", *bench = "pf";
	if (mm_arch_list_requested(argc, argv))
		return 0;
	for (int i = 1; i < argc; i++) {
		if (arg_arch_mm(argc, argv, &i, &arch, &mm))
			continue;
		if (i + 1 >= argc)
			usage();
		const char *o = argv[i], *v = argv[++i];
		if (bench_run_option(&R, o, v))
			continue;
		if (!strcmp(o, "--bench"))
			bench = v;
		else if (!strcmp(o, "--contention") && (!strcmp(v, "low") || !strcmp(v, "high")))
			R.high = !strcmp(v, "high");
		else if (!strcmp(o, "--quantum"))
			quantum = (unsigned)strtoul(v, NULL, 0);
		else if (!strcmp(o, "--top"))
			top = atoi(v);
		else
			usage();
	}
	A = mm_arch_by_name(arch);
	P = mm_proto_by_name(mm);
	int b = 0;
	while (b < B_N && strcmp(bench, bench_names[b]))
		b++;
	if (!A || !P || b == B_N) {
		fprintf(stderr, "mmaudit: unknown %s\n", !A ? "--arch" : !P ? "--mm" : "--bench");
		usage();
	}
	B = (enum bench)b;
	if (R.nthreads < 1 || R.nthreads > AUDIT_MAX_THREADS || R.nops < 2 || R.nops > (1l << 16))
		usage();
	if (BENCH_CORE_REGION + bench_slot(&R, bench_req_size(B_MMAP)) * (uint64_t)R.nthreads - 1 >
	    A->user_last) {
		fprintf(stderr, "mmaudit: %d threads x %ld ops do not fit the %s user half\n",
			R.nthreads, R.nops, A->name);
		usage();
	}
	/* as mmbench: a frame per request, a leaf table and a metadata array
	 * per thread and some for splits, each thread's pool and frame cache */
	nframes = (size_t)(R.nthreads + 1) * ((size_t)R.nops + 4 + MM_POOL_SIZE + HOST_FRAME_CACHE) + 256;
	host_init(nframes);
	host_arena_touch();
	host_frame_cache(true);
	host_tlb_shootdown(true);
	run();
	host_fini();
	return atomic_load(&R.errors) ? 1 : 0;
}
