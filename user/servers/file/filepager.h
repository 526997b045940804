/* The file pager: maps a read-only image into every client that attaches
 * it. Each page is read into a frame once; every client's mapping of it
 * shares that frame (the page cache holds one read-only frame cap a
 * page). A write to the image kills the writer. Built on libpager. */
#ifndef USER_FILEPAGER_H
#define USER_FILEPAGER_H

#include <stdint.h>
#include "pager.h"

struct filepager {
	struct pager pg;
	const uint8_t *image;
	uint64_t size;
	unsigned long pages;
	long *cache;              /* per page: a read-only frame cap, or -1 */
	unsigned long cached, maps;
	void *owner;              /* the program's own, for its pager_ops callbacks */
	struct pager_ops ops;     /* ours for faults, the program's for the rest */
};

/* A file pager for the size bytes at image (kept, not copied), with
 * `more` as the program's own callbacks for client_gone and message
 * (their fault is the file pager's). 0 or an error (nothing made). */
long filepager_init(struct filepager *fp, const void *image, uint64_t size,
		    const struct pager_ops *more, void *owner);
/* Map the image at base (4 KiB aligned) in task `task`'s space, read-only. */
struct pager_client *filepager_attach(struct filepager *fp, long task, uint64_t base, long *err);
/* Detach every client, drop the page cache. */
void filepager_fini(struct filepager *fp);

#endif
