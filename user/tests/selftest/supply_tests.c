/* SYS_REGION_SUPPLY and SYS_REGION_ALLOC_CONTIG (selftest names
 * txn_supply_*), within this task's own space: a source window SW and a
 * destination window DW, both 2 MiB aligned.
 *
 * txn_supply_move: eight written pages move to a destination that is
 * partly pager-managed, partly invalid: the source is invalid after, the
 * destination maps the same contents with the permissions asked.
 * txn_supply_refused: a destination page already mapped refuses the
 * whole supply (E_EXIST) and both windows are as they were, down to the
 * source's dirty bits and contents (the frames went back). txn_supply_bad:
 * refusals before anything moves, each leaving both windows as they were:
 * no R_MAP on the destination cap or R_UNMAP on the source's, page rights
 * the destination cap lacks (E_PERM), misaligned addresses, 0 or 513
 * pages, W|X, overlapping windows (E_INVAL), a source frame a cap still
 * holds (E_BUSY), a source page not mapped (E_NOENT). txn_supply_huge:
 * 512 contiguous frames from SYS_REGION_ALLOC_CONTIG supplied whole to a
 * 2 MiB-aligned page (one 2 MiB leaf), read back, then one page unmapped
 * from its middle (the leaf splits) with the others intact; bad orders
 * and alignments refused. txn_supply_charge: into an empty task: a supply
 * its frame quota cannot take is refused (E_QUOTA) with both sides as
 * they were; one it can take moves the frames' charge from us to it. */
#include "ulib.h"
#include "selftest.h"

#define PG 4096UL
#define SW 0x6c000000UL
#define DW 0x6e000000UL
#define NP 8
#define RW (PROT_R | PROT_W)
#define CK(c, ...) do { if (!(c)) { if (!why[0]) snprintf(why, 160, __VA_ARGS__); goto out; } } while (0)

struct sstate { uint64_t kind, prot, tag; };

static inline uint64_t sp_word(uint64_t va) { return va * 0x9e3779b97f4a7c15ULL ^ 0x5a5a; }

static long txn_at(uint64_t lo, uint64_t len, struct region_op *ops, long n)
{
	return region_txn(SLOT_SELF_AS, lo, lo + len, ops, n);
}

/* Query n pages at base into s (kind, R/W/X, limits, dirty, tag). */
static long snap(uint64_t base, int n, struct sstate *s)
{
	for (int i = 0; i < n; i += 16) {
		struct region_op q[16];
		int k = n - i < 16 ? n - i : 16;
		for (int j = 0; j < k; j++)
			q[j] = (struct region_op){ .op = ROP_QUERY, .va = base + (uint64_t)(i + j) * PG };
		if (txn_at(base + i * PG, k * PG, q, k) != k)
			return -E_INVAL;
		for (int j = 0; j < k; j++)
			s[i + j] = (struct sstate){ q[j].out_kind,
						    q[j].out_prot & (7u | QF_NOWRITE | QF_NOSHARE | QF_DIRTY),
						    q[j].out_tag };
	}
	return 0;
}

static int same(const struct sstate *a, const struct sstate *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i].kind != b[i].kind || a[i].prot != b[i].prot || a[i].tag != b[i].tag)
			return 0;
	return 1;
}

/* n written pages at va (anonymous memory). */
static long fill(uint64_t va, int n)
{
	struct region_op m = { .op = ROP_MARK, .prot = RW, .va = va, .len = n * PG };
	long r = txn_at(va, n * PG, &m, 1);
	for (int i = 0; r == 1 && i < n; i++)
		*(volatile uint64_t *)(va + i * PG) = sp_word(va + i * PG);
	return r == 1 ? 0 : -E_INVAL;
}

/* Pages of [va, +n) whose first word is not the pattern written at src. */
static int wrong(uint64_t va, uint64_t src, int n)
{
	int bad = 0;
	for (int i = 0; i < n; i++)
		bad += *(volatile uint64_t *)(va + i * PG) != sp_word(src + i * PG);
	return bad;
}

static void clear(uint64_t va, uint64_t len)
{
	struct region_op u[2] = { { .op = ROP_UNMAP, .va = va, .len = len },
				  { .op = ROP_MARK_INVALID, .va = va, .len = len } };
	txn_at(va, len, u, 2);
}

int txn_supply_move(char *why)
{
	struct sstate s[NP];
	why[0] = 0;
	CK(fill(SW, NP) == 0, "fill");
	struct region_op m = { .op = ROP_MARK_PAGER, .prot = RW, .va = DW, .len = 4 * PG, .arg = 9 };
	CK(txn_at(DW, 4 * PG, &m, 1) == 1, "mark pager");
	long r = region_supply(SLOT_SELF_AS, DW, SLOT_SELF_AS, SW, NP, PROT_R);
	CK(r == 0, "supply: %ld", r);
	CK(snap(SW, NP, s) == 0, "query");
	for (int i = 0; i < NP; i++)
		CK(s[i].kind == RK_INVALID, "source page %d: kind %lu", i, s[i].kind);
	CK(snap(DW, NP, s) == 0, "query");
	for (int i = 0; i < NP; i++)
		CK(s[i].kind == RK_MAPPED && (s[i].prot & 7u) == PROT_R, "page %d: kind %lu prot %lx",
		   i, s[i].kind, s[i].prot);
	CK(!wrong(DW, SW, NP), "%d pages lost their contents", wrong(DW, SW, NP));
out:
	clear(SW, NP * PG);
	clear(DW, NP * PG);
	return why[0] ? 1 : 0;
}

int txn_supply_refused(char *why)
{
	struct sstate a0[NP], b0[NP], a1[NP], b1[NP];
	long f = slot_alloc();
	why[0] = 0;
	CK(fill(SW, NP) == 0, "fill");
	CK(frame_alloc(f) == 0, "frame");
	struct region_op m = { .op = ROP_MAP, .prot = RW, .va = DW + 5 * PG, .arg = f };
	CK(txn_at(DW, NP * PG, &m, 1) == 1, "map");
	*(volatile uint64_t *)(DW + 5 * PG) = 0x1234;
	CK(snap(SW, NP, a0) == 0 && snap(DW, NP, b0) == 0, "query");
	long r = region_supply(SLOT_SELF_AS, DW, SLOT_SELF_AS, SW, NP, RW);
	CK(r == -E_EXIST, "supply over a mapped page: %ld, want E_EXIST", r);
	CK(snap(SW, NP, a1) == 0 && snap(DW, NP, b1) == 0, "query");
	CK(same(a0, a1, NP), "the source changed");
	CK(same(b0, b1, NP), "the destination changed");
	CK(!wrong(SW, SW, NP), "%d source pages lost their contents", wrong(SW, SW, NP));
	CK(*(volatile uint64_t *)(DW + 5 * PG) == 0x1234, "the mapped page changed");
	/* and the frames are whole: the same supply goes once the page is gone */
	CK(txn_at(DW, NP * PG, &(struct region_op){ .op = ROP_UNMAP, .va = DW + 5 * PG, .len = PG }, 1) == 1,
	   "unmap");
	CK((r = region_supply(SLOT_SELF_AS, DW, SLOT_SELF_AS, SW, NP, RW)) == 0, "supply: %ld", r);
	CK(!wrong(DW, SW, NP), "%d pages lost their contents", wrong(DW, SW, NP));
out:
	clear(SW, NP * PG);
	clear(DW, NP * PG);
	cap_delete(f);
	slot_release(f);
	return why[0] ? 1 : 0;
}

/* One refused call: its result must be want and both windows unchanged. */
#define REFUSE(call, want, what) do { \
	CK(snap(SW, NP, a0) == 0 && snap(DW, NP, b0) == 0, "query"); \
	long r_ = (call); \
	CK(r_ == (want), "%s: %ld, want %ld", what, r_, (long)(want)); \
	CK(snap(SW, NP, a1) == 0 && snap(DW, NP, b1) == 0, "query"); \
	CK(same(a0, a1, NP) && same(b0, b1, NP), "%s changed a window", what); \
} while (0)

int txn_supply_bad(char *why)
{
	struct sstate a0[NP], b0[NP], a1[NP], b1[NP];
	long nomap = slot_alloc(), nounmap = slot_alloc(), ro = slot_alloc(), f = slot_alloc();
	why[0] = 0;
	CK(fill(SW, NP) == 0, "fill");
	CK(cap_mint(SLOT_SELF_AS, nomap, R_ALL & ~R_MAP, 0, DW, DW + NP * PG) == 0, "mint");
	CK(cap_mint(SLOT_SELF_AS, nounmap, R_ALL & ~R_UNMAP, 0, SW, SW + NP * PG) == 0, "mint");
	CK(cap_mint(SLOT_SELF_AS, ro, R_ALL & ~R_WRITE, 0, DW, DW + NP * PG) == 0, "mint");
	REFUSE(region_supply(nomap, DW, SLOT_SELF_AS, SW, NP, PROT_R), -E_PERM, "no R_MAP");
	REFUSE(region_supply(SLOT_SELF_AS, DW, nounmap, SW, NP, PROT_R), -E_PERM, "no R_UNMAP");
	REFUSE(region_supply(ro, DW, SLOT_SELF_AS, SW, NP, RW), -E_PERM, "W without R_WRITE");
	REFUSE(region_supply(SLOT_SELF_AS, DW + 8, SLOT_SELF_AS, SW, NP, PROT_R), -E_INVAL, "misaligned");
	REFUSE(region_supply(SLOT_SELF_AS, DW, SLOT_SELF_AS, SW + 8, NP, PROT_R), -E_INVAL, "misaligned");
	REFUSE(region_supply(SLOT_SELF_AS, DW, SLOT_SELF_AS, SW, 0, PROT_R), -E_INVAL, "0 pages");
	REFUSE(region_supply(SLOT_SELF_AS, DW, SLOT_SELF_AS, SW, SUPPLY_MAX_PAGES + 1, PROT_R), -E_INVAL,
	       "513 pages");
	REFUSE(region_supply(SLOT_SELF_AS, DW, SLOT_SELF_AS, SW, NP, PROT_W | PROT_X | PROT_R), -E_INVAL,
	       "W|X");
	REFUSE(region_supply(SLOT_SELF_AS, SW + PG, SLOT_SELF_AS, SW, NP, PROT_R), -E_INVAL, "overlap");
	/* a frame a cap still holds is shared: nothing moves */
	CK(frame_alloc(f) == 0, "frame");
	struct region_op m[2] = { { .op = ROP_UNMAP, .va = SW + 2 * PG, .len = PG },
				  { .op = ROP_MAP, .prot = RW, .va = SW + 2 * PG, .arg = f } };
	CK(txn_at(SW, NP * PG, m, 2) == 2, "map the frame");
	REFUSE(region_supply(SLOT_SELF_AS, DW, SLOT_SELF_AS, SW, NP, PROT_R), -E_BUSY, "shared frame");
	CK(txn_at(SW, NP * PG, m, 1) == 1, "unmap");
	REFUSE(region_supply(SLOT_SELF_AS, DW, SLOT_SELF_AS, SW, NP, PROT_R), -E_NOENT, "hole");
out:
	clear(SW, NP * PG);
	clear(DW, NP * PG);
	long slots[] = { nomap, nounmap, ro, f };
	for (int i = 0; i < 4; i++)
		cap_delete(slots[i]), slot_release(slots[i]);
	return why[0] ? 1 : 0;
}

int txn_supply_huge(char *why)
{
	const uint64_t n = SUPPLY_MAX_PAGES, len = n * PG;
	why[0] = 0;
	long r = region_alloc_contig(SLOT_SELF_AS, SW + PG, 9, RW);
	CK(r == -E_INVAL, "misaligned block: %ld", r);
	CK((r = region_alloc_contig(SLOT_SELF_AS, SW, 10, RW)) == -E_INVAL, "order 10: %ld", r);
	CK((r = region_alloc_contig(SLOT_SELF_AS, SW, 9, RW)) == 0, "alloc: %ld", r);
	CK((r = region_alloc_contig(SLOT_SELF_AS, SW, 0, RW)) == -E_EXIST, "alloc over it: %ld", r);
	for (uint64_t i = 0; i < n; i++)
		*(volatile uint64_t *)(SW + i * PG) = sp_word(SW + i * PG);
	CK((r = region_supply(SLOT_SELF_AS, DW, SLOT_SELF_AS, SW, (long)n, RW)) == 0, "supply: %ld", r);
	CK(!wrong(DW, SW, (int)n), "%d pages wrong", wrong(DW, SW, (int)n));
	struct region_op u = { .op = ROP_UNMAP, .va = DW + 100 * PG, .len = PG };
	CK(txn_at(DW, len, &u, 1) == 1, "unmap one page of the leaf");
	CK(!wrong(DW, SW, 100) && !wrong(DW + 101 * PG, SW + 101 * PG, (int)n - 101),
	   "the split lost contents");
	struct sstate s[1];
	CK(snap(DW + 100 * PG, 1, s) == 0 && s[0].kind == RK_INVALID, "the page is still there");
out:
	clear(SW, len);
	clear(DW, len);
	return why[0] ? 1 : 0;
}

static long usage(long task)
{
	struct cap_info ci;
	return cap_info(task, &ci) ? -1 : (long)ci.lo;
}

int txn_supply_charge(char *why)
{
	enum { MANY = 32 };
	struct sstate a0[MANY], a1[MANY];
	long tc = slot_alloc(), rc = slot_alloc(), r;
	why[0] = 0;
	CK((r = sc3(SYS_TASK_CREATE, SLOT_SELF_TASK, tc, QUOTA(16, 1, 0, 0))) == 0, "task: %ld", r);
	CK(task_region(tc, rc) == 0, "region cap");
	CK(fill(SW, MANY) == 0, "fill");
	long mu = usage(SLOT_SELF_TASK), cu = usage(tc);
	CK(snap(SW, MANY, a0) == 0, "query");
	r = region_supply(rc, DW, SLOT_SELF_AS, SW, MANY, RW);
	CK(r == -E_QUOTA, "32 pages into a 16-frame task: %ld, want E_QUOTA", r);
	CK(snap(SW, MANY, a1) == 0 && same(a0, a1, MANY), "the source changed");
	CK(!wrong(SW, SW, MANY), "%d source pages lost their contents", wrong(SW, SW, MANY));
	CK(usage(SLOT_SELF_TASK) == mu && usage(tc) == cu, "charges moved: us %ld -> %ld, it %ld -> %ld",
	   mu, usage(SLOT_SELF_TASK), cu, usage(tc));
	CK((r = region_supply(rc, DW, SLOT_SELF_AS, SW, NP, RW)) == 0, "8 pages: %ld", r);
	CK(usage(tc) >= cu + NP && usage(SLOT_SELF_TASK) <= mu - NP,
	   "charge did not move: us %ld -> %ld, it %ld -> %ld", mu, usage(SLOT_SELF_TASK), cu, usage(tc));
out:
	clear(SW, MANY * PG);
	if (tc >= 0) {
		task_kill(tc);
		task_wait(tc);
	}
	cap_delete(rc), cap_delete(tc);
	slot_release(rc), slot_release(tc);
	return why[0] ? 1 : 0;
}
