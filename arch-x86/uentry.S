/* x86-64 user-mode entry and exit, the kernel context switch and the
 * faulting user copy.
 *
 * While a thread runs in user mode its struct uframe (trap.h) sits at the
 * top of its kernel stack, and this CPU's TSS rsp0 and the per-CPU word
 * at %gs:16 (cpu_tables.c) hold the frame's end: an interrupt or
 * exception from ring 3 pushes the frame there (trapvec.S), and the
 * syscall entry below builds the same frame there by hand. The kernel
 * GS base (the per-CPU block) is swapped in with swapgs on every entry
 * and out on every exit; user code's FS base is saved in the frame. */
#include "gprs.h"
#define SEL_UCODE (0x20 | 3)
#define SEL_UDATA (0x18 | 3)
#define VEC_SYSCALL 0x100        /* trap.c: not an IDT vector */
#define PCPU_USER_RSP 8
#define PCPU_KSTACK 16

	.text
/* syscall: rip in rcx, rflags in r11, interrupts off (FMASK), user rsp. */
	.globl x86_syscall_entry
x86_syscall_entry:
	swapgs
	movq	%rsp, %gs:PCPU_USER_RSP
	movq	%gs:PCPU_KSTACK, %rsp
	pushq	$SEL_UDATA
	pushq	%gs:PCPU_USER_RSP
	pushq	%r11
	pushq	$SEL_UCODE
	pushq	%rcx
	pushq	$0
	pushq	$VEC_SYSCALL
	SAVE_GPRS
	jmp	x86_user_entry_tail

/* void user_return(struct uframe *uf): interrupts off, uf's cs, ss and
 * rflags say ring 3 (arch_trap_frame_to_user). The frame's end becomes
 * the kernel stack of the next entry from user mode. Does not return. */
	.globl user_return
user_return:
	leaq	192(%rdi), %rax
	movq	%rdi, %rsp
	movq	%rax, %rdi
	call	x86_set_user_kstack
	movl	$0xc0000100, %ecx       /* MSR_FS_BASE from the frame */
	movl	0(%rsp), %eax
	movl	4(%rsp), %edx
	wrmsr
	addq	$16, %rsp               /* fs_base, cr2 */
	RESTORE_GPRS
	addq	$16, %rsp               /* vector, error */
	swapgs
	iretq

/* struct kctx *switch_context(struct kctx *from, struct kctx *to): save
 * the callee-saved state and where to resume into from, resume to's.
 * Returns `from` (rax) on the new stack: how the next thread learns
 * whom it replaced. */
	.globl switch_context
switch_context:
	movq	(%rsp), %rax
	movq	%rax, 0(%rdi)
	leaq	8(%rsp), %rax
	movq	%rax, 8(%rdi)
	movq	%rbx, 16(%rdi)
	movq	%rbp, 24(%rdi)
	movq	%r12, 32(%rdi)
	movq	%r13, 40(%rdi)
	movq	%r14, 48(%rdi)
	movq	%r15, 56(%rdi)
	movq	8(%rsi), %rsp
	movq	16(%rsi), %rbx
	movq	24(%rsi), %rbp
	movq	32(%rsi), %r12
	movq	40(%rsi), %r13
	movq	48(%rsi), %r14
	movq	56(%rsi), %r15
	movq	%rdi, %rax
	jmpq	*0(%rsi)

/* First run of a new thread: switch_context "returned" here, rax = the
 * previous thread's context, rsp 16-byte aligned. */
	.globl thread_trampoline
thread_trampoline:
	movq	%rax, %rdi
	xorl	%ebp, %ebp
	call	thread_first_run
1:	hlt
	jmp	1b

/* void sched_resume_on(struct thread *prev, struct thread *next,
 * struct uframe *uf): the IPC handoff (sched_handoff, kernel/mk/mk.h):
 * finish the switch from prev on the free stack below next's frame. */
	.globl sched_resume_on
sched_resume_on:
	movq	%rdx, %rsp
	xorl	%ebp, %ebp
	call	sched_handoff_done
1:	hlt
	jmp	1b

/* long uaccess_copy(void *dst, const void *src, unsigned long n): the
 * caller opened user pages (arch_uaccess_begin). rep movsb keeps its
 * progress in rsi, rdi and rcx, so a page fault resolved in between
 * resumes the copy where it stopped; one uaccess_fixup (kernel/mk/
 * uaccess.c) cannot resolve resumes at uaccess_fault: -E_FAULT. 0 when
 * all n bytes were copied. */
	.globl uaccess_copy, uaccess_copy_end, uaccess_fault
uaccess_copy:
	movq	%rdx, %rcx
	rep movsb
	xorl	%eax, %eax
	ret
uaccess_copy_end:
uaccess_fault:
	movq	$-7, %rax
	ret
	.section .note.GNU-stack, "", @progbits
