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
