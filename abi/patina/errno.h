/* Error codes shared by the kernel and user space: ONE enum and ONE table of
 * names. Functions return 0 or a negative code; the numbers are part of the
 * ABI and never change meaning. Add new codes at the end only. */
#ifndef PATINA_ERRNO_H
#define PATINA_ERRNO_H

enum patina_err {
	E_OK        = 0,
	E_NOMEM     = 1,   /* out of physical frames or table space */
	E_INVAL     = 2,   /* argument malformed or out of range */
	E_BUSY      = 3,   /* resource held by someone else */
	E_NOENT     = 4,   /* no such object / node / command */
	E_NOSYS     = 5,   /* operation not supported (unknown syscall, SBI extension absent) */
	E_TIMEDOUT  = 6,   /* waited past the deadline */
	E_FAULT     = 7,   /* bad address (user pointer not readable/writable) */
	E_PERM      = 8,   /* the capability's rights do not allow it */
	E_EXIST     = 9,   /* already present (slot occupied, page mapped) */
	E_IO        = 10,  /* firmware or device reported an error */
	E_BADCAP    = 11,  /* slot empty, out of range, or of the wrong type */
	E_QUOTA     = 12,  /* the task's frame/object quota is exhausted */
	E_DEAD      = 13,  /* the peer or object was destroyed */
	E_RANGE     = 14,  /* address range outside what the cap covers */
	E_AGAIN     = 15,  /* nothing available now; try again */
	E_COUNT
};

/* Name of a (positive or negative) error code; "E_?" for unknown ones. */
static inline const char *err_name(long e)
{
	static const char *const names[E_COUNT] = {
		"E_OK", "E_NOMEM", "E_INVAL", "E_BUSY", "E_NOENT", "E_NOSYS",
		"E_TIMEDOUT", "E_FAULT", "E_PERM", "E_EXIST", "E_IO", "E_BADCAP",
		"E_QUOTA", "E_DEAD", "E_RANGE", "E_AGAIN",
	};
	if (e < 0)
		e = -e;
	return e < E_COUNT ? names[e] : "E_?";
}

#endif
