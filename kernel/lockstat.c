/* Lock statistics (lockstat.h): slot names, the sums over the harts, the
 * mm platform's lock_stat hook, and the shell command `lockstat`. (The
 * counting itself is inline: lockstat_count, cpu.h.) */
#include "lockstat.h"
#include "cmd.h"
#include "cpu.h"
#include "kstring.h"
#include "mm_platform.h"
#include "printk.h"

_Static_assert(LOCKSTAT_N <= 256, "a lock class's stat slot is one byte");

/* Slot names: "other", the table's classes, the mm core's lock kinds
 * (enum mm_lock_kind order). */
#define LOCK_CLASS_NAME(id, nm, rk, fl) [LOCK_CLASS_IDX_##id] = nm,
static const char *const names[LOCKSTAT_N] = {
	[LOCKSTAT_OTHER] = "other",
	LOCK_CLASSES(LOCK_CLASS_NAME)
	[LOCKSTAT_MM + MM_LK_SPIN] = "pt_spin",
	[LOCKSTAT_MM + MM_LK_READ] = "pt_read",
	[LOCKSTAT_MM + MM_LK_WRITE] = "pt_write",
	[LOCKSTAT_MM + MM_LK_MMAP_READ] = "mmap_read",
	[LOCKSTAT_MM + MM_LK_MMAP_WRITE] = "mmap_write",
	[LOCKSTAT_MM + MM_LK_PTL] = "ptl",
};
#undef LOCK_CLASS_NAME
_Static_assert(MM_LK_KINDS == 6, "a new mm lock kind needs its name above");

const char *lockstat_name(unsigned slot)
{
	return slot < LOCKSTAT_N ? names[slot] : NULL;
}

void lockstat_read(unsigned slot, struct lockstat_sum *out)
{
	uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE);
	*out = (struct lockstat_sum){ 0, 0, 0 };
	for (uint32_t i = 0; i < n; i++) {
		struct lockstat_hart *h = &cpus[i].lockstat;
		out->acq += __atomic_load_n(&h->acq[slot], __ATOMIC_RELAXED);
		out->contended += __atomic_load_n(&h->contended[slot], __ATOMIC_RELAXED);
		out->spins += __atomic_load_n(&h->spins[slot], __ATOMIC_RELAXED);
	}
}

void lockstat_reset(void)
{
	uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++) {
		struct lockstat_hart *h = &cpus[i].lockstat;
		for (unsigned s = 0; s < LOCKSTAT_N; s++) {
			__atomic_store_n(&h->acq[s], 0, __ATOMIC_RELAXED);
			__atomic_store_n(&h->contended[s], 0, __ATOMIC_RELAXED);
			__atomic_store_n(&h->spins[s], 0, __ATOMIC_RELAXED);
		}
	}
}

void kmm_lock_stat(unsigned kind, uint32_t waited)
{
	lockstat_count(LOCKSTAT_MM + kind, waited);
}

/* `lockstat` prints one line per class taken at least once since boot or
 * the last reset (a class not listed was not taken), summed over the
 * harts; `lockstat reset` zeroes the counters. The counters are read
 * before anything is printed, so the command's own printing (console
 * lock) is not in them. */
KCMD(lockstat, "lock statistics per class: lockstat [reset]")
{
	if (argc == 2 && !strcmp(argv[1], "reset")) {
		lockstat_reset();
		return 0;
	}
	if (argc != 1) {
		printk("usage: lockstat [reset]\n");
		return 2;
	}
	/* Read every class first: the printing below takes locks too. */
	struct lockstat_sum sum[LOCKSTAT_N];
	for (unsigned s = 0; s < LOCKSTAT_N; s++)
		lockstat_read(s, &sum[s]);
	for (unsigned s = 0; s < LOCKSTAT_N; s++)
		if (sum[s].acq)
			printk("lockstat: %s acq %lu contended %lu spins %lu\n", names[s],
			       (unsigned long)sum[s].acq, (unsigned long)sum[s].contended,
			       (unsigned long)sum[s].spins);
	return 0;
}
