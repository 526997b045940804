/* The host platform for the CortenMM core: pthreads, C11 atomics, a frame
 * arena that counts what is allocated (leaks show), injectable allocation
 * failure, an epoch RCU, a per-thread pool, and TLB-flush counting with a
 * hook for a simulated TLB. */
#ifndef HOST_PLATFORM_H
#define HOST_PLATFORM_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "cortenmm/cursor.h"

extern const struct mm_platform host_plat;

/* Arena of nframes 4 KiB frames ("physical" addresses from HOST_PA_BASE). */
#define HOST_PA_BASE 0x80000000ull
void host_init(size_t nframes);
void host_fini(void);

/* Data frames for tests: 4 KiB << 9*(level-1), aligned; MM_NOFRAME if none. */
uint64_t host_frame_alloc(unsigned level);
void host_frame_free(uint64_t pa, unsigned level);
/* Frames currently allocated (4 KiB units), data and PT alike. */
size_t host_frames_used(void);

/* Fault injection on pt_alloc: the k-th call from now fails (k >= 1);
 * host_fail_off() disables. host_pt_allocs() counts pt_alloc calls. */
void host_fail_at(long k);
void host_fail_off(void);
long host_pt_allocs(void);

/* Per-thread pool of zeroed frames on/off (off: every frame via pt_alloc,
 * so fault injection reaches every allocation point). */
void host_pool_enable(bool on);
/* Give the calling thread's pool back to the arena. */
void host_pool_drain(void);

/* RCU: run callbacks whose grace period has passed / wait for all. */
void host_rcu_poll(void);
void host_rcu_barrier(void);
size_t host_rcu_pending(void);

/* TLB flush requests seen, and an optional observer. */
unsigned long host_tlb_flushes(void);
extern void (*host_tlb_hook)(struct mm_as *as, uint64_t start, uint64_t end);

/* Seeded bug: a protocol that takes no locks (proto_nolock.c). */
extern const struct mm_protocol host_proto_nolock;

/* Defined here for all host programs (declared in cortenmm/mm.h). */
const struct pt_arch *mm_arch_by_name(const char *name);

#endif
