/* stdio of the in-tree C library: streams with a put, get and flush
 * function each, set up as picolibc's tiny stdio sets them up
 * (FDEV_SETUP_STREAM), so the runtime's console stream (user/lib/start.c)
 * is the same source for both C libraries. Formatting is lib/fmt.c's. */
#ifndef LIBC_STDIO_H
#define LIBC_STDIO_H

#include <stdarg.h>
#include <stddef.h>

#define EOF (-1)

typedef struct __file FILE;
struct __file {
	int (*put)(char c, FILE *f);   /* c, or EOF on failure */
	int (*get)(FILE *f);           /* the next byte, or EOF */
	int (*flush)(FILE *f);         /* 0, or EOF */
	unsigned char flags;           /* _FDEV_SETUP_* */
};
#define _FDEV_SETUP_READ  1
#define _FDEV_SETUP_WRITE 2
#define _FDEV_SETUP_RW    (_FDEV_SETUP_READ | _FDEV_SETUP_WRITE)
#define FDEV_SETUP_STREAM(p, g, fl, f) { .put = (p), .get = (g), .flush = (fl), .flags = (f) }

/* Defined by the program's runtime (start.c). */
extern FILE *const stdin;
extern FILE *const stdout;
extern FILE *const stderr;

int printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int snprintf(char *buf, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int fflush(FILE *f);

#endif
