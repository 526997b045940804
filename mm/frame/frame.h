/* Physical frame allocator (kernel only): 4 KiB frames from the RAM the DTB
 * reports, minus the kernel image, the DTB and every reserved region.
 *
 * Structure: a global pool (one bitmap per RAM region, under one spinlock)
 * and a per-hart magazine of up to FRAME_MAG_SIZE frames that absorbs most
 * alloc/free traffic without the lock. A second bitmap records which frames
 * are free (pool or magazine); it is updated with atomic bit operations and
 * is what catches double frees and corrupt hand-outs.
 *
 * Frames are addressed by physical address; reach their contents through
 * phys_to_virt() (memlayout.h). */
#ifndef MM_FRAME_H
#define MM_FRAME_H

#include <stdint.h>
#include "memlayout.h"

#define FRAME_SIZE        PAGE_SIZE
#define FRAME_MAG_SIZE    32
#define FRAME_MAG_BATCH   16
#define FRAME_MAX_REGIONS 32

/* Allocation flags. */
#define FRAME_ZERO  0x1u   /* fill the frame with zeros before returning it */

struct frame_magazine {
	uint32_t count;
	paddr_t frames[FRAME_MAG_SIZE];
};

/*
 * Hand the allocator the free physical ranges (already excluding the kernel,
 * the DTB and reserved memory). Unaligned edges are trimmed to whole frames;
 * each range's bitmaps and a zeroed array of `desc_size`-byte per-frame
 * descriptors (see frame_desc; 0 for none) are carved from the range's own
 * first frames. Everything is kept by physical address, so the allocator
 * works on either side of the phys_to_virt switch (memlayout.h).
 * Needs: called once on the boot hart before any other allocator call;
 * desc_size a multiple of 8.
 * Returns 0, or -E_INVAL if called twice, with a bad desc_size or with more
 * than FRAME_MAX_REGIONS usable ranges (nothing is set up then).
 */
int frame_init(const struct phys_range *ranges, int n, uint32_t desc_size);

/* The descriptor of the managed frame containing pa (desc_size bytes,
 * zeroed at init, owned by whoever uses the frame), or NULL if pa is not
 * managed or there are no descriptors. */
void *frame_desc(paddr_t pa);

/*
 * Allocate one frame. Returns 0 and its physical address in *pa, or -E_NOMEM
 * when the global pool and this hart's magazine are empty (frames cached by
 * other harts' magazines are not stolen). Any context; takes the pool lock
 * only to refill the magazine.
 */
int frame_alloc(unsigned flags, paddr_t *pa);

/*
 * Allocate n physically contiguous frames from the global pool (frames in
 * magazines are not considered), zeroed. Returns 0 and the first frame's
 * address in *pa, -E_INVAL for n == 0, or -E_NOMEM when no run of n free
 * frames is in the pool (nothing changes then). Each frame is returned
 * with frame_free. Any context; holds the pool lock while it scans, so
 * meant for boot-time and other rare allocations.
 */
int frame_alloc_run(uint64_t n, paddr_t *pa);

/*
 * frame_alloc_run for a run whose first frame's physical address is a
 * multiple of n frames (n a power of two): what a huge leaf of that size
 * needs. Same results; the scan looks at aligned runs only.
 */
int frame_alloc_run_aligned(uint64_t n, paddr_t *pa);

/*
 * Return a frame. Returns 0, or -E_INVAL if pa is not frame aligned, not a
 * frame this allocator manages, or already free (double free); in those
 * cases nothing changes. Any context.
 */
int frame_free(paddr_t pa);

/* Free frames now (pool + all magazines); exact when no hart is
 * allocating concurrently. */
uint64_t frame_free_count(void);
/* Frames under management (allocated or free). */
uint64_t frame_total_count(void);
/* 1 if pa lies in a managed frame (allocated or free). */
int frame_is_managed(paddr_t pa);
/* 1 if the managed frame at pa is currently free. */
int frame_is_free(paddr_t pa);

/* The managed regions (after the metadata was carved off), for tests and
 * meminfo. Returns the number of regions; fills out[0..min(n,max)). */
int frame_regions(struct phys_range *out, int max);
/* Frames holding the allocator's bitmaps and the descriptor arrays. */
uint64_t frame_meta_count(void);

#endif
