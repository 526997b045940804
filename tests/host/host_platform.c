/* Host platform implementation (see host_platform.h). */
#include "host_platform.h"
#include "cortenmm/qlock.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

static uint8_t *arena;
static size_t arena_frames;
static struct mm_page *descs;
static uint64_t *bitmap;
static size_t used;
static size_t hint;
static pthread_mutex_t arena_mu = PTHREAD_MUTEX_INITIALIZER;

static _Atomic long pt_allocs;
static _Atomic long fail_at_count;    /* 0 = off */
static atomic_bool pool_on = true;
static _Thread_local struct mm_pool tls_pool;
static atomic_ulong tlb_flushes;
void (*host_tlb_hook)(struct mm_as *, uint64_t, uint64_t);
static atomic_ulong tlb_bbm_flushes;
void (*host_tlb_bbm_hook)(struct mm_as *, uint64_t, uint64_t);

static void host_panic(const char *msg)
{
	fprintf(stderr, "PANIC: %s\n", msg);
	abort();
}

void host_init(size_t nframes)
{
	arena_frames = nframes;
	arena = mmap(NULL, nframes * MM_PAGE_SIZE, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (arena == MAP_FAILED)
		host_panic("arena mmap");
	/* line-aligned, as the kernel's (page-aligned) array is: each
	 * descriptor is then one cache line of its own */
	size_t dbytes = (nframes * sizeof(*descs) + 63) / 64 * 64;
	descs = aligned_alloc(64, dbytes);
	bitmap = calloc((nframes + 63) / 64, 8);
	if (!descs || !bitmap)
		host_panic("arena calloc");
	memset(descs, 0, dbytes);
	used = 0;
	hint = 0;
}

void host_arena_touch(void)
{
	for (size_t f = 0; f < arena_frames; f++)
		arena[(f + 1) * MM_PAGE_SIZE - 1] = 0xa5;
}

void host_fini(void)
{
	munmap(arena, arena_frames * MM_PAGE_SIZE);
	free(descs);
	free(bitmap);
	arena = NULL;
}

static bool bit(size_t f) { return bitmap[f / 64] >> (f % 64) & 1; }
static void set_bit(size_t f) { bitmap[f / 64] |= 1ull << (f % 64); }
static void clr_bit(size_t f) { bitmap[f / 64] &= ~(1ull << (f % 64)); }

/* ---- thread slots ----
 * Every thread that reads under RCU, takes part in TLB shootdown or keeps
 * a frame cache owns one slot, claimed on first use and given back when
 * the thread exits (a pthread key destructor), so any number of threads
 * may come and go as long as at most MAX_SLOTS live at once. Slots [0, nslots) have been used;
 * grace periods, shootdowns and frame counts scan exactly those. Each
 * slot's RCU word, TLB mailbox and frame cache sit on cache lines of their
 * own, so threads do not slow each other down through them. */
#define MAX_SLOTS HOST_MAX_THREADS
#define LINE 64

struct rd_slot {
	_Alignas(LINE) _Atomic uint64_t epoch;   /* 0: outside any read section */
};

struct tlb_box {
	_Alignas(LINE) _Atomic(struct mm_as *) as;   /* NULL: holds no translations */
	_Atomic uint64_t req;    /* flush requests posted to this thread */
	_Atomic uint64_t ack;    /* requests it has answered (<= req) */
};

/* Per-thread cache of free 4 KiB frames, like a kernel's per-CPU page
 * lists. n is read by other threads (host_frames_used) and written by the
 * owner; it changes under arena_mu only when frames move to or from the
 * arena. */
#define FC_BATCH (HOST_FRAME_CACHE / 2)
struct fcache {
	_Alignas(LINE) _Atomic size_t n;
	uint64_t pa[HOST_FRAME_CACHE];
};

static atomic_bool slot_busy[MAX_SLOTS];
static _Atomic int nslots;                /* high-water mark of slots used */
static struct rd_slot rd[MAX_SLOTS];
static struct tlb_box boxes[MAX_SLOTS];
static struct fcache fcaches[MAX_SLOTS];
static pthread_key_t slot_key;
static pthread_once_t slot_once = PTHREAD_ONCE_INIT;
static _Thread_local int my_slot = -1;
static _Thread_local int rd_nest;
static _Thread_local struct tlb_box *my_box;   /* set while joined */
static atomic_bool shootdown_on;

static void fcache_drain(void);

/* Thread exit (pthread key destructor): leave any address space, give the
 * frame cache back, then free the slot. The thread is outside every read
 * section, so its epoch is 0. */
static void slot_exit(void *arg)
{
	(void)arg;
	if (my_slot < 0)
		return;
	if (rd_nest)
		host_panic("thread exits inside an RCU read section");
	host_tlb_leave();
	fcache_drain();
	atomic_store(&slot_busy[my_slot], false);
	my_slot = -1;
}

static void slot_key_init(void)
{
	if (pthread_key_create(&slot_key, slot_exit))
		host_panic("pthread_key_create");
}

/* The calling thread's slot, claimed on first call: the lowest free one,
 * raising the high-water mark if needed. Panics when MAX_SLOTS threads
 * already hold one. */
static int slot(void)
{
	if (my_slot >= 0)
		return my_slot;
	pthread_once(&slot_once, slot_key_init);
	for (int i = 0; i < MAX_SLOTS; i++) {
		bool f = false;
		if (atomic_load_explicit(&slot_busy[i], memory_order_relaxed) ||
		    !atomic_compare_exchange_strong(&slot_busy[i], &f, true))
			continue;
		int n = atomic_load(&nslots);
		while (n <= i && !atomic_compare_exchange_weak(&nslots, &n, i + 1))
			;
		my_slot = i;
		if (pthread_setspecific(slot_key, &slot_busy[i]))
			host_panic("pthread_setspecific");
		return i;
	}
	host_panic("too many live threads for the host platform's slots");
	return -1;
}

/* Needs arena_mu. n frames aligned to n. */
static uint64_t arena_take(size_t n)
{
	for (size_t k = 0; k < arena_frames; k += n) {
		size_t f = (hint + k) % arena_frames;
		f -= f % n;
		if (f + n > arena_frames)
			continue;
		size_t j = 0;
		while (j < n && !bit(f + j))
			j++;
		if (j < n)
			continue;
		for (j = 0; j < n; j++)
			set_bit(f + j);
		used += n;
		hint = f + n;
		return HOST_PA_BASE + f * MM_PAGE_SIZE;
	}
	return MM_NOFRAME;
}

static void arena_give(uint64_t pa, size_t n)
{
	size_t f = (pa - HOST_PA_BASE) / MM_PAGE_SIZE;
	if (pa < HOST_PA_BASE || f + n > arena_frames)
		host_panic("free of a frame outside the arena");
	for (size_t j = 0; j < n; j++) {
		if (!bit(f + j))
			host_panic("double free of a frame");
		clr_bit(f + j);
	}
	used -= n;
}

/* ---- frame cache (off unless host_frame_cache(true)) ----
 * Single frames come from and go to the calling thread's cache, which
 * takes or gives back FC_BATCH frames at a time under arena_mu. Cached
 * frames are free: host_frames_used does not count them. */
static atomic_bool fcache_on;

void host_frame_cache(bool on) { atomic_store(&fcache_on, on); }

/* A frame from the caller's cache, refilled from the arena when empty. */
static uint64_t fcache_take(void)
{
	struct fcache *c = &fcaches[slot()];
	size_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
	if (!n) {
		pthread_mutex_lock(&arena_mu);
		for (uint64_t pa; n < FC_BATCH && (pa = arena_take(1)) != MM_NOFRAME;)
			c->pa[n++] = pa;
		atomic_store_explicit(&c->n, n, memory_order_relaxed);
		pthread_mutex_unlock(&arena_mu);
		if (!n)
			return MM_NOFRAME;
	}
	atomic_store_explicit(&c->n, n - 1, memory_order_relaxed);
	return c->pa[n - 1];
}

/* Put pa in the caller's cache; a full cache first gives FC_BATCH back. */
static void fcache_give(uint64_t pa)
{
	struct fcache *c = &fcaches[slot()];
	size_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
	if (n == HOST_FRAME_CACHE) {
		pthread_mutex_lock(&arena_mu);
		while (n > HOST_FRAME_CACHE - FC_BATCH)
			arena_give(c->pa[--n], 1);
		atomic_store_explicit(&c->n, n, memory_order_relaxed);
		pthread_mutex_unlock(&arena_mu);
	}
	c->pa[n] = pa;
	atomic_store_explicit(&c->n, n + 1, memory_order_relaxed);
}

/* Give the caller's whole cache back to the arena. */
static void fcache_drain(void)
{
	if (my_slot < 0)
		return;
	struct fcache *c = &fcaches[my_slot];
	pthread_mutex_lock(&arena_mu);
	size_t n = atomic_load_explicit(&c->n, memory_order_relaxed);
	while (n)
		arena_give(c->pa[--n], 1);
	atomic_store_explicit(&c->n, 0, memory_order_relaxed);
	pthread_mutex_unlock(&arena_mu);
}

uint64_t host_frame_alloc(unsigned level)
{
	if (level == 1 && atomic_load_explicit(&fcache_on, memory_order_relaxed))
		return fcache_take();
	pthread_mutex_lock(&arena_mu);
	uint64_t pa = arena_take((size_t)1 << (9 * (level - 1)));
	pthread_mutex_unlock(&arena_mu);
	return pa;
}

uint64_t host_frame_alloc_zeroed(unsigned level)
{
	uint64_t pa = host_frame_alloc(level);
	if (pa != MM_NOFRAME)
		memset(arena + (pa - HOST_PA_BASE), 0, MM_PAGE_SIZE << (9 * (level - 1)));
	return pa;
}

void host_frame_free(uint64_t pa, unsigned level)
{
	if (level == 1 && atomic_load_explicit(&fcache_on, memory_order_relaxed)) {
		fcache_give(pa);
		return;
	}
	pthread_mutex_lock(&arena_mu);
	arena_give(pa, (size_t)1 << (9 * (level - 1)));
	pthread_mutex_unlock(&arena_mu);
}

size_t host_frames_used(void)
{
	pthread_mutex_lock(&arena_mu);
	size_t u = used;
	for (int i = 0, n = atomic_load(&nslots); i < n; i++)
		u -= atomic_load_explicit(&fcaches[i].n, memory_order_relaxed);
	pthread_mutex_unlock(&arena_mu);
	return u;
}

void host_fail_at(long k) { atomic_store(&fail_at_count, atomic_load(&pt_allocs) + k); }
void host_fail_off(void) { atomic_store(&fail_at_count, 0); }
long host_pt_allocs(void) { return atomic_load(&pt_allocs); }

static uint64_t h_pt_alloc(void)
{
	long n = atomic_fetch_add(&pt_allocs, 1) + 1;
	if (n == atomic_load(&fail_at_count))
		return MM_NOFRAME;
	return host_frame_alloc(1);
}

static void h_pt_free(uint64_t pa) { host_frame_free(pa, 1); }

static void *h_phys_to_virt(uint64_t pa)
{
	if (pa < HOST_PA_BASE || pa >= HOST_PA_BASE + arena_frames * MM_PAGE_SIZE)
		host_panic("phys_to_virt outside the arena");
	return arena + (pa - HOST_PA_BASE);
}

static struct mm_page *h_page_desc(uint64_t pa)
{
	size_t f = (pa - HOST_PA_BASE) / MM_PAGE_SIZE;
	if (pa < HOST_PA_BASE || f >= arena_frames)
		host_panic("page_desc outside the arena");
	return &descs[f];
}

static void h_frame_release(uint64_t pa, unsigned level) { host_frame_free(pa, level); }

void host_pool_enable(bool on) { atomic_store(&pool_on, on); }

static struct mm_pool *h_pool(void) { return atomic_load(&pool_on) ? &tls_pool : NULL; }

void host_pool_drain(void)
{
	while (tls_pool.n)
		h_pt_free(tls_pool.pa[--tls_pool.n]);
	fcache_drain();
}

/* Spinning (core locks) is also where a thread answers flush requests,
 * like a hart that takes an IPI while it waits. */
static void h_relax(void)
{
	host_tlb_poll();
	sched_yield();
}

/* ---- epoch RCU ----
 * A reader publishes the global epoch it started in; a callback queued at
 * epoch T runs once every reader is outside (0) or started at >= T, and
 * T is at most the epoch read before the readers were scanned (a reader
 * that starts after that read sees every unlink done before it). */
struct cb {
	struct mm_rcu_head *head;
	uint64_t tag;
};
static _Atomic uint64_t gp_epoch = 1;
static struct cb *cbs;
static size_t ncbs, capcbs;
static pthread_mutex_t rcu_mu = PTHREAD_MUTEX_INITIALIZER;

static void h_rcu_read_lock(void)
{
	int s = slot();
	if (rd_nest++ == 0) {
		/* a seq_cst read-modify-write: a full barrier on the hosts we
		 * run on (TSan rejects atomic_thread_fence) */
		atomic_exchange(&rd[s].epoch, atomic_load(&gp_epoch));
	}
}

static void h_rcu_read_unlock(void)
{
	if (--rd_nest == 0)
		atomic_store_explicit(&rd[my_slot].epoch, 0, memory_order_release);
}

static void h_rcu_defer(struct mm_rcu_head *head, void (*fn)(struct mm_rcu_head *))
{
	head->fn = fn;
	uint64_t tag = atomic_fetch_add(&gp_epoch, 1) + 1;
	pthread_mutex_lock(&rcu_mu);
	if (ncbs == capcbs) {
		capcbs = capcbs ? 2 * capcbs : 256;
		cbs = realloc(cbs, capcbs * sizeof(*cbs));
		if (!cbs)
			host_panic("rcu realloc");
	}
	cbs[ncbs++] = (struct cb){ head, tag };
	size_t n = ncbs;
	pthread_mutex_unlock(&rcu_mu);
	if (n % 64 == 0 && rd_nest == 0)
		host_rcu_poll();
}

void host_rcu_poll(void)
{
	/* full barrier (see h_rcu_read_lock); callbacks queued after this
	 * read have larger tags and wait for a later poll */
	uint64_t min = atomic_fetch_add(&gp_epoch, 0);
	int n = atomic_load(&nslots);
	for (int i = 0; i < n; i++) {
		uint64_t e = atomic_load(&rd[i].epoch);
		if (e && e < min)
			min = e;
	}
	struct mm_rcu_head *ready[64];
	for (;;) {
		size_t k = 0;
		pthread_mutex_lock(&rcu_mu);
		for (size_t i = 0; i < ncbs && k < 64;) {
			if (cbs[i].tag <= min) {
				ready[k++] = cbs[i].head;
				cbs[i] = cbs[--ncbs];
			} else {
				i++;
			}
		}
		pthread_mutex_unlock(&rcu_mu);
		for (size_t i = 0; i < k; i++)
			ready[i]->fn(ready[i]);
		if (k < 64)
			return;
	}
}

void host_rcu_barrier(void)
{
	while (host_rcu_pending()) {
		host_rcu_poll();
		if (host_rcu_pending())
			h_relax();
	}
}

size_t host_rcu_pending(void)
{
	pthread_mutex_lock(&rcu_mu);
	size_t n = ncbs;
	pthread_mutex_unlock(&rcu_mu);
	return n;
}

/* ---- TLB shootdown by mailbox ----
 * With shootdown on, a flush of `as` posts a request to the mailbox of
 * every other thread joined to `as` and returns when each has answered
 * (or left `as`: a thread that left holds no translations of it). Answers
 * only come from host_tlb_poll, which joined threads call between
 * operations and wherever they wait (h_relax, a flush of their own), so a
 * flush costs a round trip to every target, as an IPI does. A box's ack
 * only grows and only its owner writes it. */
void host_tlb_shootdown(bool on) { atomic_store(&shootdown_on, on); }

void host_tlb_join(struct mm_as *as)
{
	struct tlb_box *b = &boxes[slot()];
	atomic_store(&b->ack, atomic_load(&b->req));
	atomic_store(&b->as, as);
	my_box = b;
}

void host_tlb_leave(void)
{
	struct tlb_box *b = my_box;
	if (!b)
		return;
	atomic_store(&b->as, NULL);
	atomic_store(&b->ack, atomic_load(&b->req));
	my_box = NULL;
}

void host_tlb_poll(void)
{
	struct tlb_box *b = my_box;
	if (!b)
		return;
	uint64_t r = atomic_load_explicit(&b->req, memory_order_acquire);
	if (atomic_load_explicit(&b->ack, memory_order_relaxed) != r)
		atomic_store_explicit(&b->ack, r, memory_order_release);
}

/* Post a request to every other thread joined to `as`, then wait for the
 * answers, answering the caller's own requests meanwhile (two threads
 * flushing each other must not wait for ever). */
static void shootdown(struct mm_as *as)
{
	uint64_t ticket[MAX_SLOTS];
	int n = atomic_load(&nslots), me = my_box ? (int)(my_box - boxes) : -1;
	for (int i = 0; i < n; i++) {
		ticket[i] = 0;
		if (i != me && atomic_load(&boxes[i].as) == as)
			ticket[i] = atomic_fetch_add(&boxes[i].req, 1) + 1;
	}
	for (int i = 0; i < n; i++) {
		struct tlb_box *b = &boxes[i];
		while (ticket[i] && atomic_load(&b->ack) < ticket[i] && atomic_load(&b->as) == as)
			h_relax();
	}
}

/* Count the flush, show it to the observer, shoot it down if on. Both
 * kinds are synchronous: a shootdown returns once every target answered. */
static void h_flush(atomic_ulong *count, void (*hook)(struct mm_as *, uint64_t, uint64_t),
		    struct mm_as *as, uint64_t start, uint64_t end)
{
	atomic_fetch_add(count, 1);
	if (hook)
		hook(as, start, end);
	if (atomic_load_explicit(&shootdown_on, memory_order_relaxed))
		shootdown(as);
}

static void h_tlb_flush(struct mm_as *as, uint64_t start, uint64_t end)
{
	h_flush(&tlb_flushes, host_tlb_hook, as, start, end);
}

static void h_tlb_flush_bbm(struct mm_as *as, uint64_t start, uint64_t end)
{
	h_flush(&tlb_bbm_flushes, host_tlb_bbm_hook, as, start, end);
}

unsigned long host_tlb_flushes(void) { return atomic_load(&tlb_flushes); }
unsigned long host_tlb_bbm_flushes(void) { return atomic_load(&tlb_bbm_flushes); }

/* ---- queue locks: one node per thread slot ---- */
static struct qslot {
	_Alignas(LINE) struct mm_qnode n;
} qnodes[MAX_SLOTS];
static struct mm_qnode *h_qnode(uint32_t s) { return &qnodes[s].n; }
static const struct mm_qctx hq = { .node = h_qnode, .relax = h_relax };

static void h_spin_lock(mm_lock_t *l) { mm_qspin_lock(&hq, (uint32_t)slot(), l); }
static void h_read_lock(mm_lock_t *l) { mm_qread_lock(&hq, (uint32_t)slot(), l); }
static void h_write_lock(mm_lock_t *l) { mm_qwrite_lock(&hq, (uint32_t)slot(), l); }

int host_lock_select(const char *name)
{
	bool q = !strcmp(name, "queue");
	if (!q && strcmp(name, "tas"))
		return -1;
	host_plat.spin_lock = q ? h_spin_lock : NULL;
	host_plat.spin_unlock = q ? mm_qspin_unlock : NULL;
	host_plat.read_lock = q ? h_read_lock : NULL;
	host_plat.read_unlock = q ? mm_qread_unlock : NULL;
	host_plat.write_lock = q ? h_write_lock : NULL;
	host_plat.write_unlock = q ? mm_qwrite_unlock : NULL;
	return 0;
}

struct mm_platform host_plat = {
	.pt_alloc = h_pt_alloc,
	.pt_free = h_pt_free,
	.phys_to_virt = h_phys_to_virt,
	.page_desc = h_page_desc,
	.frame_release = h_frame_release,
	.pool = h_pool,
	.relax = h_relax,
	.spin_lock = h_spin_lock,
	.spin_unlock = mm_qspin_unlock,
	.read_lock = h_read_lock,
	.read_unlock = mm_qread_unlock,
	.write_lock = h_write_lock,
	.write_unlock = mm_qwrite_unlock,
	.rcu_read_lock = h_rcu_read_lock,
	.rcu_read_unlock = h_rcu_read_unlock,
	.rcu_defer = h_rcu_defer,
	.tlb_flush = h_tlb_flush,
	.tlb_flush_bbm = h_tlb_flush_bbm,
	.panic = host_panic,
};
