/* libpager (pager.h): attach, the serve loop, deferred replies, client
 * death, and the range helpers. */
#include "ulib.h"
#include "pager.h"

#define PG 4096UL
/* Where pager_supply maps a fresh frame in our own space to fill it. */
#define PAGER_SCRATCH_VA 0x3800000000UL
#define BADGE_FAULT (1ULL << 62)
#define BADGE_DEATH (1ULL << 61)
#define BADGE_ID(b) ((unsigned)((b) & 0xffffffffu))

/* One region op on our range of c; its own result folded in. */
static long txn1(long region, uint64_t lo, uint64_t hi, struct region_op *op)
{
	long r = region_txn(region, lo, hi, op, 1);
	return r < 0 ? r : op->result;
}

/* The ops' va are made absolute for the call and offsets again after, so
 * the caller's array reads as it wrote it. */
long pager_txn(struct pager_client *c, struct region_op *ops, unsigned n)
{
	if (!n || n > REGION_MAX_OPS)
		return -E_INVAL;
	uint64_t lo = c->len, hi = 0;    /* the span the ops cover (a page for single-page ops) */
	for (unsigned i = 0; i < n; i++) {
		uint64_t off = ops[i].va, len = ops[i].len ? ops[i].len : PG;
		if ((off | ops[i].len) & (PG - 1) || off >= c->len || len > c->len - off)
			return -E_RANGE;
		lo = off < lo ? off : lo;
		hi = off + len > hi ? off + len : hi;
	}
	/* Lock only what the ops touch: faults elsewhere in the range go on. */
	for (unsigned i = 0; i < n; i++)
		ops[i].va += c->base;
	long r = region_txn(c->region, c->base + lo, c->base + hi, ops, n);
	for (unsigned i = 0; i < n; i++)
		ops[i].va -= c->base;
	if (r < 0)
		return r;
	for (unsigned i = 0; i < n; i++)
		if (ops[i].result)
			return ops[i].result;
	return 0;
}

static long range_op(struct pager_client *c, uint32_t opc, uint64_t off, uint64_t len,
		     unsigned prot, int64_t arg, struct region_op *out)
{
	struct region_op op = { .op = opc, .prot = prot, .va = off, .len = len, .arg = arg };
	long r = pager_txn(c, &op, 1);
	if (out)
		*out = op;
	return r;
}

long pager_map(struct pager_client *c, uint64_t off, long frame, unsigned prot)
{
	return range_op(c, ROP_MAP, off, PG, prot, frame, NULL);
}
long pager_zero(struct pager_client *c, uint64_t off, uint64_t len, unsigned prot)
{
	return range_op(c, ROP_MARK, off, len, prot, 0, NULL);
}
long pager_unmap(struct pager_client *c, uint64_t off, uint64_t len)
{
	return range_op(c, ROP_UNMAP, off, len, 0, 0, NULL);
}
long pager_protect(struct pager_client *c, uint64_t off, uint64_t len, unsigned prot)
{
	return range_op(c, ROP_PROTECT, off, len, prot, 0, NULL);
}
long pager_query(struct pager_client *c, uint64_t off, struct region_op *out)
{
	return range_op(c, ROP_QUERY, off, PG, 0, 0, out);
}

/* Filled through our scratch page (mapped, copied, unmapped). */
long pager_frame_new(const void *src, unsigned rights, long *slot)
{
	long f = slot_alloc(), g = -1;
	if (f < 0)
		return f;
	long r = frame_alloc(f);
	if (!r && src) {
		struct region_op m = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = PAGER_SCRATCH_VA,
				       .arg = f };
		r = txn1(SLOT_SELF_AS, PAGER_SCRATCH_VA, PAGER_SCRATCH_VA + PG, &m);
		if (!r) {
			memcpy((void *)PAGER_SCRATCH_VA, src, PG);
			struct region_op u = { .op = ROP_UNMAP, .va = PAGER_SCRATCH_VA, .len = PG };
			r = txn1(SLOT_SELF_AS, PAGER_SCRATCH_VA, PAGER_SCRATCH_VA + PG, &u);
		}
	}
	if (!r && (rights & R_ALL) != R_ALL) {
		if ((g = slot_alloc()) < 0)
			r = g;
		else if ((r = cap_mint(f, g, rights, 0, 0, 0)))
			slot_release(g);
	}
	if (r || g >= 0) {
		cap_delete(f);
		slot_release(f);
	}
	if (!r)
		*slot = g >= 0 ? g : f;
	return r;
}

/* The client's mapping is the frame's only holder after. */
long pager_supply(struct pager_client *c, uint64_t off, const void *src, unsigned prot)
{
	long f;
	long r = pager_frame_new(src, R_ALL, &f);
	if (r)
		return r;
	r = pager_map(c, off, f, prot);
	cap_delete(f);
	slot_release(f);
	return r;
}

long pager_supply_range(struct pager_client *c, uint64_t off, uint64_t src_va, unsigned npages,
			unsigned prot)
{
	uint64_t len = (uint64_t)npages * PG;
	if ((off & (PG - 1)) || off >= c->len || !npages || len > c->len - off)
		return -E_RANGE;
	return region_supply(c->region, c->base + off, SLOT_SELF_AS, src_va, npages, prot);
}

long pager_init(struct pager *pg, const struct pager_ops *ops, void *data)
{
	memset(pg, 0, sizeof *pg);
	if (!ops || !ops->fault)
		return -E_INVAL;
	pg->ep = slot_alloc();
	if (pg->ep < 0)
		return pg->ep;
	long r = ep_create(pg->ep);
	if (r) {
		slot_release(pg->ep);
		return r;
	}
	pg->ops = ops;
	pg->data = data;
	return 0;
}

/* Mint a send cap to our endpoint with badge b into a fresh slot, hand it
 * to the kernel with call (SYS_FAULT_EP_SET, SYS_FAULT_EP_SETF asynchronous
 * or SYS_TASK_NOTIFY on task), drop our copy. */
static long route(struct pager *pg, long call, long task, uint64_t b)
{
	long s = slot_alloc();
	if (s < 0)
		return s;
	long r = cap_mint(pg->ep, s, R_SEND, b, 0, 0);
	if (!r)
		r = sc3(call, task, s, call == SYS_FAULT_EP_SETF ? FAULT_EP_ASYNC : 0);
	cap_delete(s);
	slot_release(s);
	return r;
}

static struct pager_client *client_of_task(struct pager *pg, long task)
{
	for (struct pager_client *c = pg->clients; c; c = c->next)
		if (c->task == task)
			return c;
	return NULL;
}

struct pager_client *pager_attach(struct pager *pg, long task, uint64_t base, uint64_t len,
				  unsigned prot, void *data, long *err)
{
	long r = 0, whole = -1;
	struct pager_client *c = NULL;
	if (!len || (base | len) & (PG - 1) || base + len < base)
		r = -E_INVAL;
	else if (client_of_task(pg, task))
		r = -E_EXIST;
	else if (!(c = calloc(1, sizeof *c)))
		r = -E_NOMEM;
	else if ((c->region = slot_alloc()) < 0 || (whole = slot_alloc()) < 0)
		r = -E_NOMEM;
	if (!r)
		r = task_region(task, whole);
	if (!r)
		r = cap_mint(whole, c->region, R_QUERY | R_MAP | R_MARK | R_UNMAP | R_PROTECT |
			     R_READ | R_WRITE | R_EXEC, 0, base, base + len);
	if (whole >= 0) {
		cap_delete(whole);
		slot_release(whole);
	}
	if (r)
		goto fail;
	c->pager = pg;
	c->base = base;
	c->len = len;
	c->task = task;
	c->data = data;
	c->id = pg->next_id++;
	c->async = pg->async;
	/* Pager-managed first, so the first fault after the routing below
	 * already comes to us; death notice before faults, so a client that
	 * dies once it can fault is always seen to die. */
	struct region_op ops[2] = {
		{ .op = ROP_UNMAP, .va = base, .len = len },
		{ .op = ROP_MARK_PAGER, .prot = prot, .va = base, .len = len, .arg = c->id },
	};
	r = region_txn(c->region, base, base + len, ops, 2);
	if (r >= 0)
		r = ops[0].result ? ops[0].result : ops[1].result;
	if (!r)
		r = route(pg, SYS_TASK_NOTIFY, task, BADGE_DEATH | c->id);
	if (!r && (r = route(pg, pg->async ? SYS_FAULT_EP_SETF : SYS_FAULT_EP_SET, task,
			     BADGE_FAULT | c->id)))
		sc2(SYS_TASK_NOTIFY, task, SLOT_NONE);
	if (r)
		goto fail;
	c->next = pg->clients;
	pg->clients = c;
	pg->live++;
	return c;
fail:
	if (c && c->region >= 0) {
		cap_delete(c->region);
		slot_release(c->region);
	}
	free(c);
	*err = r;
	return NULL;
}

/* Drop c's deferred faults: each one's reply cap freed now (the thread
 * is gone with its task, or fails its call if it is not), its client
 * NULL; the records stay until pager_resume / pager_kill frees them. */
static void drop_deferred(struct pager_client *c)
{
	for (struct pager_fault *f = c->pager->deferred; f; f = f->next)
		if (f->client == c) {
			cap_delete(f->reply);
			slot_release(f->reply);
			f->reply = -1;
			f->client = NULL;
		}
}

/* Forget c: out of the list, its deferred faults dropped, its region cap
 * dropped, freed. */
static void client_free(struct pager_client *c)
{
	struct pager *pg = c->pager;
	for (struct pager_client **p = &pg->clients; *p; p = &(*p)->next)
		if (*p == c) {
			*p = c->next;
			break;
		}
	drop_deferred(c);
	cap_delete(c->region);
	slot_release(c->region);
	pg->live--;
	free(c);
}

long pager_detach(struct pager_client *c)
{
	long r = sc2(SYS_FAULT_EP_SET, c->task, SLOT_NONE);
	sc2(SYS_TASK_NOTIFY, c->task, SLOT_NONE);
	struct region_op ops[2] = {
		{ .op = ROP_UNMAP, .va = c->base, .len = c->len },
		{ .op = ROP_MARK_INVALID, .va = c->base, .len = c->len },
	};
	region_txn(c->region, c->base, c->base + c->len, ops, 2);
	client_free(c);
	return r;
}

void pager_fini(struct pager *pg)
{
	while (pg->clients)
		pager_detach(pg->clients);
	while (pg->deferred)
		pager_kill(pg->deferred);
	free(pg->spare);
	pg->spare = NULL;
	cap_delete(pg->ep);
	slot_release(pg->ep);
	pg->ep = -1;
}

void pager_stop(struct pager *pg) { pg->stop = 1; }

void pager_set_async(struct pager *pg, int on) { pg->async = on != 0; }

static long answer(struct pager_fault *f, uint64_t word)
{
	struct pager *pg = f->pager;
	for (struct pager_fault **p = &pg->deferred; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	long r = -E_DEAD;
	if (f->async && f->client) {
		/* The fix woke the threads already; a refusal kills them. */
		r = word == FAULT_RESUME ? 0 : sc2(SYS_FAULT_KILL, f->client->region, f->addr);
		if (r == -E_NOENT)
			r = 0;        /* nobody waits there any more */
	} else if (f->reply >= 0) {
		uint64_t w[4] = { word, 0, 0, 0 };
		r = ipc(SYS_REPLY_CAP, f->reply, w, SLOT_NONE).a0;
		cap_delete(f->reply);
		slot_release(f->reply);
	}
	free(f);
	return r;
}

long pager_resume(struct pager_fault *f) { return answer(f, FAULT_RESUME); }
long pager_kill(struct pager_fault *f) { return answer(f, FAULT_KILL); }

/* The attachment a fault or death badge names (one per client task: the
 * fault endpoint is the task's), or NULL once it is gone. */
static struct pager_client *fault_client(struct pager *pg, unsigned id)
{
	for (struct pager_client *c = pg->clients; c; c = c->next)
		if (c->id == id)
			return c;
	return NULL;
}

/* A fault the pager will not serve: counted, and refused at once when
 * asynchronous (a call's refusal is the FAULT_KILL reply returned). */
static long refuse(struct pager *pg, struct pager_client *c, uint64_t addr, int async)
{
	pg->killed++;
	if (async && c)
		sc2(SYS_FAULT_KILL, c->region, addr);
	return FAULT_KILL;
}

/* Serve fault message m of client c (NULL: gone), a call or, with async,
 * an MSG_FAULT notice: on_fault's result. */
static long serve_fault(struct pager *pg, struct pager_client *c, const struct sysret *m, int async)
{
	/* The words: address, access, status, thread (a call); MSG_FAULT,
	 * address, status, access | thread << 8 (a notice). */
	uint64_t addr = (uint64_t)(async ? m->a2 : m->a1);
	uint64_t status = (uint64_t)m->a3;
	uint64_t acc = (uint64_t)(async ? m->a4 : m->a2);
	long thread = async ? FAULT_THREAD((uint64_t)m->a4) : m->a4;
	pg->faults++;
	if (!c || addr < c->base || addr - c->base >= c->len)
		return refuse(pg, NULL, addr, 0);        /* not a range we serve */
	if (!pg->spare && !(pg->spare = malloc(sizeof *pg->spare)))
		return refuse(pg, c, addr, async);
	struct pager_fault *f = pg->spare;
	*f = (struct pager_fault){
		.client = c, .offset = (addr & ~(PG - 1)) - c->base, .addr = addr,
		.access = FAULT_ACCESS(acc), .kind = FAULT_STATUS_KIND(status),
		.prot = FAULT_STATUS_PROT(status), .tag = FAULT_STATUS_TAG(status),
		.thread = thread, .pager = pg, .reply = -1, .async = async,
	};
	c->faults++;
	long r = pg->ops->fault(pg, f);
	if (r == -E_EXIST) {
		/* Mapped meanwhile by a fault of another thread: resume if the
		 * mapping allows this access. */
		struct region_op q;
		if (!pager_query(c, f->offset, &q) && q.out_kind == RK_MAPPED &&
		    (!(f->access & FA_WRITE) || (q.out_prot & PROT_W))) {
			pg->racing++;
			r = PAGER_RESUME;
		}
	}
	if (r == PAGER_DEFER && async) {
		f->next = pg->deferred;       /* no reply cap: the record is all */
		pg->deferred = f;
		pg->spare = NULL;
		pg->deferrals++;
		return -1;
	}
	if (r == PAGER_DEFER) {
		long s = slot_alloc();
		if (s >= 0 && !sc1(SYS_REPLY_SAVE, s)) {
			f->reply = s;
			f->next = pg->deferred;
			pg->deferred = f;
			pg->spare = NULL;
			pg->deferrals++;
			return -1;
		}
		if (s >= 0)
			slot_release(s);
		r = PAGER_KILL;           /* cannot hold it: the client must not hang */
	}
	if (r != PAGER_RESUME)
		return refuse(pg, c, addr, async);
	return async ? -1 : FAULT_RESUME;
}

/* A fault message m: a call, or an MSG_FAULT notice for a client
 * attached asynchronously (*async set then). Hand it to the pager. The
 * reply word to send now, or -1 when the fault was deferred (its reply
 * saved in a cap) or there is nothing to reply to. */
static long on_fault(struct pager *pg, unsigned id, const struct sysret *m, int *async)
{
	struct pager_client *c = fault_client(pg, id);
	*async = c ? c->async : (uint64_t)m->a1 == MSG_FAULT;
	return serve_fault(pg, c, m, *async);
}

/* A death notice for attachment id: every attachment of that task goes,
 * its deferred faults dropped before client_gone sees it. */
static void on_death(struct pager *pg, unsigned id, long status)
{
	struct pager_client *c = fault_client(pg, id);
	if (!c)
		return;
	long task = c->task;
	pg->deaths++;
	while ((c = client_of_task(pg, task))) {
		drop_deferred(c);
		if (pg->ops->client_gone)
			pg->ops->client_gone(pg, c, status);
		client_free(c);
	}
}

long pager_serve(struct pager *pg)
{
	uint64_t rw[4] = { 0 };
	int reply = 0;
	pg->stop = 0;
	for (;;) {
		if (pg->stop) {
			if (reply)
				ipc(SYS_REPLY, 0, rw, SLOT_NONE);
			return 0;
		}
		struct sysret m = ipc(reply ? SYS_REPLY_RECV : SYS_RECV, pg->ep, rw, SLOT_NONE);
		reply = 0;
		if (m.a0)
			return m.a0;
		uint64_t badge = (uint64_t)m.a5;
		memset(rw, 0, sizeof rw);
		if ((badge & BADGE_DEATH) && (uint64_t)m.a1 == MSG_DEATH) {
			on_death(pg, BADGE_ID(badge), m.a2);
		} else if (badge & BADGE_FAULT) {
			int async;
			long w = on_fault(pg, BADGE_ID(badge), &m, &async);
			if (w >= 0 && !async) {
				rw[0] = (uint64_t)w;
				reply = 1;
			}
		} else if (pg->ops->message) {
			uint64_t w[4] = { (uint64_t)m.a1, (uint64_t)m.a2, (uint64_t)m.a3, (uint64_t)m.a4 };
			long r = pg->ops->message(pg, badge, w, rw);
			if (r < 0)
				return r;
			reply = r == 1;
		}
	}
}

long *pager_cache_new(unsigned long n)
{
	long *cache = malloc((n ? n : 1) * sizeof *cache);
	for (unsigned long i = 0; cache && i < n; i++)
		cache[i] = -1;
	return cache;
}

void pager_cache_free(long *cache, unsigned long n)
{
	for (unsigned long i = 0; cache && i < n; i++)
		if (cache[i] >= 0) {
			cap_delete(cache[i]);
			slot_release(cache[i]);
		}
	free(cache);
}
