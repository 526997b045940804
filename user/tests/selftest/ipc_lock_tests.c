/* IPC without the global kernel lock (names u_ipc_*). Returns 0 or fills
 * why and returns 1, and leaves no thread or slot behind. */
#include "ulib.h"
#include "selftest.h"
#include <patina/pager.h>

#define FAIL(...) do { snprintf(why, 160, __VA_ARGS__); return 1; } while (0)
#define CHECK(c, ...) do { if (!(c)) FAIL(__VA_ARGS__); } while (0)
/* The hold is judged by events, not by a window of time: it lasts until
 * the pair has made HOLD_NEED more round trips (sends, pager faults), with
 * HOLD_GUARD_US only as a hang guard, so a host that runs the pair's hart
 * slowly (other QEMUs beside this one) only makes the hold longer. */
#define HOLD_NEED 20
#define HOLD_GUARD_US 10000000
#define WARM 50
#define NL_VA 0x5c000000UL          /* the pager pair's page: no other test uses it */
#define NL_TAG 0x71

struct nl {
	long ep, fe;                    /* fe: the pager pair's fault endpoint cap */
	volatile long go;               /* the pager pair's client may fault */
	volatile long count;            /* round trips, sends or pager faults done so far */
	volatile long stop, done;       /* done: a bit per thread that finished */
	volatile long held, held_err;
};

static void nl_server(void *a)
{
	struct nl *n = a;
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, n->ep, w, SLOT_NONE);
	while (r.a0 == 0 && (uint64_t)r.a1 != ~0ULL) {
		w[0] = (uint64_t)r.a1 + 1;
		r = ipc(SYS_REPLY_RECV, n->ep, w, SLOT_NONE);
	}
	ipc(SYS_REPLY, 0, w, SLOT_NONE);
	__atomic_or_fetch(&n->done, 1, __ATOMIC_SEQ_CST);
}

static void nl_client(void *a)
{
	struct nl *n = a;
	uint64_t w[4] = { 0 };
	for (uint64_t i = 0; !n->stop; i++) {
		w[0] = i;
		struct sysret r = ipc(SYS_CALL, n->ep, w, SLOT_NONE);
		if (r.a0 || (uint64_t)r.a1 != i + 1)
			break;
		n->count++;
	}
	w[0] = ~0ULL;
	ipc(SYS_CALL, n->ep, w, SLOT_NONE);
	__atomic_or_fetch(&n->done, 2, __ATOMIC_SEQ_CST);
}

static void nl_sender(void *a)
{
	struct nl *n = a;
	uint64_t w[4] = { 0 };
	for (uint64_t i = 0; !n->stop; i++) {
		w[0] = i;
		if (ipc(SYS_SEND, n->ep, w, SLOT_NONE).a0)
			break;
		n->count++;
	}
	w[0] = ~0ULL;
	ipc(SYS_SEND, n->ep, w, SLOT_NONE);
	__atomic_or_fetch(&n->done, 2, __ATOMIC_SEQ_CST);
}

static void nl_receiver(void *a)
{
	struct nl *n = a;
	uint64_t w[4] = { 0 };
	struct sysret r;
	do
		r = ipc(SYS_RECV, n->ep, w, SLOT_NONE);
	while (r.a0 == 0 && (uint64_t)r.a1 != ~0ULL);
	__atomic_or_fetch(&n->done, 1, __ATOMIC_SEQ_CST);
}

/* Pager: every fault on NL_VA is answered by marking the page anonymous
 * (the retried access then gets a zero page from the kernel) and
 * FAULT_RESUME; a call with ~0 (not a fault) ends it. */
static void nl_pager(void *a)
{
	struct nl *n = a;
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, n->ep, w, SLOT_NONE);
	while (r.a0 == 0 && (uint64_t)r.a1 != ~0ULL) {
		struct region_op m = { .op = ROP_MARK, .prot = PROT_R | PROT_W, .va = NL_VA,
				       .len = 4096 };
		region_txn(SLOT_SELF_AS, NL_VA, NL_VA + 4096, &m, 1);
		w[0] = FAULT_RESUME;
		r = ipc(SYS_REPLY_RECV, n->ep, w, SLOT_NONE);
	}
	ipc(SYS_REPLY, 0, w, SLOT_NONE);
	__atomic_or_fetch(&n->done, 1, __ATOMIC_SEQ_CST);
}

/* Client of the pager: read NL_VA (a fault the pager answers), then make
 * the page pager-managed again, over and over. */
static void nl_faulter(void *a)
{
	struct nl *n = a;
	while (!n->go)
		sys_yield();
	while (!n->stop) {
		(void)*(volatile uint64_t *)NL_VA;
		struct region_op ops[2] = {
			{ .op = ROP_UNMAP, .va = NL_VA, .len = 4096 },
			{ .op = ROP_MARK_PAGER, .prot = PROT_R | PROT_W, .va = NL_VA, .len = 4096,
			  .arg = NL_TAG },
		};
		if (region_txn(SLOT_SELF_AS, NL_VA, NL_VA + 4096, ops, 2) != 2)
			break;
		n->count++;
	}
	uint64_t w[4] = { ~0ULL, 0, 0, 0 };
	ipc(SYS_CALL, n->fe, w, SLOT_NONE);
	__atomic_or_fetch(&n->done, 2, __ATOMIC_SEQ_CST);
}

/* On hart 0: once the pair runs, hold mk_lock until the pair has made
 * HOLD_NEED more events (or HOLD_GUARD_US passed) and count what the pair
 * did meanwhile. */
static void nl_holder(void *a)
{
	struct nl *n = a;
	while (n->count < WARM && !n->stop)
		sys_yield();
	long c = dbg(DBG_HOLD_MKLOCK, HOLD_GUARD_US | (uint64_t)HOLD_NEED << 32,
		     (uint64_t)&n->count);
	n->held = c < 0 ? 0 : c;
	n->held_err = c < 0 ? c : 0;
	__atomic_or_fetch(&n->done, 4, __ATOMIC_SEQ_CST);
}

/* Run a pair (a and b, pinned to hart 1) and the holder (hart 0); the
 * count moved during the hold, or -1 with why filled. */
static long pair_under_hold(char *why, const char *what, void (*a)(void *), void (*b)(void *))
{
	static struct nl n;
	memset((void *)&n, 0, sizeof n);
	n.ep = slot_alloc();
	if (ep_create(n.ep)) {
		snprintf(why, 160, "%s: ep_create", what);
		slot_release(n.ep);
		return -1;
	}
	int pager = b == nl_faulter;
	n.fe = -1;
	if (pager) {
		n.fe = slot_alloc();
		if (cap_mint(n.ep, n.fe, R_SEND, 0, 0, 0) || !pg_mark_pager(SLOT_SELF_AS, NL_VA, 4096, NL_TAG)) {
			snprintf(why, 160, "%s: mint or mark the page", what);
			n.stop = 1;
		}
	}
	void (*fn[3])(void *) = { a, b, nl_holder };
	long th[3] = { -1, -1, -1 };
	for (int i = 0; i < 3 && !n.stop; i++)
		th[i] = uthread_start(fn[i], &n, i == 2 ? 0 : 1, 1);
	if (pager && th[1] >= 0 && fault_ep_set(th[1], n.fe)) {
		snprintf(why, 160, "%s: fault_ep_set", what);
		n.stop = 1;
	}
	n.go = 1;
	int all = th[0] >= 0 && th[1] >= 0 && th[2] >= 0;
	uint64_t t0 = rdtime();
	while (!(n.done & 4) && all && rdtime() - t0 < 60 * ticks_per_sec())
		sys_yield();
	n.stop = 1;
	while (n.done != 7 && all && rdtime() - t0 < 90 * ticks_per_sec())
		sys_yield();
	long done = n.done, r = n.held;
	for (int i = 0; i < 3; i++)
		if (th[i] >= 0)
			cap_delete(th[i]), slot_release(th[i]);
	if (pager) {
		struct region_op un[2] = { { .op = ROP_UNMAP, .va = NL_VA, .len = 4096 },
					   { .op = ROP_MARK_INVALID, .va = NL_VA, .len = 4096 } };
		region_txn(SLOT_SELF_AS, NL_VA, NL_VA + 4096, un, 2);
		cap_delete(n.fe), slot_release(n.fe);
	}
	cap_delete(n.ep), slot_release(n.ep);
	if (*why)
		r = -1;
	else if (th[0] < 0 || th[1] < 0 || th[2] < 0)
		snprintf(why, 160, "%s: thread start %ld %ld %ld", what, th[0], th[1], th[2]), r = -1;
	else if (done != 7)
		snprintf(why, 160, "%s: threads finished %lx of 7 (count %ld)", what, done, n.count), r = -1;
	else if (n.held_err)
		snprintf(why, 160, "%s: DBG_HOLD_MKLOCK: %s", what, err_name(n.held_err)), r = -1;
	return r;
}

/* While one hart holds mk_lock with interrupts off, a call/reply-and-
 * receive pair (the fast path), then a send/receive pair (the general
 * path), then a pager and a client whose every access faults to it,
 * pinned to another hart, keep going. (The pairs run one after the
 * other: a call/reply pair hands the hart back and forth directly and
 * would leave a same-level pair on that hart only the timer ticks.)
 *
 * Bound: each hold lasts until the pair has made HOLD_NEED (20) events,
 * the time limit (10 s) only a hang guard, so a slow or loaded host
 * stretches the hold instead of failing it. It still fails if IPC or a
 * pager fault took mk_lock: the counter is bumped in user space after a
 * completed call, so once the holder has the lock a pair can finish at
 * most the one operation already past the kernel (one count) and then
 * blocks on mk_lock; the count stays below HOLD_NEED and the hold runs
 * out its guard. */
int u_ipc_no_mk_lock(char *why)
{
	if (dbg(DBG_NCPUS, 0, 0) < 2) {
		printf("  (one hart: nothing runs beside the lock holder, not judged)\n");
		return 0;
	}
	long calls = pair_under_hold(why, "call/reply", nl_server, nl_client);
	if (calls < 0)
		return 1;
	long sends = pair_under_hold(why, "send/receive", nl_receiver, nl_sender);
	if (sends < 0)
		return 1;
	long faults = pair_under_hold(why, "pager", nl_pager, nl_faulter);
	if (faults < 0)
		return 1;
	printf("  while mk_lock was held (until %d events each, guard %d s): %ld round trips, "
	       "%ld sends, %ld pager faults\n", HOLD_NEED, HOLD_GUARD_US / 1000000, calls, sends,
	       faults);
	CHECK(calls >= HOLD_NEED && sends >= HOLD_NEED && faults >= HOLD_NEED,
	      "stood still under mk_lock for %d s: %ld round trips, %ld sends, %ld pager faults "
	      "(need %d each)", HOLD_GUARD_US / 1000000, calls, sends, faults, HOLD_NEED);
	return 0;
}
