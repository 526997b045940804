/* The five microbenchmarks of docs/architecture.md section 5 on the
 * CortenMM core, without any timing: where each thread's requests go, the
 * region's set-up, one request, and the end check. mmbench times them;
 * mmaudit counts the cache lines they move between threads. */
#ifndef BENCHCORE_H
#define BENCHCORE_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include "cortenmm/cursor.h"

#define BENCH_LEAF_SPAN (512 * MM_PAGE_SIZE)   /* what one leaf PT page maps: 2 MiB */
#define BENCH_MARK 0x5a                        /* the byte a faulting store writes */
#define BENCH_CORE_REGION (1ull << 32)         /* base VA of the region in the core's AS */

enum bench { B_MMAP, B_MMAP_PF, B_PF, B_UNMAP_VIRT, B_UNMAP, B_N };
extern const char *const bench_names[B_N];

/* what a page of the region must be once a run is over */
enum bench_want { W_GONE, W_RESERVED, W_MAPPED };

/* One run: its configuration (set by the program) and its state. */
struct bench_run {
	const char *prog;         /* prefix of failure messages */
	int nthreads;
	long nops;                /* requests per thread */
	bool high;                /* high contention: offsets shuffled together */
	uint64_t seed;            /* the shuffle's seed */
	bool frame_inside;        /* a fault takes its frame under the page's lock */
	struct mm_as as;          /* the core's address space (core runs only) */
	uint64_t region;          /* base VA of the region */
	uint64_t total;           /* bytes of the region */
	uint64_t *offsets;        /* [thread * nops + j] -> offset in the region */
	atomic_int errors;        /* failed checks so far */
};

/* The options both programs take for a run: "--threads N", "--ops N",
 * "--seed N" set r's field from v (unchecked: the caller checks the
 * range). Returns whether o is one of them. */
bool bench_run_option(struct bench_run *r, const char *o, const char *v);

/* Bytes of one request of bench b: 16 KiB for mmap, else 4 KiB. */
uint64_t bench_req_size(enum bench b);
/* A thread's slot for requests of `size` bytes: its nops requests padded
 * to whole leaf PT pages (the paper's artifact pads to 512 pages). */
uint64_t bench_slot(const struct bench_run *r, uint64_t size);
/* Count a failed check and print what failed (prefixed r->prog). Returns false. */
bool bench_fail(struct bench_run *r, const char *what, uint64_t va, const char *why);
/* err must be MM_OK, else bench_fail with its name. Returns err == MM_OK. */
bool bench_must(struct bench_run *r, int err, const char *what, uint64_t va);
/* The state a page must be in after bench b, given whether a request covered it. */
enum bench_want bench_want_of(enum bench b, bool requested);
/* A mapped page's contents must be the written byte, then zeros; fails
 * (bench_fail) otherwise. Returns whether they are. */
bool bench_page_ok(struct bench_run *r, const uint8_t *p, uint64_t va);

/* Fill r->offsets (r->nthreads * r->nops entries, allocated by the caller)
 * for bench b: thread i's requests one after another in its slot; high
 * contention shuffles all of them together (seeded by r->seed). Marks
 * requested[] (one byte per page of the region, zeroed by the caller). */
void bench_layout(struct bench_run *r, enum bench b, uint8_t *requested);

/* The requests on the core, in r->as on host_plat. Each must succeed;
 * a failure is counted (bench_fail) and the request abandoned, leaving the
 * address space consistent. mmap: lock, check the range is free, mark it
 * reserved read-write. fault: what the kernel's handler does for a store
 * to va (a zeroed frame, lock, check reserved, map), then the store.
 * unmap: lock and unmap. */
void bench_core_mmap(struct bench_run *r, uint64_t va, uint64_t len);
void bench_core_fault(struct bench_run *r, uint64_t va);
void bench_core_unmap(struct bench_run *r, uint64_t va, uint64_t len);
/* One request of bench b at region offset off, on the core. */
void bench_core_request(struct bench_run *r, enum bench b, uint64_t off);
/* Put the core's region in the state bench b starts from: nothing (mmap
 * benches), reserved (pf, unmap-virt), or reserved with every requested
 * page faulted in (unmap). Needs r->as set up and r->offsets laid out. */
void bench_core_setup(struct bench_run *r, enum bench b);
/* Check every page of the core's region against bench_want_of (mapped
 * pages are then dirtied, so a later fault that forgot to zero shows),
 * then the tree's well-formedness; failures counted by bench_fail. */
void bench_core_check(struct bench_run *r, enum bench b, const uint8_t *requested);

#endif
