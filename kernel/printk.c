#include <stdint.h>
#include "printk.h"
#include "kstring.h"
#include "spinlock.h"
#include "arch.h"

static spinlock_t console_lock = SPINLOCK_INIT_CLASS(&lock_class_console);
static volatile int panic_mode;

void console_write(const char *s, size_t len)
{
	unsigned long f = irq_save();
	if (panic_mode) {
		/* Bounded wait: a hart stopped by panic may hold the lock. */
		int got = 0;
		for (int i = 0; i < 1000000 && !(got = spin_trylock(&console_lock)); i++)
			cpu_relax();
		(void)arch_console_write(s, len);
		if (got)
			spin_unlock(&console_lock);
		irq_restore(f);
		return;
	}
	spin_lock(&console_lock);
	/* Nothing useful to do if the firmware console fails. */
	(void)arch_console_write(s, len);
	spin_unlock(&console_lock);
	irq_restore(f);
}

void printk(const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof buf, fmt, ap);
	va_end(ap);
	if (n > (int)sizeof buf - 1)
		n = sizeof buf - 1;
	console_write(buf, (size_t)n);
}

void printk_panic_mode(void)
{
	panic_mode = 1;
}
