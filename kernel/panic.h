/* Fatal errors: broken invariants only (errors are returned, not panicked). */
#ifndef KERNEL_PANIC_H
#define KERNEL_PANIC_H

#include <stdint.h>
struct trap_frame;

/* Print "panic: <message>" and a backtrace, then power off with SRST
 * reason "system failure". Never returns. */
void panic(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* Report an unexpected trap (its name and the machine's registers as the
 * arch gives them: arch_trap_name, arch_trap_dump; a backtrace) and
 * power off as panic does. */
void panic_trap(const struct trap_frame *tf) __attribute__((noreturn));

/* Print the frame-pointer chain starting at pc with frame pointer fp. */
void backtrace(uint64_t pc, uint64_t fp);

/* Power off through SRST; `failure` selects reason "system failure".
 * If SRST is missing or fails, say so and halt this hart. */
void machine_poweroff(int failure) __attribute__((noreturn));

/* Assertions for invariants. */
#define KASSERT(cond) do { if (!(cond)) \
	panic("assertion failed: %s at %s:%d", #cond, __FILE__, __LINE__); } while (0)

#endif
