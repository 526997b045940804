/* Checks that the kernel's resource counters come back after a test or
 * a demo: nothing leaked. */
#include "ulib.h"
#include "testlib.h"

#define FAIL(...) do { snprintf(why, 160, __VA_ARGS__); return 1; } while (0)

/* Counters once deferred frees (RCU) have drained: two reads 50 ms apart
 * that agree. */
void settled_counters(struct kcounters *out)
{
	struct kcounters a;
	dbg(DBG_COUNTERS, (uint64_t)&a, 0);
	for (int i = 0; i < 40; i++) {
		uint64_t t = rdtime() + ticks_per_sec() / 20;
		while (rdtime() < t)
			sys_yield();
		dbg(DBG_COUNTERS, (uint64_t)out, 0);
		if (out->free_frames == a.free_frames && !out->rcu_busy)
			return;
		a = *out;
	}
}

/* Counters back where they were: tasks, threads, endpoints and caps, and
 * the frame counts too when `frames` (only children were involved:
 * uthread_start never frees its stacks). */
int pg_counters_back(const struct kcounters *a, int frames, char *why)
{
	struct kcounters b;
	for (int i = 0; i < 200; i++) {
		dbg(DBG_COUNTERS, (uint64_t)&b, 0);
		if (b.tasks == a->tasks && b.threads == a->threads && b.endpoints == a->endpoints &&
		    b.caps == a->caps && b.mobjs == a->mobjs && b.mobj_maps == a->mobj_maps &&
		    b.mobj_pages == a->mobj_pages &&
		    (!frames || (b.free_frames == a->free_frames && b.frame_objs == a->frame_objs)))
			return 0;
		pause_ms(10);
	}
	FAIL("leak: frames %ld tasks %ld threads %ld eps %ld uframes %ld caps %ld mobjs %ld maps %ld",
	     frames ? (long)(a->free_frames - b.free_frames) : 0L, (long)(b.tasks - a->tasks),
	     (long)(b.threads - a->threads), (long)(b.endpoints - a->endpoints),
	     frames ? (long)(b.frame_objs - a->frame_objs) : 0L, (long)(b.caps - a->caps),
	     (long)(b.mobjs - a->mobjs), (long)(b.mobj_maps - a->mobj_maps));
}

/* Frame objects, caps and tasks back to *before (settled), for a test that
 * passed: 0, or 1 with the difference in why. */
int counters_objs_back(const struct kcounters *before, char *why)
{
	struct kcounters after;
	settled_counters(&after);
	if (after.frame_objs == before->frame_objs && after.caps == before->caps &&
	    after.tasks == before->tasks && after.mobjs == before->mobjs &&
	    after.mobj_maps == before->mobj_maps && after.mobj_pages == before->mobj_pages)
		return 0;
	FAIL("leak: frame objects %ld, caps %ld, tasks %ld",
	     (long)(after.frame_objs - before->frame_objs),
	     (long)(after.caps - before->caps), (long)(after.tasks - before->tasks));
}
