/* Devices in user space: what the kernel found in the device tree, and the
 * capabilities that let a user-space driver use a device.
 *
 * The kernel drives only the interrupt controller, the timer and the
 * console. Every other device it finds in the device tree is described
 * to whoever holds the kernel cap (SYS_DEVICE_INFO); the holder makes an
 * MMIO cap and an IRQ cap for it (SYS_DEVICE_CAPS) and hands them to a
 * driver, which maps the registers, takes its interrupts as messages on an
 * endpoint and learns the physical addresses of the frames it gives the
 * device for DMA.
 *
 * Trust (docs/security.md): there is no IOMMU. A driver with R_DMA can make
 * its device read and write any physical memory, so it is trusted with all
 * of it; the kernel only makes sure it can name no frame it was not given
 * (SYS_DMA_ADDR needs a frame cap) and no register window it does not hold,
 * and stops a device it knows how to reset when its DMA-capable driver
 * dies, before that driver's memory is freed. */
#ifndef PATINA_DEVICE_H
#define PATINA_DEVICE_H

#include <stdint.h>

#define DEV_COMPAT_MAX 32

/* SYS_DEVICE_INFO(kernel cap with R_READ, index, struct device_info *):
 * device `index` (0, 1, ...) in device-tree order; -E_NOENT past the last,
 * -E_FAULT for a bad buffer. Devices are the device-tree nodes with a
 * `reg` the kernel does not drive itself (memory, CPUs, the interrupt
 * controller, the timer and the console are not listed). */
struct device_info {
	char compatible[DEV_COMPAT_MAX]; /* the node's first compatible string, NUL-terminated
	                                  * (cut to fit) */
	uint64_t base, size;  /* the register window: physical, page-aligned, whole pages */
	uint32_t irq;         /* its interrupt (the controller's source number), 0 for none */
	uint32_t flags;       /* DEVF_* */
};
#define DEVF_RESET 1u     /* the kernel can stop this device (DMA) when its driver dies */

/* SYS_DEVICE_CAPS(kernel cap with R_CONTROL, index, mmio dst, irq dst):
 * an MMIO cap for the device's window (R_READ | R_WRITE | R_DMA | R_GRANT)
 * in mmio dst and an IRQ cap (R_CONTROL | R_GRANT) in irq dst; either dst
 * may be SLOT_NONE (irq dst must be, for a device with no interrupt:
 * -E_NOENT). -E_NOENT: no such device; -E_EXIST / -E_BADCAP: a dst slot
 * is taken or bad. Caps of one device may be made again (copies of the
 * same authority). Like every cap they can be copied, minted with fewer
 * rights and sent by IPC (R_GRANT on the endpoint).
 *
 * Mapping: ROP_MAP with arg = an MMIO cap maps len bytes (a multiple of
 * 4 KiB, at most the window; 0 for all of it) of the window from its
 * start at va as device memory (uncached, strongly ordered: Svpbmt IO
 * where the page table has it), prot PROT_R or PROT_R | PROT_W within the
 * cap's R_READ / R_WRITE (PROT_X, PROT_COW: -E_INVAL). Such pages report
 * QF_DEVICE | QF_NOSHARE in out_prot; they are never evicted, supplied or
 * dirty-tracked (ROP_EVICT, SYS_REGION_SUPPLY: -E_INVAL) and a region
 * clone leaves them out of the copy. */
#define QF_DEVICE 0x1000u

/* SYS_IRQ_BIND(irq cap with R_CONTROL, endpoint cap with R_SEND or
 * SLOT_NONE): from now on each interrupt of the line arrives on the
 * endpoint as one message, received like a death notice (nothing to reply
 * to): w0 = MSG_IRQ, w1 = the line's number, w2 = w3 = 0, a5 = the endpoint
 * cap's badge. The kernel masks the line when it takes the interrupt; it
 * stays masked until the driver calls SYS_IRQ_ACK, so at most one message
 * per line is outstanding and none is lost (a level interrupt still
 * asserted at the ack comes again). One binding per line: -E_BUSY while
 * another endpoint is bound, unless it is the same one; SLOT_NONE unbinds
 * (-E_NOENT if not bound). A binding ends when the endpoint dies or the
 * task that bound it dies. */
#define MSG_IRQ 0x1a0d1a0dUL

/* SYS_IRQ_ACK(irq cap with R_CONTROL): the driver has dealt with the
 * interrupt it got; the line is unmasked. -E_AGAIN if no interrupt of the
 * line is waiting for an acknowledgement. */

/* SYS_DMA_ADDR(mmio cap with R_DMA, frame cap): the frame's physical
 * address, for the device's DMA. The frame stays allocated while any cap
 * to it or mapping of it exists: a driver keeps the frame cap for as long
 * as its device may use the frame. -E_PERM without R_DMA, -E_BADCAP if
 * either is not a cap of its type. */

#endif
