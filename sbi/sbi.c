/* BASE probe and the TIME, IPI, RFENCE, HSM and SRST extensions. */
#include "sbi.h"
#include "sbi_call.h"

struct sbi_info sbi_info;

struct sbiret sbi_get_spec_version(void)
{
	return sbi_ecall(SBI_EXT_BASE, 0, 0, 0, 0, 0, 0);
}

struct sbiret sbi_probe_extension(long eid)
{
	return sbi_ecall(SBI_EXT_BASE, 3, (unsigned long)eid, 0, 0, 0, 0);
}

static int probe(long eid)
{
	struct sbiret r = sbi_probe_extension(eid);
	return r.error == SBI_SUCCESS && r.value != 0;
}

long sbi_init(void)
{
	struct sbiret r = sbi_get_spec_version();
	if (r.error)
		return r.error;
	sbi_info.spec_version = r.value;
	r = sbi_ecall(SBI_EXT_BASE, 1, 0, 0, 0, 0, 0);
	sbi_info.impl_id = r.error ? -1 : r.value;
	r = sbi_ecall(SBI_EXT_BASE, 2, 0, 0, 0, 0, 0);
	sbi_info.impl_version = r.error ? -1 : r.value;
	sbi_info.has_time = probe(SBI_EXT_TIME);
	sbi_info.has_ipi = probe(SBI_EXT_IPI);
	sbi_info.has_rfence = probe(SBI_EXT_RFENCE);
	sbi_info.has_hsm = probe(SBI_EXT_HSM);
	sbi_info.has_srst = probe(SBI_EXT_SRST);
	sbi_info.has_dbcn = probe(SBI_EXT_DBCN);
	return SBI_SUCCESS;
}

struct sbiret sbi_set_timer(uint64_t stime)
{
	if (!sbi_info.has_time)
		return (struct sbiret){ SBI_ERR_NOT_SUPPORTED, 0 };
	return sbi_ecall(SBI_EXT_TIME, 0, stime, 0, 0, 0, 0);
}

struct sbiret sbi_send_ipi(unsigned long hart_mask, unsigned long hart_mask_base)
{
	if (!sbi_info.has_ipi)
		return (struct sbiret){ SBI_ERR_NOT_SUPPORTED, 0 };
	return sbi_ecall(SBI_EXT_IPI, 0, hart_mask, hart_mask_base, 0, 0, 0);
}

struct sbiret sbi_remote_fence_i(unsigned long hart_mask, unsigned long base)
{
	if (!sbi_info.has_rfence)
		return (struct sbiret){ SBI_ERR_NOT_SUPPORTED, 0 };
	return sbi_ecall(SBI_EXT_RFENCE, 0, hart_mask, base, 0, 0, 0);
}

struct sbiret sbi_remote_sfence_vma(unsigned long hart_mask, unsigned long base,
				    unsigned long start, unsigned long size)
{
	if (!sbi_info.has_rfence)
		return (struct sbiret){ SBI_ERR_NOT_SUPPORTED, 0 };
	return sbi_ecall(SBI_EXT_RFENCE, 1, hart_mask, base, start, size, 0);
}

struct sbiret sbi_remote_sfence_vma_asid(unsigned long hart_mask, unsigned long base,
					 unsigned long start, unsigned long size,
					 unsigned long asid)
{
	if (!sbi_info.has_rfence)
		return (struct sbiret){ SBI_ERR_NOT_SUPPORTED, 0 };
	return sbi_ecall(SBI_EXT_RFENCE, 2, hart_mask, base, start, size, asid);
}

struct sbiret sbi_hart_start(unsigned long hartid, unsigned long start_pa,
			     unsigned long opaque)
{
	if (!sbi_info.has_hsm)
		return (struct sbiret){ SBI_ERR_NOT_SUPPORTED, 0 };
	return sbi_ecall(SBI_EXT_HSM, 0, hartid, start_pa, opaque, 0, 0);
}

struct sbiret sbi_hart_stop(void)
{
	if (!sbi_info.has_hsm)
		return (struct sbiret){ SBI_ERR_NOT_SUPPORTED, 0 };
	return sbi_ecall(SBI_EXT_HSM, 1, 0, 0, 0, 0, 0);
}

struct sbiret sbi_hart_get_status(unsigned long hartid)
{
	if (!sbi_info.has_hsm)
		return (struct sbiret){ SBI_ERR_NOT_SUPPORTED, 0 };
	return sbi_ecall(SBI_EXT_HSM, 2, hartid, 0, 0, 0, 0);
}

struct sbiret sbi_system_reset(uint32_t type, uint32_t reason)
{
	if (!sbi_info.has_srst)
		return (struct sbiret){ SBI_ERR_NOT_SUPPORTED, 0 };
	return sbi_ecall(SBI_EXT_SRST, 0, type, reason, 0, 0, 0);
}
