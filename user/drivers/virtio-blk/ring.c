/* The split virtqueue in the ring page: the descriptor free list, posting
 * one request's chain (header, one descriptor a data page, status byte)
 * and taking completed chains off the used ring. */
#include "ulib.h"
#include "vblk.h"

/* Needs: qsize, avail_off, used_off set; the device not using the ring.
 * An empty ring: every descriptor free, both indexes 0. */
void ring_init(struct vblk *v)
{
	uint8_t *base = (uint8_t *)VBLK_RING_VA;
	memset(base, 0, 4096);
	v->desc = (struct vq_desc *)base;
	v->avail = (struct vq_avail *)(base + v->avail_off);
	v->used = (struct vq_used *)(base + v->used_off);
	for (unsigned i = 0; i < v->qsize; i++) {
		v->desc[i].next = (uint16_t)(i + 1);
		v->head_req[i] = -1;
	}
	v->free_head = 0;
	v->nfree = v->qsize;
	v->used_seen = 0;
}

static uint16_t desc_get(struct vblk *v)
{
	uint16_t d = v->free_head;
	v->free_head = v->desc[d].next;
	v->nfree--;
	return d;
}

static void desc_set(struct vblk *v, uint16_t d, uint64_t addr, uint32_t len, uint16_t flags)
{
	v->desc[d].addr = addr;
	v->desc[d].len = len;
	v->desc[d].flags = flags;
}

/* Post request record idx (r: its buffers already checked) as one chain
 * and publish it in the avail ring (the caller notifies the device).
 * Returns 1 when posted, 0 when there are not enough free descriptors
 * (nothing changed). */
int ring_post(struct vblk *v, struct vblk_req *r, unsigned idx)
{
	if (v->nfree < r->pages + 2)
		return 0;
	struct vblk_hdr *h = (struct vblk_hdr *)(VBLK_HDR_VA + HDR_OFF(idx));
	*h = (struct vblk_hdr){ .type = r->type, .sector = r->sector };
	*(volatile uint8_t *)(VBLK_HDR_VA + STATUS_OFF(idx)) = 0xff;   /* the device overwrites it */
	uint16_t head = desc_get(v), d = head;
	desc_set(v, d, v->hdr_dma + HDR_OFF(idx), sizeof *h, VQ_DESC_NEXT);
	uint16_t data_flags = VQ_DESC_NEXT | (r->type == VBLK_T_IN ? VQ_DESC_WRITE : 0);
	for (unsigned p = 0; p < r->pages; p++) {
		uint16_t n = desc_get(v);
		v->desc[d].next = n;
		d = n;
		desc_set(v, d, v->bufs[r->buf[p]].dma, 4096, data_flags);
	}
	uint16_t s = desc_get(v);
	v->desc[d].next = s;
	desc_set(v, s, v->hdr_dma + STATUS_OFF(idx), 1, VQ_DESC_WRITE);
	v->head_req[head] = (int16_t)idx;
	r->head = head;
	v->avail->ring[v->avail->idx % v->qsize] = head;
	io_fence();      /* the chain before the index that publishes it */
	v->avail->idx++;
	return 1;
}

/* Return the chain from head to the free list. */
void ring_free_chain(struct vblk *v, uint16_t head)
{
	uint16_t d = head;
	unsigned n = 1;
	while (v->desc[d].flags & VQ_DESC_NEXT) {
		d = v->desc[d].next;
		n++;
	}
	v->desc[d].next = v->free_head;
	v->free_head = head;
	v->nfree += n;
	v->head_req[head] = -1;
}

/* The next completed chain: its request record's index (>= 0) with its
 * head in *head, -E_AGAIN when the used ring holds no more, -E_IO when
 * the device named a descriptor that heads no chain of ours (it is
 * broken: the caller resets it). */
long ring_take(struct vblk *v, uint16_t *head)
{
	uint16_t idx = *(volatile uint16_t *)&v->used->idx;
	if (idx == v->used_seen)
		return -E_AGAIN;
	io_fence();      /* the entry after the index that published it */
	uint32_t id = v->used->ring[v->used_seen % v->qsize].id;
	v->used_seen++;
	if (id >= v->qsize || v->head_req[id] < 0)
		return -E_IO;
	*head = (uint16_t)id;
	return v->head_req[id];
}
