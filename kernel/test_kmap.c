/* Kernel page table tests: built by the mm core, the paging mode of the token in effect,
 * the direct map covering all RAM and aliasing the kernel image, image
 * permissions, and the tree's well-formedness. */
#include "ktest.h"
#include "kernel.h"
#include "bootinfo.h"
#include "memlayout.h"
#include "mm_platform.h"
#include "cortenmm/cursor.h"
#include "arch.h"
#include "fdt.h"
#include "devtree.h"
#include "fdtw.h"
#include "kstring.h"
#include <stdbool.h>
#include <patina/errno.h>

static volatile uint64_t probe_word = 0x1234;

KTEST(10, kmap_as_token)
{
	uint64_t token = arch_as_current();
	unsigned levels = arch_as_token_levels(token);
	if (levels != (unsigned)boot_config.paging_levels)
		return KFAIL("the hart translates with %u levels, banner says %s", levels,
			     paging_name(boot_config.paging_levels));
	if (token != arch_as_token(&kernel_as, arch_as_token_asid(token)))
		return KFAIL("the token's root is not the mm core's kernel AS root");
	if (token != boot_config.kernel_as_token)
		return KFAIL("the hart runs a token other than the kernel's");
	if (kernel_as.arch->levels != (unsigned)boot_config.paging_levels)
		return KFAIL("kernel AS has %u levels", kernel_as.arch->levels);
	return 0;
}

KTEST(10, kmap_direct_map)
{
	volatile uint64_t *alias = phys_to_virt(virt_to_phys((const void *)&probe_word));
	if ((uint64_t)(uintptr_t)alias < DIRECT_MAP_BASE)
		return KFAIL("phys_to_virt still gives 1:1 addresses");
	if (*alias != probe_word)
		return KFAIL("direct-map alias reads %lx, image %lx",
			     (unsigned long)*alias, (unsigned long)probe_word);
	*alias = 0xfeedface;
	if (probe_word != 0xfeedface)
		return KFAIL("write through the direct map not seen in the image");
	probe_word = 0x1234;
	/* The last byte of every memory node is mapped (a fault would panic). */
	for (int i = 0; i < boot_info.nmem; i++) {
		volatile uint8_t *last = phys_to_virt(boot_info.mem[i].base +
						      boot_info.mem[i].size - 1);
		(void)*last;
	}
	return 0;
}

/* What the core says is mapped at va, in one read-only transaction. */
static int query(uint64_t va, struct mm_info *out)
{
	struct mm_cursor c;
	int err = mm_lock(&c, &kernel_as, va, va + PAGE_SIZE);
	if (err)
		return err;
	err = mm_query(&c, va, out);
	mm_release(&c);
	return err;
}

KTEST(10, kmap_query)
{
	struct mm_info in;
	for (int i = 0; i < boot_info.nmem; i++) {
		paddr_t pa[2] = { boot_info.mem[i].base + boot_info.mem[i].size / 2,
				  boot_info.mem[i].base + boot_info.mem[i].size - PAGE_SIZE };
		for (int k = 0; k < 2; k++) {
			paddr_t p = pa[k] & ~(PAGE_SIZE - 1);
			int err = query(DIRECT_MAP_BASE + p, &in);
			if (err)
				return KFAIL("query failed: %s", mm_strerror(err));
			if (in.kind != MM_MAPPED || in.pa != p)
				return KFAIL("direct map of %lx: kind %u pa %lx", (unsigned long)p,
					     in.kind, (unsigned long)in.pa);
			if ((in.prot & (MM_PROT_R | MM_PROT_W | MM_PROT_X)) != (MM_PROT_R | MM_PROT_W))
				return KFAIL("direct map prot %x", in.prot);
		}
	}
	struct { const void *va; unsigned prot; const char *what; } img[] = {
		{ (const void *)ktest_fn_kmap_query, MM_PROT_R | MM_PROT_X, "text" },
		{ (const void *)"rodata", MM_PROT_R, "rodata" },
		{ (const void *)&probe_word, MM_PROT_R | MM_PROT_W, "data" },
	};
	for (unsigned i = 0; i < 3; i++) {
		uint64_t va = (uint64_t)(uintptr_t)img[i].va & ~(PAGE_SIZE - 1);
		int err = query(va, &in);
		if (err)
			return KFAIL("query failed: %s", mm_strerror(err));
		if (in.kind != MM_MAPPED || in.pa != (virt_to_phys((const void *)(uintptr_t)va)))
			return KFAIL("%s page not mapped to its load address", img[i].what);
		if ((in.prot & (MM_PROT_R | MM_PROT_W | MM_PROT_X)) != img[i].prot)
			return KFAIL("%s prot %x, want %x", img[i].what, in.prot, img[i].prot);
	}
	/* Between the direct map's end and the image nothing is mapped. */
	int err = query(KERNEL_VBASE - PAGE_SIZE, &in);
	if (err || in.kind != MM_INVALID)
		return KFAIL("the page below the image window is not invalid");
	return 0;
}

KTEST(10, kmap_well_formed)
{
	const char *why_wf = "";
	int err = mm_wf_check(&kernel_as, &why_wf);
	if (err)
		return KFAIL("kernel AS not well formed: %s", why_wf);
	return 0;
}

/* One UART register the kmap test may read, and the value it holds on an
 * idle, firmware-initialised console. Only registers whose meaning is
 * known for the matched compatible are named: reading a register a device
 * does not have can fault (a SiFive UART takes 32-bit accesses only, and
 * has nothing at offset 5) or have side effects (a receive FIFO pops). */
struct uart_probe {
	const char *compat;       /* the compatible that matched */
	paddr_t pa;               /* the register block */
	uint64_t off;             /* the register's offset in it */
	unsigned width;           /* access size in bytes: 1 or 4 */
	uint32_t mask, want;      /* idle: (value & mask) == want */
};

static const char *const uart_compats[] = { "ns16550a", "ns16550", "sifive,uart0" };

/* The first UART in blob the test knows how to read: a 16550 (its line
 * status register, register 5 scaled by reg-shift, at reg-io-width; idle:
 * THR empty and transmitter empty, 0x60) or a SiFive UART (txctrl at 0x08,
 * 32-bit; the firmware console has its transmit enable, bit 0, set).
 * Returns 0 and *p, or -E_NOENT when the tree lists none (or one with an
 * access width the test does not do). */
static int uart_probe(const void *blob, struct uart_probe *p)
{
	struct dt_dev d;
	int err = dt_find_compatible(blob, uart_compats, 3, &d);
	if (err)
		return err;
	p->compat = uart_compats[d.which];
	p->pa = d.base;
	if (d.which == 2) {
		p->off = 0x08;
		p->width = 4;
		p->mask = p->want = 1;
		return 0;
	}
	int len;
	const void *v = fdt_getprop(blob, d.node, "reg-shift", &len);
	uint32_t shift = v && len == 4 ? fdt_be32(v) : 0;
	v = fdt_getprop(blob, d.node, "reg-io-width", &len);
	uint32_t width = v && len == 4 ? fdt_be32(v) : 1;
	if (shift > 4 || (width != 1 && width != 4))
		return -E_NOENT;
	p->off = 5UL << shift;
	p->width = width;
	p->mask = p->want = 0x60;
	return 0;
}

/* MMIO through the core: the UART's page mapped with the kernel's MMIO
 * permissions reads the device (the register uart_probe names, at its
 * idle value), a query reports the memory type the table was asked for
 * (device where it has Svpbmt), a table without the type refuses it, and
 * the page is taken back without being released as a frame. The UART is
 * found by compatible; a machine without one the test can read (spike's
 * console is HTIF) skips the test. */
#define MMIO_VA (KERNEL_VBASE - (4UL << 20))
KTEST(10, kmap_mmio)
{
	struct uart_probe up;
	if (uart_probe(phys_to_virt(boot_info.dtb_pa), &up))
		return KSKIP("the device tree lists no enabled ns16550/ns16550a/sifive,uart0");
	paddr_t pa = up.pa + up.off;
	paddr_t page = pa & ~(PAGE_SIZE - 1);
	unsigned prot = kmap_mmio_prot();
	bool has_dev = kernel_as.arch->mem_types & (1u << MM_MT_DEVICE);
	if (mm_prot_mt(prot) != (has_dev ? MM_MT_DEVICE : MM_MT_NORMAL))
		return KFAIL("MMIO prot %x on table %s", prot, kernel_as.arch->name);
	struct mm_cursor c;
	struct mm_info in;
	if (mm_lock(&c, &kernel_as, MMIO_VA, MMIO_VA + PAGE_SIZE))
		return KFAIL("lock");
	int refused = has_dev ? MM_EPROT :
		mm_map(&c, MMIO_VA, page, 1, MM_PROT_R | MM_PROT_G | MM_PROT_DEVICE, 0);
	int err = mm_map(&c, MMIO_VA, page, 1, prot, 0);
	if (!err)
		err = mm_query(&c, MMIO_VA, &in);
	mm_release(&c);
	if (refused != MM_EPROT)
		return KFAIL("%s took a device mapping it cannot encode (%d)",
			     kernel_as.arch->name, refused);
	if (err)
		return KFAIL("map UART page: %s", mm_strerror(err));
	uint64_t rva = MMIO_VA + (pa - page);
	uint32_t val = up.width == 4 ? *(volatile uint32_t *)rva : *(volatile uint8_t *)rva;
	if (mm_lock(&c, &kernel_as, MMIO_VA, MMIO_VA + PAGE_SIZE))
		return KFAIL("lock");
	struct mm_info out;
	err = mm_take(&c, MMIO_VA, &out);
	mm_release(&c);
	if (err || out.pa != page)
		return KFAIL("take the UART page back: %s", mm_strerror(err));
	if (in.kind != MM_MAPPED || in.pa != page || in.prot != prot)
		return KFAIL("UART page queried kind %u pa %lx prot %x, mapped %x", in.kind,
			     (unsigned long)in.pa, in.prot, prot);
	if ((val & up.mask) != up.want)
		return KFAIL("%s register %lx reads %x through the mapping, want %x under mask %x",
			     up.compat, (unsigned long)up.off, val, up.want, up.mask);
	return 0;
}

static struct fdtw fw;

/* Root (#address-cells 2, #size-cells 2) and an open /soc bus; `ranges`
 * is empty (the identity) unless rcells > 0 gives its entries, and absent
 * when rcells < 0. The caller adds devices, closes /soc and the root. */
static void fw_soc(uint32_t soc_ac, uint32_t soc_sc, int rcells, const uint32_t *ranges)
{
	memset(&fw, 0, sizeof fw);
	fw_begin(&fw, "");
	fw_u32(&fw, "#address-cells", 2);
	fw_u32(&fw, "#size-cells", 2);
	fw_begin(&fw, "soc");
	fw_u32(&fw, "#address-cells", soc_ac);
	fw_u32(&fw, "#size-cells", soc_sc);
	fw_str(&fw, "compatible", "simple-bus");
	if (rcells == 0)
		fw_prop(&fw, "ranges", "", 0);
	else if (rcells > 0)
		fw_cells(&fw, "ranges", rcells, ranges);
}

static const void *fw_close_soc(void)
{
	fw_end(&fw);    /* soc */
	fw_end(&fw);    /* root */
	return fw_finish(&fw);
}

/* Exploit-style: the kmap test must choose the register it reads from the
 * UART's compatible, never from where the node sits. A /soc/serial node
 * that is a SiFive UART (as on -M sifive_u) has no byte register at
 * offset 5, and a byte load there is an access fault in the kernel: the
 * probe must name txctrl (0x08, 32-bit) instead. Also: a 16550 with
 * reg-shift/reg-io-width and a translating `ranges`, a disabled UART
 * passed over for an enabled one, an unknown "serial" and a bus that does
 * not map its children into the CPU's space are each handled without
 * guessing. Built-in blobs; no device is touched. */
KTEST(10, sec_kmap_by_compatible)
{
	struct uart_probe p;
	static const char sifive_list[] = "sifive,fu540-c000-uart\0sifive,uart0";

	/* 1. /soc/serial@10010000 is a SiFive UART. */
	fw_soc(2, 2, 0, NULL);
	fw_begin(&fw, "serial@10010000");
	fw_prop(&fw, "compatible", sifive_list, sizeof sifive_list);
	fw_cells(&fw, "reg", 4, (const uint32_t[]){ 0, 0x10010000, 0, 0x1000 });
	fw_end(&fw);
	const void *b = fw_close_soc();
	if (!b)
		return KFAIL("test blob 1 overflowed");
	if (uart_probe(b, &p))
		return KFAIL("a sifive,uart0 at /soc/serial was not found");
	if (strcmp(p.compat, "sifive,uart0") || p.off == 5 || p.off != 8 || p.width != 4 ||
	    p.pa != 0x10010000)
		return KFAIL("sifive,uart0 probed as %s at %lx + %lx, width %u (want txctrl, 0x8, 32-bit)",
			     p.compat, (unsigned long)p.pa, (unsigned long)p.off, p.width);

	/* 2. A 16550 with reg-shift 2, 32-bit registers, behind a bus whose
	 * ranges put child address 0 at 0x20000000. */
	fw_soc(1, 1, 4, (const uint32_t[]){ 0, 0, 0x20000000, 0x100000 });
	fw_begin(&fw, "uart@3000");
	fw_str(&fw, "compatible", "ns16550a");
	fw_cells(&fw, "reg", 2, (const uint32_t[]){ 0x3000, 0x100 });
	fw_u32(&fw, "reg-shift", 2);
	fw_u32(&fw, "reg-io-width", 4);
	fw_end(&fw);
	if (!(b = fw_close_soc()))
		return KFAIL("test blob 2 overflowed");
	if (uart_probe(b, &p) || p.pa != 0x20003000 || p.off != 20 || p.width != 4)
		return KFAIL("ns16550a behind ranges, reg-shift 2: pa %lx off %lx width %u",
			     (unsigned long)p.pa, (unsigned long)p.off, p.width);

	/* 3. A disabled 16550 first, an enabled SiFive UART after it. */
	fw_soc(2, 2, 0, NULL);
	fw_begin(&fw, "serial@10000000");
	fw_str(&fw, "compatible", "ns16550a");
	fw_cells(&fw, "reg", 4, (const uint32_t[]){ 0, 0x10000000, 0, 0x100 });
	fw_str(&fw, "status", "disabled");
	fw_end(&fw);
	fw_begin(&fw, "serial@10011000");
	fw_str(&fw, "compatible", "sifive,uart0");
	fw_cells(&fw, "reg", 4, (const uint32_t[]){ 0, 0x10011000, 0, 0x1000 });
	fw_end(&fw);
	if (!(b = fw_close_soc()))
		return KFAIL("test blob 3 overflowed");
	if (uart_probe(b, &p) || p.pa != 0x10011000 || p.off != 8)
		return KFAIL("a disabled ns16550a was chosen over an enabled sifive,uart0");

	/* 4. Nothing known: an unknown UART at /soc/serial is not read. */
	fw_soc(2, 2, 0, NULL);
	fw_begin(&fw, "serial@10000000");
	fw_str(&fw, "compatible", "acme,uart");
	fw_cells(&fw, "reg", 4, (const uint32_t[]){ 0, 0x10000000, 0, 0x100 });
	fw_end(&fw);
	if (!(b = fw_close_soc()))
		return KFAIL("test blob 4 overflowed");
	if (uart_probe(b, &p) != -E_NOENT)
		return KFAIL("an acme,uart at /soc/serial was taken for a known UART");

	/* 5. A bus without `ranges` does not put its children in the CPU's
	 * address space: its 16550 is not reachable and not used. */
	fw_soc(2, 2, -1, NULL);
	fw_begin(&fw, "serial@10000000");
	fw_str(&fw, "compatible", "ns16550a");
	fw_cells(&fw, "reg", 4, (const uint32_t[]){ 0, 0x10000000, 0, 0x100 });
	fw_end(&fw);
	if (!(b = fw_close_soc()))
		return KFAIL("test blob 5 overflowed");
	if (uart_probe(b, &p) != -E_NOENT)
		return KFAIL("a 16550 on a bus without ranges was used at %lx", (unsigned long)p.pa);
	return 0;
}
