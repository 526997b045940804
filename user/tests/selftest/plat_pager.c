/* libpager and the file pager at scale and at their edges (selftest
 * names plat_file_4096_shared, plat_pager_racing,
 * plat_pager_deferred_death, plat_pager_1000_deferred).
 *
 * In each test this task is the pager (its main thread runs pager_serve)
 * and the clients are copies of this program in a ROLE_PP_* role. A client
 * first calls the pager's endpoint (a send cap badged k + 1, given at
 * spawn) with PP_READY; the pager attaches the client's range at PP_VA in
 * that call's handler and answers, so no client touches its range before
 * it is attached. Until then our own death notice (same badge) stands in
 * for libpager's, so a client that dies early ends pager_serve too.
 *
 * plat_file_4096_shared: the file pager serves a 4096-page (16 MiB) image
 * to 2 clients; each reads every page and reports the CRC-32 of what it
 * saw; both match the image's. The file pager cached exactly 4096 frames
 * and made 8192 mappings (each page's one frame mapped in both clients).
 *
 * plat_pager_racing: two threads of one client fault on the same page at
 * once. The pager's callback, on the first fault, waits until the other
 * thread is about to touch the page too and gives it time to fault, then
 * makes the page's frame and maps it. The second fault comes after that:
 * the callback's map finds the page mapped (-E_EXIST) and libpager resumes
 * the thread on its racing path. Over PP_RACE_ROUNDS pages: one frame and
 * one map a page, every other fault on libpager's racing path, at least
 * one race seen, and each thread read its page's words.
 *
 * plat_pager_deferred_death: the callback defers a client's fault; the
 * client is killed while we hold it. When libpager takes the death notice
 * the deferred fault's reply cap is gone before client_gone is called
 * (that slot is empty, the fault's client is NULL), and once the notice is
 * handled the kernel holds exactly 2 caps fewer (that reply cap and the
 * client's region cap); a later pager_resume says -E_DEAD. A second client
 * is then served normally.
 *
 * plat_pager_1000_deferred: one pager holds hundreds of faults at once
 * and answers them in reverse order. A fault is a thread blocked in a
 * call, so outstanding faults can never exceed live threads: MAX_THREADS
 * is 4096 kernel-wide (kernel/mk/mk.h) and our thread quota is less (init
 * keeps KTHREADS_RESERVED for kernel threads, the shell a few of its
 * own). The test takes PP_MANY_WANT threads (fewer only if its quota or
 * the free thread structs say so; more would only slow the 8-hart boots,
 * the boot test restoredemo-async-2048 holds 2048), spreads them over PP_MANY_CLIENTS
 * clients, has every one of them fault on its own page, and asserts that
 * all of them (at least PP_MANY_MIN) are held at once, each by a reply cap of ours; then
 * it supplies each page and resumes, last fault first, and every thread
 * reads its page right. plat_pager_async_deferred does the same with the
 * clients attached asynchronously: no reply cap at all, and one supply
 * per client answers all its faults.
 *
 * Counters: each test checks the kernel's objects and caps come back
 * after its clients are reaped and its pager is torn down. Free frames
 * are not compared with frames=1: the pager runs in this task, whose
 * heap (the image, libpager's records), CSpace chunks (page-cache and
 * reply caps) and page tables (libpager's scratch page) stay with it.
 * Instead every frame missing from the free pool must be one this task's
 * own use grew by (pp_counters_back). */
#include "ulib.h"
#include "selftest.h"
#include "filepager.h"

#define CK(c, ...) do { if (!(c)) { if (!why[0]) snprintf(why, 160, __VA_ARGS__); goto out; } } while (0)

#define PG 4096UL
#define PP_VA 0x2400000000UL            /* the clients' pager-managed range */
#define PP_SELF_VA 0x3900000000UL       /* the race test's flags page, in our space */
#define PP_MAX 8
#define PP_READY 0x7265616479ULL
#define PP_DONE 0x646f6e65ULL
#define PP_WAIT_MS 5000                 /* a wait that takes longer never ends */

#define PP_FILE_PAGES 4096
#define PP_FILE_CLIENTS 2
#define PP_RACE_ROUNDS 4
#define PP_RACE_KEY 0x7261636500000000ULL
#define PP_MANY_CLIENTS 4
#define PP_MANY_WANT 400
#define PP_MANY_MIN 400                 /* what the thread limits leave us, at the least */
#define PP_KERNEL_MAX_THREADS 4096      /* MAX_THREADS, kernel/mk/mk.h */

/* ---------------- the clients ---------------- */

/* The ready call: 0 with the pager's answer (the range's length, a key)
 * in *len and *key, or the error. */
static long pp_ready(uint64_t *len, uint64_t *key)
{
	uint64_t w[4] = { PP_READY, 0, 0, 0 };
	struct sysret r = ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	if (r.a0)
		return r.a0;
	if (r.a1)
		return r.a1;
	*len = (uint64_t)r.a2;
	*key = (uint64_t)r.a3;
	return 0;
}

/* Spin (yielding) until *v >= want or ms pass: whether it got there. */
static int pp_wait_ge(volatile long *v, long want, long ms)
{
	uint64_t until = rdtime() + (uint64_t)ms * (ticks_per_sec() / 1000);
	while (__atomic_load_n(v, __ATOMIC_ACQUIRE) < want) {
		if (rdtime() > until)
			return 0;
		sys_yield();
	}
	return 1;
}

/* ROLE_PP_FILE: read the whole image, report its CRC-32. */
static int pp_file_client(void)
{
	uint64_t size, key;
	if (pp_ready(&size, &key))
		return 3;
	uint64_t w[4] = { PP_DONE, crc32_update(0, (const void *)PP_VA, size), 0, 0 };
	return ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE).a0 ? 4 : 0;
}

/* The race test's flags page: page 0 of the client's range, mapped by the
 * pager in its own space too. */
struct pp_flags {
	volatile long arrived;                 /* threads about to touch their page */
	volatile long done;                    /* threads that read it */
	volatile uint64_t got[2 * PP_RACE_ROUNDS];
};

/* Word `j` of race page p (1..PP_RACE_ROUNDS), and the word thread idx reads. */
static uint64_t race_word(uint64_t p, uint64_t j) { return PP_RACE_KEY ^ p << 32 ^ j; }
static uint64_t race_index(long idx) { return idx % 2 ? 400 : 5; }

/* A racing thread: say it is about to touch its round's page, read it. */
static void pp_race_thread(void *a)
{
	long idx = (long)a;
	struct pp_flags *fl = (struct pp_flags *)PP_VA;
	__atomic_fetch_add(&fl->arrived, 1, __ATOMIC_ACQ_REL);
	uint64_t p = 1 + (uint64_t)idx / 2;
	fl->got[idx] = ((volatile uint64_t *)(PP_VA + p * PG))[race_index(idx)];
	__atomic_fetch_add(&fl->done, 1, __ATOMIC_ACQ_REL);
}

/* ROLE_PP_RACE: each round two fresh threads read page 1 + round at once;
 * exit 0 when every thread read its word. */
static int pp_race_client(void)
{
	uint64_t len, key;
	if (pp_ready(&len, &key) || len != (1 + PP_RACE_ROUNDS) * PG)
		return 3;
	struct pp_flags *fl = (struct pp_flags *)PP_VA;
	for (long r = 0; r < PP_RACE_ROUNDS; r++) {
		long a = uthread_start(pp_race_thread, (void *)(2 * r), -1, 1);
		long b = uthread_start(pp_race_thread, (void *)(2 * r + 1), -1, 1);
		if (a < 0 || b < 0)
			return 10 + (int)r;
		if (!pp_wait_ge(&fl->done, 2 * (r + 1), PP_WAIT_MS))
			return 20 + (int)r;
		slot_drop(&a);
		slot_drop(&b);
	}
	for (long i = 0; i < 2 * PP_RACE_ROUNDS; i++)
		if (fl->got[i] != race_word(1 + (uint64_t)i / 2, race_index(i)))
			return 30 + (int)i;
	return 0;
}

/* ROLE_PP_TOUCH: read word 1 of the range; exit 0 if it is the key. */
static int pp_touch_client(void)
{
	uint64_t len, key;
	if (pp_ready(&len, &key))
		return 3;
	return ((volatile uint64_t *)PP_VA)[1] == key ? 0 : 4;
}

/* Word 0 and the last word of page i of a ROLE_PP_MANY client with key k. */
static uint64_t many_first(uint64_t key, uint64_t i) { return key ^ i; }
static uint64_t many_last(uint64_t key, uint64_t i) { return ~(key ^ i); }

static struct { uint64_t key; volatile long done, bad; } mc;

/* A ROLE_PP_MANY thread: fault on page i, check it, write it. */
static void pp_many_thread(void *a)
{
	uint64_t i = (uint64_t)a;
	volatile uint64_t *p = (volatile uint64_t *)(PP_VA + i * PG);
	int ok = p[0] == many_first(mc.key, i) && p[511] == many_last(mc.key, i);
	p[1] = i;
	ok = ok && p[1] == i;
	if (!ok)
		__atomic_fetch_add(&mc.bad, 1, __ATOMIC_ACQ_REL);
	__atomic_fetch_add(&mc.done, 1, __ATOMIC_ACQ_REL);
}

/* ROLE_PP_MANY (threads in arg >> 8): every thread, this one last, faults
 * on a page of its own; exit 0 once all read their pages right. */
static int pp_many_client(long arg)
{
	long n = arg >> 8;
	uint64_t len;
	if (n < 1 || pp_ready(&len, &mc.key) || len != (uint64_t)n * PG)
		return 3;
	for (long i = 0; i < n - 1; i++)
		if (uthread_start(pp_many_thread, (void *)i, -1, 1) < 0)
			return 4;
	pp_many_thread((void *)(n - 1));
	if (!pp_wait_ge(&mc.done, n, 6 * PP_WAIT_MS))
		return 5;
	return mc.bad ? 6 : 0;
}

/* A client of these tests (child_main's dispatch): its exit status. */
int plat_pager_role(long arg)
{
	switch (arg & 0xff) {
	case ROLE_PP_FILE: return pp_file_client();
	case ROLE_PP_RACE: return pp_race_client();
	case ROLE_PP_TOUCH: return pp_touch_client();
	case ROLE_PP_MANY: return pp_many_client(arg);
	}
	return 100;
}

/* ---------------- the pager's side ---------------- */

/* The clients of the test running now (tests run one at a time). */
static struct {
	struct pager *pg;
	unsigned n, attached, gone;
	long task[PP_MAX];
	struct pager_client *client[PP_MAX];
	long status[PP_MAX];           /* from the death notice, until then -1 */
	uint64_t report[PP_MAX];       /* PP_DONE's word */
	/* The test's: attach client k, what to tell it (length, key). */
	long (*attach)(unsigned k, uint64_t *len, uint64_t *key);
	/* The test's (optional): client k died, libpager's client_gone. */
	void (*gone_hook)(unsigned k, long status);
	int stop_any;                  /* any death stops the pager, not just the last */
} pp;

/* A new test: no clients yet, pager pg, clients attached by `attach`. */
static void pp_reset(struct pager *pg, long (*attach)(unsigned, uint64_t *, uint64_t *))
{
	memset(&pp, 0, sizeof pp);
	pp.pg = pg;
	pp.attach = attach;
	for (int k = 0; k < PP_MAX; k++) {
		pp.task[k] = -1;
		pp.status[k] = -1;
	}
}

/* Client k is dead with `status`: count it; the last one (any one with
 * pp.stop_any) stops the pager. */
static void pp_dead(unsigned k, long status)
{
	if (pp.status[k] >= 0)
		return;
	pp.status[k] = status;
	if (++pp.gone == pp.n || pp.stop_any)
		pager_stop(pp.pg);
}

/* libpager's `message`: ready calls, reports, and our own death notices
 * of clients not yet attached. */
static long pp_message(struct pager *pg, uint64_t badge, const uint64_t w[4], uint64_t reply[4])
{
	(void)pg;
	unsigned k = (unsigned)badge - 1;
	if (badge == 0 || k >= pp.n) {
		reply[0] = (uint64_t)-E_INVAL;
		return 1;
	}
	if (w[0] == MSG_DEATH) {
		pp_dead(k, (long)w[1]);
		return 0;
	}
	if (w[0] == PP_READY) {
		long err = pp.attach(k, &reply[1], &reply[2]);
		pp.attached += !err;
		reply[0] = (uint64_t)err;
	} else if (w[0] == PP_DONE) {
		pp.report[k] = w[1];
	} else {
		reply[0] = (uint64_t)-E_INVAL;
	}
	return 1;
}

/* libpager's `client_gone`: the test's hook, then client k counted dead. */
static void pp_client_gone(struct pager *pg, struct pager_client *c, long status)
{
	(void)pg;
	for (unsigned k = 0; k < pp.n; k++)
		if (pp.client[k] == c) {
			pp.client[k] = NULL;
			if (pp.gone_hook)
				pp.gone_hook(k, status);
			pp_dead(k, status);
		}
}

/* Spawn client k (pp.n becomes k + 1): role word arg, quota word quota,
 * given a send cap to the pager's endpoint badged k + 1, its death noticed
 * there with that badge until libpager's own notice replaces ours. 0 or
 * the error (nothing left behind then). */
static long pp_spawn(unsigned k, uint64_t arg, long quota)
{
	long given = slot_alloc(), r;
	pp.task[k] = slot_alloc();
	pp.n = k + 1;
	r = cap_mint(pp.pg->ep, given, R_SEND, k + 1, 0, 0);
	if (!r)
		r = task_spawn_q(self_module(), arg, pp.task[k], quota, given);
	if (!r) {
		long nr = sc2(SYS_TASK_NOTIFY, pp.task[k], given);
		if (nr == -E_DEAD)
			pp_dead(k, 0);      /* its status: from its wait */
		else if (nr)
			r = nr;
		if (r)
			task_kill(pp.task[k]), task_wait(pp.task[k]);
	}
	slot_drop(&given);
	if (r) {
		slot_drop(&pp.task[k]);
		pp.n = k;
	}
	return r;
}

/* Kill every client still alive (if `kill`), wait for each and drop its
 * task cap: its exit status into st[k]. */
static void pp_reap(long *st, int kill)
{
	for (unsigned k = 0; k < pp.n; k++) {
		st[k] = -1;
		if (pp.task[k] < 0)
			continue;
		if (kill)
			task_kill(pp.task[k]);
		st[k] = task_wait(pp.task[k]);
		slot_drop(&pp.task[k]);
	}
}

/* Frames this task uses now (data, page tables, CSpace chunks), or -1. */
static long self_frames(void)
{
	struct cap_info ci;
	return cap_info(SLOT_SELF_TASK, &ci) ? -1 : (long)ci.lo;
}

/* Objects and caps back where they were (pg_counters_back without
 * frames), and every frame gone from the free pool since `a` one that this
 * task's own use grew by since self0 (self_frames). 0, or 1 with why. */
static int pp_counters_back(const struct kcounters *a, long self0, char *why)
{
	if (pg_counters_back(a, 0, why))
		return 1;
	long lost = 0, grew = 0;
	for (int i = 0; i < 200; i++) {
		struct kcounters b;
		dbg(DBG_COUNTERS, (uint64_t)&b, 0);
		lost = (long)(a->free_frames - b.free_frames);
		grew = self_frames() - self0;
		if (lost == grew && !b.rcu_busy)
			return 0;
		pause_ms(10);
	}
	snprintf(why, 160, "leak: %ld frames gone from the free pool, this task's own use grew %ld", lost,
		 grew);
	return 1;
}

static const struct pager_ops pp_more_ops = { .message = pp_message, .client_gone = pp_client_gone };

/* --- plat_file_4096_shared --- */

static struct filepager pp_fp;

/* Attach client k to the file pager: the image's size told, no key. */
static long file_attach(unsigned k, uint64_t *len, uint64_t *key)
{
	long err = 0;
	pp.client[k] = filepager_attach(&pp_fp, pp.task[k], PP_VA, &err);
	*len = pp_fp.size;
	*key = 0;
	return pp.client[k] ? 0 : (err ? err : -E_INVAL);
}

/* The file pager, 4096 pages, 2 clients (the file's header). */
int plat_file_4096_shared(char *why)
{
	const uint64_t size = PP_FILE_PAGES * PG;
	struct kcounters before;
	why[0] = 0;
	settled_counters(&before);
	long self0 = self_frames(), st[PP_MAX];
	int inited = 0;
	uint64_t *image = malloc(size);
	CK(image, "no memory for the image");
	/* Each page starts with its number; the rest is pseudo-random. */
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (uint64_t i = 0; i < size / 8; i++)
		image[i] = i % 512 ? xorshift64(&x) : i / 512;
	uint32_t want = crc32_update(0, image, size);
	long r = filepager_init(&pp_fp, image, size, &pp_more_ops, NULL);
	CK(r == 0, "filepager_init: %s", err_name(r));
	inited = 1;
	pp_reset(&pp_fp.pg, file_attach);
	for (unsigned k = 0; k < PP_FILE_CLIENTS; k++) {
		/* Its page tables; the image's frames are ours. */
		r = pp_spawn(k, ROLE_PP_FILE, QUOTA(256 + PP_FILE_PAGES / 128, 2, 1, 0));
		CK(r == 0, "spawn client %u: %s", k, err_name(r));
	}
	r = pager_serve(&pp_fp.pg);
	CK(r == 0, "pager_serve: %s", err_name(r));
	pp_reap(st, 0);
	for (unsigned k = 0; k < PP_FILE_CLIENTS; k++) {
		CK(st[k] == 0 && pp.status[k] == 0, "client %u: exit %ld, notice %ld", k, st[k], pp.status[k]);
		CK(pp.report[k] == want, "client %u read crc32 %08lx, the image's is %08x", k,
		   (unsigned long)pp.report[k], want);
	}
	CK(pp.attached == PP_FILE_CLIENTS, "%u clients attached", pp.attached);
	CK(pp_fp.cached == PP_FILE_PAGES && pp_fp.maps == PP_FILE_CLIENTS * PP_FILE_PAGES,
	   "%lu frames cached for %lu mappings (want %u for %u)", pp_fp.cached, pp_fp.maps, PP_FILE_PAGES,
	   PP_FILE_CLIENTS * PP_FILE_PAGES);
	CK(pp_fp.pg.faults == PP_FILE_CLIENTS * PP_FILE_PAGES && !pp_fp.pg.killed && !pp_fp.pg.racing,
	   "%lu faults, %lu killed, %lu racing", pp_fp.pg.faults, pp_fp.pg.killed, pp_fp.pg.racing);
out:
	if (why[0])
		pp_reap(st, 1);
	if (inited)
		filepager_fini(&pp_fp);
	free(image);
	if (why[0])
		return 1;
	return pp_counters_back(&before, self0, why);
}

/* --- plat_pager_racing --- */

static struct {
	long flags_frame;              /* page 0 of the client's range, mapped here at PP_SELF_VA */
	long frame[1 + PP_RACE_ROUNDS];
	unsigned long calls, maps, made;
} rc;

/* Attach client k over the flags page and PP_RACE_ROUNDS race pages,
 * the flags page mapped at once (shared with us). */
static long race_attach(unsigned k, uint64_t *len, uint64_t *key)
{
	long err = 0;
	*len = (1 + PP_RACE_ROUNDS) * PG;
	*key = 0;
	pp.client[k] = pager_attach(pp.pg, pp.task[k], PP_VA, *len, PROT_R | PROT_W, NULL, &err);
	if (!pp.client[k])
		return err ? err : -E_INVAL;
	return pager_map(pp.client[k], 0, rc.flags_frame, PROT_R | PROT_W);
}

/* The fault callback: race page p gets one frame, made and mapped by its
 * first fault, once the other thread of its round is about to touch it
 * and has had 20 ms to fault too. A later fault's map finds the page
 * mapped: -E_EXIST, libpager's racing path. */
static int race_fault(struct pager *pg, struct pager_fault *f)
{
	(void)pg;
	uint64_t p = f->offset / PG;
	rc.calls++;
	if (p < 1 || p > PP_RACE_ROUNDS || f->access != FA_READ)
		return PAGER_KILL;
	if (rc.frame[p] < 0) {
		struct pp_flags *fl = (struct pp_flags *)PP_SELF_VA;
		if (pp_wait_ge(&fl->arrived, 2 * (long)p, PP_WAIT_MS))
			pause_ms(20);
		uint64_t *buf = malloc(PG);
		if (!buf)
			return PAGER_KILL;
		for (uint64_t j = 0; j < PG / 8; j++)
			buf[j] = race_word(p, j);
		long r = pager_frame_new(buf, R_ALL, &rc.frame[p]);
		free(buf);
		if (r) {
			rc.frame[p] = -1;
			return (int)r;
		}
		rc.made++;
	}
	long r = pager_map(f->client, f->offset, rc.frame[p], PROT_R);
	if (r)
		return (int)r;
	rc.maps++;
	return PAGER_RESUME;
}

/* Two threads, one page, PP_RACE_ROUNDS times (the file's header). */
int plat_pager_racing(char *why)
{
	static const struct pager_ops ops = { .fault = race_fault, .message = pp_message,
					      .client_gone = pp_client_gone };
	struct kcounters before;
	struct pager pg;
	why[0] = 0;
	settled_counters(&before);
	long self0 = self_frames(), st[PP_MAX], r;
	int inited = 0, mapped = 0;
	memset(&rc, 0, sizeof rc);
	for (int p = 0; p <= PP_RACE_ROUNDS; p++)
		rc.frame[p] = -1;
	rc.flags_frame = slot_alloc();
	CK(frame_alloc(rc.flags_frame) == 0, "flags frame");
	CK(txn_one(SLOT_SELF_AS, ROP_MAP, PROT_R | PROT_W, PP_SELF_VA, rc.flags_frame, NULL) == 0,
	   "map the flags page");
	mapped = 1;
	CK((r = pager_init(&pg, &ops, NULL)) == 0, "pager_init: %s", err_name(r));
	inited = 1;
	pp_reset(&pg, race_attach);
	CK((r = pp_spawn(0, ROLE_PP_RACE, QUOTA(128, 4, 1, 0))) == 0, "spawn: %s", err_name(r));
	CK((r = pager_serve(&pg)) == 0, "pager_serve: %s", err_name(r));
	pp_reap(st, 0);
	CK(st[0] == 0 && pp.status[0] == 0, "client: exit %ld (notice %ld); %lu faults, %lu racing, %lu killed",
	   st[0], pp.status[0], pg.faults, pg.racing, pg.killed);
	struct pp_flags *fl = (struct pp_flags *)PP_SELF_VA;
	for (long i = 0; i < 2 * PP_RACE_ROUNDS; i++)
		CK(fl->got[i] == race_word(1 + (uint64_t)i / 2, race_index(i)), "thread %ld read %lx", i,
		   (unsigned long)fl->got[i]);
	/* One frame and one map a page; every other fault racing. */
	CK(rc.made == PP_RACE_ROUNDS && rc.maps == PP_RACE_ROUNDS, "%lu frames made, %lu maps for %d pages",
	   rc.made, rc.maps, PP_RACE_ROUNDS);
	CK(rc.calls == pg.faults && pg.racing == pg.faults - rc.maps && !pg.killed,
	   "%lu faults, %lu callbacks, %lu maps, %lu racing, %lu killed", pg.faults, rc.calls, rc.maps,
	   pg.racing, pg.killed);
	CK(pg.racing >= 1, "no racing fault in %d rounds (%lu faults)", PP_RACE_ROUNDS, pg.faults);
	printf("  %lu of %d rounds raced: %lu faults, %lu frames made, %lu maps\n", pg.racing, PP_RACE_ROUNDS,
	       pg.faults, rc.made, rc.maps);
out:
	if (why[0])
		pp_reap(st, 1);
	if (inited)
		pager_fini(&pg);
	if (mapped)
		txn_one(SLOT_SELF_AS, ROP_UNMAP, 0, PP_SELF_VA, 0, NULL);
	slot_drop(&rc.flags_frame);
	for (int p = 0; p <= PP_RACE_ROUNDS; p++)
		slot_drop(&rc.frame[p]);
	if (why[0])
		return 1;
	return pp_counters_back(&before, self0, why);
}

/* --- plat_pager_deferred_death --- */

#define DD_KEY 0xdefe77edULL

static struct {
	int hold;                      /* defer the next fault and stop serving */
	struct pager_fault *held;
	long reply;                    /* its reply cap's slot */
	int gone_calls, reply_freed;   /* client_gone seen; the reply was gone then */
} dd;

/* Attach client k over one page; its key is DD_KEY + k. */
static long dd_attach(unsigned k, uint64_t *len, uint64_t *key)
{
	long err = 0;
	*len = PG;
	*key = DD_KEY + k;
	pp.client[k] = pager_attach(pp.pg, pp.task[k], PP_VA, PG, PROT_R | PROT_W, NULL, &err);
	return pp.client[k] ? 0 : (err ? err : -E_INVAL);
}

/* Hold the fault (dd.hold), or give the page its key at word 1. */
static int dd_fault(struct pager *pg, struct pager_fault *f)
{
	if (dd.hold) {
		dd.hold = 0;
		dd.held = f;
		pager_stop(pg);
		return PAGER_DEFER;
	}
	uint64_t page[512] = { 0 };
	for (unsigned k = 0; k < pp.n; k++)
		if (pp.client[k] == f->client)
			page[1] = DD_KEY + k;
	long r = pager_supply(f->client, f->offset, page, PROT_R | PROT_W);
	return r ? (int)r : PAGER_RESUME;
}

/* client_gone of the held client: its deferred fault must be dropped by now. */
static void dd_gone(unsigned k, long status)
{
	(void)k, (void)status;
	struct cap_info ci;
	dd.gone_calls++;
	dd.reply_freed = dd.held && !dd.held->client && dd.held->reply < 0 &&
			 cap_info(dd.reply, &ci) == -E_BADCAP;
}

/* A held fault's client killed, then a client served (the file's header). */
int plat_pager_deferred_death(char *why)
{
	static const struct pager_ops ops = { .fault = dd_fault, .message = pp_message,
					      .client_gone = pp_client_gone };
	struct kcounters before, mid, after;
	struct pager pg;
	struct cap_info ci;
	why[0] = 0;
	settled_counters(&before);
	long self0 = self_frames(), st[PP_MAX], r;
	int inited = 0;
	memset(&dd, 0, sizeof dd);
	dd.reply = -1;
	CK((r = pager_init(&pg, &ops, NULL)) == 0, "pager_init: %s", err_name(r));
	inited = 1;
	pp_reset(&pg, dd_attach);

	/* 1. Client 0 faults; we hold the fault. */
	dd.hold = 1;
	CK((r = pp_spawn(0, ROLE_PP_TOUCH, QUOTA(128, 2, 1, 0))) == 0, "spawn client 0: %s", err_name(r));
	CK((r = pager_serve(&pg)) == 0, "pager_serve: %s", err_name(r));
	CK(dd.held && pg.deferrals == 1 && pg.deferred == dd.held, "no fault held (%lu deferrals, gone %u)",
	   pg.deferrals, pp.gone);
	dd.reply = dd.held->reply;
	CK(dd.reply >= 0 && cap_info(dd.reply, &ci) == 0 && ci.type == CAP_REPLY, "the held fault has no reply cap");

	/* 2. Killed while held: once it is dead (its own caps gone), the
	 * death notice must cost libpager exactly the reply and region caps. */
	pp.gone_hook = dd_gone;
	CK(task_kill(pp.task[0]) == 0, "kill");
	CK((r = task_wait(pp.task[0])) == EXIT_KILLED, "client 0's wait: %ld", r);
	settled_counters(&mid);
	CK(cap_info(dd.reply, &ci) == 0 && ci.type == CAP_REPLY, "the reply cap went with the client");
	CK((r = pager_serve(&pg)) == 0, "pager_serve: %s", err_name(r));
	CK(pg.deaths == 1 && dd.gone_calls == 1 && pp.status[0] == EXIT_KILLED,
	   "death: %lu notices, client_gone %d times, status %ld", pg.deaths, dd.gone_calls, pp.status[0]);
	CK(dd.reply_freed, "client_gone came with the deferred fault's reply cap still held");
	CK(cap_info(dd.reply, &ci) == -E_BADCAP, "the reply cap is still held after the death");
	settled_counters(&after);
	CK(mid.caps - after.caps == 2, "the death notice freed %ld caps, not 2 (reply, region)",
	   (long)(mid.caps - after.caps));
	CK((r = pager_resume(dd.held)) == -E_DEAD, "pager_resume after the death: %s", err_name(r));
	dd.held = NULL;
	CK(!pg.deferred && pg.live == 0, "libpager still holds %s", pg.deferred ? "a fault" : "a client");

	/* 3. The next client is served. */
	CK((r = pp_spawn(1, ROLE_PP_TOUCH, QUOTA(128, 2, 1, 0))) == 0, "spawn client 1: %s", err_name(r));
	CK((r = pager_serve(&pg)) == 0, "pager_serve: %s", err_name(r));
	pp_reap(st, 0);
	CK(st[1] == 0 && pp.status[1] == 0, "client 1: exit %ld, notice %ld", st[1], pp.status[1]);
	CK(pg.faults == 2 && pg.deferrals == 1 && !pg.killed, "%lu faults, %lu deferred, %lu killed",
	   pg.faults, pg.deferrals, pg.killed);
out:
	if (why[0])
		pp_reap(st, 1);
	if (inited)
		pager_fini(&pg);
	if (why[0])
		return 1;
	return pp_counters_back(&before, self0, why);
}

/* --- plat_pager_1000_deferred --- */

static struct {
	unsigned want, n;
	struct pager_fault **held;
	long pages[PP_MAX];
	uint64_t seen[PP_MAX][4];      /* pages faulted, a bit each (PP_MANY_PAGES_MAX) */
	int dup;
} mf;
#define PP_MANY_PAGES_MAX 256

static uint64_t many_key(unsigned k) { return 0x6d616e7900000000ULL + ((uint64_t)k << 24); }

/* Attach client k over a page for each of its threads; key many_key(k). */
static long many_attach(unsigned k, uint64_t *len, uint64_t *key)
{
	long err = 0;
	*len = (uint64_t)mf.pages[k] * PG;
	*key = many_key(k);
	pp.client[k] = pager_attach(pp.pg, pp.task[k], PP_VA, *len, PROT_R | PROT_W, NULL, &err);
	return pp.client[k] ? 0 : (err ? err : -E_INVAL);
}

/* Hold every fault; the last one wanted stops the serve loop. */
static int many_fault(struct pager *pg, struct pager_fault *f)
{
	unsigned k = 0;
	while (k < pp.n && pp.client[k] != f->client)
		k++;
	uint64_t i = f->offset / PG;
	if (k == pp.n || f->access != FA_READ || mf.n >= mf.want)
		return PAGER_KILL;
	if (mf.seen[k][i / 64] & 1ULL << (i % 64))
		mf.dup++;
	mf.seen[k][i / 64] |= 1ULL << (i % 64);
	mf.held[mf.n++] = f;
	if (mf.n == mf.want)
		pager_stop(pg);
	return PAGER_DEFER;
}

/* --- plat_pager_async_deferred --- */

#define PP_ASYNC_SRC 0x57000000UL      /* our pages the supplies move */

/* Client k's pages, words in place, moved into its range with one supply. */
static long many_supply_all(unsigned k)
{
	uint64_t len = (uint64_t)mf.pages[k] * PG;
	struct region_op mk = { .op = ROP_MARK, .prot = PROT_R | PROT_W, .va = PP_ASYNC_SRC, .len = len };
	long r = region_txn(SLOT_SELF_AS, PP_ASYNC_SRC, PP_ASYNC_SRC + len, &mk, 1);
	if (r != 1)
		return r < 0 ? r : -E_INVAL;
	for (uint64_t p = 0; p < (uint64_t)mf.pages[k]; p++) {
		volatile uint64_t *w = (volatile uint64_t *)(PP_ASYNC_SRC + p * PG);
		w[0] = many_first(many_key(k), p);
		w[511] = many_last(many_key(k), p);
	}
	r = pager_supply_range(pp.client[k], 0, PP_ASYNC_SRC, (unsigned)mf.pages[k], PROT_R | PROT_W);
	pg_unmap(PP_ASYNC_SRC, len);
	return r;
}

/* Every fault the thread limits allow, held at once, answered last first
 * (the file's header). async: the clients are attached asynchronously,
 * every fault is held by a record alone (no reply cap, no slot), and each
 * client's pages come with one supply, last client first, which wakes
 * all its threads; pager_resume then only frees the records. */
static int many_deferred(char *why, int async)
{
	static const struct pager_ops ops = { .fault = many_fault, .message = pp_message,
					      .client_gone = pp_client_gone };
	struct kcounters before, held;
	struct pager pg;
	struct cap_info ci;
	why[0] = 0;
	settled_counters(&before);
	long self0 = self_frames(), st[PP_MAX], r;
	int inited = 0;
	memset(&mf, 0, sizeof mf);
	/* Every thread we may still make: our quota, and the kernel's free
	 * thread structs. */
	CK(cap_info(SLOT_SELF_TASK, &ci) == 0, "cap_info");
	long quota = QUOTA_THREADS(ci.objects), free_structs = PP_KERNEL_MAX_THREADS - (long)before.threads;
	long avail = quota < free_structs ? quota : free_structs;
	avail = avail < PP_MANY_WANT ? avail : PP_MANY_WANT;
	CK(avail >= PP_MANY_MIN, "only %ld threads to fault with (quota %ld, free structs %ld)", avail, quota,
	   free_structs);
	mf.want = (unsigned)avail;
	CK((mf.held = calloc(mf.want, sizeof *mf.held)) != NULL, "no memory");
	CK((r = pager_init(&pg, &ops, NULL)) == 0, "pager_init: %s", err_name(r));
	inited = 1;
	pager_set_async(&pg, async);
	pp_reset(&pg, many_attach);
	pp.stop_any = 1;              /* a client dead early never faults: stop then */
	for (unsigned k = 0; k < PP_MANY_CLIENTS; k++) {
		mf.pages[k] = avail / PP_MANY_CLIENTS + (k < (unsigned)(avail % PP_MANY_CLIENTS));
		CK(mf.pages[k] <= PP_MANY_PAGES_MAX, "%ld threads for one client", mf.pages[k]);
		/* Its image and stack, and a few pages for each thread's stack
		 * and page tables, and its kernel stack. */
		long q = QUOTA(96 + (4 + THREAD_KSTACK_FRAMES) * mf.pages[k], mf.pages[k], 1, 0);
		CK((r = pp_spawn(k, ROLE_PP_MANY | (uint64_t)mf.pages[k] << 8, q)) == 0, "spawn client %u: %s", k,
		   err_name(r));
	}
	CK((r = pager_serve(&pg)) == 0, "pager_serve: %s", err_name(r));
	CK(pp.gone == 0, "%u clients died before all faulted (%u of %u held; first status %ld)", pp.gone,
	   mf.n, mf.want, pp.status[0]);
	/* All held at once: each a distinct page, each with a reply cap (or,
	 * async, none: the kernel's page waits hold them). */
	CK(mf.n == mf.want && pg.deferrals == mf.want && !mf.dup, "%u faults held of %u (%lu deferred, %d twice)",
	   mf.n, mf.want, pg.deferrals, mf.dup);
	for (unsigned i = 0; i < mf.n; i++) {
		if (async) {
			CK(mf.held[i]->async && mf.held[i]->reply < 0, "held fault %u is not a bare record", i);
			continue;
		}
		CK(mf.held[i]->reply >= 0 && cap_info(mf.held[i]->reply, &ci) == 0 && ci.type == CAP_REPLY,
		   "held fault %u has no reply cap", i);
		for (unsigned j = 0; j < i; j++)
			CK(mf.held[i] != mf.held[j] && mf.held[i]->reply != mf.held[j]->reply,
			   "held faults %u and %u share a record or a reply cap", j, i);
	}
	dbg(DBG_COUNTERS, (uint64_t)&held, 0);
	CK(!async || held.pagewaits == mf.n, "%lu pages waited on in the kernel, %u faults held",
	   held.pagewaits, mf.n);
	printf("  %u %sfaults held at once (thread quota %ld, free thread structs %ld, MAX_THREADS %d)\n", mf.n,
	       async ? "asynchronous " : "", quota, free_structs, PP_KERNEL_MAX_THREADS);

	/* Async: one supply per client, last client first. */
	for (unsigned k = PP_MANY_CLIENTS; async && k-- > 0;)
		CK((r = many_supply_all(k)) == 0, "supply of client %u's %ld pages: %s", k, mf.pages[k],
		   err_name(r));
	/* Last first: give the page its words (unless supplied), resume. */
	for (unsigned i = mf.n; i-- > 0;) {
		struct pager_fault *f = mf.held[i];
		unsigned k = 0;
		while (k < pp.n && pp.client[k] != f->client)
			k++;
		CK(k < pp.n, "held fault %u of no client", i);
		uint64_t page[512] = { 0 }, p = f->offset / PG;
		page[0] = many_first(many_key(k), p);
		page[511] = many_last(many_key(k), p);
		CK(async || (r = pager_supply(f->client, f->offset, page, PROT_R | PROT_W)) == 0, "supply: %s",
		   err_name(r));
		mf.held[i] = NULL;
		CK((r = pager_resume(f)) == 0, "resume of fault %u: %s", i, err_name(r));
	}
	CK(!pg.deferred, "libpager still holds faults");
	pp.stop_any = 0;
	CK((r = pager_serve(&pg)) == 0, "pager_serve: %s", err_name(r));
	pp_reap(st, 0);
	for (unsigned k = 0; k < PP_MANY_CLIENTS; k++)
		CK(st[k] == 0 && pp.status[k] == 0, "client %u (%ld threads): exit %ld, notice %ld", k, mf.pages[k],
		   st[k], pp.status[k]);
	CK(pg.faults == mf.want && !pg.killed, "%lu faults, %lu killed", pg.faults, pg.killed);
out:
	if (why[0])
		pp_reap(st, 1);
	if (inited)
		pager_fini(&pg);
	free(mf.held);
	if (why[0])
		return 1;
	return pp_counters_back(&before, self0, why);
}

int plat_pager_1000_deferred(char *why) { return many_deferred(why, 0); }
int plat_pager_async_deferred(char *why) { return many_deferred(why, 1); }
