/* Region transactions apply every op or none (selftest names txn_*).
 *
 * txn_map_exist: the transaction MAP A, MAP A (again: E_EXIST), MAP B
 * returns E_EXIST naming its second op, and leaves A and B as they were,
 * with no frame or PT page kept. txn_<op>: for each op kind, a
 * transaction of that op (which would succeed alone) and a MAP over a
 * mapped page is refused, and every page of the window is as it was
 * (kind, permissions, tag, the accessed bit for AGE, the dirty bit for
 * CLEAN, an empty slot for EVICT). txn_overlay: an op is checked against what the ops before it
 * in the same call leave (UNMAP then MAP the page, MAP then EVICT it, a
 * read-only MAP then PROTECT it writable). txn_model: random
 * transactions of up to six mixed ops over eight pages, run against a
 * model of what each op does to a page: a transaction the kernel applies
 * must be one the model applies op by op, a refused one must refuse in
 * the model (decode first: two evictions into one slot) at the op the
 * kernel named and change nothing; after each,
 * every page is queried and compared; the kernel's txn_overdraws counter
 * (a plan that reserved too few frames) stays 0. */
#include "ulib.h"
#include "selftest.h"

#define PG 4096UL
/* The window: pages TW .. TW + 7 pages; txn_model also runs it across a
 * 2 MiB boundary (page tables made and removed under it). */
#define TW_BASE 0x6a000000UL
static uint64_t tw_base = TW_BASE;
#define TW tw_base
#define TW_PAGES 8
#define CK(c, ...) do { if (!(c)) { if (!why[0]) snprintf(why, 160, __VA_ARGS__); goto out; } } while (0)

/* What a query says of a page, less the bits the hardware may change. */
struct pstate { uint64_t kind, prot, tag; };

/* Query every page of the window into s (kind, R/W/X and the limits,
 * tag); ad: the QF_ACCESSED / QF_DIRTY bits to keep too. 0 or the call's
 * error. */
static long snap(struct pstate *s, uint32_t ad)
{
	struct region_op q[TW_PAGES];
	for (int i = 0; i < TW_PAGES; i++)
		q[i] = (struct region_op){ .op = ROP_QUERY, .va = TW + i * PG };
	long r = region_txn(SLOT_SELF_AS, TW, TW + TW_PAGES * PG, q, TW_PAGES);
	if (r != TW_PAGES)
		return r < 0 ? r : -E_INVAL;
	for (int i = 0; i < TW_PAGES; i++)
		s[i] = (struct pstate){ q[i].out_kind,
					q[i].out_prot & (7u | QF_NOWRITE | QF_NOSHARE | ad),
					q[i].out_tag };
	return 0;
}

static long txn(struct region_op *ops, long n)
{
	return region_txn(SLOT_SELF_AS, TW, TW + TW_PAGES * PG, ops, n);
}

static long frame_usage(void)
{
	struct cap_info ci;
	return cap_info(SLOT_SELF_TASK, &ci) ? -1 : (long)ci.lo;
}

static long overdraws(void)
{
	struct kcounters k;
	dbg(DBG_COUNTERS, (uint64_t)&k, 0);
	return (long)k.txn_overdraws;
}

/* Empty the window and drop the frame caps in f[0 .. n). */
static void window_clear(long *f, int n)
{
	struct region_op u = { .op = ROP_UNMAP, .va = TW, .len = TW_PAGES * PG };
	txn(&u, 1);
	for (int i = 0; i < n; i++)
		if (f[i] >= 0)
			cap_delete(f[i]), slot_release(f[i]), f[i] = -1;
}

int txn_map_exist(char *why)
{
	long f[3] = { slot_alloc(), slot_alloc(), slot_alloc() };
	struct pstate s0[TW_PAGES], s1[TW_PAGES];
	why[0] = 0;
	for (int i = 0; i < 3; i++)
		CK(frame_alloc(f[i]) == 0, "frame_alloc");
	CK(snap(s0, 0) == 0, "query");
	long u0 = frame_usage();
	struct region_op ops[3] = {
		{ .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = TW, .arg = f[0] },
		{ .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = TW, .arg = f[1] },
		{ .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = TW + PG, .arg = f[2] },
	};
	long r = txn(ops, 3);
	CK(r == -E_EXIST, "the transaction returned %ld, want E_EXIST", r);
	CK(ops[1].result == -E_EXIST && ops[0].result == ROP_NOT_DONE && ops[2].result == ROP_NOT_DONE,
	   "results %ld %ld %ld: the second op should be named", ops[0].result, ops[1].result,
	   ops[2].result);
	CK(snap(s1, 0) == 0, "query");
	for (int i = 0; i < TW_PAGES; i++)
		CK(s0[i].kind == s1[i].kind, "page %d: kind %lu became %lu", i, s0[i].kind, s1[i].kind);
	CK(frame_usage() == u0, "frame usage %ld -> %ld: something was kept", u0, frame_usage());
	/* each frame maps as if nothing had happened */
	for (int i = 0; i < 3; i++)
		ops[i].va = TW + (uint64_t)i * PG, ops[i].arg = f[i];
	CK(txn(ops, 3) == 3, "the three frames at three pages");
out:
	window_clear(f, 3);
	return why[0] ? 1 : 0;
}

/* The window for the per-op tests: page 0 mapped read-write (and
 * written), 1 reserved R, 2 pager-managed R|W tag 77, 3 swapped slot 5,
 * 4 mapped (the page the refusing MAP hits), 5-7 invalid. */
static long window_set(long *f)
{
	struct region_op ops[5] = {
		{ .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = TW, .arg = f[0] },
		{ .op = ROP_MARK, .prot = PROT_R, .va = TW + PG, .len = PG },
		{ .op = ROP_MARK_PAGER, .prot = PROT_R | PROT_W, .va = TW + 2 * PG, .len = PG, .arg = 77 },
		{ .op = ROP_MARK_SWAPPED, .va = TW + 3 * PG, .len = PG, .arg = 5 },
		{ .op = ROP_MAP, .prot = PROT_R, .va = TW + 4 * PG, .arg = f[1] },
	};
	long r = txn(ops, 5);
	if (r == 5)
		*(volatile uint64_t *)TW = 0x7e57;
	return r;
}

/* One op of kind `op` that would succeed on the window window_set left,
 * then a MAP over page 4: refused, nothing changed. */
static int refused_with(char *why, struct region_op first)
{
	long f[3] = { slot_alloc(), slot_alloc(), slot_alloc() };
	long slot = slot_alloc();
	struct pstate s0[TW_PAGES], s1[TW_PAGES];
	/* AGE must leave the accessed bit, CLEAN the dirty bit as it was */
	uint32_t ad = first.op == ROP_AGE ? QF_ACCESSED : first.op == ROP_CLEAN ? QF_DIRTY : 0;
	why[0] = 0;
	for (int i = 0; i < 3; i++)
		CK(frame_alloc(f[i]) == 0, "frame_alloc");
	CK(window_set(f) == 5, "set up the window");
	if (first.op == ROP_EVICT) {
		/* page 0's frame then has no reference but its mapping */
		first.arg = slot;
		cap_delete(f[0]);
	}
	if (first.op == ROP_MAP)
		first.arg = f[2];
	CK(snap(s0, ad) == 0, "query");
	CK(!ad || (s0[0].prot & ad), "page 0 not accessed/dirty after a write");
	long u0 = frame_usage();
	struct region_op ops[2] = {
		first,
		{ .op = ROP_MAP, .prot = PROT_R, .va = TW + 4 * PG, .arg = f[2] },
	};
	long r = txn(ops, 2);
	CK(r == -E_EXIST && ops[1].result == -E_EXIST && ops[0].result == ROP_NOT_DONE,
	   "op %u then a MAP over a mapped page: %ld (%ld %ld)", first.op, r, ops[0].result,
	   ops[1].result);
	CK(snap(s1, ad) == 0, "query");
	for (int i = 0; i < TW_PAGES; i++)
		CK(s0[i].kind == s1[i].kind && s0[i].prot == s1[i].prot && s0[i].tag == s1[i].tag,
		   "op %u: page %d went from kind %lu prot %lx tag %lu to %lu %lx %lu", first.op, i,
		   s0[i].kind, s0[i].prot, s0[i].tag, s1[i].kind, s1[i].prot, s1[i].tag);
	CK(frame_usage() == u0, "op %u: frame usage %ld -> %ld", first.op, u0, frame_usage());
	CK(*(volatile uint64_t *)TW == 0x7e57, "page 0 lost its data");
	struct cap_info ci;
	CK(cap_info(slot, &ci) == -E_BADCAP, "op %u: the eviction slot was filled", first.op);
	/* and the op alone does apply */
	ops[0] = first;
	CK(txn(ops, 1) == 1, "op %u alone: %ld", first.op, ops[0].result);
	CK(overdraws() == 0, "a transaction drew frames it had not planned for");
out:
	window_clear(f, 3);
	slot_drop(&slot);
	return why[0] ? 1 : 0;
}

int txn_map(char *why)
{
	return refused_with(why, (struct region_op){ .op = ROP_MAP, .prot = PROT_R, .va = TW + 5 * PG });
}
int txn_mark(char *why)
{
	return refused_with(why, (struct region_op){ .op = ROP_MARK, .prot = PROT_R | PROT_W,
						     .va = TW + 5 * PG, .len = 3 * PG });
}
int txn_unmap(char *why)
{
	return refused_with(why, (struct region_op){ .op = ROP_UNMAP, .va = TW, .len = 4 * PG });
}
int txn_mark_invalid(char *why)
{
	return refused_with(why, (struct region_op){ .op = ROP_MARK_INVALID, .va = TW + PG,
						     .len = 3 * PG });
}
int txn_mark_pager(char *why)
{
	return refused_with(why, (struct region_op){ .op = ROP_MARK_PAGER, .prot = PROT_R,
						     .va = TW + PG, .len = 3 * PG, .arg = 9 });
}
int txn_mark_swapped(char *why)
{
	return refused_with(why, (struct region_op){ .op = ROP_MARK_SWAPPED, .va = TW + PG,
						     .len = 2 * PG, .arg = 11 });
}
int txn_protect(char *why)
{
	return refused_with(why, (struct region_op){ .op = ROP_PROTECT, .prot = PROT_R, .va = TW,
						     .len = 3 * PG });
}
int txn_age(char *why)
{
	return refused_with(why, (struct region_op){ .op = ROP_AGE, .va = TW });
}
int txn_clean(char *why)
{
	return refused_with(why, (struct region_op){ .op = ROP_CLEAN, .va = TW, .len = 4 * PG });
}
int txn_evict(char *why)
{
	return refused_with(why, (struct region_op){ .op = ROP_EVICT, .va = TW });
}
int txn_query(char *why)
{
	return refused_with(why, (struct region_op){ .op = ROP_QUERY, .va = TW + 2 * PG });
}

int txn_overlay(char *why)
{
	long f[3] = { slot_alloc(), slot_alloc(), slot_alloc() }, ro = slot_alloc(), slot = slot_alloc();
	struct pstate s0[TW_PAGES], s1[TW_PAGES];
	why[0] = 0;
	for (int i = 0; i < 3; i++)
		CK(frame_alloc(f[i]) == 0, "frame_alloc");
	CK(cap_mint(f[2], ro, R_READ | R_SHARE, 0, 0, 0) == 0, "read-only frame cap");
	CK(window_set(f) == 5, "set up the window");
	/* UNMAP then MAP the same page: the MAP sees it empty */
	struct region_op a[3] = {
		{ .op = ROP_UNMAP, .va = TW, .len = PG },
		{ .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = TW, .arg = f[2] },
		{ .op = ROP_QUERY, .va = TW },
	};
	CK(txn(a, 3) == 3 && a[2].out_kind == RK_MAPPED, "unmap then map: %ld %ld", a[0].result,
	   a[1].result);
	CK(*(volatile uint64_t *)TW == 0, "the new frame is not the one mapped");
	/* MARK over a page an earlier op unmaps */
	struct region_op b[2] = {
		{ .op = ROP_UNMAP, .va = TW + 4 * PG, .len = PG },
		{ .op = ROP_MARK_PAGER, .prot = PROT_R, .va = TW + 3 * PG, .len = 2 * PG, .arg = 3 },
	};
	CK(txn(b, 2) == 2, "unmap then mark over it: %ld %ld", b[0].result, b[1].result);
	CK(snap(s0, 0) == 0, "query");
	/* MAP then EVICT the page: its frame has a cap too (E_BUSY) */
	struct region_op c[2] = {
		{ .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = TW + 5 * PG, .arg = f[1] },
		{ .op = ROP_EVICT, .va = TW + 5 * PG, .arg = slot },
	};
	long r = txn(c, 2);
	CK(r == -E_BUSY && c[1].result == -E_BUSY && c[0].result == ROP_NOT_DONE,
	   "map then evict: %ld (%ld %ld)", r, c[0].result, c[1].result);
	/* MARK then EVICT: nothing mapped there any more (E_NOENT) */
	struct region_op d[2] = {
		{ .op = ROP_MARK_INVALID, .va = TW + 6 * PG, .len = PG },
		{ .op = ROP_EVICT, .va = TW + 6 * PG, .arg = slot },
	};
	r = txn(d, 2);
	CK(r == -E_NOENT && d[1].result == -E_NOENT, "mark then evict: %ld", r);
	/* a read-only grant mapped, then made writable in the same call */
	struct region_op e[2] = {
		{ .op = ROP_MAP, .prot = PROT_R, .va = TW + 6 * PG, .arg = ro },
		{ .op = ROP_PROTECT, .prot = PROT_R | PROT_W, .va = TW + 5 * PG, .len = 2 * PG },
	};
	r = txn(e, 2);
	CK(r == -E_PERM && e[1].result == -E_PERM && e[0].result == ROP_NOT_DONE,
	   "read-only map then protect writable: %ld (%ld %ld)", r, e[0].result, e[1].result);
	CK(snap(s1, 0) == 0, "query");
	for (int i = 0; i < TW_PAGES; i++)
		CK(s0[i].kind == s1[i].kind && s0[i].prot == s1[i].prot && s0[i].tag == s1[i].tag,
		   "page %d changed by a refused transaction", i);
	CK(overdraws() == 0, "a transaction drew frames it had not planned for");
out:
	window_clear(f, 3);
	slot_drop(&ro);
	slot_drop(&slot);
	return why[0] ? 1 : 0;
}

/* --- txn_model --- */

#define TM_FRAMES 4
#define TM_ITERS 400

static uint64_t tm_seed;
static unsigned tm_rand(unsigned n)
{
	tm_seed = tm_seed * 6364136223846793005ULL + 1442695040888963407ULL;
	return (unsigned)((tm_seed >> 33) % n);
}

/* What one op does to the model m: 0, or the error the kernel must give
 * (then m is as the op found it: each op is atomic). */
static long model_op(struct pstate *m, const struct region_op *op)
{
	int p = (int)((op->va - TW) / PG);
	int np = op->len ? (int)(op->len / PG) : 1;
	struct pstate nm[TW_PAGES];
	memcpy(nm, m, sizeof nm);
	switch (op->op) {
	case ROP_QUERY:
		return 0;
	case ROP_MAP:
		if (m[p].kind == RK_MAPPED)
			return -E_EXIST;
		nm[p] = (struct pstate){ RK_MAPPED, op->prot, 0 };
		break;
	case ROP_EVICT:
		/* every frame here has a cap too */
		return m[p].kind == RK_MAPPED ? -E_BUSY : -E_NOENT;
	case ROP_UNMAP:
		for (int i = p; i < p + np; i++)
			nm[i] = (struct pstate){ RK_INVALID, 0, 0 };
		break;
	case ROP_PROTECT:
		for (int i = p; i < p + np; i++)
			if (m[i].kind == RK_MAPPED || m[i].kind == RK_RESERVED || m[i].kind == RK_PAGER)
				nm[i].prot = op->prot;
		break;
	default:   /* the MARKs */
		for (int i = p; i < p + np; i++) {
			if (m[i].kind == RK_MAPPED)
				return -E_EXIST;
			nm[i] = op->op == ROP_MARK ? (struct pstate){ RK_RESERVED, op->prot, 0 } :
				op->op == ROP_MARK_PAGER ? (struct pstate){ RK_PAGER, op->prot, (uint64_t)op->arg } :
				op->op == ROP_MARK_SWAPPED ? (struct pstate){ RK_SWAPPED, 0, (uint64_t)op->arg } :
				(struct pstate){ RK_INVALID, 0, 0 };
		}
		break;
	}
	memcpy(m, nm, sizeof nm);
	return 0;
}

static struct region_op random_op(const long *f, long slot)
{
	/* EVICT refuses every time here (each frame has a cap): rarely */
	static const uint32_t kinds[] = { ROP_MAP, ROP_MAP, ROP_MAP, ROP_UNMAP, ROP_UNMAP, ROP_MARK,
					  ROP_MARK, ROP_MARK_INVALID, ROP_MARK_PAGER, ROP_MARK_SWAPPED,
					  ROP_PROTECT, ROP_PROTECT, ROP_QUERY, ROP_QUERY, ROP_EVICT };
	struct region_op op = { .op = kinds[tm_rand(sizeof kinds / sizeof kinds[0])] };
	unsigned p = tm_rand(TW_PAGES), np = 1 + tm_rand(3);
	if (p + np > TW_PAGES)
		np = TW_PAGES - p;
	op.va = TW + p * PG;
	uint32_t prot = tm_rand(2) ? PROT_R | PROT_W : PROT_R;
	switch (op.op) {
	case ROP_MAP:
		op.prot = prot;
		op.arg = f[tm_rand(TM_FRAMES)];
		break;
	case ROP_EVICT:
		op.arg = slot;
		break;
	case ROP_QUERY:
		break;
	case ROP_MARK_SWAPPED:
		op.arg = 1 + tm_rand(1000);
		op.len = np * PG;
		break;
	default:
		op.prot = op.op == ROP_UNMAP || op.op == ROP_MARK_INVALID ? 0 : prot;
		op.arg = op.op == ROP_MARK_PAGER ? 1 + tm_rand(1000) : 0;
		op.len = np * PG;
		break;
	}
	return op;
}

static int model_run(char *why);

int txn_model(char *why)
{
	static const uint64_t bases[] = { TW_BASE, TW_BASE + 0x200000UL - 4 * PG };
	int r = 0;
	for (unsigned i = 0; !r && i < sizeof bases / sizeof bases[0]; i++) {
		tw_base = bases[i];
		r = model_run(why);
	}
	tw_base = TW_BASE;
	return r;
}

/* txn_model over the window at tw_base. */
static int model_run(char *why)
{
	long f[TM_FRAMES], slot = slot_alloc();
	struct pstate m[TW_PAGES], k[TW_PAGES];
	long applied = 0, refused = 0;
	why[0] = 0;
	for (int i = 0; i < TM_FRAMES; i++)
		f[i] = slot_alloc();
	for (int i = 0; i < TM_FRAMES; i++)
		CK(frame_alloc(f[i]) == 0, "frame_alloc");
	window_clear(f, 0);
	for (int i = 0; i < TW_PAGES; i++)
		m[i] = (struct pstate){ RK_INVALID, 0, 0 };
	long od0 = overdraws();
	tm_seed = 0x7a11;
	for (int it = 0; it < TM_ITERS; it++) {
		struct region_op ops[6];
		int n = 1 + (int)tm_rand(6);
		for (int i = 0; i < n; i++)
			ops[i] = random_op(f, slot);
		long r = txn(ops, n);
		/* the model, op by op */
		struct pstate mm[TW_PAGES];
		memcpy(mm, m, sizeof mm);
		long want = 0;
		int at = -1, evicts = 0;
		/* decode first: two evictions into one slot */
		for (int i = 0; i < n && !want; i++)
			if (ops[i].op == ROP_EVICT && evicts++)
				want = -E_EXIST, at = i;
		for (int i = 0; i < n && !want; i++)
			if ((want = model_op(mm, &ops[i])))
				at = i;
		if (r == n) {
			CK(!want, "iteration %d: the kernel applied what the model refuses at op %d (%s)",
			   it, at, err_name(want));
			memcpy(m, mm, sizeof mm);
			applied++;
		} else {
			CK(want && r == want && ops[at].result == want,
			   "iteration %d: the kernel returned %s (op results %ld %ld %ld), the model %s at op %d",
			   it, err_name(r), ops[0].result, n > 1 ? ops[1].result : 0,
			   n > 2 ? ops[2].result : 0, want ? err_name(want) : "applies all", at);
			for (int i = 0; i < n; i++)
				CK(ops[i].result == (i == at ? want : ROP_NOT_DONE),
				   "iteration %d: op %d's result %ld", it, i, ops[i].result);
			refused++;
		}
		CK(snap(k, 0) == 0, "query");
		for (int i = 0; i < TW_PAGES; i++) {
			uint64_t kp = k[i].prot & 7u;
			CK(k[i].kind == m[i].kind && kp == m[i].prot && k[i].tag == m[i].tag,
			   "iteration %d page %d: kernel kind %lu prot %lx tag %lu, model %lu %lx %lu",
			   it, i, k[i].kind, kp, k[i].tag, m[i].kind, m[i].prot, m[i].tag);
		}
	}
	printf("  txn_model: window %lx: %d transactions, %ld applied, %ld refused\n",
	       (unsigned long)tw_base, TM_ITERS, applied, refused);
	CK(applied > TM_ITERS / 8 && refused > TM_ITERS / 8, "too one-sided to test anything");
	CK(overdraws() == od0, "%ld transactions drew frames they had not planned for",
	   overdraws() - od0);
out:
	window_clear(f, TM_FRAMES);
	slot_drop(&slot);
	return why[0] ? 1 : 0;
}
