/* sec_sched_stress: the scheduler must not let two harts wait on each
 * other's current thread.
 *
 * The load that once froze the kernel: an unpinned thread that yields in a
 * loop, an unpinned thread that serves calls on an endpoint (recv/reply),
 * and a caller pinned to the last hart that busy-waits 100 us between
 * calls. Yields, blocks and wakes then race across harts all the time; a
 * scheduler that can queue a thread while its old hart still runs on its
 * stack ends with harts spinning on each other, interrupts off, and the
 * counters below stop. The main thread watches: every counter must move in
 * every one-second window.
 *
 * Duration: 20 s when the selftest prefix names this test's family ("sec_"
 * or longer), 2 s inside the full selftest so that stays quick. */
#include "ulib.h"
#include "uprog.h"

/* Set by cmd_selftest before the tests run (NULL or "" = everything). */
const char *selftest_prefix;

#define TICKS_PER_SEC 10000000UL       /* rdtime runs at 10 MHz on QEMU virt */
#define SEND_GAP      1000UL           /* 100 us between messages */
#define STOP_WORD     (~0ULL)

/* Shared with the threads: static, so a thread that outlives a failed
 * test never writes into a dead stack frame. */
static struct {
	long ep;
	volatile int stop;
	volatile long yields, recvs, calls;
	volatile int yielder_done, receiver_done, sender_done;
	volatile long sender_err;      /* first bad call result, 0 if none */
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
		if (r.a2)       /* a call: answer it and wait for the next one */
			r = ipc(SYS_REPLY_RECV, st.ep, w, SLOT_NONE);
		else
			r = ipc(SYS_RECV, st.ep, w, SLOT_NONE);
	}
	st.receiver_done = 1;
}

/* Alternates plain sends and calls. A send wakes the receiver through the
 * run queues (it goes to whichever hart looks free and then blocks there
 * again); a call may switch to it directly on this hart. Both races
 * matter: wake vs. a hart still leaving the thread, and the direct switch
 * to a thread another hart has not left yet. */
static void sender(void *a)
{
	(void)a;
	uint64_t w[4] = { 0 };
	for (uint64_t i = 1; !st.stop; i++) {
		uint64_t until = rdtime() + SEND_GAP;
		while (rdtime() < until)
			;
		int call = i & 1;
		w[0] = i;
		w[1] = (uint64_t)call;
		struct sysret r = ipc(call ? SYS_CALL : SYS_SEND, st.ep, w, SLOT_NONE);
		if (r.a0 || (call && (uint64_t)r.a1 != i + 1)) {
			st.sender_err = r.a0 ? r.a0 : -1000;
			break;
		}
		st.calls++;
	}
	if (!st.sender_err) {
		/* Let the receiver leave its loop. */
		w[0] = STOP_WORD;
		w[1] = 1;
		ipc(SYS_CALL, st.ep, w, SLOT_NONE);
	}
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
	if (st.ep < 0 || ep_create(st.ep) != 0) {
		snprintf(why, 160, "ep_create");
		return 1;
	}
	long ty = uthread_start(yielder, NULL, -1, 1);
	long tr = uthread_start(receiver, NULL, -1, 1);
	long ts = uthread_start(sender, NULL, (int)(harts - 1), 1);

	/* Watchdog. A window whose own samples are far apart (the host did
	 * not run this hart for a while) proves nothing and is not judged;
	 * a frozen pair of harts leaves the watching hart running. */
	int fail = 0;
	long windows = 0, skipped = 0;
	if (ty < 0 || tr < 0 || ts < 0) {
		snprintf(why, 160, "thread start: %ld %ld %ld", ty, tr, ts);
		fail = 1;
	}
	uint64_t start = rdtime(), end = start + (uint64_t)secs * TICKS_PER_SEC;
	while (!fail && rdtime() < end) {
		long y0 = st.yields, r0 = st.recvs, c0 = st.calls;
		uint64_t w_end = rdtime() + TICKS_PER_SEC, last = rdtime(), gap = 0;
		while (rdtime() < w_end) {
			sys_yield();
			uint64_t now = rdtime();
			if (now - last > gap)
				gap = now - last;
			last = now;
		}
		if (st.sender_err) {
			snprintf(why, 160, "call failed: %ld", st.sender_err);
			fail = 1;
		} else if (gap > TICKS_PER_SEC / 2) {
			skipped++;
		} else if (st.yields == y0 || st.recvs == r0 || st.calls == c0) {
			snprintf(why, 160, "no progress in window %ld: yields %ld->%ld recvs %ld->%ld calls %ld->%ld",
				 windows, y0, st.yields, r0, st.recvs, c0, st.calls);
			fail = 1;
		}
		windows++;
	}
	printf("  sec_sched: %ld harts, %ld s: yields %ld, recvs %ld, calls %ld (%ld windows, %ld not judged)\n",
	       harts, secs, st.yields, st.recvs, st.calls, windows, skipped);

	/* Stop everything: the sender's last call releases the receiver;
	 * deleting the endpoint releases it too if the sender gave up. */
	st.stop = 1;
	int stopped = 1;
	if (ty >= 0)
		stopped &= wait_for(&st.yielder_done, 10 * TICKS_PER_SEC);
	if (ts >= 0)
		stopped &= wait_for(&st.sender_done, 10 * TICKS_PER_SEC);
	cap_delete(st.ep);
	slot_release(st.ep);
	if (tr >= 0)
		stopped &= wait_for(&st.receiver_done, 10 * TICKS_PER_SEC);
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

	/* Nothing left behind: threads, the endpoint and every cap are gone
	 * (exited threads are freed a little later). */
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
