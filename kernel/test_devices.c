/* The device table (devices.h) on made-up device trees: what is listed
 * (first compatible, the first reg entry rounded out to whole pages, the
 * first interrupt, DEVF_RESET for virtio-mmio) and what is not (the
 * console /chosen names, interrupt controllers and timers, disabled nodes,
 * nodes without reg, memory, /cpus, /reserved-memory, windows over RAM);
 * and device_pa on the machine's own table. */
#include "ktest.h"
#include "bootinfo.h"
#include "devices.h"
#include "fdtw.h"
#include "kstring.h"

static struct fdtw fw;
static struct boot_info test_bi;
static struct kdevice found[8];

/* Open the root with #address-cells 2 and #size-cells 2. */
static void root_begin(void)
{
	memset(&fw, 0, sizeof fw);
	fw_begin(&fw, "");
	fw_u32(&fw, "#address-cells", 2);
	fw_u32(&fw, "#size-cells", 2);
}

/* A node with a compatible list (len bytes), reg (addr, size) and, when
 * irq is not 0, interrupts; left open when `open`. */
static void dev_node(const char *name, const char *compat, uint32_t clen, uint64_t addr,
		     uint64_t size, uint32_t irq, bool open)
{
	fw_begin(&fw, name);
	fw_prop(&fw, "compatible", compat, clen);
	fw_cells(&fw, "reg", 4, (const uint32_t[]){ (uint32_t)(addr >> 32), (uint32_t)addr,
						     (uint32_t)(size >> 32), (uint32_t)size });
	if (irq)
		fw_u32(&fw, "interrupts", irq);
	if (!open)
		fw_end(&fw);
}

/* Is found[i] this device? */
static bool is_dev(unsigned i, const char *compat, uint64_t base, uint64_t size, uint32_t irq,
		   uint32_t flags)
{
	const struct device_info *d = &found[i].info;
	return !strcmp(d->compatible, compat) && d->base == base && d->size == size && d->irq == irq &&
	       d->flags == flags && !found[i].regs;
}

KTEST(10, devices_from_tree)
{
	static const char plic[] = "sifive,plic-1.0.0\0riscv,plic0";
	static const char clint[] = "sifive,clint0\0riscv,clint0";
	memset(&test_bi, 0, sizeof test_bi);
	test_bi.nmem = 1;
	test_bi.mem[0].base = 0x80000000;
	test_bi.mem[0].size = 0x10000000;

	/* 1. The console, a second UART, an interrupt controller, a
	 * virtio-mmio slot and a disabled device. */
	root_begin();
	fw_begin(&fw, "chosen");
	fw_str(&fw, "stdout-path", "/serial@10000000:115200n8");
	fw_end(&fw);
	dev_node("serial@10000000", "ns16550a", 9, 0x10000000, 0x100, 10, false);
	dev_node("serial@10001000", "ns16550a", 9, 0x10001000, 0x100, 11, false);
	dev_node("plic@c000000", plic, sizeof plic, 0xc000000, 0x600000, 0, false);
	dev_node("virtio_mmio@10008000", "virtio,mmio", 12, 0x10008000, 0x1000, 8, false);
	dev_node("acme@10009000", "acme,dev", 9, 0x10009000, 0x1000, 9, true);
	fw_str(&fw, "status", "disabled");
	fw_end(&fw);
	fw_end(&fw);    /* root */
	const void *b = fw_finish(&fw);
	if (!b)
		return KFAIL("test blob 1 overflowed");
	unsigned n = devices_scan(b, &test_bi, found, 8, false);
	if (n != 2)
		return KFAIL("blob 1: %u devices, want 2 (the second UART, the virtio slot)", n);
	if (!is_dev(0, "ns16550a", 0x10001000, 0x1000, 11, 0))
		return KFAIL("blob 1 device 0: %s at %lx+%lx irq %u flags %x", found[0].info.compatible,
			     (unsigned long)found[0].info.base, (unsigned long)found[0].info.size,
			     found[0].info.irq, found[0].info.flags);
	if (!is_dev(1, "virtio,mmio", 0x10008000, 0x1000, 8, DEVF_RESET))
		return KFAIL("blob 1 device 1: %s at %lx+%lx irq %u flags %x", found[1].info.compatible,
			     (unsigned long)found[1].info.base, (unsigned long)found[1].info.size,
			     found[1].info.irq, found[1].info.flags);
	if (devices_scan(b, &test_bi, found, 1, false) != 1 || !is_dev(0, "ns16550a", 0x10001000,
								       0x1000, 11, 0))
		return KFAIL("a table of one took more, or not the first device");

	/* 2. Memory, a CPU, reserved memory, a window over RAM, a timer, a
	 * node without reg, and a window that does not start or end on a
	 * page: only the last is listed, rounded out to whole pages. */
	root_begin();
	fw_begin(&fw, "memory@80000000");
	fw_str(&fw, "device_type", "memory");
	fw_cells(&fw, "reg", 4, (const uint32_t[]){ 0, 0x80000000, 0, 0x10000000 });
	fw_end(&fw);
	fw_begin(&fw, "cpus");
	fw_u32(&fw, "#address-cells", 1);
	fw_u32(&fw, "#size-cells", 0);
	fw_begin(&fw, "cpu@0");
	fw_str(&fw, "compatible", "riscv");
	fw_u32(&fw, "reg", 0);
	fw_end(&fw);
	fw_end(&fw);
	fw_begin(&fw, "reserved-memory");
	fw_u32(&fw, "#address-cells", 2);
	fw_u32(&fw, "#size-cells", 2);
	fw_prop(&fw, "ranges", "", 0);
	dev_node("mmode@80000000", "acme,resv", 10, 0x80000000, 0x80000, 0, false);
	fw_end(&fw);
	dev_node("fb@80100000", "acme,fb", 8, 0x80100000, 0x1000, 0, false);
	dev_node("clint@2000000", clint, sizeof clint, 0x2000000, 0x10000, 0, false);
	fw_begin(&fw, "noreg");
	fw_str(&fw, "compatible", "acme,noreg");
	fw_end(&fw);
	dev_node("odd@1000a800", "acme,odd", 9, 0x1000a800, 0x1000, 0, false);
	fw_end(&fw);    /* root */
	if (!(b = fw_finish(&fw)))
		return KFAIL("test blob 2 overflowed");
	n = devices_scan(b, &test_bi, found, 8, false);
	if (n != 1 || !is_dev(0, "acme,odd", 0x1000a000, 0x2000, 0, 0))
		return KFAIL("blob 2: %u devices, the first %s at %lx+%lx (want acme,odd at 1000a000+2000)",
			     n, n ? found[0].info.compatible : "-", n ? (unsigned long)found[0].info.base : 0,
			     n ? (unsigned long)found[0].info.size : 0);

	/* The machine's own table: its windows are device pages, RAM is not. */
	for (unsigned i = 0; i < devices_count(); i++) {
		const struct device_info *d = &device_at(i)->info;
		if (!device_pa(d->base) || !device_pa(d->base + d->size - 1))
			return KFAIL("device %u (%s): its window is not device pages", i, d->compatible);
	}
	for (int i = 0; i < boot_info.nmem; i++)
		if (device_pa(boot_info.mem[i].base) ||
		    device_pa(boot_info.mem[i].base + boot_info.mem[i].size - 1))
			return KFAIL("memory range %d is taken for device pages", i);
	return 0;
}
