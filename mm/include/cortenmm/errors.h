/* CortenMM error codes. Every failing call returns one of these (negative)
 * and leaves the page-table tree exactly as it was. Distinct codes so tests
 * can tell the failure causes apart. */
#ifndef CORTENMM_ERRORS_H
#define CORTENMM_ERRORS_H

enum mm_err {
	MM_OK        = 0,
	MM_EINVAL    = -1,  /* malformed argument (unknown status kind, bad flags) */
	MM_EALIGN    = -2,  /* address or length not aligned to the page size used */
	MM_ERANGE    = -3,  /* empty or inverted range (start >= end) */
	MM_EOUTSIDE  = -4,  /* range outside the address space's half (user/kernel) */
	MM_ENOTLOCKED= -5,  /* operation range not inside the cursor's locked range */
	MM_EEXIST    = -6,  /* map over a page that is already mapped (or COW) */
	MM_EMAPPED   = -7,  /* mark over a range that contains mapped pages */
	MM_ENOMEM    = -8,  /* out of frames for PT pages or metadata */
	MM_EHUGE     = -9,  /* page size not supported at that level by this arch */
	MM_EPROT     = -10, /* permission set the arch cannot express (e.g. no R) */
};

/* Short name of an error code, for test output. */
const char *mm_strerror(int err);

#endif
