/* The device table (devices.h): one walk over the device tree at boot,
 * keeping the nodes with registers that the kernel leaves to user space. */
#include <patina/errno.h>
#include "devices.h"
#include "bootinfo.h"
#include "devtree.h"
#include "irqchip.h"
#include "fdt.h"
#include "kstring.h"
#include "memlayout.h"
#include "mm_platform.h"
#include "printk.h"

static struct kdevice devs[DEVICES_MAX];
static unsigned ndevs;
/* Every window lies in [span_lo, span_hi): device_pa's quick answer for
 * the addresses of RAM. */
static paddr_t span_lo = ~(paddr_t)0, span_hi;

/* What the kernel drives itself, by compatible string: interrupt
 * controllers and timers (the console is the one /chosen names). */
static const char *const kernel_owned[] = {
	"riscv,plic0", "sifive,plic-1.0.0", "riscv,clint0", "sifive,clint0",
	"riscv,aclint-mswi", "riscv,aclint-mtimer", "riscv,aclint-sswi",
	"riscv,imsics", "riscv,aplic",
};

/* Top-level nodes that describe the machine, not devices. */
static const char *const not_devices[] = { "cpus", "reserved-memory", "chosen", "aliases" };

/* The virtio-mmio registers device_reset uses (virtio spec 4.2.2). */
#define VIRTIO_MMIO_MAGIC      0x000
#define VIRTIO_MMIO_STATUS     0x070
#define VIRTIO_MAGIC_VALUE     0x74726976u     /* "virt" */

struct scan {
	const void *blob;
	const struct boot_info *bi;   /* the memory no window may overlap */
	int console;               /* the node /chosen's stdout-path names, or -1 */
	struct kdevice *out;       /* the table: n of max filled */
	unsigned n, max;
	bool map;                  /* map DEVF_RESET windows for the kernel */
	uint32_t ip[FDT_MAX_DEPTH + 1];  /* interrupt-parent in effect at each depth */
};

/* The node /chosen's stdout-path names (a path or an alias, options after
 * ':' dropped), or -1 for none. */
static int console_node(const void *blob)
{
	int chosen = fdt_path(blob, "/chosen");
	int len;
	const char *sp = chosen >= 0 ? fdt_getprop(blob, chosen, "stdout-path", &len) : NULL;
	if (!sp || len <= 1 || sp[len - 1] != 0)
		return -1;
	char path[128];
	const char *colon = strchr(sp, ':');
	size_t n = colon ? (size_t)(colon - sp) : strlen(sp);
	if (n >= sizeof path)
		return -1;
	memcpy(path, sp, n);
	path[n] = 0;
	if (path[0] != '/') {
		int aliases = fdt_path(blob, "/aliases");
		const char *a = aliases >= 0 ? fdt_getprop(blob, aliases, path, &len) : NULL;
		if (!a || len <= 1 || a[len - 1] != 0 || strlen(a) >= sizeof path)
			return -1;
		strlcpy(path, a, sizeof path);
	}
	int node = fdt_path(blob, path);
	return node >= 0 ? node : -1;
}

/* Is the node's name `name`, with or without a unit address? */
static bool named(const void *blob, int node, const char *name)
{
	const char *nm = fdt_node_name(blob, node);
	size_t n = strlen(name);
	return nm && !strncmp(nm, name, n) && (nm[n] == 0 || nm[n] == '@');
}

/* Record the device at d (a node with a reg and a compatible string). */
static void add_device(struct scan *s, const struct dt_dev *d, int depth, const char *compat)
{
	if (!fdt_range_ok(d->base, d->size) || !d->size) {
		printk("devices: %s at %lx: window not usable, left out\n", compat,
		       (unsigned long)d->base);
		return;
	}
	if (s->n == s->max) {
		printk("devices: table full, %s at %lx left out\n", compat, (unsigned long)d->base);
		return;
	}
	paddr_t lo = d->base & ~(PAGE_SIZE - 1);
	paddr_t hi = (d->base + d->size + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	/* A window over RAM would hand out frames the allocator also gives
	 * away, and make device_pa call frames device pages. */
	for (int i = 0; i < s->bi->nmem; i++) {
		const struct phys_range *m = &s->bi->mem[i];
		if (lo < m->base + m->size && m->base < hi) {
			printk("devices: %s at %lx overlaps memory, left out\n", compat,
			       (unsigned long)d->base);
			return;
		}
	}
	struct kdevice *k = &s->out[s->n];
	memset(k, 0, sizeof *k);
	strlcpy(k->info.compatible, compat, sizeof k->info.compatible);
	k->info.base = lo;
	k->info.size = hi - lo;
	int len;
	const void *irq = fdt_getprop(s->blob, d->node, "interrupts", &len);
	k->info.irq = irq && len >= 4 ? fdt_be32(irq) : 0;
	k->node = d->node;
	k->irq_parent = s->ip[depth];
	if (dt_is_compatible(s->blob, d->node, "virtio,mmio")) {
		void *va;
		if (!s->map) {
			k->info.flags |= DEVF_RESET;
		} else if (kmap_mmio(lo, PAGE_SIZE, &va) == 0) {
			k->regs = va;
			k->info.flags |= DEVF_RESET;
		} else {
			printk("devices: %s at %lx: cannot map its registers, no reset\n", compat,
			       (unsigned long)lo);
		}
	}
	s->n++;
}

/* dt_walk's callback: skip what is not a device or is the kernel's. */
static int scan_node(void *ctx, const struct dt_dev *d, int depth, bool has_reg)
{
	struct scan *s = ctx;
	const void *blob = s->blob;
	if (depth < 1 || depth > FDT_MAX_DEPTH)
		return 1;
	/* interrupt-parent is inherited from the nearest ancestor naming one. */
	int plen;
	const void *ipp = fdt_getprop(blob, d->node, "interrupt-parent", &plen);
	s->ip[depth] = ipp && plen == 4 ? fdt_be32(ipp) : s->ip[depth - 1];
	if (depth == 1)
		for (unsigned i = 0; i < sizeof not_devices / sizeof not_devices[0]; i++)
			if (named(blob, d->node, not_devices[i]))
				return 1;
	int len;
	const char *dt = fdt_getprop(blob, d->node, "device_type", &len);
	if (dt && len > 0 && dt[len - 1] == 0 && !strcmp(dt, "memory"))
		return 1;
	for (unsigned i = 0; i < sizeof kernel_owned / sizeof kernel_owned[0]; i++)
		if (dt_is_compatible(blob, d->node, kernel_owned[i]))
			return 1;
	if (d->node == s->console)
		return 1;
	const char *compat = fdt_getprop(blob, d->node, "compatible", &len);
	if (has_reg && compat && len > 1 && compat[0] &&
	    strnlen(compat, (size_t)len) < (size_t)len)
		add_device(s, d, depth, compat);
	return 0;
}

unsigned devices_scan(const void *blob, const struct boot_info *bi, struct kdevice *out,
			unsigned max, bool map)
{
	struct scan s = { .blob = blob, .bi = bi, .console = console_node(blob), .out = out,
			  .max = max, .map = map };
	int plen, root = fdt_root(blob);
	const void *ipp = root >= 0 ? fdt_getprop(blob, root, "interrupt-parent", &plen) : NULL;
	s.ip[0] = ipp && plen == 4 ? fdt_be32(ipp) : 0;
	if (dt_walk(blob, scan_node, &s))
		printk("devices: the device tree walk stopped early; %u devices\n", s.n);
	return s.n;
}

unsigned devices_init(const void *blob)
{
	ndevs = devices_scan(blob, &boot_info, devs, DEVICES_MAX, true);
	for (unsigned i = 0; i < ndevs; i++) {
		if (devs[i].info.base < span_lo)
			span_lo = devs[i].info.base;
		if (devs[i].info.base + devs[i].info.size > span_hi)
			span_hi = devs[i].info.base + devs[i].info.size;
	}
	return ndevs;
}

void devices_irq_check(const void *blob)
{
	int chip = irqchip_node(), len;
	const void *ph = chip >= 0 ? fdt_getprop(blob, chip, "phandle", &len) : NULL;
	uint32_t chip_ph = ph && len == 4 ? fdt_be32(ph) : 0;
	for (unsigned i = 0; i < ndevs; i++) {
		struct kdevice *k = &devs[i];
		if (!k->info.irq)
			continue;
		/* No interrupt-parent anywhere: the one controller there is. */
		if (chip >= 0 && (!k->irq_parent || k->irq_parent == chip_ph))
			continue;
		printk("devices: %s at %lx: its interrupt controller is not driven, no interrupt\n",
		       k->info.compatible, (unsigned long)k->info.base);
		k->info.irq = 0;
	}
}

unsigned devices_count(void)
{
	return ndevs;
}

const struct kdevice *device_at(unsigned i)
{
	return i < ndevs ? &devs[i] : NULL;
}

bool device_pa(uint64_t pa)
{
	if (pa < span_lo || pa >= span_hi)
		return false;
	for (unsigned i = 0; i < ndevs; i++)
		if (pa - devs[i].info.base < devs[i].info.size)
			return true;
	return false;
}

int device_reset(unsigned i)
{
	const struct kdevice *k = device_at(i);
	if (!k || !(k->info.flags & DEVF_RESET) || !k->regs)
		return 0;
	volatile uint32_t *magic = (volatile uint32_t *)(k->regs + VIRTIO_MMIO_MAGIC);
	if (*magic != VIRTIO_MAGIC_VALUE)
		return 0;
	*(volatile uint32_t *)(k->regs + VIRTIO_MMIO_STATUS) = 0;
	__atomic_thread_fence(__ATOMIC_SEQ_CST);
	return 1;
}
