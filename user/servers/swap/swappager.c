/* The swap pager (swappager.h) on libpager: libpager attaches the client,
 * receives and types its faults and learns of its death; this file keeps
 * `frames` of the client's pages resident, evicting with a clock (second
 * chance on the accessed bit) into a swap store: its own anonymous memory,
 * or a disk (swapdisk.h). A page the store refuses (disk full, a write
 * error) goes back into the client as it was, and the pager takes a fresh
 * frame instead, past `frames` if it must: the client keeps running. One
 * thread serves a swap pager, so its state needs no locks. See
 * docs/pagers.md, "The swap pager".
 *
 * Frames are not held as caps for long (each cap slot past the fixed
 * ones costs CSpace room charged to the pager's quota): a resident page's
 * frame is owned by the client's mapping alone. Up to SP_BATCH free
 * frames (fresh from SYS_FRAME_ALLOC, or evicted together) sit in cap
 * slots, each mapped at a scratch page of ours to copy it; a fault fills
 * one there, maps it into the client and drops the cap. */
#include "ulib.h"
#include "uva.h"
#include "swappager.h"

#define PG 4096UL

/* Per-page state. The kernel's status of the page says the same (mapped,
 * swapped with slot i, or pager-managed): only we change it. */
#define PS_RESIDENT 1u    /* mapped in the client, in the clock ring */
#define PS_SWAPPED  2u    /* marked swapped in the client, slot = its index */
#define PS_VALID    4u    /* the swap store holds this page's contents */
#define PS_DIRTY    8u    /* evicted dirty, not copied out yet */

#define RING_FREE 0xffffffffu
#define SCRATCH_LEN ((SP_BATCH + 1) * PG)   /* the scratch pages and the anchor */

static uint8_t *store_page(struct swappager *sp, unsigned long slot) { return sp->store + slot * PG; }
static uint8_t *scratch_page(struct swappager *sp, unsigned k) { return sp->scratch + k * PG; }

/* One transaction on [va, va + len) of our own space: 0 or the first error. */
static long self_txn(uint64_t va, uint64_t len, struct region_op *ops, unsigned n)
{
	long r = region_txn(SLOT_SELF_AS, va, va + len, ops, n);
	if (r < 0)
		return r;
	for (unsigned i = 0; i < n; i++)
		if (ops[i].result)
			return ops[i].result;
	return 0;
}

/* Drop every scratch mapping at once: one shootdown in our space, and a
 * frame mapped there could not be evicted again. The anchor page after
 * them stays, so their page-table page is not freed and made each time. */
static long scratch_drop(struct swappager *sp)
{
	if (!sp->mapped)
		return 0;
	struct region_op op = { .op = ROP_UNMAP, .va = (uint64_t)sp->scratch, .len = SP_BATCH * PG };
	long r = self_txn((uint64_t)sp->scratch, SP_BATCH * PG, &op, 1);
	if (!r)
		sp->mapped = 0;
	return r;
}

/* Map free frames 0 .. n-1 at scratch pages 0 .. n-1. 0 or an error. */
static long scratch_map(struct swappager *sp, unsigned n)
{
	struct region_op ops[REGION_MAX_OPS];
	for (unsigned k0 = 0; k0 < n; k0 += REGION_MAX_OPS) {
		unsigned m = n - k0 < REGION_MAX_OPS ? n - k0 : REGION_MAX_OPS;
		for (unsigned k = 0; k < m; k++)
			ops[k] = (struct region_op){ .op = ROP_MAP, .prot = PROT_R | PROT_W,
						     .va = (uint64_t)scratch_page(sp, k0 + k),
						     .arg = sp->fs[k0 + k] };
		long r = self_txn((uint64_t)sp->scratch, SP_BATCH * PG, ops, m);
		sp->mapped = k0 + m;      /* scratch_drop unmaps the lot either way */
		if (r)
			return r;
	}
	return 0;
}

/* The free frames' caps go (their slots stay ours). */
static void free_frames_drop(struct swappager *sp)
{
	scratch_drop(sp);
	for (unsigned k = 0; k < SP_BATCH; k++)
		if (sp->fs[k] >= 0)
			cap_delete(sp->fs[k]);    /* empty for frames handed out: no-op */
	sp->next = sp->nfree = 0;
}

/* The clock over the nalloc ring positions in use: from the hand, pages whose accessed bit is set get a second
 * chance (ROP_AGE clears the bit); the first pages found with it clear
 * (up to `want`) are evicted, their frames landing in fs[at ..], and
 * marked swapped with their index as slot, in the same transaction as
 * the ageing. Returns how many frames it took (their ring positions in
 * fpos[at ..], their pages in fidx[at ..]; those ring entries become
 * RING_FREE), -E_AGAIN when every page stayed in use, or an error. */
static long clock_evict(struct swappager *sp, unsigned at, unsigned want)
{
	struct region_op q[REGION_MAX_OPS], ops[REGION_MAX_OPS];
	uint32_t qpos[REGION_MAX_OPS];
	for (unsigned long round = 0; round < 4 * sp->nalloc + 64; round++) {
		/* The next resident pages from the hand. */
		unsigned n = 0;
		for (unsigned long scanned = 0; n < REGION_MAX_OPS && scanned < sp->nalloc; scanned++) {
			uint32_t pos = (uint32_t)((sp->hand + scanned) % sp->nalloc);
			if (sp->ring[pos] == RING_FREE)
				continue;
			qpos[n] = pos;
			q[n++] = (struct region_op){ .op = ROP_QUERY, .va = (uint64_t)sp->ring[pos] * PG };
		}
		if (!n)
			return -E_AGAIN;
		long r = pager_txn(sp->client, q, n);
		if (r)
			return r;
		/* Greedily: age the accessed ones, evict the others, within 16 ops. */
		unsigned nops = 0, nv = 0, i;
		for (i = 0; i < n && nv < want; i++) {
			if (q[i].out_kind != RK_MAPPED)
				return -E_INVAL;          /* not as we left it */
			if (q[i].out_prot & QF_ACCESSED) {
				if (nops + 1 > REGION_MAX_OPS)
					break;
				ops[nops++] = (struct region_op){ .op = ROP_AGE, .va = q[i].va };
				continue;
			}
			if (nops + 2 > REGION_MAX_OPS)
				break;
			ops[nops++] = (struct region_op){ .op = ROP_EVICT, .va = q[i].va, .arg = sp->fs[at + nv] };
			ops[nops++] = (struct region_op){ .op = ROP_MARK_SWAPPED, .va = q[i].va, .len = PG,
							  .arg = sp->ring[qpos[i]] };
			sp->fpos[at + nv++] = qpos[i];
		}
		r = pager_txn(sp->client, ops, nops);
		if (r)
			return r;
		sp->hand = i < n ? qpos[i] : (qpos[n - 1] + 1) % sp->nalloc;
		unsigned v = 0;
		for (unsigned j = 0; j < nops; j++) {
			if (ops[j].op == ROP_AGE)
				sp->st.aged++;
			if (ops[j].op != ROP_EVICT)
				continue;
			uint32_t pos = sp->fpos[at + v], idx = sp->ring[pos];
			sp->fidx[at + v] = idx;
			sp->ring[pos] = RING_FREE;
			sp->state[idx] = (uint8_t)((sp->state[idx] & ~PS_RESIDENT) | PS_SWAPPED |
						   ((ops[j].out_prot & QF_DIRTY) ? PS_DIRTY : 0));
			sp->fzero[at + v] = 0;
			v++;
		}
		if (nv)
			return nv;
	}
	return -E_AGAIN;
}

/* Fresh frames into free-list entries 0 .. n-1, each at a new ring
 * position. 0 or an error (none taken). */
static long fresh_frames(struct swappager *sp, unsigned n)
{
	for (unsigned k = 0; k < n; k++) {
		long r = frame_alloc(sp->fs[k]);
		if (r) {
			while (k--)
				cap_delete(sp->fs[k]);
			return r;
		}
		sp->fpos[k] = (uint32_t)(sp->nalloc + k);
		sp->fzero[k] = 1;
	}
	sp->nalloc += n;
	return 0;
}

/* Copy victim page idx (at scratch page k) to the store: 0 or the store's
 * refusal. */
static long store_out(struct swappager *sp, uint32_t idx, unsigned k)
{
	if (sp->disk)
		return swapdisk_write(sp->disk, idx, scratch_page(sp, k));
	memcpy(store_page(sp, idx), scratch_page(sp, k), PG);
	return 0;
}

/* The store refused victim k: its frame goes back into the client where
 * it was (over the swapped status the eviction left), at its old ring
 * position, resident and in the store nowhere. 0 or an error. */
static long victim_restore(struct swappager *sp, unsigned k)
{
	uint32_t idx = sp->fidx[k];
	long r = pager_map(sp->client, (uint64_t)idx * PG, sp->fs[k], PROT_R | PROT_W);
	if (r)
		return r;
	cap_delete(sp->fs[k]);    /* the client's mapping holds the frame again */
	sp->ring[sp->fpos[k]] = idx;
	sp->state[idx] = PS_RESIDENT;
	sp->st.kept++;
	return 0;
}

/* Free-list entry k moves to position `to` (k's data there; the two
 * slot numbers in fs[] trade places, so every slot stays listed). The
 * entry at `to` had its frame restored to the client: only its slot is
 * kept. */
static void free_entry_move(struct swappager *sp, unsigned to, unsigned k)
{
	long fs = sp->fs[to];
	sp->fs[to] = sp->fs[k];
	sp->fs[k] = fs;
	sp->fpos[to] = sp->fpos[k];
	sp->fidx[to] = sp->fidx[k];
	sp->fzero[to] = sp->fzero[k];
}

/* Fill the free list: fresh frames while fewer than `frames` were ever
 * allocated, else victims of the clock, whose contents go to their swap
 * slots (when dirty, or not there yet). Victims the store refuses go back
 * to the client; when none is left, fresh frames past `frames` (at most
 * one per window page in all). 0 or an error. */
static long refill(struct swappager *sp)
{
	long r = scratch_drop(sp);
	if (r)
		return r;
	unsigned n;
	if (sp->nalloc < sp->frames) {
		n = (unsigned)(sp->frames - sp->nalloc < SP_BATCH ? sp->frames - sp->nalloc : SP_BATCH);
		if ((r = fresh_frames(sp, n)))
			return r;
	} else {
		/* A few eviction transactions: each is one shootdown in the client. */
		unsigned most = (unsigned)(sp->frames / 2 < SP_BATCH ? sp->frames / 2 : SP_BATCH);
		n = 0;
		while (n < most) {
			r = clock_evict(sp, n, most - n < SP_EVICT ? most - n : SP_EVICT);
			if (r < 0 && !n)
				return r;
			if (r <= 0)
				break;
			n += (unsigned)r;
		}
	}
	sp->next = 0;
	sp->nfree = n;
	r = scratch_map(sp, n);
	if (r)
		return r;
	/* Victim k stays at scratch page k for the whole pass, so each is
	 * copied out through its own page; the entries that stay free are
	 * packed down to 0 .. kept-1 as they are passed, and the scratch
	 * pages are remapped to match after the pass. */
	unsigned kept = 0;
	for (unsigned k = 0; k < n; k++) {
		uint32_t idx = sp->fidx[k];
		if (sp->fzero[k] || (!(sp->state[idx] & PS_DIRTY) && (sp->state[idx] & PS_VALID))) {
			if (!sp->fzero[k])
				sp->st.out++;
			sp->state[idx] &= (uint8_t)~PS_DIRTY;
		} else if (!store_out(sp, idx, k)) {
			sp->st.out++;
			sp->st.written++;
			sp->state[idx] = (uint8_t)((sp->state[idx] & ~PS_DIRTY) | PS_VALID);
		} else {
			if ((r = victim_restore(sp, k)))
				return r;
			continue;
		}
		if (kept != k)
			free_entry_move(sp, kept, k);
		kept++;
	}
	unsigned restored = n - kept;
	n = kept;
	sp->nfree = n;
	/* Scratch page k must show free frame k again (and the restored
	 * frames no page of ours). */
	if (restored && ((r = scratch_drop(sp)) || (r = scratch_map(sp, n))))
		return r;
	if (n)
		return 0;
	/* Every victim stayed: grow past `frames` rather than fail the fault,
	 * by a batch, so that a failing disk is not asked again at once. */
	if (sp->nalloc >= sp->pages)
		return -E_NOMEM;
	n = (unsigned)(sp->pages - sp->nalloc < SP_BATCH ? sp->pages - sp->nalloc : SP_BATCH);
	if ((r = scratch_drop(sp)) || (r = fresh_frames(sp, n)))
		return r;
	sp->st.over += n;
	sp->nfree = n;
	return scratch_map(sp, n);
}

/* Serve f: a zeroed page on first touch, its swap slot's copy after an
 * eviction. 0, or the error the client is killed for (-E_EXIST: already
 * mapped, which libpager checks and resumes). */
static long fault_in(struct swappager *sp, struct pager_fault *f)
{
	unsigned long idx = f->offset / PG;
	uint8_t s = sp->state[idx];
	if (f->access & FA_EXEC)
		return -E_PERM;
	if (s & PS_RESIDENT)
		return -E_EXIST;      /* another thread's fault on it was served first */
	/* The kind and slot in f are as the fault found them; another fault
	 * on this page may have been served since, and the page evicted again.
	 * When they differ from our table, the kernel's status now must not. */
	unsigned want = (s & PS_SWAPPED) ? RK_SWAPPED : RK_PAGER;
	if (f->kind != want || (want == RK_SWAPPED && f->tag != idx)) {
		struct region_op q;
		long r = pager_query(f->client, f->offset, &q);
		if (r)
			return r;
		if (q.out_kind != want || (want == RK_SWAPPED && q.out_tag != idx))
			return -E_INVAL;  /* not as we left it */
	}
	if (want == RK_SWAPPED && !(s & PS_VALID))
		return -E_INVAL;

	if (sp->next == sp->nfree) {
		long r = refill(sp);
		if (r)
			return r;
	}
	unsigned k = sp->next++;
	uint8_t *scr = scratch_page(sp, k);
	if (want == RK_SWAPPED) {
		if (sp->disk) {
			long r = swapdisk_read(sp->disk, idx, scr);
			if (r) {
				sp->next--;       /* the frame stays free */
				return r;
			}
		} else {
			memcpy(scr, store_page(sp, idx), PG);
		}
		sp->st.in++;
	} else {
		if (!sp->fzero[k])
			memset(scr, 0, PG);
		sp->st.zero++;
	}
	/* Still mapped at our scratch page: the frame cap's R_SHARE allows it. */
	long r = pager_map(f->client, f->offset, sp->fs[k], PROT_R | PROT_W);
	cap_delete(sp->fs[k]);    /* the client's mapping holds the frame now */
	if (r)
		return r;
	sp->ring[sp->fpos[k]] = (uint32_t)idx;
	sp->state[idx] = (uint8_t)((s & ~PS_SWAPPED) | PS_RESIDENT);
	return 0;
}

/* libpager's fault callback: fault_in, timed, its first refusal kept. */
static int swap_fault(struct pager *pg, struct pager_fault *f)
{
	struct swappager *sp = pg->data;
	uint64_t t0 = rdtime();
	long r = fault_in(sp, f);
	sp->st.busy += rdtime() - t0;
	if (r && r != -E_EXIST && !sp->st.first_err) {
		sp->st.first_err = r;
		sp->st.err_offset = f->offset;
		sp->st.err_access = f->access;
		sp->st.err_kind = f->kind;
		sp->st.err_tag = f->tag;
	}
	return (int)r;
}

/* Empty [va, va + len) of ours and reserve it again: its frames freed,
 * zeros on the next touch. */
static long self_renew(uint64_t va, uint64_t len)
{
	struct region_op ops[2] = {
		{ .op = ROP_UNMAP, .va = va, .len = len },
		{ .op = ROP_MARK, .prot = PROT_R | PROT_W, .va = va, .len = len },
	};
	return self_txn(va, len, ops, 2);
}

/* The client died, its resident frames with it: start afresh for the next. */
static void swap_gone(struct pager *pg, struct pager_client *c, long status)
{
	struct swappager *sp = pg->data;
	free_frames_drop(sp);
	if (sp->disk)
		swapdisk_reset(sp->disk);
	else
		self_renew((uint64_t)sp->store, sp->pages * PG);
	self_renew((uint64_t)sp->ring, sp->meta_len);
	sp->nalloc = sp->hand = 0;
	sp->client = NULL;
	if (sp->owner_gone)
		sp->owner_gone(pg, c, status);
}

/* Free what swappager_init set up besides the pager: each part only if it
 * was made. */
static void release(struct swappager *sp)
{
	free_frames_drop(sp);
	for (unsigned k = 0; k < SP_BATCH; k++)
		if (sp->fs[k] >= 0) {
			slot_release(sp->fs[k]);
			sp->fs[k] = -1;
		}
	if (sp->scratch)
		mem_unmap((uint64_t)sp->scratch, SCRATCH_LEN);
	if (sp->ring)
		mem_unmap((uint64_t)sp->ring, sp->meta_len);
	if (sp->store)
		mem_unmap((uint64_t)sp->store, sp->pages * PG);
	sp->scratch = sp->store = NULL;
	sp->ring = NULL;
	sp->state = NULL;
}

long swappager_init(struct swappager *sp, unsigned long pages, unsigned long frames,
		    const struct pager_ops *more, void *owner, struct swapdisk *disk)
{
	memset(sp, 0, sizeof *sp);
	for (unsigned k = 0; k < SP_BATCH; k++)
		sp->fs[k] = -1;
	if (!pages || frames < 2 || frames > pages || pages > (1UL << 24))
		return -E_INVAL;
	sp->pages = pages;
	sp->frames = frames;
	sp->disk = disk;
	/* The ring has room for every page: the pool may grow past `frames`. */
	sp->meta_len = (pages * sizeof(uint32_t) + pages + PG - 1) & ~(PG - 1);
	sp->owner = owner;
	sp->owner_gone = more ? more->client_gone : NULL;
	sp->ops = (struct pager_ops){ .fault = swap_fault, .client_gone = swap_gone,
				      .message = more ? more->message : NULL };
	uint64_t store = 0, meta = 0, scratch = 0;
	long r = disk ? 0 : mem_map(pages * PG, &store);
	if (!r) {
		sp->store = (uint8_t *)store;
		r = mem_map(sp->meta_len, &meta);
	}
	if (!r) {
		sp->ring = (uint32_t *)meta;
		sp->state = (uint8_t *)(meta + pages * sizeof(uint32_t));
		/* Only the anchor is reserved: the scratch pages get frames mapped. */
		scratch = uva_alloc(self_hart(), SCRATCH_LEN);
		r = scratch ? mem_reserve(scratch + SP_BATCH * PG, PG) : -E_NOMEM;
		if (scratch && r)
			uva_free(scratch, SCRATCH_LEN);
	}
	if (!r) {
		sp->scratch = (uint8_t *)scratch;
		*(volatile uint64_t *)(scratch + SP_BATCH * PG) = 1;
	}
	for (unsigned k = 0; !r && k < SP_BATCH; k++)
		if ((sp->fs[k] = slot_alloc()) < 0)
			r = sp->fs[k];
	if (!r)
		r = pager_init(&sp->pg, &sp->ops, sp);
	if (r)
		release(sp);
	return r;
}

struct pager_client *swappager_attach(struct swappager *sp, long task, uint64_t base, long *err)
{
	if (sp->client) {
		*err = -E_EXIST;
		return NULL;
	}
	sp->client = pager_attach(&sp->pg, task, base, sp->pages * PG, PROT_R | PROT_W, NULL, err);
	return sp->client;
}

void swappager_stats(const struct swappager *sp, struct swap_stats *st)
{
	*st = sp->st;
	st->faults = sp->pg.faults;
	st->spurious = sp->pg.racing;
	st->killed = sp->pg.killed;
	st->resident = sp->nalloc;
}

void swappager_fini(struct swappager *sp)
{
	pager_fini(&sp->pg);      /* the window unmapped: the resident frames go */
	sp->client = NULL;
	release(sp);
}
