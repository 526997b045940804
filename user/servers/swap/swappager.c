/* The swap pager: serves the faults of a client's pager-managed window
 * with at most `frames` resident pages, evicting with a clock (second
 * chance on the accessed bit) into a swap store of the pager's own
 * anonymous memory. One pager thread serves every fault in turn, so its
 * state needs no locks. See docs/pagers.md, "The swap pager".
 *
 * Frames are not held as caps for long (each cap slot past the fixed
 * ones costs CSpace room charged to the pager's quota): a resident
 * page's frame is owned by the client's mapping alone. Up to
 * SP_BATCH free frames (fresh from SYS_FRAME_ALLOC, or evicted together)
 * sit in cap slots, each mapped at a scratch page of ours to copy it; a
 * fault fills one there, maps it into the client and drops the cap. */
#include "ulib.h"
#include "testlib.h"
#include "swappager.h"
#include <patina/pager.h>

/* Our own memory (the pager's task): the swap store (one page per window
 * page: the swap slot of a page is its index in the window), the pager's
 * tables, and the scratch pages where frames in flight are mapped. */
#define SP_STORE_VA   0x1000000000UL
#define SP_META_VA    0x1800000000UL
#define SP_SCRATCH_VA 0x1f00000000UL
#define PG 4096UL

/* Per-page state. */
#define PS_RESIDENT 1u    /* mapped in the client, in the clock ring */
#define PS_SWAPPED  2u    /* marked swapped in the client */
#define PS_VALID    4u    /* the swap store holds this page's contents */
#define PS_DIRTY    8u    /* evicted dirty, not copied out yet */

/* Frames are taken from the client in batches: up to SP_EVICT victims in
 * one transaction (each costs EVICT + MARK_SWAPPED: 2 of its 16 ops), so
 * one TLB shootdown in the client serves up to SP_EVICT faults; the free
 * frames, up to SP_BATCH, stay mapped at our scratch pages until the next
 * refill drops them all with one shootdown in our own space. The anchor
 * page after them keeps that page-table page alive in between. */
#define SP_EVICT 8
#define SP_BATCH 24
#define SP_ANCHOR_VA (SP_SCRATCH_VA + SP_BATCH * PG)
#define RING_FREE 0xffffffffu

static struct {
	long rgn;                 /* region cap over the client window (ours) */
	uint64_t base, len;
	unsigned long pages, frames;
	uint32_t *ring;           /* clock ring: window page index of each resident page */
	uint8_t *state;           /* per window page: PS_* */
	uint64_t meta_len;
	unsigned long nalloc;     /* frames allocated so far (ring positions in use) */
	unsigned long hand;
	/* Free frames: caps in fs[], mapped at scratch page k, ring position. */
	long fs[SP_BATCH];
	unsigned nfree, next;     /* free frames are next .. nfree-1 */
	uint32_t fpos[SP_BATCH], fidx[SP_BATCH];
	uint8_t fzero[SP_BATCH];  /* fresh from SYS_FRAME_ALLOC: already zero */
	unsigned scratch;         /* scratch pages mapped: 0 .. scratch-1 */
	struct swap_stats st;
} sp;

static uint8_t *store_page(unsigned long slot) { return (uint8_t *)(SP_STORE_VA + slot * PG); }
static uint8_t *scratch_page(unsigned k) { return (uint8_t *)(SP_SCRATCH_VA + k * PG); }

/* Drop every scratch mapping (one shootdown for all of them). */
static long scratch_drop(void)
{
	if (!sp.scratch)
		return 0;
	struct region_op op = { .op = ROP_UNMAP, .va = SP_SCRATCH_VA, .len = SP_BATCH * PG };
	long r = region_txn(SLOT_SELF_AS, SP_SCRATCH_VA, SP_SCRATCH_VA + SP_BATCH * PG, &op, 1);
	if (r >= 0)
		r = op.result;
	if (!r)
		sp.scratch = 0;
	return r;
}

/* Map free frames 0 .. n-1 at scratch pages 0 .. n-1. */
static long scratch_map(unsigned n)
{
	struct region_op ops[REGION_MAX_OPS];
	for (unsigned k0 = 0; k0 < n; k0 += REGION_MAX_OPS) {
		unsigned m = n - k0 < REGION_MAX_OPS ? n - k0 : REGION_MAX_OPS;
		for (unsigned k = 0; k < m; k++)
			ops[k] = (struct region_op){ .op = ROP_MAP, .prot = PROT_R | PROT_W,
						     .va = (uint64_t)scratch_page(k0 + k),
						     .arg = sp.fs[k0 + k] };
		long r = region_txn(SLOT_SELF_AS, SP_SCRATCH_VA, SP_SCRATCH_VA + SP_BATCH * PG, ops, m);
		if (r < 0)
			return r;
		sp.scratch = k0 + m;
		for (unsigned k = 0; k < m; k++)
			if (ops[k].result)
				return ops[k].result;
	}
	return 0;
}

/* Unmap and forget [va, va + len) of ours. */
static void self_release(uint64_t va, uint64_t len)
{
	struct region_op ops[2] = {
		{ .op = ROP_UNMAP, .va = va, .len = len },
		{ .op = ROP_MARK_INVALID, .va = va, .len = len },
	};
	region_txn(SLOT_SELF_AS, va, va + len, ops, 2);
}

long swap_pager_init(long client_region, uint64_t base, unsigned long pages, unsigned long frames)
{
	memset(&sp, 0, sizeof sp);
	for (unsigned k = 0; k < SP_BATCH; k++)
		sp.fs[k] = -1;
	if (!pages || frames < 2 || frames > pages || pages > (1UL << 24) || (base & (PG - 1)))
		return -E_INVAL;
	sp.rgn = client_region;
	sp.base = base;
	sp.len = pages * PG;
	sp.pages = pages;
	sp.frames = frames;
	sp.meta_len = (frames * sizeof(uint32_t) + pages + PG - 1) & ~(PG - 1);
	long r = mem_reserve(SP_STORE_VA, sp.len);
	if (r)
		return r;
	r = mem_reserve(SP_META_VA, sp.meta_len);
	if (r) {
		self_release(SP_STORE_VA, sp.len);
		return r;
	}
	r = mem_reserve(SP_ANCHOR_VA, PG);
	if (r) {
		self_release(SP_META_VA, sp.meta_len);
		self_release(SP_STORE_VA, sp.len);
		return r;
	}
	*(volatile uint64_t *)SP_ANCHOR_VA = 1;
	sp.ring = (uint32_t *)SP_META_VA;
	sp.state = (uint8_t *)(SP_META_VA + frames * sizeof(uint32_t));
	for (unsigned k = 0; k < SP_BATCH; k++) {
		sp.fs[k] = slot_alloc();
		if (sp.fs[k] < 0) {
			r = sp.fs[k];
			goto fail;
		}
	}
	/* The whole window becomes pager-managed: every first touch is ours. */
	struct region_op op = { .op = ROP_MARK_PAGER, .prot = PROT_R | PROT_W, .va = base,
				.len = sp.len, .arg = 1 };
	r = region_txn(sp.rgn, base, base + sp.len, &op, 1);
	if (r >= 0)
		r = op.result;
	if (r)
		goto fail;
	return 0;
fail:
	for (unsigned k = 0; k < SP_BATCH; k++)
		if (sp.fs[k] >= 0)
			slot_release(sp.fs[k]);
	sp.fs[0] = -1;
	self_release(SP_ANCHOR_VA, PG);
	self_release(SP_META_VA, sp.meta_len);
	self_release(SP_STORE_VA, sp.len);
	return r;
}

/* The clock: from the hand, pages whose accessed bit is set get a second
 * chance (ROP_AGE clears the bit); the first pages found with it clear
 * (up to `want`) are evicted, their frames landing in fs[at ..], and
 * marked swapped with their slot, in the same transaction as the ageing.
 * Returns how many frames it took (their ring positions in fpos[at ..],
 * their pages in fidx[at ..]; those ring entries become RING_FREE), or an
 * error. */
static long clock_evict(unsigned at, unsigned want)
{
	struct region_op q[REGION_MAX_OPS], ops[REGION_MAX_OPS];
	uint32_t qpos[REGION_MAX_OPS];
	for (unsigned long round = 0; round < 4 * sp.frames + 64; round++) {
		/* The next resident pages from the hand. */
		unsigned long n = 0, scanned = 0;
		while (n < REGION_MAX_OPS && scanned < sp.frames) {
			uint32_t pos = (uint32_t)((sp.hand + scanned++) % sp.frames);
			if (sp.ring[pos] == RING_FREE)
				continue;
			qpos[n] = pos;
			q[n++] = (struct region_op){ .op = ROP_QUERY,
						     .va = sp.base + (uint64_t)sp.ring[pos] * PG };
		}
		if (!n)
			return -E_AGAIN;
		long r = region_txn(sp.rgn, sp.base, sp.base + sp.len, q, (long)n);
		if (r < 0)
			return r;
		/* Greedily: age the accessed ones, evict the others, within 16 ops. */
		unsigned nops = 0, nv = 0;
		unsigned long i;
		for (i = 0; i < n && nv < want; i++) {
			if (q[i].result || q[i].out_kind != RK_MAPPED)
				return q[i].result ? q[i].result : -E_INVAL;   /* not as we left it */
			uint64_t va = q[i].va;
			if (q[i].out_prot & QF_ACCESSED) {
				if (nops + 1 > REGION_MAX_OPS)
					break;
				ops[nops++] = (struct region_op){ .op = ROP_AGE, .va = va };
				continue;
			}
			if (nops + 2 > REGION_MAX_OPS)
				break;
			ops[nops++] = (struct region_op){ .op = ROP_EVICT, .va = va, .arg = sp.fs[at + nv] };
			ops[nops++] = (struct region_op){ .op = ROP_MARK_SWAPPED, .va = va, .len = PG,
							  .arg = sp.ring[qpos[i]] };
			sp.fpos[at + nv++] = qpos[i];
		}
		r = region_txn(sp.rgn, sp.base, sp.base + sp.len, ops, nops);
		if (r < 0)
			return r;
		sp.hand = i < n ? qpos[i] : (qpos[n - 1] + 1) % sp.frames;
		unsigned v = 0;
		for (unsigned j = 0; j < nops; j++) {
			if (ops[j].op == ROP_AGE) {
				sp.st.aged++;
				continue;
			}
			if (ops[j].result)
				return ops[j].result;
			if (ops[j].op != ROP_EVICT)
				continue;
			uint32_t pos = sp.fpos[at + v], idx = sp.ring[pos];
			sp.fidx[at + v] = idx;
			sp.ring[pos] = RING_FREE;
			sp.state[idx] = (uint8_t)((sp.state[idx] & ~PS_RESIDENT) | PS_SWAPPED |
						  ((ops[j].out_prot & QF_DIRTY) ? PS_DIRTY : 0));
			sp.fzero[at + v] = 0;
			v++;
		}
		if (nv)
			return nv;
	}
	return -E_AGAIN;
}

/* Fill the free list: fresh frames while fewer than `frames` were ever
 * allocated, else victims of the clock, whose contents go to their swap
 * slots (when dirty, or not there yet). */
static long refill(void)
{
	long r = scratch_drop();    /* a frame mapped there too cannot be evicted */
	if (r)
		return r;
	unsigned n;
	if (sp.nalloc < sp.frames) {
		n = (unsigned)(sp.frames - sp.nalloc < SP_BATCH ? sp.frames - sp.nalloc : SP_BATCH);
		for (unsigned k = 0; k < n; k++) {
			r = frame_alloc(sp.fs[k]);
			if (r) {
				while (k--)
					cap_delete(sp.fs[k]);
				return r;
			}
			sp.fpos[k] = (uint32_t)sp.nalloc++;
			sp.fzero[k] = 1;
		}
	} else {
		/* A few eviction transactions: each is one shootdown in the client. */
		unsigned most = (unsigned)(sp.frames / 2 < SP_BATCH ? sp.frames / 2 : SP_BATCH);
		if (!most)
			most = 1;
		n = 0;
		while (n < most) {
			r = clock_evict(n, most - n < SP_EVICT ? most - n : SP_EVICT);
			if (r < 0 && !n)
				return r;
			if (r <= 0)
				break;
			n += (unsigned)r;
		}
	}
	sp.next = 0;
	sp.nfree = n;
	r = scratch_map(n);
	if (r)
		return r;
	for (unsigned k = 0; k < n; k++) {
		if (sp.fzero[k])
			continue;
		uint32_t idx = sp.fidx[k];
		sp.st.out++;
		if ((sp.state[idx] & PS_DIRTY) || !(sp.state[idx] & PS_VALID)) {
			memcpy(store_page(idx), scratch_page(k), PG);
			sp.st.written++;
		}
		sp.state[idx] = (uint8_t)((sp.state[idx] & ~PS_DIRTY) | PS_VALID);
	}
	return 0;
}

static long fault(const uint64_t w[4])
{
	uint64_t addr = w[0];
	unsigned acc = FAULT_ACCESS(w[1]);
	sp.st.faults++;
	if (addr < sp.base || addr - sp.base >= sp.len || (acc & FA_EXEC))
		return -E_RANGE;
	uint64_t va = addr & ~(PG - 1);
	unsigned long idx = (va - sp.base) / PG;
	unsigned kind = FAULT_STATUS_KIND(w[2]);
	uint64_t slot = FAULT_STATUS_TAG(w[2]);

	/* Only we map and evict window pages, so our table says what the page
	 * is now. The status in the message may be older (another thread's
	 * fault on this page was served since it was sent): when it differs,
	 * or the page is mapped already, ask the kernel. */
	unsigned want = (sp.state[idx] & PS_RESIDENT) ? RK_MAPPED :
			(sp.state[idx] & PS_SWAPPED) ? RK_SWAPPED : RK_PAGER;
	if (want == RK_MAPPED || kind != want || (want == RK_SWAPPED && slot != idx)) {
		struct region_op q = { .op = ROP_QUERY, .va = va };
		long r = region_txn(sp.rgn, va, va + PG, &q, 1);
		if (r < 0 || q.result)
			return r < 0 ? r : q.result;
		if (q.out_kind != want || (want == RK_SWAPPED && q.out_tag != idx))
			return -E_INVAL;      /* not as we left it */
		if (want == RK_MAPPED) {
			if ((acc & FA_WRITE) && !(q.out_prot & PROT_W))
				return -E_PERM;
			sp.st.spurious++;
			return 0;
		}
	}
	if (want == RK_SWAPPED && !(sp.state[idx] & PS_VALID))
		return -E_INVAL;

	if (sp.next == sp.nfree) {
		long r = refill();
		if (r)
			return r;
	}
	unsigned k = sp.next++;
	uint8_t *scr = scratch_page(k);
	if (sp.state[idx] & PS_SWAPPED) {
		memcpy(scr, store_page(idx), PG);
		sp.st.in++;
	} else {
		if (!sp.fzero[k])
			memset(scr, 0, PG);
		sp.st.zero++;
	}
	/* Still mapped at our scratch page: the frame cap's R_SHARE allows it. */
	struct region_op m = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = va, .arg = sp.fs[k] };
	long r = region_txn(sp.rgn, va, va + PG, &m, 1);
	if (r >= 0)
		r = m.result;
	cap_delete(sp.fs[k]);     /* the client's mapping holds the frame now */
	if (r)
		return r;
	sp.ring[sp.fpos[k]] = (uint32_t)idx;
	sp.state[idx] = (uint8_t)((sp.state[idx] & ~PS_SWAPPED) | PS_RESIDENT);
	return 0;
}

long swap_pager_fault(const uint64_t w[4])
{
	uint64_t t0 = rdtime();
	long r = fault(w);
	sp.st.busy += rdtime() - t0;
	if (r) {
		sp.st.killed++;
		if (!sp.st.first_err) {
			sp.st.first_err = r;
			sp.st.err_addr = w[0];
			sp.st.err_w1 = w[1];
			sp.st.err_w2 = w[2];
		}
	}
	return r;
}

long swap_pager_serve(long ep, uint64_t fault_badge, swap_msg_fn other, void *ctx)
{
	uint64_t out[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, ep, out, SLOT_NONE);
	for (;;) {
		if (r.a0)
			return r.a0;
		uint64_t in[4] = { (uint64_t)r.a1, (uint64_t)r.a2, (uint64_t)r.a3, (uint64_t)r.a4 };
		memset(out, 0, sizeof out);
		if ((uint64_t)r.a5 == fault_badge) {
			if (swap_pager_fault(in)) {
				out[0] = FAULT_KILL;
				ipc(SYS_REPLY, 0, out, SLOT_NONE);
				return SWAP_CLIENT_KILLED;
			}
			out[0] = FAULT_RESUME;
		} else if (other(r.a5, in, out, ctx)) {
			return SWAP_STOP;    /* the caller answers this call */
		}
		r = ipc(SYS_REPLY_RECV, ep, out, SLOT_NONE);
	}
}

void swap_pager_fini(struct swap_stats *st)
{
	if (sp.fs[0] >= 0) {
		/* Every resident frame goes back with the client's mappings. */
		struct region_op ops[2] = {
			{ .op = ROP_UNMAP, .va = sp.base, .len = sp.len },
			{ .op = ROP_MARK_INVALID, .va = sp.base, .len = sp.len },
		};
		scratch_drop();
		region_txn(sp.rgn, sp.base, sp.base + sp.len, ops, 2);
		for (unsigned k = 0; k < SP_BATCH; k++) {
			cap_delete(sp.fs[k]);     /* free frames not handed out */
			slot_release(sp.fs[k]);
			sp.fs[k] = -1;
		}
		self_release(SP_SCRATCH_VA, SP_BATCH * PG + PG);
		self_release(SP_META_VA, sp.meta_len);
		self_release(SP_STORE_VA, sp.len);
	}
	sp.st.resident = sp.nalloc;
	if (st)
		*st = sp.st;
}
