/* The disk file pager: maps one file of the attached ext2 disk read-only
 * into every client that attaches it. Its page cache holds one read-only
 * frame a file page, read from the disk on the page's first fault (with a
 * few pages after it read ahead in the same block requests) and mapped
 * into every client that touches the page: all of them share that frame.
 * A write kills the writer. Built on libpager and fsdisk. */
#ifndef USER_FSPAGER_H
#define USER_FSPAGER_H

#include <stdint.h>
#include "pager.h"
#include "fsdisk.h"

#define FSPAGER_AHEAD 16u         /* pages read per fault at most (one block request) */

struct fspager {
	struct pager pg;
	struct fsdisk *disk;
	struct ext2_inode file;
	unsigned long pages;
	long *cache;              /* per page: a read-only frame cap, or -1 */
	uint8_t *stage;           /* FSPAGER_AHEAD pages: the file's bytes on their way to frames */
	unsigned long cached, maps, faults_read;
	struct pager_ops ops;     /* ours for faults, the program's for the rest */
};

/* A pager for regular file `file` of disk (kept, not copied: the pager
 * reads through it from the thread that serves), with `more` as the
 * program's own client_gone and message callbacks. 0; -E_INVAL for an
 * empty file or not a regular one; or an error (nothing made). */
long fspager_init(struct fspager *fp, struct fsdisk *disk, const struct ext2_inode *file,
		  const struct pager_ops *more);
/* Map the whole file (rounded up to pages) at base of task `task`,
 * read-only: the client, or NULL with *err. */
struct pager_client *fspager_attach(struct fspager *fp, long task, uint64_t base, long *err);
/* Detach every client, drop the page cache. */
void fspager_fini(struct fspager *fp);

#endif
