/* Reading the firmware's ACPI tables at boot: the RSDP, the root table
 * (XSDT, or RSDT) and the MADT's processor entries (ACPI 6.x, sections
 * 5.2.5-5.2.12). Every byte is untrusted: each read is bounded by a table
 * length, each length by ACPI_TABLE_MAX, and each address must lie inside
 * the caller's window of physical memory. */
#ifndef ARCH_X86_ACPI_H
#define ARCH_X86_ACPI_H

#include <stdbool.h>
#include <stdint.h>

/* Physical memory as the caller can read it: physical address pa (for n
 * bytes) is at base + pa when pa + n <= size. Under the boot identity map
 * base is 0; a host test points base at a buffer. */
struct acpi_window {
	uintptr_t base;
	uint64_t size;
};

#define ACPI_SDT_HEADER   36          /* signature .. creator revision */
#define ACPI_TABLE_MAX    (1u << 20)  /* longest table this code sums or keeps */
#define ACPI_MADT_MIN     44          /* header, local APIC address, flags */

/* The n bytes at physical pa, or NULL when they are not all inside w. */
const uint8_t *acpi_map(const struct acpi_window *w, uint64_t pa, uint64_t n);

/* Little-endian loads at any alignment (tables pack 64-bit fields at
 * 4-byte offsets). */
static inline uint32_t acpi_le16(const uint8_t *p) { return p[0] | (uint32_t)p[1] << 8; }
static inline uint32_t acpi_le32(const uint8_t *p)
{
	return p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static inline uint64_t acpi_le64(const uint8_t *p)
{
	return acpi_le32(p) | (uint64_t)acpi_le32(p + 4) << 32;
}

/* The root of the tables, checked. */
struct acpi_root {
	uint64_t rsdp_pa;
	uint32_t rsdp_len;          /* 20 (revision 0) or its length field */
	uint64_t sdt_pa;            /* the XSDT, or the RSDT */
	uint32_t sdt_len;
	const uint8_t *sdt;
	bool xsdt;                  /* 8-byte entries, else 4-byte */
	uint32_t nentries;
};

/* Find the RSDP the legacy-BIOS way: on a 16-byte boundary in the first
 * KiB of the EBDA (segment at 0x40e) or in 0xe0000..0xfffff, with its
 * signature and a good 20-byte checksum. Returns 0 and *pa, or -E_NOENT. */
int acpi_find_rsdp(const struct acpi_window *w, uint64_t *pa);

/* Check the RSDP at rsdp_pa ("RSD PTR ", checksum over 20 bytes, and for
 * revision 2 or later the extended checksum over its length) and the root
 * table it names: the XSDT when revision >= 2 gives a nonzero one, else
 * the RSDT (signature, length in [36, ACPI_TABLE_MAX] and inside w, a
 * whole number of entries, checksum). Returns 0 and *r, or -E_INVAL with
 * *why naming the defect (a constant string). */
int acpi_root_open(const struct acpi_window *w, uint64_t rsdp_pa, struct acpi_root *r,
		   const char **why);

/* The physical address of root entry i (i < r->nentries). */
uint64_t acpi_root_entry(const struct acpi_root *r, uint32_t i);

/* The length field of the table at pa, when its header is inside w and
 * the length lies in [36, ACPI_TABLE_MAX] with the whole table inside w.
 * No checksum: for keeping tables one does not read. Returns 0 and *len,
 * or -E_INVAL. */
int acpi_table_len(const struct acpi_window *w, uint64_t pa, uint32_t *len);

/* The table at pa, checked: inside w, signature sig (4 characters),
 * length in [36, ACPI_TABLE_MAX], bytes summing to 0. Returns 0 with *t
 * and *len, or -E_INVAL with *why. */
int acpi_table_check(const struct acpi_window *w, uint64_t pa, const char *sig,
		     const uint8_t **t, uint32_t *len, const char **why);

/* The first table the root lists with signature sig, checked as
 * acpi_table_check does. Entries whose header lies outside w are passed
 * over. Returns 0 with *t, *len and *pa, -E_NOENT if none has sig, or
 * -E_INVAL with *why when the one found is malformed. */
int acpi_find_table(const struct acpi_window *w, const struct acpi_root *r, const char *sig,
		    const uint8_t **t, uint32_t *len, uint64_t *pa, const char **why);

/* A processor the MADT lists. */
struct acpi_cpu {
	uint32_t apic_id;
	uint32_t uid;               /* ACPI processor UID */
	bool enabled;               /* flags bit 0 */
	bool online_capable;        /* flags bit 1 (MADT revision 5 and later) */
	bool x2apic;                /* from a type 9 entry */
};

#define MADT_LOCAL_APIC    0
#define MADT_LOCAL_X2APIC  9

/* The next processor entry (local APIC, type 0, or local x2APIC, type 9)
 * of the MADT madt[0..len), a table acpi_table_check passed (len >= 44 is
 * checked here too). *pos is 0 before the first call and is advanced past
 * each entry. Returns 1 with *c, 0 after the last entry, or -E_INVAL with
 * *why for an entry shorter than 2 bytes or than its type's layout, or
 * one that runs past len. */
int acpi_madt_next_cpu(const uint8_t *madt, uint32_t len, uint32_t *pos, struct acpi_cpu *c,
		       const char **why);

#endif
