/* sysfuzz [iterations] [seed]: fuzz the syscall ABI from several tasks at
 * once, check authority, and watch that every hart keeps going.
 *
 * Each round init spawns 2-3 fuzz children that share one endpoint E (a
 * badged mint each, handed over with spawn's `give`). In every child:
 *  - 3 workers issue random syscalls with random and stale caps, wild
 *    pointers and random words (most calls non-blocking; they count the
 *    "calls" of the last line; a spawn also gets a wild extension in a6).
 *    Their only memory authority is a region cap
 *    over a scratch window, and they never name slots ZONE_LO and above,
 *    where the threads below keep the caps they track;
 *  - a client and a server thread talk to the siblings over E (call, send,
 *    recv, reply, reply_recv, saved reply caps), lend them mints of their
 *    own endpoint, frame and memory with GRANT, and revoke them again: the
 *    receiver checks that a revoked loan is gone and that a loan's rights
 *    hold in its task, and both sides check words and badges;
 *  - an oracle thread (with a pinger, a catcher and a transaction helper)
 *    builds calls that lack the cap or the right they need and expects
 *    -E_BADCAP / -E_PERM (-E_INVAL for W^X; a spawn without a kernel cap
 *    may carry a random extension, whose own error also counts as refused). A success is an authority
 *    violation; any other error an "unexpected result". It also checks that
 *    a message is authorized at delivery and that a region transaction that
 *    passed decode completes before the revoke of its cap returns.
 * A page init maps into each child carries its progress and its counts.
 * init itself checks kernel and console cap rights; spawns through
 * SYS_TASK_SPAWN's extension with random argument blocks (too long, no
 * pointer, unreadable or crossing into an unmapped page, last string not
 * ended, too many strings, or good) and random kernel and console slots,
 * expecting E_INVAL / E_FAULT / E_BADCAP (E_PERM through a kernel cap
 * without CONTROL), or a child that reports exactly the strings and caps
 * it was given (each reaped); calls DBG_NAME with random kinds, indexes,
 * sizes and buffers (E_INVAL, E_NOENT, E_FAULT, or the entry's exact
 * bytes).
 * Device caps: init picks a virtio-mmio slot with no device behind it
 * (its registers ignore writes) and hands each child a kernel cap with
 * only R_CONTROL, with which the child makes an MMIO and an IRQ cap for
 * that device and then deletes it: copies of the two are among what the
 * workers name (the new device calls get them as arguments, and MAPs in
 * the scratch window), the originals stay with the oracle, which expects
 * device info and caps to need the kernel cap, SYS_DMA_ADDR R_DMA and a
 * frame cap, a MAP of the window no more than the cap allows (E_PERM,
 * E_RANGE, E_INVAL for execute), mints no wider and no stronger, and a
 * device cap without R_GRANT to stay put. init checks the kernel cap's
 * rights for the device calls and that a spawn gives away no device cap
 * without R_GRANT.
 * Memory objects: each child makes one (the oracle's; the workers get a
 * copy, named in MAP_OBJ ops, supplies and range ops in the scratch
 * window, and the workers' random calls create and map more), and the
 * oracle expects a MAP_OBJ through an object cap without R_MAP or the
 * page right asked, or a region cap without R_MAP or R_WRITE for a
 * writable map, a supply or range op without R_CONTROL, a supply from a
 * region cap without R_UNMAP, to be refused (E_PERM), an asynchronous
 * object (MOBJ_ASYNC) to need a pager cap with R_SEND (E_PERM) and a
 * pager, unknown flag bits to be refused (E_INVAL), MOBJ_KILL to need
 * R_CONTROL, and a cap of another type named as an object to give
 * E_BADCAP.
 * It pins one heartbeat thread to each hart and ends the run if
 * a hart (or a child) stops making progress. It asks for each child's death notice (SYS_TASK_NOTIFY) on an
 * endpoint of its own, and after the round expects exactly one per child,
 * with the status its wait returned. At the end every kernel counter must
 * be back where it was. */
#include "ulib.h"
#include "testlib.h"

/* The fuzzer's child tasks are copies of this program started with a
 * nonzero spawn argument (this role in its low byte). */
#define ROLE_FUZZ 3
#include <patina/pager.h>
#include <patina/device.h>
#include <patina/mobj.h>

#define TPS ticks_per_sec()             /* rdtime ticks per second */

/* ---- what init and the children share ---- */
#define MAX_KIDS 3
#define KID_THREADS 12                  /* main + 3 workers + 6 helpers, 2 spare */
#define KID_FRAMES 2048
#define ROUND_CALLS 5000
#define SHARE_VA 0x6f000000UL           /* child: the page init shares with it */
#define PSHARE_VA 0x50000000UL          /* init: the children's pages */
#define SHARE_MAGIC 0x5359534655ULL
#define ROLE_NOP 0xfe                   /* spawned by a check: exits saying what it got (nop_status) */
#define HART_STALL (10 * TPS)
#define KID_STALL (30 * TPS)
#define MAX_HB 16

enum {
	CK_PUTS, CK_GETC, CK_DEBUG, CK_SPAWN,
	CK_REGION_RIGHTS, CK_PAGE_RIGHTS, CK_MAP_RO, CK_SHARE, CK_WX, CK_QUERY_PA,
	CK_MINT_RIGHTS, CK_MINT_RANGE,
	CK_RECV_SO, CK_SEND_RO, CK_GRANT,
	CK_REPLY_COPY, CK_REPLY_XFER, CK_REPLY_ONESHOT,
	CK_THREAD_KILL, CK_TASK_CTL, CK_TASK_KILL,
	CK_LATE_REVOKE, CK_TXN_REVOKE, CK_XT_REVOKED, CK_XT_RIGHTS, CK_IPC,
	CK_P_GIVE_KERNEL, CK_P_KERNEL_RIGHTS, CK_P_CONSOLE_RIGHTS,
	CK_FAULT_EP, CK_TASK_CREATE, CK_CLONE, CK_TASK_NOTIFY, CK_FAULT_KILL,
	CK_P_SPAWN_EXT, CK_P_SPAWN_CHILD, CK_P_DBG_NAME,
	CK_DEVICE, CK_DMA, CK_DEV_MAP, CK_DEV_GRANT,
	CK_MOBJ,
	CK_SETUP,
	NCK
};
static const char *const ck_name[NCK] = {
	"puts without a console cap", "getc without a console cap",
	"debug without a kernel cap", "spawn without a kernel cap",
	"region op without its right", "page permission beyond the region's READ/WRITE/EXEC",
	"writable map of a read-only frame", "second mapping of a frame without SHARE",
	"W+X map or mark", "query returned a physical address",
	"mint to more rights", "region mint to a larger range",
	"recv/reply_recv through a send-only endpoint", "send/call through a recv-only endpoint",
	"cap transfer without GRANT",
	"copy/mint of a reply cap", "transfer of a reply cap", "reply cap used twice",
	"thread kill without CONTROL", "task region/thread create without CONTROL",
	"task kill without CONTROL",
	"cap delivered after the sender's endpoint cap was deleted",
	"region txn outlived the revoke of its cap",
	"lent cap still held after the lender revoked it",
	"lent cap used beyond its rights", "IPC words or badge not from the partner",
	"spawn gave away a kernel cap", "kernel cap used without the right",
	"console cap used without the right",
	"fault endpoint set without CONTROL", "empty task created without CONTROL",
	"clone without QUERY+MAP on the source or MAP on the target",
	"death notice asked for without CONTROL",
	"asynchronous fault refused without MAP",
	"spawn with a bad extension (args block, kernel or console slot)",
	"spawned child's arguments or handed caps not the ones given",
	"debug name with a bad kind, index, size or buffer",
	"device info or caps without the kernel cap or its right",
	"DMA address without R_DMA or a frame cap",
	"device window mapped beyond its cap (rights, length, execute)",
	"device cap without GRANT transferred or given at spawn",
	"memory object mapped, supplied or changed beyond its caps",
	"fixture set-up",
};

struct share {
	uint64_t magic, idx, nkids, ncpus;
	uint64_t dev;               /* the device whose caps the child makes: index + 1, 0 none */
	volatile uint64_t beat, calls, state, inflight, checks;
	volatile uint64_t ipc_ok, lends, revokes;
	volatile uint32_t viol[NCK], mism[NCK], stuck[NCK];
	volatile int32_t code[NCK];
};
_Static_assert(sizeof(struct share) <= 4096, "share page");

/* Counts go here: the shared page in a child, a static in init. */
static struct share *sh;

static void note_viol(int ck) { __atomic_fetch_add(&sh->viol[ck], 1, __ATOMIC_RELAXED); }
static void note_mism(int ck, long code)
{
	__atomic_fetch_add(&sh->mism[ck], 1, __ATOMIC_RELAXED);
	sh->code[ck] = (int32_t)code;
}
static void note_check(void) { __atomic_fetch_add(&sh->checks, 1, __ATOMIC_RELAXED); }

/* A call that lacks authority: success is a violation, an error other than
 * e1 / e2 (0: none) is unexpected. */
static void expect(int ck, long r, long e1, long e2)
{
	note_check();
	if (r >= 0)
		note_viol(ck);
	else if (r != -e1 && (!e2 || r != -e2))
		note_mism(ck, r);
}

static uint64_t rnd(uint64_t *s) { return xorshift64(s); }

static struct region_op rop(uint32_t op, uint32_t prot, uint64_t va, uint64_t len, long arg)
{
	struct region_op o = { .op = op, .prot = prot, .va = va, .len = len, .arg = arg };
	return o;
}

/* A one-op transaction `o` that lacks authority: refused at decode
 * (r < 0) or, should a kernel report it per op, in o->result. */
static void expect_txn(int ck, long r, const struct region_op *o, long e1, long e2)
{
	if (r < 0 || o->result == 0) {
		expect(ck, r, e1, e2);
		return;
	}
	expect(ck, o->result, e1, e2);
}

/* ---- SYS_TASK_SPAWN's extension (struct spawn_ext) ---- */

/* Addresses no task of ours has mapped (the kernel's half, non-canonical,
 * page 0, the top of the address space, the hole past init's XP page);
 * copies from them fail, and so do copies that wrap around. */
#define XP_VA 0x52000000UL              /* init: one page, mapped; the next one never is */
#define XP_HOLE (XP_VA + 4096)
#define XP_ARGS 256                     /* where argument blocks may start in it */
static const uint64_t unreadable[] = {
	8, 0xff8, 0xffffffc000000000UL, 0xffffffff80200000UL, 0x8000000000000000UL,
	~0UL - 4095, ~0UL - 7, XP_HOLE, XP_HOLE + 0x800,
};
static uint64_t unreadable_ptr(uint64_t *s) { return unreadable[rnd(s) % (sizeof unreadable / sizeof unreadable[0])]; }

/* Fill buf[0..) with a good argument block: up to SPAWN_ARGC_MAX strings of
 * nonzero bytes, each NUL-ended, SPAWN_ARGS_MAX bytes at most (now and
 * then exactly that many strings, or exactly that many bytes). Its
 * length; its string count in *argc. */
static size_t args_good(uint64_t *s, char *buf, int *argc)
{
	size_t len = 0;
	int n = (int)(rnd(s) % (SPAWN_ARGC_MAX + 1)), full = rnd(s) % 8 == 0;
	if (rnd(s) % 8 == 0)
		n = SPAWN_ARGC_MAX;
	*argc = 0;
	for (int i = 0; i < n; i++) {
		size_t l = full && i == n - 1 ? SPAWN_ARGS_MAX - 1 - len : rnd(s) % 24;
		if (len + l + 1 > SPAWN_ARGS_MAX)
			break;
		for (size_t k = 0; k < l; k++)
			buf[len + k] = (char)(1 + rnd(s) % 255);
		buf[len + l] = 0;
		len += l + 1;
		(*argc)++;
	}
	return len;
}

/* A random argument block for *e (its kernel and console fields left to
 * the caller): good (0 back, with argc and the block's CRC-32 in *argc,
 * *crc) or broken in one way, and the error SYS_TASK_SPAWN must give for
 * it: a block longer than SPAWN_ARGS_MAX or with a NULL pointer, one
 * without its last NUL, one of more than SPAWN_ARGC_MAX strings (E_INVAL);
 * one that is not readable (E_FAULT), all or (with `edge`, the end of a
 * readable page before an unmapped one: the end of buf) partly. The
 * block goes in buf, `size` bytes (more than SPAWN_ARGS_MAX). */
static long args_random(uint64_t *s, struct spawn_ext *e, char *buf, size_t size, uint64_t edge,
			int *argc, uint32_t *crc)
{
	char blk[SPAWN_ARGS_MAX];
	size_t len = args_good(s, blk, argc);
	long err = 0;
	*crc = 0;
	e->args = buf + rnd(s) % (size - SPAWN_ARGS_MAX);
	switch (rnd(s) % 10) {
	case 0:                       /* too long: the pointer does not matter */
		e->args_len = rnd(s) % 2 ? SPAWN_ARGS_MAX + 1 + rnd(s) % 4096 : rnd(s) | 1UL << 63;
		e->args = rnd(s) % 2 ? e->args : (const char *)unreadable_ptr(s);
		return -E_INVAL;
	case 1:                       /* a length and no pointer */
		e->args = NULL;
		e->args_len = 1 + rnd(s) % SPAWN_ARGS_MAX;
		return -E_INVAL;
	case 2:                       /* unreadable, or crossing into a hole */
		e->args_len = len ? len : 1 + rnd(s) % SPAWN_ARGS_MAX;
		if (edge && rnd(s) % 2 && e->args_len > 1) {
			e->args = (const char *)(edge - 1 - rnd(s) % (e->args_len - 1));
			memcpy((char *)e->args, blk, edge - (uint64_t)e->args);
		} else {
			e->args = (const char *)unreadable_ptr(s);
		}
		return -E_FAULT;
	case 3:                       /* the last string does not end */
		if (!len)
			len = 1 + rnd(s) % SPAWN_ARGS_MAX;
		for (size_t k = 0; k < len; k++)
			if (!blk[k] && rnd(s) % 2)
				blk[k] = (char)(1 + rnd(s) % 255);
		blk[len - 1] = (char)(1 + rnd(s) % 255);
		err = -E_INVAL;
		break;
	case 4: {                     /* too many strings */
		size_t n = SPAWN_ARGC_MAX + 1 + rnd(s) % (SPAWN_ARGS_MAX - SPAWN_ARGC_MAX), per = SPAWN_ARGS_MAX / n;
		len = 0;
		for (size_t i = 0; i < n; i++) {
			size_t l = rnd(s) % per;
			for (size_t k = 0; k < l; k++)
				blk[len + k] = (char)(1 + rnd(s) % 255);
			blk[len + l] = 0;
			len += l + 1;
		}
		err = -E_INVAL;
		break;
	}
	case 5:                       /* nothing: any pointer goes */
		len = 0;
		*argc = 0;
		if (rnd(s) % 2)
			e->args = rnd(s) % 2 ? NULL : (const char *)unreadable_ptr(s);
		break;
	default:
		if (edge && len && rnd(s) % 2)
			e->args = (const char *)(edge - len);    /* ends right at the hole */
		break;
	}
	e->args_len = len;
	if (len)
		memcpy((char *)e->args, blk, len);
	if (!err)
		*crc = crc32_update(0, blk, len);
	return err;
}

/* ================= the child ================= */

#define NWORKERS 3
#define SCRATCH 0x60000000UL
#define SCRATCH_LEN 0x100000UL
#define OW_VA 0x68000000UL              /* oracle window: 16 pages */
#define OW_PAGES 15                     /* those the checks use; the last maps frame B */
#define OW_END (OW_VA + 16 * 4096UL)
#define OW_B (OW_VA + 15 * 4096UL)
#define OW_DEV (OW_VA + 12 * 4096UL)    /* the device checks' mappings: pages 12 and 13 */
/* The child's own device caps, where no random call reaches (the workers
 * name slots below 2048 and the last chunk's). */
#define DEV_MMIO 4000
#define DEV_IRQ 4001
#define MO_OBJ 4002                     /* the oracle's memory object (8 pages) */
#define DEVP_VA 0x53000000UL            /* init: where it looks at a device's registers */
#define VIRTIO_MAGIC 0x74726976u
#define TXN_PAGES 8                     /* the revoke-barrier check: pages 0..7 */
#define B_MAGIC 0x4242424242424242ULL
#define LEND_VA 0x6c000000UL            /* memory lent to siblings */
#define LEND_PAGES 16
#define SWIN_VA 0x6d000000UL            /* where the server maps lent frames */

/* Slots ZONE_LO.. are never named by the random workers. */
#define ZONE_LO 34
enum {
	S_E = ZONE_LO, S_X, S_F, S_REG, S_M,        /* client: E, loanable endpoint/frame/memory, the loan */
	S_R0, S_R1, S_R2, S_RC, S_SWIN,             /* server: received loans, reply cap, own window */
	O_REG, O_FRAME, O_FRAME_RO, O_P, O_P_SO, O_P_G, O_P_M, O_PFRAME,
	O_Q, O_Q_NG, O_Q_RO, O_CQ, O_THR_NC, O_TASK_NC, O_TMP, O_FRAME_B, O_RECV, O_RC,
	O_TXN_MID, O_TXN_CAP,
	ZONE_END
};
_Static_assert(ZONE_END <= CSPACE_FIXED_SLOTS, "slot zone");
_Static_assert(ZONE_END - ZONE_LO <= ZONE_LO - 4, "slot remap");

#define OP_PING 1
#define OP_SEND 2
#define OP_LEND 3
#define OP_REVOKED 4
#define IMAGIC 0x49504321ULL
#define RMAGIC 0x52504c59ULL
#define PMAGIC 0x50494e47ULL

static uint64_t wild_ptr(uint64_t *s)
{
	static const uint64_t p[] = {
		0, 1, 8, 0x10000, 0x10001, 0xffffffc000000000UL, 0xffffffff80200000UL,
		0x7ffffffff000UL, 0x3ffffff000UL, SCRATCH, SCRATCH + 0x800, SCRATCH + SCRATCH_LEN - 8,
		0x3fffff00UL, ~0UL, ~0UL - 4095, 0x8000000000000000UL, 0x40000000UL - 16,
	};
	uint64_t r = rnd(s);
	if (r % 5 == 0)
		return rnd(s);
	return p[r % (sizeof p / sizeof p[0])];
}

/* Random calls keep off the tracked slots (out-of-range numbers stay). */
static long slotify(long v)
{
	return v >= ZONE_LO && v < ZONE_END ? v - (ZONE_LO - 4) : v;
}

/* A slot number: mostly the fixed slots and the first CSpace chunks
 * (calls that fill one add it), sometimes the last chunk and the edge
 * past it. */
static long wild_slot(uint64_t *s)
{
	uint64_t r = rnd(s);
	if (r % 16 == 0)
		return CSPACE_MAX_SLOTS - 4 + (long)(rnd(s) % 8);
	return (long)(rnd(s) % (CSPACE_FIXED_SLOTS + 4 * CSPACE_CHUNK_SLOTS));
}

static long wild_arg(uint64_t *s)
{
	uint64_t r = rnd(s) % 8;
	switch (r) {
	case 0: return wild_slot(s);
	case 1: return (long)(rnd(s) % 80) - 8;
	case 2: return (long)wild_ptr(s);
	case 3: return (long)rnd(s);
	case 4: return (long)(SCRATCH + (rnd(s) % (SCRATCH_LEN / 4096)) * 4096);
	case 5: return (long)((rnd(s) % 16) * 4096);
	case 6: return -1;
	default: return (long)(rnd(s) % 0x800);
	}
}

struct worker { uint64_t seed; long iters; volatile long done_calls; volatile long finished; };
static struct worker workers[NWORKERS];
static volatile int go, stop;
static long slot_scratch;
static long dev_w = SLOT_NONE, irq_w = SLOT_NONE;   /* the workers' copies of the device caps */
static long obj_w = SLOT_NONE;          /* the workers' copy of the memory object */
static uint64_t my_idx, n_kids, n_cpus;

static long worker_calls(void)
{
	long c = 0;
	for (int i = 0; i < NWORKERS; i++)
		c += workers[i].done_calls;
	return c;
}

static void worker_fn(void *a)
{
	struct worker *w = a;
	uint64_t s = w->seed;
	struct region_op ops[4];
	while (!go)
		sys_yield();
	for (long i = 0; i < w->iters && !stop; i++) {
		long nr = (long)(rnd(&s) % (SYS_COUNT + 2));
		if (nr == SYS_EXIT || nr == SYS_THREAD_EXIT || nr == SYS_TASK_WAIT)
			nr = SYS_YIELD;
		long a0 = wild_arg(&s), a1 = wild_arg(&s), a2 = wild_arg(&s), a3 = wild_arg(&s),
		     a4 = wild_arg(&s), a5 = wild_arg(&s);
		if (nr == SYS_REGION_TXN && rnd(&s) % 2) {
			/* A plausible transaction in the scratch window. */
			long n = 1 + (long)(rnd(&s) % 4);
			for (long k = 0; k < n; k++) {
				ops[k].op = 1 + (uint32_t)(rnd(&s) % (ROP_MAP_OBJ + 1));
				ops[k].prot = (uint32_t)(rnd(&s) % 16);
				ops[k].va = SCRATCH + (rnd(&s) % 64) * 4096;
				ops[k].len = (1 + rnd(&s) % 8) * 4096;
				ops[k].arg = slotify(wild_slot(&s));
				if (ops[k].op == ROP_MAP && rnd(&s) % 4 == 0)
					ops[k].arg = dev_w;    /* a device window, if it is still there */
				if (ops[k].op == ROP_MAP_OBJ)  /* an object, mostly ours, at some page */
					ops[k].arg = ROP_OBJ_ARG(rnd(&s) % 4 ? obj_w : ops[k].arg, rnd(&s) % 10);
			}
			a0 = rnd(&s) % 4 ? slot_scratch : a0;
			a1 = (long)SCRATCH;
			a2 = (long)(SCRATCH + SCRATCH_LEN);
			a3 = (long)ops;
			a4 = n;
		}
		if (nr == SYS_REGION_SUPPLY && rnd(&s) % 2) {
			/* A plausible supply inside the scratch window: pages
			 * other workers map, unmap and supply meanwhile. */
			long n = 1 + (long)(rnd(&s) % 16);
			a0 = slot_scratch;
			a1 = (long)(SCRATCH + (rnd(&s) % 192) * 4096);
			a2 = slot_scratch;
			a3 = (long)(SCRATCH + (rnd(&s) % 192) * 4096);
			a4 = n;
			a5 = (long)(1 + rnd(&s) % 7);
		}
		if (nr == SYS_DMA_ADDR && rnd(&s) % 2)
			a0 = dev_w;
		if (nr == SYS_MOBJ_CREATE && rnd(&s) % 2) {
			a0 = (long)(rnd(&s) % 64);          /* small: the quota lasts */
			a2 = rnd(&s) % 2 ? SLOT_NONE : a2;
			/* flags: mostly none, some MOBJ_ASYNC, some junk (E_INVAL) */
			a3 = rnd(&s) % 4 ? 0 : rnd(&s) % 2 ? (long)MOBJ_ASYNC : (long)rnd(&s);
		}
		if (nr == SYS_MOBJ_SUPPLY && rnd(&s) % 2) {
			a0 = obj_w;
			a1 = (long)(rnd(&s) % 10);
			a2 = slot_scratch;
			a3 = (long)(SCRATCH + (rnd(&s) % 192) * 4096);
			a4 = 1 + (long)(rnd(&s) % 16);
		}
		if (nr == SYS_MOBJ_OP && rnd(&s) % 2) {
			a0 = obj_w;
			a1 = (long)(rnd(&s) % 7);           /* 0, the ops, MOBJ_KILL, one past */
			a2 = (long)(rnd(&s) % 10);
			a3 = (long)(rnd(&s) % 10);
		}
		if ((nr == SYS_IRQ_BIND || nr == SYS_IRQ_ACK) && rnd(&s) % 2)
			a0 = irq_w;
		if (nr == SYS_DEVICE_INFO && rnd(&s) % 2)
			a2 = (long)SCRATCH + (long)(rnd(&s) % 64) * 8;
		if (nr == SYS_PUTS) {
			/* We hold no console cap; the buffer is one that must fail
			 * or print nothing anyway. */
			static const uint64_t badp[] = { 0, 8, 0xffffffc000000000UL, 0x7ffffffff000UL,
							 ~0UL - 4095, 0x3ffffff000UL };
			a1 = (long)badp[rnd(&s) % 6];
			if (rnd(&s) % 3 == 0)
				a2 = 0;
		}
		if ((nr == SYS_CALL || nr == SYS_RECV || nr == SYS_REPLY_RECV || nr == SYS_SEND) &&
		    rnd(&s) % 4)
			nr = SYS_CAP_INFO;       /* keep most calls non-blocking */
		if (nr == SYS_RECV_TIMED || nr == SYS_CALL_TIMED) {
			/* a6 is the timeout: a short one, or a bad one (0, too long). */
			static const uint64_t bad_us[] = { 0, 3600000001ULL, ~0ULL };
			uint64_t w4[4] = { (uint64_t)a1, (uint64_t)a2, (uint64_t)a3, (uint64_t)a4 };
			uint64_t us = rnd(&s) % 4 ? 1 + rnd(&s) % 20000 : bad_us[rnd(&s) % 3];
			ipc_timed(nr, slotify(a0), w4, slotify(a5), us);
			w->done_calls++;
			continue;
		}
		if (nr == SYS_CAP_INFO && rnd(&s) % 2)
			a1 = (long)SCRATCH + (long)(rnd(&s) % 100) * 8;
		if (nr == SYS_TASK_SPAWN) {
			/* a6: none, a wild pointer, or a wild extension. */
			struct spawn_ext e = { (const char *)wild_ptr(&s), rnd(&s) % 4 ? rnd(&s) % 1024 : rnd(&s),
					       slotify(wild_slot(&s)), slotify(wild_slot(&s)) };
			long a6 = rnd(&s) % 3 == 0 ? 0 : rnd(&s) % 2 ? (long)wild_ptr(&s) : (long)&e;
			sc7(nr, slotify(a0), slotify(a1), slotify(a2), slotify(a3), slotify(a4), slotify(a5), a6);
			w->done_calls++;
			continue;
		}
		a0 = slotify(a0);
		a1 = slotify(a1);
		a2 = slotify(a2);
		a3 = slotify(a3);
		a4 = slotify(a4);
		a5 = slotify(a5);
		sc6(nr, a0, a1, a2, a3, a4, a5);
		w->done_calls++;
	}
	w->finished = 1;
}

/* Threads that may block in a call that should have been refused say so:
 * still inside one long after the workers are done counts as accepted. */
enum { T_ORACLE, T_SERVER, NTRACK };
static volatile int inflight_ck[NTRACK];
static volatile uint64_t inflight_t[NTRACK];
static void inflight(int t, int ck)
{
	inflight_t[t] = rdtime();
	__atomic_store_n(&inflight_ck[t], ck + 1, __ATOMIC_RELEASE);
}
static void inflight_end(int t) { __atomic_store_n(&inflight_ck[t], 0, __ATOMIC_RELEASE); }

/* ---- server: receives on E from any sibling ---- */
struct held { int valid; uint64_t from, seq; };
static const long srv_slot[3] = { S_R0, S_R1, S_R2 };

static unsigned op_need(uint32_t op)
{
	switch (op) {
	case ROP_QUERY: return R_QUERY;
	case ROP_MAP: return R_MAP;
	case ROP_MARK: case ROP_MARK_INVALID: return R_MARK;
	default: return R_UNMAP;
	}
}

/* Use a cap a sibling lent us; where its rights forbid the use, that is
 * an authority check across tasks. */
static void use_loan(long slot, uint64_t *s)
{
	struct cap_info ci;
	if (cap_info(slot, &ci))
		return;
	uint64_t w[4] = { 0 };
	if (ci.type == CAP_FRAME) {
		int wr = (int)(rnd(s) % 2);
		struct region_op o = rop(ROP_MAP, PROT_R | (wr ? PROT_W : 0), SWIN_VA, 0, slot);
		long r = region_txn(S_SWIN, SWIN_VA, SWIN_VA + 4096, &o, 1);
		if (wr && !(ci.rights & R_WRITE))
			expect_txn(CK_XT_RIGHTS, r, &o, E_PERM, 0);
		if (r == 1) {
			(void)*(volatile uint64_t *)SWIN_VA;
			if (wr)
				*(volatile uint64_t *)(SWIN_VA + 8 * (rnd(s) % 512)) = rnd(s);
		}
		o = rop(ROP_UNMAP, 0, SWIN_VA, 4096, 0);
		region_txn(S_SWIN, SWIN_VA, SWIN_VA + 4096, &o, 1);
	} else if (ci.type == CAP_REGION) {
		uint64_t pages = (ci.hi - ci.lo) / 4096;
		if (!pages)
			return;
		uint64_t va = ci.lo + (rnd(s) % pages) * 4096;
		uint32_t opn = 1 + (uint32_t)(rnd(s) % 5);
		uint32_t prot = PROT_R | (rnd(s) % 2 ? PROT_W : 0);
		struct region_op o = rop(opn, prot, va, 4096, S_F);
		long r = region_txn(slot, ci.lo, ci.hi, &o, 1);
		unsigned need = op_need(opn);
		if (opn == ROP_MAP || opn == ROP_MARK)      /* ops that give pages permissions */
			need |= R_READ | (prot & PROT_W ? R_WRITE : 0);
		if ((ci.rights & need) != need)
			expect_txn(CK_XT_RIGHTS, r, &o, E_PERM, E_DEAD);
	} else if (ci.type == CAP_ENDPOINT) {
		struct sysret r;
		if (!(ci.rights & R_RECV) && rnd(s) % 2) {
			inflight(T_SERVER, CK_XT_RIGHTS);
			r = ipc(SYS_RECV, slot, w, SLOT_NONE);
			inflight_end(T_SERVER);
			expect(CK_XT_RIGHTS, r.a0, E_PERM, 0);
		} else if (!(ci.rights & R_SEND)) {
			inflight(T_SERVER, CK_XT_RIGHTS);
			r = ipc(rnd(s) % 2 ? SYS_SEND : SYS_CALL, slot, w, SLOT_NONE);
			inflight_end(T_SERVER);
			expect(CK_XT_RIGHTS, r.a0, E_PERM, 0);
		} else if (!(ci.rights & R_GRANT)) {
			inflight(T_SERVER, CK_XT_RIGHTS);
			r = ipc(SYS_SEND, slot, w, S_F);
			inflight_end(T_SERVER);
			expect(CK_XT_RIGHTS, r.a0, E_PERM, 0);
		}
	}
}

static void server_fn(void *a)
{
	uint64_t s = (uint64_t)a;
	struct held h[3] = { { 0, 0, 0 } };
	int next = 0;
	uint64_t w[4] = { 0 };
	while (!go)
		sys_yield();
	cap_delete(srv_slot[next]);
	struct sysret r = ipc(SYS_RECV, S_E, w, srv_slot[next]);
	while (!stop) {
		if (r.a0) {
			if (r.a0 == -E_BADCAP || r.a0 == -E_PERM)
				return;          /* init revoked our E */
			sys_yield();
			r = ipc(SYS_RECV, S_E, w, srv_slot[next]);
			continue;
		}
		uint64_t op = (uint64_t)r.a1 & 0xff, from = ((uint64_t)r.a1 >> 8) & 0xff;
		uint64_t seq = (uint64_t)r.a2;
		int is_call = (int)(((uint64_t)r.a1 >> 16) & 1);
		if ((uint64_t)r.a3 != (IMAGIC ^ seq) || (uint64_t)r.a5 != from + 1 || from >= n_kids)
			note_viol(CK_IPC);
		if (r.a6 & IPC_GOT_CAP) {
			h[next] = (struct held){ 1, from, seq };
			use_loan(srv_slot[next], &s);
			next = (next + 1) % 3;
		}
		if (op == OP_REVOKED && ((uint64_t)r.a4 & 0xff) == my_idx) {
			uint64_t lseq = (uint64_t)r.a4 >> 8;
			for (int k = 0; k < 3; k++) {
				if (!h[k].valid || h[k].from != from || h[k].seq != lseq)
					continue;
				struct cap_info ci;
				long q = cap_info(srv_slot[k], &ci);
				expect(CK_XT_REVOKED, q, E_BADCAP, 0);
				cap_delete(srv_slot[k]);
				h[k].valid = 0;
			}
		}
		/* The slot for the next loan must be empty. */
		cap_delete(srv_slot[next]);
		h[next].valid = 0;
		uint64_t rw[4] = { RMAGIC, seq, my_idx, from };
		int how = is_call ? (int)(rnd(&s) % 4) : 0;
		if (how == 0) {
			r = ipc(SYS_REPLY_RECV, S_E, rw, srv_slot[next]);
		} else if (how == 1) {
			ipc(SYS_REPLY, 0, rw, SLOT_NONE);
			r = ipc(SYS_RECV, S_E, w, srv_slot[next]);
		} else {
			cap_delete(S_RC);
			if (sc1(SYS_REPLY_SAVE, S_RC) == 0) {
				for (int k = (int)(rnd(&s) % 4); how == 3 && k > 0; k--)
					sys_yield();     /* the caller waits on a saved reply */
				ipc(SYS_REPLY_CAP, S_RC, rw, 0);
			}
			r = ipc(SYS_RECV, S_E, w, srv_slot[next]);
		}
	}
}

/* ---- client: calls E, lends and revokes ---- */
static void client_fn(void *a)
{
	uint64_t s = (uint64_t)a;
	uint64_t seq = 0, lend_seq = 0, lend_to = 0;
	int lending = 0;
	while (!go)
		sys_yield();
	while (!stop) {
		seq++;
		unsigned act = (unsigned)(rnd(&s) % 12);
		uint64_t op = OP_PING, extra = 0;
		long xfer = SLOT_NONE;
		int call = 1;
		if (act == 0) {
			op = OP_SEND;
			call = 0;
		} else if (act <= 4 && !lending) {
			long r;
			cap_delete(S_M);
			switch (rnd(&s) % 3) {
			case 0: {
				unsigned rights = 0;
				while (!rights)
					rights = (unsigned)(rnd(&s) % 8) * R_SEND & (R_SEND | R_RECV | R_GRANT);
				r = cap_mint(S_X, S_M, rights, (rnd(&s) & 0xffff) | 1, 0, 0);
				break;
			}
			case 1:
				r = cap_mint(S_F, S_M, R_READ | (rnd(&s) % 2 ? R_WRITE : 0) | (rnd(&s) % 2 ? R_SHARE : 0),
					     0, 0, 0);
				break;
			default: {
				uint64_t p0 = rnd(&s) % LEND_PAGES, p1 = p0 + 1 + rnd(&s) % (LEND_PAGES - p0);
				unsigned rights = (unsigned)(rnd(&s) % 16) * R_QUERY | (unsigned)(rnd(&s) % 4) * R_READ;
				r = cap_mint(S_REG, S_M, rights, 0, LEND_VA + p0 * 4096, LEND_VA + p1 * 4096);
				break;
			}
			}
			if (r)
				continue;
			op = OP_LEND;
			xfer = S_M;
		} else if (act <= 6 && lending) {
			/* Take the loan back from whoever holds it, then tell them. */
			cap_revoke(S_M);
			cap_delete(S_M);
			lending = 0;
			__atomic_fetch_add(&sh->revokes, 1, __ATOMIC_RELAXED);
			op = OP_REVOKED;
			extra = lend_to | lend_seq << 8;
		} else if (act == 7 && lending) {
			cap_delete(S_M);     /* the loan stays, under our root */
			lending = 0;
			continue;
		} else if (act == 8 && rnd(&s) % 8 == 0) {
			static const long roots[3] = { S_X, S_F, S_REG };
			cap_revoke(roots[rnd(&s) % 3]);   /* every loan of it, anywhere */
			cap_delete(S_M);
			lending = 0;
			continue;
		}
		uint64_t w[4] = { op | my_idx << 8 | (uint64_t)call << 16, seq, IMAGIC ^ seq, extra };
		struct sysret r = ipc(call ? SYS_CALL : SYS_SEND, S_E, w, xfer);
		if (r.a0 == 0) {
			__atomic_fetch_add(&sh->ipc_ok, 1, __ATOMIC_RELAXED);
			if (call) {
				if ((uint64_t)r.a1 != RMAGIC || (uint64_t)r.a2 != seq || (uint64_t)r.a4 != my_idx ||
				    (uint64_t)r.a3 >= n_kids)
					note_viol(CK_IPC);
			}
			if (op == OP_LEND) {
				lending = 1;
				lend_seq = seq;
				lend_to = (uint64_t)r.a3 & 0xff;
				__atomic_fetch_add(&sh->lends, 1, __ATOMIC_RELAXED);
			}
		} else {
			if (op == OP_LEND)
				cap_delete(S_M);
			if (r.a0 == -E_BADCAP || r.a0 == -E_PERM)
				return;          /* init revoked our E */
			sys_yield();
		}
	}
}

/* ---- oracle helpers ---- */
static volatile uint64_t ping_armed;     /* the pinger's call in flight (its gen), 0 none */
static volatile int pinger_dead;

/* Calls O_P through its own SEND|GRANT mint O_P_M, lending a frame cap. */
static void pinger_fn(void *a)
{
	(void)a;
	uint64_t gen = 0;
	while (!stop) {
		struct cap_info ci;
		if (cap_info(O_P_M, &ci) && cap_mint(O_P_G, O_P_M, R_SEND | R_GRANT, 0, 0, 0)) {
			sys_yield();
			continue;
		}
		uint64_t w[4] = { PMAGIC, ++gen, 0, 0 };
		__atomic_store_n(&ping_armed, gen, __ATOMIC_RELEASE);
		struct sysret r = ipc(SYS_CALL, O_P_M, w, O_PFRAME);
		__atomic_store_n(&ping_armed, 0, __ATOMIC_RELEASE);
		if (r.a0)
			sys_yield();
	}
}

/* Receives on Q whatever should never have been sent there. */
static void catcher_fn(void *a)
{
	(void)a;
	uint64_t w[4] = { 0 };
	cap_delete(O_CQ);
	struct sysret r = ipc(SYS_RECV, O_Q, w, O_CQ);
	while (!stop) {
		cap_delete(O_CQ);
		if (r.a0) {
			sys_yield();
			r = ipc(SYS_RECV, O_Q, w, O_CQ);
		} else {
			r = ipc(SYS_REPLY_RECV, O_Q, w, O_CQ);
		}
	}
}

/* On command: one transaction that remaps pages 0..7 of the oracle window
 * from frame A (zeros) to frame B (B_MAGIC), unmap then map, page by page. */
static volatile uint64_t txn_cmd, txn_started, txn_done;
static volatile long txn_result;
static void txn_fn(void *a)
{
	(void)a;
	uint64_t seen = 0;
	struct region_op ops[2 * TXN_PAGES];
	while (!stop) {
		uint64_t c = __atomic_load_n(&txn_cmd, __ATOMIC_ACQUIRE);
		if (c == seen) {
			sys_yield();
			continue;
		}
		seen = c;
		for (int i = 0; i < TXN_PAGES; i++) {
			ops[2 * i] = rop(ROP_UNMAP, 0, OW_VA + (uint64_t)i * 4096, 4096, 0);
			ops[2 * i + 1] = rop(ROP_MAP, PROT_R, OW_VA + (uint64_t)i * 4096, 0, O_FRAME_B);
		}
		__atomic_store_n(&txn_started, c, __ATOMIC_RELEASE);
		long r = region_txn(O_TXN_CAP, OW_VA, OW_VA + TXN_PAGES * 4096UL, ops, 2 * TXN_PAGES);
		txn_result = r;
		__atomic_store_n(&txn_done, c, __ATOMIC_RELEASE);
	}
}

static void stray(void)
{
	for (;;)
		sc0(SYS_THREAD_EXIT);
}
static uint64_t stray_stack[64] __attribute__((aligned(16)));

static int wait_for(volatile uint64_t *v, uint64_t want, uint64_t ticks)
{
	uint64_t until = rdtime() + ticks;
	while (__atomic_load_n(v, __ATOMIC_ACQUIRE) != want) {
		if (rdtime() > until)
			return 0;
		sys_yield();
	}
	return 1;
}

static uint64_t wait_armed(void)
{
	uint64_t until = rdtime() + TPS;
	for (;;) {
		if (stop || pinger_dead || rdtime() > until)
			return 0;
		uint64_t g = __atomic_load_n(&ping_armed, __ATOMIC_ACQUIRE);
		if (g)
			return g;
		sys_yield();
	}
}

/* Leave the checks' pages of the oracle window empty: unmap each page,
 * then no reservation. */
static void ow_reset(void)
{
	struct region_op ops[OW_PAGES];
	for (int i = 0; i < OW_PAGES; i++)
		ops[i] = rop(ROP_UNMAP, 0, OW_VA + (uint64_t)i * 4096, 4096, 0);
	region_txn(O_REG, OW_VA, OW_END, ops, OW_PAGES);
	ops[0] = rop(ROP_MARK_INVALID, 0, OW_VA, OW_PAGES * 4096UL, 0);
	region_txn(O_REG, OW_VA, OW_END, ops, 1);
}

static void reap_task(long slot)
{
	task_kill(slot);
	task_wait(slot);
	cap_delete(slot);
}

static void ck_nocap(uint64_t *s)
{
	/* Slots that hold no console/kernel cap: empty, out of range, a
	 * pointer's value, or a cap of another type. */
	long bad[5];
	bad[0] = SLOT_CONSOLE;
	bad[1] = SLOT_KERNEL;
	bad[2] = O_FRAME;
	bad[3] = 70 + (long)(rnd(s) % 1000);
	bad[4] = (long)ck_name;
	long slot = bad[rnd(s) % 5];
	long r;
	switch (rnd(s) % 4) {
	case 0:
		/* (slot, 0, 0): on a kernel that still read (buf, len) this
		 * would write 0 bytes from `slot` and succeed. */
		r = sc3(SYS_PUTS, slot, 0, 0);
		expect(CK_PUTS, r, E_BADCAP, 0);
		break;
	case 1:
		r = sc1(SYS_GETC, slot);
		expect(CK_GETC, r == -E_AGAIN ? 0 : r, E_BADCAP, 0);   /* E_AGAIN: it looked */
		break;
	case 2:
		r = sc6(SYS_DEBUG, slot == SLOT_KERNEL ? O_TASK_NC : slot, DBG_NCPUS, 0, 0, 0, 0);
		expect(CK_DEBUG, r, E_BADCAP, 0);
		break;
	default: {
		/* With no extension, or a random one (checked first or not,
		 * its own error is as good a refusal). */
		static char xbuf[4096];
		struct spawn_ext e = { .kernel = SLOT_NONE, .console = SLOT_NONE };
		int argc;
		uint32_t crc;
		long xerr = 0, ext = 0;
		if (rnd(s) % 2) {
			xerr = args_random(s, &e, xbuf, sizeof xbuf, 0, &argc, &crc);
			e.kernel = rnd(s) % 2 ? SLOT_NONE : wild_slot(s);
			e.console = rnd(s) % 2 ? SLOT_NONE : wild_slot(s);
			ext = rnd(s) % 8 ? (long)&e : (long)unreadable_ptr(s);
			if (ext != (long)&e)
				xerr = -E_FAULT;
		}
		cap_delete(O_TMP);
		r = sc7(SYS_TASK_SPAWN, slot, self_module(), ROLE_NOP, O_TMP, QUOTA(32, 1, 0, 0), SLOT_NONE, ext);
		expect(CK_SPAWN, r, E_BADCAP, -xerr);
		if (r >= 0)
			reap_task(O_TMP);
		break;
	}
	}
}

static void ck_region(uint64_t *s)
{
	static const unsigned rr[5] = { R_QUERY, R_MAP, R_MARK, R_UNMAP, R_PROTECT };
	struct region_op ops[2];
	long r;
	uint64_t pg = rnd(s) % OW_PAGES, va = OW_VA + pg * 4096;
	switch (rnd(s) % 6) {
	case 0: {
		/* Through a mint that lacks the op's right (over a sub-range);
		 * it has every page right, so only the op right is missing. */
		unsigned have = (unsigned)(rnd(s) % 16) * R_QUERY | (rnd(s) % 2 ? R_PROTECT : 0) |
				R_READ | R_WRITE | R_EXEC;
		int miss = (int)(rnd(s) % 5);
		have &= ~rr[miss];
		uint64_t p0 = rnd(s) % OW_PAGES, p1 = p0 + 1 + rnd(s) % (OW_PAGES - p0);
		uint64_t lo = OW_VA + p0 * 4096, hi = OW_VA + p1 * 4096;
		va = lo + (rnd(s) % (p1 - p0)) * 4096;
		cap_delete(O_TMP);
		r = cap_mint(O_REG, O_TMP, have, 0, lo, hi);
		if (r) {
			note_mism(CK_SETUP, r);
			return;
		}
		int n = 0;
		if (have & R_QUERY && rnd(s) % 2)
			ops[n++] = rop(ROP_QUERY, 0, lo, 0, 0);    /* a permitted op first */
		switch (miss) {
		case 0: ops[n++] = rop(rnd(s) % 2 ? ROP_QUERY : ROP_AGE, 0, va, 0, 0); break;
		case 1:
			ops[n++] = rnd(s) % 2 ? rop(ROP_MAP, PROT_R, va, 0, O_FRAME) :
						rop(ROP_MAP_OBJ, PROT_R, va, 4096, ROP_OBJ_ARG(MO_OBJ, 0));
			break;
		case 2: {
			static const uint32_t mk[4] = { ROP_MARK, ROP_MARK_INVALID, ROP_MARK_PAGER, ROP_MARK_SWAPPED };
			uint32_t o = mk[rnd(s) % 4];
			ops[n++] = rop(o, o == ROP_MARK_SWAPPED ? 0 : PROT_R, va, 4096, 7);
			break;
		}
		case 3:
			if (rnd(s) % 2)
				ops[n++] = rop(ROP_UNMAP, 0, va, 4096, 0);
			else
				ops[n++] = rop(ROP_EVICT, 0, va, 0, O_RECV);
			break;
		default: {
			static const uint32_t pt[3] = { ROP_PROTECT, ROP_AGE, ROP_CLEAN };
			uint32_t o = pt[rnd(s) % 3];
			ops[n++] = rop(o, o == ROP_PROTECT ? PROT_R : 0, va, o == ROP_AGE ? 0 : 4096, 0);
			break;
		}
		}
		if (miss == 0 && rnd(s) % 3 == 0) {
			/* the bitmap query needs R_QUERY too */
			static uint64_t bm[3 * REGION_BITMAP_WORDS(0, OW_PAGES * 4096UL)];
			r = region_bitmap(O_TMP, lo, hi, bm, 0);
			expect(CK_REGION_RIGHTS, r, E_PERM, 0);
			cap_delete(O_TMP);
			break;
		}
		r = region_txn(O_TMP, lo, hi, ops, n);
		expect_txn(CK_REGION_RIGHTS, r, &ops[n - 1], E_PERM, 0);
		cap_delete(O_TMP);
		break;
	}
	case 4: {
		/* MAP or MARK giving a page more than the region's READ/WRITE/
		 * EXEC allow (never W and X together: that is the W^X check). */
		static const unsigned pr[3] = { R_READ, R_WRITE, R_EXEC };
		static const uint32_t pp[3] = { PROT_R, PROT_R | PROT_W, PROT_R | PROT_X };
		int miss = (int)(rnd(s) % 3);
		unsigned have = R_QUERY | R_MAP | R_MARK | R_UNMAP | R_PROTECT | (R_READ | R_WRITE | R_EXEC);
		have &= ~pr[miss];
		cap_delete(O_TMP);
		r = cap_mint(O_REG, O_TMP, have, 0, OW_VA, OW_VA + OW_PAGES * 4096UL);
		if (r) {
			note_mism(CK_SETUP, r);
			return;
		}
		switch (rnd(s) % 4) {
		case 0: ops[0] = rop(ROP_MAP, pp[miss], va, 0, O_FRAME); break;
		case 1: ops[0] = rop(ROP_MARK, pp[miss], va, 4096, 0); break;
		case 2: ops[0] = rop(ROP_MARK_PAGER, pp[miss], va, 4096, 7); break;
		default: ops[0] = rop(ROP_PROTECT, pp[miss], va, 4096, 0); break;
		}
		r = region_txn(O_TMP, OW_VA, OW_VA + OW_PAGES * 4096UL, ops, 1);
		expect_txn(CK_PAGE_RIGHTS, r, &ops[0], E_PERM, 0);
		cap_delete(O_TMP);
		break;
	}
	case 5:
		/* Frame B is mapped (at OW_B): a second mapping needs SHARE. */
		cap_delete(O_TMP);
		r = cap_mint(O_FRAME_B, O_TMP, R_READ | R_WRITE, 0, 0, 0);
		if (r) {
			note_mism(CK_SETUP, r);
			return;
		}
		ops[0] = rop(ROP_MAP, PROT_R, va, 0, O_TMP);
		r = region_txn(O_REG, OW_VA, OW_END, ops, 1);
		expect_txn(CK_SHARE, r, &ops[0], E_PERM, 0);
		cap_delete(O_TMP);
		break;
	case 1:
		/* A read-only frame mapped writable (not copy-on-write). */
		ops[0] = rop(ROP_MAP, PROT_R | PROT_W, va, 0, O_FRAME_RO);
		r = region_txn(O_REG, OW_VA, OW_END, ops, 1);
		expect_txn(CK_MAP_RO, r, &ops[0], E_PERM, 0);
		break;
	case 2:
		/* W^X */
		if (rnd(s) % 2)
			ops[0] = rop(ROP_MAP, PROT_R | PROT_W | PROT_X, va, 0, O_FRAME);
		else
			ops[0] = rop(ROP_MARK, PROT_R | PROT_W | PROT_X, va, 4096, 0);
		r = region_txn(O_REG, OW_VA, OW_END, ops, 1);
		expect_txn(CK_WX, r, &ops[0], E_INVAL, 0);
		break;
	default: {
		/* Map, query, unmap: the query must not say where the frame is. */
		struct region_op q[3] = {
			rop(ROP_MAP, PROT_R, va, 0, O_FRAME_RO), rop(ROP_QUERY, 0, va, 0, 0),
			rop(ROP_UNMAP, 0, va, 4096, 0),
		};
		r = region_txn(O_REG, OW_VA, OW_END, q, 3);
		if (r < 0) {
			note_mism(CK_QUERY_PA, r);
		} else if (q[0].result == 0 && q[1].result == 0) {
			note_check();
			if (q[1].out_kind != RK_MAPPED)
				note_mism(CK_QUERY_PA, -1000 - (long)q[1].out_kind);
			else if (q[1].out_tag != 0)
				note_viol(CK_QUERY_PA);
		}
		break;
	}
	}
	if (r >= 0)
		ow_reset();
}

static void ck_mint(uint64_t *s)
{
	static const long fx[] = { O_REG, O_FRAME_RO, O_P_SO, O_P_G, O_Q_NG, O_Q_RO, O_THR_NC, O_TASK_NC };
	struct cap_info ci;
	long r;
	cap_delete(O_TMP);
	if (rnd(s) % 3 == 0) {
		/* A region mint past the parent's range. */
		uint64_t lo = OW_VA, hi = OW_END;
		switch (rnd(s) % 3) {
		case 0: lo -= 4096 * (1 + rnd(s) % 4); break;
		case 1: hi += 4096 * (1 + rnd(s) % 4); break;
		default: lo = OW_END; hi = OW_END + 4096; break;
		}
		r = cap_mint(O_REG, O_TMP, R_QUERY, 0, lo, hi);
		expect(CK_MINT_RANGE, r, E_PERM, E_RANGE);
	} else {
		long src = fx[rnd(s) % (sizeof fx / sizeof fx[0])];
		if ((r = cap_info(src, &ci)) != 0) {
			note_mism(CK_SETUP, r);
			return;
		}
		unsigned extra = R_ALL & ~ci.rights;
		if (!extra)
			return;
		unsigned bit;
		do
			bit = 1u << (rnd(s) % 16);
		while (!(extra & bit));
		unsigned rights = (ci.rights & (unsigned)rnd(s)) | bit;
		if (ci.type == CAP_REGION)
			r = cap_mint(src, O_TMP, rights, 0, ci.lo, ci.hi);
		else
			r = cap_mint(src, O_TMP, rights, 0, 0, 0);
		expect(CK_MINT_RIGHTS, r, E_PERM, 0);
	}
	if (r >= 0)
		cap_delete(O_TMP);
}

static void ck_endpoint(uint64_t *s)
{
	uint64_t w[4] = { 1, 2, 3, 4 };
	struct sysret r;
	switch (rnd(s) % 3) {
	case 0: {
		/* Receive through a send-only mint while the pinger waits there. */
		if (!wait_armed())
			return;
		int rr = (int)(rnd(s) % 2);
		cap_delete(O_RECV);
		inflight(T_ORACLE, CK_RECV_SO);
		r = ipc(rr ? SYS_REPLY_RECV : SYS_RECV, O_P_SO, w, O_RECV);
		inflight_end(T_ORACLE);
		expect(CK_RECV_SO, r.a0, E_PERM, 0);
		if (r.a0 == 0) {
			ipc(SYS_REPLY, 0, w, SLOT_NONE);
			cap_delete(O_RECV);
		}
		break;
	}
	case 1:
		/* Send or call through a receive-only mint (the catcher waits). */
		inflight(T_ORACLE, CK_SEND_RO);
		r = ipc(rnd(s) % 2 ? SYS_SEND : SYS_CALL, O_Q_RO, w, SLOT_NONE);
		inflight_end(T_ORACLE);
		expect(CK_SEND_RO, r.a0, E_PERM, 0);
		break;
	default:
		/* A cap through a mint without GRANT. */
		inflight(T_ORACLE, CK_GRANT);
		r = ipc(rnd(s) % 2 ? SYS_SEND : SYS_CALL, O_Q_NG, w, rnd(s) % 2 ? O_FRAME_RO : O_Q_RO);
		inflight_end(T_ORACLE);
		expect(CK_GRANT, r.a0, E_PERM, 0);
		break;
	}
}

/* Take the pinger's call, save its reply cap, try to copy, mint or send
 * it, answer through it, then use it again. */
static void ck_reply(uint64_t *s)
{
	uint64_t w[4] = { 0 };
	if (!wait_armed())
		return;
	cap_delete(O_RECV);
	cap_delete(O_RC);
	cap_delete(O_TMP);
	struct sysret m = ipc(SYS_RECV, O_P, w, O_RECV);
	if (m.a0) {
		note_mism(CK_SETUP, m.a0);
		return;
	}
	if ((uint64_t)m.a1 != PMAGIC || m.a5 != 0)
		note_viol(CK_IPC);
	cap_delete(O_RECV);
	long r = sc1(SYS_REPLY_SAVE, O_RC);
	if (r) {
		note_mism(CK_SETUP, r);
		ipc(SYS_REPLY, 0, w, SLOT_NONE);
		return;
	}
	switch (rnd(s) % 3) {
	case 0:
		r = cap_copy(O_RC, O_TMP);
		expect(CK_REPLY_COPY, r, E_PERM, 0);
		break;
	case 1:
		r = cap_mint(O_RC, O_TMP, 0, 0, 0, 0);
		expect(CK_REPLY_COPY, r, E_PERM, 0);
		break;
	default:
		inflight(T_ORACLE, CK_REPLY_XFER);
		r = ipc(rnd(s) % 2 ? SYS_SEND : SYS_CALL, O_Q, w, O_RC).a0;
		inflight_end(T_ORACLE);
		expect(CK_REPLY_XFER, r, E_PERM, 0);
		break;
	}
	cap_delete(O_TMP);     /* a copy, if one was made (its call then fails) */
	struct sysret a = ipc(SYS_REPLY_CAP, O_RC, w, 0);
	if (a.a0 && a.a0 != -E_DEAD)
		note_mism(CK_REPLY_ONESHOT, a.a0);
	a = ipc(SYS_REPLY_CAP, O_RC, w, 0);
	expect(CK_REPLY_ONESHOT, a.a0, E_BADCAP, 0);
}

static int task_kill_tried;
static void ck_control(uint64_t *s)
{
	long r;
	cap_delete(O_TMP);
	switch (rnd(s) % 9) {
	case 8:
		/* A death notice of our own task, through a task cap without
		 * CONTROL, to an endpoint we may send to. */
		r = sc2(SYS_TASK_NOTIFY, O_TASK_NC, O_P_SO);
		expect(CK_TASK_NOTIFY, r, E_PERM, 0);
		if (r >= 0)
			sc2(SYS_TASK_NOTIFY, O_TASK_NC, SLOT_NONE);
		break;
	case 4: {
		/* A fault endpoint set through a task or thread cap without
		 * CONTROL, synchronous or asynchronous. (We hold no task cap
		 * with CONTROL here, so the endpoint-without-SEND rule is
		 * pg_fault_ep_rights's.) Or an asynchronous fault refused
		 * through a region mint without MAP. */
		struct cap_info ti, ci;
		long tgt = rnd(s) % 2 || cap_info(O_THR_NC, &ti) ? O_TASK_NC : O_THR_NC;
		switch (rnd(s) % 3) {
		case 0:
			r = sc2(SYS_FAULT_EP_SET, tgt, O_P_SO);
			expect(CK_FAULT_EP, r, E_PERM, 0);
			break;
		case 1:
			r = sc3(SYS_FAULT_EP_SETF, tgt, O_P_SO, FAULT_EP_ASYNC);
			expect(CK_FAULT_EP, r, E_PERM, 0);
			break;
		default:
			r = cap_info(O_REG, &ci);
			r = r ? r : cap_mint(O_REG, O_TMP, ci.rights & ~R_MAP, 0, OW_VA, OW_END);
			if (r) {
				note_mism(CK_SETUP, r);
				return;
			}
			r = sc2(SYS_FAULT_KILL, O_TMP, OW_VA + (rnd(s) % 16) * 4096);
			expect(CK_FAULT_KILL, r, E_PERM, 0);
			break;
		}
		break;
	}
	case 5:
		r = sc3(SYS_TASK_CREATE, O_TASK_NC, O_TMP, QUOTA(16, 1, 0, 0));
		expect(CK_TASK_CREATE, r, E_PERM, 0);
		if (r >= 0)
			reap_task(O_TMP);
		break;
	case 6:
	case 7: {
		/* A clone through a mint that lacks QUERY or MAP (source) or
		 * MAP (target). */
		struct clone_stats st;
		struct cap_info ci;
		int src_side = (int)(rnd(s) % 2);
		r = cap_info(O_REG, &ci);
		unsigned have = ci.rights & ~(src_side && rnd(s) % 2 ? R_QUERY : R_MAP);
		r = r ? r : cap_mint(O_REG, O_TMP, have, 0, OW_VA, OW_END);
		if (r) {
			note_mism(CK_SETUP, r);
			return;
		}
		r = src_side ? sc6(SYS_REGION_CLONE, O_TMP, O_REG, OW_VA, OW_END, (long)&st, 0)
			     : sc6(SYS_REGION_CLONE, O_REG, O_TMP, OW_VA, OW_END, (long)&st, 0);
		expect(CK_CLONE, r, E_PERM, 0);
		break;
	}
	case 0:
		if (pinger_dead)
			return;
		r = sc1(SYS_THREAD_KILL, O_THR_NC);
		expect(CK_THREAD_KILL, r, E_PERM, 0);
		if (r >= 0)
			pinger_dead = 1;
		break;
	case 1:
		r = task_region(O_TASK_NC, O_TMP);
		expect(CK_TASK_CTL, r, E_PERM, 0);
		break;
	case 2:
		r = sc6(SYS_THREAD_CREATE, O_TASK_NC, (long)stray, (long)(stray_stack + 64), 0, O_TMP,
			1L << 16);
		expect(CK_TASK_CTL, r, E_PERM, 0);
		break;
	default:
		/* Once per child, rarely: should it work, we die here and init
		 * sees status 137 with this check in flight. */
		if (task_kill_tried || rnd(s) % 16)
			return;
		task_kill_tried = 1;
		sh->inflight = CK_TASK_KILL + 1;
		r = task_kill(O_TASK_NC);
		sh->inflight = 0;
		expect(CK_TASK_KILL, r, E_PERM, 0);
		break;
	}
	cap_delete(O_TMP);
}

/* Memory objects: a map, supply or range op through caps that lack what
 * it needs, or through a cap that is no object. */
static void ck_mobj(uint64_t *s)
{
	static const unsigned need[3] = { R_MAP, R_READ, R_WRITE };
	const unsigned all = R_MAP | R_READ | R_WRITE | R_EXEC | R_CONTROL;
	uint64_t va = OW_VA + (rnd(s) % 8) * 4096;
	long r;
	cap_delete(O_TMP);
	switch (rnd(s) % 6) {
	case 0: {
		/* MAP_OBJ through an object cap without R_MAP, R_READ, or
		 * R_WRITE for a writable map */
		int miss = (int)(rnd(s) % 3);
		if ((r = cap_mint(MO_OBJ, O_TMP, all & ~need[miss], 0, 0, 0))) {
			note_mism(CK_SETUP, r);
			return;
		}
		struct region_op o = rop(ROP_MAP_OBJ, miss == 2 ? PROT_R | PROT_W : PROT_R, va, 4096,
					 ROP_OBJ_ARG(O_TMP, rnd(s) % 8));
		r = region_txn(O_REG, OW_VA, OW_END, &o, 1);
		expect_txn(CK_MOBJ, r, &o, E_PERM, 0);
		break;
	}
	case 1:
		/* a supply or a range op without R_CONTROL */
		if ((r = cap_mint(MO_OBJ, O_TMP, all & ~R_CONTROL, 0, 0, 0))) {
			note_mism(CK_SETUP, r);
			return;
		}
		r = rnd(s) % 2 ? mobj_op(O_TMP, MOBJ_INVALIDATE + (unsigned)(rnd(s) % 5), rnd(s) % 8, 1)
			       : mobj_supply(O_TMP, rnd(s) % 8, O_REG, va, 1);
		expect(CK_MOBJ, r, E_PERM, 0);      /* MOBJ_KILL among the ops */
		break;
	case 2:
		/* a supply from a region cap without R_UNMAP */
		if ((r = cap_mint(O_REG, O_TMP, R_QUERY | R_MAP | R_MARK | R_READ | R_WRITE, 0, OW_VA,
				  OW_END))) {
			note_mism(CK_SETUP, r);
			return;
		}
		r = mobj_supply(MO_OBJ, rnd(s) % 8, O_TMP, va, 1);
		expect(CK_MOBJ, r, E_PERM, 0);
		break;
	case 3: {
		/* a writable map through a region cap without R_WRITE */
		if ((r = cap_mint(O_REG, O_TMP, R_QUERY | R_MAP | R_UNMAP | R_READ, 0, OW_VA, OW_END))) {
			note_mism(CK_SETUP, r);
			return;
		}
		struct region_op o = rop(ROP_MAP_OBJ, PROT_R | PROT_W, va, 4096, ROP_OBJ_ARG(MO_OBJ, 0));
		r = region_txn(O_TMP, OW_VA, OW_END, &o, 1);
		expect_txn(CK_MOBJ, r, &o, E_PERM, 0);
		break;
	}
	case 4:
		/* an asynchronous object whose pager cap lacks R_SEND (E_PERM),
		 * or with no pager or an unknown flag bit (E_INVAL) */
		if (rnd(s) % 2) {
			if ((r = cap_mint(O_P, O_TMP, R_RECV | R_GRANT, 0, 0, 0))) {
				note_mism(CK_SETUP, r);
				return;
			}
			cap_delete(O_RC);
			r = mobj_create_flags(1, O_RC, O_TMP, MOBJ_ASYNC);
			expect(CK_MOBJ, r, E_PERM, 0);
		} else {
			cap_delete(O_RC);
			r = rnd(s) % 2 ? mobj_create_flags(1, O_RC, SLOT_NONE, MOBJ_ASYNC)
				       : mobj_create_flags(1, O_RC, O_P, MOBJ_ASYNC << (1 + rnd(s) % 31));
			expect(CK_MOBJ, r, E_INVAL, 0);
		}
		cap_delete(O_RC);
		break;
	default: {
		/* a frame, an endpoint or a region cap named as an object */
		static const long bad[3] = { O_FRAME, O_P, O_REG };
		long b = bad[rnd(s) % 3];
		if (rnd(s) % 2) {
			r = mobj_op(b, MOBJ_INVALIDATE, 0, 1);
			expect(CK_MOBJ, r, E_BADCAP, 0);
		} else {
			struct region_op o = rop(ROP_MAP_OBJ, PROT_R, va, 4096, ROP_OBJ_ARG(b, 0));
			r = region_txn(O_REG, OW_VA, OW_END, &o, 1);
			expect_txn(CK_MOBJ, r, &o, E_BADCAP, 0);
		}
		break;
	}
	}
	cap_delete(O_TMP);
	ow_reset();
}

/* The pinger waits in its call; delete (or revoke above) the endpoint cap
 * it called through, then receive: that message must not bring its cap. */
static void ck_late_revoke(uint64_t *s)
{
	uint64_t w[4] = { 0 };
	uint64_t g = wait_armed();
	if (!g)
		return;
	for (int k = (int)(rnd(s) % 4); k > 0; k--)
		sys_yield();
	if (rnd(s) % 2)
		cap_revoke(O_P_G);
	else
		cap_delete(O_P_M);
	cap_delete(O_RECV);
	struct sysret m = ipc(SYS_RECV, O_P, w, O_RECV);
	if (m.a0) {
		note_mism(CK_LATE_REVOKE, m.a0);
		return;
	}
	if ((uint64_t)m.a2 == g) {
		note_check();
		if (m.a6 & IPC_GOT_CAP)
			note_viol(CK_LATE_REVOKE);
	}
	ipc(SYS_REPLY, 0, w, SLOT_NONE);
	cap_delete(O_RECV);
}

/* The helper remaps pages 0..7 from frame A to frame B in one transaction
 * through a cap we revoke (or delete) meanwhile. Once the revoke returns,
 * that transaction has either done all of its work or none: we read the
 * pages without any lock (plain loads) until it has returned, and they
 * must show B throughout if it succeeded, A throughout if it failed. On a
 * kernel without the barrier a load can also land while a page is
 * unmapped: then we die of the fault with this check in flight, and init
 * counts it. */
static uint64_t txn_seq;
static void ck_txn_revoke(uint64_t *s)
{
	struct region_op m[TXN_PAGES];
	const uint64_t lo = OW_VA, hi = OW_VA + TXN_PAGES * 4096UL;
	cap_delete(O_TXN_CAP);
	cap_delete(O_TXN_MID);
	ow_reset();
	for (int i = 0; i < TXN_PAGES; i++)
		m[i] = rop(ROP_MAP, PROT_R, lo + (uint64_t)i * 4096, 0, O_FRAME_RO);
	long r = region_txn(O_REG, OW_VA, OW_END, m, TXN_PAGES);
	if (r != TXN_PAGES) {
		note_mism(CK_SETUP, r < 0 ? r : m[r].result);
		ow_reset();
		return;
	}
	r = cap_mint(O_REG, O_TXN_MID, R_QUERY | R_MAP | R_MARK | R_UNMAP | R_READ | R_WRITE, 0, lo, hi);
	if (!r)
		r = cap_mint(O_TXN_MID, O_TXN_CAP, R_MAP | R_UNMAP | R_READ, 0, lo, hi);
	if (r) {
		note_mism(CK_SETUP, r);
		return;
	}
	uint64_t seq = ++txn_seq;
	__atomic_store_n(&txn_cmd, seq, __ATOMIC_RELEASE);
	/* Spin (no yield: the helper runs on another hart) so that we revoke
	 * while its transaction is still on its way. */
	uint64_t t0 = rdtime();
	while (__atomic_load_n(&txn_started, __ATOMIC_ACQUIRE) != seq && rdtime() - t0 < TPS / 10)
		;
	if (!wait_for(&txn_started, seq, 2 * TPS))
		return;      /* the helper is slow: the next check will find it */
	t0 = rdtime();
	for (uint64_t d = rnd(s) % (TPS / 20000); rdtime() - t0 < d;)
		;
	if (rnd(s) % 2)
		cap_revoke(O_TXN_MID);
	else
		cap_delete(O_TXN_CAP);
	sh->inflight = CK_TXN_REVOKE + 1;
	uint64_t first[TXN_PAGES];
	int changed = 0, as = 0, bs = 0;
	for (int i = 0; i < TXN_PAGES; i++) {
		first[i] = *(volatile uint64_t *)(lo + (uint64_t)i * 4096);
		as += first[i] == 0;
		bs += first[i] == B_MAGIC;
	}
	t0 = rdtime();
	while (__atomic_load_n(&txn_done, __ATOMIC_ACQUIRE) != seq && rdtime() - t0 < TPS / 100)
		for (int i = 0; i < TXN_PAGES; i++)
			changed |= *(volatile uint64_t *)(lo + (uint64_t)i * 4096) != first[i];
	sh->inflight = 0;
	inflight(T_ORACLE, CK_TXN_REVOKE);
	int done = wait_for(&txn_done, seq, 5 * TPS);
	inflight_end(T_ORACLE);
	if (!done) {
		note_viol(CK_TXN_REVOKE);     /* a transaction that never returns */
		__atomic_fetch_add(&sh->stuck[CK_TXN_REVOKE], 1, __ATOMIC_RELAXED);
		return;
	}
	long tr = txn_result;
	if (tr == 2 * TXN_PAGES || tr < 0) {
		note_check();
		if (changed || (tr == 2 * TXN_PAGES && bs != TXN_PAGES) || (tr < 0 && as != TXN_PAGES))
			note_viol(CK_TXN_REVOKE);
	}
	cap_delete(O_TXN_CAP);
	cap_delete(O_TXN_MID);
	ow_reset();
}

#define ORACLE_EVERY 8       /* one check per this many worker calls */
/* A mint of device cap src into O_TMP with `rights` (its own range). */
static long dev_mint(long src, unsigned rights)
{
	struct cap_info ci;
	long r = cap_info(src, &ci);
	return r ? r : cap_mint(src, O_TMP, rights, 0, ci.lo, ci.hi);
}

/* Device calls that lack what they need (see the top). */
static void ck_device(uint64_t *s)
{
	struct cap_info ci;
	uint64_t w[4] = { 1, 2, 3, 4 };
	long r;
	if (!sh->dev || cap_info(DEV_MMIO, &ci) || ci.type != CAP_MMIO)
		return;
	cap_delete(O_TMP);
	switch (rnd(s) % 5) {
	case 0: {
		/* No kernel cap here any more. */
		static const long nk[] = { SLOT_KERNEL, O_FRAME, DEV_MMIO, DEV_IRQ, O_TASK_NC };
		long k = nk[rnd(s) % 5];
		struct device_info d;
		if (rnd(s) % 2)
			r = sc3(SYS_DEVICE_INFO, k, 0, &d);
		else
			r = sc6(SYS_DEVICE_CAPS, k, (long)sh->dev - 1, O_TMP, SLOT_NONE, 0, 0);
		expect(CK_DEVICE, r, E_BADCAP, 0);
		break;
	}
	case 1:
		switch (rnd(s) % 4) {
		case 0:
			if ((r = dev_mint(DEV_MMIO, (R_READ | R_WRITE | R_GRANT) & (unsigned)rnd(s)))) {
				note_mism(CK_SETUP, r);
				return;
			}
			expect(CK_DMA, sc2(SYS_DMA_ADDR, O_TMP, O_FRAME), E_PERM, 0);
			break;
		case 1: {
			static const long nf[] = { O_REG, O_P_SO, DEV_IRQ, DEV_MMIO, O_TMP };
			expect(CK_DMA, sc2(SYS_DMA_ADDR, DEV_MMIO, nf[rnd(s) % 5]), E_BADCAP, 0);
			break;
		}
		case 2: {
			static const long nm[] = { O_FRAME, O_REG, DEV_IRQ, SLOT_KERNEL };
			expect(CK_DMA, sc2(SYS_DMA_ADDR, nm[rnd(s) % 4], O_FRAME), E_BADCAP, 0);
			break;
		}
		default:
			/* With both: a frame's page-aligned address, never the window's. */
			r = sc2(SYS_DMA_ADDR, DEV_MMIO, O_FRAME);
			if (r <= 0 || (r & 4095) || ((uint64_t)r >= ci.lo && (uint64_t)r < ci.hi))
				note_mism(CK_DMA, r);
			break;
		}
		break;
	case 2: {
		ow_reset();
		long src = DEV_MMIO, e1;
		uint32_t prot = PROT_R;
		uint64_t len = 4096;
		switch (rnd(s) % 4) {
		case 0:
			if ((r = dev_mint(DEV_MMIO, R_READ | R_GRANT | (R_DMA & (unsigned)rnd(s))))) {
				note_mism(CK_SETUP, r);
				return;
			}
			src = O_TMP;
			prot = PROT_R | PROT_W;
			e1 = E_PERM;
			break;
		case 1:
			len = ci.hi - ci.lo + 4096;
			e1 = E_RANGE;
			break;
		case 2:
			prot = PROT_R | PROT_X;
			e1 = E_INVAL;
			break;
		default: {
			/* The window as the cap allows: it maps and reads as virtio. */
			struct region_op o = rop(ROP_MAP, PROT_R, OW_DEV, 4096, DEV_MMIO);
			r = region_txn(O_REG, OW_DEV, OW_DEV + 4096, &o, 1);
			if (r != 1 || *(volatile uint32_t *)OW_DEV != VIRTIO_MAGIC)
				note_mism(CK_DEV_MAP, r == 1 ? -E_INVAL : r);
			ow_reset();
			return;
		}
		}
		if (len > 2 * 4096)
			return;     /* a window wider than the check's pages */
		struct region_op o = rop(ROP_MAP, prot, OW_DEV, len, src);
		r = region_txn(O_REG, OW_DEV, OW_DEV + len, &o, 1);
		expect_txn(CK_DEV_MAP, r, &o, e1, 0);
		ow_reset();
		break;
	}
	case 3:
		if (rnd(s) % 2) {
			static const int64_t d[][2] = { { -4096, 0 }, { 0, 4096 }, { 8, 0 }, { 0, -8 } };
			int k = (int)(rnd(s) % 4);
			r = cap_mint(DEV_MMIO, O_TMP, R_READ, 0, ci.lo + (uint64_t)d[k][0],
				     ci.hi + (uint64_t)d[k][1]);
			expect(CK_MINT_RANGE, r, E_PERM, 0);
		} else {
			long src = rnd(s) % 2 ? DEV_MMIO : DEV_IRQ;
			struct cap_info si;
			if ((r = cap_info(src, &si))) {
				note_mism(CK_SETUP, r);
				return;
			}
			unsigned bit;
			do
				bit = 1u << (rnd(s) % 14);
			while (si.rights & bit);
			r = cap_mint(src, O_TMP, si.rights | bit, 0, si.lo, si.hi);
			expect(CK_MINT_RIGHTS, r, E_PERM, 0);
		}
		break;
	default:
		/* Without R_GRANT a device cap stays here (the catcher waits on
		 * O_Q, whose cap has GRANT). */
		if ((r = dev_mint(rnd(s) % 2 ? DEV_MMIO : DEV_IRQ,
				  (R_READ | R_WRITE | R_DMA | R_CONTROL) & (unsigned)rnd(s)))) {
			if (r != -E_PERM)
				note_mism(CK_SETUP, r);
			return;
		}
		inflight(T_ORACLE, CK_DEV_GRANT);
		struct sysret x = ipc(rnd(s) % 2 ? SYS_SEND : SYS_CALL, O_Q, w, O_TMP);
		inflight_end(T_ORACLE);
		expect(CK_DEV_GRANT, x.a0, E_PERM, 0);
		break;
	}
	cap_delete(O_TMP);
}

static void oracle_fn(void *a)
{
	uint64_t s = (uint64_t)a;
	while (!go)
		sys_yield();
	long last = 0;
	while (!stop) {
		long c = worker_calls();
		if (c - last < ORACLE_EVERY) {
			sys_yield();
			continue;
		}
		last = c;
		switch (rnd(&s) % 10) {
		case 0: ck_nocap(&s); break;
		case 8: rnd(&s) % 2 ? ck_device(&s) : ck_mobj(&s); break;
		case 1: case 2: ck_region(&s); break;
		case 3: ck_mint(&s); break;
		case 4: ck_endpoint(&s); break;
		case 5: ck_reply(&s); break;
		case 6: ck_control(&s); break;
		case 7: ck_late_revoke(&s); break;
		default: ck_txn_revoke(&s); break;
		}
	}
}

/* Wait until init has mapped our page at SHARE_VA. */
static struct share *find_share(void)
{
	uint64_t until = rdtime() + 10 * TPS;
	for (;;) {
		struct region_op q = rop(ROP_QUERY, 0, SHARE_VA, 0, 0);
		if (region_txn(SLOT_SELF_AS, SHARE_VA, SHARE_VA + 4096, &q, 1) == 1 &&
		    q.out_kind == RK_MAPPED) {
			struct share *p = (struct share *)SHARE_VA;
			if (p->magic == SHARE_MAGIC)
				return p;
		}
		if (rdtime() > until)
			return NULL;
		sys_yield();
	}
}

static long start(void (*fn)(void *), uint64_t arg, int hart)
{
	if (hart >= (int)n_cpus)
		hart = -1;
	return uthread_start(fn, (void *)arg, hart, 1);
}

static int fuzz_child(uint64_t arg)
{
	uint64_t seed = (arg >> 8) & 0xffffffff;
	long iters = (long)(arg >> 40);
	if (!seed)
		seed = 1;
	sh = find_share();
	if (!sh)
		return 2;
	my_idx = sh->idx;
	n_kids = sh->nkids;
	n_cpus = sh->ncpus ? sh->ncpus : 1;
	/* Fixtures. The region caps are minted from our whole-AS cap, which we
	 * then delete: they become roots nobody else can revoke. */
	const unsigned rgn = R_QUERY | R_MAP | R_MARK | R_UNMAP | R_PROTECT | R_READ | R_WRITE;
	slot_scratch = slot_alloc();
	long r = cap_mint(SLOT_SELF_AS, slot_scratch, rgn | R_EXEC, 0, SCRATCH, SCRATCH + SCRATCH_LEN);
	r = r ? r : cap_mint(SLOT_SELF_AS, O_REG, rgn | R_EXEC, 0, OW_VA, OW_END);
	r = r ? r : cap_mint(SLOT_SELF_AS, S_REG, rgn, 0, LEND_VA, LEND_VA + LEND_PAGES * 4096UL);
	r = r ? r : cap_mint(SLOT_SELF_AS, S_SWIN, rgn, 0, SWIN_VA, SWIN_VA + 4096);
	r = r ? r : cap_copy(SLOT_GIVEN, S_E);
	r = r ? r : ep_create(S_X);
	r = r ? r : frame_alloc(S_F);
	r = r ? r : frame_alloc(O_FRAME);
	r = r ? r : cap_mint(O_FRAME, O_FRAME_RO, R_READ | R_SHARE, 0, 0, 0);
	r = r ? r : frame_alloc(O_FRAME_B);
	if (!r) {
		struct region_op o = rop(ROP_MAP, PROT_R | PROT_W, OW_B, 0, O_FRAME_B);
		r = region_txn(O_REG, OW_VA, OW_END, &o, 1);
		r = r == 1 ? 0 : (r < 0 ? r : o.result);
		if (!r)
			*(volatile uint64_t *)OW_B = B_MAGIC;
	}
	r = r ? r : cap_copy(O_FRAME_RO, O_PFRAME);
	r = r ? r : ep_create(O_P);
	r = r ? r : cap_mint(O_P, O_P_SO, R_SEND, 0, 0, 0);
	r = r ? r : cap_mint(O_P, O_P_G, R_SEND | R_GRANT, 0, 0, 0);
	r = r ? r : ep_create(O_Q);
	r = r ? r : cap_mint(O_Q, O_Q_NG, R_SEND | R_RECV, 0, 0, 0);
	r = r ? r : cap_mint(O_Q, O_Q_RO, R_RECV, 0, 0, 0);
	r = r ? r : cap_mint(SLOT_SELF_TASK, O_TASK_NC, R_READ | R_WRITE, 0, 0, 0);
	r = r ? r : mobj_create(8, MO_OBJ, SLOT_NONE);
	if (!r) {
		obj_w = slot_alloc();
		r = cap_copy(MO_OBJ, obj_w);
	}
	if (!r && sh->dev) {
		/* The device caps, made with the kernel cap init lent us for
		 * that alone; the workers get copies. */
		r = sc6(SYS_DEVICE_CAPS, SLOT_KERNEL, (long)sh->dev - 1, DEV_MMIO, DEV_IRQ, 0, 0);
		dev_w = slot_alloc();
		irq_w = slot_alloc();
		r = r ? r : cap_copy(DEV_MMIO, dev_w);
		r = r ? r : cap_copy(DEV_IRQ, irq_w);
	}
	cap_delete(SLOT_KERNEL);
	if (r) {
		sh->code[CK_SETUP] = (int32_t)r;
		sh->mism[CK_SETUP]++;
		return 3;
	}
	cap_delete(SLOT_GIVEN);     /* our copy of E now hangs off init's mint */
	uint64_t s = seed * 0x9e3779b97f4a7c15ULL + 12345;
	long th[NWORKERS + 6];
	int nth = 0;
	for (int i = 0; i < NWORKERS; i++) {
		workers[i].seed = seed * 0x9e3779b97f4a7c15ULL + (uint64_t)i * 7919 + 1;
		workers[i].iters = iters / NWORKERS + (i == 0 ? iters % NWORKERS : 0);
		th[nth++] = uthread_start(worker_fn, &workers[i], -1, 1);
	}
	/* The server and the client on fixed harts (or any), so that IPC
	 * between siblings crosses harts. */
	int hs = rnd(&s) % 3 ? (int)((my_idx * 2) % n_cpus) : -1;
	int hc = rnd(&s) % 3 ? (int)((my_idx * 2 + 1) % n_cpus) : -1;
	th[nth++] = start(server_fn, rnd(&s), hs);
	th[nth++] = start(client_fn, rnd(&s), hc);
	long pinger = start(pinger_fn, 0, -1);
	th[nth++] = pinger;
	th[nth++] = start(catcher_fn, 0, -1);
	/* The transaction helper and the oracle on different harts. */
	int ho = (int)(rnd(&s) % n_cpus);
	th[nth++] = start(txn_fn, 0, n_cpus > 1 ? (int)((ho + 1) % n_cpus) : -1);
	th[nth++] = start(oracle_fn, rnd(&s), n_cpus > 1 ? ho : -1);
	for (int i = 0; i < nth; i++)
		if (th[i] < 0) {
			sh->code[CK_SETUP] = (int32_t)th[i];
			sh->mism[CK_SETUP]++;
			return 4;
		}
	if (cap_mint(pinger, O_THR_NC, R_READ, 0, 0, 0)) {
		sh->mism[CK_SETUP]++;
		return 5;
	}
	/* From here on the random workers may do anything to the slots they
	 * can name: no task, whole-AS or thread cap is left there (a random
	 * thread kill of this main thread would leave nobody to end us). */
	cap_delete(SLOT_SELF_AS);
	cap_delete(SLOT_SELF_TASK);
	cap_delete(SLOT_SELF_THREAD);
	for (int i = 0; i < nth; i++)
		cap_delete(th[i]);
	sh->state = 1;
	go = 1;
	long last = -1;
	uint64_t stall_since = rdtime();
	for (;;) {
		long calls = worker_calls(), fin = 0;
		for (int i = 0; i < NWORKERS; i++)
			fin += workers[i].finished;
		sh->calls = (uint64_t)calls;
		sh->beat++;
		if (fin == NWORKERS)
			break;
		if (calls != last) {
			last = calls;
			stall_since = rdtime();
		} else if (rdtime() - stall_since > 3 * TPS) {
			break;      /* the rest are blocked in IPC for good */
		}
		sys_yield();
	}
	/* A refused call returns at once: one still in flight was accepted. */
	for (int t = 0; t < NTRACK; t++) {
		int ck = __atomic_load_n(&inflight_ck[t], __ATOMIC_ACQUIRE);
		if (ck && rdtime() - inflight_t[t] > 3 * TPS) {
			note_viol(ck - 1);
			sh->stuck[ck - 1]++;
		}
	}
	stop = 1;
	long calls = worker_calls();
	sh->calls = (uint64_t)calls;
	sh->state = 2;
	/* The exit status carries the count too (bit 30 marks a normal end). */
	sys_exit((int)((1L << 30) | calls));
	return 0;
}

/* ================= init's side ================= */

static struct share pshare;            /* init's own checks count here */
static volatile uint64_t hb[MAX_HB];
static volatile int helper_stop, helpers_up, helpers_down;
static volatile long round_seq, done_seq[MAX_KIDS];
static volatile int kid_dead[MAX_KIDS];
static volatile long kid_status[MAX_KIDS];
static long kid_task[MAX_KIDS];
static int kids_now;

static void hb_fn(void *a)
{
	long i = (long)a;
	__atomic_fetch_add(&helpers_up, 1, __ATOMIC_ACQ_REL);
	while (!helper_stop) {
		hb[i]++;
		sys_yield();
	}
	__atomic_fetch_add(&helpers_down, 1, __ATOMIC_ACQ_REL);
}

/* Waiter i: each round, wait for child i (if there is one) to die. */
static void waiter_fn(void *a)
{
	long i = (long)a, seen = 0;
	__atomic_fetch_add(&helpers_up, 1, __ATOMIC_ACQ_REL);
	while (!helper_stop) {
		long s = __atomic_load_n(&round_seq, __ATOMIC_ACQUIRE);
		if (s == seen) {
			sys_yield();
			continue;
		}
		seen = s;
		if (i < kids_now) {
			kid_status[i] = task_wait(kid_task[i]);
			kid_dead[i] = 1;
		}
		__atomic_store_n(&done_seq[i], s, __ATOMIC_RELEASE);
	}
	__atomic_fetch_add(&helpers_down, 1, __ATOMIC_ACQ_REL);
}

/* Kernel and console caps minted with too few rights must not work, and a
 * kernel cap must never leave init. */
/* init's device: the index + 1 of a virtio-mmio slot with no device
 * behind it (DeviceID 0: its registers ignore writes, so no random write
 * reaches a device), 0 when there is none; its MMIO cap (init's, for the
 * spawn check) and the kernel cap with only R_CONTROL lent to children. */
static uint64_t fz_dev;
static long fz_mmio = SLOT_NONE, fz_kctl = SLOT_NONE;

static void pick_device(void)
{
	struct device_info d;
	for (long i = 0; !fz_dev && sc3(SYS_DEVICE_INFO, SLOT_KERNEL, i, &d) == 0; i++) {
		if (strcmp(d.compatible, "virtio,mmio"))
			continue;
		long m = slot_alloc();
		struct region_op o = rop(ROP_MAP, PROT_R, DEVP_VA, 4096, m);
		if (sc6(SYS_DEVICE_CAPS, SLOT_KERNEL, i, m, SLOT_NONE, 0, 0) == 0 &&
		    region_txn(SLOT_SELF_AS, DEVP_VA, DEVP_VA + 4096, &o, 1) == 1) {
			volatile uint32_t *reg = (volatile uint32_t *)DEVP_VA;
			if (reg[0] == VIRTIO_MAGIC && reg[2] == 0) {
				fz_dev = (uint64_t)i + 1;
				fz_mmio = m;
			}
			o = rop(ROP_UNMAP, 0, DEVP_VA, 4096, 0);
			region_txn(SLOT_SELF_AS, DEVP_VA, DEVP_VA + 4096, &o, 1);
		}
		if (fz_mmio != m) {
			cap_delete(m);
			slot_release(m);
		}
	}
	fz_kctl = slot_alloc();
	if (cap_mint(SLOT_KERNEL, fz_kctl, R_CONTROL, 0, 0, 0))
		fz_dev = 0;
}

static void parent_checks(uint64_t *s)
{
	static const unsigned kr[] = { R_READ, R_WRITE, R_CONTROL, R_READ | R_WRITE,
				       R_READ | R_CONTROL, R_WRITE | R_CONTROL };
	long k = slot_alloc(), d = slot_alloc();
	unsigned have = kr[rnd(s) % 6];
	long r = cap_mint(SLOT_KERNEL, k, have, 0, 0, 0);
	if (r) {
		note_mism(CK_SETUP, r);
	} else {
		if (!(have & R_READ)) {
			r = sc6(SYS_DEBUG, k, rnd(s) % 2 ? DBG_NCPUS : DBG_MMINFO, 0, 0, 0, 0);
			expect(CK_P_KERNEL_RIGHTS, r, E_PERM, 0);
			r = sc3(SYS_DEVICE_INFO, k, 0, XP_VA);
			expect(CK_DEVICE, r, E_PERM, 0);
			r = sc6(SYS_DEBUG, k, DBG_NAME, (long)(rnd(s) % 2), XP_VA, 4096, 0);
			expect(CK_P_KERNEL_RIGHTS, r, E_PERM, 0);
		}
		if (!(have & R_WRITE)) {
			r = sc6(SYS_DEBUG, k, DBG_KCMD, (long)"", 0, 0, 0);
			expect(CK_P_KERNEL_RIGHTS, r, E_PERM, 0);
		}
		if (!(have & R_CONTROL)) {
			r = sc7(SYS_TASK_SPAWN, k, self_module(), ROLE_NOP, d, QUOTA(32, 1, 0, 0), SLOT_NONE, 0);
			expect(CK_P_KERNEL_RIGHTS, r, E_PERM, 0);
			if (r >= 0)
				reap_task(d);
			r = sc6(SYS_DEVICE_CAPS, k, 0, d, SLOT_NONE, 0, 0);
			expect(CK_DEVICE, r, E_PERM, 0);
			if (r >= 0)
				cap_delete(d);
		}
		r = task_spawn_q(self_module(), ROLE_NOP, d, QUOTA(32, 1, 0, 0), rnd(s) % 2 ? SLOT_KERNEL : k);
		expect(CK_P_GIVE_KERNEL, r, E_PERM, 0);
		if (r >= 0)
			reap_task(d);
		cap_delete(k);
	}
	/* A device cap without GRANT is not handed over at spawn. */
	struct cap_info ci;
	if (fz_mmio != SLOT_NONE && !cap_info(fz_mmio, &ci) &&
	    !(r = cap_mint(fz_mmio, k, (R_READ | R_WRITE | R_DMA) & (unsigned)rnd(s), 0, ci.lo, ci.hi))) {
		r = task_spawn_q(self_module(), ROLE_NOP, d, QUOTA(32, 1, 0, 0), k);
		expect(CK_DEV_GRANT, r, E_PERM, 0);
		if (r >= 0)
			reap_task(d);
		cap_delete(k);
	}
	have = rnd(s) % 2 ? R_READ : R_WRITE;
	r = cap_mint(SLOT_CONSOLE, k, have, 0, 0, 0);
	if (r) {
		note_mism(CK_SETUP, r);
	} else {
		if (have == R_READ) {
			r = sc3(SYS_PUTS, k, "", 0);
		} else {
			r = sc1(SYS_GETC, k);
			if (r == -E_AGAIN)
				r = 0;
		}
		expect(CK_P_CONSOLE_RIGHTS, r, E_PERM, 0);
		cap_delete(k);
	}
	slot_release(k);
	slot_release(d);
}

/* ROLE_NOP's exit status when it runs (a spawn that worked): what it got,
 * NOP_MARK | its argc << 16 | the low half of its arguments' CRC-32 (the
 * strings back to back, NULs included), NOP_KERNEL | the rights code of
 * its kernel cap << 23 if it has one, NOP_CONSOLE | its console cap's
 * rights << 27 if it has one. */
#define NOP_MARK (1 << 29)
#define NOP_KERNEL (1 << 22)
#define NOP_CONSOLE (1 << 26)
static int rights_code(unsigned r) { return (int)(r & (R_READ | R_WRITE)) | (r & R_CONTROL ? 4 : 0); }

static int nop_status(int argc, const uint32_t crc, int kernel, unsigned krights, int console,
		      unsigned crights)
{
	return NOP_MARK | (argc & 0x3f) << 16 | (int)(crc & 0xffff) |
	       (kernel ? NOP_KERNEL | rights_code(krights) << 23 : 0) |
	       (console ? NOP_CONSOLE | (int)(crights & 3) << 27 : 0);
}

/* ROLE_NOP: exit with what we got (nop_status). */
static int nop_child(int argc, char **argv)
{
	uint32_t crc = 0;
	for (int i = 0; i < argc; i++)
		crc = crc32_update(crc, argv[i], strlen(argv[i]) + 1);
	struct cap_info k, c;
	int hk = cap_info(SLOT_KERNEL, &k) == 0 && k.type == CAP_KERNEL;
	int hc = cap_info(SLOT_CONSOLE, &c) == 0 && c.type == CAP_CONSOLE;
	return nop_status(argc, crc, hk, hk ? k.rights : 0, hc, hc ? c.rights : 0);
}

/* A kernel-or-console slot for a spawn extension: none, one of the right
 * type (ours, or a mint with random rights into *mint), or one that holds
 * no such cap (empty, out of range, another type). The expected error
 * (E_BADCAP or 0) back; with a cap, whether there is one and its rights in
 * *has, *rights. */
static long ext_slot(uint64_t *s, long own, int type, unsigned all, long mint, long *slot, int *has,
		     unsigned *rights)
{
	static const long other[] = { SLOT_SELF_TASK, SLOT_SELF_AS, SLOT_KERNEL, SLOT_CONSOLE, SLOT_GIVEN,
				      CSPACE_MAX_SLOTS, CSPACE_MAX_SLOTS - 1, -2, 1L << 40, -(1L << 40) };
	struct cap_info ci;
	*has = 0;
	*rights = 0;
	switch (rnd(s) % 6) {
	case 0:
	case 1:
		*slot = SLOT_NONE;
		return 0;
	case 2:
		*slot = own;
		break;
	case 3: {
		unsigned r = (unsigned)rnd(s) & all;
		cap_delete(mint);
		*slot = cap_mint(own, mint, r ? r : all, 0, 0, 0) ? own : mint;
		break;
	}
	default:
		*slot = rnd(s) % 2 ? other[rnd(s) % (sizeof other / sizeof other[0])] : (long)(rnd(s) % 300);
		break;
	}
	if (cap_info(*slot, &ci) || (int)ci.type != type)
		return -E_BADCAP;
	*has = 1;
	*rights = ci.rights;
	return 0;
}

/* What the extension and DBG_NAME checks saw (init's own). */
static struct {
	long spawns, started, inval, fault, badcap, perm;
	long names, named;
} xs;

/* Count a spawn's refusal by its error. */
static void count_result(long r)
{
	xs.inval += r == -E_INVAL;
	xs.fault += r == -E_FAULT;
	xs.badcap += r == -E_BADCAP;
	xs.perm += r == -E_PERM;
}

/* Spawns through the extension with random (mostly broken) argument
 * blocks and kernel and console slots: each refused with the block's
 * error (E_INVAL, E_FAULT) or E_BADCAP for a slot, or it works and the
 * child says it got exactly the block and caps given; every task made is
 * reaped. Also through a kernel cap without CONTROL (E_PERM, or the
 * block's error). */
static void spawn_ext_checks(uint64_t *s, int n)
{
	long d = slot_alloc(), km = slot_alloc(), cm = slot_alloc(), kn = slot_alloc();
	char *xp = (char *)XP_VA;
	for (int i = 0; i < n; i++) {
		/* The extension in the page's first XP_ARGS bytes, the block after. */
		struct spawn_ext *e = (struct spawn_ext *)(xp + 8 * (rnd(s) % 16));
		struct spawn_ext ee;
		int argc = 0, hk, hc;
		uint32_t crc = 0;
		unsigned kr, cr;
		long xerr = args_random(s, &ee, xp + XP_ARGS, 4096 - XP_ARGS, XP_HOLE, &argc, &crc);
		long kerr = ext_slot(s, SLOT_KERNEL, CAP_KERNEL, R_READ | R_WRITE | R_CONTROL, km, &ee.kernel, &hk, &kr);
		long cerr = ext_slot(s, SLOT_CONSOLE, CAP_CONSOLE, R_READ | R_WRITE, cm, &ee.console, &hc, &cr);
		long ext = (long)e, serr = kerr ? kerr : cerr, kslot = SLOT_KERNEL, r;
		int how = (int)(rnd(s) % 16);
		if (how == 0) {
			/* The extension itself unreadable, or crossing into the hole. */
			ext = rnd(s) % 2 ? (long)unreadable_ptr(s) : (long)(XP_HOLE - 8 * (1 + rnd(s) % 3));
			memcpy(xp + 4096 - 24, &ee, 24);
			xerr = -E_FAULT;
			serr = 0;
		} else if (how == 1 && !cap_mint(SLOT_KERNEL, kn, R_READ | R_WRITE, 0, 0, 0)) {
			kslot = kn;              /* no CONTROL */
			serr = -E_PERM;
		}
		if (ext == (long)e)
			*e = ee;
		cap_delete(d);
		r = sc7(SYS_TASK_SPAWN, kslot, self_module(), ROLE_NOP, d, QUOTA(64, 1, 0, 0), SLOT_NONE, ext);
		xs.spawns++;
		xs.started += r == 0;
		count_result(r);
		if (xerr || serr) {
			expect(CK_P_SPAWN_EXT, r, xerr ? -xerr : -serr, xerr && serr ? -serr : 0);
			if (r >= 0)
				reap_task(d);
		} else if (r < 0) {
			note_mism(CK_P_SPAWN_EXT, r);
		} else {
			long st = task_wait(d), want = nop_status(argc, crc, hk, kr, hc, cr);
			note_check();
			if (st != want) {
				/* A cap it was not given is an authority violation. */
				if (st & NOP_MARK && ((st & NOP_KERNEL && !hk) || (st & NOP_CONSOLE && !hc)))
					note_viol(CK_P_SPAWN_CHILD);
				else
					note_mism(CK_P_SPAWN_CHILD, st & NOP_MARK ? -E_INVAL : st);
			}
			cap_delete(d);
		}
		cap_delete(kn);
	}
	cap_delete(km);
	cap_delete(cm);
	slot_release(d), slot_release(km), slot_release(cm), slot_release(kn);
}

/* DBG_NAME's entries (kind, index): how many of each kind, and each
 * one's length and CRC-32 as a big buffer gets it. */
#define DN_MAX 128
/* DBG_NAME through our kernel cap: its result. */
static long dbg_name(uint64_t which, uint64_t buf, uint64_t size)
{
	return sc6(SYS_DEBUG, SLOT_KERNEL, DBG_NAME, (long)which, (long)buf, (long)size, 0);
}
static struct { int n[2]; long len[2][DN_MAX]; uint32_t crc[2][DN_MAX]; } dn;

/* Fill dn: each kind's entries, read whole into the XP page, until
 * E_NOENT (anything else is an unexpected result). */
static void dbg_name_table(void)
{
	char *buf = (char *)XP_VA;
	for (int kind = 0; kind < 2; kind++)
		for (dn.n[kind] = 0; dn.n[kind] < DN_MAX; dn.n[kind]++) {
			long r = dbg_name((uint64_t)kind << 32 | (uint64_t)dn.n[kind], (uint64_t)buf, 4096);
			if (r < 0) {
				if (r != -E_NOENT)
					note_mism(CK_P_DBG_NAME, r);
				break;
			}
			dn.len[kind][dn.n[kind]] = r;
			dn.crc[kind][dn.n[kind]] = crc32_update(0, buf, (size_t)r);
		}
}

/* DBG_NAME with random kinds, indexes, buffers and sizes: E_INVAL for an
 * unknown kind or a short size, E_NOENT past the last entry, E_FAULT for
 * a buffer it cannot write (all or, crossing into the hole, partly);
 * otherwise the entry's bytes, exactly. */
static void dbg_name_checks(uint64_t *s, int n)
{
	for (int i = 0; i < n; i++) {
		uint64_t kind = rnd(s) % 8 ? rnd(s) % 2 : rnd(s) % 5 ? 2 + rnd(s) % 8 : rnd(s) >> 32;
		int known = kind < 2;
		uint64_t idx = known && dn.n[kind] && rnd(s) % 4 ? rnd(s) % (uint64_t)dn.n[kind] :
			       rnd(s) % 2 ? (known ? (uint64_t)dn.n[kind] : 0) + rnd(s) % 4 : rnd(s) & 0xffffffff;
		int real = known && idx < (uint64_t)dn.n[kind];
		long need = real ? dn.len[kind][idx] : 1 + (long)(rnd(s) % 64);
		uint64_t size;
		switch (rnd(s) % 5) {
		case 0: size = (uint64_t)need - 1 - rnd(s) % (uint64_t)need; break;   /* short, maybe 0 */
		case 1: size = (uint64_t)need; break;
		case 2: size = rnd(s); break;
		default: size = (uint64_t)need + rnd(s) % 64; break;
		}
		uint64_t buf;
		int bad_buf = 0;
		switch (rnd(s) % 6) {
		case 0:
			buf = unreadable_ptr(s);
			bad_buf = 1;
			break;
		case 1:                  /* ends k bytes before the hole */
			buf = XP_HOLE - 1 - rnd(s) % (uint64_t)(need + 8);
			bad_buf = XP_HOLE - buf < (uint64_t)need;
			break;
		case 2:
			buf = (uint64_t)(uintptr_t)dbg_name_checks;   /* our text: read-only */
			bad_buf = 1;
			break;
		default:
			buf = XP_VA + rnd(s) % (4096 - (uint64_t)need);
			break;
		}
		long r = dbg_name(kind << 32 | idx, buf, size), want;
		xs.names++;
		xs.named += r > 0;
		if (!known)
			want = -E_INVAL;
		else if (!real)
			want = -E_NOENT;
		else if (size < (uint64_t)need)
			want = -E_INVAL;
		else
			want = bad_buf ? -E_FAULT : need;
		if (want < 0) {
			/* A short size on a bad buffer: either refusal does. */
			expect(CK_P_DBG_NAME, r, -want, want == -E_INVAL && real && bad_buf ? E_FAULT : 0);
		} else {
			note_check();
			if (r != want || crc32_update(0, (const void *)buf, (size_t)need) != dn.crc[kind][idx])
				note_mism(CK_P_DBG_NAME, r < 0 ? r : -E_INVAL);
		}
	}
}

static struct share *kid_share(int i) { return (struct share *)(PSHARE_VA + (uint64_t)i * 4096); }

static long map_into(long task, uint64_t va, long frame)
{
	long rs = slot_alloc();
	long r = task_region(task, rs);
	if (!r) {
		struct region_op o = rop(ROP_MAP, PROT_R | PROT_W, va, 0, frame);
		r = region_txn(rs, va, va + 4096, &o, 1);
		r = r == 1 ? 0 : (r < 0 ? r : o.result);
		cap_delete(rs);
	}
	slot_release(rs);
	return r;
}

struct totals {
	long calls, kids, killed, checks, ipc_ok, lends, revokes;
	long notes, notes_bad;            /* death notices of children received; missing or wrong */
	unsigned long viol[NCK], mism[NCK], stuck[NCK];
	long code[NCK];
};

static void add_counts(struct totals *t, const struct share *p)
{
	t->checks += (long)p->checks;
	t->ipc_ok += (long)p->ipc_ok;
	t->lends += (long)p->lends;
	t->revokes += (long)p->revokes;
	for (int c = 0; c < NCK; c++) {
		t->viol[c] += p->viol[c];
		t->stuck[c] += p->stuck[c];
		if (p->mism[c]) {
			t->mism[c] += p->mism[c];
			t->code[c] = p->code[c];
		}
	}
}

/* The watchdog, a thread of its own so that it also sees init's main
 * thread stop (say, inside a syscall that never returns). While a round
 * runs, every hart's heartbeat, every live child's beat (or state) and
 * main's own beat must move at least every HART_STALL / KID_STALL /
 * MAIN_STALL. On a stall it says so, kills the children and lets main end
 * the run; if main does not within GIVE_UP, it ends init itself. */
#define MAIN_STALL (60 * TPS)
#define GIVE_UP (30 * TPS)
static volatile int watching, tripped, run_over;
static volatile uint64_t main_beat;

static int watchdog_check(uint64_t now, int fresh)
{
	static uint64_t last_hb[MAX_HB], since_hb[MAX_HB];
	static uint64_t last_beat[MAX_KIDS], last_state[MAX_KIDS], since_beat[MAX_KIDS];
	static uint64_t last_main, since_main;
	int ncpu = (int)pshare.ncpus;
	if (fresh) {
		for (int i = 0; i < ncpu; i++)
			since_hb[i] = now;
		for (int i = 0; i < MAX_KIDS; i++) {
			last_beat[i] = kid_share(i)->beat;
			last_state[i] = kid_share(i)->state;
			since_beat[i] = now;
		}
		since_main = now;
	}
	for (int i = 0; i < ncpu; i++) {
		uint64_t v = hb[i];
		if (v != last_hb[i]) {
			last_hb[i] = v;
			since_hb[i] = now;
		} else if (now - since_hb[i] > HART_STALL) {
			printf("sysfuzz: hart %d stopped making progress\n", i);
			return 1;
		}
	}
	for (int i = 0; i < kids_now; i++) {
		/* Alive, it beats; done, it dies; setting up, it gets going (or
		 * gives up) well within KID_STALL. */
		struct share *p = kid_share(i);
		uint64_t v = p->beat, st = p->state;
		if (v != last_beat[i] || st != last_state[i] || kid_dead[i]) {
			last_beat[i] = v;
			last_state[i] = st;
			since_beat[i] = now;
		} else if (now - since_beat[i] > KID_STALL) {
			printf("sysfuzz: child %d stopped making progress (%s)\n", i,
			       st == 2 ? "it ended but did not die" : st == 1 ? "running" : "setting up");
			return 1;
		}
	}
	if (main_beat != last_main) {
		last_main = main_beat;
		since_main = now;
	} else if (now - since_main > MAIN_STALL) {
		printf("sysfuzz: init's main thread stopped making progress\n");
		return 1;
	}
	return 0;
}

static void warm_stack(void)
{
	/* Touch the stack printf will need now, before the counters are
	 * taken: a page first touched mid-run would look like a leak. */
	volatile char pad[12288];
	for (unsigned i = 0; i < sizeof pad; i += 512)
		pad[i] = 0;
}

static void watchdog_fn(void *a)
{
	(void)a;
	warm_stack();
	__atomic_fetch_add(&helpers_up, 1, __ATOMIC_ACQ_REL);
	uint64_t prev = rdtime(), tripped_at = 0, round_start = 0, next_report = 0;
	long seen_round = -1;
	while (!helper_stop) {
		uint64_t now = rdtime();
		int w = watching;
		long rs = __atomic_load_n(&round_seq, __ATOMIC_ACQUIRE);
		/* A new round, or we did not run for a while ourselves: every
		 * clock starts over. */
		int fresh = (w && rs != seen_round) || now - prev > TPS;
		if (w && rs != seen_round) {
			seen_round = rs;
			round_start = now;
			next_report = now + 120 * TPS;
		}
		prev = now;
		if (w && !tripped && watchdog_check(now, fresh)) {
			tripped = 1;
			tripped_at = now;
			for (int i = 0; i < kids_now; i++)
				task_kill(kid_task[i]);
		}
		if (w && now > next_report) {
			/* Should never be needed: say where a long round stands. */
			next_report = now + 60 * TPS;
			printf("sysfuzz: round running for %lu s:", (unsigned long)((now - round_start) / TPS));
			for (int i = 0; i < kids_now; i++) {
				struct share *p = kid_share(i);
				printf(" child %d state %lu beat %lu calls %lu dead %d;", i, (unsigned long)p->state,
				       (unsigned long)p->beat, (unsigned long)p->calls, kid_dead[i]);
			}
			printf(" main %lu harts", (unsigned long)main_beat);
			for (int i = 0; i < (int)pshare.ncpus; i++)
				printf(" %lu", (unsigned long)hb[i]);
			printf("\n");
		}
		if (tripped && !run_over && now - tripped_at > GIVE_UP) {
			printf("sysfuzz: the run does not end after the watchdog fired: giving up\n");
			sys_exit(3);
		}
		sys_yield();
	}
	__atomic_fetch_add(&helpers_down, 1, __ATOMIC_ACQ_REL);
}

/* Wait for every waiter of this round; meanwhile init now and then revokes
 * one child's E while it runs. */
static void wait_round(long *assign, long *erevoke, int chaos_kid)
{
	int revoked = 0;
	for (;;) {
		main_beat++;
		int all = 1;
		for (int i = 0; i < MAX_KIDS; i++)
			all &= __atomic_load_n(&done_seq[i], __ATOMIC_ACQUIRE) == round_seq;
		if (all)
			return;
		if (chaos_kid >= 0 && !revoked && !tripped &&
		    kid_share(chaos_kid)->calls > (uint64_t)assign[chaos_kid] / 2) {
			cap_revoke(erevoke[chaos_kid]);
			revoked = 1;
		}
		sys_yield();
	}
}

/* Runs rounds of fuzz children until `iters` worker calls were made in
 * total: a child whose workers are all stuck in IPC for good ends early
 * and the next round carries on. */
int cmd_sysfuzz(int argc, char **argv)
{
	unsigned long iters = 10000, seed = 1;
	if (argc > 3 || (argc > 1 && parse_ulong(argv[1], &iters)) ||
	    (argc > 2 && parse_ulong(argv[2], &seed)))
		return prog_usage("sysfuzz [iterations] [seed]");
	if (iters > 0xffffff)
		iters = 0xffffff;
	sh = &pshare;
	memset(&pshare, 0, sizeof pshare);
	long nc = dbg(DBG_NCPUS, 0, 0);
	pshare.ncpus = nc < 1 ? 1 : (nc > MAX_HB ? MAX_HB : (uint64_t)nc);
	/* Helpers and shared pages come first, so that the counters compared
	 * at the end include them both times. */
	long share_f[MAX_KIDS], helper[MAX_HB + MAX_KIDS + 1];
	int nhelp = 0;
	for (int i = 0; i < MAX_KIDS; i++) {
		share_f[i] = slot_alloc();
		struct region_op o = rop(ROP_MAP, PROT_R | PROT_W, (uint64_t)kid_share(i), 0, share_f[i]);
		if (frame_alloc(share_f[i]) ||
		    region_txn(SLOT_SELF_AS, (uint64_t)kid_share(i), (uint64_t)kid_share(i) + 4096, &o, 1) != 1) {
			printf("sysfuzz: cannot set up the shared pages\n");
			return 1;
		}
	}
	/* The spawn-extension and DBG_NAME checks' page, with a hole after it. */
	if (mem_reserve(XP_VA, 4096)) {
		printf("sysfuzz: cannot set up the extension page\n");
		return 1;
	}
	memset((void *)XP_VA, 0, 4096);
	dbg_name_table();
	helper_stop = 0;
	helpers_up = helpers_down = 0;
	for (long i = 0; i < (long)pshare.ncpus; i++)
		helper[nhelp++] = uthread_start(hb_fn, (void *)i, (int)i, 1);
	for (long i = 0; i < MAX_KIDS; i++)
		helper[nhelp++] = uthread_start(waiter_fn, (void *)i, -1, 1);
	helper[nhelp++] = uthread_start(watchdog_fn, 0, -1, 1);
	for (int i = 0; i < nhelp; i++)
		if (helper[i] < 0) {
			printf("sysfuzz: cannot start helper threads: %s\n", err_name(helper[i]));
			return 1;
		}
	while (helpers_up < nhelp)
		sys_yield();
	pick_device();

	struct kcounters before, after;
	settled_counters(&before);
	static struct totals tt;
	memset(&tt, 0, sizeof tt);
	uint64_t ps = seed * 0x2545f4914f6cdd1dULL + 77;
	long rounds = 0, idle_rounds = 0;
	const char *fail = NULL;
	tripped = run_over = watching = 0;
	main_beat = 0;
	while (tt.calls < (long)iters && !fail && !tripped) {
		rounds++;
		int nk = 2 + (int)(rnd(&ps) % 2);
		long left = (long)iters - tt.calls, budget = left < ROUND_CALLS ? left : ROUND_CALLS;
		long assign[MAX_KIDS], em[MAX_KIDS];
		int notified[MAX_KIDS] = { 0 };
		long e = slot_alloc(), dn = slot_alloc(), dm = slot_alloc();
		long r = ep_create(e);
		r = r ? r : ep_create(dn);     /* init's: each child's death notice comes here */
		for (int i = 0; i < nk && !r; i++) {
			em[i] = slot_alloc();
			r = cap_mint(e, em[i], R_SEND | R_RECV | R_GRANT, (uint64_t)i + 1, 0, 0);
		}
		if (r) {
			printf("sysfuzz: endpoint set-up failed: %s\n", err_name(r));
			return 1;
		}
		kids_now = nk;
		for (int i = 0; i < nk; i++) {
			struct share *p = kid_share(i);
			memset(p, 0, sizeof *p);
			p->idx = (uint64_t)i;
			p->nkids = (uint64_t)nk;
			p->ncpus = pshare.ncpus;
			p->magic = SHARE_MAGIC;
			p->dev = fz_dev;
			kid_dead[i] = 0;
			kid_status[i] = 0;
			assign[i] = budget / nk + (i == 0 ? budget % nk : 0);
			uint64_t sd = (seed + (uint64_t)tt.kids * 1000003ULL) & 0xffffffff;
			uint64_t arg = ROLE_FUZZ | (sd << 8) | ((uint64_t)assign[i] << 40);
			kid_task[i] = slot_alloc();
			tt.kids++;
			/* With a device, a kernel cap to make its caps with. */
			struct spawn_ext kx = { NULL, 0, fz_dev ? fz_kctl : SLOT_NONE, SLOT_NONE };
			r = sc7(SYS_TASK_SPAWN, SLOT_KERNEL, self_module(), (long)arg, kid_task[i],
				QUOTA(KID_FRAMES, KID_THREADS, 16, 1), em[i], (long)&kx);
			if (!r)
				r = map_into(kid_task[i], SHARE_VA, share_f[i]);
			if (r) {
				printf("sysfuzz: spawn failed: %s\n", err_name(r));
				return 1;
			}
			/* Its death notice, badge i + 1; the registration needs
			 * no cap of ours to stay (dn keeps the endpoint). */
			r = cap_mint(dn, dm, R_SEND, (uint64_t)i + 1, 0, 0);
			r = r ? r : sc2(SYS_TASK_NOTIFY, kid_task[i], dm);
			notified[i] = !r;
			if (r && r != -E_DEAD) {       /* E_DEAD: it died already */
				printf("sysfuzz: death notice of child %d refused: %s\n", i, err_name(r));
				tt.notes_bad++;
			}
			cap_delete(dm);
			r = 0;
		}
		__atomic_fetch_add(&round_seq, 1, __ATOMIC_ACQ_REL);
		watching = 1;
		parent_checks(&ps);
		spawn_ext_checks(&ps, 24);
		dbg_name_checks(&ps, 48);
		int chaos_kid = rnd(&ps) % 3 == 0 ? (int)(rnd(&ps) % (uint64_t)nk) : -1;
		wait_round(assign, em, chaos_kid);
		watching = 0;
		int killed_by_us = tripped;
		/* Every child we registered sent exactly one death notice, with
		 * the status its wait returned (the waiters have all returned). */
		int want = 0, seen[MAX_KIDS] = { 0 };
		for (int i = 0; i < nk; i++)
			want += notified[i];
		for (int k = 0; k <= want; k++) {
			uint64_t nw[4] = { 0 };
			struct sysret m = ipc_timed(SYS_RECV_TIMED, dn, nw, SLOT_NONE, k < want ? 5 * 1000000 : 10000);
			long i = m.a5 - 1;
			if (k == want) {
				if (m.a0 != -E_TIMEDOUT) {
					printf("sysfuzz: a death notice too many (%ld, badge %ld)\n", m.a0, m.a5);
					tt.notes_bad++;
				}
			} else if (m.a0 || (uint64_t)m.a1 != MSG_DEATH || i < 0 || i >= nk || !notified[i] ||
				   seen[i]++ || m.a2 != kid_status[i]) {
				printf("sysfuzz: death notice %d: %s w0 %lx badge %ld status %ld\n", k,
				       err_name(m.a0), m.a1, m.a5, m.a2);
				tt.notes_bad++;
			} else {
				tt.notes++;
			}
		}
		long got = 0;
		for (int i = 0; i < nk; i++) {
			struct share *p = kid_share(i);
			long st = kid_status[i];
			long c = (long)p->calls;
			if (c > assign[i])
				c = assign[i];
			got += c;
			add_counts(&tt, p);
			if (!(st >= 0 && (st & (1L << 30)))) {
				tt.killed++;
				if (st == 137 && !killed_by_us && p->inflight == CK_TASK_KILL + 1) {
					tt.viol[CK_TASK_KILL]++;
				} else if (st == EXIT_TRAP(TRAP_READ_FAULT) && p->inflight == CK_TXN_REVOKE + 1) {
					tt.viol[CK_TXN_REVOKE]++;     /* the page was mid-remap after the revoke */
				} else {
					printf("sysfuzz: child %ld ended with status %ld", tt.kids - nk + i + 1, st);
					if (p->mism[CK_SETUP])
						printf(" (set-up: %s)", err_name(p->code[CK_SETUP]));
					printf("\n");
				}
			}
			cap_delete(kid_task[i]);
			slot_release(kid_task[i]);
			cap_delete(em[i]);
			slot_release(em[i]);
		}
		cap_delete(e);
		slot_release(e);
		cap_delete(dn);
		slot_release(dn);
		slot_release(dm);
		tt.calls += got;
		if (got == 0 && ++idle_rounds > 20)
			fail = "no progress: the children make no calls";
		else if (got)
			idle_rounds = 0;
	}
	run_over = 1;
	/* The last children's teardown (the reaper, RCU-deferred PT pages)
	 * may still be running on a loaded host: a leak is what is still
	 * missing after 10 s, not what is late. */
	int same = 0;
	for (uint64_t until = rdtime() + 10 * TPS; !same;) {
		settled_counters(&after);
		same = after.free_frames == before.free_frames && after.tasks == before.tasks &&
		       after.threads == before.threads && after.endpoints == before.endpoints &&
		       after.frame_objs == before.frame_objs && after.caps == before.caps &&
		       after.notices == before.notices && after.mobjs == before.mobjs &&
		       after.mobj_maps == before.mobj_maps && after.mobj_pages == before.mobj_pages;
		if (rdtime() > until)
			break;
	}

	/* Stop the helpers, then drop their caps and the shared pages. */
	helper_stop = 1;
	uint64_t until = rdtime() + 5 * TPS;
	while (helpers_down < nhelp && rdtime() < until)
		sys_yield();
	for (int i = 0; i < nhelp; i++) {
		if (helpers_down < nhelp)
			sc1(SYS_THREAD_KILL, helper[i]);
		cap_delete(helper[i]);
		slot_release(helper[i]);
	}
	for (int i = 0; i < MAX_KIDS; i++) {
		struct region_op o = rop(ROP_UNMAP, 0, (uint64_t)kid_share(i), 4096, 0);
		region_txn(SLOT_SELF_AS, (uint64_t)kid_share(i), (uint64_t)kid_share(i) + 4096, &o, 1);
		cap_delete(share_f[i]);
		slot_release(share_f[i]);
	}
	struct region_op xo = rop(ROP_UNMAP, 0, XP_VA, 4096, 0);
	region_txn(SLOT_SELF_AS, XP_VA, XP_VA + 4096, &xo, 1);
	slot_drop(&fz_mmio);
	slot_drop(&fz_kctl);

	add_counts(&tt, &pshare);
	unsigned long viol = 0, mism = 0;
	for (int c = 0; c < NCK; c++) {
		viol += tt.viol[c];
		mism += tt.mism[c];
	}
	printf("sysfuzz: %ld rounds, %ld child tasks (%ld killed)\n", rounds, tt.kids, tt.killed);
	printf("sysfuzz: %ld authority checks; siblings: %ld IPC calls, %ld loans, %ld revoked\n",
	       tt.checks, tt.ipc_ok, tt.lends, tt.revokes);
	printf("sysfuzz: %ld death notices received, %ld missing or wrong\n", tt.notes, tt.notes_bad);
	if (fz_dev)
		printf("sysfuzz: device caps of device %lu (an empty virtio-mmio slot) fuzzed\n", fz_dev - 1);
	else
		printf("sysfuzz: no empty virtio-mmio slot: no device caps fuzzed\n");
	printf("sysfuzz: %ld spawns through the extension: %ld ran and were reaped, refused %ld E_INVAL, "
	       "%ld E_FAULT, %ld E_BADCAP, %ld E_PERM; %ld DBG_NAME calls, %ld named\n", xs.spawns, xs.started,
	       xs.inval, xs.fault, xs.badcap, xs.perm, xs.names, xs.named);
	for (int c = 0; c < NCK; c++) {
		if (tt.viol[c]) {
			printf("sysfuzz: VIOLATION %s: %lu", ck_name[c], tt.viol[c]);
			if (tt.stuck[c])
				printf(" (%lu blocked instead of failing)", tt.stuck[c]);
			printf("\n");
		}
		if (tt.mism[c])
			printf("sysfuzz: unexpected result: %s: %lu (last %s %ld)\n", ck_name[c], tt.mism[c],
			       err_name(tt.code[c]), tt.code[c]);
	}
	if (fail)
		printf("sysfuzz: %s\n", fail);
	if (!same)
		printf("sysfuzz: LEAK frames %ld tasks %ld threads %ld endpoints %ld user_frames %ld caps %ld notices %ld "
		       "mobjs %ld mobj_maps %ld mobj_pages %ld\n",
		       (long)(before.free_frames - after.free_frames), (long)(after.tasks - before.tasks),
		       (long)(after.threads - before.threads), (long)(after.endpoints - before.endpoints),
		       (long)(after.frame_objs - before.frame_objs), (long)(after.caps - before.caps),
		       (long)(after.notices - before.notices), (long)(after.mobjs - before.mobjs),
		       (long)(after.mobj_maps - before.mobj_maps), (long)(after.mobj_pages - before.mobj_pages));
	else
		printf("sysfuzz: frame and object counts back to their starting values\n");
	printf("sysfuzz: %ld calls, %lu kernel faults, %lu authority violations\n", tt.calls,
	       after.kernel_faults, viol);
	return after.kernel_faults || viol || mism || fail || tripped || !same || tt.notes_bad ? 1 : 0;
}

int main(int argc, char **argv)
{
	if ((spawn_arg() & 0xff) == ROLE_NOP)
		return nop_child(argc, argv);
	if (spawn_arg())
		return fuzz_child(spawn_arg());
	return cmd_sysfuzz(argc, argv);
}
