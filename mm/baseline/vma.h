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
 * Locks, the way Linux 6.4 and later do it (per-VMA locks):
 *  - mmap_lock (as->vma.mmap_lock), readers-writer, held for writing by
 *    every change of the VMA tree. A cursor over more than one page takes
 *    it for writing at lock time (VMA_WRITE): it write-locks every VMA over
 *    or next to its range and waits for their readers, then takes the
 *    split locks of the PT pages on the paths to both ends of its range
 *    (the only ones it shares with faults elsewhere) and of the PT pages it
 *    makes; it covers from the root.
 *  - A VMA is write-locked while its wseq equals as->vma.wseq; a writer
 *    sets it, and every mmap_lock writer moves as->vma.wseq on at unlock,
 *    which releases all its VMAs at once (Linux's vm_lock_seq and
 *    mm_lock_seq).
 *  - A one-page cursor (the fault path) looks the VMA holding its page up
 *    without any lock, under RCU (the tree's links are written atomically;
 *    nodes are reused only as nodes and their frames freed after a grace
 *    period, so a stale node is still a node), and takes it for reading:
 *    its reader count, then a check that it is not write-locked and still
 *    holds the page (vma_start_read). It holds neither mmap_lock nor any
 *    shared count of it (VMA_VREAD). Where the VMA is being changed it
 *    falls back to mmap_lock for reading (VMA_READ); where there is no VMA
 *    (a map of new memory, like mmap) it takes mmap_lock for writing
 *    (VMA_PAGEW). Then, in every case, it walks the page table without
 *    locks and takes the split lock of the deepest PT page on its page's
 *    path, adding no table: an operation that needs one (a map of a page
 *    never touched) makes it under that lock, locked at birth (Linux's
 *    __pte_alloc under the level above).
 *  - A one-page cursor that must change the VMA tree upgrades to the
 *    write lock in place, keeping its PT locks, then write-locks the VMAs
 *    its change touches (and those next to them) and waits for their
 *    readers. A pending upgrade holds off new readers and writers of
 *    mmap_lock; a VMA reader stops counting as one once it announced its
 *    upgrade (its page stays its own through its PT lock).
 *  - No one waits for something while holding what its waiter needs:
 *    waiting for a PT lock, a VMA reader gives up and starts over when its
 *    VMA is write-locked, and an mmap_lock reader when an upgrade is
 *    pending; a writer in its lock phase (waiting for VMA readers or a PT
 *    lock) backs off when an upgrade is pending (it has changed nothing
 *    yet). A VMA reader holds off no upgrader, so it need not yield to one.
 * PT pages are removed only under mmap_lock for writing, and freed after
 * an RCU grace period (VMA readers walk without locks); a removed page is
 * marked stale, and a walker that locks it starts over. */
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
	uint32_t readers;              /* cursors holding it for reading, and lookups
					* checking it (kept across reuse) */
	uint32_t wseq;                 /* write-locked while equal to as->vma.wseq */
};

/* A node's bounds are read with no lock by lookups under RCU (a node is
 * reused at once, as a node): every write of them is an atomic store. */
static inline void vma_set_start(struct mm_vma *v, uint64_t x)
{
	__atomic_store_n(&v->start, x, __ATOMIC_RELAXED);
}
static inline void vma_set_last(struct mm_vma *v, uint64_t x)
{
	__atomic_store_n(&v->last, x, __ATOMIC_RELAXED);
}

/* The head of one slab frame of VMA nodes; the nodes follow it. */
struct mm_vma_slab {
	uint64_t pa;
	struct mm_vma_slab *next;
	uint32_t used;                 /* nodes in use */
};
#define VMA_PER_SLAB ((MM_PAGE_SIZE - sizeof(struct mm_vma_slab)) / sizeof(struct mm_vma))

/* How a cursor holds the address space (c->vma_mode). */
enum {
	VMA_WRITE = 1,     /* wide: mmap_lock for writing, its VMAs write-locked,
			    * the PT locks of both ends' paths */
	VMA_READ = 2,      /* one page: mmap_lock for reading + PT locks (c->vma_ptl) */
	VMA_UPGRADED = 3,  /* was VMA_READ or VMA_VREAD: mmap_lock for writing + PT locks */
	VMA_VREAD = 4,     /* one page: its VMA for reading (c->vma_held) + PT locks */
	VMA_PAGEW = 5,     /* one page in no VMA: mmap_lock for writing + PT locks */
};

/* --- the tree (vma_tree.c); callers hold mmap_lock (read to look up) --- */
/* The first VMA whose last page is >= va (the one holding va, or the next
 * one), NULL if none. */
struct mm_vma *vma_first(struct mm_vma *root, uint64_t va);
/* The last VMA that starts below va, NULL if none. */
struct mm_vma *vma_prev(struct mm_vma *root, uint64_t va);
/* The VMA after v in address order, NULL if none. */
struct mm_vma *vma_after(struct mm_vma *root, const struct mm_vma *v);
/* Without any lock, in an RCU read-side section: the VMA vma_first would
 * give, or NULL; possibly a stale answer (the caller checks it under the
 * VMA's read lock), and NULL when the tree changed under it too much. */
struct mm_vma *vma_first_rcu(struct mm_as *as, uint64_t va);
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
/* The two halves of an upgrade by a cursor that does not hold l (a VMA
 * reader): announce it (holds off new readers and writers), then, once
 * what it must let go of is let go, wait for the write lock. */
void mmap_upgrade_announce(mm_lock_t *l);
void mmap_upgrade_wait(const struct mm_platform *p, mm_lock_t *l);
/* A PT page's split lock: take it if free (true), or change nothing. */
bool ptl_trylock(const struct mm_platform *p, struct mm_page *pg);
void ptl_unlock(const struct mm_platform *p, struct mm_page *pg);

/* --- the protocol (vma_proto.c) --- */
/* Give the cursor write access to the VMA tree: a VMA_READ or VMA_VREAD
 * cursor upgrades (keeping its page-table locks); others have it already. */
void vma_write_access(struct mm_cursor *c);
/* Needs write access. Write-lock the VMAs over [lo, hi] and those next to
 * it, and wait until no one reads them: the tree may then change there. */
void vma_claim(struct mm_cursor *c, uint64_t lo, uint64_t hi);

/* --- the protocol's lock hooks (vma_proto.c), for mm_proto_vma (vma_ops.c) --- */
int vma_lock(struct mm_cursor *c);
void vma_unlock(struct mm_cursor *c);
void vma_born(struct mm_cursor *c, struct mm_page *pg);
void vma_unlinked(struct mm_cursor *c, struct mm_page *pg);
/* mm_proto_vma.wf_check (vma_wf.c) */
int vma_wf_check(struct mm_as *as, const char **why);

#endif
