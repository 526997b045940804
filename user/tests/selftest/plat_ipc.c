/* IPC with timeouts (selftest name plat_recv_timeout).
 *
 * SYS_RECV_TIMED with nobody sending returns E_TIMEDOUT no earlier than
 * its timeout; SYS_CALL_TIMED to a server that holds the call returns
 * E_TIMEDOUT, and the server's late reply then finds no waiter (E_NOENT);
 * a timed call answered in time returns the reply; a bad timeout is
 * refused (E_INVAL); and an untimed call made after timed ones waits as
 * long as its server takes (no deadline lingers). Counters come back.
 *
 * Bounds: a timeout may end late by a tick or by a loaded host's delay,
 * so only "not early" is exact; "not very late" uses 5 s, far above any
 * tick, only to catch a timeout that never fires. */
#include "ulib.h"
#include "selftest.h"

#define TICKS_PER_SEC ticks_per_sec()   /* the kernel's timebase */
#define MS (TICKS_PER_SEC / 1000)
#define CK(c, ...) do { if (!(c)) { if (!why[0]) snprintf(why, 160, __VA_ARGS__); goto out; } } while (0)

/* A server thread: receives one call on ep, then replies 42 once
 * `release` is set or `hold` ticks have passed (hold 0: only on release),
 * and records what its reply returned. */
static struct {
	long ep;
	uint64_t hold;
	volatile long got, release, done;
	volatile long reply_r;
} sv;

static void server(void *a)
{
	(void)a;
	uint64_t w[4] = { 0 };
	struct sysret m = ipc(SYS_RECV, sv.ep, w, SLOT_NONE);
	__atomic_store_n(&sv.got, m.a0 == 0 ? 1 : -1, __ATOMIC_RELEASE);
	uint64_t t0 = rdtime();
	while (!__atomic_load_n(&sv.release, __ATOMIC_ACQUIRE) &&
	       (!sv.hold || rdtime() - t0 < sv.hold))
		sys_yield();
	uint64_t ans[4] = { 42, 0, 0, 0 };
	sv.reply_r = ipc(SYS_REPLY, 0, ans, SLOT_NONE).a0;
	__atomic_store_n(&sv.done, 1, __ATOMIC_RELEASE);
}

static long serve(uint64_t hold, long release, long *th)
{
	sv.hold = hold;
	sv.got = 0;
	sv.release = release;
	sv.done = 0;
	sv.reply_r = 1;
	*th = uthread_start(server, NULL, -1, 1);
	return *th < 0 ? *th : 0;
}

/* Yield until *f is set; 10 s only guards a hang. */
static int wait_flag(volatile long *f)
{
	uint64_t t0 = rdtime();
	while (!__atomic_load_n(f, __ATOMIC_ACQUIRE) && rdtime() - t0 < 10 * TICKS_PER_SEC)
		sys_yield();
	return __atomic_load_n(f, __ATOMIC_ACQUIRE) != 0;
}

int plat_recv_timeout(char *why)
{
	struct kcounters before, after;
	long ep = -1, th = -1;
	uint64_t w[4] = { 1, 2, 3, 4 };
	why[0] = 0;
	settled_counters(&before);
	ep = slot_alloc();
	CK(ep >= 0 && ep_create(ep) == 0, "ep_create");
	sv.ep = ep;

	/* 1. Receive with nobody sending. */
	uint64_t t0 = rdtime();
	struct sysret r = ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, 50000);
	uint64_t dt = rdtime() - t0;
	CK(r.a0 == -E_TIMEDOUT, "RECV with a 50 ms timeout and no sender: %ld", r.a0);
	CK(dt >= 50 * MS, "RECV timed out early: after %lu ms", (unsigned long)(dt / MS));
	CK(dt < 5 * TICKS_PER_SEC, "RECV timed out only after %lu ms", (unsigned long)(dt / MS));

	/* 2. Bad timeouts. */
	CK(ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, 0).a0 == -E_INVAL, "timeout 0 accepted");
	CK(ipc_timed(SYS_CALL_TIMED, ep, w, SLOT_NONE, 3600000001ULL).a0 == -E_INVAL,
	   "timeout over an hour accepted");

	/* 3. A call the server holds until we let it go: it times out, and
	 * the late reply reaches nobody. */
	CK(serve(0, 0, &th) == 0, "server");
	t0 = rdtime();
	r = ipc_timed(SYS_CALL_TIMED, ep, w, SLOT_NONE, 50000);
	dt = rdtime() - t0;
	CK(sv.got == 1, "the server did not receive the call (%ld)", sv.got);
	CK(r.a0 == -E_TIMEDOUT, "CALL held by its server: %ld", r.a0);
	CK(dt >= 50 * MS && dt < 5 * TICKS_PER_SEC, "CALL timed out after %lu ms",
	   (unsigned long)(dt / MS));
	__atomic_store_n(&sv.release, 1, __ATOMIC_RELEASE);
	CK(wait_flag(&sv.done), "server never replied");
	CK(sv.reply_r == -E_NOENT, "a reply after the call timed out returned %ld", sv.reply_r);
	slot_drop(&th);

	/* 4. A timed call answered in time. */
	CK(serve(0, 1, &th) == 0, "server");
	r = ipc_timed(SYS_CALL_TIMED, ep, w, SLOT_NONE, 5000000);
	CK(r.a0 == 0 && r.a1 == 42, "timed CALL answered in time: %ld (%ld)", r.a0, r.a1);
	CK(wait_flag(&sv.done) && sv.reply_r == 0, "server's reply: %ld", sv.reply_r);
	slot_drop(&th);

	/* 5. An untimed call after the timed ones waits as long as its
	 * server takes (200 ms, past every deadline set above). */
	CK(serve(200 * MS, 0, &th) == 0, "server");
	t0 = rdtime();
	r = ipc(SYS_CALL, ep, w, SLOT_NONE);
	dt = rdtime() - t0;
	CK(r.a0 == 0 && r.a1 == 42, "untimed CALL after timed ones: %ld (%ld)", r.a0, r.a1);
	CK(dt >= 200 * MS, "untimed CALL came back after %lu ms", (unsigned long)(dt / MS));
	CK(wait_flag(&sv.done), "server");
	slot_drop(&th);
out:
	if (why[0] && th >= 0) {
		sc1(SYS_THREAD_KILL, th);
		slot_drop(&th);
	}
	slot_drop(&ep);
	if (why[0])
		return 1;
	settled_counters(&after);
	if (after.endpoints != before.endpoints || after.threads != before.threads ||
	    after.caps != before.caps)
		snprintf(why, 160, "leak: endpoints %ld threads %ld caps %ld",
			 (long)(after.endpoints - before.endpoints),
			 (long)(after.threads - before.threads), (long)(after.caps - before.caps));
	return why[0] ? 1 : 0;
}
