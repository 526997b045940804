/* What the C library needs of the program's runtime (user/lib/start.c,
 * the system layer that picolibc also calls through these names). */
#ifndef LIBC_UNISTD_H
#define LIBC_UNISTD_H

#include <stddef.h>

/* Move the heap's break by incr bytes: the old break, or (void *)-1 with
 * errno ENOMEM. */
void *sbrk(ptrdiff_t incr);
/* End the program; the console line it holds is written out first. */
void _exit(int status) __attribute__((noreturn));

#endif
