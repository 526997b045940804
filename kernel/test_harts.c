/* Harts beyond the first 64 hart ids: splitting hart sets into SBI
 * windows, and a remote TLB flush that must reach a hart whose id is 64
 * or more (run when the machine has one); and a remote TLB flush that
 * must reach a hart running with its interrupts off. */
#include "ktest.h"
#include "cpu.h"
#include "frame.h"
#include "hartmask.h"
#include "memlayout.h"
#include "mm_platform.h"
#include "smp.h"
#include "timer.h"
#include "cortenmm/cursor.h"

struct window { unsigned long mask, base; };
struct windows { struct window w[8]; int n, stop_at; };

static long record_window(unsigned long mask, unsigned long base, void *arg)
{
	struct windows *r = arg;
	if (r->n < 8)
		r->w[r->n] = (struct window){ mask, base };
	r->n++;
	return r->n == r->stop_at ? -7 : 0;
}

KTEST(30, harts_windows_split)
{
	/* Logical hart i has hart id ids[i]; hart 1 is the caller (skipped). */
	static const uint32_t ids[] = { 0, 5, 63, 64, 127, 128, 300, 511, 70 };
	const uint32_t n = sizeof ids / sizeof ids[0];
	struct hartmask m = { { 0 } };
	for (uint32_t i = 0; i < n; i++)
		hartmask_set(&m, i);
	struct windows r = { .n = 0, .stop_at = -1 };
	long e = hartmask_windows(&m, 1, ids, n, record_window, &r);
	static const struct window want[] = {
		{ (1UL << 0) | (1UL << 63), 0 },
		{ (1UL << 0) | (1UL << 6) | (1UL << 63), 64 },
		{ 1UL << 0, 128 },
		{ 1UL << 44, 256 },
		{ 1UL << 63, 448 },
	};
	const int nwant = sizeof want / sizeof want[0];
	if (e || r.n != nwant)
		return KFAIL("%d windows (result %ld), want %d", r.n, e, nwant);
	for (int i = 0; i < nwant; i++)
		if (r.w[i].mask != want[i].mask || r.w[i].base != want[i].base)
			return KFAIL("window %d: mask %lx base %lu, want %lx base %lu", i,
				     r.w[i].mask, r.w[i].base, want[i].mask, want[i].base);
	/* An error from one window stops the rest and comes back. */
	r = (struct windows){ .n = 0, .stop_at = 2 };
	e = hartmask_windows(&m, -1, ids, n, record_window, &r);
	if (e != -7 || r.n != 2)
		return KFAIL("stop: result %ld after %d windows", e, r.n);
	/* Nobody but the caller: no call at all. */
	struct hartmask only = { { 0 } };
	hartmask_set(&only, 3);
	r = (struct windows){ .n = 0, .stop_at = -1 };
	e = hartmask_windows(&only, 3, ids, n, record_window, &r);
	if (e || r.n)
		return KFAIL("a set of only the caller made %d calls", r.n);
	return 0;
}

/* The probe page: below the kernel image, where nothing else is mapped. */
#define PROBE_VA (KERNEL_VBASE - (2UL << 20))

static void read_probe(void *arg)
{
	*(volatile uint64_t *)arg = *(volatile uint64_t *)PROBE_VA;
}

/* Map PROBE_VA to a fresh frame holding `value` (first unmapping what is
 * there) in one kernel-AS transaction; its commit flushes every hart. */
static int probe_map(uint64_t value, int unmap_first)
{
	paddr_t pa;
	if (frame_alloc(FRAME_ZERO, &pa))
		return -1;
	*(volatile uint64_t *)phys_to_virt(pa) = value;
	struct mm_cursor c;
	if (mm_lock(&c, &kernel_as, PROBE_VA, PROBE_VA + PAGE_SIZE)) {
		frame_free(pa);
		return -1;
	}
	int err = unmap_first ? mm_unmap(&c, PROBE_VA, PAGE_SIZE) : 0;
	if (!err)
		err = mm_map(&c, PROBE_VA, pa, 1, MM_PROT_R | MM_PROT_W | MM_PROT_G, 0);
	mm_release(&c);
	if (err)
		frame_free(pa);
	return err ? -1 : 0;
}

static void probe_unmap(void)
{
	struct mm_cursor c;
	if (mm_lock(&c, &kernel_as, PROBE_VA, PROBE_VA + PAGE_SIZE))
		return;
	mm_unmap(&c, PROBE_VA, PAGE_SIZE);
	mm_release(&c);
}

/* Run read_probe on hart idx; 0 and the value read, or -1. */
static int read_on(uint32_t idx, uint64_t *out)
{
	volatile uint64_t v = 0;
	if (smp_call_async(idx, read_probe, (void *)&v) || smp_call_wait(idx, 10000000))
		return -1;
	*out = v;
	return 0;
}

KTEST(30, harts_tlb_flush_high)
{
	uint32_t me = this_cpu()->index;
	int target = -1;
	for (uint32_t i = 0; i < ncpus; i++)
		if (i != me && cpus[i].hartid >= 64 &&
		    (target < 0 || cpus[i].hartid > cpus[target].hartid))
			target = (int)i;
	if (target < 0)
		return 0;     /* no hart id of 64 or more on this machine */
	uint32_t h = (uint32_t)target;
	const uint64_t first = 0xa11ce00000000001ULL, second = 0xb0b0000000000002ULL;
	if (probe_map(first, 0))
		return KFAIL("cannot map the probe page");
	uint64_t v = 0;
	int err = read_on(h, &v);
	if (err || v != first) {
		probe_unmap();
		return KFAIL("hart %u read %lx before the change (call %d)",
			     cpus[h].hartid, (unsigned long)v, err);
	}
	/* Hart h now holds the old translation in its TLB; the remap's flush
	 * must reach it through the window of its hart id. */
	if (probe_map(second, 1)) {
		probe_unmap();
		return KFAIL("cannot remap the probe page");
	}
	err = read_on(h, &v);
	uint64_t here = *(volatile uint64_t *)PROBE_VA;
	probe_unmap();
	if (err || v != second)
		return KFAIL("hart %u (id >= 64) still reads %lx after the remote flush, want %lx",
			     cpus[h].hartid, (unsigned long)v, (unsigned long)second);
	if (here != second)
		return KFAIL("this hart reads %lx after the remap", (unsigned long)here);
	return 0;
}

struct irqoff_probe {
	volatile uint64_t before, after;
	volatile int ready, go;
};

/* In the cross-call handler, so interrupts are off: read the probe page
 * (its translation is now cached), wait for the go (20 s at most), read
 * it again. */
static void spin_read_probe(void *arg)
{
	struct irqoff_probe *p = arg;
	p->before = *(volatile uint64_t *)PROBE_VA;
	__atomic_store_n(&p->ready, 1, __ATOMIC_RELEASE);
	uint64_t until = time_after_us(20000000);
	while (!__atomic_load_n(&p->go, __ATOMIC_ACQUIRE) && arch_time_now() < until)
		cpu_relax();
	p->after = *(volatile uint64_t *)PROBE_VA;
}

/* Another hart holds the probe page's translation and spins with its
 * interrupts off while this hart remaps the page: the kernel page table's
 * flush must reach it all the same (arch_tlb_flush_remote does not need
 * the target's interrupts), so its second read sees the new frame. */
KTEST(30, harts_tlb_flush_irqs_off)
{
	uint32_t me = this_cpu()->index;
	if (ncpus < 2)
		return KSKIP("one hart");
	uint32_t h = me == 0 ? 1 : 0;
	const uint64_t first = 0x0ff1ce0000000001ULL, second = 0x5ec0d00000000002ULL;
	if (probe_map(first, 0))
		return KFAIL("cannot map the probe page");
	struct irqoff_probe p = { 0, 0, 0, 0 };
	if (smp_call_async(h, spin_read_probe, &p)) {
		probe_unmap();
		return KFAIL("cannot call hart %u", cpus[h].hartid);
	}
	uint64_t until = time_after_us(10000000);
	while (!__atomic_load_n(&p.ready, __ATOMIC_ACQUIRE) && arch_time_now() < until)
		cpu_relax();
	int ready = __atomic_load_n(&p.ready, __ATOMIC_ACQUIRE);
	int remapped = ready && !probe_map(second, 1);
	__atomic_store_n(&p.go, 1, __ATOMIC_RELEASE);
	int err = smp_call_wait(h, 30000000);
	probe_unmap();
	if (!ready || err)
		return KFAIL("hart %u did not run the probe (ready %d, wait %d)",
			     cpus[h].hartid, ready, err);
	if (!remapped)
		return KFAIL("cannot remap the probe page");
	if (p.before != first)
		return KFAIL("hart %u read %lx before the change", cpus[h].hartid,
			     (unsigned long)p.before);
	if (p.after != second)
		return KFAIL("hart %u, interrupts off, still reads %lx after the remote flush, want %lx",
			     cpus[h].hartid, (unsigned long)p.after, (unsigned long)second);
	return 0;
}
