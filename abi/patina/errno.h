/* Error codes shared by the kernel and user space. Functions return 0 or a
 * negative code; the numbers are part of the ABI and never change meaning. */
#ifndef PATINA_ERRNO_H
#define PATINA_ERRNO_H

#define E_OK        0
#define E_NOMEM     1   /* out of physical frames or table space */
#define E_INVAL     2   /* argument malformed or out of range */
#define E_BUSY      3   /* resource held by someone else */
#define E_NOENT     4   /* no such object / node / command */
#define E_NOSYS     5   /* operation not supported here (e.g. SBI extension absent) */
#define E_TIMEDOUT  6   /* waited past the deadline */
#define E_FAULT     7   /* bad address */
#define E_PERM      8   /* rights do not allow it */
#define E_EXIST     9   /* already present */
#define E_IO        10  /* firmware or device reported an error */

#endif
