/* TLB shootdown by kernel IPI with early acknowledgement, and the parking
 * of frames until the flushes they depend on were applied. The design and
 * why an acknowledgement is enough are in shootdown.h; the model it
 * follows is tests/model/tlb.c --lazy (a flush queues its range on every
 * hart and returns; a hart applies its queue before its next access;
 * released frames wait until every hart applied what was queued before
 * the release).
 *
 * Sequence numbers: every request posted to any hart takes the next value
 * of sd_seq, under the target's mailbox lock, so the requests in one
 * mailbox are in increasing order. Each hart publishes pend_lo, the lowest
 * sequence number posted to it that it has not applied yet (SD_NONE when
 * none). A parked frame carries the ticket sd_seq had when it was parked:
 * everything it depends on was posted before, so with a number at most the
 * ticket; once every hart's pend_lo is above the ticket, all of that was
 * applied everywhere. */
#include <patina/errno.h>
#include "shootdown.h"
#include "arch.h"
#include "cpu.h"
#include "harts.h"
#include "kstring.h"
#include "panic.h"
#include "spinlock.h"
#include "timer.h"

#define SD_QLEN        16      /* requests a mailbox holds; beyond: flush everything */
#define SD_COALESCE    8       /* a drain of more requests flushes whole tags */
#define SD_RANGE_PAGES 64      /* a wider range flushes its whole tag */
#define SD_PARK        128     /* parked frames per hart */
#define SD_WAIT_US     20000   /* ack wait before the SBI fallback; parking wait before force */
#define SD_NONE        UINT64_MAX
#define SD_PAGE        4096ULL

struct sd_req {
	uint64_t seq, start, end;  /* end 0: the whole tag */
	long asid;                 /* ARCH_NO_ASID: every tag */
};

struct sd_parked {
	uint64_t pa, ticket;
	shootdown_release_fn release;
	unsigned level;
};

struct sd_hart {
	/* The mailbox. Posters and the owner take `lock` with interrupts off. */
	spinlock_t lock;
	unsigned n;
	int overflow;             /* a request did not fit: flush everything */
	int signalled;            /* an interrupt is on its way since the last drain */
	uint64_t last_posted;     /* highest sequence number posted here */
	struct sd_req q[SD_QLEN];
	uint64_t pend_lo;         /* written under lock, read lock-free */
	uint64_t acked, applied;  /* highest sequence number taken / applied */
	/* The parking ring: frames this hart parked, tickets in FIFO order. */
	spinlock_t plock;
	unsigned phead, pn;
	struct sd_parked park[SD_PARK];
	struct shootdown_stats st;
};

static struct sd_hart *sd;
static uint64_t sd_seq;       /* the last sequence number handed out */
static long sd_nparked;       /* parked on every hart together */
volatile int shootdown_hold;
volatile uint32_t shootdown_hold_hart;
volatile uint64_t shootdown_ack_wait_us = SD_WAIT_US;

int shootdown_init(void)
{
	sd = harts_alloc(sizeof *sd);
	if (!sd)
		return -E_NOMEM;
	for (uint32_t i = 0; i < harts_max; i++) {
		sd[i].pend_lo = SD_NONE;
		spin_lock_init_class(&sd[i].lock, &lock_class_sd_mailbox);
		spin_lock_init_class(&sd[i].plock, &lock_class_sd_park);
	}
	return 0;
}

/* The lowest request not yet applied on any online hart, or SD_NONE. */
static uint64_t min_pending(void)
{
	uint64_t lo = SD_NONE;
	uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE);
	for (uint32_t i = 0; i < n; i++) {
		uint64_t v = __atomic_load_n(&sd[i].pend_lo, __ATOMIC_SEQ_CST);
		if (v < lo)
			lo = v;
	}
	return lo;
}

/* Flush one drained batch on this hart. More than SD_COALESCE requests,
 * or a wide range, flush their whole tag (once per tag per batch). */
static void apply(const struct sd_req *q, unsigned n, int overflow, struct shootdown_stats *st)
{
	st->batches++;
	if (overflow) {
		arch_tlb_flush_all();
		st->coalesced++;
		return;
	}
	int coalesce = n > SD_COALESCE;
	st->coalesced += (uint64_t)coalesce;
	for (unsigned i = 0; i < n; i++) {
		const struct sd_req *r = &q[i];
		int whole = coalesce || !r->end || r->end - r->start > SD_RANGE_PAGES * SD_PAGE;
		if (whole) {
			unsigned j = 0;
			while (j < i && q[j].asid != r->asid)
				j++;
			if (j < i && coalesce)
				continue;   /* this tag was flushed whole already */
			if (r->asid == ARCH_NO_ASID) {
				arch_tlb_flush_all();
				return;
			}
			arch_tlb_flush_asid((unsigned long)r->asid);
			continue;
		}
		for (uint64_t va = r->start; va < r->end; va += SD_PAGE) {
			if (r->asid == ARCH_NO_ASID)
				arch_tlb_flush_page(va);
			else
				arch_tlb_flush_page_asid(va, (unsigned long)r->asid);
		}
	}
}

void shootdown_service(void)
{
	if (!sd)
		return;
	unsigned long f = irq_save();
	uint32_t me = this_cpu()->index;
	struct sd_hart *h = &sd[me];
	/* A peek without the lock: a request posted after it finds
	 * signalled clear (or set by a poster whose interrupt is still on
	 * its way) and raises the interrupt, which drains it. */
	if (!__atomic_load_n(&h->n, __ATOMIC_ACQUIRE) && !__atomic_load_n(&h->overflow, __ATOMIC_ACQUIRE)) {
		irq_restore(f);
		return;
	}
	struct sd_req q[SD_QLEN];
	spin_lock(&h->lock);
	unsigned n = h->n;
	int overflow = h->overflow;
	uint64_t upto = h->last_posted;
	memcpy(q, h->q, n * sizeof q[0]);
	h->n = 0;
	h->overflow = 0;
	h->signalled = 0;
	spin_unlock(&h->lock);
	/* The acknowledgement, before the flush: from here to the end of
	 * apply() this hart runs only this code, interrupts off, and returns
	 * to no user access before apply() ran (shootdown.h). */
	__atomic_store_n(&h->acked, upto, __ATOMIC_RELEASE);
	while (__atomic_load_n(&shootdown_hold, __ATOMIC_ACQUIRE) &&
	       __atomic_load_n(&shootdown_hold_hart, __ATOMIC_RELAXED) == me)
		cpu_relax();
	apply(q, n, overflow, &h->st);
	__atomic_store_n(&h->applied, upto, __ATOMIC_RELEASE);
	spin_lock(&h->lock);
	/* What is queued now came after the drain: higher numbers. */
	__atomic_store_n(&h->pend_lo, h->n ? h->q[0].seq : SD_NONE, __ATOMIC_SEQ_CST);
	spin_unlock(&h->lock);
	irq_restore(f);
}

/* Needs: interrupts off. Queue the request on hart t; its sequence
 * number, and *signal set when t needs an interrupt for it (none is on
 * its way yet). */
static uint64_t post(uint32_t t, long asid, uint64_t start, uint64_t end, int *signal)
{
	struct sd_hart *h = &sd[t];
	spin_lock(&h->lock);
	uint64_t s = __atomic_add_fetch(&sd_seq, 1, __ATOMIC_SEQ_CST);
	if (h->n < SD_QLEN)
		h->q[h->n] = (struct sd_req){ s, start, end, asid };
	else
		__atomic_store_n(&h->overflow, 1, __ATOMIC_RELEASE);
	__atomic_store_n(&h->n, h->n + (h->n < SD_QLEN), __ATOMIC_RELEASE);
	if (h->pend_lo == SD_NONE)
		__atomic_store_n(&h->pend_lo, s, __ATOMIC_SEQ_CST);
	h->last_posted = s;
	*signal = !h->signalled;
	h->signalled = 1;
	spin_unlock(&h->lock);
	return s;
}

/* Hart t did not answer in time: flush it through the firmware, which
 * does not need its interrupts. Its mailbox still holds the request; it
 * applies it again when it drains (harmless). */
static void fallback(uint32_t t, long asid, uint64_t start, uint64_t end)
{
	struct hartmask one = { { 0 } };
	one.w[t / 64] = 1ULL << (t % 64);
	uint64_t size = end ? end - start : (uint64_t)-1;
	long e = arch_tlb_flush_remote(&one, end ? start : 0, size, asid);
	if (e)
		panic("shootdown: SBI fallback flush of hart %u failed (%ld)", t, e);
	sd[this_cpu()->index].st.fallbacks++;
}

/* Needs: interrupts off. shootdown_flush for the targets among the 64
 * logical harts from base: post to each, one interrupt per target not yet
 * signalled, then wait for each. */
static void flush_window(const struct hartmask *m, uint32_t base, uint32_t n, long asid,
			 uint64_t start, uint64_t end, int complete)
{
	uint32_t me = this_cpu()->index;
	struct sd_hart *self = &sd[me];
	uint64_t seq[64];
	struct hartmask sig = { { 0 } };
	int any = 0, to_signal = 0;
	uint32_t top = n - base < 64 ? n - base : 64;
	for (uint32_t k = 0; k < top; k++) {
		uint32_t i = base + k;
		seq[k] = 0;
		if (i == me || !hartmask_test(m, i))
			continue;
		int signal;
		seq[k] = post(i, asid, start, end, &signal);
		self->st.posted++;
		any = 1;
		if (signal) {
			sig.w[i / 64] |= 1ULL << (i % 64);
			to_signal++;
		}
	}
	if (!any)
		return;
	uint64_t deadline = time_after_us(shootdown_ack_wait_us);
	if (to_signal) {
		self->st.ipis += (uint64_t)to_signal;
		if (arch_ipi_send_mask(&sig))
			deadline = 0;   /* no interrupt went out: fall back at once */
	}
	for (uint32_t k = 0; k < top; k++) {
		if (!seq[k])
			continue;
		const uint64_t *done = complete ? &sd[base + k].applied : &sd[base + k].acked;
		while (__atomic_load_n(done, __ATOMIC_ACQUIRE) < seq[k]) {
			/* Serve our own mailbox: the target may be waiting for us. */
			shootdown_service();
			if (arch_time_now() > deadline) {
				fallback(base + k, asid, start, end);
				break;
			}
			cpu_relax();
		}
	}
}

/* Targets are taken 64 logical harts at a time (one SBI window's worth,
 * and a sequence array that fits the stack): all of a window are posted
 * before any is waited for. */
void shootdown_flush(const struct hartmask *m, long asid, uint64_t start, uint64_t end,
		     int complete)
{
	unsigned long f = irq_save();
	uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE);
	for (uint32_t base = 0; base < n; base += 64)
		if (m->w[base / 64])
			flush_window(m, base, n, asid, start, end, complete);
	irq_restore(f);
}

/* Flush, through the firmware and completely, every hart that has a
 * request numbered below upto pending, where upto is a number taken here
 * (no request gets it). A frame parked with a ticket below upto was parked
 * before that number was taken, so whatever it depends on had published
 * its pend_lo before the loads below: afterwards no hart caches a
 * translation it depends on. Returns upto. */
static uint64_t force(void)
{
	uint64_t upto = __atomic_add_fetch(&sd_seq, 1, __ATOMIC_SEQ_CST);
	unsigned long f = irq_save();
	uint32_t me = this_cpu()->index;
	uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE);
	struct hartmask m = { { 0 } };
	for (uint32_t i = 0; i < n; i++)
		if (i != me && __atomic_load_n(&sd[i].pend_lo, __ATOMIC_SEQ_CST) < upto)
			m.w[i / 64] |= 1ULL << (i % 64);
	arch_tlb_flush_all();
	long e = arch_tlb_flush_remote(&m, 0, (uint64_t)-1, ARCH_NO_ASID);
	if (e)
		panic("shootdown: forced SBI flush failed (%ld)", e);
	sd[me].st.forced++;
	irq_restore(f);
	return upto;
}

/* Release h's parked frames whose flushes were applied everywhere, or
 * whose ticket is below `forced` (0: none). Returns how many stay. Any
 * hart; the release functions run outside the ring's lock. */
static unsigned reap(struct sd_hart *h, uint64_t forced)
{
	enum { BATCH = 16 };
	struct sd_parked out[BATCH];
	for (;;) {
		uint64_t lo = min_pending();
		unsigned long f = irq_save();
		spin_lock(&h->plock);
		unsigned k = 0;
		while (h->pn && k < BATCH) {
			struct sd_parked *p = &h->park[h->phead];
			if (p->ticket >= lo && p->ticket >= forced)
				break;
			out[k++] = *p;
			h->phead = (h->phead + 1) % SD_PARK;
			h->pn--;
		}
		unsigned left = h->pn;
		spin_unlock(&h->plock);
		irq_restore(f);
		__atomic_sub_fetch(&sd_nparked, (long)k, __ATOMIC_RELAXED);
		for (unsigned i = 0; i < k; i++)
			out[i].release(out[i].pa, out[i].level);
		if (k < BATCH)
			return left;
	}
}

/* Reap h until at most `keep` frames stay parked on it (every hart when h
 * is NULL), serving this hart's mailbox meanwhile; after SD_WAIT_US
 * without progress, force. */
static void drain_parked(struct sd_hart *h, unsigned keep)
{
	uint64_t deadline = time_after_us(SD_WAIT_US), forced = 0;
	for (;;) {
		unsigned left = 0;
		if (h) {
			left = reap(h, forced);
		} else {
			uint32_t n = __atomic_load_n(&ncpus, __ATOMIC_ACQUIRE);
			for (uint32_t i = 0; i < n; i++)
				left += reap(&sd[i], forced);
		}
		if (left <= keep)
			return;
		shootdown_service();
		if (arch_time_now() > deadline) {
			forced = force();
			deadline = time_after_us(SD_WAIT_US);
		}
		cpu_relax();
	}
}

void shootdown_defer(uint64_t pa, unsigned level, shootdown_release_fn release)
{
	if (!sd) {
		release(pa, level);
		return;
	}
	uint64_t ticket = __atomic_load_n(&sd_seq, __ATOMIC_SEQ_CST);
	if (min_pending() > ticket) {
		release(pa, level);     /* nothing it depends on is pending */
		return;
	}
	unsigned long f = irq_save();
	struct sd_hart *h = &sd[this_cpu()->index];
	if (__atomic_load_n(&h->pn, __ATOMIC_RELAXED) == SD_PARK)
		drain_parked(h, SD_PARK - 1);
	spin_lock(&h->plock);
	/* Only this hart adds to its ring, and interrupts are off: the room
	 * drain_parked made is still there. */
	h->park[(h->phead + h->pn) % SD_PARK] = (struct sd_parked){ pa, ticket, release, level };
	h->pn++;
	spin_unlock(&h->plock);
	__atomic_add_fetch(&sd_nparked, 1, __ATOMIC_RELAXED);
	h->st.parked++;
	irq_restore(f);
	reap(h, 0);
}

void shootdown_settle(void)
{
	if (sd && __atomic_load_n(&sd_nparked, __ATOMIC_RELAXED))
		drain_parked(NULL, 0);
}

void shootdown_stats(struct shootdown_stats *out, int hart)
{
	memset(out, 0, sizeof *out);
	for (uint32_t i = 0; sd && i < harts_max; i++) {
		if (hart >= 0 && i != (uint32_t)hart)
			continue;
		const struct shootdown_stats *s = &sd[i].st;
		out->posted += s->posted;
		out->ipis += s->ipis;
		out->batches += s->batches;
		out->coalesced += s->coalesced;
		out->fallbacks += s->fallbacks;
		out->forced += s->forced;
		out->parked += s->parked;
	}
}

uint64_t shootdown_acked(uint32_t idx) { return __atomic_load_n(&sd[idx].acked, __ATOMIC_ACQUIRE); }
uint64_t shootdown_applied(uint32_t idx) { return __atomic_load_n(&sd[idx].applied, __ATOMIC_ACQUIRE); }
uint64_t shootdown_next_seq(void) { return __atomic_load_n(&sd_seq, __ATOMIC_SEQ_CST) + 1; }
