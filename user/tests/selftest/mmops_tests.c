/* Selftests of the region ops for pagers, page rights, frame sharing and
 * COW fork (names mm_*). Each returns 0 or fills why and returns 1, and
 * leaves no slot, thread, child or frame behind. */
#include "ulib.h"
#include "selftest.h"
#include <patina/pager.h>

#define FAIL(...) do { snprintf(why, 160, __VA_ARGS__); goto out; } while (0)
#define CK(c, ...) do { if (!(c)) FAIL(__VA_ARGS__); } while (0)
#define PG 4096UL


static long ncpus(void) { return dbg(DBG_NCPUS, 0, 0); }

static void mt_server(void *unused)
{
	(void)unused;
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, SLOT_GIVEN, w, SLOT_NONE);
	for (;;) {
		if (r.a0)
			sys_exit(70);
		uint64_t cmd = (uint64_t)r.a1;
		volatile uint64_t *p = (volatile uint64_t *)r.a2;
		w[0] = 0;
		if (cmd == MT_READ)
			w[0] = *p;
		else if (cmd == MT_WRITE)
			*p = (uint64_t)r.a3;
		w[1] = (uint64_t)self_hart();
		if (cmd == MT_SPIN) {
			/* Answer, then read word 0 and count in word 1 of the
			 * page for ever (until a fault ends the task). */
			ipc(SYS_REPLY, 0, w, SLOT_NONE);
			for (uint64_t n = 1;; n++) {
				(void)p[0];
				p[1] = n;
			}
		}
		if (cmd == MT_EXIT) {
			ipc(SYS_REPLY, 0, w, SLOT_NONE);
			sys_exit(0);
		}
		r = ipc(SYS_REPLY_RECV, SLOT_GIVEN, w, SLOT_NONE);
	}
}

/* ROLE_MM_TOUCH: serve reads and writes of our own memory for the parent
 * (endpoint given at spawn) from a thread pinned to hart arg >> 8 (0xff:
 * any); the main thread parks. */
int mm_touch_child(long arg)
{
	struct cap_info ci;
	for (int i = 0; i < 1000 && cap_info(SLOT_GIVEN, &ci); i++)
		sys_yield();
	int hart = (int)((arg >> 8) & 0xff);
	if (uthread_start(mt_server, NULL, hart == 0xff ? -1 : hart, 1) < 0)
		return 71;
	long ep = slot_alloc();
	if (ep < 0 || ep_create(ep))
		return 72;
	uint64_t w[4] = { 0 };
	ipc(SYS_RECV, ep, w, SLOT_NONE);   /* nobody sends */
	return 73;
}

/* A call to the child server: 0 and the answer, or the IPC error. */
long mt_call(long ep, uint64_t cmd, uint64_t va, uint64_t val, uint64_t *out)
{
	uint64_t w[4] = { cmd, va, val, 0 };
	struct sysret r = ipc(SYS_CALL, ep, w, SLOT_NONE);
	if (!r.a0 && out)
		*out = (uint64_t)r.a1;
	return r.a0;
}

long child_start(struct child *ch, int hart, long frames)
{
	ch->task = slot_alloc(), ch->ep = slot_alloc(), ch->rc = slot_alloc();
	if (ch->task < 0 || ch->ep < 0 || ch->rc < 0)
		return -E_NOMEM;
	long r = ep_create(ch->ep);
	if (!r)
		r = task_spawn_q(self_module(), ROLE_MM_TOUCH | ((uint64_t)(hart < 0 ? 0xff : hart) << 8), ch->task,
				 QUOTA(frames, 4, 4, 0), ch->ep);
	if (!r)
		r = task_region(ch->task, ch->rc);
	return r;
}

/* Ends the child (if still alive) and frees the slots; its exit status. */
long child_end(struct child *ch, int kill)
{
	long st = -1;
	if (ch->task >= 0) {
		struct cap_info ci;
		if (cap_info(ch->task, &ci) == 0) {
			if (kill)
				task_kill(ch->task);
			st = task_wait(ch->task);
		}
		cap_delete(ch->task);
		slot_release(ch->task);
	}
	if (ch->rc >= 0)
		cap_delete(ch->rc), slot_release(ch->rc);
	if (ch->ep >= 0)
		cap_delete(ch->ep), slot_release(ch->ep);
	ch->task = ch->ep = ch->rc = -1;
	return st;
}

static long txn1(long rc, uint64_t lo, uint64_t hi, struct region_op *op)
{
	long r = region_txn(rc, lo, hi, op, 1);
	return r < 0 ? r : op->result;
}

static long query(long rc, uint64_t va, struct region_op *q)
{
	memset(q, 0, sizeof *q);
	q->op = ROP_QUERY;
	q->va = va;
	return txn1(rc, va, va + PG, q);
}

static long kind_of(long rc, uint64_t va)
{
	struct region_op q;
	long r = query(rc, va, &q);
	return r ? -100 + r : (long)q.out_kind;
}

static long unmap(long rc, uint64_t va, uint64_t len)
{
	struct region_op op = { .op = ROP_UNMAP, .va = va, .len = len };
	return txn1(rc, va, va + len, &op);
}

static long usage(long task)
{
	struct cap_info ci;
	return cap_info(task, &ci) ? -1 : (long)ci.lo;
}

/* Counters back to `before` (free frames and frame objects unless !frames,
 * tasks, threads, endpoints, caps); RCU-deferred frees get a moment. */
static int counters_back_f(struct kcounters *a, int frames, char *why)
{
	struct kcounters b;
	for (int i = 0; i < 200; i++) {
		dbg(DBG_COUNTERS, (uint64_t)&b, 0);
		if ((!frames || (b.free_frames == a->free_frames && b.frame_objs == a->frame_objs)) &&
		    b.tasks == a->tasks && b.threads == a->threads && b.endpoints == a->endpoints &&
		    b.caps == a->caps)
			return 0;
		uint64_t t = rdtime() + ticks_per_sec() / 100;
		while (rdtime() < t)
			sys_yield();
	}
	snprintf(why, 160, "leak: frames %ld tasks %ld threads %ld eps %ld uframes %ld caps %ld",
		 (long)(a->free_frames - b.free_frames), (long)(b.tasks - a->tasks),
		 (long)(b.threads - a->threads), (long)(b.endpoints - a->endpoints),
		 (long)(b.frame_objs - a->frame_objs), (long)(b.caps - a->caps));
	return 1;
}
static int counters_back(struct kcounters *a, char *why) { return counters_back_f(a, 1, why); }

/* ------------------------------------------------------------------ */

#define CW 0x60000000UL          /* clone window: 8 MiB, used at both ends */
#define CW_LEN 0x800000UL
#define CW_PAGES 8
static uint64_t cw_page(int i) { return i < CW_PAGES ? CW + i * PG : CW + CW_LEN - (2 * CW_PAGES - i) * PG; }
static uint64_t pat(int i) { return 0xc0de0000UL + (uint64_t)i; }

int mm_cow_fork(char *why)
{
	struct kcounters before;
	struct child ch = { -1, -1, -1 };
	int mapped = 0;
	why[0] = 0;
	settled_counters(&before);
	CK(child_start(&ch, -1, 256) == 0, "child start");
	CK(mem_reserve(CW, CW_PAGES * PG) == 0 && mem_reserve(CW + CW_LEN - CW_PAGES * PG, CW_PAGES * PG) == 0,
	   "reserve");
	mapped = 1;
	for (int i = 0; i < 2 * CW_PAGES; i++)
		*(volatile uint64_t *)cw_page(i) = pat(i);
	struct clone_stats st;
	long r = sc6(SYS_REGION_CLONE, SLOT_SELF_AS, ch.rc, CW, CW + CW_LEN, (long)&st, 0);
	CK(r == 0, "clone: %s", err_name(r));
	CK(st.frames == 2 * CW_PAGES, "frames shared %lu, want %d", st.frames, 2 * CW_PAGES);
	CK(st.skipped > 0, "no empty subtree skipped in a sparse window");
	CK(st.pt_pages > 0 && st.statuses == 0, "pt_pages %lu statuses %lu", st.pt_pages, st.statuses);
	for (int i = 0; i < 2 * CW_PAGES; i++)
		CK(*(volatile uint64_t *)cw_page(i) == pat(i), "our page %d changed by the clone", i);
	CK(kind_of(SLOT_SELF_AS, CW) == RK_COW && kind_of(ch.rc, CW) == RK_COW, "not COW on both sides");
	/* A second clone into a range that is no longer empty changes nothing. */
	r = sc6(SYS_REGION_CLONE, SLOT_SELF_AS, ch.rc, CW, CW + CW_LEN, (long)&st, 0);
	CK(r == -E_EXIST, "clone over a used range: %s", err_name(r));
	r = sc6(SYS_REGION_CLONE, SLOT_SELF_AS, SLOT_SELF_AS, CW, CW + CW_LEN, (long)&st, 0);
	CK(r == -E_INVAL, "clone into the same address space: %s", err_name(r));
	uint64_t v;
	CK(mt_call(ch.ep, MT_READ, cw_page(0), 0, &v) == 0 && v == pat(0), "child reads %lx", v);
	/* Each side sees its own writes only. */
	*(volatile uint64_t *)cw_page(0) = 0x11;
	CK(kind_of(SLOT_SELF_AS, CW) == RK_MAPPED, "our written page still COW");
	CK(kind_of(ch.rc, CW) == RK_COW, "the child's page changed kind on our write");
	CK(mt_call(ch.ep, MT_READ, cw_page(0), 0, &v) == 0 && v == pat(0), "child sees our write (%lx)", v);
	CK(mt_call(ch.ep, MT_WRITE, cw_page(1), 0x22, NULL) == 0, "child write");
	CK(mt_call(ch.ep, MT_READ, cw_page(1), 0, &v) == 0 && v == 0x22, "child lost its write");
	CK(*(volatile uint64_t *)cw_page(1) == pat(1), "we see the child's write");
	/* One reference left: the child's write makes the frame writable in
	 * place (nobody pays for a new frame); a shared one is copied and the
	 * copy is charged to the child. */
	CK(unmap(SLOT_SELF_AS, cw_page(2), PG) == 0, "unmap our page 2");
	long cu = usage(ch.task), mu = usage(SLOT_SELF_TASK);
	CK(mt_call(ch.ep, MT_WRITE, cw_page(2), 0x33, NULL) == 0, "child write page 2");
	CK(usage(ch.task) == cu && usage(SLOT_SELF_TASK) == mu,
	   "write to a COW page with one reference allocated (child %ld -> %ld, us %ld -> %ld)",
	   cu, usage(ch.task), mu, usage(SLOT_SELF_TASK));
	CK(kind_of(ch.rc, cw_page(2)) == RK_MAPPED, "page 2 not writable after the write");
	CK(mt_call(ch.ep, MT_READ, cw_page(2), 0, &v) == 0 && v == 0x33, "page 2 reads %lx", v);
	CK(mt_call(ch.ep, MT_WRITE, cw_page(3), 0x44, NULL) == 0, "child write page 3");
	CK(usage(ch.task) == cu + 1, "a shared COW page was not copied for the child (%ld -> %ld)",
	   cu, usage(ch.task));
	CK(*(volatile uint64_t *)cw_page(3) == pat(3), "our page 3 changed");
	/* Clone the child's view back into our (emptied) window: it is the
	 * pre-fork data plus the child's own writes. */
	CK(unmap(SLOT_SELF_AS, CW, CW_LEN) == 0, "unmap our window");
	r = sc6(SYS_REGION_CLONE, ch.rc, SLOT_SELF_AS, CW, CW + CW_LEN, (long)&st, 0);
	CK(r == 0 && st.frames == 2 * CW_PAGES, "clone back: %s, %lu frames", err_name(r), st.frames);
	CK(*(volatile uint64_t *)cw_page(0) == pat(0) && *(volatile uint64_t *)cw_page(1) == 0x22 &&
	   *(volatile uint64_t *)cw_page(2) == 0x33 && *(volatile uint64_t *)cw_page(3) == 0x44 &&
	   *(volatile uint64_t *)cw_page(9) == pat(9), "the child's view is wrong");
	CK(mt_call(ch.ep, MT_EXIT, 0, 0, NULL) == 0, "child exit");
	r = child_end(&ch, 0);
	CK(r == 0, "child status %ld", r);
out:
	child_end(&ch, 1);
	if (mapped)
		unmap(SLOT_SELF_AS, CW, CW_LEN);
	if (why[0])
		return 1;
	return counters_back(&before, why);
}

#define PV 0x61000000UL   /* a page of the child's, and our view of its frame */
#define OV 0x61100000UL

/* A child serving on logical hart `hart` (-1: any) with a frame mapped RW
 * at PV in it and at OV in us. */
static long shared_child_on(struct child *ch, long *f, char *why, int hart)
{
	*f = slot_alloc();
	if (*f < 0 || child_start(ch, hart, 256) || frame_alloc(*f)) {
		snprintf(why, 160, "setup");
		return -1;
	}
	struct region_op m = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = PV, .arg = *f };
	struct region_op o = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = OV, .arg = *f };
	if (txn1(ch->rc, PV, PV + PG, &m) || txn1(SLOT_SELF_AS, OV, OV + PG, &o)) {
		snprintf(why, 160, "map: %s %s", err_name(m.result), err_name(o.result));
		return -1;
	}
	return 0;
}

/* End a shared_child test: the child (killed if still alive), our view of
 * the frame and its cap; then every counter must be back where `before`
 * saw it, unless the test already failed (why set). 0 or 1 (failed). */
static int shared_child_done(struct child *ch, long f, struct kcounters *before, char *why)
{
	child_end(ch, 1);
	unmap(SLOT_SELF_AS, OV, PG);
	if (f >= 0)
		cap_delete(f), slot_release(f);
	if (why[0])
		return 1;
	return counters_back(before, why);
}

/* The same on hart 1, when there is one. */
static long shared_child(struct child *ch, long *f, char *why)
{
	return shared_child_on(ch, f, why, ncpus() >= 2 ? 1 : -1);
}

/* The pager thread of mm_protect: takes one fault, records it, gives the
 * page its write permission back and resumes the client. */
struct pgr { long ep, rc; volatile long addr, access, done; };
static void pgr_fn(void *a)
{
	struct pgr *p = a;
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, p->ep, w, SLOT_NONE);
	if (r.a0) {
		p->done = -1;
		return;
	}
	p->addr = r.a1;
	p->access = FAULT_ACCESS((uint64_t)r.a2);
	struct region_op op = { .op = ROP_PROTECT, .prot = PROT_R | PROT_W, .va = PV, .len = PG };
	txn1(p->rc, PV, PV + PG, &op);
	w[0] = FAULT_RESUME;
	ipc(SYS_REPLY, 0, w, SLOT_NONE);
	p->done = 1;
}

int mm_protect(char *why)
{
	struct kcounters before;
	struct child ch = { -1, -1, -1 };
	long f = -1, nw = slot_alloc(), pep = slot_alloc(), psend = slot_alloc(), pth = -1;
	struct pgr pg = { 0 };
	why[0] = 0;
	settled_counters(&before);
	if (shared_child(&ch, &f, why))
		goto out;
	uint64_t v;
	CK(mt_call(ch.ep, MT_WRITE, PV, 5, NULL) == 0 && mt_call(ch.ep, MT_READ, PV, 0, &v) == 0 && v == 5,
	   "child write before protect");
	CK(*(volatile uint64_t *)OV == 5, "shared frame not shared");
	struct region_op p = { .op = ROP_PROTECT, .prot = PROT_R, .va = PV, .len = PG };
	CK(txn1(ch.rc, PV, PV + PG, &p) == 0, "protect: %s", err_name(p.result));
	struct region_op q;
	CK(query(ch.rc, PV, &q) == 0 && q.out_kind == RK_MAPPED && (q.out_prot & 7) == PROT_R,
	   "after protect: kind %lu prot %lx", q.out_kind, q.out_prot);
	/* Refused: W|X, and a right the region cap lacks. */
	p.prot = PROT_R | PROT_W | PROT_X;
	CK(txn1(ch.rc, PV, PV + PG, &p) == -E_INVAL, "protect to W|X: %s", err_name(p.result));
	CK(cap_mint(ch.rc, nw, R_QUERY | R_PROTECT | R_READ, 0, PV, PV + PG) == 0, "mint read-only");
	p.prot = PROT_R | PROT_W;
	CK(txn1(nw, PV, PV + PG, &p) == -E_PERM, "protect adding W through a cap without R_WRITE: %s",
	   err_name(p.result));
	p.prot = PROT_R;
	CK(txn1(nw, PV, PV + PG, &p) == 0, "protect within the cap's rights: %s", err_name(p.result));
	CK(mt_call(ch.ep, MT_READ, PV, 0, &v) == 0 && v == 5, "read after protect");
	/* With a fault endpoint, the write through the downgraded page (hart
	 * 1's TLB had it writable) is a fault our pager thread takes. */
	CK(ep_create(pep) == 0 && cap_mint(pep, psend, R_SEND, 7, 0, 0) == 0, "pager endpoint");
	long fe = sc2(SYS_FAULT_EP_SET, ch.task, psend);
	if (fe == 0) {
		pg.ep = pep, pg.rc = ch.rc;
		pth = uthread_start(pgr_fn, &pg, -1, 1);
		CK(pth >= 0, "pager thread");
		CK(mt_call(ch.ep, MT_WRITE, PV, 6, NULL) == 0, "write resumed by the pager");
		uint64_t end = rdtime() + 10 * ticks_per_sec();
		while (!pg.done && rdtime() < end)
			sys_yield();
		CK(pg.done == 1 && pg.addr == (long)PV && pg.access == FA_WRITE,
		   "pager saw done %ld addr %lx access %ld", pg.done, pg.addr, pg.access);
		CK(*(volatile uint64_t *)OV == 6, "resumed write lost");
		CK(sc2(SYS_FAULT_EP_SET, ch.task, SLOT_NONE) == 0, "clear the fault endpoint");
		p.prot = PROT_R;
		CK(txn1(ch.rc, PV, PV + PG, &p) == 0, "protect again: %s", err_name(p.result));
	} else {
		CK(fe == -E_NOSYS, "fault endpoint: %s", err_name(fe));
		*(volatile uint64_t *)OV = 6;
	}
	/* Without one, the write kills the child. */
	long r = mt_call(ch.ep, MT_WRITE, PV, 7, NULL);
	CK(r != 0, "write to a read-only page went through");
	r = child_end(&ch, 0);
	CK(r == EXIT_TRAP(TRAP_WRITE_FAULT), "child status %ld, want a write fault (%d)", r,
	   EXIT_TRAP(TRAP_WRITE_FAULT));
	CK(*(volatile uint64_t *)OV == 6, "the refused write reached the frame");
out:
	child_end(&ch, 1);
	unmap(SLOT_SELF_AS, OV, PG);
	if (f >= 0)
		cap_delete(f), slot_release(f);
	if (pth >= 0)
		cap_delete(pth), slot_release(pth);
	long sl[] = { nw, pep, psend };
	for (unsigned i = 0; i < 3; i++)
		cap_delete(sl[i]), slot_release(sl[i]);
	if (why[0])
		return 1;
	/* a thread's stack stays reserved (uthread_start): frames not compared then */
	return counters_back_f(&before, pth < 0, why);
}

int mm_unmap_other_hart(char *why)
{
	struct kcounters before;
	struct child ch = { -1, -1, -1 };
	long f = -1;
	why[0] = 0;
	settled_counters(&before);
	if (shared_child(&ch, &f, why))
		goto out;
	*(volatile uint64_t *)OV = 77;
	uint64_t v = 0, h = 0;
	for (int i = 0; i < 3; i++)
		CK(mt_call(ch.ep, MT_READ, PV, 0, &v) == 0 && v == 77, "child read %lx", v);
	uint64_t w[4] = { MT_READ, PV, 0, 0 };
	struct sysret s = ipc(SYS_CALL, ch.ep, w, SLOT_NONE);
	h = (uint64_t)s.a2;
	CK(ncpus() < 2 || h == 1, "server ran on hart %lu", h);
	CK(unmap(ch.rc, PV, PG) == 0, "unmap");
	long r = mt_call(ch.ep, MT_READ, PV, 0, &v);
	CK(r != 0, "read after unmap went through (%lx)", v);
	r = child_end(&ch, 0);
	CK(r == EXIT_TRAP(TRAP_READ_FAULT), "child status %ld, want a read fault (%d)", r,
	   EXIT_TRAP(TRAP_READ_FAULT));
out:
	return shared_child_done(&ch, f, &before, why);
}

/* A child thread on logical hart `hart` spins reading and writing a shared
 * page without leaving its address space (so the hart's TLB keeps the
 * translation); we unmap the page in the child's address space. The
 * unmap's TLB flush must reach that hart: then its next access faults and
 * the child dies; without the flush it would go on writing through the
 * stale translation, which we would see in our own mapping of the frame.
 * We look for 3 ms right after the unmap, without yielding: QEMU drops a
 * hart's whole TLB at other moments too (a trip to the firmware for the
 * timer tick, every 10 ms), so a stale entry lives only until then. */
static int unmap_while_spinning_on(int hart, char *why)
{
	struct kcounters before;
	struct child ch = { -1, -1, -1 };
	long f = -1;
	why[0] = 0;
	settled_counters(&before);
	if (shared_child_on(&ch, &f, why, hart))
		goto out;
	volatile uint64_t *ov = (volatile uint64_t *)OV;
	ov[0] = 5;
	uint64_t w[4] = { MT_SPIN, PV, 0, 0 };
	struct sysret sr = ipc(SYS_CALL, ch.ep, w, SLOT_NONE);
	CK(sr.a0 == 0, "spin call: %s", err_name(sr.a0));
	CK((uint64_t)sr.a2 == (uint64_t)hart, "child ran on hart %ld, want %d", sr.a2, hart);
	uint64_t end = rdtime() + 10 * ticks_per_sec();   /* 10 s */
	while (ov[1] < 1000 && rdtime() < end)
		sys_yield();
	CK(ov[1] >= 1000, "the child does not spin (%lu)", ov[1]);
	CK(unmap(ch.rc, PV, PG) == 0, "unmap");
	uint64_t n0 = ov[1], end3 = rdtime() + 3 * ticks_per_sec() / 1000;
	while (rdtime() < end3)
		;
	uint64_t n1 = ov[1];
	CK(n1 <= n0 + 1, "hart %d still writes through the unmapped page (%lu -> %lu)", hart, n0, n1);
	long r = child_end(&ch, 0);
	CK(r == EXIT_TRAP(TRAP_READ_FAULT) || r == EXIT_TRAP(TRAP_WRITE_FAULT),
	   "child status %ld, want a read or write fault (%d or %d)", r, EXIT_TRAP(TRAP_READ_FAULT),
	   EXIT_TRAP(TRAP_WRITE_FAULT));
out:
	return shared_child_done(&ch, f, &before, why);
}

/* That on the hart with the highest hart id, when the id is 64 or more:
 * the flush goes out in the SBI hart-mask window of that id (child_start
 * pins to logical harts below 255). Passes at once on a machine without
 * such a hart. */
int mm_unmap_high_hart(char *why)
{
	long n = ncpus(), best = -1, best_id = -1;
	for (long i = 1; i < n && i < 255; i++) {
		long id = dbg(DBG_HARTID, (uint64_t)i, 0);
		if (id >= 64 && id > best_id) {
			best = i;
			best_id = id;
		}
	}
	why[0] = 0;
	return best < 0 ? 0 : unmap_while_spinning_on((int)best, why);
}

#define ZV 0x62000000UL    /* cap range [ZV + 4 pages, ZV + 8 pages) */

int mm_pager_ops_confined(char *why)
{
	struct kcounters before;
	long sub = slot_alloc(), dst = slot_alloc();
	why[0] = 0;
	settled_counters(&before);
	const unsigned all = R_QUERY | R_MAP | R_MARK | R_UNMAP | R_PROTECT | R_READ | R_WRITE | R_EXEC;
	const uint64_t lo = ZV + 4 * PG, hi = ZV + 8 * PG;
	CK(mem_reserve(ZV, 12 * PG) == 0, "reserve");
	for (int i = 0; i < 12; i++)
		*(volatile uint64_t *)(ZV + i * PG) = i;
	static const struct { uint32_t op; unsigned right; } ops[] = {
		{ ROP_MARK_PAGER, R_MARK }, { ROP_MARK_SWAPPED, R_MARK }, { ROP_PROTECT, R_PROTECT },
		{ ROP_AGE, R_PROTECT }, { ROP_AGE, R_QUERY }, { ROP_EVICT, R_UNMAP }, { ROP_QUERY, R_QUERY },
		{ ROP_CLEAN, R_PROTECT },
	};
	for (unsigned k = 0; k < sizeof ops / sizeof ops[0]; k++) {
		struct region_op op = { .op = ops[k].op, .prot = PROT_R, .len = PG, .arg = 5 };
		if (ops[k].op == ROP_EVICT)
			op.arg = dst;
		if (ops[k].op == ROP_MARK_PAGER || ops[k].op == ROP_MARK_SWAPPED)
			op.va = lo + PG;   /* (a mapped page: only the range and rights matter here) */
		CK(cap_mint(SLOT_SELF_AS, sub, all, 0, lo, hi) == 0, "mint");
		/* outside the cap: the locked range, or the op in a wider lock */
		op.va = ZV;
		CK(txn1(sub, ZV, ZV + PG, &op) == -E_RANGE, "op %u outside the cap: %s", op.op, err_name(op.result));
		op.va = hi;
		CK(txn1(sub, lo, hi + PG, &op) == -E_RANGE, "op %u past the cap: %s", op.op, err_name(op.result));
		op.va = lo;
		/* without the right */
		cap_delete(sub);
		CK(cap_mint(SLOT_SELF_AS, sub, all & ~ops[k].right, 0, lo, hi) == 0, "mint without");
		CK(txn1(sub, lo, hi, &op) == -E_PERM, "op %u without its right: %s", op.op, err_name(op.result));
		cap_delete(sub);
	}
	/* and with everything, inside: each works */
	CK(cap_mint(SLOT_SELF_AS, sub, all, 0, lo, hi) == 0, "mint");
	struct region_op ok[5] = {
		{ .op = ROP_AGE, .va = lo },
		{ .op = ROP_PROTECT, .prot = PROT_R, .va = lo, .len = PG },
		{ .op = ROP_EVICT, .va = lo + PG, .arg = dst },
		{ .op = ROP_MARK_SWAPPED, .va = lo + PG, .len = PG, .arg = 9 },
		{ .op = ROP_QUERY, .va = lo + PG },
	};
	long r = region_txn(sub, lo, hi, ok, 5);
	CK(r == 5, "ops inside the cap: %ld (%s %s %s %s)", r, err_name(ok[0].result), err_name(ok[1].result),
	   err_name(ok[2].result), err_name(ok[3].result));
	CK(ok[4].out_kind == RK_SWAPPED && ok[4].out_tag == 9, "swapped: %lu/%lu", ok[4].out_kind, ok[4].out_tag);
	struct region_op pg = { .op = ROP_MARK_PAGER, .prot = PROT_R, .va = lo + PG, .len = PG, .arg = 33 };
	CK(txn1(sub, lo, hi, &pg) == 0, "mark pager: %s", err_name(pg.result));
	struct region_op q;
	CK(query(sub, lo + PG, &q) == 0 && q.out_kind == RK_PAGER && q.out_tag == 33 && (q.out_prot & 7) == PROT_R,
	   "pager query %lu %lu", q.out_kind, q.out_tag);
out:
	cap_delete(sub), slot_release(sub);
	cap_delete(dst), slot_release(dst);
	unmap(SLOT_SELF_AS, ZV, 12 * PG);
	if (why[0])
		return 1;
	return counters_back(&before, why);
}

#define BV 0x63000000UL

/* Kinds and permissions of n pages from va. */
static void snap(uint64_t va, int n, uint64_t *out)
{
	for (int i = 0; i < n; i++) {
		struct region_op q;
		query(SLOT_SELF_AS, va + i * PG, &q);
		out[i] = q.out_kind << 8 | (q.out_prot & 7) | q.out_tag << 16;
	}
}

int mm_bad_input(char *why)
{
	struct kcounters before;
	long f = slot_alloc(), noshare = slot_alloc(), ro = slot_alloc(), ep = slot_alloc(),
	     full = slot_alloc(), lim = slot_alloc();
	uint64_t s0[8], s1[8];
	why[0] = 0;
	settled_counters(&before);
	/* page 0 anonymous (touched), 1 the frame f, 2 reserved, 3-7 nothing */
	CK(frame_alloc(f) == 0 && ep_create(ep) == 0 && ep_create(full) == 0, "setup");
	CK(cap_mint(f, noshare, R_READ | R_WRITE, 0, 0, 0) == 0 && cap_mint(f, ro, R_READ | R_SHARE, 0, 0, 0) == 0,
	   "mint frames");
	CK(mem_reserve(BV, PG) == 0, "reserve");
	*(volatile uint64_t *)BV = 1;
	struct region_op m = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = BV + PG, .arg = f };
	CK(txn1(SLOT_SELF_AS, BV, BV + 8 * PG, &m) == 0, "map f");
	CK(mem_reserve(BV + 2 * PG, PG) == 0, "reserve 2");
	CK(cap_mint(SLOT_SELF_AS, lim, R_QUERY | R_MAP | R_MARK | R_PROTECT | R_READ, 0, BV, BV + 8 * PG) == 0,
	   "mint read-only region");
	snap(BV, 8, s0);
	const uint64_t lo = BV, hi = BV + 4 * PG;
	struct { struct region_op op; long cap; long want; const char *what; } bad[] = {
		{ { .op = ROP_MARK, .prot = PROT_R, .va = BV + 3 * PG, .len = 2 * PG }, SLOT_SELF_AS, -E_RANGE, "mark leaving the lock" },
		{ { .op = ROP_MARK_PAGER, .prot = PROT_R, .va = BV + 2 * PG, .len = 4 * PG, .arg = 1 }, SLOT_SELF_AS, -E_RANGE, "pager mark leaving the lock" },
		{ { .op = ROP_PROTECT, .prot = PROT_R, .va = BV, .len = 5 * PG }, SLOT_SELF_AS, -E_RANGE, "protect leaving the lock" },
		{ { .op = ROP_MARK_SWAPPED, .va = BV + 4 * PG, .len = PG, .arg = 1 }, SLOT_SELF_AS, -E_RANGE, "swapped mark outside the lock" },
		{ { .op = ROP_MAP, .prot = PROT_R, .va = BV + 3 * PG, .arg = ep }, SLOT_SELF_AS, -E_BADCAP, "endpoint cap as frame" },
		{ { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = BV + 3 * PG, .arg = ro }, SLOT_SELF_AS, -E_PERM, "writable map of a read-only frame" },
		{ { .op = ROP_MAP, .prot = PROT_R, .va = BV + 3 * PG, .arg = noshare }, SLOT_SELF_AS, -E_PERM, "second map without R_SHARE" },
		{ { .op = ROP_MARK, .prot = PROT_R, .va = BV, .len = PG }, SLOT_SELF_AS, -E_EXIST, "mark over a mapped page" },
		{ { .op = ROP_MARK_PAGER, .prot = PROT_R, .va = BV + PG, .len = PG, .arg = 2 }, SLOT_SELF_AS, -E_EXIST, "pager mark over a mapped page" },
		{ { .op = ROP_MARK_SWAPPED, .va = BV, .len = 2 * PG, .arg = 2 }, SLOT_SELF_AS, -E_EXIST, "swapped mark over a mapped page" },
		{ { .op = ROP_MARK_PAGER, .prot = PROT_R, .va = BV + 3 * PG, .len = PG, .arg = 1L << 40 }, SLOT_SELF_AS, -E_INVAL, "pager tag too big" },
		{ { .op = ROP_EVICT, .va = BV, .arg = full }, SLOT_SELF_AS, -E_EXIST, "evict into a full slot" },
		{ { .op = ROP_EVICT, .va = BV + 2 * PG }, SLOT_SELF_AS, -E_NOENT, "evict of a reserved page" },
		{ { .op = ROP_EVICT, .va = BV + PG }, SLOT_SELF_AS, -E_BUSY, "evict of a frame a cap holds" },
		{ { .op = ROP_PROTECT, .prot = PROT_R | PROT_W, .va = BV, .len = PG }, lim, -E_PERM, "protect adding W the cap lacks" },
		{ { .op = ROP_MARK, .prot = PROT_R | PROT_X, .va = BV + 3 * PG, .len = PG }, lim, -E_PERM, "mark X the cap lacks" },
		{ { .op = ROP_PROTECT, .prot = PROT_W | PROT_X | PROT_R, .va = BV, .len = PG }, SLOT_SELF_AS, -E_INVAL, "protect to W|X" },
		{ { .op = ROP_PROTECT, .prot = PROT_W, .va = BV, .len = PG }, SLOT_SELF_AS, -E_INVAL, "protect without R" },
	};
	for (unsigned k = 0; k < sizeof bad / sizeof bad[0]; k++) {
		long ev = slot_alloc();
		if (bad[k].op.op == ROP_EVICT && bad[k].op.arg == 0)
			bad[k].op.arg = ev;
		long r = txn1(bad[k].cap, lo, hi, &bad[k].op);
		struct cap_info ci;
		int leaked = bad[k].op.op == ROP_EVICT && bad[k].op.arg == ev && cap_info(ev, &ci) == 0;
		slot_release(ev);
		CK(r == bad[k].want, "%s: %s, want %s", bad[k].what, err_name(r), err_name(bad[k].want));
		CK(!leaked, "%s: a cap appeared", bad[k].what);
		snap(BV, 8, s1);
		for (int i = 0; i < 8; i++)
			CK(s0[i] == s1[i], "%s: page %d changed (%lx -> %lx)", bad[k].what, i, s0[i], s1[i]);
	}
	CK(*(volatile uint64_t *)BV == 1, "data changed");
	/* and the good versions of the sharing rule */
	m.va = BV + 3 * PG;
	m.arg = ro;
	m.prot = PROT_R;
	CK(txn1(SLOT_SELF_AS, lo, hi, &m) == 0, "second map with R_SHARE: %s", err_name(m.result));
out:
	unmap(SLOT_SELF_AS, BV, 8 * PG);
	long s[] = { f, noshare, ro, ep, full, lim };
	for (unsigned i = 0; i < sizeof s / sizeof s[0]; i++)
		cap_delete(s[i]), slot_release(s[i]);
	if (why[0])
		return 1;
	return counters_back(&before, why);
}

#define EV 0x64000000UL

int mm_evict_roundtrip(char *why)
{
	struct kcounters before;
	long s = slot_alloc();
	why[0] = 0;
	settled_counters(&before);
	CK(mem_reserve(EV, PG) == 0, "reserve");
	volatile uint64_t *p = (volatile uint64_t *)EV;
	for (int i = 0; i < 512; i++)
		p[i] = 0xe0000000UL + (uint64_t)i;
	long u0 = usage(SLOT_SELF_TASK);
	struct region_op age[2] = { { .op = ROP_AGE, .va = EV }, { .op = ROP_AGE, .va = EV } };
	CK(region_txn(SLOT_SELF_AS, EV, EV + PG, age, 2) == 2, "age");
	CK((age[0].out_prot & QF_ACCESSED) && !(age[1].out_prot & QF_ACCESSED) && (age[1].out_prot & QF_DIRTY),
	   "age: %lx then %lx", age[0].out_prot, age[1].out_prot);
	struct region_op ops[3] = {
		{ .op = ROP_EVICT, .va = EV, .arg = s },
		{ .op = ROP_MARK_SWAPPED, .va = EV, .len = PG, .arg = 4242 },
		{ .op = ROP_QUERY, .va = EV },
	};
	long r = region_txn(SLOT_SELF_AS, EV, EV + PG, ops, 3);
	CK(r == 3, "evict txn %ld (%s %s)", r, err_name(ops[0].result), err_name(ops[1].result));
	CK(ops[0].out_prot & QF_DIRTY, "evict did not report the page dirty (%lx)", ops[0].out_prot);
	CK(ops[2].out_kind == RK_SWAPPED && ops[2].out_tag == 4242, "query: kind %lu tag %lu", ops[2].out_kind,
	   ops[2].out_tag);
	struct cap_info ci;
	CK(cap_info(s, &ci) == 0 && ci.type == CAP_FRAME && ci.rights == (R_READ | R_WRITE | R_SHARE),
	   "evicted frame cap: type %u rights %x", ci.type, ci.rights);
	CK(usage(SLOT_SELF_TASK) == u0, "our usage %ld -> %ld (the frame was ours already)", u0,
	   usage(SLOT_SELF_TASK));
	struct region_op m = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = EV, .arg = s };
	CK(txn1(SLOT_SELF_AS, EV, EV + PG, &m) == 0, "map back: %s", err_name(m.result));
	for (int i = 0; i < 512; i++)
		CK(p[i] == 0xe0000000UL + (uint64_t)i, "word %d lost", i);
out:
	unmap(SLOT_SELF_AS, EV, PG);
	cap_delete(s), slot_release(s);
	if (why[0])
		return 1;
	return counters_back(&before, why);
}

#define XV 0x65000000UL   /* a page of the child's that we evict */

/* EVICT from another task's address space moves the frame and its charge:
 * the child that paid for the page pays one frame less, we pay one more,
 * the data comes with the frame, and the child's page is left empty. */
int mm_evict_charge(char *why)
{
	struct kcounters before;
	struct child ch = { -1, -1, -1 };
	long s = slot_alloc();
	int ours = 0;
	why[0] = 0;
	settled_counters(&before);
	CK(child_start(&ch, -1, 128) == 0, "child start");   /* room for selftest.elf itself */
	/* Two pages: the one left keeps the child's PT pages in use, so
	 * usage moves by the evicted frame alone. */
	struct region_op mk = { .op = ROP_MARK, .prot = PROT_R | PROT_W, .va = XV, .len = 2 * PG };
	CK(txn1(ch.rc, XV, XV + 2 * PG, &mk) == 0, "reserve in the child: %s", err_name(mk.result));
	CK(mt_call(ch.ep, MT_WRITE, XV + PG, 1, NULL) == 0, "child write");
	long cu = usage(ch.task);
	CK(mt_call(ch.ep, MT_WRITE, XV, 0x5eed, NULL) == 0, "child write");
	CK(usage(ch.task) == cu + 1, "the child's fault was not charged to it (%ld -> %ld)", cu, usage(ch.task));
	long cu1 = usage(ch.task), mu = usage(SLOT_SELF_TASK);
	struct region_op ev = { .op = ROP_EVICT, .va = XV, .arg = s };
	CK(txn1(ch.rc, XV, XV + PG, &ev) == 0, "evict: %s", err_name(ev.result));
	CK(usage(ch.task) == cu1 - 1 && usage(SLOT_SELF_TASK) == mu + 1,
	   "charge did not move: child %ld -> %ld, us %ld -> %ld", cu1, usage(ch.task), mu, usage(SLOT_SELF_TASK));
	CK(kind_of(ch.rc, XV) == RK_INVALID, "the child's page is still there (kind %ld)", kind_of(ch.rc, XV));
	struct region_op m = { .op = ROP_MAP, .prot = PROT_R, .va = XV, .arg = s };
	CK(txn1(SLOT_SELF_AS, XV, XV + PG, &m) == 0, "map the evicted frame: %s", err_name(m.result));
	ours = 1;
	CK(*(volatile uint64_t *)XV == 0x5eed, "the data did not come with the frame");
	CK(mt_call(ch.ep, MT_EXIT, 0, 0, NULL) == 0, "child exit");
	long r = child_end(&ch, 0);
	CK(r == 0, "child status %ld", r);
out:
	child_end(&ch, 1);
	if (ours)
		unmap(SLOT_SELF_AS, XV, PG);
	cap_delete(s), slot_release(s);
	if (why[0])
		return 1;
	return counters_back(&before, why);
}

/* mm_tlb_targets: flushes of an address space go only to harts that may
 * have it loaded. A thread of ours spinning on another hart adds that
 * hart; once that hart has gone idle on the kernel's address space after
 * the thread exited, only ours is left. The hart may first run a thread
 * of another task (one an earlier test left to die): our bit goes when it
 * next idles, so the wait is bounded by time (10 s), not by a count. */
static volatile int tt_state;    /* 0 starting, 1 spinning, 2 told to stop */

static void tt_spin(void *unused)
{
	(void)unused;
	__atomic_store_n(&tt_state, 1, __ATOMIC_RELEASE);
	while (__atomic_load_n(&tt_state, __ATOMIC_ACQUIRE) == 1)
		;    /* in user mode: our address space stays loaded there */
}

int mm_tlb_targets(char *why)
{
	long th = -1;
	if (ncpus() < 2)
		return 0;    /* one hart: there is no other to drop */
	int other = self_hart() == 0 ? 1 : 0;
	tt_state = 0;
	th = uthread_start(tt_spin, NULL, other, 1);
	CK(th >= 0, "thread start: %s", err_name(th));
	while (!__atomic_load_n(&tt_state, __ATOMIC_ACQUIRE))
		sys_yield();
	long both = dbg(DBG_AS_HARTS, 0, 0);
	__atomic_store_n(&tt_state, 2, __ATOMIC_RELEASE);
	long after = both;
	for (uint64_t until = rdtime() + 10 * ticks_per_sec(); after >= 2 && rdtime() < until;) {   /* 10 s */
		sys_yield();
		after = dbg(DBG_AS_HARTS, 0, 0);
	}
	CK(both >= 2, "with a thread of ours running on hart %d: %ld harts targeted", other, both);
	CK(after == 1, "after that thread exited: %ld harts targeted (want 1: ours)", after);
out:
	__atomic_store_n(&tt_state, 2, __ATOMIC_RELEASE);
	if (th >= 0)
		cap_delete(th), slot_release(th);
	return why[0] ? 1 : 0;
}
