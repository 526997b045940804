/* SBI calls (spec v0.2+ calling convention, legacy console as fallback).
 * Every call returns the firmware's error; callers decide what it means. */
#ifndef SBI_SBI_H
#define SBI_SBI_H

#include <stdint.h>
#include <stddef.h>

struct sbiret {
	long error;
	long value;
};

#define SBI_SUCCESS                0
#define SBI_ERR_FAILED            -1
#define SBI_ERR_NOT_SUPPORTED     -2
#define SBI_ERR_INVALID_PARAM     -3
#define SBI_ERR_DENIED            -4
#define SBI_ERR_INVALID_ADDRESS   -5
#define SBI_ERR_ALREADY_AVAILABLE -6
#define SBI_ERR_ALREADY_STARTED   -7
#define SBI_ERR_ALREADY_STOPPED   -8

#define SBI_EXT_LEGACY_PUTCHAR 0x01
#define SBI_EXT_LEGACY_GETCHAR 0x02
#define SBI_EXT_BASE   0x10
#define SBI_EXT_TIME   0x54494D45
#define SBI_EXT_IPI    0x735049
#define SBI_EXT_RFENCE 0x52464E43
#define SBI_EXT_HSM    0x48534D
#define SBI_EXT_SRST   0x53525354
#define SBI_EXT_DBCN   0x4442434E

#define SBI_HSM_STARTED        0
#define SBI_HSM_STOPPED        1
#define SBI_HSM_START_PENDING  2
#define SBI_HSM_STOP_PENDING   3

#define SBI_SRST_SHUTDOWN      0
#define SBI_SRST_COLD_REBOOT   1
#define SBI_SRST_REASON_NONE   0
#define SBI_SRST_REASON_FAIL   1

/* Which extensions BASE reported; filled by sbi_init. */
struct sbi_info {
	long spec_version;
	long impl_id;
	long impl_version;
	int has_time, has_ipi, has_rfence, has_hsm, has_srst, has_dbcn;
};
extern struct sbi_info sbi_info;

/* Probe the firmware (BASE). Returns 0, or the SBI error if BASE itself
 * fails (then only the legacy console is used). */
long sbi_init(void);

/* BASE */
struct sbiret sbi_get_spec_version(void);
struct sbiret sbi_probe_extension(long eid);

/* TIME: program this hart's next timer event at absolute time `stime`. */
struct sbiret sbi_set_timer(uint64_t stime);

/* IPI: hart_mask bit i selects hart id hart_mask_base + i. */
struct sbiret sbi_send_ipi(unsigned long hart_mask, unsigned long hart_mask_base);

/* RFENCE */
struct sbiret sbi_remote_fence_i(unsigned long hart_mask, unsigned long base);
struct sbiret sbi_remote_sfence_vma(unsigned long hart_mask, unsigned long base,
				    unsigned long start, unsigned long size);
struct sbiret sbi_remote_sfence_vma_asid(unsigned long hart_mask, unsigned long base,
					 unsigned long start, unsigned long size,
					 unsigned long asid);

/* HSM */
struct sbiret sbi_hart_start(unsigned long hartid, unsigned long start_pa,
			     unsigned long opaque);
struct sbiret sbi_hart_stop(void);
struct sbiret sbi_hart_get_status(unsigned long hartid);

/* SRST: does not return on success. */
struct sbiret sbi_system_reset(uint32_t type, uint32_t reason);

/* Console: DBCN when the firmware has it, legacy putchar/getchar otherwise.
 * sbi_console_write writes all of buf (kernel VA, image or direct map) or
 * returns the first SBI error. sbi_console_getc returns a byte or -1 if none
 * is waiting. */
long sbi_console_putc(char c);
long sbi_console_write(const char *buf, size_t len);
int sbi_console_getc(void);

#endif
