/* TLB and instruction-fetch fences on a set of other harts through SBI
 * RFENCE, one call per 64-hart-id window (hartmask.h). */
#ifndef KERNEL_REMOTE_FENCE_H
#define KERNEL_REMOTE_FENCE_H

#include <stdint.h>
#include "hartmask.h"

#define REMOTE_NO_ASID (-1L)

/*
 * sfence.vma of [start, start + size) (size -1: everything), for `asid`
 * only unless it is REMOTE_NO_ASID, on every online hart whose logical
 * index is set in m except this one. Returns once every target flushed
 * (SBI RFENCE completes before it returns), 0, or the first SBI error
 * (windows before it were flushed). Any context.
 */
long remote_sfence_vma(const struct hartmask *m, uint64_t start, uint64_t size, long asid);

/* fence.i on every online hart in m except this one; 0 or the first SBI
 * error. Any context. */
long remote_fence_i(const struct hartmask *m);

#endif
