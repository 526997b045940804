/* pvhprobe's entry: QEMU's PVH loader finds the 32-bit entry point in
 * the Xen ELF note (type 18, XEN_ELFNOTE_PHYS32_ENTRY) and starts it in
 * 32-bit protected mode, paging off, ebx = the start info's address. */
	.pushsection .note.Xen, "a", @note
	.align 4
	.long 4, 4, 18          /* name size, descriptor size, type */
	.asciz "Xen"
	.align 4
	.long _start
	.popsection

	.code32
	.text
	.globl _start
_start:
	mov $stack_top, %esp
	push %ebx
	call probe_main
1:	hlt
	jmp 1b

	.bss
	.align 16
	.space 16384
stack_top:

	.section .note.GNU-stack, "", @progbits
