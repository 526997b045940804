/* sec_sched_stress: the scheduler must not let two harts wait on each
 * other's current thread.
 *
 * The load that once froze the kernel: an unpinned thread that yields in a
 * loop, an unpinned thread that serves an endpoint (recv, reply), and a
 * sender pinned to the last hart that busy-waits 100 us between messages.
 * Yields, blocks, wakes and steals then race across harts all the time; a
 * scheduler that can queue a thread while its old hart still runs on its
 * stack ends with two harts spinning on each other, interrupts off.
 *
 * The main thread is the watchdog. It must not keep the run queues busy
 * itself (a hart with a queued thread never steals, and stealing is half
 * of the race), so it sleeps in a receive: the sender sends it a tick
 * every second, and at each tick every counter must have moved within a
 * bound of another thread's events (see the watchdog). A frozen
 * scheduler stops the ticks too; the boot then hangs
 * and the runner reports it (status 124).
 *
 * Duration: 20 s when the selftest prefix names this test's family ("sec_"
 * or longer), 2 s inside the full selftest so that stays quick. */
#include "ulib.h"
#include "selftest.h"

/* Set by cmd_selftest before the tests run ("" = every test). */
const char *selftest_prefix;

#define TICKS_PER_SEC ticks_per_sec()   /* the kernel's timebase */
#define SEND_GAP      (TICKS_PER_SEC / 10000)   /* 100 us between messages */
#define CALL_EVERY    16               /* one call per 16 messages, the rest plain sends */
#define STOP_WORD     (~0ULL)
/* Event bounds of the watchdog (see sec_sched_stress). */
#define STILL_SENDS   20000
#define STILL_YIELDS  5000000

/* Shared with the threads: static, so a thread that outlives a failed
 * test never writes into a dead stack frame. */
static struct {
	long ep, tick_ep;
	volatile int stop;
	volatile long yields, recvs, sends;
	volatile int yielder_done, receiver_done, sender_done;
	volatile long sender_err;      /* first bad result, 0 if none */
} st;

static void yielder(void *a)
{
	(void)a;
	while (!st.stop) {
		st.yields++;
		sys_yield();
	}
	st.yielder_done = 1;
}

/* w[1] says whether the message is a call (answer it) or a plain send. */
static void receiver(void *a)
{
	(void)a;
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, st.ep, w, SLOT_NONE);
	while (r.a0 == 0) {
		st.recvs++;
		w[0] = (uint64_t)r.a1 + 1;
		if ((uint64_t)r.a1 == STOP_WORD) {
			ipc(SYS_REPLY, 0, w, SLOT_NONE);
			break;
		}
		if (r.a2)
			r = ipc(SYS_REPLY_RECV, st.ep, w, SLOT_NONE);
		else
			r = ipc(SYS_RECV, st.ep, w, SLOT_NONE);
	}
	st.receiver_done = 1;
}

/* Mostly plain sends, now and then a call. A send wakes the receiver
 * through the run queues (it runs on whichever hart looks free, then
 * blocks there again, which is when that hart steals); a call may switch
 * to it directly on this hart. Both races matter: a wake against a hart
 * that is still leaving the thread, and a direct switch to a thread
 * another hart has not left yet. */
static void sender(void *a)
{
	(void)a;
	uint64_t w[4] = { 0 };
	uint64_t tick = rdtime() + TICKS_PER_SEC, ticks = 0;
	for (uint64_t i = 1; !st.stop; i++) {
		uint64_t until = rdtime() + SEND_GAP;
		while (rdtime() < until)
			;
		int call = (i % CALL_EVERY) == 0;
		w[0] = i;
		w[1] = (uint64_t)call;
		struct sysret r = ipc(call ? SYS_CALL : SYS_SEND, st.ep, w, SLOT_NONE);
		if (r.a0 || (call && (uint64_t)r.a1 != i + 1)) {
			st.sender_err = r.a0 ? r.a0 : -1000;
			break;
		}
		st.sends++;
		if (rdtime() >= tick) {
			w[0] = ++ticks;
			ipc(SYS_SEND, st.tick_ep, w, SLOT_NONE);
			/* From now, not from the last due time: a sender that
			 * fell behind (host load) must not send ticks back to
			 * back, which would make empty windows. */
			tick = rdtime() + TICKS_PER_SEC;
		}
	}
	if (!st.sender_err) {
		/* Let the receiver leave its loop. */
		w[0] = STOP_WORD;
		w[1] = 1;
		ipc(SYS_CALL, st.ep, w, SLOT_NONE);
	}
	/* Wake the watchdog if it still waits for a tick; otherwise this
	 * waits until the test deletes the tick endpoint. Done only after
	 * that: the test frees the slot once we say so. */
	w[0] = STOP_WORD;
	ipc(SYS_SEND, st.tick_ep, w, SLOT_NONE);
	st.sender_done = 1;
}

static int starts_with(const char *s, const char *p)
{
	while (*p)
		if (*s++ != *p++)
			return 0;
	return 1;
}

/* Yield until `cond` holds or `ticks` of rdtime pass; returns cond. */
static int wait_for(volatile int *cond, uint64_t ticks)
{
	uint64_t end = rdtime() + ticks;
	while (!*cond && rdtime() < end)
		sys_yield();
	return *cond;
}

int sec_sched_stress(char *why)
{
	const char *pfx = selftest_prefix ? selftest_prefix : "";
	long secs = starts_with(pfx, "sec_") ? 20 : 2;
	long harts = dbg(DBG_NCPUS, 0, 0);
	struct kcounters before, after;
	settled_counters(&before);

	memset((void *)&st, 0, sizeof st);
	st.ep = slot_alloc();
	st.tick_ep = slot_alloc();
	if (st.ep < 0 || st.tick_ep < 0 || ep_create(st.ep) != 0 || ep_create(st.tick_ep) != 0) {
		snprintf(why, 160, "ep_create");
		return 1;
	}
	long ty = uthread_start(yielder, NULL, -1, 1);
	long tr = uthread_start(receiver, NULL, -1, 1);
	long ts = uthread_start(sender, NULL, (int)(harts - 1), 1);

	/* Watchdog, judged by events, not by time: a tick (about a second)
	 * only paces the checks. A thread stands still when its counter has
	 * not moved while a reference thread made STILL_SENDS sends (for the
	 * yielder and the receiver: the pinned sender) or STILL_YIELDS yields
	 * (for the sender: the unpinned yielder). On an oversubscribed host a
	 * hart's vCPU can be off the host CPU for seconds while the others run
	 * (seen at a host load average of 40); the bounds are some 6 and 15 s
	 * of the reference's unloaded rate, and a pause of the vCPU does not
	 * add to them unless the reference keeps running. A frozen scheduler stands
	 * still for good: it fails here when the run is long enough to reach
	 * a bound (the 20 s "sec_" run), and stops the ticks in any run,
	 * which the boot runner reports as a hang. */
	int fail = 0;
	long windows = 0, stalls = 0;
	long y_ref = 0, r_ref = 0, s_ref = 0;   /* reference counts when each last moved */
	if (ty < 0 || tr < 0 || ts < 0) {
		snprintf(why, 160, "thread start: %ld %ld %ld", ty, tr, ts);
		fail = 1;
	}
	uint64_t start = rdtime(), w[4] = { 0 };
	long y0 = st.yields, r0 = st.recvs, s0 = st.sends;
	y_ref = r_ref = s0, s_ref = y0;
	while (!fail && windows < secs) {
		struct sysret r = ipc(SYS_RECV, st.tick_ep, w, SLOT_NONE);
		long y = st.yields, rc = st.recvs, s = st.sends;
		if (r.a0 || (uint64_t)r.a1 == STOP_WORD || st.sender_err) {
			snprintf(why, 160, "sender stopped: %ld (tick %ld)", st.sender_err, r.a0);
			fail = 1;
		} else {
			if (y != y0)
				y_ref = s;
			if (rc != r0)
				r_ref = s;
			if (s != s0)
				s_ref = y;
			if (y == y0 || rc == r0 || s == s0)
				stalls++;     /* noted only: a window proves nothing alone */
			if (s - y_ref >= STILL_SENDS || s - r_ref >= STILL_SENDS ||
			    y - s_ref >= STILL_YIELDS) {
				fail = 1;
				snprintf(why, 160, "stood still (bounds %d sends, %d yields) at tick %ld: "
					 "yields %ld (moved at %ld sends), recvs %ld (at %ld sends), sends %ld "
					 "(at %ld yields)", STILL_SENDS, STILL_YIELDS, r.a1, y, y_ref, rc,
					 r_ref, s, s_ref);
			}
		}
		y0 = y, r0 = rc, s0 = s;
		windows++;
	}
	uint64_t ds = (rdtime() - start) / (TICKS_PER_SEC / 10);
	printf("  sec_sched: %ld harts, %lu.%lu s: yields %ld, recvs %ld, sends %ld (%ld windows, "
	       "%ld with a thread standing still; bound: still over %d sends or %d yields)\n",
	       harts, ds / 10, ds % 10, st.yields, st.recvs, st.sends, windows, stalls,
	       STILL_SENDS, STILL_YIELDS);

	/* Stop everything. Deleting the tick endpoint releases a sender
	 * blocked on a tick (and makes later ticks fail at once); the
	 * sender's last call releases the receiver; deleting the endpoint
	 * releases whoever still waits on it. */
	st.stop = 1;
	int stopped = 1;
	if (ty >= 0)
		stopped &= wait_for(&st.yielder_done, 10 * TICKS_PER_SEC);
	cap_delete(st.tick_ep);
	if (ts >= 0)
		wait_for(&st.sender_done, 10 * TICKS_PER_SEC);
	cap_delete(st.ep);
	if (ts >= 0)
		stopped &= wait_for(&st.sender_done, 10 * TICKS_PER_SEC);
	if (tr >= 0)
		stopped &= wait_for(&st.receiver_done, 10 * TICKS_PER_SEC);
	slot_release(st.tick_ep);
	slot_release(st.ep);
	long th[3] = { ty, tr, ts };
	for (int i = 0; i < 3; i++) {
		if (th[i] < 0)
			continue;
		if (!stopped)
			sc1(SYS_THREAD_KILL, th[i]);
		cap_delete(th[i]);
		slot_release(th[i]);
	}
	if (!stopped && !fail) {
		snprintf(why, 160, "threads did not stop (yielder %d receiver %d sender %d)",
			 st.yielder_done, st.receiver_done, st.sender_done);
		fail = 1;
	}
	if (fail)
		return 1;

	/* Nothing left behind: threads, endpoints and caps are back where
	 * they were (exited threads are freed a little later). */
	for (int i = 0; i < 10; i++) {
		settled_counters(&after);
		if (after.threads == before.threads && after.endpoints == before.endpoints &&
		    after.caps == before.caps)
			return 0;
	}
	snprintf(why, 160, "leak: threads %lu->%lu eps %lu->%lu caps %lu->%lu",
		 before.threads, after.threads, before.endpoints, after.endpoints,
		 before.caps, after.caps);
	return 1;
}
