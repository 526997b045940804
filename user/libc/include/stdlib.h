/* stdlib of the in-tree C library: the heap (over the runtime's sbrk)
 * and exit. */
#ifndef LIBC_STDLIB_H
#define LIBC_STDLIB_H

#include <stddef.h>

void *malloc(size_t n);
void *calloc(size_t count, size_t size);
void free(void *p);
void exit(int status) __attribute__((noreturn));

#endif
