/* Exploit-style test of waits through a dying endpoint (selftest name
 * sec_ep_death_reply).
 *
 * A caller waiting for its reply is not queued on the endpoint it called,
 * but that endpoint's lock guards its wait. If the endpoint died (every cap
 * naming it deleted) and its slot were reused, the wait would hang off
 * another endpoint's lock. What must hold: when the endpoint dies, such a
 * call ends with E_DEAD, and a reply given afterwards (pending or through
 * a saved reply cap) reaches nobody and harms nothing.
 *
 * Judged by events: the caller's result must arrive (a flag it sets); the
 * 10 s bound only keeps a broken kernel from hanging the run. */
#include "ulib.h"
#include "selftest.h"

#define TICKS_PER_SEC ticks_per_sec()
#define CK(c, ...) do { if (!(c)) { if (!why[0]) snprintf(why, 160, __VA_ARGS__); goto out; } } while (0)

static struct { long ep; volatile long done, r; } dc;

static void dead_caller(void *a)
{
	(void)a;
	uint64_t w[4] = { 7, 0, 0, 0 };
	struct sysret r = ipc(SYS_CALL, dc.ep, w, SLOT_NONE);
	dc.r = r.a0;
	__atomic_store_n(&dc.done, 1, __ATOMIC_RELEASE);
}

/* One round: a call is received (and its reply saved when `saved`), every
 * cap to the endpoint goes, the caller must come back with E_DEAD. */
static int round_trip(int saved, char *why)
{
	long ep = -1, th = -1, rs = -1;
	uint64_t w[4] = { 0 };
	ep = slot_alloc();
	CK(ep >= 0 && ep_create(ep) == 0, "ep_create");
	dc.ep = slot_alloc();
	CK(dc.ep >= 0 && cap_copy(ep, dc.ep) == 0, "copy the caller's cap");
	dc.done = 0;
	dc.r = 1;
	th = uthread_start(dead_caller, NULL, -1, 1);
	CK(th >= 0, "caller thread: %ld", th);
	struct sysret m = ipc(SYS_RECV, ep, w, SLOT_NONE);
	CK(m.a0 == 0 && m.a1 == 7, "receive: %ld", m.a0);
	if (saved) {
		rs = slot_alloc();
		CK(rs >= 0 && sc1(SYS_REPLY_SAVE, rs) == 0, "reply save");
	}
	/* The caller now waits for its reply. The endpoint dies. */
	slot_drop(&dc.ep);
	slot_drop(&ep);
	uint64_t t0 = rdtime();
	while (!__atomic_load_n(&dc.done, __ATOMIC_ACQUIRE) && rdtime() - t0 < 10 * TICKS_PER_SEC)
		sys_yield();
	CK(__atomic_load_n(&dc.done, __ATOMIC_ACQUIRE),
	   "%s call still waits 10 s after its endpoint died", saved ? "a saved" : "a pending");
	CK(dc.r == -E_DEAD, "call through a dead endpoint returned %ld", dc.r);
	/* The late reply reaches nobody. */
	uint64_t ans[4] = { 1, 2, 3, 4 };
	long r = saved ? ipc(SYS_REPLY_CAP, rs, ans, SLOT_NONE).a0 : ipc(SYS_REPLY, 0, ans, SLOT_NONE).a0;
	CK(r < 0, "a reply after the endpoint died was delivered: %ld", r);
out:
	slot_drop(&rs);
	slot_drop(&dc.ep);
	slot_drop(&ep);
	if (th >= 0) {
		if (!dc.done)
			sc1(SYS_THREAD_KILL, th);
		slot_drop(&th);
	}
	return why[0] ? 1 : 0;
}

int sec_ep_death_reply(char *why)
{
	struct kcounters before, after;
	why[0] = 0;
	settled_counters(&before);
	if (round_trip(0, why) || round_trip(1, why))
		return 1;
	settled_counters(&after);
	if (after.endpoints != before.endpoints || after.caps != before.caps ||
	    after.threads != before.threads)
		snprintf(why, 160, "leak: endpoints %ld caps %ld threads %ld",
			 (long)(after.endpoints - before.endpoints), (long)(after.caps - before.caps),
			 (long)(after.threads - before.threads));
	return why[0] ? 1 : 0;
}
