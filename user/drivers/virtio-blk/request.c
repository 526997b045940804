/* Block requests: checked before anything is posted, answered later
 * through a saved reply cap when the device hands the chain back. */
#include "ulib.h"
#include "blk.h"
#include "vblk.h"

/* One reply slot a record, taken once: a saved reply never waits for a
 * slot. 0 or -E_NOMEM. */
long req_init(struct vblk *v)
{
	for (unsigned i = 0; i < NREQ; i++) {
		v->reqs[i].state = RQ_FREE;
		if ((v->reqs[i].reply = slot_alloc()) < 0)
			return -E_NOMEM;
	}
	return 0;
}

static void mark_bufs(struct vblk *v, struct vblk_req *r)
{
	for (unsigned p = 0; p < r->pages; p++)
		v->bufs[r->buf[p]].busy++;
}

/* Answer r's client with result and free the record. A client that died
 * meanwhile makes the reply fail (E_DEAD): nothing else to do for it. */
static void finish(struct vblk *v, struct vblk_req *r, long result)
{
	uint64_t w[4] = { (uint64_t)result, 0, 0, 0 };
	ipc(SYS_REPLY_CAP, r->reply, w, SLOT_NONE);
	cap_delete(r->reply);      /* a reply cap that could not be used stays otherwise */
	for (unsigned p = 0; p < r->pages; p++)
		buf_release(v, r->buf[p]);
	if (r->state == RQ_INFLIGHT)
		v->inflight--;
	r->state = RQ_FREE;
}

/* Post the waiting requests in order while descriptors last; notify the
 * device once if any went. */
static void pump(struct vblk *v)
{
	int posted = 0;
	while (v->wait_head && ring_post(v, v->wait_head, (unsigned)(v->wait_head - v->reqs))) {
		struct vblk_req *r = v->wait_head;
		v->wait_head = r->next;
		r->state = RQ_INFLIGHT;
		if (++v->inflight > v->max_inflight)
			v->max_inflight = v->inflight;
		posted = 1;
	}
	if (!v->wait_head)
		v->wait_tail = NULL;
	if (posted)
		vdev_notify(v);
}

/* Needs: the call being served is the client's (its reply still
 * pending). Checks the request; if it is good, saves the reply in a
 * record and queues it (*deferred = 1: the answer comes at completion)
 * and returns 0; else returns the error to answer now (*deferred = 0):
 * -E_INVAL (pages), -E_RANGE (past the end), -E_PERM (buffers), -E_AGAIN
 * (every record busy), or SYS_REPLY_SAVE's error. */
long req_submit(struct vblk *v, uint64_t badge, uint32_t op, uint64_t sector, unsigned first,
		unsigned pages, int *deferred)
{
	*deferred = 0;
	uint64_t n = (uint64_t)pages * BLK_PAGE_SECTORS;
	if (!pages || pages > BLK_MAX_PAGES)
		return -E_INVAL;
	if (sector >= v->sectors || n > v->sectors - sector)
		return -E_RANGE;
	uint32_t type = op == BLK_READ ? VBLK_T_IN : VBLK_T_OUT;
	uint16_t bufs[BLK_MAX_PAGES];
	long e = buf_check(v, badge, first, pages, type == VBLK_T_IN, bufs);
	if (e)
		return e;
	struct vblk_req *r = NULL;
	for (unsigned i = 0; i < NREQ && !r; i++)
		if (v->reqs[i].state == RQ_FREE)
			r = &v->reqs[i];
	if (!r)
		return -E_AGAIN;
	if ((e = sc1(SYS_REPLY_SAVE, r->reply)))
		return e;
	*r = (struct vblk_req){ .state = RQ_WAITING, .reply = r->reply, .type = type,
				.sector = sector, .pages = pages };
	memcpy(r->buf, bufs, sizeof bufs);
	mark_bufs(v, r);
	if (v->wait_tail)
		v->wait_tail->next = r;
	else
		v->wait_head = r;
	v->wait_tail = r;
	*deferred = 1;
	pump(v);
	return 0;
}

/* Fail every request, in flight or waiting, with err. Needs: the device
 * stopped (reset), so none of their buffers is touched any more. */
void req_fail_all(struct vblk *v, long err)
{
	for (unsigned i = 0; i < NREQ; i++)
		if (v->reqs[i].state != RQ_FREE)
			finish(v, &v->reqs[i], err);
	v->wait_head = v->wait_tail = NULL;
}

/* The device misbehaved: reset it (its DMA stops), fail what it held,
 * start it again. The waiting requests are posted afresh; if it does not
 * come back they fail too and every later one is posted nowhere (they
 * wait, and fail when the driver ends). */
static void restart(struct vblk *v)
{
	vdev_stop(v);
	for (unsigned i = 0; i < NREQ; i++)
		if (v->reqs[i].state == RQ_INFLIGHT)
			finish(v, &v->reqs[i], -E_IO);
	if (vdev_start(v)) {
		req_fail_all(v, -E_IO);
		printf("virtio-blk: the device did not come back after a reset\n");
		return;
	}
	pump(v);
}

static long status_result(uint8_t s)
{
	switch (s) {
	case VBLK_S_OK: return 0;
	case VBLK_S_UNSUPP: return -E_INVAL;
	default: return -E_IO;
	}
}

/* Take every completed chain off the used ring and answer its client;
 * post what waited for descriptors. A device that says it needs a reset,
 * or names a chain we did not post, is reset. */
void req_complete_all(struct vblk *v)
{
	uint16_t head;
	long idx;
	while ((idx = ring_take(v, &head)) >= 0) {
		uint8_t s = *(volatile uint8_t *)(VBLK_HDR_VA + STATUS_OFF(idx));
		ring_free_chain(v, head);
		v->completed++;
		finish(v, &v->reqs[idx], status_result(s));
	}
	if (idx == -E_IO || vdev_needs_reset(v))
		restart(v);
	else
		pump(v);
}
