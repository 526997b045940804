/* User entry (x86-64): the kernel starts a task's first thread here with
 * its first four arguments in the system-call argument registers: rdi =
 * the spawn argument, rsi = argc, rdx = argv, r10 = the task's own module
 * index (the fourth is r10, not the SysV rcx, which a return by sysret
 * overwrites), and rsp below argv on the top page of its (lazily filled)
 * stack. The FS base is set by patina_start (_set_tls) before any
 * thread-local variable is touched. */
	.section .text.start, "ax"
	.globl _start
_start:
	xorl	%ebp, %ebp
	andq	$-16, %rsp
	movq	%r10, %rcx
	call	patina_start
1:	jmp	1b

/* Threads created with uthread_start begin here: rdi = argument block
 * {fn, arg, tls} on the new stack. _set_tls(tls) points the FS base at
 * the block's thread pointer before fn runs; it touches no
 * thread-local variable itself. rbx keeps the block across the call. */
	.text
	.globl uthread_entry
uthread_entry:
	xorl	%ebp, %ebp
	andq	$-16, %rsp
	movq	%rdi, %rbx
	movq	16(%rdi), %rdi
	call	_set_tls
	movq	8(%rbx), %rdi
	call	*(%rbx)
	call	uthread_exit
2:	jmp	2b

	.section .note.GNU-stack, "", @progbits
