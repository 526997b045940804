/* The interrupt-controller interface (kernel/irqchip.h) on x86-64, where
 * no I/O APIC driver exists yet: irqchip_init finds no controller
 * (-E_NOENT: the boot says device interrupts are off), no line exists,
 * and nothing is ever claimed. */
#include <patina/errno.h>
#include "irqchip.h"

int irqchip_init(const void *dtb)
{
	(void)dtb;
	return -E_NOENT;
}

void irqchip_init_hart(uint32_t hartid) { (void)hartid; }
uint32_t irqchip_lines(void) { return 0; }
int irqchip_hart_context(uint32_t hartid) { (void)hartid; return -1; }
int irqchip_node(void) { return -1; }
void irqchip_enable(uint32_t line, uint32_t hartid) { (void)line; (void)hartid; }
void irqchip_disable(uint32_t line, uint32_t hartid) { (void)line; (void)hartid; }
uint32_t irqchip_claim(uint32_t hartid) { (void)hartid; return 0; }
void irqchip_complete(uint32_t line, uint32_t hartid) { (void)line; (void)hartid; }
int irqchip_pending(uint32_t line) { (void)line; return 0; }
