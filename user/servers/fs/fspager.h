/* The disk file pager: serves one file of the attached ext2 disk as a
 * memory object (patina/mobj.h), mapped read-only into every client that
 * opens it. The object holds one frame a file page; a touch of a page it
 * does not hold yet is an object fault on the pager's endpoint, answered
 * by reading the page (and up to FSPAGER_AHEAD - 1 pages after it, in the
 * same block requests) from the disk into pages of the pager's own and
 * moving them into the object with SYS_MOBJ_SUPPLY, no copy. Every client
 * maps the same object, so all of them share those frames. A write kills
 * the writer. Built on libpager's endpoint and serve loop, and fsdisk.
 * One fspager a task: it stages pages at FSPAGER_STAGE_VA. */
#ifndef USER_FSPAGER_H
#define USER_FSPAGER_H

#include <stdint.h>
#include "pager.h"
#include "fsdisk.h"

#define FSPAGER_AHEAD 16u         /* pages read per fault at most (one block request) */
#define FSPAGER_STAGE_VA 0x3800000000UL   /* the pages on their way into the object */
/* The badge the object's faults carry: below libpager's, above the
 * program's own messages. */
#define FSPAGER_BADGE (PAGER_BADGE_MIN - 1)

struct fspager {
	struct pager pg;
	struct fsdisk *disk;
	struct ext2_inode file;
	unsigned long pages;
	long obj;                 /* the object: every right */
	long ro;                  /* the object, R_MAP | R_READ: what clients' mappings come from */
	long fault_ep;            /* our endpoint, badged FSPAGER_BADGE, the object's pager */
	uint8_t *held;            /* per page: 1 once supplied to the object */
	unsigned long supplied, faults, faults_read;
	struct pager_ops ops;     /* ours: the object's faults, then the program's messages */
	struct pager_ops prog;    /* the program's (its message callback) */
};

/* A pager and its object for regular file `file` of disk (kept, not
 * copied: the pager reads through it from the thread that serves), with
 * `more` as the program's own message callback (faults and death notices
 * of libpager clients never come: the pager attaches none). 0; -E_INVAL
 * for an empty file, one not regular, or one above MOBJ_MAX_PAGES pages;
 * or an error (nothing made). */
long fspager_init(struct fspager *fp, struct fsdisk *disk, const struct ext2_inode *file,
		  const struct pager_ops *more);
/* Open the file for task `task` (a task cap with R_CONTROL): map the
 * whole object (the file rounded up to pages) read-only at va of its
 * space, through the read-only cap. Nothing is read until it is touched.
 * 0, or the error of SYS_TASK_REGION or ROP_MAP_OBJ (nothing mapped). */
long fspager_open(struct fspager *fp, long task, uint64_t va);
/* Frames the object holds now (SYS_CAP_INFO), or an error. */
long fspager_held(struct fspager *fp);
/* Drop the object, its caps and the endpoint: the frames go once no
 * mapping holds them. */
void fspager_fini(struct fspager *fp);

#endif
