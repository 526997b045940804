/* Asynchronous faults (selftest names async_*): a setting made with
 * FAULT_EP_ASYNC sends one MSG_FAULT notice per waited-on page, and the
 * commit that fixes the page wakes every thread waiting there. The pager
 * is this thread; the clients are threads of ours (their own settings),
 * or a ROLE_PG_CLIENT child where the client must die. */
#include "ulib.h"
#include "selftest.h"
#include <patina/pager.h>

#define FAIL(...) do { snprintf(why, 160, __VA_ARGS__); return 1; } while (0)
#define CHECK(c, ...) do { if (!(c)) FAIL(__VA_ARGS__); } while (0)

#define AV  0x56000000UL        /* clients' pages (2 MiB aligned) */
#define ASW 0x56400000UL        /* supply source */
#define PG  0x1000UL
#define NSUP 8

struct ac { volatile long go, done; uint64_t va; volatile uint64_t got; long th; };

static void async_client(void *a)
{
	struct ac *c = a;
	while (!c->go)
		sys_yield();
	c->got = *(volatile uint64_t *)c->va;
	c->done = 1;
}

static long setf(long target, long ep, long flags)
{
	return sc3(SYS_FAULT_EP_SETF, target, ep, flags);
}

static long waits_now(void)
{
	struct kcounters k;
	dbg(DBG_COUNTERS, (uint64_t)&k, 0);
	return (long)k.pagewaits;
}

/* Threads waiting in page waits. */
static long waiters_now(void)
{
	struct kcounters k;
	dbg(DBG_COUNTERS, (uint64_t)&k, 0);
	return (long)k.pagewait_threads;
}

/* Up to a second for n threads to wait: 1 when they do. */
static int waiters_reach(long n)
{
	for (int i = 0; i < 200 && waiters_now() != n; i++)
		pause_ms(5);
	return waiters_now() == n;
}

/* Start a client thread reading c->va, its own setting asynchronous on
 * fault cap fe. */
static int client_go(char *why, struct ac *c, long fe)
{
	c->th = uthread_start(async_client, c, -1, 1);
	CHECK(c->th >= 0, "client thread %ld", c->th);
	long r = setf(c->th, fe, FAULT_EP_ASYNC);
	CHECK(r == 0, "SYS_FAULT_EP_SETF: %s", err_name(r));
	c->go = 1;
	return 0;
}

static int done_within(volatile long *d, long ms)
{
	uint64_t end = rdtime() + (uint64_t)ms * (ticks_per_sec() / 1000);
	while (!*d && rdtime() < end)
		sys_yield();
	return *d != 0;
}

/* Receive one fault notice; its words checked against va and the badge. */
static int recv_fault(char *why, long ep, uint64_t va, struct sysret *out)
{
	uint64_t w[4] = { 0 };
	struct sysret r = ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, 2000000);
	CHECK(r.a0 == 0, "recv: %s", err_name(r.a0));
	CHECK((uint64_t)r.a1 == MSG_FAULT, "w0 %lx, not MSG_FAULT", r.a1);
	CHECK(!va || (uint64_t)r.a2 == va, "fault address %lx, wanted %lx", r.a2, va);
	CHECK((uint64_t)r.a5 == BADGE_FAULT, "badge %lx", r.a5);
	CHECK(!(r.a6 & IPC_GOT_CAP), "a cap came with the notice");
	if (out)
		*out = r;
	return 0;
}

/* No message within ms. */
static int recv_nothing(char *why, long ep, long ms)
{
	uint64_t w[4] = { 0 };
	struct sysret r = ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, (uint64_t)ms * 1000);
	CHECK(r.a0 == -E_TIMEDOUT, "a message nobody should send: %s w0 %lx w1 %lx", err_name(r.a0),
	      r.a1, r.a2);
	return 0;
}

static void drop(long *s)
{
	if (*s >= 0) {
		cap_delete(*s);
		slot_release(*s);
	}
	*s = -1;
}

/* The endpoint and its fault cap (R_SEND, BADGE_FAULT). */
static int ep_pair(char *why, long *ep, long *fe)
{
	*ep = slot_alloc(), *fe = slot_alloc();
	CHECK(ep_create(*ep) == 0, "ep_create");
	CHECK(cap_mint(*ep, *fe, R_SEND, BADGE_FAULT, 0, 0) == 0, "mint the fault cap");
	return 0;
}

int async_fault_notice(char *why)
{
	const uint64_t tag = 0x4321;
	struct kcounters before, k;
	settled_counters(&before);
	long ep, fe, f = -1;
	if (ep_pair(why, &ep, &fe))
		return 1;
	CHECK(pg_mark_pager(SLOT_SELF_AS, AV, PG, tag), "mark pager");
	struct ac c = { .va = AV + 8 };
	if (client_go(why, &c, fe))
		return 1;
	struct sysret m;
	if (recv_fault(why, ep, AV + 8, &m))
		return 1;
	CHECK(FAULT_STATUS_KIND(m.a3) == RK_PAGER && FAULT_STATUS_TAG((uint64_t)m.a3) == tag,
	      "status kind %u tag %lx", FAULT_STATUS_KIND(m.a3), FAULT_STATUS_TAG((uint64_t)m.a3));
	CHECK(FAULT_ACCESS(m.a4) == FA_READ, "access %u", FAULT_ACCESS(m.a4));
	CHECK(FAULT_THREAD(m.a4) >= 0 && FAULT_THREAD(m.a4) < 4096, "thread id %ld", FAULT_THREAD(m.a4));
	/* Nothing to reply to, and the fault took no cap. */
	dbg(DBG_COUNTERS, (uint64_t)&k, 0);
	uint64_t w[4] = { FAULT_RESUME, 0, 0, 0 };
	CHECK(ipc(SYS_REPLY, 0, w, SLOT_NONE).a0 != 0, "a reply to a fault notice was taken");
	CHECK(k.pagewaits == 1, "pages waited on: %lu", k.pagewaits);
	CHECK(!c.done, "the client ran on before its page was supplied");
	CHECK(pg_map_frame_with(AV, 8, 0xa51c, &f) == 0, "map the page");
	CHECK(done_within(&c.done, 1000), "client not woken by the map");
	CHECK(c.got == 0xa51c, "client read %lx", c.got);
	CHECK(waits_now() == 0, "a page wait left after the wake-up");
	pg_unmap(AV, PG);
	drop(&f), drop(&c.th), drop(&fe), drop(&ep);
	return pg_counters_back(&before, 0, why);
}

int async_reverse_order(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	long ep, fe, f1 = -1, f2 = -1;
	if (ep_pair(why, &ep, &fe))
		return 1;
	struct ac a = { .va = AV + 16 }, b = { .va = AV + PG + 24 };
	if (client_go(why, &a, fe) || recv_fault(why, ep, a.va, NULL))
		return 1;
	if (client_go(why, &b, fe) || recv_fault(why, ep, b.va, NULL))
		return 1;
	CHECK(pg_map_frame_with(AV + PG, 24, 0xb, &f2) == 0, "map b's page");
	CHECK(done_within(&b.done, 1000) && b.got == 0xb, "second fault not answered first: %lx", b.got);
	pause_ms(20);
	CHECK(!a.done, "first client woken by the second page's map");
	CHECK(pg_map_frame_with(AV, 16, 0xa, &f1) == 0, "map a's page");
	CHECK(done_within(&a.done, 1000) && a.got == 0xa, "first client: %lx", a.got);
	pg_unmap(AV, 2 * PG);
	drop(&f1), drop(&f2), drop(&a.th), drop(&b.th), drop(&fe), drop(&ep);
	return pg_counters_back(&before, 0, why);
}

int async_supply_wakes_all(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	long ep, fe;
	if (ep_pair(why, &ep, &fe))
		return 1;
	struct ac c[NSUP];
	uint64_t seen = 0;
	for (int i = 0; i < NSUP; i++) {
		c[i] = (struct ac){ .va = AV + (uint64_t)i * PG + 8 * (uint64_t)i };
		if (client_go(why, &c[i], fe))
			return 1;
	}
	for (int i = 0; i < NSUP; i++) {
		struct sysret m;
		if (recv_fault(why, ep, 0, &m))
			return 1;
		uint64_t k = ((uint64_t)m.a2 - AV) / PG;
		CHECK((uint64_t)m.a2 >= AV && k < NSUP && !(seen & (1u << k)), "fault at %lx", m.a2);
		seen |= 1u << k;
	}
	CHECK(waits_now() == NSUP && waiters_reach(NSUP), "pages waited on: %ld, threads %ld", waits_now(),
	      waiters_now());
	/* The source: anonymous pages of ours, each with its word. */
	struct region_op mk = { .op = ROP_MARK, .prot = PROT_R | PROT_W, .va = ASW, .len = NSUP * PG };
	CHECK(region_txn(SLOT_SELF_AS, ASW, ASW + NSUP * PG, &mk, 1) == 1, "mark the source");
	for (int i = 0; i < NSUP; i++)
		*(volatile uint64_t *)(ASW + i * PG + 8 * i) = 0x5000 + (uint64_t)i;
	long r = region_supply(SLOT_SELF_AS, AV, SLOT_SELF_AS, ASW, NSUP, PROT_R | PROT_W);
	CHECK(r == 0, "supply: %s", err_name(r));
	for (int i = 0; i < NSUP; i++)
		CHECK(done_within(&c[i].done, 1000) && c[i].got == 0x5000 + (uint64_t)i,
		      "client %d after the supply: done %ld read %lx", i, c[i].done, c[i].got);
	CHECK(waits_now() == 0, "a page wait left after the supply");
	if (recv_nothing(why, ep, 30))
		return 1;
	pg_unmap(AV, NSUP * PG);
	pg_unmap(ASW, NSUP * PG);
	for (int i = 0; i < NSUP; i++)
		drop(&c[i].th);
	drop(&fe), drop(&ep);
	return pg_counters_back(&before, 0, why);
}

int async_same_page(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	long ep, fe, f = -1;
	if (ep_pair(why, &ep, &fe))
		return 1;
	struct ac a = { .va = AV + 8 }, b = { .va = AV + 64 };
	if (client_go(why, &a, fe) || recv_fault(why, ep, a.va, NULL))
		return 1;
	if (client_go(why, &b, fe))
		return 1;
	CHECK(waiters_reach(2), "threads waiting: %ld", waiters_now());   /* b joined a's page */
	if (recv_nothing(why, ep, 50))
		return 1;
	CHECK(waits_now() == 1, "pages waited on: %ld", waits_now());
	CHECK(!a.done && !b.done, "a client ran on before the page was there");
	CHECK(pg_map_frame_with(AV, 64, 0x64, &f) == 0, "map the page");
	CHECK(done_within(&a.done, 1000) && done_within(&b.done, 1000), "woken: %ld %ld", a.done, b.done);
	CHECK(b.got == 0x64, "second client read %lx", b.got);
	pg_unmap(AV, PG);
	drop(&f), drop(&a.th), drop(&b.th), drop(&fe), drop(&ep);
	return pg_counters_back(&before, 0, why);
}

/* A ROLE_PG_CLIENT child (mode: 1 writes) whose task setting is
 * asynchronous; its ready call answered. Unless gone_first, its fault's
 * notice is received and checked. */
static int async_child(char *why, long ep, int write, int gone_first, long *task)
{
	long rd = slot_alloc(), fe = slot_alloc();
	*task = slot_alloc();
	CHECK(cap_mint(ep, rd, R_SEND, BADGE_READY, 0, 0) == 0 &&
	      cap_mint(ep, fe, R_SEND, BADGE_FAULT, 0, 0) == 0, "mint");
	CHECK(task_spawn(self_module(), ROLE_PG_CLIENT | (write << 8), *task, PG_FRAMES, rd) == 0, "spawn");
	CHECK(setf(*task, fe, FAULT_EP_ASYNC) == 0, "SYS_FAULT_EP_SETF on the child");
	drop(&rd), drop(&fe);
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, ep, w, SLOT_NONE);
	CHECK(r.a0 == 0 && (uint64_t)r.a5 == BADGE_READY, "ready: %ld badge %lx", r.a0, r.a5);
	if (gone_first)
		cap_delete(ep);        /* nobody can receive: the fault's notice is dropped */
	CHECK(ipc(SYS_REPLY, 0, w, SLOT_NONE).a0 == 0, "reply ready");
	struct sysret m;
	if (!gone_first && recv_fault(why, ep, PG_CLIENT_VA, &m))
		return 1;
	CHECK(gone_first || FAULT_ACCESS(m.a4) == (write ? FA_WRITE : FA_READ), "access %u",
	      FAULT_ACCESS(m.a4));
	return 0;
}

/* The pager's endpoint can no longer receive, after the client's notice
 * was taken (round 0) or before it was sent (round 1): the client dies as
 * for FAULT_KILL. */
int async_pager_gone(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	/* Round 2: the client task is killed while it waits (the pager
	 * lives on): its wait goes with it. */
	for (int round = 0; round < 3; round++) {
		long ep = slot_alloc(), task;
		CHECK(ep_create(ep) == 0, "ep_create");
		if (async_child(why, ep, 0, round == 1, &task))
			return 1;
		if (round == 0) {
			pause_ms(20);
			cap_delete(ep);        /* the notice was taken; the client waits on */
		}
		if (round == 2)
			CHECK(waits_now() == 1 && task_kill(task) == 0, "kill the waiting client");
		long st = task_wait(task);
		CHECK(st == (round == 2 ? EXIT_KILLED : EXIT_TRAP(TRAP_READ_FAULT)), "round %d: client exit %ld",
		      round, st);
		CHECK(waits_now() == 0, "round %d: a page wait left behind", round);
		drop(&task);
		if (round == 2)
			cap_delete(ep);
		slot_release(ep);
	}
	CHECK(waits_now() == 0, "a page wait left behind");
	return pg_counters_back(&before, 1, why);
}

int async_fault_kill(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	long ep = slot_alloc(), task, rc = slot_alloc(), ro = slot_alloc();
	CHECK(ep_create(ep) == 0, "ep_create");
	if (async_child(why, ep, 1, 0, &task))
		return 1;
	CHECK(task_region(task, rc) == 0, "the child's region cap");
	CHECK(cap_mint(rc, ro, R_QUERY, 0, PG_CLIENT_VA, PG_CLIENT_VA + 2 * PG) == 0, "a region cap without R_MAP");
	long r = sc2(SYS_FAULT_KILL, ro, PG_CLIENT_VA);
	CHECK(r == -E_PERM, "SYS_FAULT_KILL without R_MAP: %s", err_name(r));
	r = sc2(SYS_FAULT_KILL, rc, PG_CLIENT_VA + PG);
	CHECK(r == -E_NOENT, "SYS_FAULT_KILL of a page nobody waits on: %s", err_name(r));
	r = sc2(SYS_FAULT_KILL, rc, PG_CLIENT_VA + 8);
	CHECK(r == 0, "SYS_FAULT_KILL: %s", err_name(r));
	long st = task_wait(task);
	CHECK(st == EXIT_TRAP(TRAP_WRITE_FAULT), "client exit %ld after SYS_FAULT_KILL", st);
	CHECK(waits_now() == 0, "a page wait left behind");
	drop(&ro), drop(&rc), drop(&task), drop(&ep);
	return pg_counters_back(&before, 1, why);
}

int async_kill_waiter(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	long ep, fe, f = -1;
	if (ep_pair(why, &ep, &fe))
		return 1;
	/* Its notice still queued: the kill takes it back. */
	struct ac a = { .va = AV + 8 };
	if (client_go(why, &a, fe))
		return 1;
	CHECK(waiters_reach(1) && waits_now() == 1, "pages waited on: %ld (client done %ld)", waits_now(),
	      a.done);
	CHECK(sc1(SYS_THREAD_KILL, a.th) == 0, "kill the waiting thread");
	for (int i = 0; i < 100 && waits_now(); i++)
		pause_ms(5);
	CHECK(waits_now() == 0, "the killed thread's page wait is left");
	if (recv_nothing(why, ep, 30))
		return 1;
	/* One of two on a page: the other is still woken by the fix. */
	struct ac b = { .va = AV + PG + 8 }, c = { .va = AV + PG + 16 };
	if (client_go(why, &b, fe) || recv_fault(why, ep, b.va, NULL) || client_go(why, &c, fe))
		return 1;
	CHECK(waiters_reach(2), "threads waiting: %ld", waiters_now());
	CHECK(sc1(SYS_THREAD_KILL, b.th) == 0, "kill the first waiter");
	CHECK(waiters_reach(1) && waits_now() == 1, "after one of two died: %ld pages, %ld threads",
	      waits_now(), waiters_now());
	CHECK(pg_map_frame_with(AV + PG, 16, 0xc, &f) == 0, "map the page");
	CHECK(done_within(&c.done, 1000) && c.got == 0xc, "the other waiter: %ld %lx", c.done, c.got);
	CHECK(!a.done && !b.done, "a killed thread ran on");
	pg_unmap(AV, 2 * PG);
	drop(&f), drop(&a.th), drop(&b.th), drop(&c.th), drop(&fe), drop(&ep);
	CHECK(waits_now() == 0 && waiters_now() == 0, "a page wait left behind");
	return pg_counters_back(&before, 0, why);
}

/* The flags word: unknown bits refused, nothing changed. */
int async_setf_rules(char *why)
{
	long ep, fe;
	if (ep_pair(why, &ep, &fe))
		return 1;
	long r = setf(SLOT_SELF_TASK, fe, 2);
	CHECK(r == -E_INVAL, "unknown flag: %s", err_name(r));
	r = setf(SLOT_SELF_TASK, ep, FAULT_EP_ASYNC | 4);
	CHECK(r == -E_INVAL, "unknown flag with ASYNC: %s", err_name(r));
	drop(&fe), drop(&ep);
	return 0;
}
