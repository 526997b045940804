#include <stdarg.h>
#include "panic.h"
#include "printk.h"
#include "arch.h"
#include "memlayout.h"
#include "cpu.h"
#include "lockcheck.h"
#include "failalloc.h"

static volatile uint32_t panicking;

void machine_poweroff(int failure)
{
	if (!failure)
		failalloc_report();
	long err = arch_poweroff(failure);
	irq_disable();
	printk("patina: SRST shutdown failed (error %ld); halting\n", err);
	for (;;)
		arch_wait_for_interrupt();
}

/* A frame pointer is trusted only inside the kernel's .bss (where every
 * kernel stack lives) and 8-byte aligned. */
static int fp_ok(uint64_t fp)
{
	return !(fp & 7) && fp >= (uint64_t)(uintptr_t)_bss_start + 16 &&
	       fp <= (uint64_t)(uintptr_t)_bss_end;
}

void backtrace(uint64_t pc, uint64_t fp)
{
	printk("backtrace:\n");
	printk("  #0  %p\n", (void *)(uintptr_t)pc);
	for (int depth = 1; depth < 32 && fp_ok(fp); depth++) {
		uint64_t ra, prev;
		arch_frame_step(fp, &ra, &prev);
		if (ra == 0)
			break;
		printk("  #%-2d %p\n", depth, (void *)(uintptr_t)ra);
		if (prev <= fp)
			break;
		fp = prev;
	}
}

/* Only the first panicking hart reports; later ones stop quietly. */
static void panic_enter(void)
{
	irq_disable();
	if (__atomic_exchange_n(&panicking, 1, __ATOMIC_ACQ_REL)) {
		for (;;)
			arch_wait_for_interrupt();
	}
	lockcheck_stop();     /* the report's printing must not trip it again */
	printk_panic_mode();
}

void panic(const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	panic_enter();
	va_start(ap, fmt);
	vsnprintf(msg, sizeof msg, fmt, ap);
	va_end(ap);
	struct cpu *c = this_cpu();
	printk("panic: %s (hart %u)\n", msg, c ? c->hartid : 0);
	backtrace(arch_current_pc(), arch_frame_pointer());
	machine_poweroff(1);
}

void panic_trap(const struct trap_frame *tf)
{
	panic_enter();
	struct cpu *c = this_cpu();
	printk("panic: unexpected trap: %s (hart %u)\n", arch_trap_name(tf), c ? c->hartid : 0);
	arch_trap_dump(tf);
	backtrace(uf_get(tf, UREG_PC), uf_get(tf, UREG_FP));
	machine_poweroff(1);
}
