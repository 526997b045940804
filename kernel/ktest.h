/* In-kernel test registry. A test is a function that returns 0 on success,
 * KTEST_SKIP (through KSKIP, with the reason in `why`) when what it tests
 * is absent on this machine (a device the device tree does not list), or
 * fills `why` and returns another nonzero value on failure; KTEST places its descriptor in the
 * .ktests.* linker section, and `selftest` runs them in name order of
 * their section suffix (then link order).
 *
 *   KTEST(frame_alloc_basic) { ... if (bad) return ktest_fail(why, "..."); return 0; }
 */
#ifndef KERNEL_KTEST_H
#define KERNEL_KTEST_H

#include <stddef.h>

#define KTEST_WHY_LEN 160

struct ktest {
	const char *name;
	int (*fn)(char *why, size_t whylen);
};

#define KTEST_ORDERED(order, tname) \
	static int ktest_fn_##tname(char *why, size_t whylen); \
	static const struct ktest ktest_desc_##tname \
		__attribute__((used, section(".ktests." #order "." #tname), aligned(8))) = \
		{ #tname, ktest_fn_##tname }; \
	static int ktest_fn_##tname(char *why __attribute__((unused)), \
				    size_t whylen __attribute__((unused)))

/* Order groups: 10 boot/FDT, 20 frames, 30 SMP/IPI/timer, 50+ later code. */
#define KTEST(group, tname) KTEST_ORDERED(group, tname)

/* Format a failure reason into why; returns 1. */
int ktest_fail_fmt(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define KFAIL(...) ktest_fail_fmt(why, whylen, __VA_ARGS__)

/* A skipped test: counted as neither passed nor failed, and printed as
 * "test NAME: skipped (REASON)". Only for what the machine lacks, never for
 * a check that could not be made to pass. */
#define KTEST_SKIP 2
int ktest_skip_fmt(char *why, size_t whylen, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define KSKIP(...) ktest_skip_fmt(why, whylen, __VA_ARGS__)

/* Run every registered test whose name starts with `prefix` ("" = all);
 * prints one line per test and the summary line ("selftest: P passed, F
 * failed", with ", S skipped" appended when S > 0). Returns failures. */
int ktest_run_all(const char *prefix, int *passed);

/* The same without the summary line (the user-level selftest prints one for
 * both kernel and user tests). Frees an earlier test deferred through RCU
 * are drained before each test, since several count free frames. Returns
 * failures; *passed gets passes and *skipped skips. */
int ktest_run_each(const char *prefix, int *passed, int *skipped);

#endif
