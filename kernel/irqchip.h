/* The interrupt controller that gathers device interrupts for the harts,
 * behind one small interface. Each ISA's folder supplies it (RISC-V: the
 * PLIC, arch-riscv/plic.c), found in the device tree, never at a fixed
 * address. The kernel drives no device interrupt itself: it routes each
 * line a driver bound (kernel/mk/irq.c) to one hart and turns every
 * interrupt into a message.
 *
 * A line is the controller's source number, 1 .. irqchip_lines() - 1
 * (the number a device tree's `interrupts` gives, and what
 * patina/device.h calls a line). A hart is named by its hart id.
 *
 * Masking: once a line is claimed the controller forwards no new request
 * of it until the line is completed, so the kernel masks a line by
 * holding its completion back (until the driver's SYS_IRQ_ACK). An ISA
 * whose controller blocks lower priorities until the end of an interrupt
 * (a GIC) does the same with a split end of interrupt: the priority drop
 * at the claim, the deactivation at irqchip_complete. */
#ifndef KERNEL_IRQCHIP_H
#define KERNEL_IRQCHIP_H

#include <stdint.h>

/* Find the controller in the device tree at dtb and map its registers.
 * Boot hart, once, after the kernel page table is active and before the
 * other harts start. Every line starts disabled for every hart. Returns
 * 0; -E_NOENT when the tree lists no controller this ISA drives (there
 * are then no lines); -E_INVAL when its node is malformed (no usable
 * reg, a bad line count, a context that names no hart); -E_NOMEM when it
 * could not be mapped. */
int irqchip_init(const void *dtb);

/* The running hart, hart id `hartid`, takes external interrupts from now
 * on: its threshold lets every enabled line through and its external
 * interrupt is on. Every hart at start, after irqchip_init; nothing
 * without a controller or for a hart it has no context for. */
void irqchip_init_hart(uint32_t hartid);

/* One more than the highest line: 0 without a controller. */
uint32_t irqchip_lines(void);

/* The controller's context for the supervisor-mode external interrupt of
 * hart `hartid`, or -1 when it has none (such a hart takes no device
 * interrupt). */
int irqchip_hart_context(uint32_t hartid);

/* The device-tree node (fdt_lookup.h handle) of the controller driven, or
 * -1 when there is none. A machine may have several (QEMU virt with NUMA
 * sockets has one PLIC a socket); only lines of this one can be bound. */
int irqchip_node(void);

/* Route line to hart `hartid` (priority above the threshold, enabled in
 * the hart's context) / stop routing it there. Needs: a valid line and a
 * hart with a context. Any hart, any context (a short lock inside). */
void irqchip_enable(uint32_t line, uint32_t hartid);
void irqchip_disable(uint32_t line, uint32_t hartid);

/* Claim the highest pending line routed to hart `hartid` (the running
 * hart, in its external-interrupt handler): the line, or 0 when none is
 * pending (another hart's claim won, or the request went away). */
uint32_t irqchip_claim(uint32_t hartid);

/* End the interrupt of a line claimed through hart `hartid`'s context:
 * the controller forwards its next request. Any hart may write it. The
 * line must still be enabled for that hart (a completion of a disabled
 * line is ignored): complete first, then disable. */
void irqchip_complete(uint32_t line, uint32_t hartid);

/* Whether the line's request is pending at the controller now (tests). */
int irqchip_pending(uint32_t line);

/* The kernel's external-interrupt handler (kernel/mk/irq.c): claim every
 * pending line routed to this hart and deliver it. Trap paths, interrupts
 * off, no lock held. */
void irq_external(void);

#endif
