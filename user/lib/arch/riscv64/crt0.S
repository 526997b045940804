/* User entry: the kernel starts a task's first thread here with a0 = the
 * spawn argument, a1 = argc, a2 = argv, a3 = the task's own module index,
 * and sp below argv on the top page of its (lazily filled) stack. */
	.section .text.start
	.globl _start
_start:
	li	s0, 0
	li	ra, 0
	call	patina_start
1:	j	1b

/* Threads created with uthread_start begin here: a0 = argument block
 * {fn, arg, tls} on the new stack; tp is set before any C code runs. */
	.globl uthread_entry
uthread_entry:
	ld	tp, 16(a0)
	ld	t0, 0(a0)
	ld	a0, 8(a0)
	li	s0, 0
	li	ra, 0
	jalr	t0
	call	uthread_exit
2:	j	2b
