/* In-kernel test of the per-hart frame-quota reserves (task.c), run by the
 * user-level selftest (DBG_KTEST) on the calling task's quota. */
#include <patina/errno.h>
#include "mk.h"
#include "ktest.h"
#include "arch.h"

/* After a refill, the next charge on the same hart comes from its reserve
 * (the shared count does not move), the exact use counts every charge and
 * no reserve,
 * and with the quota set to exactly three more frames, three charges fit
 * (the reserves other harts or earlier charges hold are taken back) and a
 * fourth is refused. Interrupts stay off: one hart throughout. */
KTEST(60, quota_per_hart_reserve)
{
	struct thread *me = cur_thread();
	if (!me)
		return 0;   /* run from the boot console: no task */
	if (!me->task)
		return KSKIP("run from a kernel thread: no calling task");
	struct task *t = me->task;
	unsigned long f = irq_save();
	long u0 = quota_frames_used(t);     /* takes the reserves back */
	int e1 = quota_charge_frames(t, 1);
	long s1 = __atomic_load_n(&t->frames_used, __ATOMIC_RELAXED);
	int e2 = quota_charge_frames(t, 1);
	long s2 = __atomic_load_n(&t->frames_used, __ATOMIC_RELAXED);
	long u2 = quota_frames_used(t);
	if (!e1)
		quota_release_frames(t, 1);
	if (!e2)
		quota_release_frames(t, 1);
	long u3 = quota_frames_used(t);
	/* A quota never shrinks in use; here it does, after the reserves
	 * went back (quota_frames_used), as a task's quota_return does. */
	long saved = t->frame_quota;
	t->frame_quota = quota_frames_used(t) + (long)__atomic_load_n(&t->as.nr_frames, __ATOMIC_RELAXED) +
			 __atomic_load_n(&t->pt_resv, __ATOMIC_RELAXED) + 3;
	int fit = 0, e4;
	while (fit < 3 && !quota_charge_frames(t, 1))
		fit++;
	e4 = fit == 3 ? quota_charge_frames(t, 1) : 0;
	if (!e4 && fit == 3)
		quota_release_frames(t, 1);
	quota_release_frames(t, fit);
	t->frame_quota = saved;
	long u5 = quota_frames_used(t);
	irq_restore(f);
	if (e1 || e2)
		return KFAIL("charges refused (%d, %d)", e1, e2);
	if (s2 != s1)
		return KFAIL("second charge moved the shared count %ld -> %ld (want the reserve)", s1, s2);
	if (u2 != u0 + 2 || u3 != u0)
		return KFAIL("exact use %ld -> %ld -> %ld (want +2, back)", u0, u2, u3);
	if (fit != 3 || e4 != -E_QUOTA)
		return KFAIL("quota of 3 more frames: %d fit, the fourth gave %d (want 3, -E_QUOTA)", fit, e4);
	if (u5 != u0)
		return KFAIL("exact use %ld after, %ld before", u5, u0);
	return 0;
}
