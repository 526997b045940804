/* Per-hart bitmaps and SBI hart-mask windows.
 *
 * A struct hartmask has one bit per logical hart index (0..HARTS_MAX-1,
 * the boot hart is 0). It is a fixed 512-bit type, QEMU virt's most harts:
 * it lives inside objects kept in static pools (a task's address-space
 * mask) and inside struct cpu, where a pointer to per-hart storage would
 * cost more code than its 64 bytes. Per-hart arrays themselves are sized
 * from the device tree (harts.h).
 *
 * SBI calls that name harts (IPI, RFENCE) take a window: bit i of
 * hart_mask selects hart id hart_mask_base + i, for 64 ids at a time.
 * hartmask_windows splits a set of logical harts into those windows. */
#ifndef KERNEL_HARTMASK_H
#define KERNEL_HARTMASK_H

#include <stdint.h>

#define HARTS_MAX 512
#define HARTMASK_WORDS (HARTS_MAX / 64)

struct hartmask {
	uint64_t w[HARTMASK_WORDS];
};

/* Set bit idx (idx < HARTS_MAX), atomically; any context. */
static inline void hartmask_set(struct hartmask *m, uint32_t idx)
{
	__atomic_fetch_or(&m->w[idx / 64], 1ULL << (idx % 64), __ATOMIC_SEQ_CST);
}

/* Clear bit idx, atomically; any context. */
static inline void hartmask_clear(struct hartmask *m, uint32_t idx)
{
	__atomic_fetch_and(&m->w[idx / 64], ~(1ULL << (idx % 64)), __ATOMIC_SEQ_CST);
}

/* Whether bit idx is set (one atomic load of its word). */
static inline int hartmask_test(const struct hartmask *m, uint32_t idx)
{
	return (__atomic_load_n(&m->w[idx / 64], __ATOMIC_SEQ_CST) >> (idx % 64)) & 1;
}

/* Copy src to dst word by word with atomic loads (a snapshot per word). */
static inline void hartmask_load(struct hartmask *dst, const struct hartmask *src)
{
	for (int i = 0; i < HARTMASK_WORDS; i++)
		dst->w[i] = __atomic_load_n(&src->w[i], __ATOMIC_SEQ_CST);
}

/* Take every bit out of m into out (atomic exchange per word). */
static inline void hartmask_take(struct hartmask *out, struct hartmask *m)
{
	for (int i = 0; i < HARTMASK_WORDS; i++)
		out->w[i] = __atomic_exchange_n(&m->w[i], 0, __ATOMIC_ACQ_REL);
}

/* dst |= src, atomically per word of dst. */
static inline void hartmask_or(struct hartmask *dst, const struct hartmask *src)
{
	for (int i = 0; i < HARTMASK_WORDS; i++)
		if (src->w[i])
			__atomic_fetch_or(&dst->w[i], src->w[i], __ATOMIC_RELAXED);
}

static inline void hartmask_clear_all(struct hartmask *m)
{
	for (int i = 0; i < HARTMASK_WORDS; i++)
		__atomic_store_n(&m->w[i], 0, __ATOMIC_RELAXED);
}

static inline int hartmask_empty(const struct hartmask *m)
{
	for (int i = 0; i < HARTMASK_WORDS; i++)
		if (m->w[i])
			return 0;
	return 1;
}

/* One SBI window: mask bit i is hart id base + i. Returns 0 to go on. */
typedef long (*hart_window_fn)(unsigned long mask, unsigned long base, void *arg);

/*
 * Call fn once for each 64-id window that holds the hart id of a logical
 * hart in m, except `skip` (a logical index, or -1 for none), with the
 * window's mask and base (base = id & ~63), in increasing base order.
 * ids[i] is the hart id of logical hart i; harts at n or above are
 * ignored. Stops at the first nonzero return of fn and returns it;
 * returns 0 when every window was called. Pure: reads m and ids only.
 */
long hartmask_windows(const struct hartmask *m, long skip, const uint32_t *ids, uint32_t n,
		      hart_window_fn fn, void *arg);

#endif
