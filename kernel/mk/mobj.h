/* Memory objects (patina/mobj.h): the objects and their page index
 * (mobj.c), their mappings, reverse map and range operations
 * (mobj_map.c).
 *
 * A mapping's pages that are not mapped yet carry, in their page-table
 * entries, the mm status SWAPPED with device MOBJ_DEV (no region op can
 * set that device) and an argument naming the object and the offset:
 * slot | gen | bias, where the object page of va is
 * (va / 4096 + bias) mod 2^20. One argument serves a whole mapping, so
 * one mark covers it (statuses stay at high levels where they can), and
 * a stale argument (object gone, slot reused) names no live object: the
 * generation does not match and the fault is nobody's.
 *
 * Locks: mobj_lock (class mobj, rank 55) over every object, index and
 * mapping record. It is taken under an mm cursor (the fault path, the
 * ops of a region transaction) and under mk_lock (cap copy and delete),
 * never the other way round; under it only frame references and quota
 * counts move (atomics, sd_park, frame_pool). No cursor is ever taken
 * under it and no endpoint lock (an object's endpoint reference is
 * dropped after it). */
#ifndef MK_MOBJ_H
#define MK_MOBJ_H

#include "mk.h"
#include <patina/mobj.h>

#define MOBJ_MAX       256        /* objects alive at once */
#define MOBJ_MAPS_MAX  1024       /* mapping records at once */
#define MOBJ_DEV       0x80u      /* the status device an object mapping's pages carry */
#define MOBJ_IDX_PER   (PAGE_SIZE / sizeof(uint64_t))
#define MOBJ_IDX_MAX   (MOBJ_MAX_PAGES / MOBJ_IDX_PER)
#define MOBJ_OFF_BITS  20
#define MOBJ_GEN_BITS  8
#define MOBJ_PG_WP     1ull       /* index entry: the page is write-protected */

struct mobj {
	uint32_t refs;            /* caps + mapping records; 0: the slot is free */
	uint32_t gen;             /* bumped when the slot is freed */
	uint32_t npages, present;
	struct task *creator;     /* charged for anonymous pages, while this incarnation lives */
	uint32_t creator_gen;
	uint32_t flags;           /* MOBJ_ASYNC */
	struct endpoint *ep;      /* the pager (NULL: anonymous) and its badge */
	uint64_t badge;
	uint64_t idx[MOBJ_IDX_MAX];   /* index frames: pa | MOBJ_PG_WP per page, 0 = absent */
};

/* A mapping: [va, va + npages pages) of t (that incarnation) maps the
 * object pages from off with prot (MM_PROT_R/W/X). A record holds an
 * object reference. t NULL: reserved by a transaction's decode, not yet
 * mapped, or detached (a zombie whose reference is dropped later). */
struct mobj_map {
	struct mobj *o;
	struct task *t;
	uint32_t tgen;
	uint32_t off, npages;
	uint8_t prot;
	uint8_t zombie;
	uint64_t va;
};

/* docs/performance.md ("Memory objects") and selftest mobj_cost count
 * a record as 40 bytes. */
_Static_assert(sizeof(struct mobj_map) == 40, "a mapping record is 40 bytes");
_Static_assert(sizeof(struct mobj) == 304, "an object is 304 bytes");

extern spinlock_t mobj_lock;
extern struct mobj mobjs[MOBJ_MAX];
extern struct mobj_map mobj_maps[MOBJ_MAPS_MAX];

/* mobj.c */
uint64_t *mobj_slot(struct mobj *o, uint32_t off);      /* mobj_lock held */
void mobj_get(struct mobj *o);                          /* caller holds a reference */
void mobj_put(struct mobj *o, int mk_held);             /* no cursor, no mobj_lock */
int mobj_fault(struct mm_cursor *c, struct task *t, uint64_t page, const struct mm_info *info,
	       int write, int exec, unsigned made, uint64_t *status);
int mobj_fault_mapped(struct task *t, uint64_t page, const struct mm_info *info, uint64_t *status);
int mobj_fault_deliver(uint64_t va, unsigned kind, uint64_t *status);
void mobj_counts(unsigned long *objs, unsigned long *maps, unsigned long *pages);
void mobj_cap_info(struct mobj *o, struct cap_info *ci);   /* SYS_CAP_INFO's fields */
long sys_mobj_create(struct task *t, uint64_t npages, long dst, long ep, uint64_t flags);
static inline uint64_t mobj_wait_word(uint32_t gen, uint64_t off)
{
	return (uint64_t)gen << 32 | off;      /* an object page's wait key (pagewait.h) */
}
long sys_mobj_supply(struct task *t, long slot, uint64_t off, long src, uint64_t sva,
		     uint64_t npages);

/* mobj_map.c */
static inline int mobj_status_is(const struct mm_info *info)
{
	return info->kind == MM_SWAPPED && info->dev == MOBJ_DEV;
}
uint64_t mobj_status_arg(const struct mobj *o, uint64_t va, uint32_t off);
void mobj_status_of(const struct mobj_map *r, struct mm_status *st);
struct mobj_map *mobj_map_reserve(struct mobj *o, struct task *t, int *err);  /* no lock */
void mobj_map_unreserve(struct mobj_map *r);            /* no cursor */
void mobj_map_attach(struct mobj_map *r, struct task *t, uint64_t va, uint64_t len,
		     uint32_t off, unsigned prot);       /* under the cursor over the range */
extern uint32_t mobj_task_recs[MAX_TASKS];   /* attached records per task slot (mobj_map.c) */
extern unsigned mobj_nzombies;               /* records waiting for mobj_zombies_reap */
void mobj_unmapped_records(struct task *t, uint64_t va, uint64_t len);
void mobj_zombies_reap_all(void);
/* Needs the cursor over [va, va + len) of t, just unmapped. Records of t
 * it covers are detached, ones it cuts at an end trimmed to what is left.
 * A task that maps no object pays one load, here, inline: every unmap and
 * mark calls it. */
static inline void mobj_unmapped(struct task *t, uint64_t va, uint64_t len)
{
	if (__atomic_load_n(&mobj_task_recs[t->id], __ATOMIC_RELAXED))
		mobj_unmapped_records(t, va, len);
}
/* No cursor, no mobj_lock: drop the records an unmap detached (one load
 * when there are none). */
static inline void mobj_zombies_reap(void)
{
	if (__atomic_load_n(&mobj_nzombies, __ATOMIC_RELAXED))
		mobj_zombies_reap_all();
}
void mobj_task_gone(struct task *t);                    /* reap: t's space torn down */
long sys_mobj_op(struct task *t, long slot, uint64_t op, uint64_t off, uint64_t npages);

#endif
