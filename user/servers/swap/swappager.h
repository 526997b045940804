/* The swap pager: pages one client's range against a small pool of
 * frames, evicting with a clock into a swap store of its own anonymous
 * memory. Built on libpager; each struct swappager is a pager of its own
 * (its endpoint, tables, store and scratch pages), so several can run in
 * one task, each served by its own thread (set them up from one thread:
 * slot_alloc is not thread safe). See docs/pagers.md, "The swap pager". */
#ifndef USER_SWAPPAGER_H
#define USER_SWAPPAGER_H

#include <stdint.h>
#include "pager.h"
#include "swapdisk.h"

/* Frames are taken from the client in batches: up to SP_EVICT victims in
 * one transaction (2 of its 16 ops each), and up to SP_BATCH free frames
 * at a time. */
#define SP_EVICT 8
#define SP_BATCH 24

struct swap_stats {
	unsigned long faults, zero, in, out, written, spurious, aged, killed, resident;
	unsigned long kept;               /* victims the store refused, left in the client */
	unsigned long over;               /* frames taken past `frames` because of that */
	uint64_t busy;                    /* timebase ticks spent serving faults */
	long first_err;                   /* why the first refused fault was refused */
	uint64_t err_offset;              /* and that fault, as libpager typed it */
	unsigned err_access, err_kind;
	uint64_t err_tag;
};

struct swappager {
	struct pager pg;                  /* pg.data is this struct */
	struct pager_client *client;      /* the one attached client, or NULL */
	unsigned long pages, frames;
	uint8_t *store;                   /* memory store: window page i at store + i * 4096 */
	struct swapdisk *disk;            /* or the disk store (then store is NULL) */
	uint32_t *ring;                   /* clock ring (room for every page): window page index
	                                   * of each resident page, positions 0 .. nalloc-1 */
	uint8_t *state;                   /* per window page: PS_* (swappager.c) */
	uint64_t meta_len;                /* ring and state, in one mapping */
	uint8_t *scratch;                 /* SP_BATCH scratch pages, then the anchor page */
	unsigned long nalloc;             /* frames allocated so far (ring positions in use) */
	unsigned long hand;
	/* Free frames: caps in fs[], free frame k mapped at scratch page k. */
	long fs[SP_BATCH];
	unsigned nfree, next;             /* free frames are next .. nfree-1 */
	uint32_t fpos[SP_BATCH], fidx[SP_BATCH];  /* ring position; page evicted from it */
	uint8_t fzero[SP_BATCH];          /* fresh from SYS_FRAME_ALLOC: already zero */
	unsigned mapped;                  /* scratch pages mapped: 0 .. mapped-1 */
	struct swap_stats st;
	void *owner;                      /* the program's own, for its pager_ops callbacks */
	struct pager_ops ops;             /* ours for faults and death, the program's message */
	void (*owner_gone)(struct pager *pg, struct pager_client *c, long status);
};

/* A swap pager for a window of `pages` pages that keeps `frames`
 * (2 <= frames <= pages <= 2^24) resident (more only while the store
 * refuses pages), with `more` as the program's own callbacks for message
 * and client_gone (called after the swap pager forgot the client); they
 * find the swap pager at pg->data. The store is `disk` (set up by the
 * caller, used for this window's pages: swapdisk_init with the same
 * pages) or, with disk NULL, memory reserved here (pages * 4 KiB, filled
 * only as pages are evicted). Reserves the tables. 0 or an error
 * (nothing made). */
long swappager_init(struct swappager *sp, unsigned long pages, unsigned long frames,
		    const struct pager_ops *more, void *owner, struct swapdisk *disk);
/* Page [base, base + pages * 4 KiB) of task `task` (R_CONTROL), read-write,
 * from now on. One client at a time (-E_EXIST); once it died another may
 * attach. The client or NULL with *err set. */
struct pager_client *swappager_attach(struct swappager *sp, long task, uint64_t base, long *err);
/* What it did so far; spurious, faults and killed count libpager's too. */
void swappager_stats(const struct swappager *sp, struct swap_stats *st);
/* Detach the client (its window unmapped: its resident frames freed),
 * free the store, the tables and the free frames, delete the endpoint. */
void swappager_fini(struct swappager *sp);

#endif
