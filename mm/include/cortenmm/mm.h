/* CortenMM: address spaces, the protocol tables and the checker.
 *
 * One level of truth: an address space is its page-table tree; per-PTE
 * metadata (see status.h) records what the hardware cannot. Everything is
 * done through transactions (cursor.h).
 *
 * Building the kernel address space (boot):
 *   mm_as_init(&kas, arch, &mm_proto_adv, plat, arch->kernel_lo,
 *              arch->kernel_last, ctx);
 *   mm_lock(&c, &kas, start, end);   // e.g. the direct map's range
 *   mm_map_range(&c, va, pa, len, prot);   // 1 GiB / 2 MiB / 4 KiB pages
 *   mm_release(&c);
 *   ... kernel image, MMIO ...
 *   mm_as_kernel_seal(&kas);  // give every empty root slot of the kernel
 *                             // half a (shared, empty) table
 *   satp = mode | (mm_as_root_pa(&kas) >> 12);
 * Until paging is on, plat->phys_to_virt is the identity.
 *
 * User address spaces: mm_as_init(&uas, arch, proto, plat, arch->user_lo,
 * arch->user_last, ctx) then mm_as_share_kernel(&uas, &kas): the kernel
 * half of the root is copied from the sealed kernel root; transactions on
 * uas only ever touch its user half.
 *
 * With arch->split_roots each half has a root of its own: the kernel AS's
 * root is the kernel half's (TTBR1 on AArch64), a user AS's root is its
 * user half's (TTBR0), mm_as_kernel_seal has nothing to fix and
 * mm_as_share_kernel only notes the kernel root; mm_as_root_pa_for says
 * which root translates an address. */
#ifndef CORTENMM_MM_H
#define CORTENMM_MM_H

#include <stdint.h>
#include <stdbool.h>
#include "errors.h"
#include "status.h"
#include "pt_arch.h"
#include "platform.h"

struct mm_cursor;
struct mm_protocol;
struct mm_vma;
struct mm_vma_slab;

/* State of the two-level baseline (protocol "vma", mm/baseline): its VMA
 * tree, the nodes' memory and mmap_lock. Zero and unused under rw and adv. */
struct mm_vma_space {
	mm_lock_t mmap_lock;        /* readers-writer lock with upgrade */
	uint32_t wseq;              /* write sequence: a VMA whose wseq equals it
				     * is write-locked (mm/baseline/vma.h) */
	uint32_t nr_vmas;           /* nodes in the tree */
	struct mm_vma *root;        /* AVL tree of VMAs, ordered by start */
	struct mm_vma *free;        /* unused nodes of every slab frame */
	struct mm_vma_slab *slabs;  /* frames the nodes live in */
	uint32_t nr_free;           /* nodes on the free list */
	uint32_t nr_slabs;          /* slab frames (also counted in nr_frames) */
	uint32_t nr_empty;          /* slab frames with no node in use */
};

/* A TLB flush a committed transaction issues after dropping its locks
 * (cursor.c): its range, while the flush is in flight. */
#define MM_FLUSH_SLOTS 8
struct mm_flush_slot {
	uint32_t state;           /* 0 free, 1 being filled, 2 in flight (atomic) */
	uint64_t lo, hi;          /* inclusive */
};

struct mm_as {
	const struct pt_arch *arch;
	const struct mm_protocol *proto;
	const struct mm_platform *plat;
	uint64_t root_pa;         /* the root of [lo, last] */
	uint64_t root_base;       /* VA of that root's entry 0 (split_roots: its half's start) */
	uint64_t kernel_root_pa;  /* split_roots: the shared kernel root (share_kernel), else 0 */
	uint64_t lo, last;        /* transactions must stay inside [lo, last] */
	void *ctx;                /* platform's own per-AS data (hart mask, ASID) */
	bool sealed;              /* kernel AS after mm_as_kernel_seal: root entries fixed */
	/* Flush before dropping the locks, as a two-level MM does (always for
	 * protocol "vma"; the platform may set it for rw and adv to measure
	 * what the late flush buys). Otherwise a commit drops its locks first
	 * and flushes after, and a later transaction over the same addresses
	 * waits at lock for flushes still in flight there. */
	bool flush_locked;
	/* The fields above are read by every transaction and written only
	 * when the AS is set up. The two groups below change as transactions
	 * run, each on cache lines of its own: allocating or freeing a PT
	 * page (nr_frames, which transactions never read) must not make
	 * every other hart's next transaction fetch the line holding
	 * root_pa, lo and last, nor the one late_find reads (nr_late). */
	_Alignas(64) uint64_t nr_frames; /* PT pages + metadata arrays owned (atomic) */
	_Alignas(64) uint32_t nr_late;   /* slots in state 2 (atomic) */
	struct mm_flush_slot late[MM_FLUSH_SLOTS];
	struct mm_vma_space vma;  /* protocol "vma" only */
};

enum { MM_NEED_MARK, MM_NEED_UNMAP, MM_NEED_PROTECT, MM_NEED_TAKE };

/* A locking protocol: how a cursor acquires and drops its range, and how
 * removed PT pages are retired. Selected per address space at run time. */
struct mm_protocol {
	const char *name;   /* "rw", "adv" or "vma" */
	/* Acquire c->start..c->last of c->as; fill c->cover*. May create PT
	 * pages (adv). MM_OK or MM_ENOMEM (then nothing is held). */
	int (*lock)(struct mm_cursor *c);
	/* Drop every lock the cursor holds (after its flush). */
	void (*unlock)(struct mm_cursor *c);
	/* A PT page was created under the cursor (adv: locked at birth). */
	void (*born)(struct mm_cursor *c, struct mm_page *pg);
	/* A PT page was unlinked from its parent under the cursor (adv: mark
	 * its subtree stale, unlock). Freed later by mm_release. */
	void (*unlinked)(struct mm_cursor *c, struct mm_page *pg);
	/* After the TLB flush: free the PT page (adv: after an RCU grace period). */
	void (*retire)(struct mm_as *as, struct mm_page *pg);
	/* Operations of a protocol that keeps statuses outside the page table
	 * (the two-level baseline, mm/baseline): each public entry point of the
	 * same name (cursor.h, mm_wf_check) hands over to its hook when the
	 * protocol has one; NULL (rw, adv): statuses live in the page table and
	 * the core's own page-table operation runs. Contracts as there. */
	int (*query)(struct mm_cursor *c, uint64_t va, struct mm_info *out);
	int (*mark)(struct mm_cursor *c, uint64_t va, uint64_t len, const struct mm_status *st);
	int (*unmap)(struct mm_cursor *c, uint64_t va, uint64_t len);
	int (*protect)(struct mm_cursor *c, uint64_t va, uint64_t len, unsigned prot);
	int (*take)(struct mm_cursor *c, uint64_t va, struct mm_info *out);
	int (*next_used)(struct mm_cursor *c, uint64_t va, uint64_t *next, uint64_t *skipped);
	int (*wf_check)(struct mm_as *as, const char **why);
	/* The dry run of a mark (MM_NEED_MARK, st), unmap, protect (prot) or
	 * take for a transaction's plan (cursor.h): the operation's error, or
	 * MM_OK with *frames (page table) and *nodes (the protocol's own).
	 * With it, mm_txn_need_max counts two nodes more per operation. */
	int (*need)(struct mm_cursor *c, unsigned op, uint64_t va, uint64_t len,
		    const struct mm_status *st, unsigned prot, unsigned *frames, unsigned *nodes);
	/* Have `nodes` nodes ready for the operations to come, their frames
	 * drawn and charged as a reservation's. MM_OK or MM_ENOMEM. */
	int (*reserve_nodes)(struct mm_cursor *c, unsigned nodes);
	/* mm_release: may c's covering page, left empty, be removed (which
	 * takes a second transaction over its parent's entry)? NULL: yes. */
	bool (*prune_cover)(struct mm_cursor *c);
	/* A commit flushes before the locks drop, never late, as with
	 * mm_as.flush_locked on every address space of the protocol. */
	bool flush_under_locks;
	/* mm_txn_finish leaves the PT pages a transaction emptied: the
	 * protocol decides where tables go (prune_cover). */
	bool keeps_tables;
};

/* A retire hook for protocols whose walkers run lock-free (adv, and the
 * test-only nolock of tests/host): frees pg (and its metadata array) only
 * after an RCU grace period of as's platform. Needs pg unlinked and flushed. */
void mm_pt_retire_rcu(struct mm_as *as, struct mm_page *pg);

extern const struct mm_protocol mm_proto_rw;
extern const struct mm_protocol mm_proto_adv;
/* The two-level baseline (mm/baseline): a VMA tree under mmap_lock, faults
 * under per-VMA locks, page tables under per-PT-page locks, the way Linux
 * 6.13 does it. Not CortenMM; here to compare against. */
extern const struct mm_protocol mm_proto_vma;
/* "rw" / "adv" / "vma" -> table, NULL if unknown. */
const struct mm_protocol *mm_proto_by_name(const char *name);

/* Create an empty address space whose transactions are confined to
 * [lo, last] (page aligned lo, last+1 page aligned or last = ~0). Allocates
 * the root. MM_OK, MM_ENOMEM, MM_EALIGN, MM_ERANGE (last < lo, or no one
 * root holds the range: one root, lo and last must be canonical and in the
 * same half; split_roots, inside one half), MM_EINVAL (the arch needs
 * break-before-make and plat has no tlb_flush_bbm). */
int mm_as_init(struct mm_as *as, const struct pt_arch *arch,
	       const struct mm_protocol *proto, const struct mm_platform *plat,
	       uint64_t lo, uint64_t last, void *ctx);

/* Kernel AS: allocate an empty table for every root entry of
 * [as->lo, as->last] that is still empty, so the root's kernel half never
 * changes again and can be shared. Call before the first mm_as_share_kernel.
 * From then on an operation that would rewrite a root entry (unmap or mark
 * of a whole root entry, a leaf at root level) fails with MM_EINVAL, and
 * root-level tables are never removed. MM_OK or MM_ENOMEM (then nothing
 * changed). With split_roots: MM_OK and nothing to do, since every AS runs
 * with the kernel root itself (kas is not sealed). */
int mm_as_kernel_seal(struct mm_as *kas);

/* Copy the root entries of kas's range into as's root (which must not use
 * them). No transaction on `as` may touch that range. With split_roots:
 * note kas's root as the one that translates the kernel half of `as`. */
void mm_as_share_kernel(struct mm_as *as, const struct mm_as *kas);

/* Unmap everything in [as->lo, as->last], release all PT pages (after
 * flush and grace period) and the root. No cursor may be live, and for a
 * sealed kernel AS no address space may share it any more. */
void mm_as_destroy(struct mm_as *as);

static inline uint64_t mm_as_root_pa(const struct mm_as *as) { return as->root_pa; }

/* The root a hardware walk of va starts from while `as` runs: its own
 * root; with split_roots, for a kernel-half va of a user AS, the kernel
 * root (0 before mm_as_share_kernel), and 0 for a va in no half or in the
 * user half of the kernel AS (no root of `as` holds it). */
static inline uint64_t mm_as_root_pa_for(const struct mm_as *as, uint64_t va)
{
	const struct pt_arch *a = as->arch;
	if (!a->split_roots)
		return as->root_pa;
	bool kernel_as = as->root_base == a->kernel_lo;
	if (va >= a->kernel_lo && va <= a->kernel_last)
		return kernel_as ? as->root_pa : as->kernel_root_pa;
	if (va >= a->user_lo && va <= a->user_last && !kernel_as)
		return as->root_pa;
	return 0;
}

/* Well-formedness check of the whole tree under [as->lo, as->last]. Needs
 * exclusive use (no live cursor). Checks: levels, nr_live counts, metadata
 * consistent with entries, leaves only where the arch allows, aligned
 * addresses, no PT page reachable twice, no stale or locked page reachable,
 * and the count of PT pages + metadata arrays equals as->nr_frames.
 * MM_OK, or MM_EINVAL with a reason in *why (static string). */
int mm_wf_check(struct mm_as *as, const char **why);

/* Memory the tree uses (same walk and preconditions as mm_wf_check). */
struct mm_stats {
	uint64_t pt_pages;     /* PT pages reachable, root included */
	uint64_t meta_arrays;  /* per-PTE metadata arrays among them */
	uint64_t leaves;       /* present leaf entries (any size) */
	uint64_t statuses;     /* non-present entries carrying a status */
	uint64_t vmas;         /* protocol "vma": VMAs in the tree */
	uint64_t vma_frames;   /* protocol "vma": frames holding VMA nodes */
};
void mm_as_stats(struct mm_as *as, struct mm_stats *st);

#endif
