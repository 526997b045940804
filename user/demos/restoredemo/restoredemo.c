/* restoredemo: snapshot restore through a user-level pager, as a VM
 * monitor's fault handler restores guest memory from a snapshot.
 *
 *   restoredemo [--mode one|batch|huge] [--mib M]
 *
 * This program's thread is the pager: it fills an image of M MiB (default
 * 64) with a pattern in its own memory, then serves the faults of a
 * client task (a copy of this program, role ROLE_RESTORE) that touches
 * every page of its restore range once and then checks every word. The
 * pager answers each fault with SYS_REGION_SUPPLY, which moves the
 * image's frames into the client without copying them:
 *   one    the faulting page only (one fault a page);
 *   batch  the 2 MiB block holding the fault, 512 pages at once, the rest
 *          read ahead (one fault a block);
 *   huge   the same block from 2 MiB-aligned contiguous frames
 *          (SYS_REGION_ALLOC_CONTIG), mapped as one 2 MiB leaf.
 * The client counts rdinstret across its touch loop. Last line:
 *   restore: <P> pages, <F> faults, <I> instructions per page, mode <m>, <C> corrupt
 * (I counts every instruction the hart retired in the loop: the client's,
 * the kernel's and the pager's; exact under scripts/run --smp 1 --icount).
 * Exit 0 only if C is 0 and the client exited 0. */
#include "ulib.h"
#include "pager.h"
#include "testlib.h"

#define ROLE_RESTORE 113
#define RS_BASE    0x200000000UL  /* the client's restore range (2 MiB aligned) */
#define RS_IMAGE   0x400000000UL  /* the image in the pager */
#define RS_BADGE   0x7e5704eUL
#define RS_HELLO 1
#define RS_DONE  2
#define PG    4096UL
#define BLOCK (512 * PG)

enum { MODE_ONE, MODE_BATCH, MODE_HUGE };
static const char *const mode_name[] = { "one", "batch", "huge" };

/* The image's word at offset off of the range. */
static inline uint64_t rs_word(uint64_t off)
{
	return (off + 8) * 0x9e3779b97f4a7c15ULL ^ 0x5eed5eed5eedULL;
}

/* --- the client --- */

/* The touch loop (one read a page, against the pattern), counted, then
 * every word checked: the pages with a wrong word. */
static int rs_client(void)
{
	if (given_cap_type() != CAP_ENDPOINT)
		return 200;
	uint64_t w[4] = { RS_HELLO, 0, 0, 0 };
	struct sysret r = ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	if (r.a0)
		return 201;
	uint64_t pages = (uint64_t)r.a1, bad = 0;
	uint64_t i0 = rdinstret();
	for (uint64_t p = 0; p < pages; p++)
		bad += *(volatile uint64_t *)(RS_BASE + p * PG) != rs_word(p * PG);
	uint64_t ins = rdinstret() - i0;
	unsigned long corrupt = 0;
	for (uint64_t p = 0; p < pages; p++) {
		const volatile uint64_t *q = (const volatile uint64_t *)(RS_BASE + p * PG);
		int wrong = 0;
		for (unsigned k = 0; k < PG / 8; k++)
			wrong |= q[k] != rs_word(p * PG + k * 8);
		corrupt += (unsigned long)wrong;
	}
	if (bad > corrupt)
		corrupt = bad;
	w[0] = RS_DONE;
	w[1] = corrupt;
	w[2] = ins;
	ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	return corrupt ? 1 : 0;
}

/* --- the pager --- */

struct rs_pager {
	int mode;
	uint64_t pages;
	unsigned long supplied, corrupt, ins;
	long err;
	int hello, done, gone;
};

/* A fault: the page (one) or its 2 MiB block, clipped to the image. */
static int rs_fault(struct pager *pg, struct pager_fault *f)
{
	struct rs_pager *rp = pg->data;
	uint64_t off = f->offset, n = 1;
	if (rp->mode != MODE_ONE) {
		off &= ~(BLOCK - 1);
		n = rp->pages - off / PG < 512 ? rp->pages - off / PG : 512;
	}
	long r = pager_supply_range(f->client, off, RS_IMAGE + off, (unsigned)n, PROT_R | PROT_W);
	if (r) {
		if (!rp->err)
			rp->err = r;
		return r == -E_EXIST ? r : PAGER_KILL;
	}
	rp->supplied += n;
	return PAGER_RESUME;
}

/* The client's hello (answered with the page count) and done (its
 * corrupt count and instructions: the serve loop stops, the answer waits
 * until we let go of the client). */
static long rs_msg(struct pager *pg, uint64_t badge, const uint64_t w[4], uint64_t reply[4])
{
	struct rs_pager *rp = pg->data;
	if (badge == RS_BADGE && w[0] == RS_HELLO && !rp->hello) {
		rp->hello = 1;
		reply[0] = rp->pages;
		return 1;
	}
	if (badge == RS_BADGE && w[0] == RS_DONE) {
		rp->done = 1;
		rp->corrupt = w[1];
		rp->ins = w[2];
		pager_stop(pg);     /* answered once we let go of the client */
		return 0;
	}
	reply[0] = ~0ULL;
	return 1;
}

/* The client died before it was done. */
static void rs_gone(struct pager *pg, struct pager_client *c, long status)
{
	(void)c;
	(void)status;
	((struct rs_pager *)pg->data)->gone = 1;
	pager_stop(pg);
}

static const struct pager_ops rs_ops = { .fault = rs_fault, .message = rs_msg,
					 .client_gone = rs_gone };

/* The image: pages of our own memory holding the pattern (huge: each
 * 2 MiB from one contiguous, aligned run). 0 or an error. */
static long rs_fill(int mode, uint64_t pages)
{
	uint64_t len = pages * PG;
	for (uint64_t b = 0; mode == MODE_HUGE && b < len; b += BLOCK) {
		long r = region_alloc_contig(SLOT_SELF_AS, RS_IMAGE + b, 9, PROT_R | PROT_W);
		if (r)
			return r;
	}
	if (mode != MODE_HUGE) {
		struct region_op m = { .op = ROP_MARK, .prot = PROT_R | PROT_W, .va = RS_IMAGE, .len = len };
		long r = region_txn(SLOT_SELF_AS, RS_IMAGE, RS_IMAGE + len, &m, 1);
		if (r < 0)
			return r;
	}
	for (uint64_t off = 0; off < len; off += 8)
		*(volatile uint64_t *)(RS_IMAGE + off) = rs_word(off);
	return 0;
}

/* What the supplies left of the image (nothing once all went), gone. */
static void rs_unfill(uint64_t pages)
{
	struct region_op u = { .op = ROP_UNMAP, .va = RS_IMAGE, .len = pages * PG };
	region_txn(SLOT_SELF_AS, RS_IMAGE, RS_IMAGE + pages * PG, &u, 1);
}

/* --mode and --mib into *mode and *mib: 0, or -1 for anything else. */
static int rs_args(int argc, char **argv, int *mode, unsigned long *mib)
{
	for (int i = 1; i < argc; i++) {
		if (i + 1 >= argc)
			return -1;
		if (!strcmp(argv[i], "--mib")) {
			if (parse_ulong(argv[++i], mib) || *mib < 2 || *mib > 1024 || (*mib & 1))
				return -1;
		} else if (!strcmp(argv[i], "--mode")) {
			i++;
			int m;
			for (m = 0; m < 3 && strcmp(argv[i], mode_name[m]); m++)
				;
			if (m == 3)
				return -1;
			*mode = m;
		} else {
			return -1;
		}
	}
	return 0;
}

/* Fill, spawn the client, serve it, report (the last line). 0 only with
 * every page right and the client's exit clean; 2 for bad options. */
int cmd_restoredemo(int argc, char **argv)
{
	int mode = MODE_BATCH;
	unsigned long mib = 64;
	if (rs_args(argc, argv, &mode, &mib))
		return prog_usage("restoredemo [--mode one|batch|huge] [--mib M]  (M even, 2..1024)");
	struct rs_pager rp = { .mode = mode, .pages = mib * 256 };
	struct pager pg;
	long ctl = slot_alloc(), task = slot_alloc(), r, st = -1;
	int inited = 0, spawned = 0;
	if (ctl < 0 || task < 0) {
		r = -E_NOMEM;
		goto out;
	}
	if ((r = rs_fill(mode, rp.pages))) {
		printf("restoredemo: image: %ld\n", r);
		goto out;
	}
	if ((r = pager_init(&pg, &rs_ops, &rp)))
		goto out;
	inited = 1;
	if ((r = cap_mint(pg.ep, ctl, R_SEND, RS_BADGE, 0, 0)))
		goto out;
	/* The client holds the restored pages and their page tables. */
	long cq = QUOTA(rp.pages + rp.pages / 256 + 256, 2, 2, 0);
	if ((r = task_spawn_q(self_module(), ROLE_RESTORE, task, cq, ctl)))
		goto out;
	spawned = 1;
	if (!pager_attach(&pg, task, RS_BASE, rp.pages * PG, PROT_R | PROT_W, NULL, &r))
		goto out;
	r = pager_serve(&pg);
	if (rp.done) {
		uint64_t w[4] = { 0 };
		ipc(SYS_REPLY, 0, w, SLOT_NONE);
	}
out:
	if (r)
		printf("restoredemo: set-up or serve: %ld\n", r);
	if (rp.err)
		printf("restoredemo: a supply refused: %ld\n", rp.err);
	unsigned long faults = inited ? pg.faults : 0;
	if (inited)
		pager_fini(&pg);
	if (spawned) {
		if (!rp.done)
			task_kill(task);
		st = task_wait(task);
	}
	rs_unfill(rp.pages);
	long slots[] = { task, ctl };
	for (unsigned i = 0; i < 2; i++)
		if (slots[i] >= 0) {
			cap_delete(slots[i]);
			slot_release(slots[i]);
		}
	if (!rp.done)
		rp.corrupt = rp.pages;
	printf("restore: %lu pages, %lu faults, %lu instructions per page, mode %s, %lu corrupt\n",
	       (unsigned long)rp.pages, faults, rp.ins / (unsigned long)rp.pages, mode_name[mode],
	       rp.corrupt);
	return rp.done && !rp.corrupt && st == 0 && !rp.err ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (spawn_arg() == ROLE_RESTORE)
		return rs_client();
	return cmd_restoredemo(argc, argv);
}
