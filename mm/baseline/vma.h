/* The two-level baseline ("vma"), private declarations.
 *
 * Level one: per address space, a balanced tree of VMAs (virtual memory
 * areas), each a page-aligned range with one status for its pages that
 * are not present: reserved with permissions, pager-managed with a tag,
 * swapped with a device and slot. Level two: the page table, holding only
 * what the hardware walks (present leaves) plus the copy-on-write bit of
 * present leaves, which pt_arch gives no software PTE bit for (kept in the
 * core's per-PT-page metadata word, as Linux keeps soft bits in the PTE).
 * A page's status: its present leaf if any, else the VMA holding it, else
 * invalid.
 *
 * Locks, the way Linux did it before per-VMA locks:
 *  - mmap_lock (as->vma.mmap_lock), readers-writer. A transaction over more
 *    than one page holds it for writing: it owns the whole tree and page
 *    table and takes no other lock.
 *  - A one-page transaction (the page-fault path) holds it for reading
 *    plus the split page-table lock (the PT page descriptor's lock word) of
 *    the PT page holding that page's entry. Missing page tables on its path
 *    are added first, each under its parent's lock (Linux's __pte_alloc).
 *    It never changes the VMA tree under the read lock: when one of its
 *    operations must (mark, unmap or take over a VMA, protect of one), it
 *    upgrades to the write lock in place, keeping its page-table lock.
 *  - Upgrade is safe because a pending upgrade holds off new readers and
 *    writers, and a reader never waits for a page-table lock while an
 *    upgrade is pending (it drops everything and starts over), so the
 *    upgrader only waits for readers that are running, never for one that
 *    waits for it. Nothing about the upgrader's page can change while it
 *    waits: its page-table entries are under its page-table lock, and the
 *    VMA status of its page changes only under a write lock over it.
 * Page-table pages are freed only by write-mode transactions (none of the
 * readers can be walking then), right after the TLB flush. */
#ifndef MM_BASELINE_VMA_H
#define MM_BASELINE_VMA_H

#include "../core/internal.h"

/* One VMA: [start, last] (inclusive, page aligned, not empty) and the
 * status of its pages that are not present, packed as the core's metadata
 * word (meta_make: kind RESERVED, SWAPPED or PAGER). */
struct mm_vma {
	uint64_t start, last;
	uint64_t status;
	struct mm_vma *child[2];       /* AVL children, lower / higher; child[0] also
					* links the free list */
	uint32_t height;               /* AVL height, 1 for a leaf */
};

/* The head of one slab frame of VMA nodes; the nodes follow it. */
struct mm_vma_slab {
	uint64_t pa;
	struct mm_vma_slab *next;
	uint32_t used;                 /* nodes in use */
};
#define VMA_PER_SLAB ((MM_PAGE_SIZE - sizeof(struct mm_vma_slab)) / sizeof(struct mm_vma))

/* How a cursor holds the address space (c->vma_mode). */
enum {
	VMA_WRITE = 1,     /* mmap_lock for writing, no page-table lock */
	VMA_READ = 2,      /* mmap_lock for reading + page-table locks (c->rlocked) */
	VMA_UPGRADED = 3,  /* was VMA_READ: mmap_lock for writing + page-table locks */
};

/* --- the tree (vma_tree.c); callers hold mmap_lock (read to look up) --- */
/* The first VMA whose last page is >= va (the one holding va, or the next
 * one), NULL if none. */
struct mm_vma *vma_first(struct mm_vma *root, uint64_t va);
/* The last VMA that starts below va, NULL if none. */
struct mm_vma *vma_prev(struct mm_vma *root, uint64_t va);
/* The VMA after v in address order, NULL if none. */
struct mm_vma *vma_after(struct mm_vma *root, const struct mm_vma *v);
/* Link v (start, last, status set; overlapping nothing) / unlink it. Need
 * write access. vma_erase panics if v is not in the tree. */
void vma_insert(struct mm_as *as, struct mm_vma *v);
void vma_erase(struct mm_as *as, struct mm_vma *v);

/* --- node memory (vma_slab.c); all need write access --- */
/* Make n nodes free, growing the slab a frame at a time from the cursor's
 * reservation (charged like PT pages, counted in nr_frames). MM_OK or
 * MM_ENOMEM (frames added before it stay as free nodes, which vma_trim
 * gives back). */
int vma_reserve(struct mm_cursor *c, unsigned n);
/* A free node (panics if none: a miscounted reservation). */
struct mm_vma *vma_alloc(struct mm_as *as);
void vma_free(struct mm_as *as, struct mm_vma *v);
/* Give back every slab frame with no node in use. */
void vma_trim(struct mm_as *as);

/* --- range changes (vma_range.c) --- */
/* Setting [lo, hi] to one status (0: no VMA at all, a punch), worked out
 * on the tree as it is, then applied. */
struct vma_set_plan {
	uint64_t lo, hi, st;
	struct mm_vma *left;      /* overlaps lo from below, or ends at lo - 1 */
	struct mm_vma *right;     /* overlaps hi from above, or starts at hi + 1 */
	bool split;               /* left == right holds all of [lo, hi] */
	bool merge_left, merge_right;
	unsigned erased;          /* VMAs wholly inside [lo, hi] */
};
/* Plan it (reads the tree only). Returns the nodes the change needs
 * (0..2), or -1 when it changes nothing. */
int vma_set_plan(struct mm_as *as, uint64_t lo, uint64_t hi, uint64_t st, struct vma_set_plan *p);
/* Apply a plan made on the tree as it still is, with the nodes it needs
 * reserved. Cannot fail. */
void vma_set_apply(struct mm_as *as, const struct vma_set_plan *p);
/* Give reserved and pager VMAs in [lo, hi] the permissions R/W/X of prot
 * (keeping U/G): the nodes its splits need (0..2), or -1 if nothing
 * changes; then apply with them reserved (cannot fail). */
int vma_protect_plan(struct mm_as *as, uint64_t lo, uint64_t hi, unsigned prot);
void vma_protect_apply(struct mm_as *as, uint64_t lo, uint64_t hi, unsigned prot);

/* --- locks (vma_lock.c): the core's lock words, with upgrade and trylock --- */
void mmap_read_lock(const struct mm_platform *p, mm_lock_t *l);
void mmap_read_unlock(const struct mm_platform *p, mm_lock_t *l);
void mmap_write_lock(const struct mm_platform *p, mm_lock_t *l);
void mmap_write_unlock(const struct mm_platform *p, mm_lock_t *l);
/* Holding l for reading: wait until it is held for writing (by us). */
void mmap_upgrade(const struct mm_platform *p, mm_lock_t *l);
/* l is held for writing (by someone: a check of invariants). */
bool mmap_write_held(const mm_lock_t *l);
/* Some reader is waiting to upgrade l. */
bool mmap_upgrade_pending(const mm_lock_t *l);
/* A PT page's split lock: take it if free (true), or change nothing. */
bool ptl_trylock(const struct mm_platform *p, struct mm_page *pg);
void ptl_unlock(const struct mm_platform *p, struct mm_page *pg);

/* --- the protocol (vma_proto.c) --- */
/* Give the cursor write access to the VMA tree: a VMA_READ cursor
 * upgrades (keeping its page-table locks); others have it already. */
void vma_write_access(struct mm_cursor *c);

/* --- the operations of mm_proto_vma.vma (vma_ops.c, vma_wf.c) --- */
extern const struct mm_vma_ops vma_ops;
int vma_wf_check(struct mm_as *as, const char **why);

#endif
