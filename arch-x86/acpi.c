/* The ACPI tables boot reads (acpi.h): each address checked against the
 * window, each length against its table, before a byte is read. */
#include <patina/errno.h>
#include "acpi.h"
#include "kstring.h"

#define RSDP_V1_LEN    20
#define RSDP_V2_LEN    36
#define RSDP_MAX_LEN   4096

const uint8_t *acpi_map(const struct acpi_window *w, uint64_t pa, uint64_t n)
{
	if (pa > w->size || w->size - pa < n)
		return NULL;
	return (const uint8_t *)(w->base + (uintptr_t)pa);
}

/* Do the n bytes at p sum to 0 (mod 256), as every ACPI checksum asks? */
static bool sums_to_zero(const uint8_t *p, uint32_t n)
{
	uint8_t s = 0;
	for (uint32_t i = 0; i < n; i++)
		s = (uint8_t)(s + p[i]);
	return s == 0;
}

static bool rsdp_at(const uint8_t *p)
{
	return !memcmp(p, "RSD PTR ", 8) && sums_to_zero(p, RSDP_V1_LEN);
}

/* Scan [lo, hi) on 16-byte boundaries for an RSDP. */
static int scan_rsdp(const struct acpi_window *w, uint64_t lo, uint64_t hi, uint64_t *pa)
{
	const uint8_t *p = acpi_map(w, lo, hi - lo);
	if (!p)
		return -E_NOENT;
	for (uint64_t off = 0; off + RSDP_V1_LEN <= hi - lo; off += 16)
		if (rsdp_at(p + off)) {
			*pa = lo + off;
			return 0;
		}
	return -E_NOENT;
}

int acpi_find_rsdp(const struct acpi_window *w, uint64_t *pa)
{
	const uint8_t *seg = acpi_map(w, 0x40e, 2);
	if (seg) {
		uint64_t ebda = (uint64_t)acpi_le16(seg) << 4;
		/* the EBDA lives just below the VGA hole, when there is one */
		if (ebda >= 0x80000 && ebda < 0xa0000 && !scan_rsdp(w, ebda, ebda + 1024, pa))
			return 0;
	}
	return scan_rsdp(w, 0xe0000, 0x100000, pa);
}

static int refuse(const char **why, const char *reason)
{
	*why = reason;
	return -E_INVAL;
}

int acpi_table_len(const struct acpi_window *w, uint64_t pa, uint32_t *len)
{
	const uint8_t *h = acpi_map(w, pa, ACPI_SDT_HEADER);
	if (!h)
		return -E_INVAL;
	uint32_t n = acpi_le32(h + 4);
	if (n < ACPI_SDT_HEADER || n > ACPI_TABLE_MAX || !acpi_map(w, pa, n))
		return -E_INVAL;
	*len = n;
	return 0;
}

int acpi_table_check(const struct acpi_window *w, uint64_t pa, const char *sig,
		     const uint8_t **t, uint32_t *len, const char **why)
{
	const uint8_t *h = acpi_map(w, pa, ACPI_SDT_HEADER);
	if (!h)
		return refuse(why, "ACPI table header outside memory");
	if (memcmp(h, sig, 4))
		return refuse(why, "ACPI table signature does not match");
	uint32_t n;
	if (acpi_table_len(w, pa, &n))
		return refuse(why, "ACPI table length out of range or past memory");
	if (!sums_to_zero(h, n))
		return refuse(why, "ACPI table checksum bad");
	*t = h;
	*len = n;
	return 0;
}

int acpi_root_open(const struct acpi_window *w, uint64_t rsdp_pa, struct acpi_root *r,
		   const char **why)
{
	const uint8_t *p = acpi_map(w, rsdp_pa, RSDP_V1_LEN);
	if (!p)
		return refuse(why, "RSDP outside memory");
	if (memcmp(p, "RSD PTR ", 8))
		return refuse(why, "RSDP signature bad");
	if (!sums_to_zero(p, RSDP_V1_LEN))
		return refuse(why, "RSDP checksum bad");
	uint32_t rlen = RSDP_V1_LEN;
	uint64_t sdt = acpi_le32(p + 16);
	bool x = false;
	if (p[15] >= 2) {
		const uint8_t *q = acpi_map(w, rsdp_pa, RSDP_V2_LEN);
		if (!q)
			return refuse(why, "RSDP outside memory");
		rlen = acpi_le32(q + 20);
		if (rlen < RSDP_V2_LEN || rlen > RSDP_MAX_LEN || !acpi_map(w, rsdp_pa, rlen))
			return refuse(why, "RSDP length out of range");
		if (!sums_to_zero(q, rlen))
			return refuse(why, "RSDP extended checksum bad");
		if (acpi_le64(q + 24)) {
			sdt = acpi_le64(q + 24);
			x = true;
		}
	}
	const uint8_t *t;
	uint32_t tlen;
	if (acpi_table_check(w, sdt, x ? "XSDT" : "RSDT", &t, &tlen, why))
		return -E_INVAL;
	uint32_t esz = x ? 8 : 4;
	if ((tlen - ACPI_SDT_HEADER) % esz)
		return refuse(why, "ACPI root table length not a whole number of entries");
	r->rsdp_pa = rsdp_pa;
	r->rsdp_len = rlen;
	r->sdt_pa = sdt;
	r->sdt_len = tlen;
	r->sdt = t;
	r->xsdt = x;
	r->nentries = (tlen - ACPI_SDT_HEADER) / esz;
	return 0;
}

uint64_t acpi_root_entry(const struct acpi_root *r, uint32_t i)
{
	const uint8_t *e = r->sdt + ACPI_SDT_HEADER;
	return r->xsdt ? acpi_le64(e + 8 * i) : acpi_le32(e + 4 * i);
}

int acpi_find_table(const struct acpi_window *w, const struct acpi_root *r, const char *sig,
		    const uint8_t **t, uint32_t *len, uint64_t *pa, const char **why)
{
	for (uint32_t i = 0; i < r->nentries; i++) {
		uint64_t e = acpi_root_entry(r, i);
		const uint8_t *h = acpi_map(w, e, 4);
		if (!h || memcmp(h, sig, 4))
			continue;
		*pa = e;
		return acpi_table_check(w, e, sig, t, len, why);
	}
	return -E_NOENT;
}

int acpi_madt_next_cpu(const uint8_t *madt, uint32_t len, uint32_t *pos, struct acpi_cpu *c,
		       const char **why)
{
	if (len < ACPI_MADT_MIN)
		return refuse(why, "MADT shorter than its fixed fields");
	/* online-capable was a reserved bit before MADT revision 5 */
	bool has_oc = madt[8] >= 5;
	uint32_t off = *pos < ACPI_MADT_MIN ? ACPI_MADT_MIN : *pos;
	while (off < len) {
		if (len - off < 2)
			return refuse(why, "MADT entry header past the table");
		uint32_t type = madt[off], elen = madt[off + 1];
		if (elen < 2)
			return refuse(why, "MADT entry shorter than its header");
		if (elen > len - off)
			return refuse(why, "MADT entry runs past the table");
		const uint8_t *e = madt + off;
		off += elen;
		uint32_t flags;
		if (type == MADT_LOCAL_APIC) {
			if (elen < 8)
				return refuse(why, "MADT local APIC entry too short");
			c->uid = e[2];
			c->apic_id = e[3];
			flags = acpi_le32(e + 4);
			c->x2apic = false;
		} else if (type == MADT_LOCAL_X2APIC) {
			if (elen < 16)
				return refuse(why, "MADT local x2APIC entry too short");
			c->apic_id = acpi_le32(e + 4);
			flags = acpi_le32(e + 8);
			c->uid = acpi_le32(e + 12);
			c->x2apic = true;
		} else {
			continue;
		}
		c->enabled = flags & 1;
		c->online_capable = has_oc && (flags & 2);
		*pos = off;
		return 1;
	}
	*pos = off;
	return 0;
}
