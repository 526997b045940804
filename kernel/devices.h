/* The devices user-space drivers may use: every enabled device-tree node
 * with registers that the kernel does not drive itself, found once at
 * boot (abi/patina/device.h says what user space sees of them).
 *
 * The table is built on the boot hart before any other hart or task runs
 * and never changes after, so it is read with no lock. */
#ifndef KERNEL_DEVICES_H
#define KERNEL_DEVICES_H

#include <stdbool.h>
#include <stdint.h>
#include <patina/device.h>

#define DEVICES_MAX 64

struct kdevice {
	struct device_info info;   /* as SYS_DEVICE_INFO reports it */
	int node;                  /* its device-tree node (fdt_lookup.h handle) */
	uint32_t irq_parent;       /* phandle of its interrupt controller (own or inherited
	                            * interrupt-parent), 0 when the tree names none */
	/* DEVF_RESET devices: the kernel's mapping of the window's first
	 * page (device_reset writes through it); NULL otherwise. */
	volatile uint8_t *regs;
};

/* Boot, once, after the kernel page table is in effect (kmap_build): fill
 * the table from the DTB at blob. A node the table has no room for, or
 * whose window is not a range of physical addresses or overlaps memory,
 * is left out (and said so on the console). A DEVF_RESET device whose registers cannot be
 * mapped for the kernel loses the flag. Returns the number of devices. */
unsigned devices_init(const void *blob);

struct boot_info;

/* The walk behind devices_init, into out[0..max): the number of devices
 * found (those past max are left out). map: map each DEVF_RESET device's
 * first page for the kernel (regs; without a mapping the flag is dropped),
 * or not (a test on a made-up tree: the flag is set, regs stays NULL).
 * Changes nothing but out (and, with map, the kernel's MMIO window). */
unsigned devices_scan(const void *blob, const struct boot_info *bi, struct kdevice *out,
		      unsigned max, bool map);

/* Once the interrupt controller is up (or known absent): a device whose
 * interrupt goes to a controller the kernel does not drive reports no
 * interrupt (irq 0), so no cap can bind its line number on the wrong
 * controller. */
void devices_irq_check(const void *blob);

/* How many devices there are; device i for i below that, else NULL. */
unsigned devices_count(void);
const struct kdevice *device_at(unsigned i);

/* Is pa inside some device's window? Such a page is never a frame: no
 * window overlaps a memory node's range (devices_init leaves those out).
 * Any context; a range check for every address outside all windows. */
bool device_pa(uint64_t pa);

/* Stop device i's DMA if the kernel knows how (DEVF_RESET; virtio-mmio:
 * Status register 0 once its magic value is seen). Returns 1 if it was
 * reset, 0 if it has no reset or did not answer as the device it is
 * said to be. Any context; touches only the device. */
int device_reset(unsigned i);

#endif
