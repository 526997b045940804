/* The child roles of the fault-endpoint tests (selftest pg_*) and of
 * `pagerkill`, and the small helpers they share. */
#include "ulib.h"
#include "testlib.h"
#include <patina/pager.h>

#define FAIL(...) do { snprintf(why, 160, __VA_ARGS__); return 1; } while (0)

long fault_ep_set(long target, long ep) { return sc2(SYS_FAULT_EP_SET, target, ep); }

long pg_task_new(long self, long dst, long quota)
{
	return sc3(SYS_TASK_CREATE, self, dst, quota);
}

void pause_ms(long ms)
{
	uint64_t t = rdtime() + (uint64_t)ms * (ticks_per_sec() / 1000);
	while (rdtime() < t)
		sys_yield();
}

/* Make [va, va+len) of our address space pager-managed with tag, if the
 * kernel has ROP_MARK_PAGER; otherwise leave it invalid (faults there go to
 * the pager as well). 1 when it is pager-managed now. */
int pg_mark_pager(long region, uint64_t va, uint64_t len, uint64_t tag)
{
	struct region_op op = { .op = ROP_MARK_PAGER, .prot = PROT_R | PROT_W, .va = va, .len = len,
				.arg = (int64_t)tag };
	long r = region_txn(region, va, va + len, &op, 1);
	return r == 1 && op.result == 0;
}

long pg_query_kind(uint64_t va, uint64_t *tag)
{
	struct region_op q = { .op = ROP_QUERY, .va = va };
	if (region_txn(SLOT_SELF_AS, va, va + 0x1000, &q, 1) != 1)
		return -1;
	if (tag)
		*tag = q.out_tag;
	return (long)q.out_kind;
}

void pg_unmap(uint64_t va, uint64_t len)
{
	struct region_op un = { .op = ROP_UNMAP, .va = va, .len = len };
	region_txn(SLOT_SELF_AS, va, va + len, &un, 1);
	struct region_op inv = { .op = ROP_MARK_INVALID, .va = va, .len = len };
	region_txn(SLOT_SELF_AS, va, va + len, &inv, 1);
}

/* Map a fresh frame RW at va whose word at offset `off` holds v (written
 * through a scratch mapping first). The frame cap lands in *slot. */
long pg_map_frame_with(uint64_t va, uint64_t off, uint64_t v, long *slot)
{
	const uint64_t scratch = 0x5af00000;
	long f = slot_alloc();
	if (f < 0 || frame_alloc(f))
		return -1;
	*slot = f;
	struct region_op m = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = scratch, .arg = f };
	if (region_txn(SLOT_SELF_AS, scratch, scratch + 0x1000, &m, 1) != 1)
		return -2;
	*(volatile uint64_t *)(scratch + off) = v;
	pg_unmap(scratch, 0x1000);
	struct region_op m2 = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = va, .arg = f };
	if (region_txn(SLOT_SELF_AS, va, va + 0x1000, &m2, 1) != 1)
		return -3;
	return 0;
}

/* --- child roles (spawn arg: role | mode << 8) --- */

/* Client: one call through the given cap ("ready"; the parent answers once
 * our fault endpoint is set), then one access at PG_CLIENT_VA: a read
 * (mode 0) or a write (mode 1). Returns only if the access was resumed. */
static int pg_client(long arg)
{
	if (given_cap_type() != CAP_ENDPOINT)
		return 30;
	uint64_t w[4] = { 0 };
	if (ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE).a0)
		return 31;
	volatile uint64_t *p = (volatile uint64_t *)PG_CLIENT_VA;
	if ((arg >> 8) & 1)
		*p = 1;
	else
		(void)*p;
	return 32;
}

/* Pager for pagerkill: the given cap is the fault endpoint (receive
 * right). First message: the parent hands over a notify cap (slot 6).
 * Mode 0: take one fault, tell the parent through the notify cap with a
 * call nobody answers (so the client stays blocked in its fault). Mode 1:
 * tell the parent we are up and never receive on the fault endpoint (the
 * client's fault stays queued). Either way we are killed while waiting. */
static int pg_pager(long arg)
{
	const long note = SLOT_FIRST_FREE;
	if (given_cap_type() != CAP_ENDPOINT)
		return 40;
	uint64_t w[4] = { 0 };
	struct sysret r = ipc(SYS_RECV, SLOT_GIVEN, w, note);
	if (r.a0 || !(r.a6 & IPC_GOT_CAP))
		return 41;
	if (ipc(SYS_REPLY, 0, w, SLOT_NONE).a0)
		return 42;
	if ((arg >> 8) & 1) {
		w[0] = 0;
		ipc(SYS_CALL, note, w, SLOT_NONE);    /* the parent never answers */
		return 43;
	}
	r = ipc(SYS_RECV, SLOT_GIVEN, w, SLOT_NONE);
	if (r.a0)
		return 44;
	uint64_t fw[4] = { (uint64_t)r.a1, (uint64_t)r.a2, (uint64_t)r.a3, (uint64_t)r.a5 };
	ipc(SYS_CALL, note, fw, SLOT_NONE);       /* never answered: we are killed here */
	return 45;
}

int pg_role(long arg)
{
	switch (arg & 0xff) {
	case ROLE_PG_CLIENT: return pg_client(arg);
	case ROLE_PG_PAGER: return pg_pager(arg);
	}
	return 100;
}
