/* x86-64 boot entry (PVH). QEMU's -kernel finds the PVH note below and
 * starts pvh_start in 32-bit protected mode, paging off, ebx = physical
 * address of the hvm_start_info. The 32-bit code builds the boot page
 * tables in .boot (linked at its physical address, kernel.ld):
 *   - low memory 1:1, so the start info, the ACPI tables and the free
 *     frames the mm core builds the kernel page table from are reachable
 *     at their physical addresses (phys_map_base 0): 4 GiB in 2 MiB pages,
 *     up to 512 GiB in 1 GiB pages where the CPU has them;
 *   - physical 0..1 GiB at KERNEL_VBASE (the image at its link address).
 * Then PAE, EFER.LME/NXE/SCE, CR0.PG, a far jump into 64-bit code and a
 * jump to the link address: x86_boot (boot.c) on the boot stack. */
#include "boot_segs.h"
#define PTE_P_RW     0x3
#define PTE_P_RW_PS  0x83
#define CPUID_EXT_NX      (1 << 20)
#define CPUID_EXT_1GB     (1 << 26)
#define CPUID_EXT_LM      (1 << 29)

	.section .note.Xen, "a", @note
	.p2align 2
	.long 4                 /* name size: "Xen\0" */
	.long 4                 /* descriptor size */
	.long 18                /* XEN_ELFNOTE_PHYS32_ENTRY */
	.asciz "Xen"
	.long pvh_start

	.section .boot.text, "ax", @progbits
	.code32
	.globl pvh_start
pvh_start:
	cli
	cld
	movl	%ebx, %esi

	/* A CPU without long mode or NX cannot run this kernel (the x86_64
	 * table marks data pages NX): stop. */
	movl	$0x80000001, %eax
	cpuid
	testl	$CPUID_EXT_LM, %edx
	jz	halt32
	testl	$CPUID_EXT_NX, %edx
	jz	halt32
	movl	%edx, %ebp              /* keep the 1 GiB page bit */

	/* PML4: [0] low 1:1, [511] the top 512 GiB. */
	movl	$boot_pdpt_low + PTE_P_RW, boot_pml4
	movl	$boot_pdpt_high + PTE_P_RW, boot_pml4 + 511 * 8

	/* Low 4 GiB: four page directories of 2 MiB pages. */
	movl	$boot_pd_low + PTE_P_RW, %eax
	xorl	%ecx, %ecx
1:	movl	%eax, boot_pdpt_low(, %ecx, 8)
	addl	$4096, %eax
	incl	%ecx
	cmpl	$4, %ecx
	jb	1b
	xorl	%ecx, %ecx
1:	movl	%ecx, %eax
	shll	$21, %eax
	orl	$PTE_P_RW_PS, %eax
	movl	%eax, boot_pd_low(, %ecx, 8)
	movl	%ecx, %eax
	shrl	$11, %eax
	movl	%eax, boot_pd_low + 4(, %ecx, 8)
	incl	%ecx
	cmpl	$2048, %ecx
	jb	1b

	/* 4 GiB .. 512 GiB in 1 GiB pages where the CPU has them. */
	testl	$CPUID_EXT_1GB, %ebp
	jz	2f
	movl	$4, %ecx
1:	movl	%ecx, %eax
	shll	$30, %eax
	orl	$PTE_P_RW_PS, %eax
	movl	%eax, boot_pdpt_low(, %ecx, 8)
	movl	%ecx, %eax
	shrl	$2, %eax
	movl	%eax, boot_pdpt_low + 4(, %ecx, 8)
	incl	%ecx
	cmpl	$512, %ecx
	jb	1b
2:
	/* Physical 0..1 GiB at 0xffffffff80000000 (PDPT entry 510). */
	movl	$boot_pd_kernel + PTE_P_RW, boot_pdpt_high + 510 * 8
	xorl	%ecx, %ecx
1:	movl	%ecx, %eax
	shll	$21, %eax
	orl	$PTE_P_RW_PS, %eax
	movl	%eax, boot_pd_kernel(, %ecx, 8)
	incl	%ecx
	cmpl	$512, %ecx
	jb	1b

	/* CR4.PAE and PGE, the tables, EFER.SCE/LME/NXE, CR0.PG/WP/PE. */
	movl	%cr4, %eax
	orl	$((1 << 5) | (1 << 7)), %eax
	movl	%eax, %cr4
	movl	$boot_pml4, %eax
	movl	%eax, %cr3
	movl	$0xc0000080, %ecx
	rdmsr
	orl	$((1 << 0) | (1 << 8) | (1 << 11)), %eax
	wrmsr
	movl	%cr0, %eax
	orl	$((1 << 31) | (1 << 16) | 1), %eax
	movl	%eax, %cr0
	lgdt	boot_gdt_desc
	ljmp	$0x08, $entry64_low

halt32:
	hlt
	jmp	halt32

	.code64
entry64_low:
	boot_data_segments
	movabsq	$entry64_high, %rax
	jmp	*%rax

	.section .boot.data, "aw", @progbits
	.p2align 12
boot_pml4:	.fill 512, 8, 0
boot_pdpt_low:	.fill 512, 8, 0
boot_pdpt_high:	.fill 512, 8, 0
boot_pd_kernel:	.fill 512, 8, 0
boot_pd_low:	.fill 2048, 8, 0
	.p2align 3
boot_gdt:
	.quad 0
	.quad 0x00af9a000000ffff        /* 64-bit code, ring 0 */
	.quad 0x00cf92000000ffff        /* data, ring 0 */
boot_gdt_desc:
	.word 3 * 8 - 1
	.long boot_gdt

	.text
entry64_high:
	movabsq	$boot_stack_top, %rsp
	movl	%esi, %r12d             /* the start info, zero-extended */
	movabsq	$_bss_start, %rdi
	movabsq	$_bss_end, %rcx
	subq	%rdi, %rcx
	xorl	%eax, %eax
	rep stosb
	movq	%r12, %rdi
	xorl	%ebp, %ebp
	call	x86_boot
1:	cli
	hlt
	jmp	1b

/* An application processor from the start-up page (ap_boot.S): 64-bit
 * mode under the boot table, running at this code's physical address
 * (smp.c passes virt_to_phys(_start_secondary)), interrupts off, rdi =
 * its struct cpu. To the link address, then the kernel page table (the
 * struct cpu and its stack lie in the direct map, which the boot table
 * does not have), the stack at the struct cpu's stack_top (offset 0), and
 * x86_ap_main (smpboot.c), which does not return. */
	.globl _start_secondary
_start_secondary:
	movabsq	$1f, %rax
	jmp	*%rax
1:	movq	boot_kernel_as_token(%rip), %rax
	movq	%rax, %cr3
	movq	(%rdi), %rsp
	xorl	%ebp, %ebp
	call	x86_ap_main
2:	cli
	hlt
	jmp	2b

	.data
	.p2align 3
	.globl kernel_va_pa_offset, phys_map_base, boot_kernel_as_token, boot_pml4_pa
kernel_va_pa_offset:	.quad 0xffffffff80000000
phys_map_base:		.quad 0
boot_kernel_as_token:	.quad 0
/* The boot PML4's physical address (smpboot.c: the start-up page's CR3). */
boot_pml4_pa:		.quad boot_pml4

	.bss
	.p2align 12
	.globl boot_stack, boot_stack_top
boot_stack:
	.skip 16384
boot_stack_top:
	.section .note.GNU-stack, "", @progbits
