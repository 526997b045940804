/* The start-up code of the application processors, copied by smpboot.c
 * to the page at X86_AP_TRAMP_PA (ap_boot.h) before each start. A SIPI
 * starts the CPU in real mode at CS:IP = (page number << 8):0. It checks
 * that it is the CPU the data block names (a CPU that arrives late, after
 * the boot CPU gave up on it and moved on to the next one, must not take
 * that one's struct cpu), says it arrived, then goes to protected mode,
 * and to long mode under entry.S's boot page table (its PML4 lies below
 * 4 GiB, as a 32-bit CR3 load needs, and it maps this page 1:1 and the
 * kernel at its link address) with the boot CPU's CR0, CR4, EFER and
 * XCR0, and jumps to the data block's entry with rdi = its argument.
 * Never executed where it is linked: every address below is the copy's. */
#include "ap_boot.h"
#include "boot_segs.h"

#define REL(x) ((x) - x86_ap_tramp_start)
#define ABS(x) (REL(x) + X86_AP_TRAMP_PA)
#define CR4_PCIDE (1 << 17)
#define MSR_EFER 0xc0000080

	.section .rodata.ap_tramp, "a", @progbits
	.p2align 4
	.globl x86_ap_tramp_start, x86_ap_tramp_data, x86_ap_tramp_end
	.code16
x86_ap_tramp_start:
	cli
	cld
	movw	%cs, %ax
	movw	%ax, %ds
	/* The initial APIC id: CPUID leaf 1 EBX[31:24]. */
	movl	$1, %eax
	cpuid
	shrl	$24, %ebx
	cmpl	REL(x86_ap_tramp_data) + APD_APIC, %ebx
	jne	park16
	movl	$1, REL(x86_ap_tramp_data) + APD_ARRIVED
	lgdtl	REL(ap_gdt_desc)
	movl	%cr0, %eax
	orl	$1, %eax
	movl	%eax, %cr0
	ljmpl	$0x08, $ABS(ap_pm32)
park16:
	cli
	hlt
	jmp	park16

	.code32
ap_pm32:
	movl	$0x10, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	movl	$ABS(x86_ap_tramp_data), %esi
	/* PAE and the rest of the boot CPU's CR4 but PCIDE (long mode only),
	 * the boot table, EFER.LME (with NXE, SCE), then CR0.PG: long mode. */
	movl	APD_CR4(%esi), %eax
	andl	$~CR4_PCIDE, %eax
	movl	%eax, %cr4
	movl	APD_CR3(%esi), %eax
	movl	%eax, %cr3
	movl	$MSR_EFER, %ecx
	movl	APD_EFER(%esi), %eax
	movl	APD_EFER + 4(%esi), %edx
	wrmsr
	movl	APD_CR0(%esi), %eax
	movl	%eax, %cr0
	ljmp	$0x18, $ABS(ap_lm64)

	.code64
ap_lm64:
	boot_data_segments
	/* All of CR4 (the boot PML4's PCID is 0, as PCIDE needs). */
	movq	APD_CR4(%rsi), %rax
	movq	%rax, %cr4
	movq	APD_XCR0(%rsi), %rax
	testq	%rax, %rax
	jz	1f
	movq	%rax, %rdx
	shrq	$32, %rdx
	xorl	%ecx, %ecx
	xsetbv
1:	movq	APD_ARG(%rsi), %rdi
	movq	APD_ENTRY(%rsi), %rax
	jmp	*%rax

	.p2align 3
ap_gdt:
	.quad 0
	.quad 0x00cf9a000000ffff        /* 0x08: 32-bit code */
	.quad 0x00cf92000000ffff        /* 0x10: data */
	.quad 0x00af9a000000ffff        /* 0x18: 64-bit code */
ap_gdt_desc:
	.word 4 * 8 - 1
	.long ABS(ap_gdt)
	.p2align 3
x86_ap_tramp_data:
	.fill APD_SIZE, 1, 0
x86_ap_tramp_end:
	.section .note.GNU-stack, "", @progbits
