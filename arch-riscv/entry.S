/* S-mode entry from OpenSBI. Runs with the MMU off at the physical load
 * address: every address is formed PC-relatively (lla) until we jump high.
 *
 * The trampoline (Sv39, gigapages) maps the low 256 GiB 1:1, so early C code
 * can read the DTB wherever the firmware put it, plus the kernel's gigabyte
 * at its link address. It also serves as the probe for Sv48 and Sv57: an
 * Sv48 root whose first and last entries point at the Sv39 table maps the
 * same pages, and so does an Sv57 root whose first and last entries point
 * at that Sv48 root, so writing either to satp is harmless whether or not
 * the hart accepts it. */

#define PTE_V 0x01
#define PTE_LEAF_RWX_AD 0xcf     /* V R W X A D */

/* Probe one paging mode: point entries 0 and 511 of the empty page `root`
 * at the table `child` (one level down, mapping what the trampoline maps),
 * write satp = MODE `mode` with that root, and set the dword `flag` to 1 if
 * satp kept the mode. Leaves satp on the probe root when it was accepted.
 * Clobbers t1-t4. */
.macro PROBE_SATP root, child, mode, flag
	lla	t1, \child
	lla	t4, \root
	srli	t2, t1, 12
	slli	t2, t2, 10
	ori	t2, t2, PTE_V
	sd	t2, 0(t4)
	li	t3, 511*8
	add	t3, t3, t4
	sd	t2, 0(t3)
	srli	t1, t4, 12
	li	t2, \mode
	slli	t2, t2, 60
	or	t1, t1, t2
	csrw	satp, t1
	sfence.vma
	csrr	t1, satp
	srli	t1, t1, 60
	li	t2, \mode
	bne	t1, t2, 8f
	li	t1, 1
	lla	t3, \flag
	sd	t1, 0(t3)
8:
.endm

	.section .text.entry, "ax"
	.globl _start
_start:
	/* a0 = boot hart id, a1 = DTB physical address: keep both. */
	csrw	sie, zero
	csrw	satp, zero
	/* Only the first hart here is the boot hart. OpenSBI 1.1's HSM start
	 * marks a hart START_PENDING before it stores the start address, so a
	 * hart woken in that window jumps to the firmware's default, _start
	 * (seen under a loaded host). Such a late hart must not clear our BSS:
	 * it stops itself through HSM, and smp_start_harts starts it again. */
	lla	t0, boot_claimed
	li	t1, 1
	amoswap.w.aqrl t1, t1, (t0)
	beqz	t1, .Lboot_hart
	li	a7, 0x48534D          /* SBI HSM */
	li	a6, 1                 /* HART_STOP: does not return on success */
	ecall
6:	wfi
	j	6b
.Lboot_hart:

	lla	t0, _bss_start
	lla	t1, _bss_end
1:	bgeu	t0, t1, 2f
	sd	zero, 0(t0)
	addi	t0, t0, 8
	j	1b
2:
	/* kernel_va_pa_offset = link address - load address */
	lla	t0, _start
	lla	t2, .Lstart_va
	ld	t1, 0(t2)
	sub	t1, t1, t0
	lla	t2, kernel_va_pa_offset
	sd	t1, 0(t2)

	/* Identity gigapages for VA 0 .. 256 GiB. */
	lla	t0, boot_pt_sv39
	li	t2, 0
	li	t3, 256
3:	slli	t4, t2, 28
	ori	t4, t4, PTE_LEAF_RWX_AD
	slli	t5, t2, 3
	add	t5, t5, t0
	sd	t4, 0(t5)
	addi	t2, t2, 1
	blt	t2, t3, 3b

	/* High alias: the kernel's gigabyte at its link address. */
	lla	t2, _start
	srli	t2, t2, 30
	slli	t4, t2, 28
	ori	t4, t4, PTE_LEAF_RWX_AD
	lla	t5, .Lstart_va
	ld	t5, 0(t5)
	srli	t5, t5, 30
	andi	t5, t5, 511
	slli	t5, t5, 3
	add	t5, t5, t0
	sd	t4, 0(t5)

	PROBE_SATP boot_pt_sv48_probe, boot_pt_sv39, 9, boot_satp_sv48_ok
	PROBE_SATP boot_pt_sv57_probe, boot_pt_sv48_probe, 10, boot_satp_sv57_ok

	/* Trampoline satp (Sv39) for this and the secondary harts. */
	srli	t1, t0, 12
	li	t2, 8
	slli	t2, t2, 60
	or	t1, t1, t2
	lla	t3, boot_satp_tramp
	sd	t1, 0(t3)
	csrw	satp, t1
	sfence.vma

	lla	t0, .Lhigh_va
	ld	t0, 0(t0)
	jr	t0

.Lhigh:
	/* Now at the link address. */
	lla	sp, boot_stack_top
	li	s0, 0
	li	ra, 0
	call	kmain
5:	wfi
	j	5b

/* Secondary harts, started by sbi_hart_start at the physical address of this
 * symbol: a0 = hart id, a1 = opaque = kernel VA of the hart's struct cpu,
 * whose first word is its stack top. secondary_main switches to the kernel
 * page table. */
	.globl _start_secondary
_start_secondary:
	csrw	sie, zero
	lla	t0, boot_satp_tramp
	ld	t0, 0(t0)
	csrw	satp, t0
	sfence.vma
	lla	t0, .Lsec_high_va
	ld	t0, 0(t0)
	jr	t0
.Lsec_high:
	/* The kernel page table first: the struct cpu and the stack live in
	 * the direct map, which the trampoline does not map. */
	lla	t0, boot_kernel_as_token
	ld	t0, 0(t0)
	csrw	satp, t0
	sfence.vma
	mv	tp, a1
	ld	sp, 0(tp)
	li	s0, 0
	li	ra, 0
	call	secondary_main
6:	wfi
	j	6b

	.balign 8
.Lstart_va:	.dword _start
.Lhigh_va:	.dword .Lhigh
.Lsec_high_va:	.dword .Lsec_high

	.section .data
	/* Set by the first hart into _start (in .data: BSS is cleared after). */
	.balign 4
boot_claimed:
	.word	0
	.balign 8
	.globl kernel_va_pa_offset, boot_satp_sv48_ok, boot_satp_sv57_ok
	.globl boot_satp_tramp, phys_map_base
kernel_va_pa_offset:	.dword 0
phys_map_base:		.dword 0
boot_satp_sv48_ok:	.dword 0
boot_satp_sv57_ok:	.dword 0
boot_satp_tramp:	.dword 0
	.globl boot_kernel_as_token
boot_kernel_as_token:	.dword 0      /* kernel page table satp, set by harts_init */

	.section .bss.boot_pt, "aw", @nobits
	.balign 4096
	.globl boot_pt_sv39, boot_pt_sv48_probe, boot_pt_sv57_probe
boot_pt_sv39:		.skip 4096
boot_pt_sv48_probe:	.skip 4096
boot_pt_sv57_probe:	.skip 4096

	.section .bss.boot_stack, "aw", @nobits
	.balign 16
boot_stack:		.skip 16384
	.globl boot_stack, boot_stack_top
boot_stack_top:
