/* Per-hart memory: nothing is reserved in the kernel image for harts the
 * machine does not have. The boot hart starts on a struct cpu in the
 * image; harts_init sizes everything from the device tree and moves it. */
#include <patina/errno.h>
#include "harts.h"
#include "boot.h"
#include "cpu.h"
#include "fdt.h"
#include "frame.h"
#include "kernel.h"
#include "kstring.h"
#include "printk.h"
#include "arch.h"

static uint64_t boot_snap[1];
static uint32_t boot_id[1];
static struct cpu boot_cpu = { .rcu_snap = boot_snap };
struct cpu *cpus = &boot_cpu;
uint32_t harts_max = 1;
uint32_t *hart_ids = boot_id;

/* n zeroed contiguous bytes from the frame allocator, or NULL. */
static void *alloc_bytes(size_t n)
{
	paddr_t pa;
	if (n == 0 || frame_alloc_run((n + FRAME_SIZE - 1) / FRAME_SIZE, &pa))
		return NULL;
	return phys_to_virt(pa);
}

void *harts_alloc(size_t each)
{
	return alloc_bytes(each * harts_max);
}

/* Usable harts in bi (status okay, with an MMU), capped at HARTS_MAX. */
static uint32_t count_usable(const struct boot_info *bi, uint32_t boot_hart, int *has_boot)
{
	uint32_t n = 0;
	*has_boot = 0;
	for (int i = 0; i < bi->ncpus; i++) {
		const struct bi_cpu *c = &bi->cpus[i];
		if (!c->okay || !c->has_mmu)
			continue;
		if (c->hartid == boot_hart)
			*has_boot = 1;
		n++;
	}
	if (n > HARTS_MAX) {
		printk("patina: %u usable harts, using %u\n", n, HARTS_MAX);
		n = HARTS_MAX;
	}
	return n;
}

int harts_init(struct boot_info *bi)
{
	int counted = bi->ncpus;
	struct bi_cpu *bc = alloc_bytes(sizeof *bc * (size_t)(counted ? counted : 1));
	if (!bc)
		return -E_NOMEM;
	bi->cpus = bc;
	bi->cpus_cap = counted;
	int err = fdt_scan(phys_to_virt(bi->dtb_pa), bi->dtb_pa, bi);
	if (err)
		return err;
	if (bi->ncpus != counted)
		return -E_INVAL;
	int has_boot;
	uint32_t n = count_usable(bi, boot_cpu.hartid, &has_boot);
	if (!has_boot)
		return -E_INVAL;

	struct cpu *arr = alloc_bytes(sizeof *arr * n);
	uint64_t *snaps = alloc_bytes(sizeof *snaps * n * n);
	uint32_t *ids = alloc_bytes(sizeof *ids * n);
	if (!arr || !snaps || !ids)
		return -E_NOMEM;
	for (uint32_t i = 0; i < n; i++)
		arr[i].rcu_snap = snaps + (size_t)i * n;
	/* Move the boot hart: a copy with its own snapshot array, then the per-hart pointer. */
	uint64_t *snap0 = arr[0].rcu_snap;
	arr[0] = boot_cpu;
	arr[0].rcu_snap = snap0;
	ids[0] = boot_cpu.hartid;
	arch_cpu_set(&arr[0]);
	cpus = arr;
	hart_ids = ids;
	harts_max = n;
	boot_kernel_as_token = boot_config.kernel_as_token;
	return mk_harts_init();
}
