/* Asynchronous faults on memory objects (MOBJ_ASYNC, patina/mobj.h),
 * selftest names mobj_async_*.
 *
 * The object's pager is this thread: it receives the object page's one
 * notice on the object's endpoint and supplies with SYS_MOBJ_SUPPLY. The
 * clients are threads of ours reading our own mapping of the object, or
 * ROLE_MM_TOUCH children (mmops_tests.c) driven by a thread of ours, as
 * their command blocks while they wait. Every test checks that the page
 * waits and the counters (objects, records, object pages, caps, threads,
 * tasks) come back; frames only where no thread of ours was started (a
 * finished thread's stack stays with ulib for the next). */
#include "ulib.h"
#include "selftest.h"
#include <patina/pager.h>
#include <patina/mobj.h>

#define PG 4096UL
#define AOV 0x7a000000UL    /* where we and the children map the object */
#define ASV 0x7a400000UL    /* our supply sources */
#define NPG 10              /* object pages */
#define NCL 8               /* clients of the one supply */
#define OBADGE 0x0b1ec7ULL
#define CHILD_FRAMES SELF_CHILD_FRAMES
#define FAIL(...) do { if (!why[0]) snprintf(why, 160, __VA_ARGS__); goto out; } while (0)
#define CK(c, ...) do { if (!(c)) FAIL(__VA_ARGS__); } while (0)

/* A reader: a thread of ours (ch NULL) reading va, or a thread of ours
 * having child ch read va. */
struct rd {
	uint64_t va;
	struct child *ch;
	volatile long done, err;
	volatile uint64_t got;
	long th;
};

static void reader(void *a)
{
	struct rd *r = a;
	if (r->ch) {
		uint64_t v = 0;
		r->err = mt_call(r->ch->ep, MT_READ, r->va, 0, &v);
		r->got = v;
	} else {
		r->got = *(volatile uint64_t *)r->va;
	}
	__atomic_store_n(&r->done, 1, __ATOMIC_RELEASE);
}

static long rd_start(struct rd *r)
{
	r->done = 0;
	r->th = uthread_start(reader, r, -1, 1);
	return r->th < 0 ? r->th : 0;
}

static struct kcounters kc(void)
{
	struct kcounters k;
	dbg(DBG_COUNTERS, (uint64_t)&k, 0);
	return k;
}

/* Up to a second for `pages` page waits with `threads` threads in them. */
static int waits_reach(long pages, long threads)
{
	for (int i = 0; i < 200; i++) {
		struct kcounters k = kc();
		if ((long)k.pagewaits == pages && (long)k.pagewait_threads == threads)
			return 1;
		pause_ms(5);
	}
	return 0;
}

static int done_within(volatile long *d, long ms)
{
	for (long i = 0; i < ms / 5 && !__atomic_load_n(d, __ATOMIC_ACQUIRE); i++)
		pause_ms(5);
	return *d != 0;
}

static inline uint64_t opat(uint64_t off) { return 0x0a5c000000000000ULL | off * 0x1001; }

/* The object (NPG pages, MOBJ_ASYNC, badge OBADGE on endpoint *ep) and
 * our read-write mapping of it at AOV. */
static long obj_setup(long *ep, long *bep, long *obj)
{
	*ep = slot_alloc(), *bep = slot_alloc(), *obj = slot_alloc();
	long r = ep_create(*ep);
	r = r ? r : cap_mint(*ep, *bep, R_SEND, OBADGE, 0, 0);
	r = r ? r : mobj_create_flags(NPG, *obj, *bep, MOBJ_ASYNC);
	struct region_op op = { .op = ROP_MAP_OBJ, .prot = PROT_R | PROT_W, .va = AOV, .len = NPG * PG,
				.arg = ROP_OBJ_ARG(*obj, 0) };
	if (!r && region_txn(SLOT_SELF_AS, AOV, AOV + NPG * PG, &op, 1) != 1)
		r = op.result ? op.result : -E_INVAL;
	return r;
}

static void obj_teardown(long *ep, long *bep, long *obj)
{
	struct region_op op = { .op = ROP_UNMAP, .va = AOV, .len = NPG * PG };
	region_txn(SLOT_SELF_AS, AOV, AOV + NPG * PG, &op, 1);
	slot_drop(obj);
	slot_drop(bep);
	slot_drop(ep);
}

/* A ROLE_MM_TOUCH child with the whole object mapped read-only at AOV. */
static long child_mapped(struct child *c, long obj)
{
	long r = child_start(c, -1, CHILD_FRAMES);
	struct region_op op = { .op = ROP_MAP_OBJ, .prot = PROT_R, .va = AOV, .len = NPG * PG,
				.arg = ROP_OBJ_ARG(obj, 0) };
	if (!r && region_txn(c->rc, AOV, AOV + NPG * PG, &op, 1) != 1)
		r = op.result ? op.result : -E_INVAL;
	return r;
}

/* Receive one notice on ep within 2 s: 0 and its words, or the error. */
static long recv_notice(long ep, struct sysret *m)
{
	uint64_t w[4] = { 0 };
	*m = ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, 2000000);
	return m->a0;
}

/* Is m the notice of object page off, faulted at va (0: any address)? */
static int notice_is(const struct sysret *m, uint64_t off, uint64_t va)
{
	return (uint64_t)m->a1 == MSG_FAULT && (!va || (uint64_t)m->a2 == va) &&
	       FAULT_STATUS_KIND(m->a3) == RK_OBJECT && FAULT_STATUS_TAG((uint64_t)m->a3) == off &&
	       (uint64_t)m->a5 == OBADGE && !(m->a6 & IPC_GOT_CAP);
}

/* Supply n object pages from off, page i holding opat(off + i). */
static long supply(long obj, uint64_t off, uint64_t n)
{
	struct region_op un = { .op = ROP_UNMAP, .va = ASV, .len = n * PG };
	region_txn(SLOT_SELF_AS, ASV, ASV + n * PG, &un, 1);
	long r = mem_reserve(ASV, n * PG);
	for (uint64_t i = 0; !r && i < n; i++)
		*(volatile uint64_t *)(ASV + i * PG) = opat(off + i);
	return r ? r : mobj_supply(obj, off, SLOT_SELF_AS, ASV, (long)n);
}

static int no_notice(long ep, long ms)
{
	uint64_t w[4] = { 0 };
	return ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, (uint64_t)ms * 1000).a0 == -E_TIMEDOUT;
}

int mobj_async_notice(char *why)
{
	struct kcounters before;
	long ep = -1, bep = -1, obj = -1;
	struct rd a = { .va = AOV + 3 * PG + 16, .th = -1 };
	struct sysret m;
	settled_counters(&before);
	CK(obj_setup(&ep, &bep, &obj) == 0, "object setup");
	CK(rd_start(&a) == 0, "reader");
	CK(recv_notice(ep, &m) == 0, "no notice: %s", err_name(m.a0));
	CK(notice_is(&m, 3, a.va), "words %lx %lx %lx badge %lx a6 %lx", m.a1, m.a2, m.a3, m.a5, m.a6);
	CK(FAULT_STATUS_PROT(m.a3) == (PROT_R | PROT_W), "prot %lx", (unsigned long)FAULT_STATUS_PROT(m.a3));
	CK(FAULT_ACCESS(m.a4) == FA_READ && FAULT_THREAD(m.a4) >= 0 && FAULT_THREAD(m.a4) < 4096, "w3 %lx", m.a4);
	{
		uint64_t w[4] = { FAULT_RESUME, 0, 0, 0 };
		CK(ipc(SYS_REPLY, 0, w, SLOT_NONE).a0 != 0, "a reply to an object notice was taken");
	}
	CK(waits_reach(1, 1), "page waits %lu threads %lu", kc().pagewaits, kc().pagewait_threads);
	pause_ms(20);
	CK(!a.done, "the reader ran on before its page was supplied");
	CK(supply(obj, 3, 1) == 0, "supply");
	CK(done_within(&a.done, 1000) && a.got == 0, "reader: done %ld read %lx", a.done, a.got);
	CK(*(volatile uint64_t *)(AOV + 3 * PG) == opat(3), "page 3 reads wrong");
	CK(kc().pagewaits == 0, "a page wait left after the supply");
	CK(no_notice(ep, 30), "a second notice");
	/* A page already held: no fault, no notice. */
	CK(*(volatile uint64_t *)(AOV + 3 * PG + 8) == 0 && no_notice(ep, 20), "a held page noticed");
out:
	slot_drop(&a.th);
	obj_teardown(&ep, &bep, &obj);
	return why[0] || pg_counters_back(&before, 0, why);
}

int mobj_async_two_tasks(char *why)
{
	struct kcounters before;
	long ep = -1, bep = -1, obj = -1;
	struct child c = { -1, -1, -1 };
	struct rd a = { .va = AOV + 5 * PG + 8, .th = -1 }, b = { .va = AOV + 5 * PG + 24, .ch = &c, .th = -1 };
	struct sysret m;
	settled_counters(&before);
	CK(obj_setup(&ep, &bep, &obj) == 0, "object setup");
	CK(child_mapped(&c, obj) == 0, "child with the object mapped");
	CK(rd_start(&a) == 0, "our reader");
	CK(recv_notice(ep, &m) == 0 && notice_is(&m, 5, a.va), "first notice: %s %lx %lx", err_name(m.a0),
	   m.a2, m.a3);
	CK(rd_start(&b) == 0, "the child's reader");
	CK(waits_reach(1, 2), "page waits %lu threads %lu (both tasks on one page)", kc().pagewaits,
	   kc().pagewait_threads);
	CK(no_notice(ep, 50), "a second message for the same object page");
	CK(!a.done && !b.done, "a reader ran on before the supply");
	CK(supply(obj, 5, 1) == 0, "supply");
	CK(done_within(&a.done, 1000) && done_within(&b.done, 1000), "woken: %ld %ld", a.done, b.done);
	CK(b.err == 0 && b.got == 0 && a.got == 0, "reads %lx %lx err %ld", a.got, b.got, b.err);
	CK(mt_call(c.ep, MT_READ, AOV + 5 * PG, 0, (uint64_t *)&b.got) == 0 && b.got == opat(5),
	   "the child reads %lx", b.got);
	CK(kc().pagewaits == 0 && kc().pagewait_threads == 0, "a page wait left");
out:
	child_end(&c, 1);
	slot_drop(&a.th);
	slot_drop(&b.th);
	obj_teardown(&ep, &bep, &obj);
	return why[0] || pg_counters_back(&before, 0, why);
}

int mobj_async_supply_range(char *why)
{
	struct kcounters before;
	long ep = -1, bep = -1, obj = -1;
	struct rd c[NCL + 2];
	uint64_t seen = 0;
	struct sysret m;
	for (int i = 0; i < NCL + 2; i++)
		c[i] = (struct rd){ .va = AOV + (uint64_t)i * PG + 8 * (uint64_t)(i + 1), .th = -1 };
	settled_counters(&before);
	CK(obj_setup(&ep, &bep, &obj) == 0, "object setup");
	/* Pages 8 and 9 in turn: the later fault is answered first. */
	CK(rd_start(&c[NCL]) == 0 && recv_notice(ep, &m) == 0 && notice_is(&m, NCL, c[NCL].va), "page 8");
	CK(rd_start(&c[NCL + 1]) == 0 && recv_notice(ep, &m) == 0 && notice_is(&m, NCL + 1, c[NCL + 1].va),
	   "page 9");
	CK(supply(obj, NCL + 1, 1) == 0, "supply page 9");
	CK(done_within(&c[NCL + 1].done, 1000), "the later fault not answered");
	pause_ms(20);
	CK(!c[NCL].done, "page 9's supply woke page 8's reader");
	CK(supply(obj, NCL, 1) == 0 && done_within(&c[NCL].done, 1000), "page 8's reader");
	/* Eight readers on eight pages: one notice each, one supply for all. */
	for (int i = 0; i < NCL; i++)
		CK(rd_start(&c[i]) == 0, "reader %d", i);
	for (int i = 0; i < NCL; i++) {
		CK(recv_notice(ep, &m) == 0, "notice %d: %s", i, err_name(m.a0));
		uint64_t off = FAULT_STATUS_TAG((uint64_t)m.a3);
		CK(off < NCL && !(seen & (1u << off)) && notice_is(&m, off, c[off].va), "notice for page %lu",
		   (unsigned long)off);
		seen |= 1u << off;
	}
	CK(waits_reach(NCL, NCL), "page waits %lu threads %lu", kc().pagewaits, kc().pagewait_threads);
	CK(supply(obj, 0, NCL) == 0, "the supply of eight");
	for (int i = 0; i < NCL; i++)
		CK(done_within(&c[i].done, 1000) && c[i].got == 0, "reader %d: done %ld read %lx", i, c[i].done,
		   c[i].got);
	CK(kc().pagewaits == 0, "a page wait left after the supply");
	CK(no_notice(ep, 30), "a notice after the supply");
out:
	for (int i = 0; i < NCL + 2; i++)
		slot_drop(&c[i].th);
	obj_teardown(&ep, &bep, &obj);
	return why[0] || pg_counters_back(&before, 0, why);
}

/* The object's endpoint can no longer receive while a child waits: the
 * child dies as on a refused fault, its wait gone. */
int mobj_async_ep_gone(char *why)
{
	struct kcounters before;
	long ep = -1, bep = -1, obj = -1;
	struct child c = { -1, -1, -1 };
	struct rd b = { .va = AOV + 2 * PG, .ch = &c, .th = -1 };
	struct sysret m;
	settled_counters(&before);
	CK(obj_setup(&ep, &bep, &obj) == 0, "object setup");
	CK(child_mapped(&c, obj) == 0, "child with the object mapped");
	CK(rd_start(&b) == 0 && recv_notice(ep, &m) == 0 && notice_is(&m, 2, b.va), "notice");
	CK(waits_reach(1, 1), "page waits %lu", kc().pagewaits);
	slot_drop(&ep);         /* the last receive cap */
	long st = child_end(&c, 0);
	CK(st == EXIT_TRAP(TRAP_READ_FAULT), "child exit %ld", st);
	CK(done_within(&b.done, 1000), "the child's command never ended");
	CK(kc().pagewaits == 0 && kc().pagewait_threads == 0, "a page wait left");
out:
	child_end(&c, 1);
	slot_drop(&b.th);
	obj_teardown(&ep, &bep, &obj);
	return why[0] || pg_counters_back(&before, 0, why);
}

/* A waiting thread killed: its wait goes, the other waiter of its page
 * stays and is woken by the supply. */
int mobj_async_kill_waiter(char *why)
{
	struct kcounters before;
	long ep = -1, bep = -1, obj = -1;
	struct rd a = { .va = AOV + 8, .th = -1 }, b = { .va = AOV + PG + 8, .th = -1 },
		  c = { .va = AOV + PG + 16, .th = -1 };
	struct sysret m;
	settled_counters(&before);
	CK(obj_setup(&ep, &bep, &obj) == 0, "object setup");
	/* Alone on its page, notice still queued: the kill takes it back. */
	CK(rd_start(&a) == 0 && waits_reach(1, 1), "first waiter");
	CK(sc1(SYS_THREAD_KILL, a.th) == 0, "kill the waiter");
	CK(waits_reach(0, 0), "the killed thread's wait is left: %lu", kc().pagewaits);
	CK(no_notice(ep, 30), "the killed wait's notice was delivered");
	/* One of two on a page. */
	CK(rd_start(&b) == 0 && recv_notice(ep, &m) == 0 && notice_is(&m, 1, b.va), "b's notice");
	CK(rd_start(&c) == 0 && waits_reach(1, 2), "c joins b");
	CK(sc1(SYS_THREAD_KILL, b.th) == 0 && waits_reach(1, 1), "after one of two died: %lu pages %lu threads",
	   kc().pagewaits, kc().pagewait_threads);
	CK(supply(obj, 1, 1) == 0 && done_within(&c.done, 1000) && c.got == 0, "c after the supply: %ld",
	   c.done);
	CK(!a.done && !b.done, "a killed thread ran on");
	CK(waits_reach(0, 0), "a page wait left");
out:
	slot_drop(&a.th);
	slot_drop(&b.th);
	slot_drop(&c.th);
	obj_teardown(&ep, &bep, &obj);
	return why[0] || pg_counters_back(&before, 0, why);
}

/* MOBJ_KILL refuses a page's waiters (R_CONTROL; E_NOENT with none);
 * MOBJ_DECOMMIT has them retry (a fresh notice); the object's end has
 * them retry on a page of no object. */
int mobj_async_ops(char *why)
{
	struct kcounters before;
	long ep = -1, bep = -1, obj = -1, weak = slot_alloc();
	struct child c = { -1, -1, -1 };
	struct rd a = { .va = AOV + 4 * PG, .th = -1 }, b = { .va = AOV + 6 * PG, .ch = &c, .th = -1 };
	struct sysret m;
	settled_counters(&before);
	CK(obj_setup(&ep, &bep, &obj) == 0, "object setup");
	/* decommit over a waited page: the reader faults again, a new notice */
	CK(rd_start(&a) == 0 && recv_notice(ep, &m) == 0 && notice_is(&m, 4, a.va), "notice");
	CK(mobj_op(obj, MOBJ_DECOMMIT, 4, 1) == 0, "decommit");
	CK(recv_notice(ep, &m) == 0 && notice_is(&m, 4, a.va), "no second notice after the decommit");
	CK(!a.done && supply(obj, 4, 1) == 0 && done_within(&a.done, 1000), "reader after the supply");
	/* MOBJ_KILL */
	CK(child_mapped(&c, obj) == 0, "child with the object mapped");
	CK(rd_start(&b) == 0 && recv_notice(ep, &m) == 0 && notice_is(&m, 6, b.va), "child's notice");
	CK(cap_mint(obj, weak, R_MAP | R_READ | R_WRITE, 0, 0, 0) == 0, "mint");
	long r = mobj_op(weak, MOBJ_KILL, 6, 1);
	CK(r == -E_PERM, "MOBJ_KILL without R_CONTROL: %s", err_name(r));
	CK((r = mobj_op(obj, MOBJ_KILL, 7, 3)) == -E_NOENT, "MOBJ_KILL where nobody waits: %s", err_name(r));
	CK((r = mobj_op(obj, MOBJ_KILL + 1, 6, 1)) == -E_INVAL, "an unknown op: %s", err_name(r));
	CK(kc().pagewaits == 1, "a refused MOBJ_KILL ended the wait");
	CK((r = mobj_op(obj, MOBJ_KILL, 5, 2)) == 0, "MOBJ_KILL: %s", err_name(r));
	r = child_end(&c, 0);
	CK(r == EXIT_TRAP(TRAP_READ_FAULT), "child exit %ld after MOBJ_KILL", r);
	CK(waits_reach(0, 0), "a page wait left after MOBJ_KILL");
	slot_drop(&b.th);
	/* the object's end: a child waits, its mapping and every cap go */
	CK(child_mapped(&c, obj) == 0, "second child with the object mapped");
	b = (struct rd){ .va = AOV + 7 * PG, .ch = &c, .th = -1 };
	CK(rd_start(&b) == 0 && recv_notice(ep, &m) == 0 && notice_is(&m, 7, b.va), "second child's notice");
	{
		struct region_op un = { .op = ROP_UNMAP, .va = AOV, .len = NPG * PG };
		CK(region_txn(c.rc, AOV, AOV + NPG * PG, &un, 1) == 1, "unmap in the child");
	}
	CK(waits_reach(1, 1), "the wait ended before the object did");
	slot_drop(&weak);
	obj_teardown(&ep, &bep, &obj);
	CK(waits_reach(0, 0), "the object's end left its wait: %lu", kc().pagewaits);
	r = child_end(&c, 0);
	CK(r == EXIT_TRAP(TRAP_READ_FAULT), "child exit %ld after the object's end", r);
out:
	child_end(&c, 1);
	slot_drop(&a.th);
	slot_drop(&b.th);
	slot_drop(&weak);
	obj_teardown(&ep, &bep, &obj);
	return why[0] || pg_counters_back(&before, 0, why);
}

/* Flags: unknown bits, or MOBJ_ASYNC on an anonymous object, refused
 * with nothing made. */
int mobj_async_bad_flags(char *why)
{
	struct kcounters before;
	long ep = slot_alloc(), bep = slot_alloc(), obj = slot_alloc(), r;
	settled_counters(&before);
	CK(ep_create(ep) == 0 && cap_mint(ep, bep, R_SEND, OBADGE, 0, 0) == 0, "endpoint");
	static const unsigned bad[] = { 2, MOBJ_ASYNC | 4, 0x80000000u };
	for (unsigned i = 0; i < sizeof bad / sizeof bad[0]; i++)
		CK((r = mobj_create_flags(1, obj, bep, bad[i])) == -E_INVAL, "flags %x: %s", bad[i], err_name(r));
	CK((r = sc6(SYS_MOBJ_CREATE, 1, obj, bep, 1L << 40, 0, 0)) == -E_INVAL, "flag bit 40: %s",
	   err_name(r));
	CK((r = mobj_create_flags(1, obj, SLOT_NONE, MOBJ_ASYNC)) == -E_INVAL,
	   "MOBJ_ASYNC without a pager: %s", err_name(r));
	CK(kc().mobjs == before.mobjs, "a refused create made an object");
	CK((r = mobj_create_flags(1, obj, bep, MOBJ_ASYNC)) == 0, "a good create: %s", err_name(r));
	slot_drop(&obj);
out:
	slot_drop(&obj);
	slot_drop(&bep);
	slot_drop(&ep);
	return why[0] || pg_counters_back(&before, 1, why);
}
