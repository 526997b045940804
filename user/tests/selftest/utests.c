/* User-level tests, run by `selftest` after the in-kernel tests, with one
 * summary line for both. Each test returns 0 or fills why and returns 1. */
#include "ulib.h"
#include "selftest.h"

#define FAIL(...) do { snprintf(why, 160, __VA_ARGS__); return 1; } while (0)
#define CHECK(c, ...) do { if (!(c)) FAIL(__VA_ARGS__); } while (0)
#define CHILD_FRAMES 512

static long ncpus(void) { return dbg(DBG_NCPUS, 0, 0); }

static int t_bad_syscall(char *why)
{
	long r = sc0(999);
	CHECK(r == -E_NOSYS, "syscall 999 gave %ld", r);
	r = sc0(0);
	CHECK(r == -E_NOSYS, "syscall 0 gave %ld", r);
	return 0;
}

static int t_bad_pointers(char *why)
{
	long r = sys_puts((const char *)0xffffffc000000000UL, 8);
	CHECK(r == -E_FAULT, "kernel pointer: %ld", r);
	r = sys_puts((const char *)0x7000000, 8);
	CHECK(r == -E_FAULT, "unmapped pointer: %ld", r);
	r = sys_puts((const char *)0x10000, 1UL << 40);
	CHECK(r == -E_INVAL, "huge length: %ld", r);
	r = cap_info(SLOT_SELF_TASK, (struct cap_info *)0x10000);   /* read-only text */
	CHECK(r == -E_FAULT, "write to text: %ld", r);
	r = cap_info(SLOT_SELF_TASK, (struct cap_info *)0x7ffffffff000UL);
	CHECK(r == -E_FAULT, "write to unmapped: %ld", r);
	CHECK(dbg(DBG_UFAULTS, 0, 0) > 0, "kernel counted no recovered faults");
	return 0;
}

static int t_boot_caps(char *why)
{
	struct cap_info ci;
	CHECK(cap_info(SLOT_SELF_TASK, &ci) == 0 && ci.type == CAP_TASK, "slot 0 not a task cap");
	CHECK(cap_info(SLOT_SELF_AS, &ci) == 0 && ci.type == CAP_REGION, "slot 1 not a region cap");
	CHECK(cap_info(SLOT_KERNEL, &ci) == 0 && ci.type == CAP_KERNEL, "slot 2 not the kernel cap");
	CHECK(cap_info(SLOT_SELF_THREAD, &ci) == 0 && ci.type == CAP_THREAD, "slot 3 not a thread cap");
	return 0;
}

static int t_bad_slots(char *why)
{
	struct cap_info ci;
	/* Out of range, empty in a chunk never added, empty in the fixed slots. */
	long bad[] = { -1, CSPACE_MAX_SLOTS, 1000, CSPACE_MAX_SLOTS - 1, -1000000, 62 };
	for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		CHECK(cap_info(bad[i], &ci) == -E_BADCAP, "slot %ld info", bad[i]);
		CHECK(cap_delete(bad[i]) == -E_BADCAP, "slot %ld delete", bad[i]);
	}
	CHECK(ep_create(SLOT_SELF_TASK) == -E_EXIST, "create into a full slot");
	CHECK(ep_create(-5) == -E_BADCAP, "create into slot -5");
	CHECK(ep_create(CSPACE_MAX_SLOTS) == -E_BADCAP, "create into slot CSPACE_MAX_SLOTS");
	return 0;
}

static int t_cap_copy(char *why)
{
	long e = slot_alloc(), c = slot_alloc();
	CHECK(ep_create(e) == 0, "ep_create");
	CHECK(cap_copy(e, c) == 0, "copy");
	struct cap_info a, b;
	cap_info(e, &a);
	cap_info(c, &b);
	CHECK(a.type == CAP_ENDPOINT && b.type == a.type && b.rights == a.rights, "copy differs");
	CHECK(cap_copy(e, c) == -E_EXIST, "copy over a full slot");
	cap_delete(c);
	cap_delete(e);
	CHECK(cap_info(c, &b) == -E_BADCAP && cap_info(e, &a) == -E_BADCAP, "delete left caps");
	slot_release(e);
	slot_release(c);
	return 0;
}

static int t_cap_mint_rights(char *why)
{
	long e = slot_alloc(), m = slot_alloc(), m2 = slot_alloc();
	CHECK(ep_create(e) == 0, "ep_create");
	CHECK(cap_mint(e, m, R_SEND, 7, 0, 0) == 0, "mint send-only");
	struct cap_info ci;
	cap_info(m, &ci);
	CHECK(ci.rights == R_SEND && ci.badge == 7, "minted rights %x badge %lu", ci.rights, ci.badge);
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, m, w, SLOT_NONE);
	CHECK(r.a0 == -E_PERM, "recv through a send-only cap: %ld", r.a0);
	CHECK(cap_mint(m, m2, R_SEND | R_RECV, 0, 0, 0) == -E_PERM, "minting more rights worked");
	CHECK(cap_mint(m, m2, R_SEND, 9, 0, 0) == -E_INVAL, "re-badging worked");
	cap_delete(m);
	cap_delete(e);
	slot_release(e), slot_release(m), slot_release(m2);
	return 0;
}

static int t_cap_revoke(char *why)
{
	long e = slot_alloc(), a = slot_alloc(), b = slot_alloc(), c = slot_alloc();
	CHECK(ep_create(e) == 0, "ep_create");
	CHECK(cap_copy(e, a) == 0 && cap_mint(a, b, R_SEND, 0, 0, 0) == 0 &&
	      cap_copy(b, c) == 0, "derive chain");
	CHECK(cap_revoke(a) == 0, "revoke");
	struct cap_info ci;
	CHECK(cap_info(b, &ci) == -E_BADCAP && cap_info(c, &ci) == -E_BADCAP, "descendants survived");
	CHECK(cap_info(a, &ci) == 0 && cap_info(e, &ci) == 0, "revoke removed the cap itself or its parent");
	/* Revoke from the root removes everything derived. */
	CHECK(cap_copy(e, b) == 0, "copy again");
	cap_revoke(e);
	CHECK(cap_info(a, &ci) == -E_BADCAP && cap_info(b, &ci) == -E_BADCAP, "root revoke left caps");
	cap_delete(e);
	slot_release(e), slot_release(a), slot_release(b), slot_release(c);
	return 0;
}

static int t_cap_delete_keeps_children(char *why)
{
	long e = slot_alloc(), a = slot_alloc(), b = slot_alloc();
	ep_create(e);
	cap_copy(e, a);
	cap_copy(a, b);
	cap_delete(a);
	struct cap_info ci;
	CHECK(cap_info(b, &ci) == 0, "deleting a middle cap killed its child");
	cap_revoke(e);
	CHECK(cap_info(b, &ci) == -E_BADCAP, "child not re-parented under the root");
	cap_delete(e);
	slot_release(e), slot_release(a), slot_release(b);
	return 0;
}

static int t_anon_zero_fill(char *why)
{
	uint64_t va = 0x50000000;
	CHECK(mem_reserve(va, 0x4000) == 0, "reserve");
	volatile uint64_t *p = (volatile uint64_t *)va;
	for (int i = 0; i < 0x4000 / 8; i += 512)
		CHECK(p[i] == 0, "page not zero");
	p[0] = 42;
	p[1000] = 43;
	CHECK(p[0] == 42 && p[1000] == 43, "write lost");
	struct region_op op = { .op = ROP_UNMAP, .va = va, .len = 0x4000 };
	CHECK(region_txn(SLOT_SELF_AS, va, va + 0x4000, &op, 1) == 1, "unmap");
	return 0;
}

static int t_region_txn(char *why)
{
	uint64_t va = 0x51000000;
	long f = slot_alloc();
	CHECK(frame_alloc(f) == 0, "frame_alloc");
	struct region_op ops[4] = {
		{ .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = va, .arg = f },
		{ .op = ROP_MARK, .prot = PROT_R, .va = va + 0x1000, .len = 0x1000 },
		{ .op = ROP_QUERY, .va = va },
		{ .op = ROP_QUERY, .va = va + 0x1000 },
	};
	long r = region_txn(SLOT_SELF_AS, va, va + 0x3000, ops, 4);
	CHECK(r == 4, "txn did %ld of 4 (%ld %ld %ld %ld)", r, ops[0].result, ops[1].result,
	      ops[2].result, ops[3].result);
	CHECK(ops[2].out_kind == RK_MAPPED && ops[2].out_prot == (PROT_R | PROT_W), "query mapped: %lu", ops[2].out_kind);
	CHECK(ops[3].out_kind == RK_RESERVED, "query reserved: %lu", ops[3].out_kind);
	*(volatile uint64_t *)va = 77;
	struct region_op again = { .op = ROP_MAP, .prot = PROT_R, .va = va, .arg = f };
	r = region_txn(SLOT_SELF_AS, va, va + 0x1000, &again, 1);
	CHECK(r == -E_EXIST && again.result == -E_EXIST, "map over mapped: %ld/%ld", r, again.result);
	struct region_op mk = { .op = ROP_MARK, .prot = PROT_R, .va = va, .len = 0x1000 };
	region_txn(SLOT_SELF_AS, va, va + 0x1000, &mk, 1);
	CHECK(mk.result == -E_EXIST, "mark over mapped: %ld", mk.result);
	struct region_op un[2] = { { .op = ROP_UNMAP, .va = va, .len = 0x3000 }, { .op = ROP_QUERY, .va = va } };
	CHECK(region_txn(SLOT_SELF_AS, va, va + 0x3000, un, 2) == 2 && un[1].out_kind == RK_INVALID, "unmap");
	/* The frame cap still names the frame: map it again, data kept. */
	again.prot = PROT_R;
	CHECK(region_txn(SLOT_SELF_AS, va, va + 0x1000, &again, 1) == 1, "remap");
	CHECK(*(volatile uint64_t *)va == 77, "frame contents lost");
	un[0].len = 0x1000;
	region_txn(SLOT_SELF_AS, va, va + 0x1000, un, 1);
	cap_delete(f);
	slot_release(f);
	return 0;
}

static int t_region_bad_txn(char *why)
{
	struct region_op op = { .op = ROP_QUERY, .va = 0x52000000 };
	CHECK(region_txn(SLOT_SELF_AS, 0x52000000, 0x52001000, &op, 0) == -E_INVAL, "0 ops");
	CHECK(region_txn(SLOT_SELF_AS, 0x52000000, 0x52001000, &op, 100) == -E_INVAL, "100 ops");
	CHECK(region_txn(SLOT_SELF_AS, 0x52000000, 0x52001000, (void *)0xffffffc000001000UL, 1) == -E_FAULT, "kernel ops pointer");
	CHECK(region_txn(SLOT_SELF_AS, 0x52000001, 0x52001000, &op, 1) == -E_INVAL, "unaligned range");
	op.op = 77;
	CHECK(region_txn(SLOT_SELF_AS, 0x52000000, 0x52001000, &op, 1) == -E_INVAL, "unknown op");
	op.op = ROP_QUERY;
	op.va = 0x52005000;
	CHECK(region_txn(SLOT_SELF_AS, 0x52000000, 0x52001000, &op, 1) == -E_RANGE, "op outside the range");
	CHECK(region_txn(SLOT_SELF_TASK, 0x52000000, 0x52001000, &op, 1) == -E_BADCAP, "task cap as region");
	op.va = 0;
	CHECK(region_txn(SLOT_SELF_AS, 0, 0x1000, &op, 1) == -E_RANGE, "page 0 is outside the cap");
	return 0;
}

static int t_region_rights(char *why)
{
	long q = slot_alloc(), sub = slot_alloc(), f = slot_alloc(), ro = slot_alloc();
	CHECK(cap_mint(SLOT_SELF_AS, q, R_QUERY, 0, 0x53000000, 0x53010000) == 0, "mint query-only");
	struct region_op op = { .op = ROP_QUERY, .va = 0x53000000 };
	CHECK(region_txn(q, 0x53000000, 0x53001000, &op, 1) == 1, "query through it");
	op.op = ROP_MARK;
	op.prot = PROT_R;
	op.len = 0x1000;
	CHECK(region_txn(q, 0x53000000, 0x53001000, &op, 1) == -E_PERM, "mark without the right");
	CHECK(cap_mint(q, sub, R_QUERY, 0, 0x52000000, 0x53001000) == -E_PERM, "mint a larger range");
	CHECK(cap_mint(q, sub, R_QUERY | R_MAP, 0, 0x53000000, 0x53001000) == -E_PERM, "mint more rights");
	CHECK(cap_mint(q, sub, R_QUERY, 0, 0x53000000, 0x53001000) == 0, "mint a sub-range");
	op.op = ROP_QUERY;
	CHECK(region_txn(sub, 0x53000000, 0x53002000, &op, 1) == -E_RANGE, "lock beyond the sub-range");
	/* A read-only frame cap cannot be mapped writable. */
	CHECK(frame_alloc(f) == 0 && cap_mint(f, ro, R_READ, 0, 0, 0) == 0, "frame + read-only mint");
	struct region_op m = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = 0x53000000, .arg = ro };
	CHECK(region_txn(SLOT_SELF_AS, 0x53000000, 0x53001000, &m, 1) == -E_PERM, "writable map of a read-only frame");
	cap_revoke(q), cap_delete(q), cap_delete(f), cap_delete(ro);
	slot_release(q), slot_release(sub), slot_release(f), slot_release(ro);
	return 0;
}

struct pp { long ep; long iters; long hart; volatile long done; volatile long harts_seen; };

static void ping_client(void *a)
{
	struct pp *p = a;
	uint64_t w[4] = { 0 };
	for (long i = 0; i < p->iters; i++) {
		w[0] = (uint64_t)i;
		struct sysret r = ipc(SYS_CALL, p->ep, w, SLOT_NONE);
		if (r.a0 || r.a1 != i + 1) {
			p->done = -1;
			return;
		}
		p->harts_seen |= 1L << r.a3;
	}
	p->done = 1;
}

static int pingpong(char *why, int server_hart, int client_hart, long iters)
{
	long ep = slot_alloc(), task = slot_alloc();
	CHECK(ep_create(ep) == 0, "ep_create");
	/* The echo server is another task pinned by nothing; this task's client
	 * thread is pinned to client_hart. */
	CHECK(task_spawn(self_module(), ROLE_ECHO, task, CHILD_FRAMES, ep) == 0, "spawn echo server");
	(void)server_hart;
	struct pp p = { .ep = ep, .iters = iters, .hart = client_hart };
	long th = uthread_start(ping_client, &p, client_hart, 1);
	if (th < 0) {
		/* The server outlives this task unless killed: it waits on ep. */
		task_kill(task), task_wait(task);
		cap_delete(task), cap_delete(ep);
		slot_release(task), slot_release(ep);
		FAIL("thread start %ld", th);
	}
	while (!p.done)
		sys_yield();
	uint64_t w[4] = { ~0ULL, 0, 0, 0 };
	ipc(SYS_CALL, ep, w, SLOT_NONE);
	long st = task_wait(task);
	cap_delete(th), cap_delete(task), cap_delete(ep);
	slot_release(th), slot_release(task), slot_release(ep);
	CHECK(p.done == 1, "ping-pong failed");
	CHECK(st == 0, "echo server exit %ld", st);
	return 0;
}

static int t_ipc_pingpong(char *why) { return pingpong(why, -1, 0, 2000); }

/* Server and client pinned to different harts. */
struct xs { long ep; volatile long hart; volatile long n; };
static void pinned_server(void *a)
{
	struct xs *x = a;
	x->hart = self_hart();
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, x->ep, w, SLOT_NONE);
	for (;;) {
		if (r.a0)
			return;
		w[0] = (uint64_t)r.a1 + 1;
		w[2] = (uint64_t)self_hart();
		if ((uint64_t)r.a1 == ~0ULL) {
			ipc(SYS_REPLY, 0, w, SLOT_NONE);
			return;
		}
		x->n++;
		r = ipc(SYS_REPLY_RECV, x->ep, w, SLOT_NONE);
	}
}

static int t_ipc_cross_hart(char *why)
{
	if (ncpus() < 2) {
		printf("  (one hart: cross-hart ping-pong runs on one hart)\n");
	}
	int sh = ncpus() >= 2 ? 1 : 0;
	long ep = slot_alloc();
	CHECK(ep_create(ep) == 0, "ep_create");
	struct xs x = { .ep = ep, .hart = -1 };
	long st = uthread_start(pinned_server, &x, sh, 1);
	CHECK(st >= 0, "server thread %ld", st);
	struct pp p = { .ep = ep, .iters = 1000 };
	long ct = uthread_start(ping_client, &p, 0, 1);
	CHECK(ct >= 0, "client thread %ld", ct);
	while (!p.done)
		sys_yield();
	uint64_t w[4] = { ~0ULL, 0, 0, 0 };
	ipc(SYS_CALL, ep, w, SLOT_NONE);
	cap_delete(st), cap_delete(ct), cap_delete(ep);
	slot_release(st), slot_release(ct), slot_release(ep);
	CHECK(p.done == 1, "ping-pong failed");
	CHECK(x.hart == sh && p.harts_seen == (1L << sh), "server ran on harts %lx, wanted %d", p.harts_seen, sh);
	CHECK(x.n == 1000, "server saw %ld calls", x.n);
	return 0;
}

/* What the IPC fast path copies: all four words each way, the badge of
 * the caller's cap, a zero status and no-cap flag on both sides. Client
 * and server are threads of this task on one hart at one level, so every
 * call after the first takes the fast path both ways. */
#define FW_BADGE 0x5aUL
struct fw { long ep, sep; int hart; volatile long bad, done; };
static void fw_server(void *a)
{
	struct fw *f = a;
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, f->ep, w, SLOT_NONE);
	while (r.a0 == 0 && (uint64_t)r.a1 != ~0ULL) {
		if ((uint64_t)r.a5 != FW_BADGE || r.a6 != 0)
			f->bad++;
		w[0] = ~(uint64_t)r.a1, w[1] = ~(uint64_t)r.a2, w[2] = ~(uint64_t)r.a3, w[3] = ~(uint64_t)r.a4;
		r = ipc(SYS_REPLY_RECV, f->ep, w, SLOT_NONE);
	}
	ipc(SYS_REPLY, 0, w, SLOT_NONE);
}

static void fw_client(void *a)
{
	struct fw *f = a;
	for (uint64_t i = 1; i <= 200; i++) {
		uint64_t w[4] = { i, i * 3, i ^ 0x55, -i };
		struct sysret r = ipc(SYS_CALL, f->sep, w, SLOT_NONE);
		if (r.a0 || (uint64_t)r.a1 != ~w[0] || (uint64_t)r.a2 != ~w[1] ||
		    (uint64_t)r.a3 != ~w[2] || (uint64_t)r.a4 != ~w[3] || r.a5 || r.a6)
			f->bad++;
	}
	uint64_t w[4] = { ~0ULL, 0, 0, 0 };
	ipc(SYS_CALL, f->sep, w, SLOT_NONE);
	f->done = 1;
}

static int t_ipc_fast_words(char *why)
{
	struct fw f = { .ep = slot_alloc(), .sep = slot_alloc(), .hart = (int)ncpus() - 1 };
	CHECK(ep_create(f.ep) == 0, "ep_create");
	CHECK(cap_mint(f.ep, f.sep, R_SEND, FW_BADGE, 0, 0) == 0, "mint a badged send cap");
	long st = uthread_start(fw_server, &f, f.hart, 2);
	CHECK(st >= 0, "server thread %ld", st);
	long ct = uthread_start(fw_client, &f, f.hart, 2);
	CHECK(ct >= 0, "client thread %ld", ct);
	while (!f.done)
		sys_yield();
	cap_delete(st), cap_delete(ct), cap_delete(f.sep), cap_delete(f.ep);
	slot_release(st), slot_release(ct), slot_release(f.sep), slot_release(f.ep);
	CHECK(f.bad == 0, "%ld messages arrived wrong", f.bad);
	return 0;
}

/* A call to a lower-priority server must not run the server ahead of a
 * runnable thread of a higher level on that hart: the kernel switches
 * straight to the server only when its queue holds nothing above the
 * server's level. The client (level 2) queues a marker thread of its own
 * level, then calls the server (level 1), all on one hart: the marker has
 * to run before the call returns. */
struct prio_call { long ep, marker; int hart; volatile long marked, seen, done; };
static void prio_marker(void *a) { ((struct prio_call *)a)->marked = 1; }
static void prio_client(void *a)
{
	struct prio_call *p = a;
	uint64_t w[4] = { 0 };
	/* After one round trip the server waits on the endpoint again. */
	if (ipc(SYS_CALL, p->ep, w, SLOT_NONE).a0) {
		p->done = -1;
		return;
	}
	p->marker = uthread_start(prio_marker, p, p->hart, 2);   /* queued, not run: we keep the hart */
	struct sysret r = ipc(SYS_CALL, p->ep, w, SLOT_NONE);
	p->seen = p->marked;
	p->done = p->marker < 0 ? -2 : r.a0 ? -3 : 1;
}

static int t_ipc_priority(char *why)
{
	int h = (int)ncpus() - 1;
	long ep = slot_alloc();
	CHECK(ep_create(ep) == 0, "ep_create");
	struct xs x = { .ep = ep, .hart = -1 };
	long st = uthread_start(pinned_server, &x, h, 1);
	CHECK(st >= 0, "server thread %ld", st);
	while (x.hart < 0)
		sys_yield();
	struct prio_call p = { .ep = ep, .hart = h };
	long ct = uthread_start(prio_client, &p, h, 2);
	CHECK(ct >= 0, "client thread %ld", ct);
	while (!p.done)
		sys_yield();
	uint64_t w[4] = { ~0ULL, 0, 0, 0 };
	ipc(SYS_CALL, ep, w, SLOT_NONE);
	if (p.marker >= 0)
		cap_delete(p.marker), slot_release(p.marker);
	cap_delete(st), cap_delete(ct), cap_delete(ep);
	slot_release(st), slot_release(ct), slot_release(ep);
	CHECK(p.done == 1, "client failed (%ld)", p.done);
	CHECK(p.seen == 1, "the level-1 server ran before a queued level-2 thread");
	return 0;
}

/* A receiver thread that takes one message with a cap into `slot`. */
struct rcv { long ep, slot; volatile long badge, flag, done; };
static void rcv_fn(void *a)
{
	struct rcv *r = a;
	uint64_t w[4] = { 0 };
	struct sysret s = ipc(SYS_RECV, r->ep, w, r->slot);
	r->badge = s.a5;
	r->flag = s.a6;
	ipc(SYS_REPLY, 0, w, SLOT_NONE);
	r->done = 1;
}

static int t_ipc_badge_and_cap(char *why)
{
	long ep = slot_alloc(), m = slot_alloc(), f = slot_alloc(), got = slot_alloc(), ng = slot_alloc();
	CHECK(ep_create(ep) == 0 && cap_mint(ep, m, R_SEND | R_GRANT, 0x1234, 0, 0) == 0, "setup");
	CHECK(frame_alloc(f) == 0, "frame");
	struct rcv rc = { ep, got, 0, 0, 0 };
	long th = uthread_start(rcv_fn, &rc, -1, 1);
	CHECK(th >= 0, "thread");
	uint64_t w[4] = { 1, 2, 3, 4 };
	struct sysret r = ipc(SYS_CALL, m, w, f);
	CHECK(r.a0 == 0, "call %ld", r.a0);
	while (!rc.done)
		sys_yield();
	CHECK(rc.badge == 0x1234, "badge %lx", rc.badge);
	struct cap_info ci;
	CHECK(rc.flag == IPC_GOT_CAP && cap_info(got, &ci) == 0 && ci.type == CAP_FRAME, "cap not transferred");
	/* Without GRANT the transfer is refused. */
	CHECK(cap_mint(ep, ng, R_SEND, 0, 0, 0) == 0, "mint no-grant");
	r = ipc(SYS_CALL, ng, w, f);
	CHECK(r.a0 == -E_PERM, "transfer without grant: %ld", r.a0);
	cap_delete(th), cap_delete(got), cap_delete(f), cap_delete(m), cap_delete(ng), cap_delete(ep);
	slot_release(th), slot_release(got), slot_release(f), slot_release(m), slot_release(ng), slot_release(ep);
	return 0;
}

/* A server that saves the reply into a cap, then answers (or drops it). */
struct rsv { long ep, slot; int drop; volatile long done, r2; };
static void reply_saver(void *a)
{
	struct rsv *v = a;
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, v->ep, w, SLOT_NONE);
	if (r.a0 || sc1(SYS_REPLY_SAVE, v->slot)) {
		v->done = -1;
		return;
	}
	/* The implicit reply is gone now. */
	struct sysret none = ipc(SYS_REPLY, 0, w, SLOT_NONE);
	if (none.a0 != -E_NOENT) {
		v->done = -2;
		return;
	}
	if (v->drop) {
		cap_delete(v->slot);
	} else {
		w[0] = (uint64_t)r.a1 + 100;
		if (ipc(SYS_REPLY_CAP, v->slot, w, SLOT_NONE).a0) {
			v->done = -3;
			return;
		}
		v->r2 = ipc(SYS_REPLY_CAP, v->slot, w, SLOT_NONE).a0;   /* used up */
	}
	v->done = 1;
}

static int t_reply_cap(char *why)
{
	long ep = slot_alloc(), rs = slot_alloc();
	CHECK(ep_create(ep) == 0, "ep_create");
	for (int drop = 0; drop < 2; drop++) {
		struct rsv v = { ep, rs, drop, 0, 0 };
		long th = uthread_start(reply_saver, &v, -1, 1);
		CHECK(th >= 0, "thread");
		uint64_t w[4] = { 5, 0, 0, 0 };
		struct sysret r = ipc(SYS_CALL, ep, w, SLOT_NONE);
		while (!v.done)
			sys_yield();
		cap_delete(th);
		slot_release(th);
		CHECK(v.done == 1, "server step %ld failed", v.done);
		if (!drop) {
			CHECK(r.a0 == 0 && r.a1 == 105, "reply through the cap: %ld/%ld", r.a0, r.a1);
			CHECK(v.r2 == -E_BADCAP, "second use of a reply cap: %ld", v.r2);
		} else {
			CHECK(r.a0 == -E_DEAD, "dropped reply cap: caller got %ld", r.a0);
		}
	}
	cap_delete(ep);
	slot_release(ep), slot_release(rs);
	return 0;
}

static int t_reply_without_caller(char *why)
{
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_REPLY, 0, w, SLOT_NONE);
	CHECK(r.a0 == -E_NOENT, "reply with no caller: %ld", r.a0);
	return 0;
}

/* Spawn module 0 as a child with spawn argument arg and quota frames (no
 * cap given), wait for it and drop its task cap. Returns 0 with the exit
 * status in *st, or the slot/spawn error (nothing left behind). */
static long run_child(uint64_t arg, long quota, long *st)
{
	return spawn_wait(arg, QUOTA(quota, CHILD_THREADS, CHILD_ENDPOINTS, 0), SLOT_NONE, st);
}

static int t_isolation(char *why)
{
	/* The child cannot reach our caps or our memory. */
	uint64_t va = 0x54000000;
	CHECK(mem_reserve(va, 0x1000) == 0, "reserve");
	*(volatile uint64_t *)va = 0x5ec2e7;
	long st;
	CHECK(run_child(ROLE_PROBE | (va << 8), CHILD_FRAMES, &st) == 0, "spawn");
	CHECK(st == EXIT_TRAP(TRAP_READ_FAULT), "probe exit %ld (50/51: reached caps, >=52: read our memory)", st);
	return 0;
}

static int t_share_with_cap(char *why)
{
	/* With a region cap for one page of ours, the child maps a frame there. */
	uint64_t va = 0x55000000;
	long rc = slot_alloc(), task = slot_alloc();
	CHECK(cap_mint(SLOT_SELF_AS, rc, R_MAP | R_QUERY | R_READ | R_WRITE, 0, va, va + 0x1000) == 0, "mint");
	CHECK(task_spawn(self_module(), ROLE_SHARE, task, CHILD_FRAMES, rc) == 0, "spawn");
	long st = task_wait(task);
	CHECK(st == 0, "share child exit %ld", st);
	CHECK(*(volatile uint64_t *)va == 0xfeed, "shared page reads %lx", *(volatile uint64_t *)va);
	struct region_op un = { .op = ROP_UNMAP, .va = va, .len = 0x1000 };
	region_txn(SLOT_SELF_AS, va, va + 0x1000, &un, 1);
	cap_delete(task), cap_delete(rc);
	slot_release(task), slot_release(rc);
	return 0;
}

static int counters_equal(struct kcounters *a, char *why)
{
	struct kcounters b;
	/* PT pages come back after an RCU grace period, whose length a host
	 * busy with other QEMUs stretches. Judged by the event, not a window:
	 * a leak is counted only once RCU has nothing pending (after at least
	 * 200 reads 10 ms apart); 3000 reads (30 s) are only a hang guard for
	 * deferred work that never drains. */
	for (int i = 0; i < 3000; i++) {
		dbg(DBG_COUNTERS, (uint64_t)&b, 0);
		if (b.free_frames == a->free_frames && b.tasks == a->tasks && b.threads == a->threads &&
		    b.endpoints == a->endpoints && b.frame_objs == a->frame_objs && b.caps == a->caps)
			return 0;
		if (i >= 200 && !b.rcu_busy)
			break;
		uint64_t t = rdtime() + ticks_per_sec() / 100;
		while (rdtime() < t)
			sys_yield();
	}
	FAIL("leak: frames %ld tasks %ld threads %ld eps %ld uframes %ld caps %ld",
	     (long)(a->free_frames - b.free_frames), (long)(b.tasks - a->tasks),
	     (long)(b.threads - a->threads), (long)(b.endpoints - a->endpoints),
	     (long)(b.frame_objs - a->frame_objs), (long)(b.caps - a->caps));
}

static int t_kill_frees_everything(char *why)
{
	struct kcounters before;
	long task = slot_alloc();
	settled_counters(&before);
	struct cap_info self_before;
	cap_info(SLOT_SELF_TASK, &self_before);
	CHECK(task_spawn(self_module(), ROLE_HOG, task, CHILD_FRAMES, SLOT_NONE) == 0, "spawn");
	struct kcounters mid;
	/* Bounded by time, not by a count of yields: on a loaded host the
	 * hog's hart may not run for a while (10 s). */
	uint64_t until = rdtime() + 10 * ticks_per_sec();
	for (;;) {
		dbg(DBG_COUNTERS, (uint64_t)&mid, 0);
		if (mid.endpoints >= before.endpoints + 4 || rdtime() > until)
			break;
		sys_yield();
	}
	if (mid.endpoints < before.endpoints + 4) {
		/* It failed to set up (out of memory, say): leave nothing behind. */
		task_kill(task);
		task_wait(task);
		cap_delete(task);
		slot_release(task);
		FAIL("hog did not get going");
	}
	CHECK(task_kill(task) == 0, "kill");
	long st = task_wait(task);
	CHECK(st == 137, "killed status %ld", st);
	cap_delete(task);
	slot_release(task);
	if (counters_equal(&before, why))
		return 1;
	/* The child's whole carve came back to us once it was reaped. */
	struct cap_info me;
	cap_info(SLOT_SELF_TASK, &me);
	CHECK(me.lo == self_before.lo, "our frame usage %lu -> %lu after the child's death",
	      (unsigned long)self_before.lo, (unsigned long)me.lo);
	return 0;
}

static int t_fault_kills_task_only(char *why)
{
	long st;
	CHECK(run_child(ROLE_FAULT, CHILD_FRAMES, &st) == 0, "spawn");
	CHECK(st == EXIT_TRAP(TRAP_WRITE_FAULT), "faulting child exit %ld", st);
	return 0;
}

static int t_wait_rules(char *why)
{
	CHECK(task_wait(SLOT_SELF_TASK) == -E_INVAL, "wait on self");
	CHECK(task_wait(SLOT_KERNEL) == -E_BADCAP, "wait on a non-task cap");
	CHECK(task_spawn(self_module(), 0, SLOT_SELF_TASK, CHILD_FRAMES, SLOT_NONE) == -E_EXIST, "spawn into a full slot");
	CHECK(task_spawn(99, 0, 40, CHILD_FRAMES, SLOT_NONE) == -E_NOENT, "spawn of module 99");
	return 0;
}

static int t_quota(char *why)
{
	/* A task with SELF_CHILD_FRAMES frames of quota (and its thread's
	 * kernel stack) cannot fill 1 MiB (256 pages): it dies of OOM. That
	 * quota leaves room for the child's image and page tables under every
	 * paging mode (Sv57 adds a level). */
	struct kcounters before;
	settled_counters(&before);
	long st;
	CHECK(run_child(ROLE_HOG, SELF_CHILD_FRAMES + THREAD_KSTACK_FRAMES, &st) == 0, "spawn");
	CHECK(st == EXIT_TRAP(TRAP_WRITE_FAULT) || st == 12 || st == 11, "quota child exit %ld", st);
	CHECK(task_spawn_q(self_module(), ROLE_HOG, 40, QUOTA(0xffffffffL, 1, 0, 0), SLOT_NONE) == -E_QUOTA,
	      "huge quota granted");
	return counters_equal(&before, why);
}

static int popc(unsigned long x)
{
	int n = 0;
	for (; x; x &= x - 1)
		n++;
	return n;
}

static int t_cow(char *why)
{
	uint64_t va1 = 0x56000000, va2 = 0x56001000;
	long f = slot_alloc();
	CHECK(frame_alloc(f) == 0, "frame");
	struct region_op ops[3] = {
		{ .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = va1, .arg = f },
		{ .op = ROP_MAP, .prot = PROT_R | PROT_W | PROT_COW, .va = va2, .arg = f },
		{ .op = ROP_QUERY, .va = va2 },
	};
	CHECK(region_txn(SLOT_SELF_AS, va1, va2 + 0x1000, ops, 3) == 3, "maps: %ld %ld", ops[0].result, ops[1].result);
	CHECK(ops[2].out_kind == RK_COW, "query says %lu, not COW", ops[2].out_kind);
	volatile uint64_t *a = (volatile uint64_t *)va1, *b = (volatile uint64_t *)va2;
	*a = 1;
	CHECK(*b == 1, "COW page does not show the frame (%lu)", *b);
	*b = 2;     /* write fault: private copy under one cursor */
	CHECK(*a == 1 && *b == 2, "after the COW write: a=%lu b=%lu", *a, *b);
	struct region_op q = { .op = ROP_QUERY, .va = va2 };
	region_txn(SLOT_SELF_AS, va2, va2 + 0x1000, &q, 1);
	CHECK(q.out_kind == RK_MAPPED && q.out_tag == 0, "no private copy (kind %lu)", q.out_kind);
	*a = 3;     /* the copy is private: later writes to the frame do not show */
	CHECK(*b == 2, "the copy still shares the frame (%lu)", *b);
	struct region_op un = { .op = ROP_UNMAP, .va = va1, .len = 0x2000 };
	region_txn(SLOT_SELF_AS, va1, va1 + 0x2000, &un, 1);
	cap_delete(f);
	slot_release(f);
	return 0;
}

/* Two threads pinned to one hart that never enter the kernel: both make
 * progress only if the timer preempts user code. */
struct spin { volatile long n; volatile int *stop; };
static void spin_fn(void *a)
{
	struct spin *s = a;
	while (!*s->stop)
		s->n++;
}

static int t_preemption(char *why)
{
	volatile int stop = 0;
	struct spin s1 = { 0, &stop }, s2 = { 0, &stop };
	int h = (int)(ncpus() - 1);
	long a = uthread_start(spin_fn, &s1, h, 1), b = uthread_start(spin_fn, &s2, h, 1);
	CHECK(a >= 0 && b >= 0, "threads");
	/* Ends as soon as both spinners ran; the bound (10 s) only matters
	 * when a loaded host starves the spinners' hart. */
	uint64_t end = rdtime() + 10 * ticks_per_sec();
	while (rdtime() < end && !(s1.n > 1000 && s2.n > 1000))
		sys_yield();
	long n1 = s1.n, n2 = s2.n;
	stop = 1;
	uint64_t t = rdtime() + ticks_per_sec() / 5;
	while (rdtime() < t)
		sys_yield();
	cap_delete(a), cap_delete(b);
	slot_release(a), slot_release(b);
	CHECK(n1 > 1000 && n2 > 1000, "spinners on one hart: %ld and %ld", n1, n2);
	return 0;
}

static int t_thread_kill(char *why)
{
	volatile int stop = 0;
	struct spin sp = { 0, &stop };
	struct kcounters before, after;
	settled_counters(&before);
	long th = uthread_start(spin_fn, &sp, -1, 1);
	CHECK(th >= 0, "thread");
	while (sp.n < 1000)
		sys_yield();
	CHECK(sc1(SYS_THREAD_KILL, th) == 0, "kill");
	/* Once it is gone its count stops moving. */
	uint64_t t = rdtime() + ticks_per_sec() / 20;
	while (rdtime() < t)
		sys_yield();
	long n1 = sp.n;
	t = rdtime() + ticks_per_sec() / 20;
	while (rdtime() < t)
		sys_yield();
	CHECK(sp.n == n1, "killed thread still runs (%ld -> %ld)", n1, sp.n);
	CHECK(sc1(SYS_THREAD_KILL, th) == -E_DEAD, "second kill");
	CHECK(sc1(SYS_THREAD_KILL, SLOT_SELF_TASK) == -E_BADCAP, "kill through a task cap");
	cap_delete(th);
	slot_release(th);
	settled_counters(&after);
	CHECK(after.threads == before.threads, "threads %lu -> %lu", before.threads, after.threads);
	return 0;
}

struct mh { volatile long count; volatile long harts; };
static void mh_fn(void *a)
{
	struct mh *m = a;
	for (int i = 0; i < 2000; i++)
		__atomic_fetch_add(&m->count, 1, __ATOMIC_RELAXED);
	__atomic_fetch_or(&m->harts, 1L << self_hart(), __ATOMIC_RELAXED);
}

static int t_threads_on_many_harts(char *why)
{
	long n = ncpus() < 4 ? ncpus() : 4;
	struct mh m = { 0, 0 };
	long th[4];
	for (long i = 0; i < n; i++) {
		th[i] = uthread_start(mh_fn, &m, (int)i, 1);
		CHECK(th[i] >= 0, "thread %ld: %ld", i, th[i]);
	}
	uint64_t end = rdtime() + 10 * ticks_per_sec();
	while (m.count < n * 2000 && rdtime() < end)
		sys_yield();
	while (popc(m.harts) < n && rdtime() < end)
		sys_yield();
	for (long i = 0; i < n; i++)
		cap_delete(th[i]), slot_release(th[i]);
	CHECK(m.count == n * 2000, "count %ld", m.count);
	CHECK(popc(m.harts) == n, "ran on harts %lx", m.harts);
	return 0;
}

static int t_frame_alloc_quota_returns(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	long s[8];
	for (int i = 0; i < 8; i++) {
		s[i] = slot_alloc();
		CHECK(frame_alloc(s[i]) == 0, "frame %d", i);
	}
	for (int i = 0; i < 8; i++)
		cap_delete(s[i]), slot_release(s[i]);
	return counters_equal(&before, why);
}

static const struct utest { const char *name; int (*fn)(char *); } utests[] = {
	{ "u_bad_syscall", t_bad_syscall },
	{ "u_bad_pointers", t_bad_pointers },
	{ "u_boot_caps", t_boot_caps },
	{ "u_bad_slots", t_bad_slots },
	{ "u_cap_copy", t_cap_copy },
	{ "u_cap_mint_rights", t_cap_mint_rights },
	{ "u_cap_revoke", t_cap_revoke },
	{ "u_cap_delete_keeps_children", t_cap_delete_keeps_children },
	{ "u_anon_zero_fill", t_anon_zero_fill },
	{ "u_region_txn", t_region_txn },
	{ "u_region_bad_txn", t_region_bad_txn },
	{ "u_region_rights", t_region_rights },
	{ "u_frame_alloc_returns", t_frame_alloc_quota_returns },
	{ "u_ipc_pingpong", t_ipc_pingpong },
	{ "u_ipc_cross_hart", t_ipc_cross_hart },
	{ "u_ipc_fast_words", t_ipc_fast_words },
	{ "u_ipc_priority", t_ipc_priority },
	{ "u_ipc_no_mk_lock", u_ipc_no_mk_lock },
	{ "u_ipc_badge_and_cap", t_ipc_badge_and_cap },
	{ "u_reply_without_caller", t_reply_without_caller },
	{ "u_reply_cap", t_reply_cap },
	{ "u_isolation", t_isolation },
	{ "u_share_with_cap", t_share_with_cap },
	{ "u_kill_frees_everything", t_kill_frees_everything },
	{ "u_fault_kills_task_only", t_fault_kills_task_only },
	{ "u_wait_rules", t_wait_rules },
	{ "u_quota", t_quota },
	{ "u_threads_on_many_harts", t_threads_on_many_harts },
	{ "u_cow", t_cow },
	{ "u_preemption", t_preemption },
	{ "u_thread_kill", t_thread_kill },
	{ "u_va_reuse", u_va_reuse },
	{ "u_va_harts", u_va_harts },
	{ "u_va_steal", u_va_steal },
	{ "sec_sched_stress", sec_sched_stress },
	{ "sec_reply_cap_copy", sec_reply_cap_copy },
	{ "sec_reply_cap_bound", sec_reply_cap_bound },
	{ "sec_quota_overflow", sec_quota_overflow },
	{ "sec_kernel_cap", sec_kernel_cap },
	{ "sec_thread_structs", sec_thread_structs },
	{ "sec_kill_mid_ipc", sec_kill_mid_ipc },
	{ "sec_no_kernel_read", sec_no_kernel_read },
	{ "sec_object_quota", sec_object_quota },
	{ "sec_pt_quota", sec_pt_quota },
	{ "sec_query_no_pa", sec_query_no_pa },
	{ "sec_wx", sec_wx },
	{ "sec_console_cap", sec_console_cap },
	{ "sec_revoke_region", sec_revoke_region },
	{ "sec_grant_at_delivery", sec_grant_at_delivery },
	{ "sec_ro_frame_protect", sec_ro_frame_protect },
	{ "sec_clone_noshare", sec_clone_noshare },
	{ "sec_prio_mcp", sec_prio_mcp },
	{ "sec_ep_death_reply", sec_ep_death_reply },
	{ "sec_dead_charge", sec_dead_charge },
	{ "plat_recv_timeout", plat_recv_timeout },
	{ "plat_death_notice", plat_death_notice },
	{ "plat_client_dies_mid_fault", plat_client_dies_mid_fault },
	{ "plat_caps_2000", plat_caps_2000 },
	{ "plat_spawn_args", plat_spawn_args },
	{ "plat_threads_many", plat_threads_many },
	{ "plat_file_4096_shared", plat_file_4096_shared },
	{ "plat_pager_racing", plat_pager_racing },
	{ "plat_pager_deferred_death", plat_pager_deferred_death },
	{ "plat_pager_1000_deferred", plat_pager_1000_deferred },
	{ "plat_pager_async_deferred", plat_pager_async_deferred },
	{ "txn_map_exist", txn_map_exist },
	{ "txn_map", txn_map },
	{ "txn_mark", txn_mark },
	{ "txn_unmap", txn_unmap },
	{ "txn_mark_invalid", txn_mark_invalid },
	{ "txn_mark_pager", txn_mark_pager },
	{ "txn_mark_swapped", txn_mark_swapped },
	{ "txn_protect", txn_protect },
	{ "txn_age", txn_age },
	{ "txn_clean", txn_clean },
	{ "txn_evict", txn_evict },
	{ "txn_query", txn_query },
	{ "txn_overlay", txn_overlay },
	{ "txn_model", txn_model },
	{ "txn_supply_move", txn_supply_move },
	{ "txn_supply_refused", txn_supply_refused },
	{ "txn_supply_bad", txn_supply_bad },
	{ "txn_supply_huge", txn_supply_huge },
	{ "txn_supply_charge", txn_supply_charge },
	{ "mobj_anon_shared", mobj_anon_shared },
	{ "mobj_pager_fault", mobj_pager_fault },
	{ "mobj_range_ops", mobj_range_ops },
	{ "mobj_bad_input", mobj_bad_input },
	{ "mobj_teardown", mobj_teardown },
	{ "mobj_cost", mobj_cost },
	{ "mobj_async_notice", mobj_async_notice },
	{ "mobj_async_two_tasks", mobj_async_two_tasks },
	{ "mobj_async_supply_range", mobj_async_supply_range },
	{ "mobj_async_ep_gone", mobj_async_ep_gone },
	{ "mobj_async_kill_waiter", mobj_async_kill_waiter },
	{ "mobj_async_ops", mobj_async_ops },
	{ "mobj_async_bad_flags", mobj_async_bad_flags },
	{ "mm_cow_fork", mm_cow_fork },
	{ "mm_protect", mm_protect },
	{ "mm_unmap_other_hart", mm_unmap_other_hart },
	{ "harts_unmap_high", mm_unmap_high_hart },
	{ "mm_pager_ops_confined", mm_pager_ops_confined },
	{ "mm_bad_input", mm_bad_input },
	{ "mm_dirty_bitmap", mm_dirty_bitmap },
	{ "mm_evict_roundtrip", mm_evict_roundtrip },
	{ "mm_evict_charge", mm_evict_charge },
	{ "mm_tlb_targets", mm_tlb_targets },
	{ "pg_fault_message", pg_fault_message },
	{ "pg_fault_kill_reply", pg_fault_kill_reply },
	{ "pg_fault_garbage_reply", pg_fault_garbage_reply },
	{ "pg_fault_ep_rights", pg_fault_ep_rights },
	{ "pg_reply_not_waiting", pg_reply_not_waiting },
	{ "pg_pager_gone", pg_pager_gone },
	{ "pg_uaccess_pager", pg_uaccess_pager },
	{ "pg_task_create", pg_task_create },
	{ "async_fault_notice", async_fault_notice },
	{ "async_reverse_order", async_reverse_order },
	{ "async_supply_wakes_all", async_supply_wakes_all },
	{ "async_same_page", async_same_page },
	{ "async_pager_gone", async_pager_gone },
	{ "async_fault_kill", async_fault_kill },
	{ "async_kill_waiter", async_kill_waiter },
	{ "async_setf_rules", async_setf_rules },
	{ "dev_list", dev_list },
	{ "dev_caps_all_or_nothing", dev_caps_all_or_nothing },
	{ "dev_map_mmio", dev_map_mmio },
	{ "dev_map_refused", dev_map_refused },
	{ "dev_clone", dev_clone },
	{ "dev_dma_addr", dev_dma_addr },
	{ "dev_reset_on_death", dev_reset_on_death },
	{ "dev_irq_bind_rules", dev_irq_bind_rules },
	{ "dev_irq_message", dev_irq_message },
	{ "dev_irq_binder_death", dev_irq_binder_death },
};

int cmd_selftest(int argc, char **argv)
{
	if (argc > 2 || (argc == 2 && argv[1][0] == '-'))
		return prog_usage("selftest [name-prefix]");
	const char *prefix = argc > 1 ? argv[1] : "";
	extern const char *selftest_prefix;   /* sec_sched.c sizes its run by it */
	selftest_prefix = prefix;
	char pfx[32] = { 0 };
	size_t pl = strlen(prefix);
	memcpy(pfx, prefix, pl < 31 ? pl : 31);
	long counts[3] = { 0, 0, 0 };
	long r = dbg(DBG_KTEST, (uint64_t)pfx, (uint64_t)counts);
	if (r)
		printf("selftest: kernel tests could not run (%s)\n", err_name(r));
	long p = counts[0], f = counts[1], s = counts[2];
	for (unsigned i = 0; i < sizeof utests / sizeof utests[0]; i++) {
		const char *n = utests[i].name;
		size_t k = 0;
		while (k < pl && n[k] == prefix[k])
			k++;
		if (k < pl)
			continue;
		char why[160];
		why[0] = 0;
		int rc = utests[i].fn(why);
		if (rc == 0) {
			printf("test %s: ok\n", n);
			p++;
		} else if (rc == UTEST_SKIP) {
			/* The machine lacks what the test needs; the reason says what. */
			printf("test %s: skipped (%s)\n", n, why);
			s++;
		} else {
			printf("test %s: FAIL %s\n", n, why);
			f++;
		}
	}
	if (s)
		printf("selftest: %ld passed, %ld failed, %ld skipped\n", p, f, s);
	else
		printf("selftest: %ld passed, %ld failed\n", p, f);
	return f ? 1 : 0;
}

int main(int argc, char **argv)
{
	if (spawn_arg() == ROLE_PLAT_SPAWN)
		return plat_spawn_child(argc, argv);
	if (spawn_arg() == ROLE_PLAT_THREADS)
		return plat_threads_child();
	if (spawn_arg())
		return child_main((long)spawn_arg());
	return cmd_selftest(argc, argv);
}
