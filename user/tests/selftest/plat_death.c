/* Death notices (SYS_TASK_NOTIFY; selftest names plat_death_notice and
 * plat_client_dies_mid_fault) and the child roles they use.
 *
 * plat_death_notice: a child registered with our endpoint dies by exit,
 * by kill and by each kind of trap; we receive exactly one MSG_DEATH per
 * death with its exit status (the same one SYS_TASK_WAIT returns:
 * EXIT_KILLED, EXIT_TRAP(kind) for traps) and the badge of the cap we
 * registered; a receive takes a notice before a sender queued earlier;
 * NOTIFY_WATCHERS_MAX watchers (we and other tasks, which exit before the
 * watched one) each get their own, one more is refused (E_BUSY), and so is
 * a watcher out of endpoint quota (E_QUOTA); replacing, cancelling, the
 * endpoint dying first and the refusals change what they should and
 * nothing else; counts come back.
 *
 * plat_client_dies_mid_fault: we are the pager of child clients (their
 * fault endpoint is ours) and watch their deaths. Client 1 faults, we save
 * the reply (SYS_REPLY_SAVE) and hold it, the client is killed: the death
 * notice comes, SYS_REPLY_CAP on the saved reply fails with E_DEAD and
 * uses the cap up. Client 2 is killed while its fault call is queued: the
 * notice comes and no fault call is left. Client 3 is served (a frame
 * mapped, FAULT_RESUME) and exits on its own: its notice says 32. Counts
 * come back.
 *
 * Every wait for a notice is timed (5 s), so a kernel that sends none
 * fails the tests instead of hanging them. */
#include "ulib.h"
#include "selftest.h"
#include <patina/pager.h>

#define CK(c, ...) do { if (!(c)) { if (!why[0]) snprintf(why, 160, __VA_ARGS__); goto out; } } while (0)

#define PD_FRAMES 256
#define NOTE_WAIT_US 5000000ULL        /* a notice that does not come in 5 s never will */
#define QUIET_US 30000ULL              /* "nothing more comes" */
#define B_READY 0x4ead1ULL
#define B_DEATH 0xdea7ULL
#define B_DEATH2 0xdea72ULL
#define B_CALL 0xca11ULL
#define B_FAULT 0xfa17ULL
#define B_W 0x77ULL                    /* the second watcher's calls */
#define B_WNOTE 0x77deULL              /* ... and its notices */

/* ROLE_DEATH_CHILD: what the parent's answer to our ready call says. */
enum { DC_EXIT = 1, DC_READ, DC_WRITE, DC_EXEC, DC_ILLEGAL, DC_BREAK, DC_BLOCK };


/* --- child roles --- */

/* ROLE_DEATH_CHILD: one call through the given cap ("ready"), then die as
 * the answer says: exit with w1 (after ~20 ms, so the parent is most
 * likely waiting in its receive by then), or take a trap, or block until
 * killed. */
static int death_child(void)
{
	if (given_cap_type() != CAP_ENDPOINT)
		return 60;
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	if (r.a0)
		return 61;
	volatile uint64_t bad = 8;     /* hidden from the compiler */
	switch (r.a1) {
	case DC_EXIT:
		pause_ms(20);
		return (int)r.a2;
	case DC_READ:
		return (int)*(volatile uint64_t *)(uintptr_t)bad;
	case DC_WRITE:
		*(volatile uint64_t *)(uintptr_t)bad = 1;
		break;
	case DC_EXEC: {
		void (*fn)(void) = (void (*)(void))(uintptr_t)(bad + 0x7e000000UL);
		fn();
		break;
	}
	case DC_ILLEGAL:
		uarch_illegal_insn();
		break;
	case DC_BREAK:
		uarch_breakpoint();
		break;
	case DC_BLOCK: {
		long ep = slot_alloc();
		if (ep < 0 || ep_create(ep))
			return 62;
		ipc(SYS_RECV, ep, w, SLOT_NONE);     /* nobody sends: until killed */
		return 63;
	}
	}
	return 64;
}

/* ROLE_DEATH_WATCHER: another watcher. The given cap is the parent's
 * endpoint (R_SEND | R_GRANT, badge B_W). We hand the parent an endpoint
 * of ours (a call carrying it), receive on it the task cap to watch and a
 * cap to notify (two sends), then: register; try to create an endpoint
 * (w1: the registration counts against our endpoint quota); cancel (w2);
 * create one again (w3: the cancel gave it back) and delete it; register
 * again (w0). We report w0..w3 in a call and exit 0: the registration
 * outlives us. */
static int death_watcher(void)
{
	if (given_cap_type() != CAP_ENDPOINT)
		return 70;
	long mine = slot_alloc(), task = slot_alloc(), note = slot_alloc();
	if (mine < 0 || task < 0 || note < 0 || ep_create(mine))
		return 71;
	uint64_t w[4] = { 0 };
	if (ipc(SYS_CALL, SLOT_GIVEN, w, mine).a0)
		return 72;
	struct sysret r = ipc(SYS_RECV, mine, w, task);
	if (r.a0 || !(r.a6 & IPC_GOT_CAP))
		return 73;
	r = ipc(SYS_RECV, mine, w, note);
	if (r.a0 || !(r.a6 & IPC_GOT_CAP))
		return 74;
	long tmp = slot_alloc();
	sc2(SYS_TASK_NOTIFY, task, note);
	w[1] = (uint64_t)ep_create(tmp);
	cap_delete(tmp);
	w[2] = (uint64_t)sc2(SYS_TASK_NOTIFY, task, SLOT_NONE);
	w[3] = (uint64_t)ep_create(tmp);
	cap_delete(tmp);
	w[0] = (uint64_t)sc2(SYS_TASK_NOTIFY, task, note);
	if (ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE).a0)
		return 75;
	return 0;
}

int death_role(long arg)
{
	switch (arg & 0xff) {
	case ROLE_DEATH_CHILD: return death_child();
	case ROLE_DEATH_WATCHER: return death_watcher();
	}
	return 100;
}

/* --- helpers of the tests --- */

static long notify(long task, long ep) { return sc2(SYS_TASK_NOTIFY, task, ep); }

/* Counters back where they were: objects, caps and notices, and frames
 * too when `frames` (pg_counters_back's rules). */
static int counts_back(const struct kcounters *a, int frames, char *why)
{
	if (pg_counters_back(a, frames, why))
		return 1;
	struct kcounters b;
	for (int i = 0; i < 200; i++) {
		dbg(DBG_COUNTERS, (uint64_t)&b, 0);
		if (b.notices == a->notices)
			return 0;
		pause_ms(10);
	}
	snprintf(why, 160, "leak: %ld death notices", (long)(b.notices - a->notices));
	return 1;
}

static unsigned long notices_now(void)
{
	struct kcounters k;
	dbg(DBG_COUNTERS, (uint64_t)&k, 0);
	return k.notices;
}

/* Spawn a ROLE_DEATH_CHILD (ready cap `rd`, quota `quota`) into *task and
 * receive its ready call, leaving it unanswered (our pending caller). */
static long victim_start(long ep, long rd, long *task, long quota)
{
	*task = slot_alloc();
	long r = task_spawn_q(self_module(), ROLE_DEATH_CHILD, *task, quota, rd);
	if (r)
		return r;
	uint64_t w[4] = { 0 };
	struct sysret m = ipc(SYS_RECV, ep, w, SLOT_NONE);
	if (m.a0)
		return m.a0;
	return (uint64_t)m.a5 == B_READY ? 0 : -E_INVAL;
}

/* Answer the victim's ready call with its way to die: our pending
 * caller, or through the reply cap in `saved` (>= 0). */
static long victim_go(uint64_t how, uint64_t status, long saved)
{
	uint64_t w[4] = { how, status, 0, 0 };
	if (saved >= 0)
		return ipc(SYS_REPLY_CAP, saved, w, SLOT_NONE).a0;
	return ipc(SYS_REPLY, 0, w, SLOT_NONE).a0;
}

/* Receive one death notice on ep (5 s at most) and check it: badge,
 * MSG_DEATH, status. 0 or 1 with why filled. */
static int expect_notice(long ep, uint64_t badge, long status, const char *what, char *why)
{
	uint64_t w[4] = { 0 };
	struct sysret m = ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, NOTE_WAIT_US);
	CK(m.a0 == 0, "%s: no death notice (%s)", what, err_name(m.a0));
	CK((uint64_t)m.a5 == badge, "%s: badge %lx, wanted %lx", what, m.a5, badge);
	CK((uint64_t)m.a1 == MSG_DEATH, "%s: w0 %lx, not MSG_DEATH", what, m.a1);
	CK(m.a2 == status, "%s: status %ld in the notice, wanted %ld", what, m.a2, status);
	CK(m.a3 >= 0 && m.a3 < 4096 && m.a4 == 0 && m.a6 == 0, "%s: w2 %ld w3 %ld a6 %ld", what,
	   m.a3, m.a4, m.a6);
	return 0;
out:
	return 1;
}

/* Nothing more arrives on ep for a while. */
static int expect_quiet(long ep, const char *what, char *why)
{
	uint64_t w[4] = { 0 };
	struct sysret m = ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, QUIET_US);
	CK(m.a0 == -E_TIMEDOUT, "%s: a message came (%ld, w0 %lx badge %lx)", what, m.a0, m.a1, m.a5);
	return 0;
out:
	return 1;
}

/* A thread of ours that calls ep (badge B_CALL) and records the answer:
 * a sender queued there while a notice arrives. */
static struct { long slot; volatile long r, a1, done; } qc;
static void queued_caller(void *a)
{
	(void)a;
	uint64_t w[4] = { 5, 0, 0, 0 };
	struct sysret r = ipc(SYS_CALL, qc.slot, w, SLOT_NONE);
	qc.r = r.a0;
	qc.a1 = r.a1;
	__atomic_store_n(&qc.done, 1, __ATOMIC_RELEASE);
}

/* Spawn a ROLE_DEATH_WATCHER with an endpoint quota of eps (its own
 * endpoint takes one), have it register a notice on `task` through wn
 * (badge B_WNOTE), and wait for it to exit. 0 with its report in res[4]
 * (its role says what), or why not (the watcher is killed and reaped). */
static long watcher_run(long ep, long wg, long wn, long task, int eps, long *res)
{
	long wt = slot_alloc(), we = slot_alloc(), r;
	uint64_t w[4] = { 0 };
	struct sysret m;
	if ((r = task_spawn_q(self_module(), ROLE_DEATH_WATCHER, wt, QUOTA(PD_FRAMES, 2, eps, 0), wg))) {
		slot_release(wt), slot_release(we);
		return r;
	}
	m = ipc_timed(SYS_RECV_TIMED, ep, w, we, NOTE_WAIT_US);
	r = m.a0 ? m.a0 : (uint64_t)m.a5 != B_W || !(m.a6 & IPC_GOT_CAP) ? -E_INVAL : 0;
	r = r ? r : ipc(SYS_REPLY, 0, w, SLOT_NONE).a0;
	r = r ? r : ipc(SYS_SEND, we, w, task).a0;
	r = r ? r : ipc(SYS_SEND, we, w, wn).a0;
	if (!r) {
		m = ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, NOTE_WAIT_US);
		r = m.a0 ? m.a0 : (uint64_t)m.a5 != B_W ? -E_INVAL : 0;
		res[0] = m.a1, res[1] = m.a2, res[2] = m.a3, res[3] = m.a4;
	}
	r = r ? r : ipc(SYS_REPLY, 0, w, SLOT_NONE).a0;
	if (r)
		task_kill(wt);
	long st = task_wait(wt);
	if (!r && st)
		r = -E_INVAL;
	slot_drop(&wt), slot_drop(&we);
	return r;
}

/* --- plat_death_notice --- */

int plat_death_notice(char *why)
{
	static const struct { uint64_t how, status; long want; const char *what; } deaths[] = {
		{ DC_EXIT, 7, 7, "exit 7" },
		{ DC_EXIT, 0, 0, "exit 0" },
		{ DC_BLOCK, 0, EXIT_KILLED, "kill" },
		{ DC_READ, 0, EXIT_TRAP(TRAP_READ_FAULT), "read fault" },
		{ DC_WRITE, 0, EXIT_TRAP(TRAP_WRITE_FAULT), "write fault" },
		{ DC_EXEC, 0, EXIT_TRAP(TRAP_EXEC_FAULT), "exec fault" },
		{ DC_ILLEGAL, 0, EXIT_TRAP(TRAP_ILLEGAL), "illegal instruction" },
		{ DC_BREAK, 0, EXIT_TRAP(TRAP_BREAKPOINT), "breakpoint" },
	};
	const long quota = QUOTA(PD_FRAMES, 2, 2, 0);
	struct kcounters before;
	why[0] = 0;
	settled_counters(&before);
	long ep = slot_alloc(), rd = slot_alloc(), dn = slot_alloc(), dn2 = slot_alloc(),
	     ro = slot_alloc(), nc = slot_alloc(), e3 = slot_alloc(), cs = slot_alloc(),
	     wg = slot_alloc(), wn = slot_alloc();
	long task = -1, th = -1, vr = -1;
	long r;
	CK(ep_create(ep) == 0, "ep_create");
	CK(cap_mint(ep, rd, R_SEND, B_READY, 0, 0) == 0 && cap_mint(ep, dn, R_SEND, B_DEATH, 0, 0) == 0 &&
	   cap_mint(ep, dn2, R_SEND, B_DEATH2, 0, 0) == 0 && cap_mint(ep, ro, R_RECV, 0, 0, 0) == 0 &&
	   cap_mint(ep, cs, R_SEND, B_CALL, 0, 0) == 0 &&
	   cap_mint(ep, wg, R_SEND | R_GRANT, B_W, 0, 0) == 0 && cap_mint(ep, wn, R_SEND, B_WNOTE, 0, 0) == 0,
	   "mint");

	/* 1. One notice per death, each kind of death. */
	for (unsigned i = 0; i < sizeof deaths / sizeof deaths[0]; i++) {
		unsigned long n0 = notices_now();
		CK((r = victim_start(ep, rd, &task, quota)) == 0, "%s: spawn: %s", deaths[i].what, err_name(r));
		CK((r = notify(task, dn)) == 0, "%s: notify: %s", deaths[i].what, err_name(r));
		CK(notices_now() == n0 + 1, "%s: notices %lu -> %lu on registering", deaths[i].what, n0,
		   notices_now());
		CK(victim_go(deaths[i].how, deaths[i].status, -1) == 0, "%s: answer", deaths[i].what);
		if (deaths[i].how == DC_BLOCK) {
			pause_ms(10);
			CK(task_kill(task) == 0, "kill");
			/* Reaped before we receive: the notice waits, queued. */
			CK((r = task_wait(task)) == EXIT_KILLED, "killed: wait says %ld", r);
		}
		if (expect_notice(ep, B_DEATH, deaths[i].want, deaths[i].what, why))
			goto out;
		CK((r = task_wait(task)) == deaths[i].want, "%s: wait says %ld, wanted %ld",
		   deaths[i].what, r, deaths[i].want);
		if (expect_quiet(ep, deaths[i].what, why))
			goto out;
		CK(notices_now() == n0, "%s: notices %lu -> %lu after receiving", deaths[i].what, n0,
		   notices_now());
		CK((r = notify(task, dn)) == -E_DEAD, "%s: notify on a dead task: %s", deaths[i].what,
		   err_name(r));
		slot_drop(&task);
	}

	/* 2. Refusals change nothing; replace; cancel; the endpoint dies first. */
	CK(victim_start(ep, rd, &task, quota) == 0, "spawn");
	CK(cap_mint(task, nc, R_READ, 0, 0, 0) == 0, "mint task without CONTROL");
	unsigned long n0 = notices_now();
	CK((r = notify(SLOT_SELF_AS, dn)) == -E_BADCAP, "region cap as task: %s", err_name(r));
	CK((r = notify(nc, dn)) == -E_PERM, "task cap without CONTROL: %s", err_name(r));
	CK((r = notify(task, ro)) == -E_PERM, "endpoint cap without SEND: %s", err_name(r));
	CK((r = notify(task, SLOT_SELF_TASK)) == -E_BADCAP, "task cap as endpoint: %s", err_name(r));
	CK((r = notify(task, 62)) == -E_BADCAP, "empty slot as endpoint: %s", err_name(r));
	CK((r = notify(task, SLOT_NONE)) == -E_NOENT, "cancel with none: %s", err_name(r));
	CK(notices_now() == n0, "refusals made notices (%lu -> %lu)", n0, notices_now());
	CK(notify(task, dn) == 0 && notify(task, dn2) == 0, "register, replace");
	CK(notices_now() == n0 + 1, "a replacement is a second notice (%lu -> %lu)", n0, notices_now());
	CK(notify(task, SLOT_NONE) == 0, "cancel");
	CK((r = notify(task, SLOT_NONE)) == -E_NOENT, "second cancel: %s", err_name(r));
	CK(notices_now() == n0, "cancel left a notice (%lu -> %lu)", n0, notices_now());
	CK(ep_create(e3) == 0 && notify(task, e3) == 0, "register on a second endpoint");
	CK(notices_now() == n0 + 1, "registered: %lu -> %lu", n0, notices_now());
	cap_delete(e3);            /* its only cap: the endpoint dies, the notice with it */
	CK(notices_now() == n0, "the endpoint died, its notice stayed (%lu -> %lu)", n0, notices_now());
	CK((r = notify(task, SLOT_NONE)) == -E_NOENT, "cancel after the endpoint died: %s", err_name(r));
	CK(notify(task, dn2) == 0, "register again");
	CK(victim_go(DC_EXIT, 9, -1) == 0, "answer");
	if (expect_notice(ep, B_DEATH2, 9, "after replace and cancel", why) ||
	    expect_quiet(ep, "after replace and cancel", why))
		goto out;
	CK(task_wait(task) == 9, "wait");
	slot_drop(&task);
	slot_drop(&nc);

	/* 3. A notice goes before a sender that queued earlier. */
	CK(victim_start(ep, rd, &task, quota) == 0, "spawn");
	CK(notify(task, dn) == 0, "notify");
	CK(victim_go(DC_BLOCK, 0, -1) == 0, "answer");
	qc.slot = cs;
	qc.done = 0;
	th = uthread_start(queued_caller, NULL, -1, 1);
	CK(th >= 0, "caller thread");
	pause_ms(20);              /* it queues its call */
	CK(task_kill(task) == 0 && task_wait(task) == EXIT_KILLED, "kill");
	if (expect_notice(ep, B_DEATH, EXIT_KILLED, "notice before a queued call", why))
		goto out;
	uint64_t w[4] = { 0 };
	struct sysret m = ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, NOTE_WAIT_US);
	CK(m.a0 == 0 && (uint64_t)m.a5 == B_CALL && m.a1 == 5, "the queued call: %ld badge %lx w0 %ld",
	   m.a0, m.a5, m.a1);
	w[0] = 6;
	CK(ipc(SYS_REPLY, 0, w, SLOT_NONE).a0 == 0, "reply to the call");
	for (int i = 0; i < 500 && !__atomic_load_n(&qc.done, __ATOMIC_ACQUIRE); i++)
		pause_ms(10);
	CK(qc.done && qc.r == 0 && qc.a1 == 6, "caller got %ld/%ld", qc.r, qc.a1);
	slot_drop(&th);
	slot_drop(&task);

	/* 4. NOTIFY_WATCHERS_MAX watchers: we and other tasks, which exit
	 * before the watched one (their registrations outlive them, paid by
	 * their parent: us). One more is refused E_BUSY; before that, one
	 * whose endpoint quota its own endpoint uses up is refused E_QUOTA. */
	CK(victim_start(ep, rd, &task, quota) == 0, "spawn");
	vr = slot_alloc();
	CK(sc1(SYS_REPLY_SAVE, vr) == 0, "save the victim's reply");   /* we receive others meanwhile */
	n0 = notices_now();
	CK(notify(task, dn) == 0, "our notify");
	/* The watcher reports: notify, ep_create while registered, cancel,
	 * ep_create after it (see its role). */
	long res[4];
	CK((r = watcher_run(ep, wg, wn, task, 1, res)) == 0, "watcher with 1 endpoint: %s", err_name(r));
	CK(res[0] == -E_QUOTA && res[1] == -E_QUOTA && res[2] == -E_NOENT && res[3] == -E_QUOTA,
	   "watcher with its endpoint quota used up: notify %s, cancel %s", err_name(res[0]),
	   err_name(res[2]));
	CK(notices_now() == n0 + 1, "a refused notify made a notice (%lu -> %lu)", n0, notices_now());
	for (int k = 1; k < NOTIFY_WATCHERS_MAX; k++) {
		CK((r = watcher_run(ep, wg, wn, task, 2, res)) == 0, "watcher %d: %s", k, err_name(r));
		CK(res[0] == 0 && res[1] == -E_QUOTA && res[2] == 0 && res[3] == 0,
		   "watcher %d: notify %s, ep_create while registered %s, cancel %s, ep_create after %s", k,
		   err_name(res[0]), err_name(res[1]), err_name(res[2]), err_name(res[3]));
	}
	CK(notices_now() == n0 + NOTIFY_WATCHERS_MAX, "notices %lu -> %lu with %d watchers gone", n0,
	   notices_now(), NOTIFY_WATCHERS_MAX - 1);
	CK((r = watcher_run(ep, wg, wn, task, 2, res)) == 0, "one watcher more: %s", err_name(r));
	CK(res[0] == -E_BUSY && res[1] == 0 && res[2] == -E_NOENT, "watcher past NOTIFY_WATCHERS_MAX: %s",
	   err_name(res[0]));
	CK(victim_go(DC_WRITE, 0, vr) == 0, "answer");
	slot_drop(&vr);
	int got_ours = 0, got_theirs = 0;
	for (int k = 0; k < NOTIFY_WATCHERS_MAX; k++) {
		m = ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, NOTE_WAIT_US);
		CK(m.a0 == 0 && (uint64_t)m.a1 == MSG_DEATH && m.a2 == EXIT_TRAP(TRAP_WRITE_FAULT),
		   "notice %d: %ld w0 %lx status %ld", k, m.a0, m.a1, m.a2);
		got_ours += (uint64_t)m.a5 == B_DEATH;
		got_theirs += (uint64_t)m.a5 == B_WNOTE;
	}
	CK(got_ours == 1 && got_theirs == NOTIFY_WATCHERS_MAX - 1, "notices: ours %d, the watchers' %d",
	   got_ours, got_theirs);
	if (expect_quiet(ep, "many watchers", why))
		goto out;
	CK(task_wait(task) == EXIT_TRAP(TRAP_WRITE_FAULT), "wait");
	slot_drop(&task);
	CK(notices_now() == n0, "notices %lu -> %lu", n0, notices_now());
out:
	if (why[0]) {
		if (task >= 0) {
			task_kill(task);
			task_wait(task);
		}
		if (th >= 0)
			sc1(SYS_THREAD_KILL, th);
	}
	slot_drop(&task), slot_drop(&th), slot_drop(&vr);
	slot_drop(&ep), slot_drop(&rd), slot_drop(&dn), slot_drop(&dn2), slot_drop(&ro);
	slot_drop(&nc), slot_drop(&e3), slot_drop(&cs), slot_drop(&wg), slot_drop(&wn);
	if (why[0])
		return 1;
	return counts_back(&before, 0, why);
}

/* --- plat_client_dies_mid_fault --- */

/* Spawn a ROLE_PG_CLIENT (write mode) into *task with our fault endpoint
 * (fe) and a death notice (dn) set, and answer its ready call. */
static long client_start(long ep, long rd, long fe, long dn, long *task)
{
	*task = slot_alloc();
	long r = task_spawn(self_module(), ROLE_PG_CLIENT | (1 << 8), *task, PD_FRAMES, rd);
	if (!r)
		r = fault_ep_set(*task, fe);
	if (!r)
		r = notify(*task, dn);
	uint64_t w[4] = { 0 };
	struct sysret m = r ? (struct sysret){ r, 0, 0, 0, 0, 0, 0 } :
			      ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, NOTE_WAIT_US);
	if (!r && !(r = m.a0) && (uint64_t)m.a5 != B_READY)
		r = -E_INVAL;
	if (!r)
		r = ipc(SYS_REPLY, 0, w, SLOT_NONE).a0;
	return r;
}

int plat_client_dies_mid_fault(char *why)
{
	struct kcounters before;
	why[0] = 0;
	settled_counters(&before);
	long ep = slot_alloc(), rd = slot_alloc(), fe = slot_alloc(), dn = slot_alloc(),
	     rs = slot_alloc(), rc = slot_alloc(), fr = slot_alloc();
	long task = -1, r;
	uint64_t w[4] = { 0 };
	struct sysret m;
	struct cap_info ci;
	CK(ep_create(ep) == 0, "ep_create");
	CK(cap_mint(ep, rd, R_SEND, B_READY, 0, 0) == 0 && cap_mint(ep, fe, R_SEND, B_FAULT, 0, 0) == 0 &&
	   cap_mint(ep, dn, R_SEND, B_DEATH, 0, 0) == 0, "mint");

	/* 1. Killed while we hold its fault's reply. */
	CK((r = client_start(ep, rd, fe, dn, &task)) == 0, "client 1: %s", err_name(r));
	m = ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, NOTE_WAIT_US);
	CK(m.a0 == 0 && (uint64_t)m.a5 == B_FAULT && (uint64_t)m.a1 == PG_CLIENT_VA &&
	   (uint64_t)m.a2 == FA_WRITE, "client 1's fault: %ld badge %lx va %lx w1 %lx", m.a0, m.a5, m.a1,
	   m.a2);
	CK(sc1(SYS_REPLY_SAVE, rs) == 0, "reply save");
	CK(task_kill(task) == 0, "kill client 1");
	if (expect_notice(ep, B_DEATH, EXIT_KILLED, "client 1 killed mid-fault", why))
		goto out;
	w[0] = FAULT_RESUME;
	r = ipc(SYS_REPLY_CAP, rs, w, SLOT_NONE).a0;
	CK(r == -E_DEAD, "the saved reply to a dead client: %s, wanted E_DEAD", err_name(r));
	CK(cap_info(rs, &ci) == -E_BADCAP, "the saved reply cap was not used up");
	CK((r = task_wait(task)) == EXIT_KILLED, "client 1 exit %ld", r);
	slot_drop(&task);

	/* 2. Killed while its fault call waits in our queue (we do not
	 * receive): the notice comes, the call is gone. */
	CK((r = client_start(ep, rd, fe, dn, &task)) == 0, "client 2: %s", err_name(r));
	pause_ms(30);
	CK(task_kill(task) == 0, "kill client 2");
	CK((r = task_wait(task)) == EXIT_KILLED, "client 2 exit %ld", r);
	if (expect_notice(ep, B_DEATH, EXIT_KILLED, "client 2 killed with its fault queued", why) ||
	    expect_quiet(ep, "client 2's fault call after its death", why))
		goto out;
	slot_drop(&task);

	/* 3. We carry on: the next client is served and exits on its own. */
	CK((r = client_start(ep, rd, fe, dn, &task)) == 0, "client 3: %s", err_name(r));
	m = ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, NOTE_WAIT_US);
	CK(m.a0 == 0 && (uint64_t)m.a5 == B_FAULT && (uint64_t)m.a1 == PG_CLIENT_VA, "client 3's fault: %ld",
	   m.a0);
	CK(task_region(task, rc) == 0 && frame_alloc(fr) == 0, "region cap, frame");
	struct region_op op = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = PG_CLIENT_VA, .arg = fr };
	CK(region_txn(rc, PG_CLIENT_VA, PG_CLIENT_VA + 4096, &op, 1) == 1, "map: %s",
	   err_name(op.result));
	w[0] = FAULT_RESUME;
	CK(ipc(SYS_REPLY, 0, w, SLOT_NONE).a0 == 0, "resume client 3");
	if (expect_notice(ep, B_DEATH, 32, "client 3 served", why))
		goto out;
	CK((r = task_wait(task)) == 32, "client 3 exit %ld", r);
out:
	if (why[0] && task >= 0) {
		task_kill(task);
		task_wait(task);
	}
	slot_drop(&task), slot_drop(&ep), slot_drop(&rd), slot_drop(&fe), slot_drop(&dn);
	slot_drop(&rs), slot_drop(&rc), slot_drop(&fr);
	if (why[0])
		return 1;
	return counts_back(&before, 1, why);
}
