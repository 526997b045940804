/* Transactions on an address space (the paper's RCursor).
 *
 * The contract, stated once:
 *  - mm_lock(c, as, start, end) acquires [start, end) of `as` exclusively:
 *    overlapping transactions serialise, disjoint ones run in parallel.
 *    Before it takes any lock it refills this hart's pool of zeroed PT pages.
 *  - Between mm_lock and mm_release, mm_query / mm_map / mm_mark / mm_unmap
 *    act on sub-ranges of the locked range. Each either succeeds completely
 *    or fails with an error code and leaves the tree as it was (it reserves
 *    every frame it may need before it changes anything).
 *  - mm_release commits: the locks are dropped, then the TLB is flushed of
 *    what was removed or downgraded (before the locks drop for protocol vma
 *    and when as->flush_locked is set), then unmapped frames go to
 *    plat->frame_release and removed PT pages are freed (adv: after an RCU
 *    grace period). It returns after the flush. A transaction overlapping
 *    a flush still in flight waits for it inside mm_lock, so no
 *    transaction ever sees a range whose old translations are still
 *    usable somewhere.
 *  - A cursor belongs to one thread; it may not be held across a return to
 *    user mode or a blocking wait. Do not lock a second range while holding
 *    one (deadlock); lock the union instead.
 *  - The last page of the 64-bit space cannot be locked (end is exclusive).
 */
#ifndef CORTENMM_CURSOR_H
#define CORTENMM_CURSOR_H

#include "mm.h"

#define MM_CURSOR_BATCH 32     /* released data pages batched per TLB flush */
#define MM_CURSOR_RESV  (4 * MM_MAX_LEVELS + 4)

struct mm_cursor {
	struct mm_as *as;
	uint64_t start, last;           /* locked range, inclusive */
	struct mm_page *cover;          /* covering PT page */
	unsigned cover_level;
	uint64_t cover_base;            /* VA of the covering page's first entry */
	struct mm_page *rlocked[MM_MAX_LEVELS]; /* rw: read-locked ancestors */
	unsigned nr_rlocked;
	unsigned vma_mode;              /* vma: how the cursor holds mmap_lock */
	/* pending TLB flush */
	bool flush;
	uint64_t flush_lo, flush_hi;    /* inclusive */
	/* data pages to release after the flush */
	unsigned nr_rel;
	uint64_t rel_pa[MM_CURSOR_BATCH];
	uint8_t rel_level[MM_CURSOR_BATCH];
	/* PT pages / metadata arrays unlinked, freed after the flush */
	struct mm_page *dead;
	/* frames reserved by the operation in progress, and how many of the
	 * frames drawn since the last return were charged (frames_charge) */
	unsigned nr_resv;
	unsigned nr_charged;
	uint64_t resv[MM_CURSOR_RESV];
	/* A multi-op transaction (mm_txn_reserve .. mm_txn_finish): the
	 * operations draw their frames from txn_list (free zeroed frames
	 * linked through their first word, txn_frames of them, txn_charged of
	 * those charged), and PT pages they leave empty stay until finish. */
	bool keep_tables;
	unsigned txn_frames, txn_charged;
	unsigned txn_nodes;             /* protocol vma: VMA nodes the plan counted */
	uint64_t txn_list;
	/* protocol vma only (mm/baseline/vma.h), set by its lock: the split
	 * PT locks held (the paths to both ends of a wide range at most),
	 * the PT pages a wide cursor made (locked, linked through rcu.next)
	 * and the VMA it holds for reading */
	struct mm_page *vma_ptl[2 * MM_MAX_LEVELS];
	unsigned vma_nr_ptl;
	struct mm_page *vma_born;
	struct mm_vma *vma_held;
};

/* Lock [start, end) of as. end exclusive, both 4 KiB aligned, start < end,
 * inside [as->lo, as->last].
 * MM_OK; MM_EALIGN, MM_ERANGE, MM_EOUTSIDE (nothing held); MM_ENOMEM
 * (adv or vma could not create a PT page on its path; nothing held, and the
 * PT pages it added on the way are removed again where nobody has put
 * anything into them meanwhile). */
int mm_lock(struct mm_cursor *c, struct mm_as *as, uint64_t start, uint64_t end);

/* Commit and drop the cursor (see contract above). Cannot fail. */
void mm_release(struct mm_cursor *c);

/* Status of the page containing va (inside the locked range).
 * MM_OK or MM_ENOTLOCKED. */
int mm_query(struct mm_cursor *c, uint64_t va, struct mm_info *out);

/* Map one page of size 4 KiB << 9*(level-1) at va -> pa. va and pa aligned
 * to that size; the arch must allow a leaf at that level; prot includes
 * MM_PROT_R and a memory type the arch encodes (pt_arch.mem_types, else
 * MM_EPROT); flags MM_MAP_COW, MM_MAP_ACCESSED, MM_MAP_DIRTY or 0. The page
 * may be invalid, reserved, swapped or pager-managed (its status is
 * replaced); if any part of it is mapped or COW: MM_EEXIST. Otherwise
 * MM_EALIGN, MM_EHUGE, MM_EPROT, MM_EINVAL, MM_ENOTLOCKED, MM_ENOMEM. The frame is owned by the AS from
 * now on and handed to plat->frame_release when unmapped. */
int mm_map(struct mm_cursor *c, uint64_t va, uint64_t pa, unsigned level,
	   unsigned prot, unsigned flags);

/* Map [va, va+len) -> [pa, pa+len) with the largest pages alignment and the
 * arch allow (kernel direct map, kernel image); each page's status
 * (invalid, reserved, swapped, pager) is replaced. Same errors as mm_map;
 * on failure nothing changed: every page is checked and every table built
 * before the first page is mapped. */
int mm_map_range(struct mm_cursor *c, uint64_t va, uint64_t pa, uint64_t len,
		 unsigned prot);

/* Set the status of every page in [va, va+len): st->kind is INVALID,
 * RESERVED, SWAPPED or PAGER; st->prot's memory type one the arch encodes
 * (else MM_EPROT). Fails with MM_EMAPPED if any page there is mapped or
 * COW. Whole aligned blocks are recorded at the highest level
 * (no leaf tables); tables that become empty are removed.
 * Otherwise MM_EALIGN, MM_ERANGE, MM_EINVAL, MM_ENOTLOCKED, MM_ENOMEM. */
int mm_mark(struct mm_cursor *c, uint64_t va, uint64_t len, const struct mm_status *st);

/* Make every page in [va, va+len) invalid, whatever it was. Mapped pages
 * are released after the TLB flush; huge pages cut by the range are split.
 * Empty PT pages are removed. MM_EALIGN, MM_ERANGE, MM_ENOTLOCKED, MM_ENOMEM. */
int mm_unmap(struct mm_cursor *c, uint64_t va, uint64_t len);

/* --- all-or-nothing transactions of several operations ---
 *
 * Each operation above is atomic by itself. A caller that applies several
 * as one (the kernel's region transactions) checks them all first, then
 * performs them so that none can fail:
 *   - mm_txn_begin: from now on PT pages an operation leaves empty stay in
 *     the tree until mm_txn_finish, so an operation on a range no earlier
 *     one touched takes no more than its dry run said beforehand.
 *   - mm_*_need: the dry run of an operation against the tree as it is
 *     now: its error (the one the operation would return), or MM_OK and
 *     the frames it would take. Changes nothing.
 *   - mm_txn_need_max: what any one operation on [va, va+len) may take,
 *     whatever the tree under the cursor holds.
 *   - mm_txn_reserve: take the frames those counts add up to.
 *   - mm_txn_finish: remove the PT pages left empty, give back what was
 *     not used.
 * The protocol vma answers through its own hooks (mm_protocol.need,
 * reserve_nodes): VMA nodes are counted beside the frames. */

/* Begin a transaction's plan on a fresh cursor. Cannot fail. */
void mm_txn_begin(struct mm_cursor *c);

/* Dry runs of mm_map (4 KiB << 9*(level-1) page), mm_mark, mm_unmap,
 * mm_protect, mm_take (and mm_clean_need below): the error the operation would return now, or MM_OK
 * and *need = the frames it would take. Change nothing in the tree. */
int mm_map_need(struct mm_cursor *c, uint64_t va, uint64_t pa, unsigned level, unsigned prot,
		unsigned flags, unsigned *need);
int mm_mark_need(struct mm_cursor *c, uint64_t va, uint64_t len, const struct mm_status *st,
		 unsigned *need);
int mm_unmap_need(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned *need);
int mm_protect_need(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned prot,
		    unsigned *need);
int mm_take_need(struct mm_cursor *c, uint64_t va, unsigned *need);

/* The most frames one map, mark, unmap, protect or take inside
 * [va, va+len) can take under this cursor, whatever the tree holds: each
 * end of the range splits at most one entry per level below the covering
 * page (a table and its metadata array each), and statuses are written
 * only into pages on the two boundary paths (a metadata array each). */
unsigned mm_txn_need_max(struct mm_cursor *c, uint64_t va, uint64_t len);

/* Reserve `frames` frames (charged through plat->frames_charge) for the
 * operations of the transaction mm_txn_begin began. MM_OK; MM_ENOMEM (the
 * transaction is finished: nothing reserved). */
int mm_txn_reserve(struct mm_cursor *c, unsigned frames);

/* End the transaction: remove the PT pages of the locked range that hold
 * nothing, give back the frames not used. Cannot fail; a no-op on a
 * cursor with no transaction. */
void mm_txn_finish(struct mm_cursor *c);

/* Times an operation of a transaction needed more frames than were
 * reserved for it (and drew them as a lone operation would): a planning
 * error, 0 unless mm_txn_need_max or a dry run is wrong. */
extern unsigned long mm_txn_overdraws;

/* --- operations for pagers and fork --- */

/* Give every mapped, COW, reserved and pager-managed page in [va, va+len)
 * the permissions prot (MM_PROT_R/W/X only, R included; each page keeps
 * its U and G bits and its memory type). COW pages get prot as their logical permissions and
 * stay read-only in hardware; swapped and invalid pages are untouched.
 * Huge leaves and statuses cut by the range are split (each piece of a
 * split huge leaf keeps its A/D bits). A/D bits of rewritten leaves are kept;
 * every leaf whose entry changed is flushed at commit (so a downgrade is
 * gone from every hart's TLB when mm_release returns).
 * MM_OK; MM_EALIGN, MM_ERANGE, MM_ENOTLOCKED, MM_EPROT (no R or bits other
 * than R/W/X), MM_EINVAL (would split a sealed root entry), MM_ENOMEM.
 * On failure nothing changed. */
int mm_protect(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned prot);

/* Make every mapped page in [va, va+len) copy-on-write: kind COW with its
 * present permissions as the logical ones, hardware entry without W (A/D
 * kept), flushed at commit. COW pages and statuses are untouched; cut huge
 * leaves are split. The frames stay where they are (no release). Same
 * errors as mm_protect but MM_EPROT. */
int mm_make_cow(struct mm_cursor *c, uint64_t va, uint64_t len);

/* The reverse: every COW page in [va, va+len) becomes a plain mapping of
 * the same frame with its logical permissions (A/D kept; flushed at
 * commit). For a caller that knows nobody else uses those frames (a COW
 * break without a copy). Needs no frames unless a huge COW leaf is cut.
 * Same errors as mm_make_cow. */
int mm_unshare(struct mm_cursor *c, uint64_t va, uint64_t len);

/* mm_query(va) into *out, then, for a mapped or COW page, clear the
 * hardware accessed bit of the leaf holding va (the whole leaf, huge or
 * not); if it was set, the leaf is flushed at commit, so the next access
 * through any hart sets it again. *out reports the bits as they were.
 * MM_OK or MM_ENOTLOCKED. */
int mm_age(struct mm_cursor *c, uint64_t va, struct mm_info *out);

/* Record an access to the mapped or COW page holding va: set the accessed
 * bit of the leaf holding it (the whole leaf, huge or not), and with write
 * also its dirty bit, atomically, as an MMU with hardware A/D would. The
 * fault path of a table whose hw_ad is false calls it on the fault the
 * first access (first write) takes; with hw_ad true it is only needed to
 * set the bits ahead of the MMU. A leaf that changed is flushed at commit
 * (an upgrade: a hart that kept the old entry faults again at worst).
 * MM_OK (also when the bits were set already); MM_ENOTLOCKED; MM_EINVAL
 * (no page mapped there); MM_EPROT (write to a page the hardware maps
 * read-only: COW or without W, a protection fault, not a dirty update). */
int mm_touch(struct mm_cursor *c, uint64_t va, bool write);

/* The end of a fault at va (write: a store) that found the page mapped or
 * COW with the rights the access needs: another hart resolved it first,
 * or (hw_ad false) only the accessed (dirty) bit was missing. Records the
 * access where software keeps A/D (mm_touch), and sets *flush_local when
 * the faulting hart must drop its own translation of va before it retries:
 * where the table's TLB may cache the invalid or permission-faulting entry
 * it faulted on (pt_arch.tlb_caches_invalid), since no flush comes from a
 * leaf that did not change. The caller flushes after mm_release, on its
 * own hart only. Needs va locked. MM_OK; mm_touch's errors (then
 * *flush_local false and nothing changed). */
int mm_fault_settle(struct mm_cursor *c, uint64_t va, bool write, bool *flush_local);

/* Unmap the mapped (not COW) 4 KiB page at va and hand its frame to the
 * caller: it is NOT given to plat->frame_release; the caller owns the
 * mapping's reference from now on. *out is the page as the entry last
 * held it (pa, prot, and the accessed/dirty bits read atomically with the
 * removal, so a write before it is never lost). Flushed at commit; PT
 * pages left empty are removed. MM_OK; MM_EALIGN, MM_ENOTLOCKED, MM_EINVAL
 * (not a mapped page, or COW), MM_EHUGE (part of a huge leaf). */
int mm_take(struct mm_cursor *c, uint64_t va, struct mm_info *out);

/* First page-aligned address >= va, up to the end of the locked range,
 * whose status is not invalid (mapped, COW, reserved, swapped, pager):
 * returns 1 with it in *next, or 0 when there is none. Empty subtrees are
 * skipped without visiting them: an empty entry above the leaf level, a
 * PT page whose live-entry count is 0, and the rest of a page once its
 * live-entry count is used up; each adds 1 to *skipped (if not NULL).
 * MM_EALIGN or MM_ENOTLOCKED (negative) for a bad va. Changes nothing. */
int mm_next_used(struct mm_cursor *c, uint64_t va, uint64_t *next, uint64_t *skipped);

/* What mm_leaves reports: [lo, last], the part inside the range asked
 * for of one mapped or COW leaf, or of a run of adjacent leaves that all
 * have the same level (1 = 4 KiB), kind (MM_MAPPED or MM_COW) and
 * accessed/dirty bits (each leaf's bits from one atomic read of it; a
 * huge leaf cut by the range: only the part inside, with the bits of the
 * whole leaf). */
struct mm_leaf {
	uint64_t lo, last;
	unsigned level;
	uint8_t kind;
	bool accessed, dirty;
};
typedef void mm_leaf_fn(void *arg, const struct mm_leaf *leaf);

/* Call fn(arg, leaf) for every mapped or COW leaf meeting [va, va+len)
 * (adjacent ones of the same state merged into one call), in address
 * order, without overlap, in one walk down the tree under the cursor: no
 * per-page lookup from the covering page. Empty subtrees are passed over
 * as mm_next_used passes them, each adding 1 to *skipped (if not NULL).
 * Statuses (reserved, swapped, pager) and invalid pages are not reported.
 * fn runs under the cursor's locks: it must not block or lock a range.
 * MM_OK; MM_EALIGN, MM_ERANGE, MM_ENOTLOCKED (nothing visited). Changes
 * nothing. */
int mm_leaves(struct mm_cursor *c, uint64_t va, uint64_t len, mm_leaf_fn *fn, void *arg,
	      uint64_t *skipped);

/* Clear the dirty bit of every mapped and COW page in [va, va+len),
 * keeping the pages mapped with their permissions, kind and accessed
 * bits. A dirty huge leaf cut by the range is split first (each piece
 * keeps the leaf's bits, so the pieces outside the range stay dirty);
 * a clean one is left whole. Where the table has no hardware A/D
 * (hw_ad false) a clean writable leaf is one the hardware does not let
 * write (make_leaf), so the next write faults and mm_touch records it.
 * Every leaf that changed is flushed at commit: once mm_release returns,
 * the next write through any hart sets the bit again (or faults).
 * *was_dirty (if not NULL): whether any page in the range was dirty.
 * MM_OK; MM_EALIGN, MM_ERANGE, MM_ENOTLOCKED, MM_EINVAL (would split a
 * sealed root entry), MM_ENOMEM (a split's table). On failure nothing
 * changed. Works on the page table alone under every protocol. */
int mm_clean(struct mm_cursor *c, uint64_t va, uint64_t len, bool *was_dirty);
/* Its dry run (see mm_*_need above): the error mm_clean would return,
 * or MM_OK and *need = the frames its splits would take. */
int mm_clean_need(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned *need);

/* Do the pending TLB flush now (locks kept), e.g. so that a downgrade is
 * gone from every TLB before the caller publishes the pages elsewhere. */
void mm_flush(struct mm_cursor *c);

#endif
