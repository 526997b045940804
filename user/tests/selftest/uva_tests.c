/* Selftests of the per-hart address chunks behind mem_map (uva.c, names
 * u_va_*). Each returns 0 or fills why and returns 1, and leaves nothing
 * mapped and no thread or slot behind. */
#include "ulib.h"
#include "selftest.h"
#include "uva.h"

#define FAIL(...) do { snprintf(why, 160, __VA_ARGS__); goto out; } while (0)
#define CK(c, ...) do { if (!(c)) FAIL(__VA_ARGS__); } while (0)
#define PG 4096UL
#define SPARE_CHUNK (UVA_CHUNKS - 1)   /* no hart of a test machine maps there */

/* Map, touch and unmap 8 KiB a thousand times: the addresses are reused
 * (one per chunk the thread ran on, at most 8 KiB into it), and every
 * mapping starts zeroed. */
int u_va_reuse(char *why)
{
	uint64_t seen[UVA_CHUNKS] = { 0 };
	int distinct = 0;
	for (int i = 0; i < 1000; i++) {
		uint64_t va = 0;
		long r = mem_map(2 * PG, &va);
		CK(r == 0, "map %d: %s", i, err_name(r));
		long k = uva_chunk_of(va);
		CK(k >= 0 && va - (UVA_BASE + (uint64_t)k * UVA_CHUNK) < 2 * PG,
		   "map %d at %lx: not reused", i, va);
		if (seen[k] != va) {
			CK(!seen[k], "chunk %ld gave %lx, then %lx", k, seen[k], va);
			seen[k] = va;
			distinct++;
		}
		CK(*(volatile uint64_t *)(va + PG) == 0, "map %d: old data", i);
		*(volatile uint64_t *)(va + PG) = 0xbad;
		r = mem_unmap(va, 2 * PG);
		CK(r == 0, "unmap %d: %s", i, err_name(r));
	}
	CK(distinct <= (int)dbg(DBG_NCPUS, 0, 0), "%d addresses on %ld harts", distinct,
	   dbg(DBG_NCPUS, 0, 0));
	return 0;
out:
	return 1;
}

#define VH_MAPS 4
struct vh {
	int hart;
	volatile int done;
	long err;
	uint64_t va[VH_MAPS];
};
static void vh_fn(void *a)
{
	struct vh *v = a;
	for (int i = 0; i < VH_MAPS && !v->err; i++)
		v->err = mem_map((uint64_t)(i + 1) * PG, &v->va[i]);
	__atomic_store_n(&v->done, 1, __ATOMIC_RELEASE);
}

/* Threads pinned on two harts (or twice on one) map at once: every range
 * lies in its hart's chunk, and no two overlap. */
int u_va_harts(char *why)
{
	long n = dbg(DBG_NCPUS, 0, 0);
	struct vh v[2] = { { .hart = 0 }, { .hart = n > 1 ? 1 : 0 } };
	long th[2] = { -1, -1 };
	int fail = 1;
	for (int t = 0; t < 2; t++) {
		th[t] = uthread_start(vh_fn, &v[t], v[t].hart, 1);
		CK(th[t] >= 0, "thread %d: %s", t, err_name(th[t]));
	}
	while (!__atomic_load_n(&v[0].done, __ATOMIC_ACQUIRE) ||
	       !__atomic_load_n(&v[1].done, __ATOMIC_ACQUIRE))
		sys_yield();
	CK(!v[0].err && !v[1].err, "map: %s / %s", err_name(v[0].err), err_name(v[1].err));
	for (int t = 0; t < 2; t++)
		for (int i = 0; i < VH_MAPS; i++) {
			uint64_t a = v[t].va[i], al = (uint64_t)(i + 1) * PG;
			CK(uva_chunk_of(a) == v[t].hart, "thread on hart %d mapped %lx (chunk %ld)",
			   v[t].hart, a, uva_chunk_of(a));
			for (int u = 0; u < 2; u++)
				for (int j = 0; j < VH_MAPS; j++) {
					uint64_t b = v[u].va[j], bl = (uint64_t)(j + 1) * PG;
					CK((u == t && j == i) || a + al <= b || b + bl <= a,
					   "ranges %lx+%lx and %lx+%lx overlap", a, al, b, bl);
				}
		}
	fail = 0;
out:
	for (int t = 0; t < 2; t++) {
		if (th[t] < 0)
			continue;
		while (!__atomic_load_n(&v[t].done, __ATOMIC_ACQUIRE))
			sys_yield();
		cap_delete(th[t]);
		slot_release(th[t]);
		for (int i = 0; i < VH_MAPS; i++)
			if (v[t].va[i] && mem_unmap(v[t].va[i], (uint64_t)(i + 1) * PG) && !fail)
				fail = 1, snprintf(why, 160, "unmap %lx failed", v[t].va[i]);
	}
	return fail;
}

/* The allocator alone, on a chunk no hart uses: freed neighbours merge and
 * give the tail back; a full chunk takes from another chunk, and once
 * that comes back the chunk starts over at its first address. */
int u_va_steal(char *why)
{
	const uint64_t lo = UVA_BASE + (uint64_t)SPARE_CHUNK * UVA_CHUNK;
	uint64_t x = uva_alloc(SPARE_CHUNK, PG), y = uva_alloc(SPARE_CHUNK, PG),
		 z = uva_alloc(SPARE_CHUNK, PG);
	CK(x == lo && y == lo + PG && z == lo + 2 * PG, "fresh chunk: %lx %lx %lx", x, y, z);
	uva_free(x, PG);
	uva_free(z, PG);
	uint64_t w = uva_alloc(SPARE_CHUNK, PG);
	CK(w == x, "free list not reused: %lx, want %lx", w, x);
	uva_free(w, PG);
	uva_free(y, PG);
	uint64_t all = uva_alloc(SPARE_CHUNK, UVA_CHUNK);
	CK(all == lo, "after merging, the whole chunk at %lx, got %lx", lo, all);
	uint64_t s = uva_alloc(SPARE_CHUNK, 2 * PG);
	CK(s && uva_chunk_of(s) != SPARE_CHUNK, "full chunk gave %lx", s);
	uva_free(s, 2 * PG);
	uva_free(all, UVA_CHUNK);
	uint64_t again = uva_alloc(SPARE_CHUNK, PG);
	CK(again == lo, "chunk did not start over: %lx", again);
	uva_free(again, PG);
	CK(!uva_alloc(SPARE_CHUNK, 3 * PG / 2) && !uva_alloc(SPARE_CHUNK, UVA_CHUNK + PG),
	   "odd or oversized lengths accepted");
	return 0;
out:
	return 1;
}
