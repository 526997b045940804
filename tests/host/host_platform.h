/* The host platform for the CortenMM core: pthreads, C11 atomics, a frame
 * arena that counts what is allocated (leaks show), injectable allocation
 * failure, an epoch RCU, a per-thread pool, TLB-flush counting with a hook
 * for a simulated TLB, and, opt-in, TLB shootdown through per-thread
 * mailboxes and per-thread frame caches. */
#ifndef HOST_PLATFORM_H
#define HOST_PLATFORM_H

#include <stddef.h>
#include <stdint.h>
#include <stdbool.h>
#include "cortenmm/cursor.h"

extern struct mm_platform host_plat;
/* The PT-page locks host_plat gives the core: "queue" (the default: the
 * core's queue locks, mm_q*, on per-thread nodes) or "tas" (lock hooks
 * NULL: the core's own test-and-set and CAS readers-writer locks). Call
 * before any address space exists. 0, or -1 for an unknown name. */
int host_lock_select(const char *name);

/* Threads that may use the platform at once (RCU readers, TLB shootdown
 * targets, frame caches); a thread's slot is given back when it exits. */
#define HOST_MAX_THREADS 1024

/* Arena of nframes 4 KiB frames ("physical" addresses from HOST_PA_BASE). */
#define HOST_PA_BASE 0x80000000ull
void host_init(size_t nframes);
/* Make the host back every arena frame now, so that its first-touch
 * faults do not land inside timed code. Each frame's last byte becomes
 * 0xa5: free memory is not zero, so whoever needs a zeroed frame must
 * zero it (the core does for its own frames). */
void host_arena_touch(void);
void host_fini(void);

/* Data frames for tests: 4 KiB << 9*(level-1), aligned; MM_NOFRAME if none. */
uint64_t host_frame_alloc(unsigned level);
/* The same, with the host memory the frame stands for zeroed (what a fault
 * handler hands to user space). */
uint64_t host_frame_alloc_zeroed(unsigned level);
void host_frame_free(uint64_t pa, unsigned level);
/* Per-thread frame cache (off by default): with it on, single frames come
 * from and go to a cache of up to HOST_FRAME_CACHE frames per thread, so
 * threads do not contend on the arena lock (a kernel's per-CPU page
 * lists). A thread's cache goes back on host_pool_drain and at its exit. */
#define HOST_FRAME_CACHE 64
void host_frame_cache(bool on);
/* Frames currently allocated (4 KiB units), data and PT alike; frames
 * sitting in frame caches are not. */
size_t host_frames_used(void);

/* Fault injection on pt_alloc: the k-th call from now fails (k >= 1);
 * host_fail_off() disables. host_pt_allocs() counts pt_alloc calls. */
void host_fail_at(long k);
void host_fail_off(void);
long host_pt_allocs(void);

/* Per-thread pool of zeroed frames on/off (off: every frame via pt_alloc,
 * so fault injection reaches every allocation point). */
void host_pool_enable(bool on);
/* Give the calling thread's pool (and frame cache) back to the arena. */
void host_pool_drain(void);

/* RCU: run callbacks whose grace period has passed / wait for all. */
void host_rcu_poll(void);
void host_rcu_barrier(void);
size_t host_rcu_pending(void);

/* TLB flush requests seen, and an optional observer. */
unsigned long host_tlb_flushes(void);
extern void (*host_tlb_hook)(struct mm_as *as, uint64_t start, uint64_t end);
/* The same for break-before-make flushes (tlb_flush_bbm), which a
 * shootdown answers like any other flush. */
unsigned long host_tlb_bbm_flushes(void);
extern void (*host_tlb_bbm_hook)(struct mm_as *as, uint64_t start, uint64_t end);

/* TLB shootdown (off by default): with it on, a flush of an address space
 * posts a request to every other thread joined to it and waits until each
 * has answered, as IPIs would. A joined thread answers in host_tlb_poll,
 * which it must call between operations and in every wait during which
 * another thread may flush `as` (the core's spin-waits, host_rcu_barrier
 * and a thread's own flushes already poll). host_tlb_join: the calling thread may hold
 * translations of `as` from now on; host_tlb_leave (also done when the
 * thread exits): it holds none any more. A thread joins one AS at a time. */
void host_tlb_shootdown(bool on);
void host_tlb_join(struct mm_as *as);
void host_tlb_leave(void);
void host_tlb_poll(void);

/* Seeded bug: a protocol that takes no locks (proto_nolock.c). */
extern const struct mm_protocol host_proto_nolock;

#endif
