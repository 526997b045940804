/* User address spaces: the mm core's platform table for them, frame
 * reference counts, ASIDs, TLB shootdown, and the in-kernel fault handler
 * for anonymous memory (zero-fill and copy-on-write under one cursor).
 *
 * Every user page table is built only through the cursor API; this file
 * never reads or writes a PTE. */
#include "mk.h"
#include "frame.h"
#include "kernel.h"
#include "arch.h"
#include "panic.h"
#include "kstring.h"
#include "printk.h"
#include "rcu.h"
#include "mm_platform.h"
#include "uvm_frames.h"
#include "harts.h"
#include "shootdown.h"
#include "devices.h"
#include "mobj.h"

/* Per-frame data for frames user space can reach: the mm core's descriptor
 * (for PT pages of user ASes), a reference count for data frames (mappings
 * plus frame caps), and whom the frame is charged to. Chunks of them are
 * allocated at boot for every managed frame, so nothing here allocates
 * later (and frame counts stay exact). */
struct finfo {
	struct mm_page desc;
	uint32_t refs;
	uint32_t maps;             /* mappings counted (see uvm_frame_map_begin) */
	uint64_t charge;           /* whom it is charged to: charge_word(), 0 nobody */
};
#define FI_PER_CHUNK (PAGE_SIZE / sizeof(struct finfo))
#define FI_MAX_FRAMES (16UL << 18)        /* 16 GiB of RAM above ram_base */
static struct finfo *fi_dir[FI_MAX_FRAMES / FI_PER_CHUNK + 1];
static uint64_t ram_base_pfn;
static const struct pt_arch *uarch;
static const struct mm_protocol *uproto;
static int asid_bits;
static spinlock_t asid_lock = SPINLOCK_INIT_CLASS(&lock_class_asid);
static uint8_t asid_used[MAX_TASKS + 1];
/* Lazy flush of reused ASIDs: asid_gen[a] moves on when a is freed; a hart
 * whose seen_gen differs flushes a locally before it runs a again. So
 * tearing an address space down needs no remote fence at all. */
static volatile uint32_t asid_gen[MAX_TASKS + 1];
/* Per hart (harts_max of them, allocated in uvm_init): its pool of zeroed
 * PT pages for user ASes, the ASID generations it flushed for, the
 * icache_gen of each task slot it last fenced for, its cache of zeroed data
 * frames and its share of the data-frame count. */
#define UVM_ZCACHE 8
struct uvm_hart {
	struct mm_pool pool;
	uint32_t seen_gen[MAX_TASKS + 1];
	uint32_t icache_seen[MAX_TASKS];
	uint32_t tlb_seen[MAX_TASKS];      /* tlb_gen of each task slot when we last flushed its ASID */
	/* Zeroed data frames for the fault path (zframe_*), taken from the
	 * allocator and zeroed before any PT lock; a fault that did not need
	 * its frame leaves it here for the next one. */
	unsigned nz;
	uint64_t zframe[UVM_ZCACHE];
	/* User data frames allocated minus freed on this hart: a fault bumps
	 * only its own hart's line; uvm_frames_in_use sums them. */
	long frames;
};
static struct uvm_hart *uharts;
uint64_t user_top;

static struct finfo *fi_of(uint64_t pa)
{
	uint64_t pfn = pa >> PAGE_SHIFT;
	if (pfn < ram_base_pfn || pfn - ram_base_pfn >= FI_MAX_FRAMES)
		return NULL;
	uint64_t i = pfn - ram_base_pfn;
	struct finfo *c = fi_dir[i / FI_PER_CHUNK];
	return c ? &c[i % FI_PER_CHUNK] : NULL;
}

/* --- the platform table --- */
/* (the hooks shared with the kernel AS: KMM_PLATFORM_COMMON, mm_platform.c) */
static struct mm_page *p_page_desc(uint64_t pa)
{
	struct finfo *f = fi_of(pa);
	if (!f)
		panic("uvm: no descriptor for %lx", (unsigned long)pa);
	return &f->desc;
}
/* The core hands frames and PT pages back after tlb_flush returned, which
 * with the IPI shootdown means every target acknowledged, not that every
 * TLB is clean. The bookkeeping happens at once (map count, references,
 * quota: what programs can observe stays as with a complete flush), but
 * the memory itself goes back to the allocator only once every flush
 * posted before was applied (shootdown_defer; uvm_frame_put for data
 * frames). With ablate=ipiflush the SBI flush was complete and nothing is
 * pending, so it goes at once. */
static void p_frame_release(uint64_t pa, unsigned level)
{
	/* A device's registers (ROP_MAP of an MMIO cap) are no frame: no
	 * count, no reference, nothing to free. A leaf never spans a
	 * window's end, so its first page tells. */
	if (device_pa(pa))
		return;
	uint64_t n = 1ULL << (9 * (level - 1));
	for (uint64_t i = 0; i < n; i++) {
		uvm_frame_unmapped(pa + i * PAGE_SIZE);
		uvm_frame_put(pa + i * PAGE_SIZE);
	}
}
static void pt_free_now(uint64_t pa, unsigned level)
{
	(void)level;
	kmm_pt_free(pa);
}
static void p_pt_free(uint64_t pa)
{
	shootdown_defer(pa, 1, pt_free_now);
}
static struct mm_pool *p_pool(void) { return &uharts[this_cpu()->index].pool; }

/* PT pages and metadata arrays are charged to the task whose address space
 * they serve, exactly as the core draws them: a transaction that would
 * pass the frame quota fails (and the thread learns it was the quota). */
static int p_frames_charge(struct mm_as *as, unsigned n)
{
	struct task *t = as->ctx;
	if (!quota_charge_pt(t, (long)n))
		return 0;
	struct thread *me = cur_thread();
	if (me)
		me->quota_refused = 1;
	return -1;
}
static void p_frames_uncharge(struct mm_as *as, unsigned n)
{
	quota_release_pt(as->ctx, (long)n);
}

/* Flush [start, end) of as on every hart that ever ran it. Returns when
 * no hart can use the old translations any more: by default every remote
 * target acknowledged the kernel's IPI shootdown (it flushes before it can
 * return to any user access, shootdown.h), and what the core frees next is
 * parked until the flushes were applied (uvm_frame_put, p_pt_free); with complete
 * set (break-before-make) or ablate=ipiflush (SBI RFENCE), when every
 * target flushed. */
static void tlb_flush_as(struct mm_as *as, uint64_t start, uint64_t end, int complete)
{
	struct task *t = as->ctx;
	struct hartmask mask;
	/* Count the flush before reading the mask; a hart that loads t sets
	 * its bit before it reads tlb_gen (uvm_asid_activate): one of us sees
	 * the other, so it is either flushed now or flushes itself. */
	__atomic_add_fetch(&t->tlb_gen, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&t->as_gen, 1, __ATOMIC_SEQ_CST);   /* after tlb_gen: sched_as_ready */
	hartmask_load(&mask, &t->hart_mask);
	uint32_t me = this_cpu()->index;
	/* A task being torn down runs nowhere, and its ASID is flushed on each
	 * hart before reuse (uvm_asid_activate): local flush only. */
	int remote = !(t->tearing_down && asid_bits);
	unsigned long asid = t->asid;
	uint64_t size = end - start;
	int whole = size > 64 * PAGE_SIZE;
	if (hartmask_test(&mask, me)) {
		if (whole || !asid_bits) {
			if (asid_bits)
				arch_tlb_flush_asid(asid);
			else
				arch_tlb_flush_all();
		} else {
			for (uint64_t va = start; va < end; va += PAGE_SIZE)
				arch_tlb_flush_page_asid(va, asid);
		}
	}
	/* Only this hart (the common case at one hart, or with the other
	 * harts idle): nothing remote to post, ask or wait for. */
	mask.w[me / 64] &= ~(1ULL << (me % 64));
	if (!remote || hartmask_empty(&mask))
		return;
	long tag = asid_bits ? (long)asid : ARCH_NO_ASID;
	if (!(boot_config.ablate & ABLATE_IPIFLUSH)) {
		shootdown_flush(&mask, tag, whole ? 0 : start, whole ? 0 : end, complete);
		return;
	}
	unsigned long fs = whole ? 0 : start, fl = whole ? (unsigned long)-1 : size;
	long e = arch_tlb_flush_remote(&mask, fs, fl, tag);
	if (e)
		panic("uvm: remote TLB flush failed (%ld)", e);
}
static void p_tlb_flush(struct mm_as *as, uint64_t start, uint64_t end)
{
	tlb_flush_as(as, start, end, 0);
}
static void p_tlb_flush_bbm(struct mm_as *as, uint64_t start, uint64_t end)
{
	tlb_flush_as(as, start, end, 1);
}

const struct mm_platform uvm_platform = {
	KMM_PLATFORM_COMMON,
	.page_desc = p_page_desc,
	.frame_release = p_frame_release,
	.pool = p_pool,
	.frames_charge = p_frames_charge,
	.frames_uncharge = p_frames_uncharge,
	.pt_free = p_pt_free,
	.tlb_flush = p_tlb_flush,
	.tlb_flush_bbm = p_tlb_flush_bbm,   /* returns once every hart flushed */
};

/* --- frames --- */
int uvm_frame_valid(uint64_t pa)
{
	struct finfo *f = fi_of(pa);
	return f && __atomic_load_n(&f->refs, __ATOMIC_RELAXED) > 0;
}

/* This hart's share of the data-frame count moves by d. A thread that
 * migrates meanwhile just moves another hart's share: the sum is exact. */
static void frames_count(long d)
{
	__atomic_add_fetch(&uharts[this_cpu()->index].frames, d, __ATOMIC_RELAXED);
}

/* A zeroed frame for a fault, taken before any PT lock: from this hart's
 * cache, else from the allocator (zeroed here). 0 and *pa, or -E_NOMEM.
 * The frame is nobody's yet: frame_adopt makes it a user frame, zframe_put
 * gives it back unused. */
static int zframe_get(uint64_t *pa)
{
	unsigned long f = irq_save();
	struct uvm_hart *h = &uharts[this_cpu()->index];
	if (h->nz) {
		*pa = h->zframe[--h->nz];
		irq_restore(f);
		return 0;
	}
	irq_restore(f);
	paddr_t p;
	if (frame_alloc(FRAME_ZERO, &p)) {
		shootdown_settle();    /* frames parked behind a shootdown */
		if (frame_alloc(FRAME_ZERO, &p))
			return -E_NOMEM;
	}
	*pa = p;
	return 0;
}

/* Give back a frame from zframe_get that is still all zero: to this
 * hart's cache, or to the allocator when the cache is full. */
static void zframe_put(uint64_t pa)
{
	unsigned long f = irq_save();
	struct uvm_hart *h = &uharts[this_cpu()->index];
	if (h->nz < UVM_ZCACHE) {
		h->zframe[h->nz++] = pa;
		irq_restore(f);
		return;
	}
	irq_restore(f);
	if (frame_free(pa))
		panic("uvm: cached zero frame %lx double free", (unsigned long)pa);
}

unsigned uvm_zframes_here(uint64_t *top)
{
	struct uvm_hart *h = &uharts[this_cpu()->index];
	*top = h->nz ? h->zframe[h->nz - 1] : 0;
	return h->nz;
}

/* A frame's charge as one word, so that one atomic load or exchange names
 * a task incarnation: its gen and index + 1; 0 for nobody. */
static uint64_t charge_word(const struct task *t)
{
	return t ? ((uint64_t)t->gen << 32) | (uint32_t)(t->id + 1) : 0;
}

/* The task a charge word names, if that incarnation still holds its slot
 * (alive, dying or dead but not yet freed), else NULL. */
static struct task *charge_task(uint64_t w)
{
	if (!w)
		return NULL;
	struct task *t = &tasks[(uint32_t)w - 1];
	return t->gen == (uint32_t)(w >> 32) && t->state != TASK_FREE ? t : NULL;
}

/* Make pa, a frame from the allocator nobody holds, a user frame with one
 * reference, charged to `charge` (NULL: nobody), which already paid. */
static void frame_own(struct task *charge, uint64_t pa)
{
	struct finfo *f = fi_of(pa);
	if (!f)
		panic("uvm: frame %lx has no descriptor", (unsigned long)pa);
	__atomic_store_n(&f->charge, charge_word(charge), __ATOMIC_RELAXED);
	__atomic_store_n(&f->refs, 1, __ATOMIC_RELEASE);
	frames_count(1);
}

/* frame_own after charging t for pa: 0, or -E_QUOTA with nothing changed
 * (pa stays the caller's). */
static int frame_adopt(struct task *t, uint64_t pa)
{
	if (quota_charge_frames(t, 1))
		return -E_QUOTA;
	frame_own(t, pa);
	return 0;
}

int uvm_frame_alloc(struct task *charge, uint64_t *out)
{
	paddr_t pa;
	if (charge && quota_charge_frames(charge, 1))
		return -E_QUOTA;
	if (frame_alloc(FRAME_ZERO, &pa)) {
		if (charge)
			quota_release_frames(charge, 1);
		return -E_NOMEM;
	}
	frame_own(charge, pa);
	*out = pa;
	return 0;
}

int uvm_frame_alloc_run(struct task *charge, unsigned order, uint64_t *out)
{
	uint64_t n = 1ULL << order;
	paddr_t pa;
	if (quota_charge_frames(charge, (long)n))
		return -E_QUOTA;
	if (frame_alloc_run_aligned(n, &pa)) {
		quota_release_frames(charge, (long)n);
		return -E_NOMEM;
	}
	for (uint64_t i = 0; i < n; i++)
		frame_own(charge, pa + i * PAGE_SIZE);
	*out = pa;
	return 0;
}

void uvm_frame_get(uint64_t pa)
{
	struct finfo *f = fi_of(pa);
	if (!f || __atomic_fetch_add(&f->refs, 1, __ATOMIC_ACQ_REL) == 0)
		panic("uvm: reference to a free frame %lx", (unsigned long)pa);
}

/* A user data frame nobody references goes back to the allocator (after
 * the shootdowns posted before its last reference went, uvm_frame_put). */
static void frame_free_now(uint64_t pa, unsigned level)
{
	(void)level;
	frames_count(-1);
	if (frame_free(pa))
		panic("uvm: frame %lx double free", (unsigned long)pa);
}

void uvm_frame_put(uint64_t pa)
{
	struct finfo *f = fi_of(pa);
	if (!f)
		panic("uvm: put of unmanaged frame %lx", (unsigned long)pa);
	uint32_t old = __atomic_fetch_sub(&f->refs, 1, __ATOMIC_ACQ_REL);
	if (old == 0)
		panic("uvm: frame %lx released twice", (unsigned long)pa);
	if (old > 1)
		return;
	struct task *t = charge_task(__atomic_load_n(&f->charge, __ATOMIC_ACQUIRE));
	if (t)
		quota_release_frames(t, 1);
	shootdown_defer(pa, 1, frame_free_now);
}

/* Exact: parked frames are released first (shootdown_settle). */
long uvm_frames_in_use(void)
{
	shootdown_settle();
	long n = 0;
	for (uint32_t i = 0; uharts && i < harts_max; i++)
		n += __atomic_load_n(&uharts[i].frames, __ATOMIC_RELAXED);
	return n;
}

/* Map counts. Every mapping made of a frame a cap can name is counted
 * (ROP_MAP, fault fill, COW break, clone); the ELF loader maps fresh frames
 * nobody else holds without counting them, so a release never takes the
 * count below 0. A frame a cap can name (SYS_FRAME_ALLOC, or EVICT, which
 * needs the mapping to be the frame's only reference) therefore has an
 * exact count. */
int uvm_frame_map_begin(uint64_t pa, int share)
{
	struct finfo *f = fi_of(pa);
	if (!f)
		panic("uvm: map of unmanaged frame %lx", (unsigned long)pa);
	uint32_t old = __atomic_load_n(&f->maps, __ATOMIC_RELAXED);
	do {
		if (old && !share)
			return -E_PERM;
	} while (!__atomic_compare_exchange_n(&f->maps, &old, old + 1, false, __ATOMIC_ACQ_REL,
					      __ATOMIC_RELAXED));
	return 0;
}

void uvm_frame_mapped(uint64_t pa)
{
	struct finfo *f = fi_of(pa);
	if (f)
		__atomic_add_fetch(&f->maps, 1, __ATOMIC_RELAXED);
}

void uvm_frame_unmapped(uint64_t pa)
{
	struct finfo *f = fi_of(pa);
	if (!f)
		return;
	uint32_t old = __atomic_load_n(&f->maps, __ATOMIC_RELAXED);
	while (old && !__atomic_compare_exchange_n(&f->maps, &old, old - 1, false, __ATOMIC_ACQ_REL,
						   __ATOMIC_RELAXED))
		;
}

uint32_t uvm_frame_refs(uint64_t pa)
{
	struct finfo *f = fi_of(pa);
	return f ? __atomic_load_n(&f->refs, __ATOMIC_ACQUIRE) : 0;
}

struct task *uvm_frame_owner(uint64_t pa)
{
	struct finfo *f = fi_of(pa);
	return f ? charge_task(__atomic_load_n(&f->charge, __ATOMIC_ACQUIRE)) : NULL;
}

void uvm_frame_recharge(uint64_t pa, struct task *t)
{
	struct finfo *f = fi_of(pa);
	if (!f)
		panic("uvm: recharge of unmanaged frame %lx", (unsigned long)pa);
	struct task *old = charge_task(__atomic_exchange_n(&f->charge, charge_word(t), __ATOMIC_ACQ_REL));
	if (old && old != t)
		quota_release_frames(old, 1);
}

/* Needs: dead, torn down (no mapping of its own left, parked frames
 * settled), not yet handed to quota_return. Every frame still charged to
 * dead task `from` (referenced elsewhere: another task's mapping, a frame
 * cap) is charged to `to` from now on (NULL: nobody), the parent that
 * holds from's carve: quota_return leaves exactly from's frames still in
 * use charged to `to`, and their release later is counted there, not on
 * the dead task. Each move is a compare-and-swap: a release racing with
 * it is counted on from (before) or on to (after), never lost or twice.
 * A scan of every managed frame: only at a reap. */
void uvm_frames_inherit(struct task *from, struct task *to)
{
	uint64_t old = charge_word(from), nw = charge_word(to);
	for (size_t c = 0; c < sizeof fi_dir / sizeof fi_dir[0]; c++) {
		struct finfo *chunk = fi_dir[c];
		for (size_t i = 0; chunk && i < FI_PER_CHUNK; i++) {
			uint64_t w = old;
			if (__atomic_load_n(&chunk[i].charge, __ATOMIC_RELAXED) == old)
				__atomic_compare_exchange_n(&chunk[i].charge, &w, nw, false,
							    __ATOMIC_ACQ_REL, __ATOMIC_RELAXED);
		}
	}
}

unsigned long uvm_pooled_frames(void)
{
	unsigned long n = 0;
	for (uint32_t i = 0; i < ncpus; i++)
		n += (uharts ? __atomic_load_n(&uharts[i].pool.n, __ATOMIC_RELAXED) +
			       __atomic_load_n(&uharts[i].nz, __ATOMIC_RELAXED) : 0) +
		     __atomic_load_n(&cpus[i].mm_pool.n, __ATOMIC_RELAXED);
	return n;
}

/* --- address spaces --- */


int uvm_init(void)
{
	uharts = harts_alloc(sizeof *uharts);
	if (!uharts || shootdown_init() || quota_init())
		return -E_NOMEM;
	struct phys_range r[FRAME_MAX_REGIONS];
	int n = frame_regions(r, FRAME_MAX_REGIONS);
	uint64_t lo = ~0ULL;
	for (int i = 0; i < n; i++)
		if (r[i].base < lo)
			lo = r[i].base;
	ram_base_pfn = lo >> PAGE_SHIFT;
	for (int i = 0; i < n; i++) {
		uint64_t first = (r[i].base >> PAGE_SHIFT) - ram_base_pfn;
		uint64_t last = ((r[i].base + r[i].size) >> PAGE_SHIFT) - 1 - ram_base_pfn;
		if (last >= FI_MAX_FRAMES)
			last = FI_MAX_FRAMES - 1;
		for (uint64_t c = first / FI_PER_CHUNK; c <= last / FI_PER_CHUNK; c++) {
			if (fi_dir[c])
				continue;
			paddr_t pa;
			if (frame_alloc(FRAME_ZERO, &pa))
				return -E_NOMEM;
			fi_dir[c] = phys_to_virt(pa);
		}
	}
	uarch = kernel_as.arch;      /* user ASes share its kernel half: same table */
	uproto = kernel_as.proto;    /* the protocol the boot line chose (kmap_build) */
	user_top = uarch->user_last + 1;
	/* ASID probe: how many tag bits does the hart keep? */
	asid_bits = arch_asid_bits_probe();
	if ((1 << asid_bits) <= MAX_TASKS)
		asid_bits = 0;     /* too few to give each task its own */
	return 0;
}

int uvm_asid_bits(void) { return asid_bits; }

static uint16_t asid_alloc(void)
{
	if (!asid_bits)
		return 0;
	unsigned long f = spin_lock_irqsave(&asid_lock);
	uint16_t a = 0;
	for (int i = 1; i <= MAX_TASKS; i++)
		if (!asid_used[i]) {
			asid_used[i] = 1;
			a = (uint16_t)i;
			break;
		}
	spin_unlock_irqrestore(&asid_lock, f);
	return a;
}

static void asid_free(uint16_t a)
{
	if (!a)
		return;
	unsigned long f = spin_lock_irqsave(&asid_lock);
	__atomic_add_fetch(&asid_gen[a], 1, __ATOMIC_SEQ_CST);
	asid_used[a] = 0;
	spin_unlock_irqrestore(&asid_lock, f);
}

int uvm_as_create(struct task *t)
{
	hartmask_clear_all(&t->hart_mask);
	/* Every hart fences before it first runs t (icache_gen 1 below). */
	for (uint32_t i = 0; i < harts_max; i++) {
		uharts[i].icache_seen[t->id] = 0;
		rqs[i].as_ready[t->id] = 0;     /* no hart has activated this incarnation */
	}
	int err = mm_as_init(&t->as, uarch, uproto, &uvm_platform, uarch->user_lo,
			     uarch->user_last, t);
	if (err)
		return -E_NOMEM;
	mm_as_share_kernel(&t->as, &kernel_as);
	t->as.flush_locked = (boot_config.ablate & ABLATE_LATEFLUSH) != 0;
	t->asid = asid_alloc();
	/* The root and the ASID stay until uvm_as_destroy: compose the token once,
	 * not at every switch to t. */
	t->as_token = arch_as_token(&t->as, t->asid);
	t->icache_gen = 1;    /* every hart fences before it first runs t */
	t->as_gen = 1;        /* never the 0 of an as_ready that was reset */
	t->as_live = 1;
	return 0;
}

/* Needs: no thread of t runs or will run again (no hart has its token in effect).
 * Every mapping is removed (frames released, TLBs flushed on every hart
 * that ran it), so the ASID can be handed out again. */
void uvm_as_destroy(struct task *t)
{
	if (!t->as_live)
		return;
	t->as_live = 0;
	mm_as_destroy(&t->as);
	asid_free(t->asid);
	t->asid = 0;
	t->as_token = 0;
}

/* Instruction fetch coherence. Code reaches a user page by data stores
 * (ELF load, a COW copy, a frame written through another mapping and then
 * mapped executable); RISC-V needs a fence.i on each hart before it fetches
 * such code. t->icache_gen moves on at every such change; a hart that ran
 * t before fences now (remote FENCE.I), and any other hart fences when it
 * next switches to t (uvm_asid_activate sees an older gen). */
void uvm_icache_sync(struct task *t)
{
	__atomic_add_fetch(&t->icache_gen, 1, __ATOMIC_SEQ_CST);
	__atomic_add_fetch(&t->as_gen, 1, __ATOMIC_SEQ_CST);   /* after icache_gen: sched_as_ready */
	unsigned long f = irq_save();
	uint32_t me = this_cpu()->index;
	arch_icache_sync();
	uharts[me].icache_seen[t->id] = t->icache_gen;
	struct hartmask mask;
	hartmask_load(&mask, &t->hart_mask);
	irq_restore(f);
	long e = arch_icache_sync_remote(&mask);
	if (e)
		panic("uvm: remote FENCE.I failed (%ld)", e);
}

/* Before this hart runs t (its bit in t's hart_mask already set): flush
 * t's ASID here if it was reused, or t's address space was flushed, since
 * this hart last flushed it (a hart with t unloaded gets no remote
 * flushes), and fence.i if t's code changed since this hart last
 * synchronised with it. Needs: interrupts off. Returns the key of the
 * state this hart is now synchronised with: t's as_gen, which moves on
 * after every move of icache_gen or tlb_gen (rq->as_ready). */
uint32_t uvm_asid_activate(struct task *t)
{
	uint32_t me = this_cpu()->index;
	/* Read first: a move of either generation after this read moves
	 * as_gen past what we return, so the hart activates in full again. */
	uint32_t key = __atomic_load_n(&t->as_gen, __ATOMIC_SEQ_CST);
	uint32_t ig = __atomic_load_n(&t->icache_gen, __ATOMIC_ACQUIRE);
	if (uharts[me].icache_seen[t->id] != ig) {
		arch_icache_sync();
		uharts[me].icache_seen[t->id] = ig;
	}
	uint32_t tg = __atomic_load_n(&t->tlb_gen, __ATOMIC_SEQ_CST);
	uint16_t a = t->asid;
	if (!asid_bits || !a)
		return key;
	uint32_t g = __atomic_load_n(&asid_gen[a], __ATOMIC_ACQUIRE);
	if (uharts[me].seen_gen[a] != g || uharts[me].tlb_seen[t->id] != tg) {
		arch_tlb_flush_asid(a);
		uharts[me].seen_gen[a] = g;
		uharts[me].tlb_seen[t->id] = tg;
	}
	return key;
}

/* A fault found va already resolved (another hart won the race, or only
 * software A/D were missing) and the table says its TLB may keep the
 * invalid or read-only translation this hart faulted on until it fences
 * (mm_fault_settle, pt_arch.tlb_caches_invalid). A local fence of the
 * page is enough, as only this hart saw the stale entry. Needs: t's
 * address space in effect on this hart. */
static void local_flush_page(struct task *t, uint64_t va)
{
	if (asid_bits)
		arch_tlb_flush_page_asid(va, t->asid);
	else
		arch_tlb_flush_page(va);
}

/* Resolve a user fault at va in t's address space under one cursor:
 * reserved -> zero-filled frame; COW + write -> private copy (or, when
 * the frame has no other reference, the same frame made writable); already
 * a memory object's page -> the object's frame (mobj_fault; *status,
 * when nobody here can resolve it, the word that sends it to the
 * object's pager); mapped with enough rights -> nothing (another thread won; this hart
 * drops its stale translation of the page where the table's TLB keeps
 * faulting entries: mm_fault_settle), or, where the table leaves A/D to
 * software, the access recorded. The data frame is taken and
 * zeroed before the cursor locks anything (zframe_get) and goes back to
 * this hart's cache when the fault did not need it. Returns 0 when the
 * access can be retried, -E_FAULT when nobody can resolve it (then, if
 * status is not NULL, *status is the page's status word as the cursor
 * found it: fault_status_word), -E_QUOTA / -E_NOMEM when memory ran out. */
int uvm_fault(struct task *t, uint64_t va, int write, int exec, uint64_t *status)
{
	if (status)
		*status = RK_INVALID;
	if (va >= user_top)
		return -E_FAULT;
	uint64_t page = va & ~(PAGE_SIZE - 1);
	uint64_t fresh = 0;
	int early = !(boot_config.ablate & ABLATE_PREFAULT);
	if (early && zframe_get(&fresh))
		return -E_NOMEM;
	int fresh_used = 0;
	struct mm_cursor c;
	int err = mm_lock(&c, &t->as, page, page + PAGE_SIZE);
	if (err) {  /* no table for the page's path: out of memory, not a bad address */
		if (early)
			zframe_put(fresh);
		return err == MM_ENOMEM ? -E_NOMEM : -E_FAULT;
	}
	if (!early && zframe_get(&fresh)) {    /* ablate=prefault: under the lock */
		mm_release(&c);
		return -E_NOMEM;
	}
	struct mm_info info;
	int synced_code = 0;
	bool flush_local = false;   /* spurious: mm_fault_settle asks for a local flush */
	err = -E_FAULT;
	mm_query(&c, page, &info);
	unsigned need = write ? MM_PROT_W : exec ? MM_PROT_X : MM_PROT_R;
	/* a leaf made for this access records it: the MMU (or, without
	 * hardware A/D, the next fault) need not */
	unsigned made = write ? MM_MAP_DIRTY : MM_MAP_ACCESSED;
	if (info.kind == MM_RESERVED && (info.prot & need)) {
		err = frame_adopt(t, fresh);
		if (!err) {
			fresh_used = 1;
			if (mm_map(&c, page, fresh, 1, info.prot | MM_PROT_U, made)) {
				uvm_frame_put(fresh);
				err = -E_NOMEM;
			} else {
				uvm_frame_mapped(fresh);
			}
		}
	} else if (info.kind == MM_COW && (info.prot & need)) {
		if (!write) {   /* readable already: another hart won, or A was missing */
			err = mm_fault_settle(&c, page, false, &flush_local) ? -E_FAULT : 0;
		} else if (uvm_frame_refs(info.pa) == 1) {
			/* Nobody else holds the frame (no other mapping, no cap;
			 * new sharers need this range's cursor, which we hold):
			 * the same frame becomes writable again, no copy. */
			err = mm_unshare(&c, page, PAGE_SIZE) ? -E_NOMEM : 0;
			if (!err && (info.prot & MM_PROT_X))
				synced_code = 1;
		} else {
			err = frame_adopt(t, fresh);
			if (!err) {
				fresh_used = 1;
				memcpy(phys_to_virt(fresh), phys_to_virt(info.pa), PAGE_SIZE);
				int e = mm_unmap(&c, page, PAGE_SIZE);
				if (!e)
					e = mm_map(&c, page, fresh, 1, info.prot | MM_PROT_U, made);
				if (e) {
					uvm_frame_put(fresh);
					err = -E_NOMEM;
				} else {
					uvm_frame_mapped(fresh);
					if (info.prot & MM_PROT_X)
						synced_code = 1;
				}
			}
		}
	} else if (mobj_status_is(&info)) {
		/* a memory object's page: err -E_FAULT leaves *status its word */
		uint64_t w;
		err = mobj_fault(&c, t, page, &info, write, exec, made, &w);
		if (!err && (info.prot & MM_PROT_X))
			synced_code = 1;     /* the page may hold code another task wrote */
		if (err == -E_FAULT && status) {
			mm_release(&c);
			zframe_put(fresh);
			*status = w;
			return err;
		}
	} else if (info.kind == MM_MAPPED && (info.prot & need) && (info.prot & MM_PROT_U)) {
		/* another thread won, or (software A/D) the first access or
		 * write through the leaf: record it. Where the table's TLB
		 * keeps faulting entries this hart then drops its own, or the
		 * access faults again for ever when nothing else changed the
		 * leaf; where it does not (x86-64: the fault dropped it), the
		 * retry walks afresh and a flush would only cost. */
		err = mm_fault_settle(&c, page, write, &flush_local) ? -E_FAULT : 0;
	}
	if (err == -E_FAULT && status && !(info.kind == MM_MAPPED &&
					   mobj_fault_mapped(t, page, &info, status)))
		*status = fault_status_word(&info);
	mm_release(&c);
	if (!fresh_used)
		zframe_put(fresh);
	if (flush_local)
		local_flush_page(t, page);
	if (synced_code)
		uvm_icache_sync(t);
	return err;
}
