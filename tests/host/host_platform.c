/* Host platform implementation (see host_platform.h). */
#include "host_platform.h"

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
	descs = calloc(nframes, sizeof(*descs));
	bitmap = calloc((nframes + 63) / 64, 8);
	if (!descs || !bitmap)
		host_panic("arena calloc");
	used = 0;
	hint = 0;
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

uint64_t host_frame_alloc(unsigned level)
{
	pthread_mutex_lock(&arena_mu);
	uint64_t pa = arena_take((size_t)1 << (9 * (level - 1)));
	pthread_mutex_unlock(&arena_mu);
	return pa;
}

void host_frame_free(uint64_t pa, unsigned level)
{
	pthread_mutex_lock(&arena_mu);
	arena_give(pa, (size_t)1 << (9 * (level - 1)));
	pthread_mutex_unlock(&arena_mu);
}

size_t host_frames_used(void)
{
	pthread_mutex_lock(&arena_mu);
	size_t u = used;
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
}

static void h_relax(void) { sched_yield(); }

/* ---- epoch RCU ----
 * A reader publishes the global epoch it started in; a callback queued at
 * epoch T runs once every reader is outside (0) or started at >= T. */
#define MAX_READERS 256
static _Atomic uint64_t gp_epoch = 1;
static _Atomic uint64_t rd_epoch[MAX_READERS];
static _Atomic int rd_slots;
static _Thread_local int my_slot = -1;
static _Thread_local int rd_nest;

struct cb {
	struct mm_rcu_head *head;
	uint64_t tag;
};
static struct cb *cbs;
static size_t ncbs, capcbs;
static pthread_mutex_t rcu_mu = PTHREAD_MUTEX_INITIALIZER;

static void h_rcu_read_lock(void)
{
	if (my_slot < 0) {
		my_slot = atomic_fetch_add(&rd_slots, 1);
		if (my_slot >= MAX_READERS)
			host_panic("too many RCU reader threads");
	}
	if (rd_nest++ == 0) {
		/* a seq_cst read-modify-write: a full barrier on the hosts we
		 * run on (TSan rejects atomic_thread_fence) */
		atomic_exchange(&rd_epoch[my_slot], atomic_load(&gp_epoch));
	}
}

static void h_rcu_read_unlock(void)
{
	if (--rd_nest == 0)
		atomic_store_explicit(&rd_epoch[my_slot], 0, memory_order_release);
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
	atomic_fetch_add(&gp_epoch, 0);   /* full barrier, see h_rcu_read_lock */
	uint64_t min = UINT64_MAX;
	int n = atomic_load(&rd_slots);
	for (int i = 0; i < n && i < MAX_READERS; i++) {
		uint64_t e = atomic_load(&rd_epoch[i]);
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
			sched_yield();
	}
}

size_t host_rcu_pending(void)
{
	pthread_mutex_lock(&rcu_mu);
	size_t n = ncbs;
	pthread_mutex_unlock(&rcu_mu);
	return n;
}

static void h_tlb_flush(struct mm_as *as, uint64_t start, uint64_t end)
{
	atomic_fetch_add(&tlb_flushes, 1);
	if (host_tlb_hook)
		host_tlb_hook(as, start, end);
}

unsigned long host_tlb_flushes(void) { return atomic_load(&tlb_flushes); }

const struct mm_platform host_plat = {
	.pt_alloc = h_pt_alloc,
	.pt_free = h_pt_free,
	.phys_to_virt = h_phys_to_virt,
	.page_desc = h_page_desc,
	.frame_release = h_frame_release,
	.pool = h_pool,
	.relax = h_relax,
	.rcu_read_lock = h_rcu_read_lock,
	.rcu_read_unlock = h_rcu_read_unlock,
	.rcu_defer = h_rcu_defer,
	.tlb_flush = h_tlb_flush,
	.panic = host_panic,
};

const struct pt_arch *mm_arch_by_name(const char *name)
{
	if (!strcmp(name, "sv39"))
		return &mm_arch_sv39;
	if (!strcmp(name, "sv48"))
		return &mm_arch_sv48;
	if (!strcmp(name, "x86_64"))
		return &mm_arch_x86_64;
	return NULL;
}
