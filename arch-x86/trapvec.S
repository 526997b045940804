/* x86-64 interrupt and exception entry: one 16-byte stub per IDT vector
 * (trap_stubs + 16 * vector, cpu_tables.c fills the IDT from it) pushes
 * a zero error code where the CPU pushes none, and the vector; the
 * common part saves the general registers, CR2 and (from user mode) the
 * FS base into a struct trap_frame (trap.h) and calls
 *   - user_trap(frame) for a trap from ring 3 (after swapgs): the frame
 *     is the thread's struct uframe at the top of its kernel stack (TSS
 *     rsp0); it does not return (uentry.S user_return goes back);
 *   - trap_dispatch(frame) for a trap from ring 0, then restores the
 *     registers and returns with iretq;
 *   - x86_nmi(frame) for an NMI (vector 2), from either ring, on its IST
 *     stack: it may have interrupted the kernel between a swapgs and the
 *     iretq or syscall entry it belongs to, so GS is neither trusted nor
 *     swapped (x86_nmi finds its CPU from the stack); it returns with
 *     iretq to wherever it came from. */
#include "gprs.h"

	.text
	.p2align 4
	.globl trap_stubs
trap_stubs:
	.set vec, 0
	.rept 256
	.if !(vec == 8 || vec == 10 || vec == 11 || vec == 12 || vec == 13 || vec == 14 || vec == 17 || vec == 21 || vec == 29 || vec == 30)
	pushq	$0
	.endif
	pushq	$vec
	jmp	trap_common
	/* Each stub is 16 bytes (an assembler error if one grew longer). */
	.org	trap_stubs + 16 * (vec + 1), 0xcc
	.set vec, vec + 1
	.endr

trap_common:
	cmpq	$2, (%rsp)              /* the vector: NMI */
	je	nmi_common
	testb	$3, 16 + 8(%rsp)        /* the CS the CPU pushed */
	jnz	from_user
	SAVE_GPRS
	movq	%cr2, %rax
	pushq	%rax
	pushq	$0                      /* fs_base: the kernel's is not touched */
	movq	%rsp, %rdi
	cld
	call	trap_dispatch
	addq	$16, %rsp
	RESTORE_GPRS
	addq	$16, %rsp               /* vector, error */
	iretq

nmi_common:
	SAVE_GPRS
	movq	%cr2, %rax
	pushq	%rax
	pushq	$0                      /* fs_base: not touched */
	movq	%rsp, %rdi
	cld
	call	x86_nmi
	addq	$16, %rsp
	RESTORE_GPRS
	addq	$16, %rsp               /* vector, error */
	iretq

from_user:
	swapgs
	SAVE_GPRS
	.globl x86_user_entry_tail
x86_user_entry_tail:
	/* CR2 and the user's FS base into the frame; rsp is the frame. */
	movq	%cr2, %rax
	pushq	%rax
	movl	$0xc0000100, %ecx       /* MSR_FS_BASE */
	rdmsr
	shlq	$32, %rdx
	orq	%rdx, %rax
	pushq	%rax
	movq	%rsp, %rdi
	xorl	%ebp, %ebp
	cld
	call	user_trap
1:	hlt
	jmp	1b
	.section .note.GNU-stack, "", @progbits
