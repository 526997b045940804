/* bench pager: the round trip of a page fault through a user-level pager.
 * A client touches pages of a range marked pager-managed, one write each;
 * every touch faults, the kernel sends the fault to the pager, the pager
 * maps a frame there and answers "resume", and the client's write is
 * retried. Two variants, one JSON line each:
 *
 *   pager-libpager  the pager is this task on libpager (pager_attach,
 *                   pager_serve, pager_map in its fault callback); the
 *                   client is a child task (role ROLE_BENCH_PGCLI)
 *   pager-raw       the floor: a thread of this task is the client, and
 *                   this task's first thread serves its faults with the
 *                   bare ABI (SYS_RECV, one ROP_MAP, SYS_REPLY_RECV)
 *
 * The frames are allocated before the client starts (one frame cap a page,
 * deleted after the run), so no allocation is timed: a fault's work is
 * the fault, the message, one map transaction and the resume.
 *
 * rdinstret stamps split each timed fault into three parts: the client's
 * read just before its write to the pager's read just before the map call
 * (trap, kernel fault path, fault IPC, the pager's receive and decode);
 * the map call itself (the region transaction, through libpager's
 * pager_map in the libpager variant); the pager's read just after it to
 * the client's read just after its write (answer, resume, the retried
 * write). On one hart rdinstret is the hart's own count, shared by both
 * sides, so the parts add up to the round trip; the client and pager sum
 * their stamps separately and the differences of the sums are the parts.
 * Instruction fields are exact only under --icount on one hart and null
 * where bench_instret_is_clock says rdinstret is QEMU's clock. */
#include "ulib.h"
#include "bench.h"
#include "testlib.h"
#include "pager.h"

#define PB_VA 0x2c00000000UL     /* no other program uses it; below Sv39's top */
#define PB_WARM 16               /* untimed faults first: code and page-table pages warm */
#define PB_CLIENT_QUOTA QUOTA(512, 2, 1, 0)   /* the client task: image, stack, its page tables */
#define PB_RAW_BADGE 0xfa17ULL   /* the raw variant's fault endpoint cap */
#define PB_PRIO 1                /* the shell's own level, as the pager thread's */

/* Messages of the client to the pager (word 0), apart from its faults. */
enum { PB_READY = 1, PB_STAMPS, PB_WINDOW };

/* The client's side of a run: sums of its rdinstret stamps just before
 * and just after each timed write, and the timed window. */
struct pb_client {
	uint64_t before, after;
	uint64_t ticks, instret;
};

/* The pager's side: sums of its rdinstret stamps just before and after
 * each timed fault's map call, the timed faults it served, the first
 * error of a map. */
struct pb_pager {
	uint64_t map_start, map_end;
	unsigned long served;
	long err;
};

/* One barrier for the compiler: the stamps stay on their side of the
 * write they measure. */
#define PB_STAMP(v) do { __asm__ volatile("" ::: "memory"); (v) = rdinstret(); \
			 __asm__ volatile("" ::: "memory"); } while (0)

/* Write one byte of each of the pages [0, warm + n) at va, in order: the
 * first warm untimed, the other n timed, into *c. Every write faults
 * once (the range is pager-managed and nothing is mapped in it). */
static void pb_touch(uint64_t va, unsigned long warm, unsigned long n, struct pb_client *c)
{
	for (unsigned long i = 0; i < warm; i++)
		*(volatile char *)(va + i * BENCH_PG) = 1;
	uint64_t before = 0, after = 0, t0 = rdtime(), i0 = rdinstret();
	for (unsigned long i = warm; i < warm + n; i++) {
		uint64_t b, a;
		PB_STAMP(b);
		*(volatile char *)(va + i * BENCH_PG) = 1;
		PB_STAMP(a);
		before += b;
		after += a;
	}
	c->instret = rdinstret() - i0;
	c->ticks = rdtime() - t0;
	c->before = before;
	c->after = after;
}

/* count fresh frame caps in new slots (R_ALL: each is mapped once): the
 * array, or NULL with nothing held. */
static long *pb_frames_new(unsigned long count)
{
	long *f = malloc(count * sizeof *f);
	for (unsigned long i = 0; f && i < count; i++) {
		f[i] = slot_alloc();
		if (f[i] < 0 || frame_alloc(f[i])) {
			if (f[i] >= 0)
				slot_release(f[i]);
			while (i--)
				slot_drop(&f[i]);
			free(f);
			return NULL;
		}
	}
	return f;
}

/* Drop the caps pb_frames_new made; a frame still mapped somewhere stays
 * until its mapping goes. */
static void pb_frames_free(long *f, unsigned long count)
{
	for (unsigned long i = 0; i < count; i++)
		slot_drop(&f[i]);
	free(f);
}

/* Print the variant's line from both sides' sums over n timed faults:
 * the standard fields per fault, then round_trip_instret,
 * to_pager_instret, map_txn_instret, to_client_instret (null where
 * rdinstret is QEMU's clock) and round_trip_ns. */
static void pb_print(const char *name, const char *pager_task, unsigned long n,
		     const struct pb_client *c, const struct pb_pager *p)
{
	int clock = bench_instret_is_clock(c->ticks, c->instret);
	char rt[32], to[32], map[32], back[32], ns[32], extra[240];
	if (clock) {
		strcpy(rt, "null"), strcpy(to, "null"), strcpy(map, "null"), strcpy(back, "null");
	} else {
		bench_tenths(rt, sizeof rt, c->after - c->before, n);
		bench_tenths(to, sizeof to, p->map_start - c->before, n);
		bench_tenths(map, sizeof map, p->map_end - p->map_start, n);
		bench_tenths(back, sizeof back, c->after - p->map_end, n);
	}
	snprintf(extra, sizeof extra, "\"pager_task\":\"%s\",\"frames\":\"preallocated\","
		 "\"round_trip_instret\":%s,\"to_pager_instret\":%s,\"map_txn_instret\":%s,"
		 "\"to_client_instret\":%s,\"round_trip_ns\":%s",
		 pager_task, rt, to, map, back, bench_tenths(ns, sizeof ns, BENCH_NS(c->ticks), n));
	struct bench_line l = { .bench = name, .contention = "none", .threads = 2, .ops = n,
				.per_thread = n, .ticks = c->ticks, .instret = c->instret,
				.instret_clock = clock, .extra = extra };
	bench_print(&l);
}

/* ---- pager-libpager: this task pages a child task through libpager ---- */

struct pb_lib {
	struct pager pg;
	long task;                /* the client child's task cap */
	long *frames;             /* one a page of the range, by page index */
	unsigned long warm, n;
	struct pb_client c;       /* as the client reported it */
	struct pb_pager p;
	int reported;             /* PB_STAMPS and PB_WINDOW came */
	long status;              /* the client's exit status */
};

/* libpager's fault callback: map the page's own frame, read-write. A map
 * that fails kills the client (the run then reports the error). */
static int pb_lib_fault(struct pager *pg, struct pager_fault *f)
{
	struct pb_lib *b = pg->data;
	uint64_t page = f->offset / BENCH_PG, t0, t1;
	PB_STAMP(t0);
	long r = pager_map(f->client, f->offset, b->frames[page], PROT_R | PROT_W);
	PB_STAMP(t1);
	if (page >= b->warm) {
		b->p.map_start += t0;
		b->p.map_end += t1;
		b->p.served++;
	}
	if (r && !b->p.err)
		b->p.err = r;
	return r ? PAGER_KILL : PAGER_RESUME;
}

/* The client's calls: READY attaches its range (answer: error, warm, n;
 * a failed attach also ends the serve loop, since no death notice will
 * come); PB_STAMPS and PB_WINDOW carry its sums. Every call is answered. */
static long pb_lib_message(struct pager *pg, uint64_t badge, const uint64_t w[4], uint64_t reply[4])
{
	struct pb_lib *b = pg->data;
	(void)badge;
	if (w[0] == PB_READY) {
		long err = 0;
		if (!pager_attach(pg, b->task, PB_VA, (b->warm + b->n) * BENCH_PG, PROT_R | PROT_W, NULL, &err)) {
			b->p.err = err;
			pager_stop(pg);
		}
		reply[0] = (uint64_t)err;
		reply[1] = b->warm;
		reply[2] = b->n;
	} else if (w[0] == PB_STAMPS) {
		b->c.before = w[1];
		b->c.after = w[2];
	} else if (w[0] == PB_WINDOW) {
		b->c.ticks = w[1];
		b->c.instret = w[2];
		b->reported = 1;
	}
	return 1;
}

/* The client is gone: the run is over. */
static void pb_lib_gone(struct pager *pg, struct pager_client *c, long status)
{
	struct pb_lib *b = pg->data;
	(void)c;
	b->status = status;
	pager_stop(pg);
}

static const struct pager_ops pb_lib_ops = {
	.fault = pb_lib_fault, .message = pb_lib_message, .client_gone = pb_lib_gone,
};

/* The client task (ROLE_BENCH_PGCLI): once the pager has attached our
 * range (the answer to READY: error, warm, n), touch it, then send our
 * sums in two calls. Our exit status is 0, 3 when we were not attached,
 * 4 when a report failed; the pager learns it from the death notice. */
int bench_pager_child(void)
{
	uint64_t w[4] = { PB_READY, 0, 0, 0 };
	struct sysret r = ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	if (r.a0 || r.a1)
		return 3;                     /* not attached: touching would kill us */
	struct pb_client c;
	pb_touch(PB_VA, (unsigned long)r.a2, (unsigned long)r.a3, &c);
	uint64_t s[4] = { PB_STAMPS, c.before, c.after, 0 };
	uint64_t t[4] = { PB_WINDOW, c.ticks, c.instret, 0 };
	if (ipc(SYS_CALL, SLOT_GIVEN, s, SLOT_NONE).a0 || ipc(SYS_CALL, SLOT_GIVEN, t, SLOT_NONE).a0)
		return 4;
	return 0;
}

/* Run the libpager variant for n timed faults: 0, or the error (the
 * caller says what failed). Everything it made is gone after. */
static long pb_libpager(unsigned long n)
{
	static struct pb_lib b;
	memset(&b, 0, sizeof b);
	b.warm = PB_WARM;
	b.n = n;
	b.task = -1;
	long given = -1;
	long r = (b.frames = pb_frames_new(PB_WARM + n)) ? 0 : -E_NOMEM;
	if (!r)
		r = pager_init(&b.pg, &pb_lib_ops, &b);
	if (r) {
		if (b.frames)
			pb_frames_free(b.frames, PB_WARM + n);
		return r;
	}
	if ((given = slot_alloc()) < 0 || (b.task = slot_alloc()) < 0)
		r = -E_NOMEM;
	if (!r)
		r = cap_mint(b.pg.ep, given, R_SEND, 1, 0, 0);
	if (!r)
		r = task_spawn_q(self_module(), ROLE_BENCH_PGCLI, b.task, PB_CLIENT_QUOTA, given);
	slot_drop(&given);
	int spawned = !r;
	if (!r)
		r = pager_serve(&b.pg);
	if (spawned && r)
		task_kill(b.task);            /* no pager any more: do not leave it waiting */
	long st = spawned ? task_wait(b.task) : 0;
	slot_drop(&b.task);
	pager_fini(&b.pg);
	pb_frames_free(b.frames, PB_WARM + n);
	if (!r)
		r = b.p.err ? b.p.err : st || b.status ? -E_DEAD : 0;
	if (!r && (!b.reported || b.p.served != n))
		r = -E_INVAL;                 /* the two sides did not see the same run */
	if (!r)
		pb_print("pager-libpager", "other", n, &b.c, &b.p);
	return r;
}

/* ---- pager-raw: a thread of this task, served with the bare ABI ---- */

struct pb_raw {
	long ep;                  /* the pager's endpoint; the client calls it unbadged */
	unsigned long warm, n;
	struct pb_client c;
	long err;                 /* the READY call's failure, if it failed */
};

/* The raw variant's client thread: once the pager has set its fault
 * endpoint (the answer to READY), touch the range, then call again to
 * say it is done (its sums are in *a). A READY that failed skips the
 * touching: with no fault endpoint a fault would kill this task. */
static void pb_raw_client(void *a)
{
	struct pb_raw *c = a;
	uint64_t w[4] = { PB_READY, 0, 0, 0 };
	struct sysret r = ipc(SYS_CALL, c->ep, w, SLOT_NONE);
	if (!r.a0 && !r.a1)
		pb_touch(PB_VA, c->warm, c->n, &c->c);
	else
		c->err = r.a0 ? r.a0 : r.a1;
	w[0] = PB_WINDOW;
	ipc(SYS_CALL, c->ep, w, SLOT_NONE);
}

/* The bare pager loop: receive on c->ep; a call with badge PB_RAW_BADGE
 * is a fault, answered after one ROP_MAP of the page's frame from
 * frames; the client's first unbadged call (READY) is answered once its
 * thread (cap ct) has its fault endpoint fe; its second ends the loop.
 * A map that fails is recorded in p->err and the page made anonymous
 * memory instead (the kernel fills it), so the client, a thread of this
 * task, is never killed. 0 or the IPC error. */
static long pb_raw_serve(struct pb_raw *c, long ct, long fe, const long *frames, struct pb_pager *p)
{
	uint64_t w[4] = { 0 };
	int ready = 0;
	struct sysret m = ipc(SYS_RECV, c->ep, w, SLOT_NONE);
	for (;;) {
		if (m.a0)
			return m.a0;
		if ((uint64_t)m.a5 != PB_RAW_BADGE) {
			if (ready) {
				w[0] = 0;
				ipc(SYS_REPLY, 0, w, SLOT_NONE);
				return 0;
			}
			ready = 1;
			w[0] = (uint64_t)fault_ep_set(ct, fe);
			m = ipc(SYS_REPLY_RECV, c->ep, w, SLOT_NONE);
			continue;
		}
		uint64_t page = ((uint64_t)m.a1 - PB_VA) / BENCH_PG, t0, t1;
		uint64_t va = PB_VA + page * BENCH_PG;
		struct region_op op = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = va,
					.arg = frames[page] };
		PB_STAMP(t0);
		long r = region_txn(SLOT_SELF_AS, va, va + BENCH_PG, &op, 1);
		PB_STAMP(t1);
		if (page >= c->warm) {
			p->map_start += t0;
			p->map_end += t1;
			p->served++;
		}
		if ((r < 0 || op.result) && !p->err) {
			p->err = r < 0 ? r : op.result;
			txn_one(SLOT_SELF_AS, ROP_MARK, PROT_R | PROT_W, va, 0, NULL);
		}
		w[0] = FAULT_RESUME;
		m = ipc(SYS_REPLY_RECV, c->ep, w, SLOT_NONE);
	}
}

/* Run the raw variant for n timed faults: 0, or the error (the caller
 * says what failed). Everything it made is gone after. */
static long pb_raw(unsigned long n)
{
	static struct pb_raw c;
	struct pb_pager p = { 0 };
	memset(&c, 0, sizeof c);
	c.warm = PB_WARM;
	c.n = n;
	c.ep = slot_alloc();
	long fe = slot_alloc(), ct = -1;
	long *frames = pb_frames_new(PB_WARM + n);
	long r = !frames || c.ep < 0 || fe < 0 ? -E_NOMEM : ep_create(c.ep);
	if (!r)
		r = cap_mint(c.ep, fe, R_SEND, PB_RAW_BADGE, 0, 0);
	if (!r && !pg_mark_pager(SLOT_SELF_AS, PB_VA, (PB_WARM + n) * BENCH_PG, 0))
		r = -E_INVAL;
	if (!r && (ct = uthread_start(pb_raw_client, &c, (int)self_hart(), PB_PRIO)) < 0)
		r = ct;
	if (!r)
		r = pb_raw_serve(&c, ct, fe, frames, &p);
	if (ct >= 0)
		fault_ep_set(ct, SLOT_NONE);   /* E_DEAD once the thread has ended: nothing to undo */
	long un = bench_unmap(PB_VA, (PB_WARM + n) * BENCH_PG);
	slot_drop(&ct);
	slot_drop(&fe);
	slot_drop(&c.ep);
	if (frames)
		pb_frames_free(frames, PB_WARM + n);
	if (!r)
		r = c.err ? c.err : p.err ? p.err : un;
	if (!r && p.served != n)
		r = -E_INVAL;
	if (!r)
		pb_print("pager-raw", "same", n, &c.c, &p);
	return r;
}

int bench_pager(unsigned long faults)
{
	long r = pb_libpager(faults);
	if (r) {
		printf("bench: pager-libpager failed: %s\n", err_name(r));
		return 1;
	}
	r = pb_raw(faults);
	if (r) {
		printf("bench: pager-raw failed: %s\n", err_name(r));
		return 1;
	}
	return 0;
}
