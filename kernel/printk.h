/* Kernel console output. Each printk call writes its whole line(s) under one
 * lock, so harts' messages never interleave inside a call. */
#ifndef KERNEL_PRINTK_H
#define KERNEL_PRINTK_H

#include <stdarg.h>
#include <stddef.h>
#include "fmt.h"

/* vsnprintf and snprintf come from lib/fmt.c (shared with user programs). */

/* Print to the console. Lines longer than the internal buffer (512 bytes)
 * are truncated. Safe from any context, interrupts included. */
void printk(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Write raw bytes under the console lock (SYS_PUTS uses this). */
void console_write(const char *s, size_t len);

/* Called by panic: later printk calls stop waiting for a lock that a
 * stopped hart may hold forever. */
void printk_panic_mode(void);

#endif
