/* x86-64 trap frame, user frame and kernel context: their layouts are
 * fixed by trapvec.S and uentry.S. Generic code holds pointers to them
 * and reaches the registers only through the accessors of uregs.h
 * (kernel/arch.h gives their contract). */
#ifndef ARCH_X86_TRAP_H
#define ARCH_X86_TRAP_H

#include <stdint.h>

/* Lowest address first: what the stubs push (fs_base and cr2 last), then
 * the vector and error code, then the frame the CPU pushes (rip .. ss).
 * A trap from user mode builds it at the top of the thread's kernel
 * stack (TSS rsp0, or the syscall entry), so struct uframe is exactly
 * this frame. 16-byte multiple: the CPU aligns the stack it pushes onto. */
struct trap_frame {
	uint64_t fs_base;          /* user TLS; the kernel does not use FS */
	uint64_t cr2;              /* page-fault address (vector 14) */
	uint64_t r15, r14, r13, r12, r11, r10, r9, r8;
	uint64_t rbp, rdi, rsi, rdx, rcx, rbx, rax;
	uint64_t vector, error;
	uint64_t rip, cs, rflags, rsp, ss;
};

#define TF_SIZE 192
#define TF_WORDS (TF_SIZE / 8)

/* A thread's user registers, at the top of its kernel stack. */
struct uframe {
	struct trap_frame tf;
};

/* Saved kernel context (uentry.S switch_context): where it resumes, its
 * stack and the callee-saved registers of the SysV ABI. */
struct kctx {
	uint64_t rip, rsp, rbx, rbp, r12, r13, r14, r15;
};

_Static_assert(sizeof(struct trap_frame) == TF_SIZE, "TF_SIZE in trapvec.S");
_Static_assert(__builtin_offsetof(struct trap_frame, rax) == 128, "TF_RAX in trapvec.S");
_Static_assert(__builtin_offsetof(struct trap_frame, rip) == 152, "TF_RIP in trapvec.S");

extern char thread_trampoline[];   /* uentry.S: a new thread's first return */

/* Called by trapvec.S / uentry.S for every trap from user mode (a
 * system call, an exception, an interrupt). Does not return. */
void user_trap(struct uframe *uf) __attribute__((noreturn));

/* Called by trapvec.S for a trap from kernel mode, interrupts off;
 * returning resumes through tf. */
void trap_dispatch(struct trap_frame *tf);

/* Per-CPU tables (cpu_tables.c): this CPU's GDT, TSS and the shared IDT
 * loaded, GS base pointing at its block. */
void x86_trap_init_hart(void);
/* Make c the per-CPU pointer of this CPU (arch_cpu_set). */
void x86_cpu_set(void *c);
/* For the NMI handler (remote.c), which runs on the IST stack and may
 * have interrupted a swapgs pair (GS is the user's): this CPU's struct
 * cpu, found from the frame's place; and GS base made the kernel's, for
 * a report that ends in a panic. */
struct cpu;
struct cpu *x86_nmi_cpu(const struct trap_frame *tf);
void x86_nmi_kernel_gs(const struct trap_frame *tf);
/* remote.c: vector 2 (trapvec.S), from ring 0 or 3; returns. */
void x86_nmi(struct trap_frame *tf);
/* The kernel stack top traps from user mode land on: TSS rsp0 and the
 * syscall entry's stack. Interrupts off. */
void x86_set_user_kstack(uint64_t top);

#endif
