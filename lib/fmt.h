/* Formatted output into a buffer or a character sink (lib/fmt.c), for
 * the kernel and user programs alike. */
#ifndef LIB_FMT_H
#define LIB_FMT_H

#include <stdarg.h>
#include <stddef.h>

/* Format like a small printf: %d %i %u %x %X %p %s (NULL prints "(null)")
 * %c %%, the l/ll/z length modifiers, width, and the '0' and '-' flags.
 * Always NUL-terminates (size > 0); returns the length the full output
 * would have. */
int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap);
int snprintf(char *buf, size_t size, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
/* The same formats, each character handed to sink(c, ctx) in order (a
 * stream's printf); returns the number of characters. */
int fmt_vprint(void (*sink)(char c, void *ctx), void *ctx, const char *fmt, va_list ap);

#endif
