/* Exploit-style tests of frame grants (selftest names sec_*): the rights
 * of the frame cap a mapping was made with bind that mapping for its
 * whole life.
 *
 *  - sec_ro_frame_protect: a read-only frame cap, mapped read-only, can
 *    not be PROTECTed to writable, in our own space or in a child's
 *    (E_PERM, the page unchanged), and EVICT of such a page hands back a
 *    frame cap without R_WRITE.
 *  - sec_clone_noshare: a frame mapped through a cap without R_SHARE is
 *    not put into a second address space by SYS_REGION_CLONE (E_PERM,
 *    nothing changed on either side).
 * Both end with the kernel's object and frame counters where they began. */
#include "ulib.h"
#include "selftest.h"
#include <patina/pager.h>

#define GR_VA  0x6e000000UL     /* our window: the owner's view */
#define GR_VA2 0x6e001000UL     /* the grantee's view in our own space */
#define GR_PG  4096UL

#define CK(c, ...) do { if (!(c)) { if (!why[0]) snprintf(why, 160, __VA_ARGS__); goto out; } } while (0)

#define txn1 txn_one

/* A fresh slot holding a cap minted from `src` with `rights`. */
static long mint(long src, unsigned rights)
{
	long s = slot_alloc();
	if (s >= 0 && cap_mint(src, s, rights, 0, 0, 0) != 0) {
		slot_release(s);
		return -1;
	}
	return s;
}

/* An empty child task and a region cap over its whole user range. */
static int child_make(long *task, long *region)
{
	*task = slot_alloc();
	*region = slot_alloc();
	if (*task < 0 || *region < 0)
		return -1;
	if (sc3(SYS_TASK_CREATE, SLOT_SELF_TASK, *task, QUOTA(64, 1, 0, 0)) != 0)
		return -1;
	return task_region(*task, *region) == 0 ? 0 : -1;
}

/* The permissions (and QF_* flags) a query of va in region reports. */
static uint64_t prot_of(long region, uint64_t va, uint64_t *kind)
{
	struct region_op q;
	if (txn1(region, ROP_QUERY, 0, va, 0, &q) != 0)
		return ~0ul;
	if (kind)
		*kind = q.out_kind;
	return q.out_prot;
}

int sec_ro_frame_protect(char *why)
{
	struct kcounters before;
	long f = -1, ro = -1, task = -1, rc = -1, ev = -1;
	why[0] = 0;
	settled_counters(&before);
	f = slot_alloc();
	CK(f >= 0 && frame_alloc(f) == 0, "frame_alloc");
	ro = mint(f, R_READ | R_SHARE);
	CK(ro >= 0, "mint a read-only frame cap");
	CK(txn1(SLOT_SELF_AS, ROP_MAP, PROT_R | PROT_W, GR_VA, f, NULL) == 0, "owner maps RW");
	*(volatile uint64_t *)GR_VA = 0x5ec0;

	/* In our own space: map the read-only grant, then try to upgrade it. */
	long r = txn1(SLOT_SELF_AS, ROP_MAP, PROT_R | PROT_W, GR_VA2, ro, NULL);
	CK(r == -E_PERM, "map a read-only cap writable: %ld", r);
	CK(txn1(SLOT_SELF_AS, ROP_MAP, PROT_R, GR_VA2, ro, NULL) == 0, "map the read-only cap");
	uint64_t p = prot_of(SLOT_SELF_AS, GR_VA2, NULL);
	CK((p & 7) == PROT_R && (p & QF_NOWRITE), "grant mapped with prot %lx", p);
	r = txn1(SLOT_SELF_AS, ROP_PROTECT, PROT_R | PROT_W, GR_VA2, 0, NULL);
	CK(r == -E_PERM, "PROTECT of a read-only grant to RW: %ld", r);
	p = prot_of(SLOT_SELF_AS, GR_VA2, NULL);
	CK((p & 7) == PROT_R && (p & QF_NOWRITE), "a refused PROTECT left prot %lx", p);
	/* A range PROTECT that takes in the grant is refused whole: the
	 * owner's page beside it keeps its permissions too. */
	struct region_op two = { .op = ROP_PROTECT, .prot = PROT_R | PROT_W, .va = GR_VA, .len = 2 * GR_PG };
	r = region_txn(SLOT_SELF_AS, GR_VA, GR_VA + 2 * GR_PG, &two, 1);
	CK(r < 0 || two.result == -E_PERM, "range PROTECT over the grant: %ld / %ld", r, (long)two.result);
	CK((prot_of(SLOT_SELF_AS, GR_VA2, NULL) & 7) == PROT_R, "range PROTECT upgraded the grant");
	/* Downgrades and execute stay allowed (W^X is the region cap's rule). */
	CK(txn1(SLOT_SELF_AS, ROP_PROTECT, PROT_R, GR_VA2, 0, NULL) == 0, "PROTECT to R");
	CK(*(volatile uint64_t *)GR_VA2 == 0x5ec0, "the grant does not show the owner's data");
	CK(txn1(SLOT_SELF_AS, ROP_UNMAP, 0, GR_VA2, 0, NULL) == 0, "unmap the grant");

	/* In a child's space, through its region cap. */
	CK(child_make(&task, &rc) == 0, "child");
	CK(txn1(rc, ROP_MAP, PROT_R, GR_VA, ro, NULL) == 0, "map the grant into the child");
	r = txn1(rc, ROP_PROTECT, PROT_R | PROT_W, GR_VA, 0, NULL);
	CK(r == -E_PERM, "PROTECT of the child's read-only grant to RW: %ld", r);
	CK((prot_of(rc, GR_VA, NULL) & 7) == PROT_R, "the child's grant was upgraded");
	CK(txn1(rc, ROP_UNMAP, 0, GR_VA, 0, NULL) == 0, "unmap the child's grant");

	/* EVICT of the only reference to a read-only grant: the frame cap it
	 * becomes has no R_WRITE (and no R_SHARE the grant did not have). */
	CK(txn1(SLOT_SELF_AS, ROP_UNMAP, 0, GR_VA, 0, NULL) == 0, "owner unmaps");
	slot_drop(&ro);
	ro = mint(f, R_READ);
	CK(ro >= 0, "mint R_READ only");
	slot_drop(&f);
	CK(txn1(rc, ROP_MAP, PROT_R, GR_VA, ro, NULL) == 0, "map the last reference");
	slot_drop(&ro);
	ev = slot_alloc();
	CK(ev >= 0, "slot");
	CK(txn1(rc, ROP_EVICT, 0, GR_VA, ev, NULL) == 0, "evict the grant");
	struct cap_info ci;
	CK(cap_info(ev, &ci) == 0 && ci.type == CAP_FRAME, "evicted cap");
	CK(!(ci.rights & (R_WRITE | R_SHARE)), "EVICT of a read-only grant gave rights %x", ci.rights);
	r = txn1(SLOT_SELF_AS, ROP_MAP, PROT_R | PROT_W, GR_VA, ev, NULL);
	CK(r == -E_PERM, "map the evicted read-only frame writable: %ld", r);
out:
	txn1(SLOT_SELF_AS, ROP_UNMAP, 0, GR_VA, 0, NULL);
	txn1(SLOT_SELF_AS, ROP_UNMAP, 0, GR_VA2, 0, NULL);
	slot_drop(&ev);
	slot_drop(&ro);
	slot_drop(&f);
	slot_drop(&rc);
	slot_drop(&task);
	return why[0] ? 1 : counters_objs_back(&before, why);
}

int sec_clone_noshare(char *why)
{
	struct kcounters before;
	long f = -1, ns = -1, task = -1, rc = -1;
	why[0] = 0;
	settled_counters(&before);
	f = slot_alloc();
	CK(f >= 0 && frame_alloc(f) == 0, "frame_alloc");
	ns = mint(f, R_READ | R_WRITE);           /* no R_SHARE: one mapping */
	CK(ns >= 0, "mint without R_SHARE");
	slot_drop(&f);
	CK(txn1(SLOT_SELF_AS, ROP_MAP, PROT_R | PROT_W, GR_VA, ns, NULL) == 0, "map it");
	*(volatile uint64_t *)GR_VA = 0xc10e;
	uint64_t p = prot_of(SLOT_SELF_AS, GR_VA, NULL);
	CK(p & QF_NOSHARE, "mapping of a cap without R_SHARE reports %lx", p);
	CK(child_make(&task, &rc) == 0, "child");
	struct clone_stats st;
	long r = sc6(SYS_REGION_CLONE, SLOT_SELF_AS, rc, GR_VA, GR_VA + GR_PG, (long)&st, 0);
	CK(r == -E_PERM, "clone of a frame without R_SHARE: %ld", r);
	uint64_t kind = 0;
	prot_of(rc, GR_VA, &kind);
	CK(kind == RK_INVALID, "the refused clone left kind %lu in the child", kind);
	prot_of(SLOT_SELF_AS, GR_VA, &kind);
	CK(kind == RK_MAPPED, "the refused clone changed our page to kind %lu", kind);
	CK(*(volatile uint64_t *)GR_VA == 0xc10e, "our data changed");
	/* Anonymous memory beside it clones as before. */
	CK(mem_reserve(GR_VA2, GR_PG) == 0, "reserve");
	*(volatile uint64_t *)GR_VA2 = 1;
	r = sc6(SYS_REGION_CLONE, SLOT_SELF_AS, rc, GR_VA2, GR_VA2 + GR_PG, (long)&st, 0);
	CK(r == 0 && st.frames == 1, "clone of anonymous memory: %ld, %lu frames", r, st.frames);
out:
	txn1(SLOT_SELF_AS, ROP_UNMAP, 0, GR_VA, 0, NULL);
	txn1(SLOT_SELF_AS, ROP_UNMAP, 0, GR_VA2, 0, NULL);
	slot_drop(&ns);
	slot_drop(&f);
	slot_drop(&rc);
	slot_drop(&task);
	return why[0] ? 1 : counters_objs_back(&before, why);
}
