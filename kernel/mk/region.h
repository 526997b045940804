/* Region transactions (SYS_REGION_TXN) and the conversions between the
 * region ABI (<patina/cap.h>) and the mm core that clone and the fault
 * path share.
 *
 * A transaction applies every op or none (region.c): decode checks the
 * caller's caps (region_decode.c), the plan checks every op against the
 * locked range as the earlier ops of the same call will have left it and
 * reserves every frame the ops may take (region_plan.c), and only then do
 * the ops run, in order, with nothing left that can refuse. */
#ifndef MK_REGION_H
#define MK_REGION_H

#include "mk.h"

struct mobj_map;

/* One transaction between decode and commit. */
struct txn {
	struct task *t;            /* the caller */
	struct task *target;       /* whose address space the region cap names */
	unsigned rights;           /* the region cap's */
	uint64_t lo, hi;           /* the locked range */
	struct region_op *ops;
	long n;
	long bad;                  /* the op that refused, or -1 */
	unsigned evicts, maps;     /* EVICT and MAP ops */
	unsigned must_plan;        /* ops that need the plan even alone: device MAPs (many
	                            * pages), PROTECTs with PROT_X (no device page executable) */
	uint64_t frame_pa[REGION_MAX_OPS];  /* MAP: the frame, referenced from decode */
	uint8_t counted[REGION_MAX_OPS];    /* MAP: its map count taken at decode */
	uint8_t limits[REGION_MAX_OPS];     /* MAP: MM_MAP_* limits from the frame or MMIO cap */
	uint64_t dev_pa[REGION_MAX_OPS];    /* MAP of an MMIO cap: where the window starts */
	uint64_t dev_len[REGION_MAX_OPS];   /* ... and the bytes it maps; 0 for a frame's MAP */
	uint8_t charged[REGION_MAX_OPS];    /* EVICT: the frame's charge moves to t */
	struct cchunk *spare[REGION_MAX_OPS];  /* EVICT: a CSpace chunk for its slot */
	unsigned frames;           /* plan: frames reserved for the ops */
	struct mobj_map *rec[REGION_MAX_OPS];  /* MAP_OBJ: its mapping record (mobj.h) */
	unsigned recs;             /* decode: MAP_OBJ records reserved (0: rec[] all NULL) */
};

/* Decode (region_decode.c). Needs: no lock held. Checks the region cap,
 * the range and every op's form, rights and caps (MAP: the frame cap and
 * its rights, counting the map; EVICT: an empty slot and its chunk), and
 * holds what the ops need (frames, the target's address space) until
 * txn_undecode. 0, or -E_* with x->bad naming the op (or -1) and nothing
 * held. */
int txn_decode(struct txn *x, long slot);
/* Give back what txn_decode held. */
void txn_undecode(struct txn *x);

/* Plan (region_plan.c). Needs: c holds [x->lo, x->hi) of the target. Checks
 * every op against the range as the ops before it will leave it, charges
 * the frames evictions take, reserves the frames the ops' tables take. 0,
 * or -E_* with x->bad set and nothing reserved or charged. */
int txn_plan(struct txn *x, struct mm_cursor *c);
/* Give back what txn_plan charged for evictions (the perform failed). */
void txn_unplan(struct txn *x);

/* --- ABI <-> mm --- (region_abi.c; the two on every map inline) */
/* PROT_R/W/X as MM_PROT_* (with MM_PROT_U), and back. */
static inline unsigned prot_to_mm(uint32_t p)
{
	return MM_PROT_U | ((p & PROT_R) ? MM_PROT_R : 0) | ((p & PROT_W) ? MM_PROT_W : 0) |
	       ((p & PROT_X) ? MM_PROT_X : 0);
}
uint32_t prot_from_mm(unsigned prot);
/* The PROT_R/W/X a region or frame cap's R_READ/R_WRITE/R_EXEC allow. */
uint32_t prot_of_rights(unsigned rights);
/* An mm error as the ABI's: out of frames because of the task's quota
 * (the charge hook marked the thread) is E_QUOTA, not E_NOMEM. */
int err_from_mm_slow(int e);
static inline int err_from_mm(int e)
{
	return e == MM_OK ? 0 : err_from_mm_slow(e);
}
/* A query's result as the ABI reports it: kind, PROT_* | QF_*, tag or
 * slot; never a physical address. */
void report_info(struct region_op *op, const struct mm_info *info);
/* Can the frame of the page info describes leave its mapping for another
 * holder (ROP_EVICT, SYS_REGION_SUPPLY)? 0 for a 4 KiB mapping (not COW)
 * whose frame nothing else references; else -E_NOENT (not mapped, or
 * COW), -E_INVAL (part of a huge leaf, or a device's registers),
 * -E_BUSY (referenced elsewhere). */
int frame_can_leave(const struct mm_info *info);
/* The span of one of the ABI's entries at `level` (4 KiB at level 1). */
static inline uint64_t level_span(unsigned level)
{
	return PAGE_SIZE << (9 * (level - 1));
}

/* What op i gives the mm core, one definition for the plan's dry runs
 * and the perform: a MAP's MM_MAP_* flags, the R/W/X (no U) an op grants
 * a page, and the status a MARK, MARK_INVALID, MARK_PAGER or
 * MARK_SWAPPED leaves (a MARK_SWAPPED with no prot keeps none). The
 * kind is the caller's constant, so each case folds to what it needs. */
static inline unsigned txn_map_flags(const struct txn *x, long i)
{
	return ((x->ops[i].prot & PROT_COW) ? MM_MAP_COW : 0) | x->limits[i];
}
/* The permissions of a device MAP's pages: memory type device where the
 * target's table can say so; elsewhere the platform's physical memory
 * attributes make the window I/O. */
static inline unsigned txn_dev_prot(const struct txn *x, uint32_t prot)
{
	unsigned p = prot_to_mm(prot);
	if (x->target->as.arch->mem_types & (1u << MM_MT_DEVICE))
		p |= MM_PROT_DEVICE;
	return p;
}
static inline unsigned txn_page_prot(uint32_t prot)
{
	return prot_to_mm(prot) & ~MM_PROT_U;
}
static inline void txn_mark_status(const struct region_op *op, unsigned kind,
				   struct mm_status *st)
{
	st->kind = (uint8_t)kind;
	st->prot = (uint8_t)(kind != MM_INVALID && op->prot ? txn_page_prot(op->prot) : 0);
	st->dev = 0;
	st->arg = kind == MM_PAGER || kind == MM_SWAPPED ? (uint64_t)op->arg : 0;
}
/* The status ROP_MAP_OBJ op i leaves on its pages (mobj.h). */
void txn_obj_status(const struct txn *x, long i, struct mm_status *st);

/* The mm status kind a mark op leaves (op is one of the four). */
#define TXN_MARK_KIND(opc) ((opc) == ROP_MARK ? MM_RESERVED : (opc) == ROP_MARK_PAGER ? MM_PAGER : \
			    (opc) == ROP_MARK_SWAPPED ? MM_SWAPPED : MM_INVALID)

#endif
