/* Spurious-fault harness: a fault that finds its page already resolved
 * must not repeat for ever (pt_arch.tlb_caches_invalid, mm_fault_settle).
 *
 *   spurious --arch A --mm P [--no-local-flush]
 *
 * Two simulated harts share one address space; each has a small TLB
 * filled only by walking the real page tables. A table whose
 * tlb_caches_invalid is set gets the hardware it describes: a TLB that
 * keeps the entry an access faulted on (not present, or present without
 * the rights or, with hw_ad false, without A / D) until the entry is
 * flushed; one whose flag is clear gets the x86 rule: no faulting entry
 * is cached and a fault drops the hart's entry for the address.
 * The fault handler is the kernel's (kernel/mk/uvm.c uvm_fault) for a page
 * it finds mapped: mm_fault_settle under a cursor, then a local flush of
 * the page on the faulting hart when told to. Scenarios:
 *  - race: hart 0 faults on an empty page, hart 1 maps it (no flush: an
 *    empty entry became present), hart 0's handler finds it mapped;
 *  - software A/D (hw_ad false only): both harts write a clean leaf, one
 *    handler records D, the other finds it set.
 * Each faulting access is retried up to RETRIES times; one that still
 * faults fails the run. --no-local-flush (the seeded bug) drops the local
 * flush: on a table with tlb_caches_invalid the race must then fail. */
#include "arch_registry.h"
#include "host_platform.h"
#include "testutil.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#define PG MM_PAGE_SIZE
#define NHARTS 2
#define TLB_SIZE 4
#define RETRIES 8

struct tlbe {
	bool valid;
	bool faults;      /* a cached translation the access faulted on */
	uint64_t va;
	unsigned prot;    /* MM_PROT_* the hardware grants (!faults) */
};
static struct tlbe tlb[NHARTS][TLB_SIZE];
static const struct pt_arch *A;
static const struct mm_protocol *P;
static struct mm_platform plat;
static struct mm_as as;
static int no_local_flush, fails;
static unsigned long nspurious, nlocal;

static void check_failed(void)
{
	fails++;
}

static void drop(unsigned h, uint64_t lo, uint64_t hi /* inclusive */)
{
	for (unsigned k = 0; k < TLB_SIZE; k++)
		if (tlb[h][k].valid && tlb[h][k].va >= (lo & ~(PG - 1)) && tlb[h][k].va <= hi)
			tlb[h][k].valid = false;
}

static void sim_flush(struct mm_as *a, uint64_t start, uint64_t end)
{
	host_plat.tlb_flush(a, start, end);
	for (unsigned h = 0; h < NHARTS; h++)
		drop(h, start, end);
}

static void sim_flush_bbm(struct mm_as *a, uint64_t start, uint64_t end)
{
	host_plat.tlb_flush_bbm(a, start, end);
	for (unsigned h = 0; h < NHARTS; h++)
		drop(h, start, end);
}

/* What the hardware grants at va as the page table stands: MM_PROT_R/W
 * where the leaf allows the access without a fault, 0 if none. */
static unsigned walk(uint64_t va)
{
	uint64_t table = mm_as_root_pa_for(&as, va);
	for (unsigned L = A->levels; L >= 1; L--) {
		uint64_t e = ((uint64_t *)plat.phys_to_virt(table))[pt_index(A, va, L)];
		if (!A->present(e))
			return 0;
		if (L == 1 || A->is_leaf(e, L)) {
			unsigned p = A->prot(e, L) & (MM_PROT_R | MM_PROT_W);
			if (A->hw_ad)
				return p;    /* the MMU sets A and D itself */
			if (!A->accessed(e, L))
				return 0;
			return A->dirty(e, L) ? p : p & ~MM_PROT_W;
		}
		table = A->addr(e, L);
	}
	return 0;
}

/* Access va on hart h; true when it completes, false when it faults. */
static bool access_va(unsigned h, uint64_t va, bool write)
{
	unsigned need = write ? MM_PROT_W : MM_PROT_R;
	struct tlbe *hit = NULL;
	for (unsigned k = 0; k < TLB_SIZE; k++)
		if (tlb[h][k].valid && tlb[h][k].va == va)
			hit = &tlb[h][k];
	if (hit && !hit->faults && (hit->prot & need))
		return true;
	if (!hit || !A->tlb_caches_invalid) {
		unsigned p = walk(va);
		if (hit)
			hit->valid = false;    /* the fault (or refill) replaces it */
		if (p & need) {
			struct tlbe *slot = &tlb[h][va / PG % TLB_SIZE];
			*slot = (struct tlbe){ .valid = true, .va = va, .prot = p };
			return true;
		}
		if (A->tlb_caches_invalid)   /* keeps what it faulted on */
			tlb[h][va / PG % TLB_SIZE] = (struct tlbe){ .valid = true, .faults = !p,
								   .va = va, .prot = p };
	}
	return false;
}

/* The fault handler for a page another hart may have resolved: true when
 * it found the page mapped with the rights the access needs. */
static bool handle(unsigned h, uint64_t va, bool write)
{
	struct mm_cursor c;
	struct mm_info in;
	bool flush = false, mapped;
	CHECK(mm_lock(&c, &as, va, va + PG) == MM_OK, "lock");
	mapped = mm_query(&c, va, &in) == MM_OK && in.kind == MM_MAPPED &&
		 (in.prot & (write ? MM_PROT_W : MM_PROT_R));
	if (mapped)
		CHECK(mm_fault_settle(&c, va, write, &flush) == MM_OK, "settle");
	mm_release(&c);
	nspurious += mapped;
	if (flush && !no_local_flush) {
		drop(h, va, va + PG - 1);   /* the local fence, this hart only */
		nlocal++;
	}
	return mapped;
}

/* Access until it completes, the handler resolving each fault. */
static void retry_until_done(unsigned h, uint64_t va, bool write, const char *what)
{
	for (unsigned n = 0; n < RETRIES; n++) {
		if (access_va(h, va, write))
			return;
		CHECK(handle(h, va, write), "%s: fault at %#" PRIx64 " with nothing mapped", what, va);
	}
	CHECK(false, "%s: hart %u faults on %#" PRIx64 " %u times: the spurious fault repeats for ever",
	      what, h, va, RETRIES);
}

static void map_page(uint64_t va, unsigned flags)
{
	struct mm_cursor c;
	uint64_t pa = host_frame_alloc(1);
	CHECK(pa != MM_NOFRAME, "no frame");
	CHECK(mm_lock(&c, &as, va, va + PG) == MM_OK, "lock");
	CHECK(mm_map(&c, va, pa, 1, MM_PROT_R | MM_PROT_W | MM_PROT_U, flags) == MM_OK, "map");
	mm_release(&c);
}

int main(int argc, char **argv)
{
	const char *arch = "sv39", *proto = "adv";
	if (mm_arch_list_requested(argc, argv))
		return 0;
	for (int i = 1; i < argc; i++) {
		if (arg_arch_mm(argc, argv, &i, &arch, &proto))
			continue;
		if (!strcmp(argv[i], "--no-local-flush")) {
			no_local_flush = 1;
		} else {
			fprintf(stderr, "usage: spurious --arch %s --mm P [--no-local-flush]\n",
				mm_arch_names());
			return 2;
		}
	}
	A = mm_arch_by_name(arch);
	P = mm_proto_by_name(proto);
	if (!A || !P) {
		fprintf(stderr, "spurious: bad --arch or --mm\n");
		return 2;
	}
	host_init((size_t)1 << 12);
	plat = host_plat;
	plat.tlb_flush = sim_flush;
	plat.tlb_flush_bbm = sim_flush_bbm;
	CHECK(mm_as_init(&as, A, P, &plat, A->user_lo, A->user_last, NULL) == MM_OK, "as_init");
	uint64_t va = (1ull << 30) + 5 * PG;

	/* race: hart 0 faults on the empty page, hart 1 maps it */
	CHECK(!access_va(0, va, false), "empty page readable");
	map_page(va, MM_MAP_DIRTY);
	CHECK(handle(0, va, false), "race: the handler does not find the page mapped");
	retry_until_done(0, va, false, "race");

	/* software A/D: both harts write a clean leaf */
	if (!A->hw_ad) {
		uint64_t vb = va + PG;
		map_page(vb, MM_MAP_ACCESSED);
		CHECK(access_va(0, vb, false) && access_va(1, vb, false), "clean leaf not readable");
		CHECK(!access_va(0, vb, true) && !access_va(1, vb, true), "clean leaf writable");
		CHECK(handle(1, vb, true), "A/D: no leaf");   /* records D, flushes */
		retry_until_done(1, vb, true, "A/D recorded");
		retry_until_done(0, vb, true, "A/D found recorded");
	}

	mm_as_destroy(&as);
	host_rcu_barrier();
	host_pool_drain();
	CHECK(host_frames_used() == 0, "%zu frames not returned", host_frames_used());
	host_fini();
	printf("spurious %s %s%s: tlb_caches_invalid %d, %lu spurious faults, %lu local flushes: %s\n",
	       A->name, P->name, no_local_flush ? " (no local flush)" : "", A->tlb_caches_invalid,
	       nspurious, nlocal, fails ? "FAILED" : "resolved");
	return fails ? 1 : 0;
}
