/* Out-of-memory injection for testing the kernel's error paths
 * (boot argument failalloc=N; docs/security.md, "Kernel out of memory").
 *
 * Every kernel allocation that can fail asks failalloc_fail() first, at the
 * allocator's entry point: frames (frame_alloc, frame_alloc_run: data
 * frames, PT pages, metadata arrays, the pools all draw from these) and the
 * kernel object pools (task_create, thread_alloc, ep_alloc). Counting
 * starts when init reads its boot command line (so boot itself never fails)
 * and stops at DBG_FAILALLOC; the Nth allocation counted fails as if memory
 * had run out (once; with failalloc=N,B the B allocations from the Nth
 * on, so a path that retries once after a failure fails again and the
 * failure reaches its caller). failalloc=0 counts without failing anything. Without
 * the boot argument the check is one load of a flag that stays 0. */
#ifndef PATINA_FAILALLOC_H
#define PATINA_FAILALLOC_H

extern int failalloc_armed;

/* At boot: fail allocations N .. N+burst-1 (N = 0: count only). */
void failalloc_setup(unsigned long n, unsigned long burst);
void failalloc_arm(void);                /* start counting (once; no-op without setup) */
/* Stop counting: the number counted so far, or -1 without failalloc=. */
long failalloc_stop(void);
void failalloc_report(void);             /* print the count (at power-off) */
int failalloc_count(void);               /* slow path of failalloc_fail */

/* In-kernel tests: the allocation this hart counts after `skip` more
 * fails, whatever failalloc= says; other harts are not affected. Needs
 * irqs off from here to failalloc_here_end, which drops a failure not yet
 * made and restores the boot argument's own state. One hart at a time. */
void failalloc_here(unsigned skip);
void failalloc_here_end(void);

/* Nonzero when this allocation must fail. Any context, any lock held. */
static inline int failalloc_fail(void)
{
	return __builtin_expect(__atomic_load_n(&failalloc_armed, __ATOMIC_RELAXED), 0) &&
	       failalloc_count();
}

#endif
