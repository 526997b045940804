/* The platform table: everything the core needs from its environment.
 * Two implementations exist: the kernel's (kernel/) and the host test
 * platform on pthreads (tests/host/). The core calls nothing else: no libc,
 * no kernel headers.
 *
 * Physical memory: the core allocates only single 4 KiB frames (PT pages
 * and per-PTE metadata arrays) and names them by physical address. It
 * reaches their contents through phys_to_virt, and their descriptors
 * (struct mm_page, one per frame, indexed by PFN, storage owned by the
 * platform) through page_desc. */
#ifndef CORTENMM_PLATFORM_H
#define CORTENMM_PLATFORM_H

#include <stdint.h>
#include <stdbool.h>
#include <stddef.h>

#define MM_NOFRAME (~0ull)

/* Lock word, used by the core's default locks (mm_lock_*). 0 = free. */
typedef struct { uint32_t v; } mm_lock_t;

struct mm_rcu_head {
	struct mm_rcu_head *next;
	void (*fn)(struct mm_rcu_head *);
};

/* Descriptor of one physical frame. The platform provides an array of them
 * indexed by PFN, zero-initialised; the core owns the fields of frames it
 * uses as PT pages or metadata arrays. Exactly one 64-byte cache line on
 * 64-bit machines: in an array that starts on a line boundary, taking one
 * PT page's lock never writes the line a walk reads a neighbouring page's
 * pa from (at 72 bytes, two descriptors shared a line, and every walk
 * through an upper table fetched that line from whichever thread last
 * locked the frame next to it). */
struct mm_page {
	mm_lock_t lock;          /* rw: rwlock word; adv: spinlock word */
	uint32_t flags;          /* MM_PG_* (STALE read lock-free, atomically) */
	uint16_t level;          /* PT page: its level (1 = leaf table); 0 otherwise */
	uint16_t nr_live;        /* entries that are present or carry a status */
	uint32_t wf_mark;        /* well-formedness checker's visit stamp */
	uint64_t pa;             /* this frame's physical address */
	uint64_t meta_pa;        /* per-PTE metadata array, or 0 when none yet */
	struct mm_page *next;    /* cursor's list of removed PT pages */
	struct mm_rcu_head rcu;  /* deferred free after a grace period */
	const struct mm_platform *plat; /* who frees it (set while deferred) */
};
_Static_assert(sizeof(void *) != 8 || sizeof(struct mm_page) == 64,
	       "struct mm_page must fill exactly one cache line");
#define MM_PG_PT    0x01u
#define MM_PG_STALE 0x02u

/* Per-hart pool of pre-zeroed 4 KiB frames. The core refills it at the
 * start of mm_lock (before any lock) and draws PT pages and metadata
 * arrays from it, falling back to pt_alloc when it runs dry. */
#define MM_POOL_SIZE 32
struct mm_pool {
	unsigned n;
	uint64_t pa[MM_POOL_SIZE];
};

struct mm_as;

/* The core's kinds of lock, for the platform's optional lock_stat hook. */
enum mm_lock_kind {
	MM_LK_SPIN,         /* a PT page's spin lock (adv) */
	MM_LK_READ,         /* a PT page's lock, for reading (rw) */
	MM_LK_WRITE,        /* a PT page's lock, for writing (rw) */
	MM_LK_MMAP_READ,    /* the baseline's mmap_lock, for reading */
	MM_LK_MMAP_WRITE,   /* the baseline's mmap_lock, for writing or by upgrade */
	MM_LK_PTL,          /* the baseline's split page-table lock */
	MM_LK_KINDS
};

struct mm_platform {
	/* --- memory --- */
	/* One 4 KiB frame for a PT page or metadata array; MM_NOFRAME when out
	 * of memory. Contents need not be zero (the core zeroes). May be called
	 * with core locks held: must not sleep. */
	uint64_t (*pt_alloc)(void);
	/* Optional (NULL: no limit). Before a transaction draws n frames for
	 * PT pages or metadata arrays of `as`, charge them to whoever pays for
	 * `as`: 0, or non-zero to refuse (the operation then fails with
	 * MM_ENOMEM and changes nothing). Every frame charged is uncharged
	 * when the transaction gives back its reservation (used frames then
	 * count in as->nr_frames, unused ones went back to the pool). May be
	 * called with core locks held: must not sleep. */
	int (*frames_charge)(struct mm_as *as, unsigned n);
	void (*frames_uncharge)(struct mm_as *as, unsigned n);
	/* Give back a frame from pt_alloc. Called after RCU/TLB deferral. */
	void (*pt_free)(uint64_t pa);
	/* The kernel-virtual address of physical pa (PT/metadata frames). */
	void *(*phys_to_virt)(uint64_t pa);
	/* Descriptor of the frame containing pa (never NULL for pt_alloc frames). */
	struct mm_page *(*page_desc)(uint64_t pa);
	/* A data page of size 4 KiB << 9*(level-1) at pa stopped being mapped
	 * (unmap), after the TLB flush. The platform drops its reference. Huge
	 * mappings split by a partial unmap come back as smaller pieces. */
	void (*frame_release)(uint64_t pa, unsigned level);

	/* --- harts --- */
	/* This hart's pool; may be NULL (no pool: allocate on demand). The
	 * core calls it, and uses the pool, only between preempt_disable() and
	 * preempt_enable(), so the hart cannot change under it. */
	struct mm_pool *(*pool)(void);
	/* Spin-wait hint (cpu pause / sched_yield). */
	void (*relax)(void);

	/* --- locks: optional. NULL = the core's own atomics (mm/core/lock.c).
	 * spin_*: mutual exclusion; read_* / write_*: a readers-writer lock. In
	 * a kernel they must disable preemption while held. */
	void (*spin_lock)(mm_lock_t *);
	void (*spin_unlock)(mm_lock_t *);
	void (*read_lock)(mm_lock_t *);
	void (*read_unlock)(mm_lock_t *);
	void (*write_lock)(mm_lock_t *);
	void (*write_unlock)(mm_lock_t *);
	/* Preemption guard, taken around the core's own locks (when the lock
	 * hooks above are NULL) and around every use of the pool; may be NULL
	 * on the host. Must nest (a counter). */
	void (*preempt_disable)(void);
	void (*preempt_enable)(void);
	/* Optional (NULL: nothing counted). Called once per acquisition of a
	 * lock the core implements itself (its own locks when the hooks above
	 * are NULL, and the baseline's mmap_lock and page-table locks), right
	 * after it was taken, preemption off: kind (enum mm_lock_kind) and
	 * waited, 0 when the lock was free at the first try, else 1 + the
	 * relax() calls spent waiting for it. Lock hooks count their own
	 * acquisitions (mm/include/cortenmm/qlock.h returns waited for them).
	 * Must not take core locks. */
	void (*lock_stat)(unsigned kind, uint32_t waited);

	/* --- RCU --- */
	/* Read-side section (kernel: preemption off). adv walks under it. */
	void (*rcu_read_lock)(void);
	void (*rcu_read_unlock)(void);
	/* Call fn(head) once every hart has passed a quiescent state after
	 * this call. Must not allocate; head is embedded in struct mm_page. */
	void (*rcu_defer)(struct mm_rcu_head *head, void (*fn)(struct mm_rcu_head *));

	/* --- TLB --- */
	/* Entries in [start, end) of `as` were removed or downgraded. Return
	 * only when no hart can use the old translations any more (flush every
	 * hart that ran `as`; as->ctx is the platform's per-AS data, e.g. hart
	 * mask and ASID). Called by mm_release after it dropped the cursor's
	 * locks (a later transaction over the same addresses waits in mm_lock
	 * until this returned), or with the locks still held: mid-transaction
	 * when the cursor's batch of released frames fills, for protocol vma,
	 * with as->flush_locked, and when every late-flush slot is busy. A
	 * kernel must therefore flush by means that do not need the targets to
	 * take core locks (SBI RFENCE does; so does an IPI whose targets answer
	 * from their interrupt handler and while they spin on a core lock).
	 * "No hart can use them" may mean acknowledged rather than flushed: a
	 * hart that will flush before it makes any access through the old
	 * translations (it is in its interrupt handler, the flush comes before
	 * the return) counts. Such a platform must then hold the data frames
	 * (frame_release) and PT pages (pt_free) it is handed after this
	 * returns until every such hart has flushed: their TLBs may still name
	 * them. The kernel's user platform does so (kernel/shootdown.h). Data
	 * frames and PT pages are released only after this returns. */
	void (*tlb_flush)(struct mm_as *as, uint64_t start, uint64_t end);
	/* Break-before-make (needed when the arch sets needs_bbm; NULL
	 * otherwise is fine): the entries for [start, end) of `as` were just
	 * made invalid and are about to get a different translation. Return
	 * only when that flush has completed on every hart that may cache
	 * them, walk caches included: unlike tlb_flush it may not be
	 * deferred or acknowledged early. Same locking as tlb_flush; frees
	 * nothing. */
	void (*tlb_flush_bbm)(struct mm_as *as, uint64_t start, uint64_t end);

	/* --- diagnostics --- */
	/* Broken invariant inside the core: does not return. */
	void (*panic)(const char *msg);
};

#endif
