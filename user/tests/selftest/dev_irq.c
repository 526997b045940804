/* Interrupts as messages (patina/device.h SYS_IRQ_BIND, SYS_IRQ_ACK,
 * MSG_IRQ; selftest names dev_irq_*).
 *
 * dev_irq_bind_rules: binding, rebinding the same endpoint, E_BUSY for
 * another, E_NOENT unbinding an unbound line, E_AGAIN acknowledging with
 * no interrupt outstanding, the cap checks, and the binding's end when
 * its endpoint dies or loses its last receive cap. It uses a virtio-mmio
 * slot's line (an empty slot never interrupts).
 *
 * dev_irq_message: a real interrupt received by a user thread. The
 * goldfish RTC of QEMU virt (the console's UART is the kernel's, not
 * listed) raises its alarm interrupt, a level one, once its alarm time
 * passes with IRQ_ENABLED set, until CLEAR_INTERRUPT. We map its
 * registers, bind its line, arm the alarm: one MSG_IRQ (the line, the
 * badge of the endpoint cap we bound with, no cap) arrives; nothing more
 * while we have not acknowledged it, though the device raises it anew;
 * the ack lets that request through as the next message; cleared at the
 * device and acknowledged, nothing more comes; a new alarm comes as a new
 * message. (A request still asserted at the ack without a new edge is
 * not checked: QEMU 7.2's PLIC model latches a request only when the
 * device's line changes, docs/microkernel.md.)
 * A thread of ours spins in user mode on hart 0 (where the kernel routes
 * the lines) meanwhile, so interrupts also arrive from user mode there.
 *
 * dev_irq_binder_death: a child binds a line and is killed; while it
 * lives our bind is E_BUSY, once it is dead (SYS_TASK_WAIT returned)
 * ours succeeds. */
#include "ulib.h"
#include "selftest.h"
#include <patina/device.h>

#define CK(c, ...) do { if (!(c)) { if (!why[0]) snprintf(why, 160, __VA_ARGS__); goto out; } } while (0)

#define IRQ_VA       0x6e900000UL
#define BADGE        0x1a0dbeefUL
#define MSG_WAIT_US  5000000ULL      /* a message that does not come in 5 s never will */
#define QUIET_US     50000ULL        /* "nothing more comes" */

/* Goldfish RTC registers (times in nanoseconds). */
#define RTC_TIME_LOW        0x00
#define RTC_TIME_HIGH       0x04
#define RTC_ALARM_LOW       0x08
#define RTC_ALARM_HIGH      0x0c
#define RTC_IRQ_ENABLED     0x10
#define RTC_CLEAR_ALARM     0x14
#define RTC_CLEAR_INTERRUPT 0x1c

static long dev_info(long i, struct device_info *d) { return sc3(SYS_DEVICE_INFO, SLOT_KERNEL, i, d); }
static long irq_bind(long irq, long ep) { return sc2(SYS_IRQ_BIND, irq, ep); }
static long irq_ack(long irq) { return sc1(SYS_IRQ_ACK, irq); }

/* The first device with compatible `compat` and an interrupt: its index
 * (*d its info), or -1. */
static long find_irq_device(const char *compat, struct device_info *d)
{
	for (long i = 0; dev_info(i, d) == 0; i++)
		if (!strcmp(d->compatible, compat) && d->irq)
			return i;
	return -1;
}

/* An IRQ cap (and an MMIO cap when mmio is not NULL) of device i in fresh
 * slots: 0 or the error. */
static long irq_cap_of(long i, long *irq, long *mmio)
{
	*irq = slot_alloc();
	if (mmio)
		*mmio = slot_alloc();
	return sc6(SYS_DEVICE_CAPS, SLOT_KERNEL, i, mmio ? *mmio : SLOT_NONE, *irq, 0, 0);
}

/* An IRQ cap of a virtio-mmio slot's line (an empty slot never
 * interrupts) in a fresh slot *irq: the device's index; -1 with why
 * saying the machine has none (skip); -2 with why filled when
 * SYS_DEVICE_CAPS refused (fail). */
static long quiet_line(long *irq, char *why)
{
	struct device_info d;
	long idx = find_irq_device("virtio,mmio", &d);
	if (idx < 0) {
		snprintf(why, 160, "no virtio-mmio slot with an interrupt");
		return -1;
	}
	long r = irq_cap_of(idx, irq, NULL);
	if (r) {
		snprintf(why, 160, "SYS_DEVICE_CAPS: %s", err_name(r));
		return -2;
	}
	return idx;
}

/* The end of a test: its line unbound (whatever it left), its IRQ cap
 * dropped, and, if it passed, nothing leaked since `before`. The test's
 * result: 0, or 1 with why filled. */
static int irq_test_end(long *irq, const struct kcounters *before, char *why)
{
	if (*irq >= 0)
		irq_bind(*irq, SLOT_NONE);
	slot_drop(irq);
	if (!why[0] && pg_counters_back(before, 0, why))
		return 1;
	return why[0] ? 1 : 0;
}

static long recv_for(long ep, uint64_t us, struct sysret *m)
{
	uint64_t w[4] = { 0 };
	*m = ipc_timed(SYS_RECV_TIMED, ep, w, SLOT_NONE, us);
	return m->a0;
}

int dev_irq_bind_rules(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	long irq = -1, a = -1, b = -1, ro = -1, send_only = -1, weak = -1;
	why[0] = 0;
	long idx = quiet_line(&irq, why);
	if (idx < 0)
		return idx == -1 ? UTEST_SKIP : 1;
	a = slot_alloc();
	b = slot_alloc();
	ro = slot_alloc();
	weak = slot_alloc();
	CK(ep_create(a) == 0 && ep_create(b) == 0, "endpoints");
	CK(cap_mint(a, ro, R_RECV, 0, 0, 0) == 0, "mint receive-only");
	CK(cap_mint(irq, weak, R_GRANT, 0, 0, 0) == 0, "mint an IRQ cap without R_CONTROL");
	long r;
	CK((r = irq_ack(irq)) == -E_AGAIN, "ack of an unbound line: %ld", r);
	CK((r = irq_bind(irq, SLOT_NONE)) == -E_NOENT, "unbind of an unbound line: %ld", r);
	CK((r = irq_bind(irq, ro)) == -E_PERM, "bind to an endpoint cap without R_SEND: %ld", r);
	CK((r = irq_bind(irq, SLOT_CONSOLE)) == -E_BADCAP, "bind to the console cap: %ld", r);
	CK((r = irq_bind(a, a)) == -E_BADCAP, "an endpoint cap as the IRQ cap: %ld", r);
	CK((r = irq_bind(weak, a)) == -E_PERM, "bind without R_CONTROL: %ld", r);
	CK((r = irq_ack(weak)) == -E_PERM, "ack without R_CONTROL: %ld", r);
	CK((r = irq_bind(irq, a)) == 0, "bind: %ld", r);
	CK((r = irq_bind(irq, a)) == 0, "binding the same endpoint again: %ld", r);
	CK((r = irq_bind(irq, b)) == -E_BUSY, "binding another endpoint: %ld", r);
	CK((r = irq_ack(irq)) == -E_AGAIN, "ack with no interrupt: %ld", r);
	CK((r = irq_bind(irq, SLOT_NONE)) == 0, "unbind: %ld", r);
	CK((r = irq_bind(irq, SLOT_NONE)) == -E_NOENT, "second unbind: %ld", r);
	CK((r = irq_bind(irq, b)) == 0, "bind another endpoint after the unbind: %ld", r);
	/* b dies (its only cap goes): the binding ends with it. */
	CK(cap_delete(b) == 0, "delete b");
	slot_release(b);
	b = -1;
	CK((r = irq_bind(irq, SLOT_NONE)) == -E_NOENT, "unbind after the endpoint died: %ld", r);
	/* Bound through a send-only copy; the last cap that can receive
	 * goes: nobody can receive there, so the binding ends too. */
	send_only = slot_alloc();
	CK(cap_mint(a, send_only, R_SEND, 0, 0, 0) == 0, "mint send-only");
	CK((r = irq_bind(irq, send_only)) == 0, "bind through a send-only cap: %ld", r);
	CK(cap_delete(ro) == 0 && cap_delete(a) == 0, "delete the receive caps");
	slot_release(ro);
	slot_release(a);
	ro = a = -1;
	CK((r = irq_bind(irq, SLOT_NONE)) == -E_NOENT,
	   "unbind after the last receive cap went: %ld", r);
out:
	slot_drop(&a);
	slot_drop(&b);
	slot_drop(&ro);
	slot_drop(&send_only);
	slot_drop(&weak);
	return irq_test_end(&irq, &before, why);
}

static volatile int spin_stop, spin_done;

static void spinner(void *arg)
{
	(void)arg;
	while (!spin_stop)
		__asm__ volatile("" ::: "memory");
	spin_done = 1;
}

static void w32(uint64_t va, uint32_t v) { *(volatile uint32_t *)va = v; }

/* Arm the RTC's alarm 1 ms from now. */
static void rtc_arm(uint64_t va)
{
	uint64_t lo = *(volatile uint32_t *)(va + RTC_TIME_LOW);
	uint64_t hi = *(volatile uint32_t *)(va + RTC_TIME_HIGH);
	uint64_t at = (hi << 32 | lo) + 1000000;
	w32(va + RTC_IRQ_ENABLED, 1);
	w32(va + RTC_ALARM_HIGH, (uint32_t)(at >> 32));
	w32(va + RTC_ALARM_LOW, (uint32_t)at);
}

/* One message on ep within MSG_WAIT_US, and it is line's MSG_IRQ. */
static int expect_irq(long ep, uint32_t line, const char *what, char *why)
{
	struct sysret m;
	long r = recv_for(ep, MSG_WAIT_US, &m);
	CK(r == 0, "%s: no message (%s)", what, err_name(r));
	CK((uint64_t)m.a1 == MSG_IRQ && (uint64_t)m.a2 == line && !m.a3 && !m.a4,
	   "%s: words %lx %lx %lx %lx, want MSG_IRQ %x 0 0", what, m.a1, m.a2, m.a3, m.a4, line);
	CK((uint64_t)m.a5 == BADGE && m.a6 == 0, "%s: badge %lx a6 %lx", what, m.a5, m.a6);
out:
	return why[0] ? 1 : 0;
}

static int expect_quiet(long ep, const char *what, char *why)
{
	struct sysret m;
	long r = recv_for(ep, QUIET_US, &m);
	CK(r == -E_TIMEDOUT, "%s: %s (w0 %lx)", what, r ? err_name(r) : "a message", m.a1);
out:
	return why[0] ? 1 : 0;
}

int dev_irq_message(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	struct device_info d;
	long irq = -1, mmio = -1, ep = -1, sep = -1, spin = -1;
	int mapped = 0;
	why[0] = 0;
	long idx = find_irq_device("google,goldfish-rtc", &d);
	if (idx < 0) {
		snprintf(why, 160, "no goldfish RTC with an interrupt");
		return UTEST_SKIP;
	}
	CK(irq_cap_of(idx, &irq, &mmio) == 0, "SYS_DEVICE_CAPS");
	struct region_op op = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = IRQ_VA, .len = 4096,
				.arg = mmio };
	CK(region_txn(SLOT_SELF_AS, IRQ_VA, IRQ_VA + 4096, &op, 1) == 1, "map the RTC: %ld",
	   (long)op.result);
	mapped = 1;
	ep = slot_alloc();
	sep = slot_alloc();
	CK(ep_create(ep) == 0 && cap_mint(ep, sep, R_SEND, BADGE, 0, 0) == 0, "endpoint");
	CK(irq_bind(irq, sep) == 0, "bind");
	spin_stop = spin_done = 0;
	spin = uthread_start(spinner, NULL, 0, 1);
	CK(spin >= 0, "spinner thread: %s", err_name(spin));
	rtc_arm(IRQ_VA);
	if (expect_irq(ep, d.irq, "the alarm", why))
		goto out;
	/* Masked until the ack: the device raising it anew brings nothing. */
	w32(IRQ_VA + RTC_CLEAR_INTERRUPT, 1);
	rtc_arm(IRQ_VA);
	if (expect_quiet(ep, "raised again, unacknowledged", why))
		goto out;
	/* The ack lets the request made meanwhile through. */
	CK(irq_ack(irq) == 0, "ack");
	if (expect_irq(ep, d.irq, "raised while masked, after the ack", why))
		goto out;
	w32(IRQ_VA + RTC_CLEAR_INTERRUPT, 1);
	CK(irq_ack(irq) == 0, "ack after the clear");
	CK(irq_ack(irq) == -E_AGAIN, "a second ack with nothing outstanding");
	if (expect_quiet(ep, "cleared and acknowledged", why))
		goto out;
	rtc_arm(IRQ_VA);
	if (expect_irq(ep, d.irq, "a second alarm", why))
		goto out;
	w32(IRQ_VA + RTC_CLEAR_INTERRUPT, 1);
	CK(irq_ack(irq) == 0, "ack of the second alarm");
out:
	if (spin >= 0) {
		spin_stop = 1;
		while (!spin_done)
			sys_yield();
		slot_drop(&spin);
	}
	if (mapped) {
		w32(IRQ_VA + RTC_IRQ_ENABLED, 0);
		w32(IRQ_VA + RTC_CLEAR_ALARM, 1);
		w32(IRQ_VA + RTC_CLEAR_INTERRUPT, 1);
		txn_one(SLOT_SELF_AS, ROP_UNMAP, 0, IRQ_VA, 0, NULL);
	}
	slot_drop(&mmio);
	slot_drop(&sep);
	slot_drop(&ep);
	return irq_test_end(&irq, &before, why);
}

/* ROLE_DEV_IRQ_BINDER (device index in arg >> 8): with the kernel cap
 * our parent handed us, make an IRQ cap of the device and bind it to an
 * endpoint of ours, then tell the parent the result in a call through the
 * given cap and wait there until killed. */
int dev_irq_binder_role(long arg)
{
	long irq = slot_alloc(), ep = slot_alloc();
	long r = sc6(SYS_DEVICE_CAPS, SLOT_KERNEL, arg >> 8, SLOT_NONE, irq, 0, 0);
	if (!r)
		r = ep_create(ep);
	if (!r)
		r = irq_bind(irq, ep);
	uint64_t w[4] = { (uint64_t)r, 0, 0, 0 };
	ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	return 90;      /* not reached: killed while its call waits */
}

int dev_irq_binder_death(char *why)
{
	struct kcounters before;
	settled_counters(&before);
	long irq = -1, ep = -1, task = -1;
	why[0] = 0;
	long idx = quiet_line(&irq, why);
	if (idx < 0)
		return idx == -1 ? UTEST_SKIP : 1;
	ep = slot_alloc();
	task = slot_alloc();
	CK(ep_create(ep) == 0, "endpoint");
	struct spawn_ext ext = { .args = NULL, .args_len = 0, .kernel = SLOT_KERNEL,
				 .console = SLOT_NONE };
	long r = sc7(SYS_TASK_SPAWN, SLOT_KERNEL, self_module(),
		     ROLE_DEV_IRQ_BINDER | idx << 8, task, QUOTA(SELF_CHILD_FRAMES + 2 * THREAD_KSTACK_FRAMES, 2, 2, 0), ep, (long)&ext);
	CK(r == 0, "spawn the binder: %s", err_name(r));
	struct sysret m;
	r = recv_for(ep, MSG_WAIT_US, &m);
	CK(r == 0, "no word from the binder (%s)", err_name(r));
	CK(m.a1 == 0, "the child's bind: %s", err_name(m.a1));
	CK((r = irq_bind(irq, ep)) == -E_BUSY, "bind while the child's binding lives: %ld", r);
	CK(task_kill(task) == 0, "kill the binder");
	CK((r = task_wait(task)) == EXIT_KILLED, "the binder's status %ld", r);
	CK((r = irq_bind(irq, ep)) == 0, "bind after the binder died: %ld", r);
	CK((r = irq_bind(irq, SLOT_NONE)) == 0, "unbind: %ld", r);
out:
	if (task >= 0 && why[0]) {
		task_kill(task);
		task_wait(task);
	}
	slot_drop(&task);
	slot_drop(&ep);
	return irq_test_end(&irq, &before, why);
}
