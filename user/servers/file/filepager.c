/* The file pager (filepager.h). */
#include "ulib.h"
#include "filepager.h"

#define PG 4096UL

/* The page cache: page i's frame, read in on its first fault. */
static long cache_page(struct filepager *fp, unsigned long i, long *frame)
{
	if (fp->cache[i] < 0) {
		uint8_t buf[PG];
		const uint8_t *src = fp->image + i * PG;
		uint64_t n = fp->size - i * PG < PG ? fp->size - i * PG : PG;
		if (n < PG) {             /* the last page: the file's tail, then zeros */
			memcpy(buf, src, n);
			memset(buf + n, 0, PG - n);
			src = buf;
		}
		long r = pager_frame_new(src, R_READ | R_SHARE, &fp->cache[i]);
		if (r) {
			fp->cache[i] = -1;
			return r;
		}
		fp->cached++;
	}
	*frame = fp->cache[i];
	return 0;
}

static int file_fault(struct pager *pg, struct pager_fault *f)
{
	struct filepager *fp = pg->data;
	unsigned long i = f->offset / PG;
	long frame;
	if (f->access != FA_READ || i >= fp->pages)
		return PAGER_KILL;        /* the image is read-only, and this long */
	long r = cache_page(fp, i, &frame);
	if (!r)
		r = pager_map(f->client, f->offset, frame, PROT_R);
	if (r)
		return (int)r;            /* -E_EXIST: a racing fault mapped it: libpager resumes */
	fp->maps++;
	return PAGER_RESUME;
}

long filepager_init(struct filepager *fp, const void *image, uint64_t size,
		    const struct pager_ops *more, void *owner)
{
	memset(fp, 0, sizeof *fp);
	if (!size)
		return -E_INVAL;
	fp->pages = (size + PG - 1) / PG;
	fp->cache = pager_cache_new(fp->pages);
	if (!fp->cache)
		return -E_NOMEM;
	fp->image = image;
	fp->size = size;
	fp->owner = owner;
	fp->ops = (struct pager_ops){ .fault = file_fault, .client_gone = more ? more->client_gone : NULL,
				      .message = more ? more->message : NULL };
	long r = pager_init(&fp->pg, &fp->ops, fp);
	if (r)
		pager_cache_free(fp->cache, fp->pages);
	return r;
}

struct pager_client *filepager_attach(struct filepager *fp, long task, uint64_t base, long *err)
{
	return pager_attach(&fp->pg, task, base, fp->pages * PG, PROT_R, NULL, err);
}

void filepager_fini(struct filepager *fp)
{
	pager_fini(&fp->pg);
	pager_cache_free(fp->cache, fp->pages);
	fp->cache = NULL;
}
