/* The disk file pager (fspager.h). */
#include "ulib.h"
#include "fspager.h"

#define PG 4096UL

/* Read pages i .. i + n - 1 of the file (the tail past its end zeros)
 * into the cache, each into a fresh read-only frame. n stops early at a
 * page already cached. 0 or an error (pages made so far stay cached). */
static long fill(struct fspager *fp, unsigned long i, unsigned n)
{
	unsigned k = 0;
	while (k < n && i + k < fp->pages && fp->cache[i + k] < 0)
		k++;
	memset(fp->stage, 0, k * PG);
	long got = ext2_read(&fp->disk->fs, &fp->file, i * PG, fp->stage, (uint64_t)k * PG);
	if (got < 0)
		return got;
	fp->faults_read++;
	for (unsigned j = 0; j < k; j++) {
		long r = pager_frame_new(fp->stage + j * PG, R_READ | R_SHARE, &fp->cache[i + j]);
		if (r) {
			fp->cache[i + j] = -1;
			return r;
		}
		fp->cached++;
	}
	return 0;
}

/* Map cached page i into c; the pages read ahead with it that c has not
 * mapped yet go in too, so its next touches there do not fault. */
static long map_pages(struct fspager *fp, struct pager_client *c, unsigned long i)
{
	long r = pager_map(c, i * PG, fp->cache[i], PROT_R);
	if (r)
		return r;             /* -E_EXIST: a racing fault mapped it: libpager resumes */
	fp->maps++;
	for (unsigned long j = i + 1; j < i + FSPAGER_AHEAD && j < fp->pages && fp->cache[j] >= 0; j++)
		if (!pager_map(c, j * PG, fp->cache[j], PROT_R))
			fp->maps++;
	return 0;
}

static int fs_fault(struct pager *pg, struct pager_fault *f)
{
	struct fspager *fp = pg->data;
	unsigned long i = f->offset / PG;
	if (f->access != FA_READ || i >= fp->pages)
		return PAGER_KILL;        /* the file is read-only, and this long */
	long r = fp->cache[i] < 0 ? fill(fp, i, FSPAGER_AHEAD) : 0;
	if (!r)
		r = map_pages(fp, f->client, i);
	return r ? (int)r : PAGER_RESUME;
}

long fspager_init(struct fspager *fp, struct fsdisk *disk, const struct ext2_inode *file,
		  const struct pager_ops *more)
{
	memset(fp, 0, sizeof *fp);
	if (ext2_type(file) != EXT2_T_REG || !file->size)
		return -E_INVAL;
	fp->pages = (file->size + PG - 1) / PG;
	fp->cache = pager_cache_new(fp->pages);
	fp->stage = malloc(FSPAGER_AHEAD * PG);
	if (!fp->cache || !fp->stage) {
		pager_cache_free(fp->cache, fp->pages);
		free(fp->stage);
		return -E_NOMEM;
	}
	fp->disk = disk;
	fp->file = *file;
	fp->ops = (struct pager_ops){ .fault = fs_fault, .client_gone = more ? more->client_gone : NULL,
				      .message = more ? more->message : NULL };
	long r = pager_init(&fp->pg, &fp->ops, fp);
	if (r) {
		pager_cache_free(fp->cache, fp->pages);
		free(fp->stage);
	}
	return r;
}

struct pager_client *fspager_attach(struct fspager *fp, long task, uint64_t base, long *err)
{
	return pager_attach(&fp->pg, task, base, fp->pages * PG, PROT_R, NULL, err);
}

void fspager_fini(struct fspager *fp)
{
	pager_fini(&fp->pg);
	pager_cache_free(fp->cache, fp->pages);
	free(fp->stage);
	fp->cache = NULL;
	fp->stage = NULL;
}
