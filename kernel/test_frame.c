/* Frame allocator tests. */
#include <patina/errno.h>
#include "ktest.h"
#include "frame.h"
#include "bootinfo.h"
#include "memmap.h"
#include "cpu.h"
#include "smp.h"
#include "kstring.h"
#include "memlayout.h"

static int in_ram(paddr_t pa)
{
	for (int i = 0; i < boot_info.nmem; i++)
		if (pa >= boot_info.mem[i].base &&
		    pa + FRAME_SIZE <= boot_info.mem[i].base + boot_info.mem[i].size)
			return 1;
	return 0;
}

static int overlaps(paddr_t pa, paddr_t base, uint64_t size)
{
	return pa < base + size && base < pa + FRAME_SIZE;
}

/* Why pa must never be handed out, or NULL if it may be. Uses the raw DTB
 * facts, not the memmap computation the allocator was fed. */
static const char *forbidden(paddr_t pa)
{
	if (pa & (FRAME_SIZE - 1))
		return "misaligned";
	if (!in_ram(pa))
		return "outside RAM";
	for (int i = 0; i < boot_info.nresv; i++)
		if (overlaps(pa, boot_info.resv[i].base, boot_info.resv[i].size))
			return "in /reserved-memory (firmware)";
	for (int i = 0; i < boot_info.nmemrsv; i++)
		if (overlaps(pa, boot_info.memrsv[i].base, boot_info.memrsv[i].size))
			return "in a memreserve entry";
	if (overlaps(pa, boot_info.dtb_pa, boot_info.dtb_size))
		return "inside the DTB";
	if (overlaps(pa, kernel_image_pa_start(),
		     kernel_image_pa_end() - kernel_image_pa_start()))
		return "inside the kernel image";
	return NULL;
}

KTEST(20, frame_alloc_basic)
{
	uint64_t before = frame_free_count();
	paddr_t a, b, z;
	if (frame_alloc(0, &a) || frame_alloc(0, &b))
		return KFAIL("allocation failed with %lu free", (unsigned long)before);
	if (a == b)
		return KFAIL("same frame %lx handed out twice", (unsigned long)a);
	const char *why_a = forbidden(a), *why_b = forbidden(b);
	if (why_a || why_b)
		return KFAIL("frame %lx: %s", (unsigned long)(why_a ? a : b), why_a ? why_a : why_b);
	if (frame_is_free(a) || frame_free_count() != before - 2)
		return KFAIL("allocated frames still counted free");
	/* Dirty b, give it back, and ask for a zeroed frame (LIFO: likely b). */
	memset(phys_to_virt(b), 0xa5, FRAME_SIZE);
	if (frame_free(b))
		return KFAIL("free of a held frame failed");
	if (frame_alloc(FRAME_ZERO, &z))
		return KFAIL("zeroed allocation failed");
	const uint64_t *w = phys_to_virt(z);
	for (unsigned i = 0; i < FRAME_SIZE / 8; i++)
		if (w[i])
			return KFAIL("FRAME_ZERO frame %lx has %lx at word %u%s",
				     (unsigned long)z, (unsigned long)w[i], i,
				     z == b ? " (the dirtied frame)" : "");
	if (frame_free(a) || frame_free(z))
		return KFAIL("free failed");
	if (frame_free_count() != before)
		return KFAIL("free count %lu after, %lu before",
			     (unsigned long)frame_free_count(), (unsigned long)before);
	return 0;
}

KTEST(20, frame_free_rejects)
{
	uint64_t before = frame_free_count();
	paddr_t a;
	if (frame_alloc(0, &a))
		return KFAIL("allocation failed");
	if (frame_free(a + 8) != -E_INVAL)
		return KFAIL("misaligned free accepted");
	if (frame_free(kernel_image_pa_start()) != -E_INVAL)
		return KFAIL("freeing the kernel image accepted");
	if (frame_free(boot_info.dtb_pa & ~(FRAME_SIZE - 1)) != -E_INVAL)
		return KFAIL("freeing the DTB accepted");
	for (int i = 0; i < boot_info.nresv; i++)
		if (frame_free(boot_info.resv[i].base & ~(FRAME_SIZE - 1)) != -E_INVAL)
			return KFAIL("freeing reserved memory accepted");
	if (frame_free(a))
		return KFAIL("first free failed");
	if (frame_free(a) != -E_INVAL)
		return KFAIL("double free accepted");
	if (frame_free_count() != before)
		return KFAIL("free count changed by rejected frees");
	return 0;
}

/* Every frame the allocator can give: allocate until it refuses, checking
 * each one against the DTB's reserved regions, the DTB and the kernel, and
 * that none comes twice (a bitmap over the RAM span, kept in frames taken
 * from the allocator first). Then give everything back. */
#define SEEN_PAGES_MAX 512

/* Frames cached in other harts' magazines: this hart cannot get them. */
static uint64_t others_cached(void)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < harts_max; i++)
		if (i != this_cpu()->index)
			n += __atomic_load_n(&cpus[i].mag.count, __ATOMIC_RELAXED);
	return n;
}

KTEST(20, frame_exhaustion)
{
	uint64_t cached = others_cached();
	uint64_t before = frame_free_count() - cached;
	paddr_t lo = ~0ULL, hi = 0;
	for (int i = 0; i < boot_info.nmem; i++) {
		if (boot_info.mem[i].base < lo)
			lo = boot_info.mem[i].base;
		if (boot_info.mem[i].base + boot_info.mem[i].size > hi)
			hi = boot_info.mem[i].base + boot_info.mem[i].size;
	}
	uint64_t span = (hi - lo) / FRAME_SIZE;
	uint64_t bits_per_page = FRAME_SIZE * 8;
	uint64_t npages = (span + bits_per_page - 1) / bits_per_page;
	if (npages > SEEN_PAGES_MAX)
		return KFAIL("RAM span of %lu frames is beyond this test", (unsigned long)span);

	static paddr_t seen[SEEN_PAGES_MAX];
	uint64_t handed = 0;
	paddr_t chain = 0;           /* frames handed out, linked through their first word */
	const char *bad = NULL;
	paddr_t badpa = 0;

	for (uint64_t i = 0; i < npages; i++)
		if (frame_alloc(FRAME_ZERO, &seen[i]))
			return KFAIL("cannot allocate the seen-bitmap");
	/* Mark the bitmap pages themselves. */
	for (uint64_t i = 0; i < npages; i++) {
		paddr_t p = seen[i];
		const char *f = forbidden(p);
		if (f) {
			if (!bad) {
				bad = f;
				badpa = p;
			}
			continue;
		}
		uint64_t idx = (p - lo) / FRAME_SIZE;
		uint8_t *page = phys_to_virt(seen[idx / bits_per_page]);
		page[(idx % bits_per_page) / 8] |= (uint8_t)(1u << (idx % 8));
	}
	handed = npages;

	for (;;) {
		paddr_t p;
		int err = frame_alloc(0, &p);
		if (err == -E_NOMEM)
			break;
		if (err)
			return KFAIL("frame_alloc returned %d", err);
		handed++;
		const char *f = forbidden(p);
		if (f && !bad) {
			bad = f;
			badpa = p;
		}
		if (!f) {
			uint64_t idx = (p - lo) / FRAME_SIZE;
			uint8_t *page = phys_to_virt(seen[idx / bits_per_page]);
			uint8_t m = (uint8_t)(1u << (idx % 8));
			if (page[(idx % bits_per_page) / 8] & m) {
				if (!bad) {
					bad = "handed out twice";
					badpa = p;
				}
			}
			page[(idx % bits_per_page) / 8] |= m;
			*(paddr_t *)phys_to_virt(p) = chain;
			chain = p;
		}
	}
	uint64_t at_empty = frame_free_count();
	paddr_t extra;
	int again = frame_alloc(0, &extra);

	/* Give everything back before judging, so a failure leaves the
	 * allocator usable. */
	uint64_t returned = 0;
	int free_err = 0;
	while (chain) {
		paddr_t next = *(paddr_t *)phys_to_virt(chain);
		free_err |= frame_free(chain);
		returned++;
		chain = next;
	}
	for (uint64_t i = 0; i < npages; i++) {
		free_err |= frame_free(seen[i]);
		returned++;
	}
	if (again == 0)
		frame_free(extra);

	if (bad)
		return KFAIL("frame %lx: %s", (unsigned long)badpa, bad);
	if (again != -E_NOMEM)
		return KFAIL("allocation after exhaustion returned %d", again);
	if (at_empty != cached)
		return KFAIL("%lu frames counted free at exhaustion, %lu cached elsewhere",
			     (unsigned long)at_empty, (unsigned long)cached);
	if (handed != before)
		return KFAIL("handed out %lu frames but %lu were free",
			     (unsigned long)handed, (unsigned long)before);
	if (free_err || returned != handed)
		return KFAIL("returning the frames failed");
	if (frame_free_count() != before + cached)
		return KFAIL("free count %lu after, %lu before",
			     (unsigned long)frame_free_count(), (unsigned long)(before + cached));
	return 0;
}

/* Allocator fed exactly memmap's ranges: the two must agree on the total. */
KTEST(20, frame_accounting)
{
	struct phys_range r[MEMMAP_MAX];
	int n = memmap_free_ranges(&boot_info, r, MEMMAP_MAX);
	if (n <= 0)
		return KFAIL("memmap gave %d ranges", n);
	uint64_t frames = 0;
	for (int i = 0; i < n; i++) {
		frames += r[i].size / FRAME_SIZE;
		for (paddr_t p = r[i].base; p < r[i].base + r[i].size; p += FRAME_SIZE) {
			const char *f = forbidden(p);
			if (f)
				return KFAIL("free range frame %lx: %s", (unsigned long)p, f);
		}
	}
	uint64_t managed = frame_total_count(), meta = frame_meta_count();
	/* Managed frames plus the allocator's own metadata (bitmaps and
	 * descriptor arrays) account for every free frame, except ranges too
	 * small to hold their own metadata. */
	uint64_t tiny = 0;
	for (int i = 0; i < n; i++)
		if (r[i].size / FRAME_SIZE < 64)
			tiny += r[i].size / FRAME_SIZE;
	if (managed + meta > frames || managed + meta + tiny < frames)
		return KFAIL("allocator manages %lu + %lu metadata frames of %lu free",
			     (unsigned long)managed, (unsigned long)meta, (unsigned long)frames);
	struct phys_range reg[FRAME_MAX_REGIONS];
	int nr = frame_regions(reg, FRAME_MAX_REGIONS);
	for (int k = 0; k < nr; k++) {
		int inside = 0;
		for (int i = 0; i < n; i++)
			inside |= reg[k].base >= r[i].base &&
				  reg[k].base + reg[k].size <= r[i].base + r[i].size;
		if (!inside)
			return KFAIL("managed region %lx+%lx is not inside a free range",
				     (unsigned long)reg[k].base, (unsigned long)reg[k].size);
	}
	return 0;
}

/* Harts allocate and free at once; each tags its frames and checks the
 * tags before freeing, so a frame given to two harts shows up. At most
 * STRESS_HARTS take part, spread over the logical harts (the last one
 * included): every one of them queues on the pool lock, and with far more
 * harts than host cores under QEMU each hand-over of that ticket lock
 * waits for the host to schedule one particular vCPU. */
#define STRESS_ROUNDS 64
#define STRESS_HELD   48
#define STRESS_HARTS  8

static volatile uint32_t stress_go, stress_done, stress_errors;

static void stress_body(void *arg)
{
	(void)arg;
	uint32_t me = this_cpu()->index;
	paddr_t held[STRESS_HELD];
	while (!__atomic_load_n(&stress_go, __ATOMIC_ACQUIRE))
		;
	for (int r = 0; r < STRESS_ROUNDS; r++) {
		int n = 0;
		for (; n < STRESS_HELD; n++) {
			if (frame_alloc(0, &held[n]))
				break;
			uint64_t *w = phys_to_virt(held[n]);
			w[0] = me;
			w[1] = held[n];
		}
		for (int i = 0; i < n; i++) {
			uint64_t *w = phys_to_virt(held[i]);
			if (w[0] != me || w[1] != held[i])
				__atomic_fetch_add(&stress_errors, 1, __ATOMIC_RELAXED);
			if (frame_free(held[i]))
				__atomic_fetch_add(&stress_errors, 1, __ATOMIC_RELAXED);
		}
	}
	__atomic_fetch_add(&stress_done, 1, __ATOMIC_RELEASE);
}

/* The other harts that take part (see above): every other hart when there
 * are at most STRESS_HARTS, else those of STRESS_HARTS indices spread
 * from 0 to the last. Fills out[] (STRESS_HARTS entries); returns how many. */
static uint32_t stress_pick(uint32_t *out)
{
	uint32_t me = this_cpu()->index, n = 0;
	for (uint32_t k = 0; k < STRESS_HARTS && k < ncpus; k++) {
		uint32_t idx = ncpus <= STRESS_HARTS ? k : k * (ncpus - 1) / (STRESS_HARTS - 1);
		if (idx != me)
			out[n++] = idx;
	}
	return n;
}

KTEST(20, frame_smp_stress)
{
	uint64_t before = frame_free_count();
	stress_go = 0;
	stress_done = 0;
	stress_errors = 0;
	uint32_t others[STRESS_HARTS], n = stress_pick(others);
	for (uint32_t i = 0; i < n; i++)
		if (smp_call_async(others[i], stress_body, NULL))
			return KFAIL("cannot post to hart %u", cpus[others[i]].hartid);
	__atomic_store_n(&stress_go, 1, __ATOMIC_RELEASE);
	stress_body(NULL);
	for (uint32_t i = 0; i < n; i++)
		if (smp_call_wait(others[i], 20000000))
			return KFAIL("hart %u did not finish", cpus[others[i]].hartid);
	if (stress_done != n + 1)
		return KFAIL("%u of %u harts finished", stress_done, n + 1);
	if (stress_errors)
		return KFAIL("%u tag or free errors", stress_errors);
	if (frame_free_count() != before)
		return KFAIL("free count %lu after, %lu before",
			     (unsigned long)frame_free_count(), (unsigned long)before);
	return 0;
}
