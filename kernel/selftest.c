#include <stdarg.h>
#include "ktest.h"
#include "kstring.h"
#include "printk.h"
#include "rcu.h"

extern const struct ktest __ktests_start[], __ktests_end[];

int ktest_fail_fmt(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return 1;
}

int ktest_skip_fmt(char *why, size_t whylen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, whylen, fmt, ap);
	va_end(ap);
	return KTEST_SKIP;
}

int ktest_run_each(const char *prefix, int *passed, int *skipped)
{
	int p = 0, f = 0, s = 0;
	for (const struct ktest *t = __ktests_start; t < __ktests_end; t++) {
		if (!str_starts_with(t->name, prefix))
			continue;
		char why[KTEST_WHY_LEN];
		why[0] = 0;
		/* Frees an earlier test deferred must not land inside this one
		 * (frame counts). */
		if (rcu_barrier(2000000))
			printk("selftest: RCU callbacks still pending before %s\n", t->name);
		int r = t->fn(why, sizeof why);
		if (r == 0) {
			printk("test %s: ok\n", t->name);
			p++;
		} else if (r == KTEST_SKIP) {
			printk("test %s: skipped (%s)\n", t->name, why[0] ? why : "no reason given");
			s++;
		} else {
			printk("test %s: FAIL %s\n", t->name, why[0] ? why : "(no reason)");
			f++;
		}
	}
	*passed = p;
	*skipped = s;
	return f;
}

int ktest_run_all(const char *prefix, int *passed)
{
	int skipped;
	int f = ktest_run_each(prefix, passed, &skipped);
	if (skipped)
		printk("selftest: %d passed, %d failed, %d skipped\n", *passed, f, skipped);
	else
		printk("selftest: %d passed, %d failed\n", *passed, f);
	return f;
}
