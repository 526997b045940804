/* Freestanding string and memory helpers (lib/kstring.c), compiled into
 * the kernel and into user programs. The mem* and str* functions keep
 * the standard C signatures because the compiler may emit calls to them. */
#ifndef KERNEL_KSTRING_H
#define KERNEL_KSTRING_H

#include <stddef.h>

void *memset(void *dst, int c, size_t n);
void *memcpy(void *dst, const void *src, size_t n);
void *memmove(void *dst, const void *src, size_t n);
int memcmp(const void *a, const void *b, size_t n);
size_t strlen(const char *s);
size_t strnlen(const char *s, size_t max);
int strcmp(const char *a, const char *b);
int strncmp(const char *a, const char *b, size_t n);
char *strchr(const char *s, int c);

/* Copy at most size-1 bytes and always NUL-terminate (size > 0).
 * Returns strlen(src) so truncation is detectable. */
size_t strlcpy(char *dst, const char *src, size_t size);

#include "textargs.h"

#endif
