/* The five microbenchmarks' work on the core (see benchcore.h). */
#include "benchcore.h"
#include "host_platform.h"
#include "testutil.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define PG MM_PAGE_SIZE

const char *const bench_names[B_N] = { "mmap", "mmap-pf", "pf", "unmap-virt", "unmap" };

bool bench_run_option(struct bench_run *r, const char *o, const char *v)
{
	if (!strcmp(o, "--threads"))
		r->nthreads = atoi(v);
	else if (!strcmp(o, "--ops"))
		r->nops = atol(v);
	else if (!strcmp(o, "--seed"))
		r->seed = strtoull(v, NULL, 0);
	else
		return false;
	return true;
}

uint64_t bench_req_size(enum bench b) { return b == B_MMAP ? 4 * PG : PG; }

uint64_t bench_slot(const struct bench_run *r, uint64_t size)
{
	return (size * (uint64_t)r->nops + BENCH_LEAF_SPAN - 1) / BENCH_LEAF_SPAN * BENCH_LEAF_SPAN;
}

bool bench_fail(struct bench_run *r, const char *what, uint64_t va, const char *why)
{
	fprintf(stderr, "%s: %s at %#" PRIx64 ": %s\n", r->prog, what, va, why);
	atomic_fetch_add(&r->errors, 1);
	return false;
}

bool bench_must(struct bench_run *r, int err, const char *what, uint64_t va)
{
	return err == MM_OK || bench_fail(r, what, va, mm_strerror(err));
}

enum bench_want bench_want_of(enum bench b, bool requested)
{
	switch (b) {
	case B_MMAP: return requested ? W_RESERVED : W_GONE;
	case B_MMAP_PF: return requested ? W_MAPPED : W_GONE;
	case B_PF: return requested ? W_MAPPED : W_RESERVED;
	default: return requested ? W_GONE : W_RESERVED;
	}
}

bool bench_page_ok(struct bench_run *r, const uint8_t *p, uint64_t va)
{
	if (p[0] != BENCH_MARK)
		return bench_fail(r, "check", va, "the faulting store is not in the page");
	for (uint64_t k = 1; k < PG; k++)
		if (p[k])
			return bench_fail(r, "check", va, "new page not zeroed");
	return true;
}

void bench_layout(struct bench_run *r, enum bench b, uint8_t *requested)
{
	uint64_t size = bench_req_size(b), slot = bench_slot(r, size);
	long n = r->nops;
	for (int i = 0; i < r->nthreads; i++)
		for (long j = 0; j < n; j++) {
			uint64_t off = (uint64_t)i * slot + (uint64_t)j * size;
			r->offsets[i * n + j] = off;
			memset(requested + off / PG, 1, size / PG);
		}
	if (r->high) {
		uint64_t rng = r->seed * 0x9E3779B97F4A7C15ull + 1;
		for (long k = r->nthreads * n - 1; k > 0; k--) {
			long j = (long)xorshift64_below(&rng, (uint64_t)(k + 1));
			uint64_t x = r->offsets[k];
			r->offsets[k] = r->offsets[j];
			r->offsets[j] = x;
		}
	}
}

void bench_core_mmap(struct bench_run *r, uint64_t va, uint64_t len)
{
	struct mm_cursor c;
	if (!bench_must(r, mm_lock(&c, &r->as, va, va + len), "mmap: lock", va))
		return;
	bool ok = true;
	for (uint64_t o = 0; o < len && ok; o += PG) {
		struct mm_info in;
		ok = bench_must(r, mm_query(&c, va + o, &in), "mmap: query", va + o) &&
		     (in.kind == MM_INVALID || bench_fail(r, "mmap", va + o, "target not free"));
	}
	struct mm_status st = { .kind = MM_RESERVED, .prot = MM_PROT_R | MM_PROT_W | MM_PROT_U };
	if (ok)
		bench_must(r, mm_mark(&c, va, len, &st), "mmap: mark", va);
	mm_release(&c);
}

/* The frame is taken and zeroed before the lock, or with frame_inside
 * under it; the store is retried once the page is mapped and lands. */
void bench_core_fault(struct bench_run *r, uint64_t va)
{
	uint64_t pa = r->frame_inside ? MM_NOFRAME : host_frame_alloc_zeroed(1);
	if (!r->frame_inside && pa == MM_NOFRAME) {
		bench_fail(r, "fault", va, "out of frames");
		return;
	}
	struct mm_cursor c;
	if (!bench_must(r, mm_lock(&c, &r->as, va, va + PG), "fault: lock", va)) {
		if (pa != MM_NOFRAME)
			host_frame_free(pa, 1);
		return;
	}
	if (r->frame_inside && (pa = host_frame_alloc_zeroed(1)) == MM_NOFRAME) {
		mm_release(&c);
		bench_fail(r, "fault", va, "out of frames");
		return;
	}
	struct mm_info in;
	bool ok = bench_must(r, mm_query(&c, va, &in), "fault: query", va) &&
		  (in.kind == MM_RESERVED || bench_fail(r, "fault", va, "page not reserved")) &&
		  bench_must(r, mm_map(&c, va, pa, 1, in.prot, 0), "fault: map", va);
	mm_release(&c);
	if (!ok) {
		host_frame_free(pa, 1);
		return;
	}
	*(volatile uint8_t *)host_plat.phys_to_virt(pa) = BENCH_MARK;
}

void bench_core_unmap(struct bench_run *r, uint64_t va, uint64_t len)
{
	struct mm_cursor c;
	if (!bench_must(r, mm_lock(&c, &r->as, va, va + len), "unmap: lock", va))
		return;
	bench_must(r, mm_unmap(&c, va, len), "unmap", va);
	mm_release(&c);
}

void bench_core_request(struct bench_run *r, enum bench b, uint64_t off)
{
	uint64_t va = r->region + off;
	switch (b) {
	case B_MMAP:
		bench_core_mmap(r, va, 4 * PG);
		break;
	case B_MMAP_PF:
		bench_core_mmap(r, va, PG);
		bench_core_fault(r, va);
		break;
	case B_PF:
		bench_core_fault(r, va);
		break;
	default:
		bench_core_unmap(r, va, PG);
		break;
	}
}

void bench_core_setup(struct bench_run *r, enum bench b)
{
	if (b == B_MMAP || b == B_MMAP_PF)
		return;
	bench_core_mmap(r, r->region, r->total);
	if (b == B_UNMAP)
		for (long k = 0; k < r->nthreads * r->nops; k++)
			bench_core_fault(r, r->region + r->offsets[k]);
}

void bench_core_check(struct bench_run *r, enum bench b, const uint8_t *requested)
{
	struct mm_cursor c;
	uint64_t region = r->region;
	if (!bench_must(r, mm_lock(&c, &r->as, region, region + r->total), "check: lock", region))
		return;
	for (uint64_t o = 0; o < r->total; o += PG) {
		struct mm_info in;
		if (!bench_must(r, mm_query(&c, region + o, &in), "check: query", region + o))
			break;
		enum bench_want w = bench_want_of(b, requested[o / PG]);
		bool ok = w == W_GONE ? in.kind == MM_INVALID
			: w == W_RESERVED ? in.kind == MM_RESERVED
			: in.kind == MM_MAPPED;
		if (!ok) {
			bench_fail(r, "check", region + o, w == W_GONE ? "page still there"
				: w == W_RESERVED ? "page not reserved" : "page not mapped");
			break;
		}
		if (w == W_MAPPED) {
			uint8_t *p = host_plat.phys_to_virt(in.pa);
			if (!bench_page_ok(r, p, region + o))
				break;
			memset(p, 0xa5, PG);
		}
	}
	mm_release(&c);
	const char *why = NULL;
	if (mm_wf_check(&r->as, &why))
		bench_fail(r, "check", region, why);
}
