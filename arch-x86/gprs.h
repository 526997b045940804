/* The general registers in the order of struct trap_frame (trap.h), for
 * the assembly that builds and unwinds one (trapvec.S, uentry.S): rax is
 * pushed first (highest address), r15 last. */
#ifndef ARCH_X86_GPRS_H
#define ARCH_X86_GPRS_H

.macro SAVE_GPRS
	pushq	%rax
	pushq	%rbx
	pushq	%rcx
	pushq	%rdx
	pushq	%rsi
	pushq	%rdi
	pushq	%rbp
	pushq	%r8
	pushq	%r9
	pushq	%r10
	pushq	%r11
	pushq	%r12
	pushq	%r13
	pushq	%r14
	pushq	%r15
.endm

.macro RESTORE_GPRS
	popq	%r15
	popq	%r14
	popq	%r13
	popq	%r12
	popq	%r11
	popq	%r10
	popq	%r9
	popq	%r8
	popq	%rbp
	popq	%rdi
	popq	%rsi
	popq	%rdx
	popq	%rcx
	popq	%rbx
	popq	%rax
.endm

#endif
