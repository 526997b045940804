/* Devices for user-space drivers (patina/device.h; selftest names dev_*):
 * the device list, the caps SYS_DEVICE_CAPS makes, mapping a register
 * window, what the kernel refuses for device pages (evict, supply,
 * clone, executable, writable through a read-only cap), SYS_DMA_ADDR's
 * checks, and the reset of a device whose DMA-capable driver died.
 *
 * The virtio-mmio slots of QEMU virt are there with or without a disk
 * behind them; their Magic register reads "virt" either way. */
#include "ulib.h"
#include "selftest.h"
#include <patina/device.h>
#include <patina/pager.h>

#define DV_VA   0x6e800000UL     /* device pages in our space */
#define DV_ANON 0x6e801000UL     /* memory beside them (keeps their leaf table) */
#define DV_PG   4096UL
#define VIRTIO_MAGIC 0x74726976u
#define VIRTIO_DEVICE_ID 0x008
#define VIRTIO_STATUS    0x070

#define CK(c, ...) do { if (!(c)) { if (!why[0]) snprintf(why, 160, __VA_ARGS__); goto out; } } while (0)

static long dev_info(long i, struct device_info *d)
{
	return sc3(SYS_DEVICE_INFO, SLOT_KERNEL, i, d);
}

static long dev_caps(long kslot, long i, long mmio, long irq)
{
	return sc6(SYS_DEVICE_CAPS, kslot, i, mmio, irq, 0, 0);
}

static long dma_addr(long mmio, long frame)
{
	return sc2(SYS_DMA_ADDR, mmio, frame);
}

/* The first device whose compatible is `compat`: its index (*d its
 * info), or -1. */
/* The first device with that compatible (and, with need_irq, an
 * interrupt: on a machine with one interrupt controller a socket the
 * kernel drives one, and devices wired to another report none). */
static long find_dev(const char *compat, int need_irq, struct device_info *d)
{
	for (long i = 0; dev_info(i, d) == 0; i++)
		if (!strcmp(d->compatible, compat) && (!need_irq || d->irq))
			return i;
	return -1;
}


/* A fresh slot holding a cap minted from src. */
static long mint(long src, unsigned rights, uint64_t lo, uint64_t hi)
{
	long s = slot_alloc();
	if (s >= 0 && cap_mint(src, s, rights, 0, lo, hi) != 0) {
		slot_release(s);
		return -1;
	}
	return s;
}

/* An MMIO cap (and, if irq is not NULL, an IRQ cap) for device i in
 * fresh slots: 0 or the error. */
static long caps_of(long i, long *mmio, long *irq)
{
	*mmio = slot_alloc();
	if (irq)
		*irq = slot_alloc();
	return dev_caps(SLOT_KERNEL, i, *mmio, irq ? *irq : SLOT_NONE);
}

/* One MAP of an MMIO cap: len bytes of the window at va. */
static long map_dev(long region, long mmio, uint64_t va, uint64_t len, uint32_t prot)
{
	struct region_op op = { .op = ROP_MAP, .prot = prot, .va = va, .len = len, .arg = mmio };
	long r = region_txn(region, va, va + (len ? len : DV_PG), &op, 1);
	return r < 0 ? r : (r == 1 ? 0 : op.result);
}

static uint32_t rd32(uint64_t va) { return *(volatile uint32_t *)va; }

/* The start of most tests below: the counters as they are, the first
 * virtio-mmio device (*d) and its MMIO cap (and IRQ cap, if irq is not
 * NULL) in fresh slots. 0; UTEST_SKIP with why filled when the machine
 * has no virtio-mmio device (no slot taken); or 1 with why filled. */
static int virtio_caps(struct kcounters *before, struct device_info *d, long *mm, long *irq,
		       char *why)
{
	why[0] = 0;
	settled_counters(before);
	long v = find_dev("virtio,mmio", irq != NULL, d);
	if (v < 0) {
		snprintf(why, 160, "the machine has no virtio-mmio device%s",
			 irq ? " with an interrupt the kernel drives" : "");
		return UTEST_SKIP;
	}
	long r = caps_of(v, mm, irq);
	if (r)
		snprintf(why, 160, "device caps: %ld", r);
	return r ? 1 : 0;
}

int dev_list(char *why)
{
	struct device_info d;
	long n = 0, virtio = 0;
	why[0] = 0;
	for (; n < 1000 && dev_info(n, &d) == 0; n++) {
		CK(!(d.base & (DV_PG - 1)) && d.size && !(d.size & (DV_PG - 1)),
		   "device %ld (%s) window %lx+%lx is not whole pages", n, d.compatible,
		   (unsigned long)d.base, (unsigned long)d.size);
		CK(memchr(d.compatible, 0, sizeof d.compatible) != NULL, "device %ld: no NUL", n);
		CK(strcmp(d.compatible, "riscv,plic0") && strcmp(d.compatible, "sifive,plic-1.0.0") &&
		   strcmp(d.compatible, "riscv,clint0") && strcmp(d.compatible, "sifive,clint0"),
		   "the kernel's own %s is listed", d.compatible);
		if (!strcmp(d.compatible, "virtio,mmio")) {
			virtio++;
			CK(d.flags & DEVF_RESET, "virtio-mmio device %ld without DEVF_RESET", n);
		}
	}
	if (!virtio) {
		snprintf(why, 160, "the machine has no virtio-mmio device (%ld devices listed)", n);
		return UTEST_SKIP;
	}
	long r = dev_info(n, &d);
	CK(r == -E_NOENT, "the index past the last: %ld", r);
	r = dev_info(-1, &d);
	CK(r == -E_NOENT, "index -1: %ld", r);
	r = dev_info(0, (struct device_info *)8);
	CK(r == -E_FAULT, "a bad buffer: %ld", r);
	r = sc3(SYS_DEVICE_INFO, SLOT_CONSOLE, 0, &d);
	CK(r == -E_BADCAP, "the console cap as the kernel cap: %ld", r);
out:
	return why[0] ? 1 : 0;
}

int dev_caps_all_or_nothing(char *why)
{
	struct kcounters before;
	struct device_info d;
	long mm = -1, irq = -1, taken = -1, kro = -1;
	why[0] = 0;
	settled_counters(&before);
	long v = find_dev("virtio,mmio", 1, &d);
	if (v < 0) {
		snprintf(why, 160, "the machine has no virtio-mmio device with an interrupt the kernel drives");
		return UTEST_SKIP;
	}
	mm = slot_alloc();
	irq = slot_alloc();
	taken = slot_alloc();
	CK(frame_alloc(taken) == 0, "frame_alloc");
	/* The second destination taken: neither cap appears. */
	long r = dev_caps(SLOT_KERNEL, v, mm, taken);
	CK(r == -E_EXIST, "irq dst taken: %ld", r);
	struct cap_info ci;
	CK(cap_info(mm, &ci) == -E_BADCAP, "the MMIO cap appeared though the call failed");
	r = dev_caps(SLOT_KERNEL, v, taken, irq);
	CK(r == -E_EXIST, "mmio dst taken: %ld", r);
	CK(cap_info(irq, &ci) == -E_BADCAP, "the IRQ cap appeared though the call failed");
	r = dev_caps(SLOT_KERNEL, v, mm, mm);
	CK(r == -E_EXIST && cap_info(mm, &ci) == -E_BADCAP, "one slot for both: %ld", r);
	r = dev_caps(SLOT_KERNEL, v, mm, CSPACE_MAX_SLOTS);
	CK(r == -E_BADCAP && cap_info(mm, &ci) == -E_BADCAP, "a bad irq slot: %ld", r);
	/* A destination in a chunk not added yet, the other one taken: no
	 * chunk is added either (the task's extent stays). */
	struct cap_info ti0, ti1;
	cap_info(SLOT_SELF_TASK, &ti0);
	long far = (long)ti0.badge + CSPACE_CHUNK_SLOTS;
	if (far < CSPACE_MAX_SLOTS) {
		r = dev_caps(SLOT_KERNEL, v, far, taken);
		cap_info(SLOT_SELF_TASK, &ti1);
		CK(r == -E_EXIST && ti1.badge == ti0.badge, "far slot + taken: %ld, extent %lu -> %lu",
		   r, (unsigned long)ti0.badge, (unsigned long)ti1.badge);
	}
	CK(dev_caps(SLOT_KERNEL, 100000, mm, irq) == -E_NOENT, "no such device");
	kro = mint(SLOT_KERNEL, R_READ, 0, 0);
	CK(kro >= 0, "mint the kernel cap read-only");
	CK(dev_caps(kro, v, mm, irq) == -E_PERM, "kernel cap without R_CONTROL");
	/* A device with no interrupt takes no IRQ cap. */
	struct device_info e;
	for (long i = 0; dev_info(i, &e) == 0; i++) {
		if (e.irq)
			continue;
		r = dev_caps(SLOT_KERNEL, i, mm, irq);
		CK(r == -E_NOENT && cap_info(mm, &ci) == -E_BADCAP, "irq cap of a device without one: %ld", r);
		break;
	}
	/* Both made. */
	r = dev_caps(SLOT_KERNEL, v, mm, irq);
	CK(r == 0, "device caps: %ld", r);
	CK(cap_info(mm, &ci) == 0 && ci.type == CAP_MMIO &&
	   ci.rights == (R_READ | R_WRITE | R_DMA | R_GRANT) && ci.lo == d.base &&
	   ci.hi == d.base + d.size, "MMIO cap: type %u rights %x [%lx, %lx)", ci.type, ci.rights,
	   (unsigned long)ci.lo, (unsigned long)ci.hi);
	CK(cap_info(irq, &ci) == 0 && ci.type == CAP_IRQ && ci.rights == (R_CONTROL | R_GRANT) &&
	   ci.lo == d.irq, "IRQ cap: type %u rights %x line %lu", ci.type, ci.rights,
	   (unsigned long)ci.lo);
	/* Again: copies of the same authority. */
	slot_drop(&irq);
	long mm2 = slot_alloc();
	CK(dev_caps(SLOT_KERNEL, v, mm2, SLOT_NONE) == 0, "caps made again");
	slot_drop(&mm2);
out:
	slot_drop(&mm);
	slot_drop(&irq);
	slot_drop(&taken);
	slot_drop(&kro);
	return why[0] ? 1 : counters_objs_back(&before, why);
}

int dev_map_mmio(char *why)
{
	struct kcounters before, mapped, after;
	struct device_info d;
	long mm = -1, anon = -1;
	int vc = virtio_caps(&before, &d, &mm, NULL, why);
	if (vc == UTEST_SKIP)
		return vc;
	if (vc)
		goto out;
	/* A page beside the device's keeps the leaf table through the unmap,
	 * so a frame count that moves could only be the device page's. */
	CK(pg_map_frame_with(DV_ANON, 0, 1, &anon) == 0, "map a frame beside");
	CK(map_dev(SLOT_SELF_AS, mm, DV_VA, 0, PROT_R | PROT_W) == 0, "map the window");
	CK(rd32(DV_VA) == VIRTIO_MAGIC, "magic reads %x", rd32(DV_VA));
	uint64_t kind = 0, p = page_prot(SLOT_SELF_AS, DV_VA, &kind);
	CK(kind == RK_MAPPED && (p & 7) == (PROT_R | PROT_W) && (p & QF_DEVICE) && (p & QF_NOSHARE) &&
	   !(p & QF_NOWRITE), "query of the device page: kind %lu prot %lx", kind, p);
	p = page_prot(SLOT_SELF_AS, DV_ANON, NULL);
	CK(!(p & QF_DEVICE), "a frame's page reports QF_DEVICE (%lx)", p);
	settled_counters(&mapped);
	long r = txn_one(SLOT_SELF_AS, ROP_UNMAP, 0, DV_VA, 0, NULL);
	CK(r == 0, "unmap: %ld", r);
	settled_counters(&after);
	CK(after.free_frames == mapped.free_frames && after.frame_objs == mapped.frame_objs,
	   "unmapping the device page freed frames: free %ld, objects %ld",
	   (long)(after.free_frames - mapped.free_frames),
	   (long)(after.frame_objs - mapped.frame_objs));
	/* A map that fails part way leaves nothing: frame, then a device page
	 * over it, in one transaction. */
	struct region_op two[2] = {
		{ .op = ROP_QUERY, .va = DV_VA },
		{ .op = ROP_MAP, .prot = PROT_R, .va = DV_ANON, .len = DV_PG, .arg = mm },
	};
	r = region_txn(SLOT_SELF_AS, DV_VA, DV_ANON + DV_PG, two, 2);
	CK(r == -E_EXIST && two[1].result == -E_EXIST, "device page over a frame: %ld", r);
	CK(!(page_prot(SLOT_SELF_AS, DV_ANON, NULL) & QF_DEVICE), "the frame was replaced");
	/* A device page and anonymous memory in one transaction: both land. */
	txn_one(SLOT_SELF_AS, ROP_UNMAP, 0, DV_ANON, 0, NULL);
	struct region_op both[2] = {
		{ .op = ROP_MARK, .prot = PROT_R | PROT_W, .va = DV_ANON, .len = DV_PG },
		{ .op = ROP_MAP, .prot = PROT_R, .va = DV_VA, .len = DV_PG, .arg = mm },
	};
	r = region_txn(SLOT_SELF_AS, DV_VA, DV_ANON + DV_PG, both, 2);
	CK(r == 2 && rd32(DV_VA) == VIRTIO_MAGIC, "mark and device map together: %ld", r);
	*(volatile uint64_t *)DV_ANON = 7;
out:
	txn_one(SLOT_SELF_AS, ROP_UNMAP, 0, DV_VA, 0, NULL);
	txn_one(SLOT_SELF_AS, ROP_UNMAP, 0, DV_ANON, 0, NULL);
	slot_drop(&mm);
	slot_drop(&anon);
	return why[0] ? 1 : counters_objs_back(&before, why);
}

int dev_map_refused(char *why)
{
	struct kcounters before;
	struct device_info d;
	long mm = -1, irq = -1, ro = -1, sub = -1, f = -1;
	int vc = virtio_caps(&before, &d, &mm, &irq, why);
	if (vc == UTEST_SKIP)
		return vc;
	if (vc)
		goto out;
	long r = map_dev(SLOT_SELF_AS, mm, DV_VA, d.size + DV_PG, PROT_R);
	CK(r == -E_RANGE, "a mapping beyond the window: %ld", r);
	r = map_dev(SLOT_SELF_AS, mm, DV_VA, 100, PROT_R);
	CK(r == -E_INVAL, "a length that is not whole pages: %ld", r);
	r = map_dev(SLOT_SELF_AS, mm, DV_VA, 0, PROT_R | PROT_X);
	CK(r == -E_INVAL, "an executable device mapping: %ld", r);
	r = map_dev(SLOT_SELF_AS, mm, DV_VA, 0, PROT_R | PROT_COW);
	CK(r == -E_INVAL, "a copy-on-write device mapping: %ld", r);
	r = map_dev(SLOT_SELF_AS, irq, DV_VA, 0, PROT_R);
	CK(r == -E_BADCAP, "a MAP of an IRQ cap: %ld", r);
	CK((page_prot(SLOT_SELF_AS, DV_VA, NULL) & 7) == 0, "a refused map left a page");
	/* A read-only cap: never writable, now or later. */
	ro = mint(mm, R_READ, d.base, d.base + d.size);
	CK(ro >= 0, "mint a read-only MMIO cap");
	r = map_dev(SLOT_SELF_AS, ro, DV_VA, 0, PROT_R | PROT_W);
	CK(r == -E_PERM, "a read-only cap mapped writable: %ld", r);
	CK(map_dev(SLOT_SELF_AS, ro, DV_VA, 0, PROT_R) == 0, "map the read-only cap");
	uint64_t p = page_prot(SLOT_SELF_AS, DV_VA, NULL);
	CK((p & QF_NOWRITE) && (p & QF_DEVICE), "read-only device page reports %lx", p);
	r = txn_one(SLOT_SELF_AS, ROP_PROTECT, PROT_R | PROT_W, DV_VA, 0, NULL);
	CK(r == -E_PERM, "PROTECT of a read-only device page to RW: %ld", r);
	r = txn_one(SLOT_SELF_AS, ROP_PROTECT, PROT_R | PROT_X, DV_VA, 0, NULL);
	CK(r == -E_INVAL, "PROTECT of a device page to executable: %ld", r);
	CK((page_prot(SLOT_SELF_AS, DV_VA, NULL) & 7) == PROT_R, "a refused PROTECT changed the page");
	CK(rd32(DV_VA) == VIRTIO_MAGIC, "magic through the read-only cap");
	/* Minting: fewer rights only, a sub-window only in whole pages. */
	CK(mint(ro, R_READ | R_WRITE, d.base, d.base + d.size) < 0, "minted R_WRITE back");
	CK(mint(mm, R_READ, d.base + 8, d.base + d.size) < 0, "minted an unaligned sub-window");
	CK(mint(mm, R_READ, d.base, d.base + d.size + DV_PG) < 0, "minted past the window");
	CK(mint(irq, R_CONTROL | R_DMA, 0, 0) < 0, "minted an IRQ cap more rights");
	sub = mint(irq, R_CONTROL, 0, 0);
	CK(sub >= 0, "mint an IRQ cap without R_GRANT");
	struct cap_info ci;
	CK(cap_info(sub, &ci) == 0 && ci.type == CAP_IRQ && ci.rights == R_CONTROL && ci.lo == d.irq,
	   "minted IRQ cap: type %u rights %x line %lu", ci.type, ci.rights, (unsigned long)ci.lo);
	/* EVICT and SUPPLY refuse device pages. */
	f = slot_alloc();
	r = txn_one(SLOT_SELF_AS, ROP_EVICT, 0, DV_VA, f, NULL);
	CK(r == -E_INVAL, "EVICT of a device page: %ld", r);
	CK(cap_info(f, &ci) == -E_BADCAP, "EVICT of a device page made a cap");
	r = region_supply(SLOT_SELF_AS, DV_ANON, SLOT_SELF_AS, DV_VA, 1, PROT_R);
	CK(r == -E_INVAL, "SUPPLY from a device page: %ld", r);
	CK(page_prot(SLOT_SELF_AS, DV_VA, NULL) & QF_DEVICE, "a refused SUPPLY moved the device page");
	CK((page_prot(SLOT_SELF_AS, DV_ANON, NULL) & 7) == 0, "a refused SUPPLY mapped the destination");
out:
	txn_one(SLOT_SELF_AS, ROP_UNMAP, 0, DV_VA, 0, NULL);
	slot_drop(&mm);
	slot_drop(&irq);
	slot_drop(&ro);
	slot_drop(&sub);
	slot_drop(&f);
	return why[0] ? 1 : counters_objs_back(&before, why);
}

int dev_clone(char *why)
{
	struct kcounters before;
	struct device_info d;
	long mm = -1, task = -1, rc = -1;
	int vc = virtio_caps(&before, &d, &mm, NULL, why);
	if (vc == UTEST_SKIP)
		return vc;
	if (vc)
		goto out;
	CK(map_dev(SLOT_SELF_AS, mm, DV_VA, 0, PROT_R | PROT_W) == 0, "map the window");
	CK(mem_reserve(DV_ANON, DV_PG) == 0, "reserve beside it");
	*(volatile uint64_t *)DV_ANON = 0xc0de;
	CK(empty_child(&task, &rc) == 0, "child");
	struct clone_stats st;
	long r = sc6(SYS_REGION_CLONE, SLOT_SELF_AS, rc, DV_VA, DV_ANON + DV_PG, (long)&st, 0);
	CK(r == 0 && st.frames == 1, "clone over a device page: %ld, %lu frames", r, st.frames);
	uint64_t kind = 9;
	page_prot(rc, DV_VA, &kind);
	CK(kind == RK_INVALID, "the child got kind %lu at the device page", kind);
	page_prot(rc, DV_ANON, &kind);
	CK(kind == RK_COW, "the child's anonymous page is kind %lu", kind);
	uint64_t p = page_prot(SLOT_SELF_AS, DV_VA, &kind);
	CK(kind == RK_MAPPED && (p & PROT_W) && (p & QF_DEVICE), "our device page became kind %lu prot %lx",
	   kind, p);
	page_prot(SLOT_SELF_AS, DV_ANON, &kind);
	CK(kind == RK_COW, "our anonymous page is kind %lu after the clone", kind);
	CK(rd32(DV_VA) == VIRTIO_MAGIC, "magic after the clone");
out:
	txn_one(SLOT_SELF_AS, ROP_UNMAP, 0, DV_VA, 0, NULL);
	txn_one(SLOT_SELF_AS, ROP_UNMAP, 0, DV_ANON, 0, NULL);
	slot_drop(&mm);
	slot_drop(&rc);
	slot_drop(&task);
	return why[0] ? 1 : counters_objs_back(&before, why);
}

int dev_dma_addr(char *why)
{
	struct kcounters before;
	struct device_info d;
	long mm = -1, nodma = -1, f = -1, g = -1, irq = -1;
	int vc = virtio_caps(&before, &d, &mm, &irq, why);
	if (vc == UTEST_SKIP)
		return vc;
	if (vc)
		goto out;
	f = slot_alloc();
	g = slot_alloc();
	CK(frame_alloc(f) == 0 && frame_alloc(g) == 0, "frames");
	nodma = mint(mm, R_READ | R_WRITE | R_GRANT, d.base, d.base + d.size);
	CK(nodma >= 0, "mint without R_DMA");
	long r = dma_addr(nodma, f);
	CK(r == -E_PERM, "without R_DMA: %ld", r);
	r = dma_addr(mm, mm);
	CK(r == -E_BADCAP, "an MMIO cap as the frame: %ld", r);
	r = dma_addr(f, f);
	CK(r == -E_BADCAP, "a frame cap as the MMIO cap: %ld", r);
	r = dma_addr(irq, f);
	CK(r == -E_BADCAP, "an IRQ cap as the MMIO cap: %ld", r);
	r = dma_addr(nodma, SLOT_SELF_AS);
	CK(r == -E_BADCAP, "no R_DMA and a region cap as the frame: %ld", r);
	long a = dma_addr(mm, f), b = dma_addr(mm, g);
	CK(a > 0 && b > 0 && !(a & (DV_PG - 1)) && !(b & (DV_PG - 1)) && a != b,
	   "addresses %lx and %lx", a, b);
	CK(dma_addr(mm, f) == a, "the same frame twice: another address");
	CK((uint64_t)a - d.base >= d.size, "a frame inside the device window");
	/* The frame is as it was: map it and use it. */
	CK(txn_one(SLOT_SELF_AS, ROP_MAP, PROT_R | PROT_W, DV_VA, f, NULL) == 0, "map the frame");
	*(volatile uint64_t *)DV_VA = 0xd3a;
	CK(*(volatile uint64_t *)DV_VA == 0xd3a && !(page_prot(SLOT_SELF_AS, DV_VA, NULL) & QF_DEVICE),
	   "the frame after SYS_DMA_ADDR");
out:
	txn_one(SLOT_SELF_AS, ROP_UNMAP, 0, DV_VA, 0, NULL);
	slot_drop(&mm);
	slot_drop(&irq);
	slot_drop(&nodma);
	slot_drop(&f);
	slot_drop(&g);
	return why[0] ? 1 : counters_objs_back(&before, why);
}

/* The child of dev_reset_on_death: the driver. Maps the MMIO cap it was
 * given, sets the device's Status (ACKNOWLEDGE | DRIVER) and exits with
 * what it reads back, keeping the cap. */
int dev_driver_role(void)
{
	if (given_cap_type() != CAP_MMIO)
		return 90;
	struct region_op op = { .op = ROP_MAP, .prot = PROT_R | PROT_W, .va = DV_VA, .len = DV_PG,
				.arg = SLOT_GIVEN };
	if (region_txn(SLOT_SELF_AS, DV_VA, DV_VA + DV_PG, &op, 1) != 1)
		return 91;
	if (rd32(DV_VA) != VIRTIO_MAGIC)
		return 92;
	*(volatile uint32_t *)(DV_VA + VIRTIO_STATUS) = 3;
	return (int)rd32(DV_VA + VIRTIO_STATUS);
}

/* A driver that dies holding an MMIO cap with R_DMA leaves its device
 * reset (Status 0); one whose cap has no R_DMA leaves it as it was. Needs
 * a device behind a virtio-mmio slot (scripts/run --disk): an empty slot
 * ignores the Status write. A cap without R_GRANT does not reach the
 * child at all. */
int dev_reset_on_death(char *why)
{
	struct kcounters before;
	struct device_info d;
	long mm = -1, nodma = -1, nogrant = -1, idx = -1;
	why[0] = 0;
	settled_counters(&before);
	for (long i = 0; dev_info(i, &d) == 0; i++) {
		if (strcmp(d.compatible, "virtio,mmio"))
			continue;
		long m = slot_alloc();
		if (dev_caps(SLOT_KERNEL, i, m, SLOT_NONE) == 0 &&
		    map_dev(SLOT_SELF_AS, m, DV_VA, DV_PG, PROT_R) == 0) {
			uint32_t id = rd32(DV_VA + VIRTIO_DEVICE_ID);
			txn_one(SLOT_SELF_AS, ROP_UNMAP, 0, DV_VA, 0, NULL);
			if (id) {
				idx = i;
				mm = m;
				break;
			}
		}
		slot_drop(&m);
	}
	if (idx < 0) {
		snprintf(why, 160, "no device behind any virtio-mmio slot (boot with --disk)");
		return UTEST_SKIP;
	}
	nogrant = mint(mm, R_READ | R_WRITE | R_DMA, d.base, d.base + d.size);
	CK(nogrant >= 0, "mint without R_GRANT");
	long st = -1;
	long r = spawn_wait(ROLE_DEV_DRIVER, QUOTA(SELF_CHILD_FRAMES + THREAD_KSTACK_FRAMES, 1, 0, 0), nogrant, &st);
	CK(r == -E_PERM, "spawn handing over an MMIO cap without R_GRANT: %ld", r);
	/* Without R_DMA: the device stays as the driver left it. */
	nodma = mint(mm, R_READ | R_WRITE | R_GRANT, d.base, d.base + d.size);
	CK(nodma >= 0, "mint without R_DMA");
	r = spawn_wait(ROLE_DEV_DRIVER, QUOTA(SELF_CHILD_FRAMES + THREAD_KSTACK_FRAMES, 1, 0, 0), nodma, &st);
	CK(r == 0 && st == 3, "driver without R_DMA: spawn %ld, status %ld", r, st);
	CK(map_dev(SLOT_SELF_AS, mm, DV_VA, DV_PG, PROT_R | PROT_W) == 0, "map the window");
	CK(rd32(DV_VA + VIRTIO_STATUS) == 3, "status %u after a driver without R_DMA died",
	   rd32(DV_VA + VIRTIO_STATUS));
	*(volatile uint32_t *)(DV_VA + VIRTIO_STATUS) = 0;
	/* With R_DMA: reset at its death. */
	r = spawn_wait(ROLE_DEV_DRIVER, QUOTA(SELF_CHILD_FRAMES + THREAD_KSTACK_FRAMES, 1, 0, 0), mm, &st);
	CK(r == 0 && st == 3, "driver with R_DMA: spawn %ld, status %ld", r, st);
	CK(rd32(DV_VA + VIRTIO_STATUS) == 0, "status %u after a driver with R_DMA died",
	   rd32(DV_VA + VIRTIO_STATUS));
out:
	if (mm >= 0 && page_prot(SLOT_SELF_AS, DV_VA, NULL) & QF_DEVICE)
		*(volatile uint32_t *)(DV_VA + VIRTIO_STATUS) = 0;
	txn_one(SLOT_SELF_AS, ROP_UNMAP, 0, DV_VA, 0, NULL);
	slot_drop(&mm);
	slot_drop(&nodma);
	slot_drop(&nogrant);
	return why[0] ? 1 : counters_objs_back(&before, why);
}
