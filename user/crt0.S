/* User entry: the kernel starts a task's first thread here with a0 = the
 * spawn argument and sp at the top of its (lazily filled) stack. */
	.section .text.start
	.globl _start
_start:
	li	s0, 0
	li	ra, 0
	call	umain
	call	sys_exit_status
1:	j	1b

/* Threads created with uthread_start begin here: a0 = argument block
 * {fn, arg} on the new stack. */
	.globl uthread_entry
uthread_entry:
	ld	t0, 0(a0)
	ld	a0, 8(a0)
	li	s0, 0
	li	ra, 0
	jalr	t0
	li	a7, 4      /* SYS_THREAD_EXIT */
	ecall
2:	j	2b
