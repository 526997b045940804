/* string.h of the in-tree C library: lib/kstring.c's functions, shared
 * with the kernel (their declarations are lib/kstring.h's), and the few
 * more user programs call (string.c). */
#ifndef LIBC_STRING_H
#define LIBC_STRING_H

#include <stddef.h>
#include "kstring.h"

void *memchr(const void *s, int c, size_t n);
char *strrchr(const char *s, int c);
char *strcpy(char *dst, const char *src);
char *strcat(char *dst, const char *src);

#endif
