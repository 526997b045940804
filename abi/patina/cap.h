/* Capability types, rights and the region-transaction layout. */
#ifndef PATINA_CAP_H
#define PATINA_CAP_H

#include <stdint.h>

enum cap_type {
	CAP_NULL = 0,
	CAP_TASK,       /* a task and its address space: spawn threads, kill, wait */
	CAP_THREAD,
	CAP_ENDPOINT,
	CAP_REPLY,
	CAP_FRAME,      /* one 4 KiB physical frame */
	CAP_REGION,     /* address space + [lo, hi) + rights */
	CAP_KERNEL,     /* boot authority (init only): spawn from modules, debug; never leaves its task */
	CAP_CONSOLE,    /* the console: write (puts) and read (getc) */
	CAP_MMIO,       /* a device's register window (patina/device.h): map it, and with R_DMA
	                 * learn the physical address of frames for the device's DMA */
	CAP_IRQ,        /* one interrupt line of a device (patina/device.h): bind, acknowledge */
	CAP_MOBJ,       /* a memory object (patina/mobj.h): pages named by offset, shared by its mappings */
	CAP_NTYPES
};

/* Rights. Endpoint: SEND/RECV/GRANT. Frame: READ/WRITE (what a mapping may
 * get), SHARE (map it while it is mapped elsewhere). Region: QUERY/MAP/
 * MARK/UNMAP/PROTECT for the ops, and READ/WRITE/EXEC: the most a page of
 * the range may be given by MAP, MARK or PROTECT. Task/thread: CONTROL. Console: WRITE
 * (puts), READ (getc). Kernel: CONTROL (spawn from a boot module), READ
 * (debug queries: counters, harts, command line), WRITE (run in-kernel
 * tests and commands). MMIO: READ/WRITE (what a mapping of the window may
 * get), DMA (SYS_DMA_ADDR). IRQ: CONTROL (bind, acknowledge). MMIO and
 * IRQ: GRANT (the cap may leave its task: IPC transfer, spawn's give).
 * Reply caps carry no rights and cannot be copied,
 * minted or transferred; kernel caps can be copied and minted inside their
 * task but never transferred (IPC, spawn). */
#define R_READ    0x01u
#define R_WRITE   0x02u
#define R_SEND    0x04u
#define R_RECV    0x08u
#define R_GRANT   0x10u   /* may transfer a cap through this endpoint */
#define R_QUERY   0x20u
#define R_MAP     0x40u
#define R_MARK    0x80u
#define R_UNMAP   0x100u
#define R_CONTROL 0x200u
#define R_PROTECT 0x400u  /* region: ROP_PROTECT, ROP_AGE, ROP_CLEAN */
#define R_EXEC    0x800u  /* region: pages may be made executable (with R_READ/R_WRITE: readable/writable) */
#define R_SHARE   0x1000u /* frame: may be mapped while it is mapped elsewhere */
#define R_DMA     0x2000u /* mmio: SYS_DMA_ADDR (physical addresses of frames, for the device) */
#define R_ALL     0x3fffu

struct cap_info {
	uint32_t type;
	uint32_t rights;
	uint64_t badge;       /* endpoint: badge; task: the task's CSpace extent (below) */
	uint64_t lo, hi;      /* region: range; mmio: the register window (physical);
	                       * irq: lo the line; task: frames in use (data + PT pages,
	                       * CSpace chunks), frame quota */
	uint64_t objects;     /* task: the object quota it has left to use or carve, as a
	                       * QUOTA() word (threads, endpoints, tasks; threads at most
	                       * QUOTA_THREADS_MAX, the others 255) */
};

/* A task's CSpace (cap table): slots 0 .. CSPACE_MAX_SLOTS - 1; any other
 * number is -E_BADCAP. The first CSPACE_FIXED_SLOTS are part of every task
 * and cost nothing. The others come in chunks of CSPACE_CHUNK_SLOTS
 * (slots CSPACE_FIXED_SLOTS + k * CSPACE_CHUNK_SLOTS onwards), each one
 * 4 KiB frame charged to the task's frame quota. A chunk is added when a
 * slot in it is first named as the destination of a call that puts a cap
 * there (copy, mint, create, spawn, frame alloc, reply save, ROP_EVICT,
 * and the receive slot of SYS_RECV / SYS_REPLY_RECV), once that call's
 * other checks passed; if it cannot be had the call fails with -E_QUOTA
 * (frame quota) or -E_NOMEM (no memory) and nothing changed. A slot in a
 * chunk not added yet is empty (lookups give -E_BADCAP). Chunks stay until
 * the task is destroyed, which gives their frames and charges back.
 * cap_info on a task cap reports in `badge` that task's extent: every slot
 * at or above it is empty (CSPACE_FIXED_SLOTS until a chunk is added, then
 * the end of the highest chunk), so a scan of a CSpace stops there. */
#define CSPACE_MAX_SLOTS   16384
#define CSPACE_FIXED_SLOTS 64
#define CSPACE_CHUNK_SLOTS 32
/* The slots a new task starts with. */
#define SLOT_SELF_TASK 0
#define SLOT_SELF_AS   1      /* region cap over the task's whole user range */
#define SLOT_KERNEL    2      /* init at boot; a child its parent hands one (spawn_ext) */
#define SLOT_SELF_THREAD 3
#define SLOT_GIVEN     4      /* the cap a parent hands over at spawn */
#define SLOT_CONSOLE   5      /* init at boot; a child its parent hands one (spawn_ext) */
#define SLOT_FIRST_FREE 6

/* Region transaction: one syscall carries a list of these. */
enum region_opcode {
	ROP_QUERY = 1,   /* va: result kind in out_kind, prot in out_prot */
	ROP_MAP,         /* va, arg = frame slot, prot (PROT_*): map the frame; arg = an MMIO cap:
	                  * map len bytes (0: all) of its window from its start as device
	                  * memory (patina/device.h) */
	ROP_MARK,        /* va, len, prot: mark reserved (anonymous memory, filled on fault) */
	ROP_UNMAP,       /* va, len */
	ROP_MARK_INVALID,/* va, len: back to nothing */
	ROP_MARK_PAGER,  /* va, len, prot, arg = tag (< 2^40): pager-managed; faults go to the pager */
	ROP_MARK_SWAPPED,/* va, len, arg = swap slot (< 2^40): evicted; faults go to the pager */
	ROP_PROTECT,     /* va, len, prot: new permissions of mapped, COW, reserved and pager pages
	                  * (others untouched); a downgrade is flushed from every hart before return;
	                  * E_PERM if it would make a QF_NOWRITE mapping writable */
	ROP_AGE,         /* va: like QUERY, then clears the accessed bit (R_QUERY | R_PROTECT) */
	ROP_EVICT,       /* va, arg = empty slot of the caller: unmap the page and put its frame
	                  * there as a frame cap (READ|WRITE|SHARE, less what the mapping's
	                  * QF_NOWRITE / QF_NOSHARE limits deny); out_prot has QF_DIRTY if it was
	                  * written; the frame's charge moves to the caller (R_UNMAP) */
	ROP_CLEAN,       /* va, len: clear the dirty bit of every mapped and COW page there,
	                  * which stay mapped with their kind, permissions and accessed bit;
	                  * out_prot = QF_DIRTY if any of them was dirty. A dirty huge page
	                  * cut by the range is split (the plan reserves its tables: E_NOMEM /
	                  * E_QUOTA); the pieces outside stay dirty. The cleaned pages are
	                  * flushed from every hart before return, so the next write through
	                  * any hart marks the page dirty again (R_PROTECT) */
	ROP_MAP_OBJ,     /* va, len, prot, arg = ROP_OBJ_ARG(object slot, first page): map
	                  * len bytes of a memory object (patina/mobj.h) from that page;
	                  * pages are found on fault (kind RK_OBJECT until then). The
	                  * object cap needs R_MAP and the rights prot needs (R_MAP) */
};
#define PROT_R 1u
#define PROT_W 2u
#define PROT_X 4u
#define PROT_COW 8u   /* ROP_MAP: copy-on-write (writes get a private copy) */
/* W^X: no user mapping or reservation is both writable and executable
 * (ROP_MAP and ROP_MARK with PROT_W | PROT_X fail with E_INVAL). */

/* out_prot flags of ROP_QUERY / ROP_AGE / ROP_EVICT (mapped and COW pages). */
#define QF_ACCESSED 0x100u
#define QF_DIRTY    0x200u
/* The mapping's limits, from the frame cap that made it: it can never be
 * made writable (the cap had no R_WRITE), and its frame is not shared
 * into another address space by clone (the cap had no R_SHARE). */
#define QF_NOWRITE  0x400u
#define QF_NOSHARE  0x800u

/* Status kinds a query reports (same numbers as the mm core's). */
enum region_kind { RK_INVALID, RK_RESERVED, RK_MAPPED, RK_SWAPPED, RK_PAGER, RK_COW,
		   RK_OBJECT /* a memory object's page not mapped here yet: tag = its offset */ };

struct region_op {
	uint32_t op;        /* ROP_* */
	uint32_t prot;      /* PROT_* */
	uint64_t va, len;
	int64_t arg;        /* ROP_MAP: frame slot */
	int64_t result;     /* out: 0 or -E_* */
	uint64_t out_kind, out_prot;  /* ROP_QUERY, ROP_AGE: kind; PROT_* | QF_* */
	uint64_t out_tag;   /* pager tag / swap slot (0 otherwise); never a physical address */
};
#define REGION_MAX_OPS 16
/* SYS_REGION_TXN applies every op or none. It returns the number of ops
 * (each op's result 0) or the -E_* of the op that refused; that op's
 * result is the same -E_*, every other op's ROP_NOT_DONE (and all of them
 * ROP_NOT_DONE when the call itself was refused: cap, range, count). */
#define ROP_NOT_DONE 1

/* SYS_REGION_BITMAP(region, lo, hi, buf, flags): one bit per 4 KiB page of
 * [lo, hi) in each of three bitmaps written to buf, one after the other,
 * each REGION_BITMAP_WORDS(lo, hi) 64-bit words long: resident (mapped or
 * COW), accessed, dirty (of a huge page: every page of it inside the
 * range). Page lo + i * 4096 is bit i % 64 of word i / 64; bits past the
 * last page are 0. Needs R_QUERY on the region cap; flags must be 0.
 * Returns the number of resident pages, or -E_INVAL (lo, hi not page
 * aligned, lo >= hi, flags), -E_RANGE ([lo, hi) outside the cap, or more
 * than REGION_BITMAP_MAX_PAGES pages), -E_FAULT (buf not 8-byte aligned
 * writable user memory: checked as a range first; a copy that faults part way leaves
 * the chunks before it written), -E_PERM (no R_QUERY), -E_BADCAP, -E_NOMEM.
 * The range is read in chunks of REGION_BITMAP_CHUNK pages, each under one
 * lock of its range (each chunk is one atomic snapshot; the whole is not:
 * a page may be touched between two chunks). Changes nothing. */
#define REGION_BITMAP_MAX_PAGES (1ul << 18)
#define REGION_BITMAP_CHUNK     8192ul
#define REGION_BITMAP_WORDS(lo, hi) ((((hi) - (lo)) / 4096 + 63) / 64)

/* SYS_REGION_SUPPLY moves up to this many pages in one call (a 2 MiB
 * block). The source pages (region cap with R_UNMAP over the caller's own
 * space) must each be a 4 KiB mapping whose frame nothing else references
 * (E_BUSY); not mapped or COW: E_NOENT; huge: E_INVAL (as ROP_EVICT).
 * The destination pages (region cap with R_MAP and the page rights prot
 * needs) must not be mapped (else E_EXIST): pager-managed, swapped,
 * reserved or invalid, a status the mapping replaces. All or
 * nothing: on success the source pages are invalid and the destination
 * maps the same frames with prot (the limits a frame cap gave a mapping
 * stay with the frame; a NOWRITE frame cannot be supplied writable:
 * E_PERM), their quota charge moved to the destination's task; 512
 * physically contiguous frames at a 2 MiB-aligned destination become one
 * 2 MiB leaf. A refused supply leaves both ranges as they were. */
#define SUPPLY_MAX_PAGES 512

#endif
