/* Per-hart virtual-address chunks for mem_map (see uva.h). */
#include "ulib.h"
#include "uva.h"

#define UVA_PG 4096UL

struct uva_range {
	uint64_t va, len;
};

/* One hart's chunk. top: bytes from the chunk's start never handed out
 * beyond (everything below is in use or on fr[]). fr[]: free ranges below
 * top, sorted by address, none touching another or top. */
struct uva_chunk {
	int lock;
	unsigned n;
	uint64_t top;
	struct uva_range fr[UVA_FREE_MAX];
};
static struct uva_chunk chunks[UVA_CHUNKS];

static uint64_t chunk_lo(long k) { return UVA_BASE + (uint64_t)k * UVA_CHUNK; }

/* Threads of one hart can preempt each other: a waiter yields. */
static void chunk_lock(struct uva_chunk *c)
{
	while (__atomic_exchange_n(&c->lock, 1, __ATOMIC_ACQUIRE))
		sys_yield();
}

static void chunk_unlock(struct uva_chunk *c)
{
	__atomic_store_n(&c->lock, 0, __ATOMIC_RELEASE);
}

static void fr_remove(struct uva_chunk *c, unsigned i)
{
	for (; i + 1 < c->n; i++)
		c->fr[i] = c->fr[i + 1];
	c->n--;
}

/* len bytes from chunk k's free list (first fit) or, if tail, from its
 * tail: the address or 0. Needs k's lock. */
static uint64_t chunk_take(long k, uint64_t len, int tail)
{
	struct uva_chunk *c = &chunks[k];
	for (unsigned i = 0; i < c->n; i++) {
		struct uva_range *r = &c->fr[i];
		if (r->len < len)
			continue;
		uint64_t va = r->va;
		r->va += len;
		r->len -= len;
		if (!r->len)
			fr_remove(c, i);
		return va;
	}
	if (!tail || UVA_CHUNK - c->top < len)
		return 0;
	uint64_t va = chunk_lo(k) + c->top;
	c->top += len;
	return va;
}

/* [va, va + len) back to chunk k: merged with its free neighbours, and
 * given back to the tail when it ends there. Needs k's lock. */
static void chunk_give(long k, uint64_t va, uint64_t len)
{
	struct uva_chunk *c = &chunks[k];
	uint64_t end = va + len;
	unsigned i = 0;
	while (i < c->n && c->fr[i].va < va)
		i++;
	if (i > 0 && c->fr[i - 1].va + c->fr[i - 1].len == va) {
		i--;
		va = c->fr[i].va;
		fr_remove(c, i);
	}
	if (i < c->n && c->fr[i].va == end) {
		end += c->fr[i].len;
		fr_remove(c, i);
	}
	if (end == chunk_lo(k) + c->top) {
		c->top = va - chunk_lo(k);
		return;
	}
	if (c->n == UVA_FREE_MAX)
		return;
	for (unsigned j = c->n; j > i; j--)
		c->fr[j] = c->fr[j - 1];
	c->fr[i] = (struct uva_range){ va, end - va };
	c->n++;
}

long uva_chunk_of(uint64_t va)
{
	if (va < UVA_BASE || va - UVA_BASE >= (uint64_t)UVA_CHUNKS * UVA_CHUNK)
		return -1;
	return (long)((va - UVA_BASE) / UVA_CHUNK);
}

uint64_t uva_alloc(long hart, uint64_t len)
{
	if (!len || (len & (UVA_PG - 1)) || len > UVA_CHUNK)
		return 0;
	long home = hart < 0 ? 0 : hart % UVA_CHUNKS;
	/* Own chunk whole, then the others' free lists, then their tails. */
	for (int pass = 0; pass < 3; pass++) {
		for (long j = pass ? 1 : 0; j < (pass ? UVA_CHUNKS : 1); j++) {
			long k = (home + j) % UVA_CHUNKS;
			chunk_lock(&chunks[k]);
			uint64_t va = chunk_take(k, len, pass != 1);
			chunk_unlock(&chunks[k]);
			if (va)
				return va;
		}
	}
	return 0;
}

void uva_free(uint64_t va, uint64_t len)
{
	long k = uva_chunk_of(va);
	if (k < 0 || !len || (len & (UVA_PG - 1)) || (va & (UVA_PG - 1)) ||
	    len > chunk_lo(k) + UVA_CHUNK - va)
		return;
	chunk_lock(&chunks[k]);
	chunk_give(k, va, len);
	chunk_unlock(&chunks[k]);
}

long mem_map(uint64_t len, uint64_t *va)
{
	uint64_t a = uva_alloc(self_hart(), len);
	if (!a)
		return -E_NOMEM;
	long r = mem_reserve(a, len);
	if (r) {
		uva_free(a, len);
		return r;
	}
	*va = a;
	return 0;
}

long mem_unmap(uint64_t va, uint64_t len)
{
	struct region_op op = { .op = ROP_UNMAP, .va = va, .len = len };
	long r = region_txn(SLOT_SELF_AS, va, va + len, &op, 1);
	if (r < 0)
		return r;
	if (op.result)
		return op.result;
	uva_free(va, len);
	return 0;
}
