/* RISC-V trap frame, user frame and kernel context: their layouts are
 * fixed by trapvec.S and uentry.S. Generic code holds pointers to them
 * and reaches the registers only through the accessors of uregs.h
 * (kernel/arch.h gives their contract). */
#ifndef ARCH_RISCV_TRAP_H
#define ARCH_RISCV_TRAP_H

#include <stdint.h>

/* regs[i] is x<i>; regs[0] is unused. Field order is fixed by trapvec.S. */
struct trap_frame {
	uint64_t regs[32];
	uint64_t sepc;
	uint64_t sstatus;
	uint64_t scause;
	uint64_t stval;
};

#define TF_SIZE 288

/* Top of a thread's kernel stack: the user registers, then the kernel tp
 * user_vector restores (uentry.S UF_KTP). 16-byte multiple. */
struct uframe {
	struct trap_frame tf;
	uint64_t kernel_tp;
	uint64_t pad;
};

/* Saved kernel context (uentry.S switch_context layout): ra, sp, s0-s11. */
struct kctx {
	uint64_t ra, sp, s[12];
};

_Static_assert(sizeof(struct trap_frame) == TF_SIZE, "TF_SIZE in trapvec.S");
_Static_assert(__builtin_offsetof(struct uframe, kernel_tp) == 288, "UF_KTP in uentry.S");

extern char trap_vector[];
extern char thread_trampoline[];   /* uentry.S: a new thread's first return */

/* Called by uentry.S for every user trap the IPC fast path did not
 * complete (trap.c). Does not return. */
void user_trap(struct uframe *uf) __attribute__((noreturn));

/* Called by trapvec.S with interrupts off; returning resumes at frame->sepc. */
void trap_dispatch(struct trap_frame *tf);

#endif
