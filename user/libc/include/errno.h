/* errno of the in-tree C library: one per thread, as picolibc's. */
#ifndef LIBC_ERRNO_H
#define LIBC_ERRNO_H

extern __thread int errno;

#define ENOMEM 12
#define EINVAL 22

#endif
