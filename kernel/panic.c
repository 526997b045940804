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
		/* GCC's RISC-V frame: ra at fp-8, caller's fp at fp-16. */
		uint64_t ra = ((uint64_t *)(uintptr_t)fp)[-1];
		uint64_t prev = ((uint64_t *)(uintptr_t)fp)[-2];
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

static const char *exc_name(uint64_t code)
{
	static const char *const names[] = {
		"instruction address misaligned", "instruction access fault",
		"illegal instruction", "breakpoint", "load address misaligned",
		"load access fault", "store address misaligned", "store access fault",
		"environment call from U-mode", "environment call from S-mode",
		"reserved (10)", "reserved (11)", "instruction page fault",
		"load page fault", "reserved (14)", "store page fault",
	};
	return code < sizeof names / sizeof names[0] ? names[code] : "unknown exception";
}

static const char *irq_name(uint64_t code)
{
	switch (code) {
	case IRQ_S_SOFT: return "supervisor software interrupt";
	case IRQ_S_TIMER: return "supervisor timer interrupt";
	case IRQ_S_EXT: return "supervisor external interrupt";
	default: return "unknown interrupt";
	}
}

void panic_trap(const struct trap_frame *tf)
{
	panic_enter();
	uint64_t code = tf->scause & ~SCAUSE_INTR;
	int intr = (tf->scause & SCAUSE_INTR) != 0;
	struct cpu *c = this_cpu();
	printk("panic: unexpected trap: %s (hart %u)\n",
	       intr ? irq_name(code) : exc_name(code), c ? c->hartid : 0);
	printk("  scause %016lx  sepc %016lx  stval %016lx  sstatus %016lx\n",
	       (unsigned long)tf->scause, (unsigned long)tf->sepc,
	       (unsigned long)tf->stval, (unsigned long)tf->sstatus);
	static const char *const rn[32] = {
		"zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0",
		"a1", "a2", "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5",
		"s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
	};
	for (int i = 1; i < 32; i += 4) {
		char line[160];
		int n = 0;
		for (int j = i; j < i + 4 && j < 32; j++)
			n += snprintf(line + n, sizeof line - (size_t)n, "  %-4s %016lx",
				      rn[j], (unsigned long)tf->regs[j]);
		printk("%s\n", line);
	}
	backtrace(tf->sepc, tf->regs[8]);
	machine_poweroff(1);
}
