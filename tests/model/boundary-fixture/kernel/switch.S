# Planted violation in assembly; this comment's PTE_V is ignored.
	.text
	.globl set_root
set_root:
	li t0, (9 << SATP_MODE_SHIFT) /* BOUNDARY-EXPECT */
	or a0, a0, t0
	csrw satp, a0
	ret
