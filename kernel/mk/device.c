/* Devices for user-space drivers (abi/patina/device.h): describing the
 * devices the kernel found (kernel/devices.h) and making the caps that
 * let a driver use one. */
#include "mk.h"
#include "devices.h"
#include "kstring.h"

long sys_device_info(struct task *t, long kslot, uint64_t index, uint64_t uout)
{
	int err = has_cap(t, kslot, CAP_KERNEL, R_READ);
	if (err)
		return err;
	const struct kdevice *d = index < devices_count() ? device_at((unsigned)index) : NULL;
	if (!d)
		return -E_NOENT;
	struct device_info di = d->info;
	return copy_to_user(uout, &di, sizeof di) ? -E_FAULT : 0;
}

/* Do slots a and b of t lie in one CSpace chunk (so one chunk serves
 * both)? Fixed slots need none. */
static bool same_chunk(long a, long b)
{
	return a >= CSPACE_FIXED_SLOTS && b >= CSPACE_FIXED_SLOTS &&
	       (a - CSPACE_FIXED_SLOTS) >> CCHUNK_SHIFT == (b - CSPACE_FIXED_SLOTS) >> CCHUNK_SHIFT;
}

/* Both destination slots are checked, and the chunks they need made,
 * before either cap is installed: a refused call leaves the CSpace as it
 * was. The caps are roots of the derivation tree (like a new frame's):
 * they name no object to count, as devices outlive every task. */
long sys_device_caps(struct task *t, long kslot, uint64_t index, long mslot, long islot)
{
	int err = 0;
	unsigned long f = spin_lock_irqsave(&mk_lock);
	cap_lookup(t, kslot, CAP_KERNEL, R_CONTROL, &err);
	const struct kdevice *d = NULL;
	if (!err && !(d = index < devices_count() ? device_at((unsigned)index) : NULL))
		err = -E_NOENT;
	if (!err && islot != SLOT_NONE && !d->info.irq)
		err = -E_NOENT;
	if (!err && mslot != SLOT_NONE)
		err = cap_slot_check(t, mslot);
	if (!err && islot != SLOT_NONE)
		err = cap_slot_check(t, islot);
	if (!err && mslot != SLOT_NONE && mslot == islot)
		err = -E_EXIST;    /* the second cap would find the slot taken */
	struct cchunk *mspare = NULL, *ispare = NULL;
	if (!err && mslot != SLOT_NONE)
		err = cspace_prepare(t, mslot, &mspare);
	if (!err && islot != SLOT_NONE && !(mslot != SLOT_NONE && same_chunk(mslot, islot))) {
		err = cspace_prepare(t, islot, &ispare);
		if (err)
			cspace_unprepare(t, mspare);
	}
	if (!err && mslot != SLOT_NONE) {
		struct cap nc = { .type = CAP_MMIO, .rights = R_READ | R_WRITE | R_DMA | R_GRANT,
				  .lo = d->info.base, .hi = d->info.base + d->info.size,
				  .o.dev = (uint32_t)index };
		cap_install(cspace_commit(t, mslot, mspare), &nc, NULL);
	}
	if (!err && islot != SLOT_NONE) {
		struct cap nc = { .type = CAP_IRQ, .rights = R_CONTROL | R_GRANT,
				  .lo = d->info.irq, .o.dev = (uint32_t)index };
		cap_install(cspace_commit(t, islot, ispare), &nc, NULL);
	}
	spin_unlock_irqrestore(&mk_lock, f);
	return err;
}

/* The caps are looked up with their types first, so a slot that holds no
 * cap of its type is -E_BADCAP whatever the rights of the other. */
long sys_dma_addr(struct task *t, long mslot, long fslot)
{
	int err = 0;
	unsigned long f = spin_lock_irqsave(&t->cspace_lock);
	struct cap *mc = cap_lookup(t, mslot, CAP_MMIO, 0, &err);
	struct cap *fc = mc ? cap_lookup(t, fslot, CAP_FRAME, 0, &err) : NULL;
	uint64_t pa = fc ? fc->o.pa : 0;
	if (fc && !(mc->rights & R_DMA))
		err = -E_PERM;
	spin_unlock_irqrestore(&t->cspace_lock, f);
	return err ? err : (long)pa;
}

void device_task_dying(struct task *t)
{
	uint64_t done = 0;     /* devices reset already (DEVICES_MAX bits) */
	_Static_assert(DEVICES_MAX <= 64, "one bit per device");
	for (long s = 0; s < cspace_extent(t); s++) {
		int err;
		struct cap *c = cap_lookup(t, s, CAP_MMIO, R_DMA, &err);
		if (!c || (done >> c->o.dev & 1))
			continue;
		done |= 1ull << c->o.dev;
		device_reset(c->o.dev);
	}
}
