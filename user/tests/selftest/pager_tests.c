/* Fault endpoints and empty tasks (selftest names pg_*). Each test
 * cleans up after itself and checks the kernel's counters come back. */
#include "ulib.h"
#include "selftest.h"
#include <patina/pager.h>

#define FAIL(...) do { snprintf(why, 160, __VA_ARGS__); return 1; } while (0)
#define CHECK(c, ...) do { if (!(c)) FAIL(__VA_ARGS__); } while (0)

struct fc { volatile long go, done; uint64_t rva, wva; volatile uint64_t got; };
static void fault_client(void *a)
{
	struct fc *c = a;
	while (!c->go)
		sys_yield();
	c->got = *(volatile uint64_t *)c->rva;          /* load page fault */
	*(volatile uint64_t *)c->wva = 0x77;            /* store page fault */
	c->done = 1;
}

int pg_fault_message(char *why)
{
	const uint64_t va = 0x5a000000, tag = 0x1234;
	struct kcounters before;
	settled_counters(&before);
	long ep = slot_alloc(), fe = slot_alloc(), f1 = -1, f2 = -1;
	CHECK(ep_create(ep) == 0, "ep_create");
	CHECK(cap_mint(ep, fe, R_SEND, BADGE_FAULT, 0, 0) == 0, "mint the fault cap");
	int pager = pg_mark_pager(SLOT_SELF_AS, va, 0x2000, tag);
	if (!pager)
		printf("  (no ROP_MARK_PAGER: an invalid page stands in)\n");
	uint64_t want_kind = pager ? RK_PAGER : RK_INVALID;
	uint64_t want_tag = pager ? tag : 0;
	struct fc c = { .rva = va + 8, .wva = va + 0x1000 + 16 };
	long th = uthread_start(fault_client, &c, -1, 1);
	CHECK(th >= 0, "client thread %ld", th);
	CHECK(fault_ep_set(th, fe) == 0, "fault_ep_set on the client thread");
	c.go = 1;

	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, ep, w, SLOT_NONE);
	CHECK(r.a0 == 0, "recv %ld", r.a0);
	CHECK((uint64_t)r.a1 == va + 8, "fault address %lx, wanted %lx", r.a1, va + 8);
	CHECK((uint64_t)r.a2 == FA_READ, "read fault: w1 %lx", r.a2);
	CHECK(FAULT_STATUS_KIND(r.a3) == want_kind && FAULT_STATUS_TAG((uint64_t)r.a3) == want_tag,
	      "status kind %u tag %lx, wanted %lu/%lx", FAULT_STATUS_KIND(r.a3),
	      FAULT_STATUS_TAG((uint64_t)r.a3), want_kind, want_tag);
	CHECK(!pager || FAULT_STATUS_PROT(r.a3) == (PROT_R | PROT_W), "status prot %u",
	      FAULT_STATUS_PROT(r.a3));
	CHECK((uint64_t)r.a5 == BADGE_FAULT, "badge %lx", r.a5);
	long tid = r.a4;
	CHECK(tid >= 0 && tid < 4096, "thread id %ld", tid);
	CHECK(pg_map_frame_with(va, 8, 0xdada, &f1) == 0, "map the read page");
	w[0] = FAULT_RESUME;
	r = ipc(SYS_REPLY_RECV, ep, w, SLOT_NONE);
	CHECK(r.a0 == 0, "reply+recv %ld", r.a0);
	CHECK((uint64_t)r.a1 == va + 0x1000 + 16, "write fault address %lx", r.a1);
	CHECK((uint64_t)r.a2 == FA_WRITE, "write fault: w1 %lx", r.a2);
	CHECK(FAULT_STATUS_KIND(r.a3) == want_kind, "second status kind %u", FAULT_STATUS_KIND(r.a3));
	CHECK(r.a4 == tid && (uint64_t)r.a5 == BADGE_FAULT, "second fault: thread %ld badge %lx", r.a4, r.a5);
	CHECK(pg_map_frame_with(va + 0x1000, 0, 0, &f2) == 0, "map the write page");
	w[0] = FAULT_RESUME;
	CHECK(ipc(SYS_REPLY, 0, w, SLOT_NONE).a0 == 0, "reply");
	uint64_t end = rdtime() + 10 * ticks_per_sec();
	while (!c.done && rdtime() < end)
		sys_yield();
	CHECK(c.done, "client did not finish after FAULT_RESUME");
	CHECK(c.got == 0xdada, "client read %lx after the resume", c.got);
	CHECK(*(volatile uint64_t *)(va + 0x1000 + 16) == 0x77, "client's store lost");
	pg_unmap(va, 0x2000);
	cap_delete(f1), cap_delete(f2), cap_delete(th), cap_delete(fe), cap_delete(ep);
	slot_release(f1), slot_release(f2), slot_release(th), slot_release(fe), slot_release(ep);
	return pg_counters_back(&before, 0, why);
}

/* Spawn a ROLE_PG_CLIENT child (mode) whose task fault endpoint is a cap
 * of ep badged BADGE_FAULT; answer its ready call and receive its fault
 * (checked: address, access, badge). The child's task cap is in
 * *task, the fault message in *m. */
static int start_faulter(char *why, long ep, int write, long *task, struct sysret *m)
{
	long rd = slot_alloc(), fe = slot_alloc();
	*task = slot_alloc();
	CHECK(cap_mint(ep, rd, R_SEND, BADGE_READY, 0, 0) == 0 &&
	      cap_mint(ep, fe, R_SEND, BADGE_FAULT, 0, 0) == 0, "mint");
	CHECK(task_spawn(self_module(), ROLE_PG_CLIENT | (write << 8), *task, PG_FRAMES, rd) == 0, "spawn");
	CHECK(fault_ep_set(*task, fe) == 0, "fault_ep_set on the child");
	cap_delete(rd), cap_delete(fe);
	slot_release(rd), slot_release(fe);
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, ep, w, SLOT_NONE);
	CHECK(r.a0 == 0 && (uint64_t)r.a5 == BADGE_READY, "ready: %ld badge %lx", r.a0, r.a5);
	CHECK(ipc(SYS_REPLY, 0, w, SLOT_NONE).a0 == 0, "reply ready");
	*m = ipc(SYS_RECV, ep, w, SLOT_NONE);
	CHECK(m->a0 == 0 && (uint64_t)m->a5 == BADGE_FAULT, "fault: %ld badge %lx", m->a0, m->a5);
	CHECK((uint64_t)m->a1 == PG_CLIENT_VA, "fault address %lx", m->a1);
	CHECK((uint64_t)m->a2 == (write ? FA_WRITE : FA_READ), "access word %lx", m->a2);
	CHECK(FAULT_STATUS_KIND(m->a3) == RK_INVALID, "status kind %u", FAULT_STATUS_KIND(m->a3));
	return 0;
}

static int fault_reply_kills(char *why, int write, uint64_t word, int via_cap)
{
	struct kcounters before;
	settled_counters(&before);
	long ep = slot_alloc(), task, rs = slot_alloc();
	CHECK(ep_create(ep) == 0, "ep_create");
	struct sysret m;
	if (start_faulter(why, ep, write, &task, &m))
		return 1;
	uint64_t w[4] = { word, 0, 0, 0 };
	if (via_cap) {
		CHECK(sc1(SYS_REPLY_SAVE, rs) == 0, "reply save");
		CHECK(ipc(SYS_REPLY_CAP, rs, w, SLOT_NONE).a0 == 0, "reply through the cap");
	} else {
		CHECK(ipc(SYS_REPLY, 0, w, SLOT_NONE).a0 == 0, "reply");
	}
	long st = task_wait(task);
	CHECK(st == EXIT_TRAP(write ? TRAP_WRITE_FAULT : TRAP_READ_FAULT), "client exit %ld after reply %lx",
	      st, word);
	struct cap_info ci;
	CHECK(cap_info(rs, &ci) == -E_BADCAP, "reply cap left behind");
	cap_delete(task), cap_delete(ep);
	slot_release(task), slot_release(ep), slot_release(rs);
	return pg_counters_back(&before, 1, why);
}

int pg_fault_kill_reply(char *why) { return fault_reply_kills(why, 1, FAULT_KILL, 0); }
int pg_fault_garbage_reply(char *why)
{
	if (fault_reply_kills(why, 0, 0xdeadbeefUL, 1))
		return 1;
	return fault_reply_kills(why, 1, ~0UL, 0);
}

int pg_fault_ep_rights(char *why)
{
	long ep = slot_alloc(), rcv = slot_alloc(), nctl = slot_alloc(), f = slot_alloc(), ep2 = slot_alloc();
	CHECK(ep_create(ep) == 0 && ep_create(ep2) == 0, "ep_create");
	CHECK(cap_mint(ep, rcv, R_RECV | R_GRANT, 0, 0, 0) == 0, "mint recv-only");
	CHECK(cap_mint(SLOT_SELF_TASK, nctl, R_READ, 0, 0, 0) == 0, "mint task without CONTROL");
	CHECK(frame_alloc(f) == 0, "frame");
	long r;
	CHECK((r = fault_ep_set(SLOT_SELF_THREAD, rcv)) == -E_PERM, "endpoint without SEND: %ld", r);
	CHECK((r = fault_ep_set(nctl, ep)) == -E_PERM, "task cap without CONTROL: %ld", r);
	CHECK((r = fault_ep_set(SLOT_SELF_THREAD, f)) == -E_BADCAP, "frame as endpoint: %ld", r);
	CHECK((r = fault_ep_set(f, ep)) == -E_BADCAP, "frame as target: %ld", r);
	CHECK((r = fault_ep_set(SLOT_SELF_AS, ep)) == -E_BADCAP, "region cap as target: %ld", r);
	CHECK((r = fault_ep_set(62, ep)) == -E_BADCAP, "empty slot as target: %ld", r);
	CHECK((r = fault_ep_set(SLOT_SELF_THREAD, 62)) == -E_BADCAP, "empty slot as endpoint: %ld", r);
	cap_delete(rcv), cap_delete(nctl), cap_delete(f);

	/* The kernel's reference keeps the endpoint alive without any cap;
	 * replacing and clearing drop it. */
	struct kcounters a, b;
	settled_counters(&a);
	CHECK(fault_ep_set(SLOT_SELF_THREAD, ep) == 0, "set on our thread");
	CHECK(fault_ep_set(SLOT_SELF_TASK, ep2) == 0, "set on our task");
	cap_delete(ep), cap_delete(ep2);
	dbg(DBG_COUNTERS, (uint64_t)&b, 0);
	CHECK(b.endpoints == a.endpoints, "endpoints %lu -> %lu: the setting holds no reference",
	      a.endpoints, b.endpoints);
	long ep3 = rcv;
	CHECK(ep_create(ep3) == 0, "ep_create 3");
	CHECK(fault_ep_set(SLOT_SELF_THREAD, ep3) == 0, "replace");
	cap_delete(ep3);
	dbg(DBG_COUNTERS, (uint64_t)&b, 0);
	CHECK(b.endpoints == a.endpoints, "replacing: endpoints %lu -> %lu", a.endpoints, b.endpoints);
	CHECK(fault_ep_set(SLOT_SELF_THREAD, SLOT_NONE) == 0, "clear the thread's");
	CHECK(fault_ep_set(SLOT_SELF_TASK, SLOT_NONE) == 0, "clear the task's");
	CHECK(fault_ep_set(SLOT_SELF_TASK, SLOT_NONE) == 0, "clear again");
	dbg(DBG_COUNTERS, (uint64_t)&b, 0);
	CHECK(b.endpoints == a.endpoints - 2, "after clearing: endpoints %lu -> %lu", a.endpoints, b.endpoints);
	slot_release(ep), slot_release(rcv), slot_release(nctl), slot_release(f), slot_release(ep2);
	return 0;
}

int pg_reply_not_waiting(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	long ep = slot_alloc(), task, rs = slot_alloc();
	CHECK(ep_create(ep) == 0, "ep_create");
	struct sysret m;
	if (start_faulter(why, ep, 1, &task, &m))
		return 1;
	CHECK(sc1(SYS_REPLY_SAVE, rs) == 0, "reply save");
	CHECK(task_kill(task) == 0, "kill the client");
	long st = task_wait(task);
	CHECK(st == 137, "killed client exit %ld", st);
	uint64_t w[4] = { FAULT_RESUME, 0, 0, 0 };
	long r = ipc(SYS_REPLY_CAP, rs, w, SLOT_NONE).a0;
	CHECK(r == -E_DEAD, "reply to a killed client: %ld", r);
	r = ipc(SYS_REPLY, 0, w, SLOT_NONE).a0;
	CHECK(r == -E_NOENT, "plain reply afterwards: %ld", r);
	cap_delete(task), cap_delete(ep);
	slot_release(task), slot_release(ep), slot_release(rs);
	return pg_counters_back(&before, 1, why);
}

/* The last cap that can receive on the fault endpoint goes (before or
 * while the client's fault call waits): the client is killed, not hung. */
int pg_pager_gone(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	for (int round = 0; round < 2; round++) {
		long ep = slot_alloc(), rd = slot_alloc(), fe = slot_alloc(), task = slot_alloc();
		CHECK(ep_create(ep) == 0, "ep_create");
		CHECK(cap_mint(ep, rd, R_SEND, BADGE_READY, 0, 0) == 0 &&
		      cap_mint(ep, fe, R_SEND, BADGE_FAULT, 0, 0) == 0, "mint");
		CHECK(task_spawn(self_module(), ROLE_PG_CLIENT, task, PG_FRAMES, rd) == 0, "spawn");
		CHECK(fault_ep_set(task, fe) == 0, "fault_ep_set");
		uint64_t w[4] = { 0 };
		struct sysret r = ipc(SYS_RECV, ep, w, SLOT_NONE);
		CHECK(r.a0 == 0 && (uint64_t)r.a5 == BADGE_READY, "ready %ld", r.a0);
		if (round == 0)
			cap_delete(ep);         /* nobody can receive now: the fault fails at once */
		CHECK(ipc(SYS_REPLY, 0, w, SLOT_NONE).a0 == 0, "reply ready");
		if (round == 1) {
			pause_ms(30);           /* the fault call queues meanwhile */
			cap_delete(ep);
		}
		long st = task_wait(task);
		CHECK(st == EXIT_TRAP(TRAP_READ_FAULT), "round %d: client exit %ld", round, st);
		/* A send on it fails at once too. */
		r = ipc(SYS_CALL, fe, w, SLOT_NONE);
		CHECK(r.a0 == -E_DEAD, "call on an endpoint nobody can receive on: %ld", r.a0);
		cap_delete(rd), cap_delete(fe), cap_delete(task);
		slot_release(ep), slot_release(rd), slot_release(fe), slot_release(task);
	}
	return pg_counters_back(&before, 1, why);
}

struct uc { long ep; uint64_t va; volatile long go, done, r_info, r_puts, r_txn; };
static void uaccess_client(void *a)
{
	struct uc *u = a;
	while (!u->go)
		sys_yield();
	u->r_info = cap_info(SLOT_SELF_TASK, (struct cap_info *)(u->va + 64));
	u->r_puts = sys_puts((const char *)(u->va + 8), 4);
	u->r_txn = region_txn(SLOT_SELF_AS, 0x5a400000, 0x5a401000, (struct region_op *)u->va, 1);
	u->done = 1;
}

struct up { long ep; volatile long faults, up; };
static void uaccess_pager(void *a)
{
	struct up *p = a;
	uint64_t w[4] = { 0 };
	p->up = 1;
	struct sysret r = ipc(SYS_RECV, p->ep, w, SLOT_NONE);
	while (r.a0 == 0 && (uint64_t)r.a5 == BADGE_FAULT) {
		/* Must not happen: page it in so the caller does not loop. */
		p->faults++;
		long f = slot_alloc();
		frame_alloc(f);
		struct region_op m = { .op = ROP_MAP, .prot = PROT_R | PROT_W,
				       .va = (uint64_t)r.a1 & ~0xfffUL, .arg = f };
		region_txn(SLOT_SELF_AS, m.va, m.va + 0x1000, &m, 1);
		w[0] = FAULT_RESUME;
		r = ipc(SYS_REPLY_RECV, p->ep, w, SLOT_NONE);
	}
	ipc(SYS_REPLY, 0, w, SLOT_NONE);     /* the stop call */
}

int pg_uaccess_pager(char *why)
{
	const uint64_t va = 0x5a200000;
	struct kcounters before;
	settled_counters(&before);
	long ep = slot_alloc(), fe = slot_alloc();
	CHECK(ep_create(ep) == 0 && cap_mint(ep, fe, R_SEND, BADGE_FAULT, 0, 0) == 0, "endpoints");
	int pager = pg_mark_pager(SLOT_SELF_AS, va, 0x1000, 7);
	long ufaults = dbg(DBG_UFAULTS, 0, 0);
	struct up p = { .ep = ep };
	long pt = uthread_start(uaccess_pager, &p, -1, 1);
	CHECK(pt >= 0, "pager thread");
	struct uc u = { .ep = ep, .va = va };
	long ct = uthread_start(uaccess_client, &u, -1, 1);
	CHECK(ct >= 0, "client thread");
	CHECK(fault_ep_set(ct, fe) == 0, "fault_ep_set");
	while (!p.up)
		sys_yield();
	u.go = 1;
	uint64_t end = rdtime() + 10 * ticks_per_sec();
	while (!u.done && rdtime() < end)
		sys_yield();
	CHECK(u.done, "client stuck in a syscall with a pager-managed buffer");
	uint64_t w[4] = { 0 };
	CHECK(ipc(SYS_CALL, ep, w, SLOT_NONE).a0 == 0, "stop the pager");
	CHECK(p.faults == 0, "the pager was called %ld times from inside syscalls", p.faults);
	CHECK(u.r_info == -E_FAULT, "cap_info into pager memory: %ld", u.r_info);
	CHECK(u.r_puts == -E_FAULT, "puts from pager memory: %ld", u.r_puts);
	CHECK(u.r_txn == -E_FAULT, "region_txn ops in pager memory: %ld", u.r_txn);
	CHECK(dbg(DBG_UFAULTS, 0, 0) >= ufaults + 3, "kernel recovered %ld user-copy faults, wanted 3",
	      dbg(DBG_UFAULTS, 0, 0) - ufaults);
	uint64_t tag = 0;
	long k = pg_query_kind(va, &tag);
	CHECK(k == (pager ? RK_PAGER : RK_INVALID), "page kind %ld after the copies", k);
	pg_unmap(va, 0x1000);
	cap_delete(pt), cap_delete(ct), cap_delete(fe), cap_delete(ep);
	slot_release(pt), slot_release(ct), slot_release(fe), slot_release(ep);
	return pg_counters_back(&before, 0, why);
}

int pg_task_create(char *why)
{
	const uint64_t code_va = 0x10000, scratch = 0x5a300000;
	struct kcounters before, mid;
	settled_counters(&before);
	long tc = slot_alloc(), rc = slot_alloc(), th = slot_alloc(), f = slot_alloc(), nc = slot_alloc();
	long r;
	/* Refusals change nothing. */
	CHECK((r = pg_task_new(SLOT_SELF_TASK, tc, (long)(1UL << 63))) == -E_INVAL, "stray quota bits: %ld", r);
	CHECK((r = pg_task_new(SLOT_SELF_TASK, tc, QUOTA(8, 1, 0, 0))) == -E_INVAL, "8 frames: %ld", r);
	CHECK((r = pg_task_new(SLOT_SELF_TASK, tc, QUOTA(0xffffffffL, 1, 0, 0))) == -E_QUOTA,
	      "huge quota: %ld", r);
	CHECK((r = pg_task_new(SLOT_SELF_TASK, tc, QUOTA(64, QUOTA_THREADS_MAX, 0, 0))) == -E_QUOTA,
	      "%d threads: %ld", QUOTA_THREADS_MAX, r);
	CHECK((r = pg_task_new(SLOT_SELF_TASK, SLOT_SELF_AS, QUOTA(64, 1, 0, 0))) == -E_EXIST,
	      "full dst: %ld", r);
	CHECK(cap_mint(SLOT_SELF_TASK, nc, R_READ, 0, 0, 0) == 0, "mint");
	CHECK((r = pg_task_new(nc, tc, QUOTA(64, 1, 0, 0))) == -E_PERM, "no CONTROL: %ld", r);
	CHECK((r = pg_task_new(SLOT_SELF_AS, tc, QUOTA(64, 1, 0, 0))) == -E_BADCAP, "region as self: %ld", r);
	cap_delete(nc);
	if (pg_counters_back(&before, 1, why))
		return 1;

	/* An empty task lives until killed, then everything comes back. */
	CHECK(pg_task_new(SLOT_SELF_TASK, tc, QUOTA(64, 1, 0, 0)) == 0, "create");
	struct cap_info ci;
	CHECK(cap_info(tc, &ci) == 0 && ci.type == CAP_TASK && ci.rights == R_ALL && ci.hi == 64,
	      "new task cap: type %u rights %x quota %lu", ci.type, ci.rights, (unsigned long)ci.hi);
	dbg(DBG_COUNTERS, (uint64_t)&mid, 0);
	CHECK(mid.tasks == before.tasks + 1 && mid.threads == before.threads, "tasks %lu->%lu threads %lu->%lu",
	      before.tasks, mid.tasks, before.threads, mid.threads);
	pause_ms(20);
	dbg(DBG_COUNTERS, (uint64_t)&mid, 0);
	CHECK(mid.tasks == before.tasks + 1, "a task with no thread was reaped");
	CHECK(task_kill(tc) == 0, "kill");
	CHECK((r = task_wait(tc)) == 137, "killed empty task: %ld", r);
	cap_delete(tc);
	if (pg_counters_back(&before, 1, why))
		return 1;

	/* One nobody names any more (its last outside cap deleted) can never
	 * get a thread: it is killed and freed. */
	CHECK(pg_task_new(SLOT_SELF_TASK, tc, QUOTA(64, 1, 0, 0)) == 0, "create");
	CHECK(task_region(tc, rc) == 0, "region cap");
	cap_delete(tc);
	dbg(DBG_COUNTERS, (uint64_t)&mid, 0);
	CHECK(mid.tasks == before.tasks + 1, "freed while a region cap still names it");
	cap_delete(rc);
	if (pg_counters_back(&before, 1, why))
		return 1;

	/* Code: exit(7). */
	CHECK(pg_task_new(SLOT_SELF_TASK, tc, QUOTA(64, 1, 0, 0)) == 0, "create");
	CHECK(task_region(tc, rc) == 0, "region cap of the new task");
	CHECK(frame_alloc(f) == 0, "frame");
	struct region_op m = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = scratch, .arg = f };
	CHECK(region_txn(SLOT_SELF_AS, scratch, scratch + 0x1000, &m, 1) == 1, "map the frame here");
	uarch_code_syscall1((volatile uint8_t *)scratch, SYS_EXIT, 7);
	pg_unmap(scratch, 0x1000);
	struct region_op mx = { .op = ROP_MAP, .prot = PROT_R | PROT_X, .va = code_va, .arg = f };
	r = region_txn(rc, code_va, code_va + 0x1000, &mx, 1);
	CHECK(r == 1, "map the code R|X there: %ld/%ld", r, mx.result);
	struct region_op q = { .op = ROP_QUERY, .va = code_va };
	CHECK(region_txn(rc, code_va, code_va + 0x1000, &q, 1) == 1 && q.out_kind == RK_MAPPED &&
	      q.out_prot == (PROT_R | PROT_X), "query: kind %lu prot %lx", q.out_kind, q.out_prot);
	r = sc6(SYS_THREAD_CREATE, tc, (long)code_va, 0, 0, th, 1L << 16);
	CHECK(r == 0, "thread create: %ld", r);
	CHECK((r = task_wait(tc)) == 7, "exit status %ld", r);
	cap_delete(th), cap_delete(rc), cap_delete(tc), cap_delete(f);
	slot_release(tc), slot_release(rc), slot_release(th), slot_release(f), slot_release(nc);
	return pg_counters_back(&before, 1, why);
}
