# Planted violations in assembly; this comment's PTE_V and csrw are ignored.
	.text
	.globl set_root
set_root:
	li t0, (9 << SATP_MODE_SHIFT) /* BOUNDARY-EXPECT */
	or a0, a0, t0
	csrw satp, a0 /* BOUNDARY-EXPECT */
	sfence.vma zero, zero /* BOUNDARY-EXPECT */
	ret
