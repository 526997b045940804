/* Interrupts as messages, in the kernel (irq.c, kernel/irqchip.h): a
 * real device raises a real interrupt. The NS16550A UART of QEMU virt
 * raises "transmitter holding register empty" as soon as that interrupt
 * is enabled (IER bit 1) while it has nothing to send; the kernel's
 * console goes through the firmware, so nothing else uses the UART's
 * interrupt. Each test puts IER back as it found it.
 *
 * The endpoint is a kernel one charged to the task running the tests,
 * counted as receivable (as an endpoint cap with R_RECV would make it)
 * so that a message is queued rather than dropped; the test takes the
 * message off the queue with the receive's own code (ipc_notice_take,
 * notice_received) where a receiving thread would copy it to its
 * registers. The user-level dev_irq_* tests receive it for real. */
#include <patina/device.h>
#include "mk.h"
#include "ktest.h"
#include "irqchip.h"
#include "devtree.h"
#include "fdt.h"
#include "bootinfo.h"
#include "mm_platform.h"
#include "timer.h"

#define UART_IER     1
#define IER_THRI     0x02       /* transmitter holding register empty */
#define TEST_BADGE   0x1a0dbadeUL
#define WAIT_US      2000000    /* under TCG an interrupt may take a while */
#define QUIET_US     50000

struct uart {
	volatile uint8_t *regs;
	uint32_t shift, width;
	uint32_t line;
};

/* The first enabled ns16550a in the device tree with an interrupt the
 * controller has, its registers mapped (once: the mapping stays for the
 * next run). 0, or -E_NOENT (no controller or no such UART: the test is
 * skipped). */
static int uart_find(struct uart *u)
{
	if (!irqchip_lines())
		return -E_NOENT;
	static const char *const compat[] = { "ns16550a", "ns16550" };
	static volatile uint8_t *mapped;
	static paddr_t mapped_pa;
	const void *blob = phys_to_virt(boot_info.dtb_pa);
	struct dt_dev d;
	if (dt_find_compatible(blob, compat, 2, &d))
		return -E_NOENT;
	int len;
	const void *v = fdt_getprop(blob, d.node, "interrupts", &len);
	u->line = v && len >= 4 ? fdt_be32(v) : 0;
	v = fdt_getprop(blob, d.node, "reg-shift", &len);
	u->shift = v && len == 4 ? fdt_be32(v) : 0;
	v = fdt_getprop(blob, d.node, "reg-io-width", &len);
	u->width = v && len == 4 ? fdt_be32(v) : 1;
	if (!u->line || u->line >= irqchip_lines() || u->shift > 4 ||
	    (u->width != 1 && u->width != 4))
		return -E_NOENT;
	paddr_t page = d.base & ~(PAGE_SIZE - 1);
	if ((d.base - page) + (8UL << u->shift) > PAGE_SIZE)
		return -E_NOENT;
	void *va;
	if (!mapped || mapped_pa != page) {
		if (kmap_mmio(page, PAGE_SIZE, &va))
			return -E_NOENT;
		mapped = va;
		mapped_pa = page;
	}
	u->regs = mapped + (d.base - page);
	return 0;
}

static uint32_t ier_read(const struct uart *u)
{
	volatile uint8_t *r = u->regs + (UART_IER << u->shift);
	return u->width == 4 ? *(volatile uint32_t *)r : *r;
}

static void ier_write(const struct uart *u, uint32_t v)
{
	volatile uint8_t *r = u->regs + (UART_IER << u->shift);
	if (u->width == 4)
		*(volatile uint32_t *)r = v;
	else
		*r = (uint8_t)v;
}

/* The device raises the interrupt afresh: its request drops, then rises. */
static void uart_retrigger(const struct uart *u, uint32_t ier0)
{
	ier_write(u, ier0 & ~IER_THRI);
	ier_write(u, ier0 | IER_THRI);
}

/* How many notices e holds queued (its lock taken for the look). */
static int queued(struct endpoint *e, struct notice **first)
{
	unsigned long f = irq_save();
	ep_lock(e);
	int n = 0;
	for (struct notice *x = e->notices; x; x = x->next)
		n++;
	if (first)
		*first = e->notices;
	ep_unlock(e);
	irq_restore(f);
	return n;
}

/* Wait (interrupts on: the handler runs here or on the boot hart) until
 * e holds a notice or us passed; how many it holds. */
static int wait_queued(struct endpoint *e, uint64_t us)
{
	uint64_t until = time_after_us(us);
	int n;
	while (!(n = queued(e, NULL)) && arch_time_now() < until)
		cpu_relax();
	return n;
}

/* Receive e's first notice as recv_notice does, minus the registers. */
static struct notice *take(struct endpoint *e)
{
	unsigned long f = irq_save();
	ep_lock(e);
	struct notice *n = e->notices ? ipc_notice_take(e) : NULL;
	ep_unlock(e);
	if (n)
		notice_received(n);
	irq_restore(f);
	return n;
}

static int locked_call(int (*fn)(uint32_t), uint32_t line)
{
	unsigned long f = spin_lock_irqsave(&mk_lock);
	int r = fn(line);
	spin_unlock_irqrestore(&mk_lock, f);
	return r;
}

/* The body of irq_uart_message, with the endpoint bound to u's line. */
static int uart_message_checks(const struct uart *u, struct endpoint *e, uint32_t ier0,
			       char *why, size_t whylen)
{
	ier_write(u, ier0 | IER_THRI);
	if (wait_queued(e, WAIT_US) != 1)
		return KFAIL("no message for line %u within 2 s of the UART's THRE interrupt",
			     u->line);
	struct notice *n;
	queued(e, &n);
	if (n->kind != NK_IRQ || n->msg[0] != MSG_IRQ || n->msg[1] != u->line || n->msg[2] ||
	    n->msg[3] || n->badge != TEST_BADGE)
		return KFAIL("message kind %d words %lx %lx %lx %lx badge %lx", n->kind,
			     (unsigned long)n->msg[0], (unsigned long)n->msg[1],
			     (unsigned long)n->msg[2], (unsigned long)n->msg[3],
			     (unsigned long)n->badge);
	if (locked_call(irq_ack, u->line) != -E_AGAIN)
		return KFAIL("ack accepted while the message waits on the endpoint");
	/* Masked: the device raising it again brings no second message. */
	uart_retrigger(u, ier0);
	if (wait_queued(e, QUIET_US) != 1 || queued(e, NULL) != 1)
		return KFAIL("a second message before the ack (%d queued)", queued(e, NULL));
	if (take(e) != n || queued(e, NULL))
		return KFAIL("the receive did not take the line's message");
	if (locked_call(irq_ack, u->line))
		return KFAIL("ack refused after the message was received");
	if (locked_call(irq_ack, u->line) != -E_AGAIN)
		return KFAIL("a second ack accepted with no interrupt outstanding");
	/* Unmasked: the next request comes as the next message. */
	uart_retrigger(u, ier0);
	if (wait_queued(e, WAIT_US) != 1)
		return KFAIL("no message after the ack");
	/* Unbinding with that interrupt claimed and unacknowledged takes the
	 * message back and completes the line. */
	ier_write(u, ier0);
	if (locked_call(irq_unbind, u->line))
		return KFAIL("unbind refused");
	if (queued(e, NULL))
		return KFAIL("the message stayed queued after the unbind");
	if (locked_call(irq_ack, u->line) != -E_AGAIN)
		return KFAIL("ack accepted on an unbound line");
	if (locked_call(irq_unbind, u->line) != -E_NOENT)
		return KFAIL("a second unbind did not say E_NOENT");
	return 0;
}

/* The controller was read from the device tree: every online hart has a
 * supervisor context of its own (each hart takes its interrupts through
 * its own context), and the lines it reports fit the PLIC's limits. */
static int count_plics(void *ctx, const struct dt_dev *d, int depth, bool has_reg)
{
	(void)depth, (void)has_reg;
	if (dt_is_compatible(phys_to_virt(boot_info.dtb_pa), d->node, "riscv,plic0") ||
	    dt_is_compatible(phys_to_virt(boot_info.dtb_pa), d->node, "sifive,plic-1.0.0"))
		(*(int *)ctx)++;
	return 0;
}

KTEST(62, irq_hart_contexts)
{
	uint32_t lines = irqchip_lines();
	if (!lines)
		return KSKIP("no interrupt controller");
	if (lines < 2 || lines > 1024)
		return KFAIL("%u lines", lines);
	/* With one controller every hart has a context on it; with one a
	 * socket (QEMU virt with NUMA nodes) only the driven one's harts. */
	int chips = 0, with = 0;
	dt_walk(phys_to_virt(boot_info.dtb_pa), count_plics, &chips);
	for (uint32_t i = 0; i < ncpus; i++) {
		int ctx = irqchip_hart_context(cpus[i].hartid);
		if (ctx < 0 && chips == 1)
			return KFAIL("hart %u has no context", cpus[i].hartid);
		if (ctx < 0)
			continue;
		with++;
		for (uint32_t j = 0; j < i; j++)
			if (irqchip_hart_context(cpus[j].hartid) == ctx)
				return KFAIL("harts %u and %u share context %d", cpus[j].hartid,
					     cpus[i].hartid, ctx);
	}
	if (!with)
		return KFAIL("no hart has a context (%d controllers)", chips);
	return 0;
}

/* Claim, deliver, mask until the ack, complete: the UART's interrupt
 * bound to an endpoint arrives as one MSG_IRQ message with the line and
 * the badge; the line stays masked (no second message while the device
 * raises it again) until it is acknowledged, which is refused while the
 * message waits unreceived; after the ack the next request arrives; an
 * unbind takes a queued message back. */
KTEST(62, irq_uart_message)
{
	struct uart u;
	if (uart_find(&u))
		return KSKIP("no interrupt controller, or no ns16550a with an interrupt");
	struct thread *me = cur_thread();
	if (!me || !me->task)
		return KSKIP("run outside a task (no quota to charge an endpoint to)");
	unsigned long f = spin_lock_irqsave(&mk_lock);
	struct endpoint *e = ep_alloc(me->task);
	int err = e ? 0 : -E_NOMEM;
	if (e) {
		__atomic_add_fetch(&e->recv_caps, 1, __ATOMIC_RELAXED);
		err = irq_bind(u.line, e, TEST_BADGE, me->task);
	}
	spin_unlock_irqrestore(&mk_lock, f);
	int fail = err ? KFAIL("bind line %u: %d", u.line, err) : 0;
	uint32_t ier0 = ier_read(&u);
	if (!fail)
		fail = uart_message_checks(&u, e, ier0, why, whylen);
	ier_write(&u, ier0);
	f = spin_lock_irqsave(&mk_lock);
	if (!err)
		irq_unbind(u.line);
	if (e) {
		__atomic_sub_fetch(&e->recv_caps, 1, __ATOMIC_RELAXED);
		ep_put(e);
	}
	spin_unlock_irqrestore(&mk_lock, f);
	return fail;
}

/* A line that interrupts with no binding is completed and disabled: one
 * interrupt is counted, and no more come while the device keeps its
 * request raised (no storm). Enabling the line once more with the request
 * dropped leaves nothing pending behind. */
KTEST(62, irq_unbound_line_masked)
{
	struct uart u;
	if (uart_find(&u))
		return KSKIP("no interrupt controller, or no ns16550a with an interrupt");
	uint32_t hart = cpus[0].hartid;
	uint32_t ier0 = ier_read(&u);
	unsigned long c0 = irq_unbound_count();
	irqchip_enable(u.line, hart);
	/* QEMU's PLIC follows the UART's level: a request the console's
	 * writes on another hart drop before it is claimed is gone, and the
	 * next comes with the next rising edge. Make a fresh edge each try. */
	for (int t = 0; t < 4 && irq_unbound_count() == c0; t++) {
		ier_write(&u, ier0 & ~IER_THRI);
		ier_write(&u, ier0 | IER_THRI);
		uint64_t until = time_after_us(WAIT_US / 4);
		while (irq_unbound_count() == c0 && arch_time_now() < until)
			cpu_relax();
	}
	unsigned long c1 = irq_unbound_count();
	uint64_t until;
	until = time_after_us(QUIET_US);
	while (arch_time_now() < until)
		cpu_relax();
	unsigned long c2 = irq_unbound_count();
	ier_write(&u, ier0);
	/* Whatever the controller latched meanwhile: claimed, completed,
	 * disabled again by the same path. */
	if (irqchip_pending(u.line))
		irqchip_enable(u.line, hart);
	until = time_after_us(WAIT_US);
	while (irqchip_pending(u.line) && arch_time_now() < until)
		cpu_relax();
	irqchip_disable(u.line, hart);
	if (c1 == c0)
		return KFAIL("the unbound line's interrupt was never taken");
	if (c2 != c0 + 1)
		return KFAIL("%lu interrupts of the unbound line (a storm), want 1", c2 - c0);
	if (irqchip_pending(u.line))
		return KFAIL("line %u still pending with the device quiet", u.line);
	return 0;
}
