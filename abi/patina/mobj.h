/* Memory objects: N pages named by page offset, shared by every mapping.
 *
 * An object is anonymous (a page is zero-filled on its first touch and
 * charged to the task that created the object) or backed by a pager (an
 * endpoint and that endpoint cap's badge, given at creation: a touch of a
 * page the object does not hold yet becomes a fault call on that endpoint,
 * status kind RK_OBJECT, and the pager fills the page with
 * SYS_MOBJ_SUPPLY). A range of an object is mapped into an address space
 * with the region op ROP_MAP_OBJ (patina/cap.h); every mapping of one
 * object page maps the same frame. See docs/pagers.md, "Memory objects".
 *
 * Rights of a CAP_MOBJ cap: R_MAP (ROP_MAP_OBJ), R_READ / R_WRITE /
 * R_EXEC (the most a mapping of it may get), R_CONTROL (SYS_MOBJ_SUPPLY,
 * SYS_MOBJ_OP). SYS_CAP_INFO on it: lo = its size in pages, hi = pages it
 * holds now, badge = its pager's badge (0: anonymous), objects = its
 * mappings (mapping records). */
#ifndef PATINA_MOBJ_H
#define PATINA_MOBJ_H

#include <stdint.h>

/* Largest object, in pages (64 MiB). */
#define MOBJ_MAX_PAGES (1u << 14)
/* Mappings of objects one address space may hold (ROP_MAP_OBJ beyond:
 * E_QUOTA); 256 objects and 1024 mappings exist at once in all. */
#define MOBJ_MAPS_PER_TASK 128

/* SYS_MOBJ_CREATE(npages, dst, ep, flags): a new object of npages pages in
 * the empty slot dst; ep = SLOT_NONE for an anonymous object, else an
 * endpoint cap with R_SEND whose badge the object's faults carry. The new
 * cap has R_MAP | R_READ | R_WRITE | R_EXEC | R_CONTROL. Its page index (8
 * bytes a page, whole frames) is charged to the caller's frame quota. 0,
 * or -E_INVAL (npages 0 or above MOBJ_MAX_PAGES; a flag bit not below, or
 * MOBJ_ASYNC without a pager), -E_BADCAP / -E_PERM (ep), -E_EXIST (dst
 * full), -E_QUOTA, -E_NOMEM (no object left). */
#define MOBJ_ASYNC 1u    /* its faults are asynchronous (below) */

/* ROP_MAP_OBJ's arg: the object cap's slot and the first object page. */
#define ROP_OBJ_ARG(slot, off) ((int64_t)(((uint64_t)(off) << 16) | ((uint64_t)(slot) & 0xffff)))
#define ROP_OBJ_SLOT(arg)      ((long)((uint64_t)(arg) & 0xffff))
#define ROP_OBJ_OFF(arg)       ((uint64_t)(arg) >> 16)

/* SYS_MOBJ_SUPPLY(mobj, offset, src region, src_va, npages): move npages
 * (1..SUPPLY_MAX_PAGES) mapped frames of the caller's own space (region
 * cap with R_UNMAP; each a 4 KiB mapping whose frame nothing else
 * references, as SYS_REGION_SUPPLY) into the object at page offset, no
 * copy. The object pages must be empty (-E_EXIST). The frames stay
 * charged as they were. 0, or -E_INVAL, -E_RANGE, -E_PERM (no R_CONTROL),
 * -E_BADCAP, -E_EXIST, -E_NOENT / -E_BUSY (a source page), with nothing
 * changed. */

/* SYS_MOBJ_OP(mobj, op, offset, npages): one of these over the object
 * pages [offset, offset + npages), reaching every mapping of them (each
 * mapping's translations are flushed from every hart before the call
 * returns). Needs R_CONTROL. 0, or -E_INVAL (op), -E_RANGE, -E_PERM,
 * -E_BADCAP with nothing changed; or -E_NOMEM / -E_QUOTA when a mapping's
 * page tables could not be changed (memory, or that task's quota): the
 * object and the mappings done before it are changed, and the op may be
 * repeated (each op is idempotent). */
enum mobj_op {
	MOBJ_INVALIDATE = 1,  /* every mapping loses its translation of the pages (they
	                       * stay in the object): the next access faults and maps
	                       * the object's page again */
	MOBJ_WRPROTECT,       /* every mapping maps the pages read-only, now and at
	                       * later faults, until MOBJ_UNPROTECT or MOBJ_DECOMMIT */
	MOBJ_UNPROTECT,       /* ends MOBJ_WRPROTECT (translations dropped: the next
	                       * access maps with the mapping's own permissions) */
	MOBJ_DECOMMIT,        /* the pages leave the object (their frames are freed once
	                       * no mapping holds them) and every mapping loses its
	                       * translation: the next access faults (anonymous:
	                       * a zero page; pager-backed: to the pager) */
	MOBJ_KILL,            /* refuse the asynchronous faults (MOBJ_ASYNC) on the pages:
	                       * every thread waiting on one wakes refused, its task ends
	                       * as on FAULT_KILL; -E_NOENT when no thread waits there */
};

/* A fault on an object page the object does not hold: the pager gets the
 * fault message of patina/pager.h with status kind RK_OBJECT, the object
 * page's offset as its tag (FAULT_STATUS_TAG), the mapping's permissions
 * as its prot, and the object's badge in a5.
 *
 * Of an object made with MOBJ_ASYNC no fault calls: the thread waits on
 * the object page, and the page's one notice goes on the object's
 * endpoint (however many threads of however many tasks wait there),
 * received like a SYS_SEND with no cap: badge the object's, w0 =
 * MSG_FAULT, w1 = the faulting address (of the first thread to wait),
 * w2 = the status word above, w3 = FA_* | thread id << 8. The wait ends
 * when the page changes: SYS_MOBJ_SUPPLY over it, MOBJ_UNPROTECT or
 * MOBJ_DECOMMIT over it (each waiting thread retries its access; after
 * a decommit the pager hears of the page again), the object's end (they
 * retry and fault as on any page of no object); MOBJ_KILL, or nobody
 * left to receive on the endpoint, ends their tasks (EXIT_TRAP). The
 * pager's own thread-level fault settings play no part. */

#endif
