/* The disk file pager (fspager.h). */
#include "ulib.h"
#include <patina/mobj.h>
#include "fspager.h"

#define PG 4096UL

/* One region op over [va, va + npages pages) of `region`: its result. */
static long one_op(long region, unsigned op, uint64_t va, uint64_t npages, uint32_t prot, int64_t arg)
{
	struct region_op o = { .op = op, .prot = prot, .va = va, .len = npages * PG, .arg = arg };
	long r = region_txn(region, va, va + npages * PG, &o, 1);
	return r < 0 ? r : o.result;
}

/* Read pages i .. i + n - 1 of the file (the tail past its end zeros)
 * into fresh pages at FSPAGER_STAGE_VA and move them into the object; n
 * stops early at the file's end or a page the object holds. 0, or an
 * error with the object as it was (the staged pages unmapped). */
static long fill(struct fspager *fp, unsigned long i, unsigned n)
{
	unsigned k = 0;
	while (k < n && i + k < fp->pages && !fp->held[i + k])
		k++;
	uint8_t *stage = (uint8_t *)FSPAGER_STAGE_VA;
	long r = mem_reserve(FSPAGER_STAGE_VA, k * PG);
	if (r)
		return r;
	memset(stage, 0, k * PG);   /* touches each page: a supply takes mapped pages only */
	long got = ext2_read(&fp->disk->fs, &fp->file, i * PG, stage, (uint64_t)k * PG);
	r = got < 0 ? got : mobj_supply(fp->obj, i, SLOT_SELF_AS, FSPAGER_STAGE_VA, k);
	if (r) {
		one_op(SLOT_SELF_AS, ROP_UNMAP, FSPAGER_STAGE_VA, k, 0, 0);
		return r;
	}
	fp->faults_read++;
	fp->supplied += k;
	memset(fp->held + i, 1, k);
	return 0;
}

/* An object fault (patina/pager.h message w): FAULT_RESUME once the page
 * is in the object, FAULT_KILL for a write, a page past the end, or a
 * read that failed. */
static uint64_t obj_fault(struct fspager *fp, const uint64_t w[4])
{
	unsigned long i = FAULT_STATUS_TAG(w[2]);
	fp->faults++;
	if (FAULT_ACCESS(w[1]) != FA_READ || i >= fp->pages)
		return FAULT_KILL;        /* the file is read-only, and this long */
	if (fp->held[i])
		return FAULT_RESUME;      /* a racing fault of another task supplied it */
	return fill(fp, i, FSPAGER_AHEAD) ? FAULT_KILL : FAULT_RESUME;
}

/* Region faults: the pager attaches no range, so none is routed here;
 * one that came anyway is refused (libpager needs the callback). */
static int region_fault(struct pager *pg, struct pager_fault *f)
{
	(void)pg;
	(void)f;
	return PAGER_KILL;
}

static long fs_message(struct pager *pg, uint64_t badge, const uint64_t w[4], uint64_t reply[4])
{
	struct fspager *fp = pg->data;
	if (badge == FSPAGER_BADGE && FAULT_STATUS_KIND(w[2]) == RK_OBJECT) {
		reply[0] = obj_fault(fp, w);
		return 1;
	}
	return fp->prog.message ? fp->prog.message(pg, badge, w, reply) : 0;
}

long fspager_init(struct fspager *fp, struct fsdisk *disk, const struct ext2_inode *file,
		  const struct pager_ops *more)
{
	memset(fp, 0, sizeof *fp);
	fp->obj = fp->ro = fp->fault_ep = -1;
	if (ext2_type(file) != EXT2_T_REG || !file->size)
		return -E_INVAL;
	uint64_t pages = (file->size + PG - 1) / PG;
	if (pages > MOBJ_MAX_PAGES)
		return -E_INVAL;
	fp->pages = pages;
	if (!(fp->held = calloc(pages, 1)))
		return -E_NOMEM;
	fp->disk = disk;
	fp->file = *file;
	if (more)
		fp->prog = *more;
	fp->ops = (struct pager_ops){ .fault = region_fault, .message = fs_message };
	long r = pager_init(&fp->pg, &fp->ops, fp);
	if (r) {
		free(fp->held);
		fp->held = NULL;
		return r;
	}
	if ((fp->fault_ep = slot_alloc()) < 0 || (fp->obj = slot_alloc()) < 0 || (fp->ro = slot_alloc()) < 0)
		r = -E_NOMEM;
	if (!r)
		r = cap_mint(fp->pg.ep, fp->fault_ep, R_SEND, FSPAGER_BADGE, 0, 0);
	if (!r)
		r = mobj_create(pages, fp->obj, fp->fault_ep);
	if (!r)
		r = cap_mint(fp->obj, fp->ro, R_MAP | R_READ, 0, 0, 0);
	if (r)
		fspager_fini(fp);
	return r;
}

long fspager_open(struct fspager *fp, long task, uint64_t va)
{
	long whole = slot_alloc();
	if (whole < 0)
		return -E_NOMEM;
	long r = task_region(task, whole);
	if (!r)
		r = one_op(whole, ROP_MAP_OBJ, va, fp->pages, PROT_R, ROP_OBJ_ARG(fp->ro, 0));
	cap_delete(whole);
	slot_release(whole);
	return r;
}

long fspager_held(struct fspager *fp)
{
	struct cap_info ci = { 0 };
	long r = cap_info(fp->obj, &ci);
	return r ? r : (long)ci.hi;
}

/* Delete the cap in *slot (if any), free the slot. */
static void drop(long *slot)
{
	if (*slot >= 0) {
		cap_delete(*slot);
		slot_release(*slot);
	}
	*slot = -1;
}

void fspager_fini(struct fspager *fp)
{
	drop(&fp->ro);
	drop(&fp->obj);
	drop(&fp->fault_ep);
	pager_fini(&fp->pg);
	free(fp->held);
	fp->held = NULL;
}
