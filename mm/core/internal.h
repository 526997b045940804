/* Private to the CortenMM core: entry access, metadata words, frames,
 * locks. Nothing outside mm/ includes this; the two-level baseline
 * (mm/baseline) builds its page-table level on the mm_pt_* operations. */
#ifndef CORTENMM_INTERNAL_H
#define CORTENMM_INTERNAL_H

#include "cortenmm/cursor.h"

/* --- per-PTE status word (status.h, mm_status_word) ---
 * 0 means "no software status": the entry is MAPPED if its PTE is
 * present, INVALID otherwise. Non-zero only on non-present entries
 * (RESERVED, SWAPPED, PAGER) or on present leaves: COW (prot = the logical
 * permissions, dev = its MM_MAP_NOSHARE limit) or MAPPED with limits (dev =
 * MM_MAP_LIMITS bits, prot and arg 0).
 * Where it is kept: an entry holds its own status whenever the table can
 * encode it (a non-present entry: status_encode; a present leaf, in its
 * few software bits: leaf_status_encode); only a status that does not fit
 * goes to the page's metadata array, allocated on demand. A non-zero
 * array word wins; otherwise the entry's own bits say it (ent_status). */
static inline uint64_t meta_make(unsigned kind, unsigned prot, unsigned dev, uint64_t arg)
{
	struct mm_status st = { .kind = (uint8_t)kind, .prot = (uint8_t)prot, .dev = (uint8_t)dev,
				.arg = arg };
	return mm_status_word(&st);
}
static inline unsigned meta_kind(uint64_t m) { return m & 7; }
static inline unsigned meta_prot(uint64_t m) { return (m >> 3) & MM_PROT_MASK; }
static inline unsigned meta_dev(uint64_t m) { return (m >> 10) & 0xff; }
static inline uint64_t meta_arg(uint64_t m) { return (m >> 18) & MM_STATUS_ARG_MAX; }
/* The MM_MAP_LIMITS a present leaf's word carries (0 for a plain mapping). */
static inline unsigned meta_limits(uint64_t m)
{
	unsigned k = meta_kind(m);
	return k == MM_COW || k == MM_MAPPED ? meta_dev(m) & MM_MAP_LIMITS : 0;
}
/* The word of a present leaf: COW with logical permissions prot, or a
 * plain mapping; limits as mm_map takes them (COW keeps NOSHARE only). */
static inline uint64_t meta_leaf(bool cow, unsigned prot, unsigned limits)
{
	if (cow)
		return meta_make(MM_COW, prot, limits & MM_MAP_NOSHARE, 0);
	return limits & MM_MAP_LIMITS ? meta_make(MM_MAPPED, 0, limits & MM_MAP_LIMITS, 0) : 0;
}

/* --- atomics on entries (hardware may set A/D concurrently) --- */
static inline uint64_t ent_load(const uint64_t *p) { return __atomic_load_n(p, __ATOMIC_ACQUIRE); }
static inline void ent_store(uint64_t *p, uint64_t v) { __atomic_store_n(p, v, __ATOMIC_RELEASE); }
static inline uint64_t ent_xchg(uint64_t *p, uint64_t v) { return __atomic_exchange_n(p, v, __ATOMIC_ACQ_REL); }

/* A core-private page flag (struct mm_page.flags, next to MM_PG_PT and
 * MM_PG_STALE): the page was made by a split of the mm_map_range in
 * progress, which takes it away again if the call fails. */
#define MM_PG_MADE 0x04u

static inline bool pg_stale(const struct mm_page *pg)
{
	return __atomic_load_n(&pg->flags, __ATOMIC_ACQUIRE) & MM_PG_STALE;
}

static inline uint64_t *pg_ptes(const struct mm_as *as, const struct mm_page *pg)
{
	return (uint64_t *)as->plat->phys_to_virt(pg->pa);
}
static inline uint64_t *pg_meta(const struct mm_as *as, const struct mm_page *pg)
{
	return pg->meta_pa ? (uint64_t *)as->plat->phys_to_virt(pg->meta_pa) : 0;
}
/* The status word of entry i of pg, whose value is e. */
static inline uint64_t ent_status(const struct mm_as *as, const struct mm_page *pg, unsigned i,
				  uint64_t e)
{
	uint64_t *m = pg_meta(as, pg);
	if (m && m[i])
		return m[i];
	const struct pt_arch *a = as->arch;
	if (!e)
		return 0;
	if (!a->present(e))
		return a->status_decode(e);
	/* a table entry never has these bits set */
	return e & a->leaf_status_bits ? a->leaf_status_decode(e, pg->level) : 0;
}
static inline uint64_t slot_meta(const struct mm_as *as, const struct mm_page *pg, unsigned i)
{
	return ent_status(as, pg, i, ent_load(&pg_ptes(as, pg)[i]));
}
/* Must status word meta, in an entry whose hardware part is pte (0, a
 * leaf, or a non-present entry holding a status), go to the page's
 * metadata array? Only
 * where the table cannot encode it in the entry. *raw is what the entry
 * then holds: pte (a leaf: with its status bits set to meta's encoding,
 * or cleared when meta goes to the array), or 0 / meta's encoding for a
 * non-present entry. level: the entry's (decoders read bits by leaf size;
 * any level when pte is not present). */
static inline bool meta_in_array(const struct pt_arch *a, uint64_t pte, unsigned level,
				 uint64_t meta, uint64_t *raw)
{
	if (!meta) {   /* no status (the common case): no call */
		*raw = pte & ~a->leaf_status_bits;   /* 0 stays 0, a leaf loses its bits */
		return false;
	}
	if (pte && a->present(pte)) {   /* 0 is never present (tests/host t_arch) */
		*raw = pte & ~a->leaf_status_bits;
		return meta && !(a->leaf_status_encode && a->leaf_status_encode(meta, raw, level));
	}
	*raw = 0;
	if (!meta)
		return false;
	return !a->status_encode(meta, raw);
}

static inline uint64_t span_of(const struct pt_arch *a, unsigned level)
{
	return 1ull << pt_shift(a, level);
}
/* Sign-extend a VA from the arch's top bit (canonical form). */
static inline uint64_t va_canon(const struct pt_arch *a, uint64_t va)
{
	unsigned s = 64 - a->va_bits;
	return (uint64_t)((int64_t)(va << s) >> s);
}
/* Base VA of entry i of a page at `level` whose first entry is at base
 * (the root's first entry is at as->root_base). Only the entries of a
 * root that holds both halves jump the hole between them (the upper half
 * sign-extends); below the root, and in a root of one half (split_roots),
 * entries follow each other. */
static inline uint64_t entry_base(const struct pt_arch *a, uint64_t base, unsigned level, unsigned i)
{
	uint64_t va = base + (uint64_t)i * span_of(a, level);
	return level == a->levels && !a->split_roots ? va_canon(a, va) : va;
}

static inline bool is_table(const struct pt_arch *a, uint64_t pte, unsigned level)
{
	return level > 1 && a->present(pte) && !a->is_leaf(pte, level);
}

static inline struct mm_page *child_of(const struct mm_as *as, uint64_t pte, unsigned level)
{
	return as->plat->page_desc(as->arch->addr(pte, level));
}

/* The cursor's range is exactly entry i of a page (level L, first entry at
 * base): that page, not the child, must cover it (a huge map or a
 * collapse rewrites entry i itself). */
static inline bool mm_whole_entry(const struct mm_cursor *c, uint64_t base, unsigned L, unsigned i)
{
	const struct pt_arch *a = c->as->arch;
	uint64_t eb = entry_base(a, base, L, i);
	return c->start == eb && c->last == eb + span_of(a, L) - 1;
}

/* Lock [start, last] (inclusive, validated by the caller). (cursor.c) */
int mm_lock_last(struct mm_cursor *c, struct mm_as *as, uint64_t start, uint64_t last);

/* --- locks (lock.c): platform hooks or the core's atomics --- */
/* Preemption off / on around a lock the core itself implements (nests). */
void mm_guard_on(const struct mm_platform *p);
void mm_guard_off(const struct mm_platform *p);
void mm_spin_lock(const struct mm_platform *p, mm_lock_t *l);
void mm_spin_unlock(const struct mm_platform *p, mm_lock_t *l);
void mm_read_lock(const struct mm_platform *p, mm_lock_t *l);
void mm_read_unlock(const struct mm_platform *p, mm_lock_t *l);
void mm_write_lock(const struct mm_platform *p, mm_lock_t *l);
void mm_write_unlock(const struct mm_platform *p, mm_lock_t *l);

/* Lock statistics for the locks the core implements itself (platform.h,
 * lock_stat). A waiter keeps `waited` (0 at the start): mm_lock_missed
 * after a failed try, mm_lock_relax instead of p->relax() for each
 * spin-wait step; once it holds the lock, mm_lock_stat reports it. */
static inline void mm_lock_missed(uint32_t *waited)
{
	if (!*waited)
		*waited = 1;
}

static inline void mm_lock_relax(const struct mm_platform *p, uint32_t *waited)
{
	p->relax();
	mm_lock_missed(waited);
	if (*waited < UINT32_MAX)
		(*waited)++;
}

static inline void mm_lock_stat(const struct mm_platform *p, unsigned kind, uint32_t waited)
{
	if (p->lock_stat)
		p->lock_stat(kind, waited);
}

/* --- frames (frames.c) --- */
void mm_zero_frame(const struct mm_platform *p, uint64_t pa);
/* Refill this hart's pool up to `want` frames (best effort, no lock held). */
void mm_pool_refill(const struct mm_platform *p, unsigned want);
/* Make c->nr_resv >= n, from the pool or pt_alloc. MM_OK or MM_ENOMEM
 * (what was taken stays reserved; mm_resv_return gives it back). */
int mm_resv_fill(struct mm_cursor *c, unsigned n);
/* One zeroed reserved frame (panics if the reservation was miscounted). */
uint64_t mm_resv_pop(struct mm_cursor *c);
/* A frame popped from the reservation now counts in as->nr_frames: drop
 * its charge (after the count went up, so the payer never sees it
 * uncounted). */
void mm_resv_used(struct mm_cursor *c);
/* Return unused reserved frames to the pool (or free them). */
void mm_resv_return(struct mm_cursor *c);
/* Turn a zeroed frame into a PT page at level, empty, unlocked. */
struct mm_page *mm_pt_init(struct mm_as *as, uint64_t pa, unsigned level);
/* Free a PT page and its metadata array now (no deferral). */
void mm_pt_free_now(const struct mm_platform *p, struct mm_page *pg);

/* Replace entry i (pte, meta; first address eb) of pg at level L, which is
 * not a table, by a new child (from the cursor's reservation: 1 frame, 2
 * with cmeta) that reproduces it; the child is announced with
 * proto->born. Breaks before it makes where the arch needs it. (ops.c) */
struct mm_page *mm_split(struct mm_cursor *c, struct mm_page *pg, unsigned i, uint64_t eb,
			 uint64_t pte, uint64_t meta, unsigned L, bool cmeta);

/* Remove every PT page inside the cursor's range that holds nothing. (ops.c) */
void mm_prune(struct mm_cursor *c);

/* Undo splits: made[0..n-1] are the PT pages on va's path below the
 * covering page, top down, each made by a split of the entry above it
 * (made[0] in the covering page). From the bottom up, while the page on
 * the path is still made[d] and still holds one status in every entry (or
 * nothing), put that status back into its parent entry and remove it.
 * Allocates nothing, cannot fail. Needs: the cursor holds the covering
 * page and every descendant overlapping its range. (ops.c) */
void mm_unsplit_path(struct mm_cursor *c, uint64_t va, struct mm_page *const *made, unsigned n);

/* --- the page-table halves of the public operations (ops.c) ---
 * Same contracts as the public functions in cursor.h, acting on the page
 * table alone; those hand over to the protocol's hook of the same name
 * when it has one. */
/* [va, va+len) aligned, non-empty, inside the locked range: MM_OK, or
 * MM_EALIGN, MM_ERANGE, MM_ENOTLOCKED. */
int mm_check_range(struct mm_cursor *c, uint64_t va, uint64_t len);
/* The metadata word of a status mark() accepts for a table a: MM_OK, or
 * MM_EINVAL (bad kind, prot bits or arg), MM_EPROT (a memory type a
 * cannot encode). */
int mm_status_meta(const struct pt_arch *a, const struct mm_status *st, uint64_t *meta);
int mm_pt_query(struct mm_cursor *c, uint64_t va, struct mm_info *out);
int mm_pt_unmap(struct mm_cursor *c, uint64_t va, uint64_t len);
/* The dry runs of the page-table halves (cursor.h mm_*_need). */
int mm_pt_unmap_need(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned *need);
int mm_pt_protect_need(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned prot,
		       unsigned *need);
int mm_pt_protect(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned prot);
int mm_pt_take(struct mm_cursor *c, uint64_t va, struct mm_info *out);
/* mm_next_used over [lo, hi] (page aligned, inside the locked range, not
 * checked). */
int mm_pt_next_used(struct mm_cursor *c, uint64_t lo, uint64_t hi, uint64_t *next,
		    uint64_t *skipped);
/* mm_wf_check of the page-table tree, where extra_frames more frames than
 * its PT pages and metadata arrays count in as->nr_frames. (wf.c) */
int mm_wf_tree(struct mm_as *as, uint64_t extra_frames, const char **why);

/* --- cursor internals (cursor.c) --- */
/* Note that [lo, hi] (inclusive) needs a TLB flush before commit. */
void mm_cursor_flush_range(struct mm_cursor *c, uint64_t lo, uint64_t hi);
/* Queue a data page for release after the flush (flushes early when full). */
void mm_cursor_release_frame(struct mm_cursor *c, uint64_t pa, unsigned level);
/* Queue an unlinked PT page for freeing after the flush. */
void mm_cursor_dead_pt(struct mm_cursor *c, struct mm_page *pg);
/* Commit like mm_release (flush, unlock, free what was removed) but
 * leave an empty covering page where it is; c->as stays set. For a
 * protocol that must undo what a failed lock built. */
void mm_cursor_commit(struct mm_cursor *c);

#endif
