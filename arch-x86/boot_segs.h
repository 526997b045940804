/* The first 64-bit instructions of a CPU that just entered long mode
 * through the boot GDT (entry.S for the boot CPU, ap_boot.S for the
 * others): the data segments the 32-bit code left become the boot GDT's
 * flat data segment (selector 0x10), FS and GS null. Assembly only. */
#ifndef ARCH_X86_BOOT_SEGS_H
#define ARCH_X86_BOOT_SEGS_H

.macro boot_data_segments
	movl	$0x10, %eax
	movl	%eax, %ds
	movl	%eax, %es
	movl	%eax, %ss
	xorl	%eax, %eax
	movl	%eax, %fs
	movl	%eax, %gs
.endm

#endif
