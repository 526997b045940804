/* The RISC-V Platform-Level Interrupt Controller (kernel/irqchip.h).
 *
 * Found by compatible ("riscv,plic0", or "sifive,plic-1.0.0" in older
 * trees): `reg` is its register window, `riscv,ndev` the number of
 * sources (lines 1..ndev), `interrupts-extended` one (phandle, cause)
 * pair per context, in context order. A pair's phandle names a hart's
 * local interrupt controller, the child of that hart's cpu node (whose
 * `reg` is the hart id); cause 9 is the supervisor external interrupt,
 * the context the kernel uses (cause 11, machine mode, is the firmware's).
 *
 * Registers (the PLIC specification's layout): a 32-bit priority per
 * source at 4 * line; per context an enable bit per source at 0x2000 +
 * 0x80 * context, and a threshold and a claim/complete register at
 * 0x200000 + 0x1000 * context. A source interrupts a context when it is
 * pending, enabled there, and its priority is above the threshold: the
 * kernel gives a line priority 1 when it enables it and every hart's
 * threshold 0. */
#include <patina/errno.h>
#include "irqchip.h"
#include "devtree.h"
#include "fdt.h"
#include "mm_platform.h"
#include "hartmask.h"
#include "spinlock.h"
#include "printk.h"
#include "riscv.h"

#define PLIC_PRIORITY     0x0
#define PLIC_PENDING      0x1000
#define PLIC_ENABLE       0x2000
#define PLIC_ENABLE_STEP  0x80
#define PLIC_CONTEXT      0x200000
#define PLIC_CONTEXT_STEP 0x1000
#define PLIC_THRESHOLD    0x0
#define PLIC_CLAIM        0x4
#define PLIC_LINES_MAX    1024      /* sources 1..1023 */
#define PLIC_CONTEXTS_MAX 15872

struct plic_ctx {
	uint32_t hartid;
	uint32_t ctx;
};

static volatile uint8_t *plic;       /* the mapped window; NULL: none */
static uint32_t nlines;              /* ndev + 1 */
static struct plic_ctx sctx[HARTS_MAX];   /* supervisor contexts, by hart */
static uint32_t nsctx;
/* Enable words are shared by 32 lines: read-modify-write under this. */
static int plic_node = -1;        /* its device-tree node, once initialised */
static spinlock_t plic_lock = SPINLOCK_INIT_CLASS(&lock_class_irqchip);

static volatile uint32_t *reg(uint64_t off)
{
	return (volatile uint32_t *)(plic + off);
}

static uint32_t cell(const void *p, int i)
{
	return fdt_be32((const uint8_t *)p + 4 * i);
}

/* The hart whose local interrupt controller has phandle ph: its hart id
 * in *hartid and that controller's #interrupt-cells in *cells. 0, or
 * -E_NOENT when no cpu node's interrupt controller has that phandle. */
static int intc_hart(const void *dtb, uint32_t ph, uint32_t *hartid, uint32_t *cells)
{
	int cpus = fdt_path(dtb, "/cpus");
	if (cpus < 0)
		return -E_NOENT;
	int len;
	const void *v = fdt_getprop(dtb, cpus, "#address-cells", &len);
	uint32_t acells = v && len == 4 ? fdt_be32(v) : 1;
	if (acells != 1 && acells != 2)
		return -E_NOENT;
	for (int c = fdt_first_child(dtb, cpus); c >= 0; c = fdt_next_sibling(dtb, c)) {
		for (int n = fdt_first_child(dtb, c); n >= 0; n = fdt_next_sibling(dtb, n)) {
			if (!fdt_getprop(dtb, n, "interrupt-controller", NULL))
				continue;
			const void *p = fdt_getprop(dtb, n, "phandle", &len);
			if (!p)
				p = fdt_getprop(dtb, n, "linux,phandle", &len);
			if (!p || len != 4 || fdt_be32(p) != ph)
				continue;
			const void *r = fdt_getprop(dtb, c, "reg", &len);
			if (!r || len < (int)(4 * acells))
				return -E_NOENT;
			*hartid = (uint32_t)fdt_read_cells(r, acells);
			v = fdt_getprop(dtb, n, "#interrupt-cells", &len);
			*cells = v && len == 4 ? fdt_be32(v) : 1;
			return 0;
		}
	}
	return -E_NOENT;
}

/* Read the contexts of `interrupts-extended` into sctx: 0 with *maxctx
 * the highest context number, or -E_INVAL for a malformed list (a pair
 * cut short, a phandle that is no hart's controller, too many). */
static int read_contexts(const void *dtb, int node, uint32_t *maxctx)
{
	int len;
	const void *ie = fdt_getprop(dtb, node, "interrupts-extended", &len);
	if (!ie || len <= 0 || len % 4)
		return -E_INVAL;
	int n = len / 4;
	uint32_t ctx = 0;
	nsctx = 0;
	*maxctx = 0;
	for (int i = 0; i < n; ctx++) {
		uint32_t hartid, cells;
		if (ctx >= PLIC_CONTEXTS_MAX || intc_hart(dtb, cell(ie, i), &hartid, &cells) ||
		    cells < 1 || cells > 2 || n - i - 1 < (int)cells)
			return -E_INVAL;
		if (cell(ie, i + 1) == IRQ_S_EXT) {
			if (nsctx >= HARTS_MAX)
				return -E_INVAL;
			sctx[nsctx].hartid = hartid;
			sctx[nsctx].ctx = ctx;
			nsctx++;
			*maxctx = ctx;
		}
		i += 1 + (int)cells;
	}
	return 0;
}

int irqchip_init(const void *dtb)
{
	static const char *const compat[] = { "riscv,plic0", "sifive,plic-1.0.0" };
	struct dt_dev d;
	int err = dt_find_compatible(dtb, compat, 2, &d);
	if (err)
		return err == -E_NOENT ? -E_NOENT : -E_INVAL;
	int len;
	const void *v = fdt_getprop(dtb, d.node, "riscv,ndev", &len);
	uint32_t ndev = v && len == 4 ? fdt_be32(v) : 0;
	uint32_t maxctx;
	if (!ndev || ndev >= PLIC_LINES_MAX || read_contexts(dtb, d.node, &maxctx))
		return -E_INVAL;
	/* Every register the kernel touches must lie inside reg. */
	uint64_t need = PLIC_CONTEXT + (uint64_t)(maxctx + 1) * PLIC_CONTEXT_STEP;
	if (!nsctx || d.size < need)
		return -E_INVAL;
	paddr_t lo = d.base & ~(PAGE_SIZE - 1);
	uint64_t wlen = (d.base + d.size - lo + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
	void *va;
	if (kmap_mmio(lo, wlen, &va))
		return -E_NOMEM;
	plic = (volatile uint8_t *)va + (d.base - lo);
	plic_node = d.node;
	nlines = ndev + 1;
	for (uint32_t l = 1; l < nlines; l++)
		*reg(PLIC_PRIORITY + 4 * l) = 0;
	for (uint32_t i = 0; i < nsctx; i++)
		for (uint32_t w = 0; w < (nlines + 31) / 32; w++)
			*reg(PLIC_ENABLE + PLIC_ENABLE_STEP * sctx[i].ctx + 4 * w) = 0;
	return 0;
}

int irqchip_node(void)
{
	return plic ? plic_node : -1;
}

int irqchip_hart_context(uint32_t hartid)
{
	for (uint32_t i = 0; plic && i < nsctx; i++)
		if (sctx[i].hartid == hartid)
			return (int)sctx[i].ctx;
	return -1;
}

void irqchip_init_hart(uint32_t hartid)
{
	int ctx = irqchip_hart_context(hartid);
	if (ctx < 0)
		return;
	*reg(PLIC_CONTEXT + PLIC_CONTEXT_STEP * (uint64_t)ctx + PLIC_THRESHOLD) = 0;
	csr_set(sie, SIE_SEIE);
}

uint32_t irqchip_lines(void)
{
	return plic ? nlines : 0;
}

/* Set or clear line's enable bit in hart's context, and its priority:
 * 1 when on, written after the enable bit, 0 when off, written after it
 * is cleared. The priority write comes last because QEMU's PLIC (7.2)
 * looks at its outputs again on a priority write but not on an enable
 * write: a request pending from before the enable is then taken at
 * once, and one pending at the disable stops asserting the hart's line.
 * A line is routed to one hart, so its priority is that hart's alone. */
static void set_enable(uint32_t line, uint32_t hartid, int on)
{
	int ctx = irqchip_hart_context(hartid);
	if (ctx < 0 || !line || line >= nlines)
		return;
	volatile uint32_t *w = reg(PLIC_ENABLE + PLIC_ENABLE_STEP * (uint64_t)ctx + 4 * (line / 32));
	unsigned long f = spin_lock_irqsave(&plic_lock);
	if (on)
		*w |= 1u << (line % 32);
	else
		*w &= ~(1u << (line % 32));
	*reg(PLIC_PRIORITY + 4 * line) = on ? 1 : 0;
	spin_unlock_irqrestore(&plic_lock, f);
}

void irqchip_enable(uint32_t line, uint32_t hartid)
{
	set_enable(line, hartid, 1);
}

void irqchip_disable(uint32_t line, uint32_t hartid)
{
	set_enable(line, hartid, 0);
}

uint32_t irqchip_claim(uint32_t hartid)
{
	int ctx = irqchip_hart_context(hartid);
	if (ctx < 0)
		return 0;
	uint32_t line = *reg(PLIC_CONTEXT + PLIC_CONTEXT_STEP * (uint64_t)ctx + PLIC_CLAIM);
	return line < nlines ? line : 0;
}

void irqchip_complete(uint32_t line, uint32_t hartid)
{
	int ctx = irqchip_hart_context(hartid);
	if (ctx < 0 || !line || line >= nlines)
		return;
	*reg(PLIC_CONTEXT + PLIC_CONTEXT_STEP * (uint64_t)ctx + PLIC_CLAIM) = line;
}

int irqchip_pending(uint32_t line)
{
	if (!plic || !line || line >= nlines)
		return 0;
	return (*reg(PLIC_PENDING + 4 * (line / 32)) >> (line % 32)) & 1;
}
