/* Memory objects (patina/mobj.h), selftest names mobj_*.
 *
 * mobj_anon_shared: an anonymous object mapped into two children and us:
 * what one writes the others read, each page one frame (the object holds
 * each page once), a page not touched yet reports RK_OBJECT with its
 * offset. mobj_pager_fault: a pager-backed object's fault reaches our
 * pager thread with the object's badge, the page's offset and the access;
 * SYS_MOBJ_SUPPLY moves a page of ours into the object and the client
 * reads it; a second supply of that offset is refused (E_EXIST); a
 * write to the read-only mapping of a page the object holds reaches the
 * pager too (FA_WRITE), whose FAULT_KILL ends the client.
 * mobj_range_ops: write-protect, unprotect, invalidate and decommit reach
 * the mappings of two children. mobj_bad_input: refusals with their
 * errors, each changing nothing (a transaction with a bad MAP_OBJ maps
 * nothing; clone refuses an object's mapping). mobj_teardown: unmap,
 * child death and cap deletion leave no object, record or page behind.
 * mobj_cost: the kernel memory an object page and a mapped page cost,
 * printed as figures (docs/performance.md, "Memory objects"). Every test
 * checks that the counters (objects, records, pages, frames, caps,
 * tasks) come back. */
#include "ulib.h"
#include "selftest.h"
#include <patina/pager.h>
#include <patina/mobj.h>

#define PG 4096UL
#define OV 0x78000000UL     /* where each task maps the object (2 MiB aligned) */
#define SV 0x79000000UL     /* our scratch pages for supplies */
#define RW (PROT_R | PROT_W)
#define FAIL(...) do { if (!why[0]) snprintf(why, 160, __VA_ARGS__); goto out; } while (0)
#define CK(c, ...) do { if (!(c)) FAIL(__VA_ARGS__); } while (0)
#define CHILD_FRAMES SELF_CHILD_FRAMES

/* Map npages of obj from page off at va of region rc with prot: the
 * transaction's result. */
static long map_obj(long rc, long obj, uint64_t off, uint64_t va, uint64_t npages, uint32_t prot)
{
	struct region_op op = { .op = ROP_MAP_OBJ, .prot = prot, .va = va, .len = npages * PG,
				.arg = ROP_OBJ_ARG(obj, off) };
	long r = region_txn(rc, va, va + npages * PG, &op, 1);
	return r < 0 ? r : op.result;
}

static long unmap_at(long rc, uint64_t va, uint64_t len)
{
	struct region_op op = { .op = ROP_UNMAP, .va = va, .len = len };
	long r = region_txn(rc, va, va + len, &op, 1);
	return r < 0 ? r : op.result;
}

/* Kind, prot (R/W/X) and tag of va in rc; kind -1 if the query failed. */
static long kind_at(long rc, uint64_t va, uint64_t *prot, uint64_t *tag)
{
	struct region_op q = { .op = ROP_QUERY, .va = va };
	if (region_txn(rc, va, va + PG, &q, 1) != 1)
		return -1;
	if (prot)
		*prot = q.out_prot & 7u;
	if (tag)
		*tag = q.out_tag;
	return (long)q.out_kind;
}

static struct cap_info obj_info(long obj)
{
	struct cap_info ci = { 0 };
	cap_info(obj, &ci);
	return ci;
}

/* A test's result: failed (why filled), or the counters (and with
 * `frames` the frame counts) not back where *before had them. */
static int ended(const struct kcounters *before, int frames, char *why)
{
	return why[0] || pg_counters_back(before, frames, why) ? 1 : 0;
}

static inline uint64_t pat(uint64_t i) { return 0x6d6f626a00000000ULL ^ (i * 0x9e3779b97f4a7c15ULL); }

int mobj_anon_shared(char *why)
{
	struct kcounters before;
	struct child a = { -1, -1, -1 }, b = { -1, -1, -1 };
	long obj = slot_alloc();
	uint64_t v = 0, tag = 0, prot = 0;
	settled_counters(&before);
	CK(obj >= 0 && mobj_create(4, obj, SLOT_NONE) == 0, "create");
	struct cap_info ci = obj_info(obj);
	CK(ci.type == CAP_MOBJ && ci.lo == 4 && ci.hi == 0 && ci.badge == 0, "info: type %u size %lu held %lu",
	   ci.type, (unsigned long)ci.lo, (unsigned long)ci.hi);
	CK(child_start(&a, -1, CHILD_FRAMES) == 0 && child_start(&b, -1, CHILD_FRAMES) == 0, "children");
	CK(map_obj(a.rc, obj, 0, OV, 4, RW) == 0, "map into a");
	CK(map_obj(b.rc, obj, 0, OV, 4, RW) == 0, "map into b");
	CK(map_obj(SLOT_SELF_AS, obj, 0, OV, 4, RW) == 0, "map into us");
	CK(kind_at(b.rc, OV + 2 * PG, &prot, &tag) == RK_OBJECT && tag == 2 && prot == RW,
	   "b's untouched page: kind %ld tag %lu prot %lu", kind_at(b.rc, OV + 2 * PG, NULL, NULL),
	   (unsigned long)tag, (unsigned long)prot);
	CK(obj_info(obj).objects == 3, "mappings %lu", (unsigned long)obj_info(obj).objects);
	CK(mt_call(a.ep, MT_WRITE, OV + 2 * PG, pat(2), NULL) == 0, "a writes");
	CK(mt_call(b.ep, MT_READ, OV + 2 * PG, 0, &v) == 0 && v == pat(2), "b reads %lx", (unsigned long)v);
	CK(*(volatile uint64_t *)(OV + 2 * PG) == pat(2), "we read another value");
	*(volatile uint64_t *)(OV + 3 * PG + 8) = pat(3);
	CK(mt_call(a.ep, MT_READ, OV + 3 * PG + 8, 0, &v) == 0 && v == pat(3), "a reads ours: %lx",
	   (unsigned long)v);
	CK(mt_call(b.ep, MT_READ, OV, 0, &v) == 0 && v == 0, "page 0 not zero: %lx", (unsigned long)v);
	CK(obj_info(obj).hi == 3, "object holds %lu pages, not 3", (unsigned long)obj_info(obj).hi);
	CK(kind_at(a.rc, OV + 3 * PG, NULL, NULL) == RK_MAPPED, "a's page 3 not mapped after its read");
	CK(kind_at(SLOT_SELF_AS, OV + PG, NULL, &tag) == RK_OBJECT && tag == 1, "our page 1: tag %lu",
	   (unsigned long)tag);
out:
	child_end(&a, 1);
	child_end(&b, 1);
	unmap_at(SLOT_SELF_AS, OV, 4 * PG);
	slot_drop(&obj);
	return ended(&before, 1, why);
}

/* The pager thread of mobj_pager_fault: answers `want` faults on ep by
 * supplying a page written with pat(offset) at that offset, recording
 * the last message. */
struct pstate {
	long ep, obj, want, done, err;
	uint64_t w[4], badge;
};

static void pager_thread(void *arg)
{
	struct pstate *p = arg;
	uint64_t w[4] = { 0 };
	while (p->done < p->want) {
		struct sysret r = ipc(SYS_RECV, p->ep, w, SLOT_NONE);
		if (r.a0) {
			p->err = r.a0;
			break;
		}
		p->w[0] = (uint64_t)r.a1, p->w[1] = (uint64_t)r.a2, p->w[2] = (uint64_t)r.a3;
		p->w[3] = (uint64_t)r.a4, p->badge = (uint64_t)r.a5;
		uint64_t off = FAULT_STATUS_TAG(p->w[2]);
		uint64_t sva = SV + (uint64_t)p->done * PG;
		long e = FAULT_ACCESS(p->w[1]) == FA_WRITE ? -E_PERM : mem_reserve(sva, PG);
		if (!e) {
			*(volatile uint64_t *)sva = pat(off);
			e = mobj_supply(p->obj, off, SLOT_SELF_AS, sva, 1);
		}
		if (e && FAULT_ACCESS(p->w[1]) != FA_WRITE)
			p->err = e;
		w[0] = e ? FAULT_KILL : FAULT_RESUME;    /* a write: the mapping is read-only */
		__atomic_store_n(&p->done, p->done + 1, __ATOMIC_RELEASE);   /* before the client goes on */
		ipc(SYS_REPLY, 0, w, SLOT_NONE);
	}
	__atomic_store_n(&p->want, -1, __ATOMIC_RELEASE);
}

int mobj_pager_fault(char *why)
{
	struct kcounters before;
	struct child a = { -1, -1, -1 };
	long ep = slot_alloc(), bep = slot_alloc(), obj = slot_alloc(), th = -1;
	static struct pstate p;
	uint64_t v = 0;
	settled_counters(&before);
	CK(ep >= 0 && bep >= 0 && obj >= 0 && ep_create(ep) == 0, "endpoint");
	CK(cap_mint(ep, bep, R_SEND, 0x77, 0, 0) == 0, "badged cap");
	CK(mobj_create(8, obj, bep) == 0, "create");
	CK(obj_info(obj).badge == 0x77, "badge %lx", (unsigned long)obj_info(obj).badge);
	p = (struct pstate){ .ep = ep, .obj = obj, .want = 3 };
	CK((th = uthread_start(pager_thread, &p, -1, 1)) >= 0, "pager thread");
	CK(child_start(&a, -1, CHILD_FRAMES) == 0, "child");
	CK(map_obj(a.rc, obj, 2, OV, 6, PROT_R) == 0, "map pages 2..7 read-only");
	CK(mt_call(a.ep, MT_READ, OV + 3 * PG + 16, 0, &v) == 0, "client read");
	CK(p.err == 0 && p.done == 1, "pager: err %ld faults %ld", p.err, p.done);
	CK(p.badge == 0x77, "badge %lx", (unsigned long)p.badge);
	CK(FAULT_STATUS_KIND(p.w[2]) == RK_OBJECT && FAULT_STATUS_TAG(p.w[2]) == 5 &&
	   FAULT_STATUS_PROT(p.w[2]) == PROT_R, "status %lx", (unsigned long)p.w[2]);
	CK(FAULT_ACCESS(p.w[1]) == FA_READ && p.w[0] == OV + 3 * PG + 16, "access %lu at %lx",
	   (unsigned long)p.w[1], (unsigned long)p.w[0]);
	CK(v == 0, "word 2 of the supplied page: %lx", (unsigned long)v);
	CK(mt_call(a.ep, MT_READ, OV + 3 * PG, 0, &v) == 0 && v == pat(5), "client reads %lx",
	   (unsigned long)v);
	CK(obj_info(obj).hi == 1, "object holds %lu", (unsigned long)obj_info(obj).hi);
	CK(kind_at(SLOT_SELF_AS, SV, NULL, NULL) == RK_INVALID, "our supplied page is still ours");
	/* The offset is filled: a second supply of it is refused, ours kept. */
	CK(mem_reserve(SV + 4 * PG, PG) == 0, "scratch");
	*(volatile uint64_t *)(SV + 4 * PG) = 1;
	CK(mobj_supply(obj, 5, SLOT_SELF_AS, SV + 4 * PG, 1) == -E_EXIST, "second supply not E_EXIST");
	CK(kind_at(SLOT_SELF_AS, SV + 4 * PG, NULL, NULL) == RK_MAPPED, "refused supply took the page");
	CK(mt_call(a.ep, MT_READ, OV + 5 * PG, 0, &v) == 0 && v == pat(7), "second fault %lx",
	   (unsigned long)v);
	CK(p.done == 2 && FAULT_STATUS_TAG(p.w[2]) == 7, "second fault tag %lu",
	   (unsigned long)FAULT_STATUS_TAG(p.w[2]));
	/* A write to the read-only mapping of a page the object holds goes
	 * to the object's pager too, which answers FAULT_KILL. */
	mt_call(a.ep, MT_WRITE, OV + 5 * PG, 1, NULL);
	CK(child_end(&a, 0) == EXIT_TRAP(TRAP_WRITE_FAULT), "write to a read-only object mapping");
	CK(p.done == 3 && FAULT_ACCESS(p.w[1]) == FA_WRITE && FAULT_STATUS_TAG(p.w[2]) == 7 &&
	   p.badge == 0x77, "the write fault: %ld faults, access %lu tag %lu", p.done,
	   (unsigned long)p.w[1], (unsigned long)FAULT_STATUS_TAG(p.w[2]));
out:
	child_end(&a, 1);
	for (int i = 0; i < 1000 && __atomic_load_n(&p.want, __ATOMIC_ACQUIRE) != -1 && th >= 0; i++)
		pause_ms(1);
	unmap_at(SLOT_SELF_AS, SV, 8 * PG);
	slot_drop(&th);
	slot_drop(&obj);
	slot_drop(&bep);
	slot_drop(&ep);
	return ended(&before, 0, why);
}

/* Both children's view of object page i at OV + i pages: 1 if each
 * query gives kind k (and prot pr where k is RK_MAPPED). */
static int both(struct child *a, struct child *b, uint64_t i, long k, uint64_t pr)
{
	uint64_t p1 = 0, p2 = 0;
	return kind_at(a->rc, OV + i * PG, &p1, NULL) == k && kind_at(b->rc, OV + i * PG, &p2, NULL) == k &&
	       (k != RK_MAPPED || (p1 == pr && p2 == pr));
}

int mobj_range_ops(char *why)
{
	struct kcounters before;
	struct child a = { -1, -1, -1 }, b = { -1, -1, -1 };
	long obj = slot_alloc();
	uint64_t v = 0;
	settled_counters(&before);
	CK(obj >= 0 && mobj_create(4, obj, SLOT_NONE) == 0, "create");
	CK(child_start(&a, -1, CHILD_FRAMES) == 0 && child_start(&b, -1, CHILD_FRAMES) == 0, "children");
	CK(map_obj(a.rc, obj, 0, OV, 4, RW) == 0 && map_obj(b.rc, obj, 0, OV, 4, RW) == 0, "maps");
	for (uint64_t i = 0; i < 4; i++) {
		CK(mt_call(a.ep, MT_WRITE, OV + i * PG, pat(i), NULL) == 0, "a writes %lu", (unsigned long)i);
		CK(mt_call(b.ep, MT_READ, OV + i * PG, 0, &v) == 0 && v == pat(i), "b reads %lu", (unsigned long)i);
	}
	CK(both(&a, &b, 1, RK_MAPPED, RW), "not mapped RW in both");
	/* write-protect pages 1..2: both mappings read-only there, page 0 untouched */
	CK((v = (uint64_t)mobj_op(obj, MOBJ_WRPROTECT, 1, 2)) == 0, "wrprotect: %ld", (long)v);
	CK(both(&a, &b, 1, RK_MAPPED, PROT_R) && both(&a, &b, 2, RK_MAPPED, PROT_R), "not read-only in both");
	CK(both(&a, &b, 0, RK_MAPPED, RW) && both(&a, &b, 3, RK_MAPPED, RW), "pages 0, 3 changed");
	/* invalidate: the translations go, the pages stay (and stay protected) */
	CK(mobj_op(obj, MOBJ_INVALIDATE, 0, 4) == 0, "invalidate");
	CK(both(&a, &b, 0, RK_OBJECT, 0) && both(&a, &b, 3, RK_OBJECT, 0), "still mapped after invalidate");
	CK(obj_info(obj).hi == 4, "object holds %lu after invalidate", (unsigned long)obj_info(obj).hi);
	CK(mt_call(b.ep, MT_READ, OV + PG, 0, &v) == 0 && v == pat(1), "b rereads %lx", (unsigned long)v);
	CK(kind_at(b.rc, OV + PG, &v, NULL) == RK_MAPPED && v == PROT_R, "refault ignored the protection");
	/* unprotect: writable again at the next fault */
	CK(mobj_op(obj, MOBJ_UNPROTECT, 0, 4) == 0, "unprotect");
	CK(both(&a, &b, 1, RK_OBJECT, 0), "unprotect left a translation");
	CK(mt_call(a.ep, MT_WRITE, OV + PG + 8, 5, NULL) == 0, "a writes page 1 again");
	CK(mt_call(b.ep, MT_READ, OV + PG + 8, 0, &v) == 0 && v == 5, "b reads %lx", (unsigned long)v);
	/* decommit pages 2..3: gone from the object, zero at the next touch */
	CK(mobj_op(obj, MOBJ_DECOMMIT, 2, 2) == 0, "decommit");
	CK(obj_info(obj).hi == 2, "object holds %lu after decommit", (unsigned long)obj_info(obj).hi);
	CK(both(&a, &b, 2, RK_OBJECT, 0) && both(&a, &b, 3, RK_OBJECT, 0), "decommitted page still mapped");
	CK(both(&a, &b, 1, RK_MAPPED, RW), "page 1 lost its mappings");
	CK(mt_call(a.ep, MT_READ, OV + 3 * PG, 0, &v) == 0 && v == 0, "decommitted page reads %lx",
	   (unsigned long)v);
	CK(mt_call(b.ep, MT_READ, OV, 0, &v) == 0 && v == pat(0), "page 0 reads %lx", (unsigned long)v);
out:
	child_end(&a, 1);
	child_end(&b, 1);
	slot_drop(&obj);
	return ended(&before, 1, why);
}

int mobj_bad_input(char *why)
{
	struct kcounters before;
	long obj = slot_alloc(), ro = slot_alloc(), ep = slot_alloc(), tsk = -1, trc = -1;
	settled_counters(&before);
	CK(obj >= 0 && ro >= 0 && ep >= 0 && ep_create(ep) == 0, "slots");
	CK(mobj_create(0, obj, SLOT_NONE) == -E_INVAL, "0 pages");
	CK(mobj_create(MOBJ_MAX_PAGES + 1, obj, SLOT_NONE) == -E_INVAL, "too many pages");
	CK(mobj_create(4, obj, SLOT_SELF_AS) == -E_BADCAP, "a region cap as the pager");
	CK(mobj_create(4, obj, 9999) == -E_BADCAP, "an empty slot as the pager");
	CK(mobj_create(4, SLOT_SELF_AS, SLOT_NONE) == -E_EXIST, "a full slot as destination");
	CK(mobj_create(4, obj, SLOT_NONE) == 0, "create");
	CK(cap_mint(obj, ro, R_MAP | R_READ, 0, 0, 0) == 0, "read-only cap");
	/* map: rights, range, form; nothing mapped after any of them */
	CK(map_obj(SLOT_SELF_AS, ro, 0, OV, 1, RW) == -E_PERM, "RW through a read-only cap");
	CK(map_obj(SLOT_SELF_AS, ep, 0, OV, 1, PROT_R) == -E_BADCAP, "an endpoint as object");
	CK(map_obj(SLOT_SELF_AS, obj, 2, OV, 3, PROT_R) == -E_RANGE, "past the object's end");
	CK(map_obj(SLOT_SELF_AS, obj, 4, OV, 1, PROT_R) == -E_RANGE, "offset at the end");
	CK(map_obj(SLOT_SELF_AS, obj, 0, OV, 1, PROT_W | PROT_X | PROT_R) == -E_INVAL, "W|X");
	CK(map_obj(SLOT_SELF_AS, obj, 0, OV, 1, 0) == -E_INVAL, "no R");
	CK(kind_at(SLOT_SELF_AS, OV, NULL, NULL) == RK_INVALID, "a refused map changed the page");
	/* all or nothing: a good MAP_OBJ then a bad one maps nothing */
	struct region_op two[2] = {
		{ .op = ROP_MAP_OBJ, .prot = PROT_R, .va = OV, .len = PG, .arg = ROP_OBJ_ARG(obj, 0) },
		{ .op = ROP_MAP_OBJ, .prot = RW, .va = OV + PG, .len = PG, .arg = ROP_OBJ_ARG(ro, 0) },
	};
	CK(region_txn(SLOT_SELF_AS, OV, OV + 2 * PG, two, 2) == -E_PERM && two[1].result == -E_PERM &&
	   two[0].result == ROP_NOT_DONE, "pair: %ld %ld", (long)two[0].result, (long)two[1].result);
	CK(kind_at(SLOT_SELF_AS, OV, NULL, NULL) == RK_INVALID, "the refused pair mapped its first");
	CK(obj_info(obj).objects == 0, "a refused map left a record");
	/* an object mapping over a mapped page: E_EXIST */
	CK(mem_reserve(OV, PG) == 0, "reserve");
	*(volatile uint64_t *)OV = 1;
	CK(map_obj(SLOT_SELF_AS, obj, 0, OV, 1, PROT_R) == -E_EXIST, "over a mapped page");
	CK(unmap_at(SLOT_SELF_AS, OV, PG) == 0, "unmap");
	/* at most MOBJ_MAPS_PER_TASK mappings in one address space */
	for (uint64_t i = 0; i < MOBJ_MAPS_PER_TASK; i++)
		CK(map_obj(SLOT_SELF_AS, obj, i % 4, OV + i * PG, 1, PROT_R) == 0, "mapping %lu", (unsigned long)i);
	CK(map_obj(SLOT_SELF_AS, obj, 0, OV + MOBJ_MAPS_PER_TASK * PG, 1, PROT_R) == -E_QUOTA,
	   "one mapping too many");
	CK(kind_at(SLOT_SELF_AS, OV + MOBJ_MAPS_PER_TASK * PG, NULL, NULL) == RK_INVALID, "it mapped");
	CK(unmap_at(SLOT_SELF_AS, OV, MOBJ_MAPS_PER_TASK * PG) == 0 && obj_info(obj).objects == 0,
	   "unmap of the mappings left records");
	/* ops and supply: rights, op, range */
	CK(mobj_op(ro, MOBJ_DECOMMIT, 0, 1) == -E_PERM, "op without R_CONTROL");
	CK(mobj_op(obj, 99, 0, 1) == -E_INVAL && mobj_op(obj, 0, 0, 1) == -E_INVAL, "bad op");
	CK(mobj_op(obj, MOBJ_INVALIDATE, 3, 2) == -E_RANGE && mobj_op(obj, MOBJ_INVALIDATE, 0, 0) == -E_RANGE,
	   "op range");
	CK(mobj_op(ep, MOBJ_INVALIDATE, 0, 1) == -E_BADCAP, "op on an endpoint");
	CK(mem_reserve(SV, PG) == 0, "scratch");
	*(volatile uint64_t *)SV = 1;
	CK(mobj_supply(ro, 0, SLOT_SELF_AS, SV, 1) == -E_PERM, "supply without R_CONTROL");
	CK(mobj_supply(obj, 4, SLOT_SELF_AS, SV, 1) == -E_RANGE, "supply past the end");
	CK(mobj_supply(obj, 0, SLOT_SELF_AS, SV + 8, 1) == -E_INVAL, "misaligned source");
	CK(mobj_supply(obj, 0, SLOT_SELF_AS, SV, 0) == -E_INVAL, "0 pages");
	CK(mobj_supply(obj, 0, SLOT_SELF_AS, SV + PG, 1) == -E_NOENT, "source not mapped");
	CK(kind_at(SLOT_SELF_AS, SV, NULL, NULL) == RK_MAPPED && obj_info(obj).hi == 0,
	   "a refused supply moved the page");
	/* clone refuses a range holding an object's mapping */
	CK(empty_child(&tsk, &trc) == 0, "empty child");
	CK(map_obj(SLOT_SELF_AS, obj, 0, OV, 2, PROT_R) == 0, "map");
	{
		struct clone_stats cs;
		CK(sc6(SYS_REGION_CLONE, SLOT_SELF_AS, trc, OV, OV + 2 * PG, (long)&cs, 0) == -E_PERM,
		   "clone of an object mapping");
	}
	CK(kind_at(trc, OV, NULL, NULL) == RK_INVALID, "the refused clone copied something");
	CK(unmap_at(SLOT_SELF_AS, OV, 2 * PG) == 0, "unmap");
out:
	unmap_at(SLOT_SELF_AS, SV, PG);
	if (tsk >= 0)
		task_kill(tsk), task_wait(tsk);
	slot_drop(&trc);
	slot_drop(&tsk);
	slot_drop(&ro);
	slot_drop(&obj);
	slot_drop(&ep);
	return ended(&before, 0, why);
}

int mobj_teardown(char *why)
{
	struct kcounters before, mid;
	struct child a = { -1, -1, -1 };
	long obj = slot_alloc();
	uint64_t v;
	settled_counters(&before);
	CK(obj >= 0 && mobj_create(16, obj, SLOT_NONE) == 0, "create");
	CK(child_start(&a, -1, CHILD_FRAMES) == 0, "child");
	/* our mapping: cut at both ends, then the rest; the record goes */
	CK(map_obj(SLOT_SELF_AS, obj, 0, OV, 16, RW) == 0, "map");
	for (uint64_t i = 0; i < 16; i++)
		*(volatile uint64_t *)(OV + i * PG) = pat(i);
	CK(unmap_at(SLOT_SELF_AS, OV, 2 * PG) == 0 && unmap_at(SLOT_SELF_AS, OV + 14 * PG, 2 * PG) == 0,
	   "unmap the ends");
	CK(obj_info(obj).objects == 1, "trimmed record gone");
	CK(unmap_at(SLOT_SELF_AS, OV + 7 * PG, PG) == 0 && obj_info(obj).objects == 2,
	   "a cut in the middle: %lu records, not 2", (unsigned long)obj_info(obj).objects);
	CK(*(volatile uint64_t *)(OV + 9 * PG) == pat(9) && *(volatile uint64_t *)(OV + 3 * PG) == pat(3),
	   "the pieces lost their pages");
	CK(mobj_op(obj, MOBJ_INVALIDATE, 0, 16) == 0 && kind_at(SLOT_SELF_AS, OV + 9 * PG, NULL, NULL) == RK_OBJECT &&
	   kind_at(SLOT_SELF_AS, OV + 3 * PG, NULL, NULL) == RK_OBJECT, "invalidate missed a piece");
	/* a new mapping over a mapping ends the old one */
	CK(map_obj(SLOT_SELF_AS, obj, 0, OV + 8 * PG, 2, PROT_R) == 0 && obj_info(obj).objects == 3,
	   "map over the tail piece: %lu records", (unsigned long)obj_info(obj).objects);
	CK(*(volatile uint64_t *)(OV + 9 * PG) == pat(1), "the new mapping shows another page");
	CK(unmap_at(SLOT_SELF_AS, OV + 2 * PG, 12 * PG) == 0, "unmap the rest");
	CK(obj_info(obj).objects == 0 && obj_info(obj).hi == 16, "records %lu pages %lu",
	   (unsigned long)obj_info(obj).objects, (unsigned long)obj_info(obj).hi);
	/* a mark over a whole mapping ends it too */
	CK(map_obj(SLOT_SELF_AS, obj, 3, OV, 2, PROT_R) == 0 && obj_info(obj).objects == 1, "map 3..4");
	{
		struct region_op m = { .op = ROP_MARK_INVALID, .va = OV, .len = 2 * PG };
		CK(region_txn(SLOT_SELF_AS, OV, OV + 2 * PG, &m, 1) == 1, "mark invalid");
	}
	CK(obj_info(obj).objects == 0, "a mark over the mapping left its record");
	/* the child's mapping keeps the object's pages; its death drops the record */
	CK(map_obj(a.rc, obj, 0, OV, 16, RW) == 0, "map into the child");
	CK(mt_call(a.ep, MT_READ, OV + 9 * PG, 0, &v) == 0 && v == pat(9), "child reads %lx",
	   (unsigned long)v);
	dbg(DBG_COUNTERS, (uint64_t)&mid, 0);
	CK(mid.mobjs == before.mobjs + 1 && mid.mobj_maps == before.mobj_maps + 1 &&
	   mid.mobj_pages == before.mobj_pages + 16, "counters %lu %lu %lu", mid.mobjs - before.mobjs,
	   mid.mobj_maps - before.mobj_maps, mid.mobj_pages - before.mobj_pages);
	child_end(&a, 1);
	settled_counters(&mid);
	CK(mid.mobj_maps == before.mobj_maps && obj_info(obj).objects == 0, "the dead child's record stayed");
	/* the last cap: the object and its pages go */
	slot_drop(&obj);
	settled_counters(&mid);
	CK(mid.mobjs == before.mobjs && mid.mobj_pages == before.mobj_pages, "object or pages left");
	/* a mapping keeps its object after the cap goes, until it is unmapped */
	obj = slot_alloc();
	CK(obj >= 0 && mobj_create(2, obj, SLOT_NONE) == 0, "create 2");
	CK(map_obj(SLOT_SELF_AS, obj, 0, OV, 2, RW) == 0, "map 2");
	*(volatile uint64_t *)(OV + PG) = 42;
	slot_drop(&obj);
	CK(*(volatile uint64_t *)(OV + PG) == 42, "the mapping lost its page with the cap");
	CK(*(volatile uint64_t *)OV == 0, "page 0 not zero");
	dbg(DBG_COUNTERS, (uint64_t)&mid, 0);
	CK(mid.mobjs == before.mobjs + 1, "the object went with its cap while mapped");
	CK(unmap_at(SLOT_SELF_AS, OV, 2 * PG) == 0, "unmap 2");
out:
	child_end(&a, 1);
	unmap_at(SLOT_SELF_AS, OV, 16 * PG);
	slot_drop(&obj);
	return ended(&before, 1, why);
}

/* A word of our code (the children run the same image at the same place). */
static const uint64_t pat_code = 0x636f6465;

/* One measurement: an object of n pages mapped into k children, every
 * page touched in each. Prints the kernel memory it took. */
static int cost_one(uint64_t n, int k, char *why)
{
	struct kcounters c0, c1;
	struct child ch[4];
	long obj = slot_alloc();
	long tables = 0;
	for (int i = 0; i < 4; i++)
		ch[i] = (struct child){ -1, -1, -1 };
	settled_counters(&c0);
	CK(obj >= 0 && mobj_create(n, obj, SLOT_NONE) == 0, "create");
	settled_counters(&c1);
	long index = (long)(c0.free_frames - c1.free_frames);
	CK(index == (long)((n + 511) / 512), "index frames %ld for %lu pages", index, (unsigned long)n);
	for (int i = 0; i < k; i++) {
		struct cap_info t0, t1;
		CK(child_start(&ch[i], -1, CHILD_FRAMES) == 0, "child %d", i);
		uint64_t v;
		/* its server's stack and code in use first: only the mapping moves its count */
		CK(mt_call(ch[i].ep, MT_READ, (uint64_t)(uintptr_t)&pat_code, 0, &v) == 0, "warm %d", i);
		CK(cap_info(ch[i].task, &t0) == 0, "info");
		CK(map_obj(ch[i].rc, obj, 0, OV, n, RW) == 0, "map %d", i);
		for (uint64_t p = 0; p < n; p++)
			CK(mt_call(ch[i].ep, MT_READ, OV + p * PG, 0, &v) == 0, "touch %lu", (unsigned long)p);
		CK(cap_info(ch[i].task, &t1) == 0, "info");
		tables += (long)(t1.lo - t0.lo);
	}
	struct kcounters c2;
	dbg(DBG_COUNTERS, (uint64_t)&c2, 0);
	CK(c2.mobj_maps == c0.mobj_maps + (unsigned long)k && c2.mobj_pages == c0.mobj_pages + n,
	   "records %lu pages %lu", c2.mobj_maps - c0.mobj_maps, c2.mobj_pages - c0.mobj_pages);
	long rec = 40L * k;
	printf("mobj_cost: pages %lu tasks %d: index %ld B (%ld.%02ld B/object page); "
	       "tables %ld B, records %ld B (%ld.%02ld B/mapped page, %ld.%02ld without tables)\n",
	       (unsigned long)n, k, index * 4096, index * 4096 / (long)n, index * 409600 / (long)n % 100,
	       tables * 4096, rec, (tables * 4096 + rec) / (long)(n * k),
	       (tables * 4096 + rec) * 100 / (long)(n * k) % 100, rec / (long)(n * k),
	       rec * 100 / (long)(n * k) % 100);
out:
	for (int i = 0; i < 4; i++)
		child_end(&ch[i], 1);
	slot_drop(&obj);
	return why[0] ? 1 : 0;
}

int mobj_cost(char *why)
{
	static const uint64_t pages[] = { 1, 16, 512 };
	static const int tasks[] = { 1, 2, 4 };
	struct kcounters before;
	settled_counters(&before);
	for (int i = 0; i < 3; i++)
		for (int j = 0; j < 3; j++)
			if (cost_one(pages[i], tasks[j], why))
				return 1;
	return pg_counters_back(&before, 1, why);
}
