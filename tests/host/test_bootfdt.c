/* test_bootfdt: the x86-64 boot DTB (arch-x86/bootfdt.c) from made-up PVH
 * start info, memory maps and ACPI tables placed in a buffer that stands
 * for physical memory. Each accepted machine's DTB must pass the kernel's
 * own fdt_validate and fdt_scan and say what the machine is (memory,
 * processors, timebase, bootargs, what memmap.c must keep from the frame
 * allocator); each refused one must return -E_INVAL (-E_NOMEM for a small
 * buffer) with a reason and leave no DTB magic in the buffer. Prints a line
 * per case and "test_bootfdt: N cases, F failed"; exit 0 only when F is 0.
 *
 * test_bootfdt --scan FILE: validate and scan the DTB in FILE as boot
 * does and print what boot_info holds, a fact a line (pvh_probe.py reads
 * them from the DTB a real QEMU PVH boot gave); exit 1 if it is refused. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <patina/errno.h>
#include "bootfdt.h"
#include "fdt.h"
#include "memmap.h"

void kshim_init(void);   /* kshim.c: the kernel image's place for memmap.c */

#define MEM_SIZE    (4u << 20)      /* the made-up physical memory: 4 MiB */
#define SI_PA       0x9000u
#define MEMMAP_PA   0x9100u
#define CMDLINE_PA  0x7000u
#define MODLIST_PA  0x8000u
#define RSDP_PA     0xf0000u
#define XSDT_PA     0x300000u
#define RSDT_PA     0x300400u
#define MADT_PA     0x301000u
#define FACP_PA     0x302000u
#define DSDT_PA     0x303000u
#define FACS_PA     0x304000u
#define MODULE_PA   0x200000u
#define MODULE_SIZE 0x11000u

static uint8_t *mem;
static struct acpi_window win;
static struct hvm_start_info *si;
static uint8_t dtb[64 << 10];
static struct bi_cpu cpus[64];
static struct boot_info bi;
static uint32_t madt_len;

static const char *case_name;
static int failed_cases, cases, case_failed;

#define CHECK(cond, ...) do { if (!(cond)) { fail(__LINE__, __VA_ARGS__); return; } } while (0)

static void fail(int line, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	printf("FAIL %s (line %d): ", case_name, line);
	vprintf(fmt, ap);
	printf("\n");
	va_end(ap);
	case_failed = 1;
}

static void le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void le64(uint8_t *p, uint64_t v)
{
	le32(p, (uint32_t)v);
	le32(p + 4, (uint32_t)(v >> 32));
}

/* Set the byte at sum_at so that bytes [pa, pa + n) sum to 0. */
static void fix_sum(uint32_t pa, uint32_t n, uint32_t sum_at)
{
	uint8_t s = 0;
	mem[sum_at] = 0;
	for (uint32_t i = 0; i < n; i++)
		s = (uint8_t)(s + mem[pa + i]);
	mem[sum_at] = (uint8_t)-s;
}

static void sdt_header(uint32_t pa, const char *sig, uint8_t rev, uint32_t len)
{
	memcpy(mem + pa, sig, 4);
	le32(mem + pa + 4, len);
	mem[pa + 8] = rev;
	memcpy(mem + pa + 10, "PATINA", 6);
}

static void sdt_sum(uint32_t pa)
{
	uint32_t len = mem[pa + 4] | mem[pa + 5] << 8 | mem[pa + 6] << 16 | (uint32_t)mem[pa + 7] << 24;
	fix_sum(pa, len, pa + 9);
}

/* MADT: begin, add processors, end (length and checksum). */
static void madt_begin(uint8_t rev)
{
	memset(mem + MADT_PA, 0, 0x1000);
	sdt_header(MADT_PA, "APIC", rev, 0);
	le32(mem + MADT_PA + 36, 0xfee00000);
	le32(mem + MADT_PA + 40, 1);
	madt_len = 44;
}

static void madt_lapic(uint8_t uid, uint8_t id, uint32_t flags)
{
	uint8_t *e = mem + MADT_PA + madt_len;
	e[0] = 0, e[1] = 8, e[2] = uid, e[3] = id;
	le32(e + 4, flags);
	madt_len += 8;
}

static void madt_x2apic(uint32_t id, uint32_t flags, uint32_t uid)
{
	uint8_t *e = mem + MADT_PA + madt_len;
	e[0] = 9, e[1] = 16;
	le32(e + 4, id);
	le32(e + 8, flags);
	le32(e + 12, uid);
	madt_len += 16;
}

/* An I/O APIC entry: one the processor walk must step over. */
static void madt_ioapic(void)
{
	uint8_t *e = mem + MADT_PA + madt_len;
	e[0] = 1, e[1] = 12, e[2] = 0;
	le32(e + 4, 0xfec00000);
	madt_len += 12;
}

static void madt_end(void)
{
	le32(mem + MADT_PA + 4, madt_len);
	sdt_sum(MADT_PA);
}

/* The RSDP at pa: revision 0 names the RSDT only, revision 2 the XSDT
 * (xsdt 0: none) too. */
static void rsdp(uint32_t pa, uint8_t rev, uint64_t xsdt)
{
	memset(mem + pa, 0, 36);
	memcpy(mem + pa, "RSD PTR ", 8);
	memcpy(mem + pa + 9, "PATINA", 6);
	mem[pa + 15] = rev;
	le32(mem + pa + 16, RSDT_PA);
	if (rev >= 2) {
		le32(mem + pa + 20, 36);
		le64(mem + pa + 24, xsdt);
	}
	/* the extended checksum covers the first one */
	fix_sum(pa, 20, pa + 8);
	if (rev >= 2)
		fix_sum(pa, 36, pa + 32);
}

/* Root tables listing the FADT and the MADT; the FADT naming a DSDT and
 * a FACS. */
static void root_tables(void)
{
	sdt_header(XSDT_PA, "XSDT", 1, 36 + 16);
	le64(mem + XSDT_PA + 36, FACP_PA);
	le64(mem + XSDT_PA + 44, MADT_PA);
	sdt_sum(XSDT_PA);
	sdt_header(RSDT_PA, "RSDT", 1, 36 + 8);
	le32(mem + RSDT_PA + 36, FACP_PA);
	le32(mem + RSDT_PA + 40, MADT_PA);
	sdt_sum(RSDT_PA);
	sdt_header(FACP_PA, "FACP", 6, 276);
	le32(mem + FACP_PA + 36, FACS_PA);
	le32(mem + FACP_PA + 40, DSDT_PA);
	sdt_sum(FACP_PA);
	sdt_header(DSDT_PA, "DSDT", 2, 0x1800);   /* runs into a second page */
	sdt_sum(DSDT_PA);
	memcpy(mem + FACS_PA, "FACS", 4);
	le32(mem + FACS_PA + 4, 64);
}

static struct hvm_memmap_table_entry *memmap(void)
{
	return (struct hvm_memmap_table_entry *)(mem + MEMMAP_PA);
}

static void map_entry(int i, uint64_t addr, uint64_t size, uint32_t type)
{
	memmap()[i] = (struct hvm_memmap_table_entry){ .addr = addr, .size = size, .type = type };
}

/* A q35-like machine with 2 GiB below 4 GiB and 2 GiB above, ncpu
 * enabled processors with APIC ids 0.., the command line `cmdline` and
 * one module. */
static void machine(int ncpu, const char *cmdline)
{
	memset(mem, 0, MEM_SIZE);
	si = (struct hvm_start_info *)(mem + SI_PA);
	si->magic = HVM_START_MAGIC;
	si->version = 1;
	si->memmap_paddr = MEMMAP_PA;
	si->memmap_entries = 6;
	map_entry(0, 0, 0x9fc00, HVM_MEMMAP_RAM);
	map_entry(1, 0x9fc00, 0x400, HVM_MEMMAP_RESERVED);
	map_entry(2, 0xf0000, 0x10000, HVM_MEMMAP_RESERVED);
	map_entry(3, 0x100000, 0x7ff00000 - 0x100000, HVM_MEMMAP_RAM);
	map_entry(4, 0xfeffc000, 0x4000, HVM_MEMMAP_RESERVED);
	map_entry(5, 0x100000000ull, 0x80000000ull, HVM_MEMMAP_RAM);
	if (cmdline) {
		strcpy((char *)mem + CMDLINE_PA, cmdline);
		si->cmdline_paddr = CMDLINE_PA;
	}
	si->nr_modules = 1;
	si->modlist_paddr = MODLIST_PA;
	struct hvm_modlist_entry *m = (struct hvm_modlist_entry *)(mem + MODLIST_PA);
	m->paddr = MODULE_PA;
	m->size = MODULE_SIZE;
	si->rsdp_paddr = RSDP_PA;
	rsdp(RSDP_PA, 2, XSDT_PA);
	root_tables();
	madt_begin(5);
	madt_ioapic();
	for (int i = 0; i < ncpu; i++)
		madt_lapic((uint8_t)i, (uint8_t)i, 1);
	madt_end();
}

static long build(uint32_t bsp, uint64_t tb, uint32_t len, const char **why)
{
	return x86_bootfdt_build_in(&win, si, bsp, tb, dtb, len, why);
}

/* Build, then the kernel's validate + scan. Returns 0, or fails the case. */
static int build_and_scan(uint32_t bsp, uint64_t tb)
{
	const char *why = "(none)";
	long r = build(bsp, tb, sizeof dtb, &why);
	if (r) {
		fail(__LINE__, "build refused: %ld, %s", r, why);
		return -1;
	}
	if (fdt_validate(dtb, sizeof dtb, &why)) {
		fail(__LINE__, "fdt_validate refused: %s", why);
		return -1;
	}
	memset(&bi, 0, sizeof bi);
	bi.cpus = cpus;
	bi.cpus_cap = 64;
	if (fdt_scan(dtb, 0x5000000, &bi)) {
		fail(__LINE__, "fdt_scan refused: %s", bi.refused);
		return -1;
	}
	return 0;
}

/* Is [pa, pa + n) inside one memreserve range? */
static int kept(uint64_t pa, uint64_t n)
{
	for (int i = 0; i < bi.nmemrsv; i++)
		if (pa >= bi.memrsv[i].base && pa + n <= bi.memrsv[i].base + bi.memrsv[i].size)
			return 1;
	return 0;
}

/* Is [pa, pa + n) disjoint from every range memmap.c would free? */
static int never_freed(uint64_t pa, uint64_t n)
{
	static struct phys_range fr[MEMMAP_MAX];
	int nf = memmap_free_ranges(&bi, fr, MEMMAP_MAX);
	if (nf < 0)
		return 0;
	for (int i = 0; i < nf; i++)
		if (pa < fr[i].base + fr[i].size && fr[i].base < pa + n)
			return 0;
	return 1;
}

/* Build the (good) machine as it is, so that dtb holds a DTB a refused
 * build must then wipe. */
static int prime(void)
{
	const char *why = NULL;
	long r = build(0, 1000000, sizeof dtb, &why);
	if (r || fdt_be32(dtb) != FDT_MAGIC) {
		fail(__LINE__, "the unchanged machine was refused: %ld, %s", r, why);
		return -1;
	}
	return 0;
}

/* A refusal: the return value, a reason, and no DTB left in dtb. */
static void refused(uint32_t bsp, uint32_t len, long want, const char *reason_part)
{
	const char *why = NULL;
	long r = build(bsp, 1000000, len, &why);
	CHECK(r == want, "returned %ld, want %ld (%s)", r, want, why ? why : "no reason");
	CHECK(why && strstr(why, reason_part), "reason \"%s\", want one with \"%s\"",
	      why ? why : "(null)", reason_part);
	CHECK(fdt_be32(dtb) != FDT_MAGIC, "a DTB magic is left in the buffer");
	const char *vwhy;
	CHECK(fdt_validate(dtb, sizeof dtb, &vwhy) != 0, "the buffer still validates as a DTB");
	printf("  refused: %s\n", why);
}

/* --- accepted machines --- */

static void case_one_cpu(void)
{
	machine(1, "console=ttyS0 selftest");
	if (build_and_scan(0, 1000000000))
		return;
	CHECK(bi.nmem == 2, "nmem %d, want 2", bi.nmem);
	CHECK(bi.mem[0].base == 0x100000 && bi.mem[0].size == 0x7ff00000 - 0x100000,
	      "mem[0] %lx+%lx", (long)bi.mem[0].base, (long)bi.mem[0].size);
	CHECK(bi.mem[1].base == 0x100000000ull && bi.mem[1].size == 0x80000000ull,
	      "mem[1] %lx+%lx", (long)bi.mem[1].base, (long)bi.mem[1].size);
	CHECK(bi.ncpus == 1 && cpus[0].hartid == 0 && cpus[0].okay && cpus[0].has_mmu,
	      "cpus: %d, id %u okay %d mmu %d", bi.ncpus, cpus[0].hartid, cpus[0].okay,
	      cpus[0].has_mmu);
	CHECK(!strcmp(cpus[0].mmu_type, "x86,4-level"), "mmu-type %s", cpus[0].mmu_type);
	CHECK(bi.timebase == 1000000000, "timebase %lu", (unsigned long)bi.timebase);
	CHECK(bi.has_bootargs && !strcmp(bi.bootargs, "console=ttyS0 selftest"),
	      "bootargs \"%s\"", bi.bootargs);
	CHECK(bi.boot_cpuid == 0, "boot_cpuid %u", bi.boot_cpuid);
	CHECK(bi.nresv == 0, "reserved-memory children %d", bi.nresv);
	/* what lies in RAM is kept: the tables, the module; what lies below
	 * 1 MiB is not RAM the DTB lists, so it needs no entry */
	CHECK(kept(XSDT_PA, 52) && kept(RSDT_PA, 44), "root tables not kept");
	CHECK(kept(MADT_PA, madt_len) && kept(FACP_PA, 276), "MADT or FADT not kept");
	CHECK(kept(DSDT_PA, 0x1800) && kept(FACS_PA, 64), "DSDT or FACS not kept");
	CHECK(kept(MODULE_PA, MODULE_SIZE), "module not kept");
	CHECK(!kept(SI_PA, 56) && !kept(RSDP_PA, 36), "low memory got a memreserve entry");
	CHECK(never_freed(XSDT_PA, 0x5000) && never_freed(MODULE_PA, MODULE_SIZE),
	      "memmap.c would free the tables or the module");
	CHECK(never_freed(0, 0x100000), "memmap.c would free memory below 1 MiB");
	/* merged: tables in one run of pages, the module in another */
	CHECK(bi.nmemrsv == 2, "memreserve entries %d, want 2", bi.nmemrsv);
	CHECK(bi.dtb_size == fdt_be32(dtb + 4), "dtb_size");

	int root = fdt_root(dtb), len;
	const char *compat = fdt_getprop(dtb, root, "compatible", &len);
	CHECK(compat && !strcmp(compat, "patina,x86-64-pvh"), "root compatible");
	int ser = fdt_path(dtb, "/isa/serial@i3f8");
	const uint8_t *reg = ser >= 0 ? fdt_getprop(dtb, ser, "reg", &len) : NULL;
	CHECK(reg && len == 12 && fdt_be32(reg) == 1 && fdt_be32(reg + 4) == 0x3f8,
	      "serial node reg");
	int ch = fdt_path(dtb, "/chosen");
	const char *sp = ch >= 0 ? fdt_getprop(dtb, ch, "stdout-path", &len) : NULL;
	CHECK(sp && fdt_path(dtb, sp) == ser, "stdout-path does not name the serial node");
	CHECK(fdt_path(dtb, "/memory@100000") >= 0 && fdt_path(dtb, "/memory@100000000") >= 0,
	      "memory node names");
	printf("  %d memory, %d memreserve, %u-byte DTB\n", bi.nmem, bi.nmemrsv, bi.dtb_size);
}

static void case_four_cpus(void)
{
	machine(4, "a");
	/* a timebase past 32 bits: an 8-byte property */
	if (build_and_scan(2, 5000000000ull))
		return;
	CHECK(bi.ncpus == 4, "ncpus %d", bi.ncpus);
	for (int i = 0; i < 4; i++)
		CHECK(cpus[i].hartid == (uint32_t)i && cpus[i].okay && cpus[i].has_mmu,
		      "cpu %d: id %u okay %d", i, cpus[i].hartid, cpus[i].okay);
	CHECK(bi.boot_cpuid == 2, "boot_cpuid %u", bi.boot_cpuid);
	CHECK(bi.timebase == 5000000000ull, "timebase %lu", (unsigned long)bi.timebase);
	CHECK(fdt_path(dtb, "/cpus/cpu@3") >= 0, "no /cpus/cpu@3");
}

static void case_disabled_cpu(void)
{
	machine(0, "a");
	madt_begin(5);
	madt_lapic(0, 0, 1);       /* enabled */
	madt_lapic(1, 1, 2);       /* online-capable, not enabled: disabled */
	madt_lapic(2, 2, 0);       /* neither: left out */
	madt_lapic(3, 3, 1);
	madt_end();
	if (build_and_scan(0, 1000000))
		return;
	CHECK(bi.ncpus == 3, "ncpus %d, want 3", bi.ncpus);
	CHECK(cpus[0].hartid == 0 && cpus[0].okay, "cpu 0");
	CHECK(cpus[1].hartid == 1 && !cpus[1].okay, "cpu 1 should be disabled");
	CHECK(cpus[2].hartid == 3 && cpus[2].okay, "cpu 3");
	int c = fdt_path(dtb, "/cpus/cpu@1"), len;
	const char *st = c >= 0 ? fdt_getprop(dtb, c, "status", &len) : NULL;
	CHECK(st && !strcmp(st, "disabled"), "cpu@1 status");

	/* before MADT revision 5 bit 1 is reserved: such an entry is left out */
	madt_begin(4);
	madt_lapic(0, 0, 1);
	madt_lapic(1, 1, 2);
	madt_end();
	if (build_and_scan(0, 1000000))
		return;
	CHECK(bi.ncpus == 1, "MADT rev 4: ncpus %d, want 1", bi.ncpus);
}

static void case_x2apic(void)
{
	machine(0, "a");
	madt_begin(5);
	madt_lapic(0, 0, 1);
	madt_x2apic(0x100, 1, 1);
	madt_ioapic();
	madt_x2apic(0x101, 1, 2);
	madt_x2apic(0, 1, 0);     /* the first processor again: one node */
	madt_x2apic(0x102, 2, 3); /* online-capable */
	madt_end();
	if (build_and_scan(0x101, 1000000))
		return;
	CHECK(bi.ncpus == 4, "ncpus %d, want 4", bi.ncpus);
	CHECK(cpus[0].hartid == 0 && cpus[1].hartid == 0x100 && cpus[2].hartid == 0x101 &&
	      cpus[3].hartid == 0x102, "ids %x %x %x %x", cpus[0].hartid, cpus[1].hartid,
	      cpus[2].hartid, cpus[3].hartid);
	CHECK(cpus[2].okay && !cpus[3].okay, "okay flags");
	CHECK(bi.boot_cpuid == 0x101, "boot_cpuid %x", bi.boot_cpuid);
	CHECK(fdt_path(dtb, "/cpus/cpu@101") >= 0, "no /cpus/cpu@101");
}

static void case_rsdt_only(void)
{
	machine(2, "a");
	rsdp(RSDP_PA, 0, 0);
	memset(mem + XSDT_PA, 0, 52);   /* no XSDT anywhere */
	if (build_and_scan(1, 1000000))
		return;
	CHECK(bi.ncpus == 2, "ncpus %d", bi.ncpus);
	CHECK(kept(RSDT_PA, 44), "RSDT not kept");
	/* revision 2 with no XSDT address: the RSDT too */
	rsdp(RSDP_PA, 2, 0);
	if (build_and_scan(1, 1000000))
		return;
	CHECK(bi.ncpus == 2, "rev 2, no XSDT: ncpus %d", bi.ncpus);
}

static void case_rsdp_scan(void)
{
	machine(1, "a");
	si->rsdp_paddr = 0;
	memset(mem + RSDP_PA, 0, 36);
	rsdp(0xfe350, 2, XSDT_PA);      /* found on its 16-byte boundary */
	if (build_and_scan(0, 1000000))
		return;
	CHECK(bi.ncpus == 1, "ncpus %d", bi.ncpus);
}

static void case_no_cmdline(void)
{
	machine(1, NULL);
	if (build_and_scan(0, 1000000))
		return;
	CHECK(!bi.has_bootargs && bi.bootargs[0] == 0, "bootargs \"%s\"", bi.bootargs);
	/* the longest line boot_info holds */
	machine(1, NULL);
	memset(mem + CMDLINE_PA, 'a', BI_ARGS_LEN - 1);
	si->cmdline_paddr = CMDLINE_PA;
	if (build_and_scan(0, 1000000))
		return;
	CHECK(bi.has_bootargs && strlen(bi.bootargs) == BI_ARGS_LEN - 1, "long bootargs");
}

static void case_no_timebase(void)
{
	machine(1, "a");
	if (build_and_scan(0, 0))
		return;
	CHECK(bi.timebase == 0, "timebase %lu", (unsigned long)bi.timebase);
}

static void case_memory_merge(void)
{
	machine(1, "a");
	/* 40 pieces of 1 MiB from 16 MiB, every other one split in two
	 * adjacent halves, listed backwards, one overlapping its neighbour */
	int n = 0;
	for (int i = 39; i >= 0; i--) {
		uint64_t b = (16ull + (uint64_t)i) << 20;
		if (i & 1) {
			map_entry(n++, b, 1 << 19, HVM_MEMMAP_RAM);
			map_entry(n++, b + (1 << 19), 1 << 19, HVM_MEMMAP_RAM);
		} else {
			map_entry(n++, b, (1 << 20) + (i == 10 ? 4096 : 0), HVM_MEMMAP_RAM);
		}
	}
	map_entry(n++, 0, 0x9fc00, HVM_MEMMAP_RAM);   /* below 1 MiB: left out */
	si->memmap_entries = (uint32_t)n;
	if (build_and_scan(0, 1000000))
		return;
	CHECK(bi.nmem == 1 && bi.mem[0].base == 16u << 20 && bi.mem[0].size == 40u << 20,
	      "nmem %d, mem[0] %lx+%lx", bi.nmem, (long)bi.mem[0].base, (long)bi.mem[0].size);

	/* BI_MAX_MEM separate runs: accepted, in address order */
	machine(1, "a");
	for (int i = 0; i < BI_MAX_MEM; i++)
		map_entry(BI_MAX_MEM - 1 - i, (uint64_t)(2 * i + 2) << 20, 1 << 20, HVM_MEMMAP_RAM);
	si->memmap_entries = BI_MAX_MEM;
	if (build_and_scan(0, 1000000))
		return;
	CHECK(bi.nmem == BI_MAX_MEM, "nmem %d", bi.nmem);
	for (int i = 0; i < BI_MAX_MEM; i++)
		CHECK(bi.mem[i].base == (uint64_t)(2 * i + 2) << 20, "mem[%d] %lx", i,
		      (long)bi.mem[i].base);
	/* a reserved entry lying over RAM is kept from the allocator */
	machine(1, "a");
	map_entry(6, 0x1000000, 0x3000, HVM_MEMMAP_ACPI);
	si->memmap_entries = 7;
	if (build_and_scan(0, 1000000))
		return;
	CHECK(kept(0x1000000, 0x3000) && never_freed(0x1000000, 0x3000),
	      "reserved entry over RAM not kept");
}

static void case_many_reservations(void)
{
	machine(1, "a");
	/* 50 modules a page each, 64 KiB apart, and one next to the MADT:
	 * more than BI_MAX_RESV ranges, so the closest merge */
	struct hvm_modlist_entry *m = (struct hvm_modlist_entry *)(mem + MODLIST_PA);
	si->nr_modules = 50;
	for (int i = 0; i < 50; i++)
		m[i] = (struct hvm_modlist_entry){ .paddr = 0x1000000 + (uint64_t)i * 0x10000,
						   .size = 100 };
	m[49].paddr = 0x305000;
	if (build_and_scan(0, 1000000))
		return;
	CHECK(bi.nmemrsv <= BI_MAX_RESV, "nmemrsv %d", bi.nmemrsv);
	for (int i = 0; i < 50; i++)
		CHECK(kept(m[i].paddr, 100), "module %d not kept", i);
	CHECK(kept(MADT_PA, madt_len) && kept(XSDT_PA, 52), "tables not kept");
	printf("  50 modules + tables in %d memreserve entries\n", bi.nmemrsv);
}

static void case_exact_buffer(void)
{
	machine(4, "console=ttyS0");
	if (build_and_scan(0, 1000000))
		return;
	uint32_t total = fdt_be32(dtb + 4);
	const char *why;
	CHECK(build(0, 1000000, total, &why) == 0, "a buffer of exactly totalsize refused");
	memset(dtb, 0xff, sizeof dtb);
	/* one byte short, and one too small for the memreserve block */
	refused(0, total - 1, -E_NOMEM, "too small");
	if (case_failed)
		return;
	memset(dtb, 0xff, sizeof dtb);
	refused(0, 60, -E_NOMEM, "too small");
	if (case_failed)
		return;
	CHECK(build(0, 1000000, 3, &why) == -E_NOMEM, "3-byte buffer");
}

/* --- refused machines: each mutates a good one (2 processors) whose
 * DTB is already in the buffer --- */

static void rsdp_sum(void) { mem[RSDP_PA + 8] ^= 1; }
static void rsdp_xsum(void) { mem[RSDP_PA + 32] ^= 1; }
static void rsdp_sig(void) { memcpy(mem + RSDP_PA, "RSD PTX ", 8); }
static void rsdp_gone(void) { si->rsdp_paddr = 0; memset(mem + RSDP_PA, 0, 36); }
static void xsdt_far(void) { rsdp(RSDP_PA, 2, 0x7fff0000); }
static void xsdt_sum(void) { mem[XSDT_PA + 40] ^= 1; }
static void madt_sum(void) { mem[MADT_PA + 50] ^= 0x10; }
static void madt_sig(void) { memcpy(mem + MADT_PA, "APIX", 4); sdt_sum(MADT_PA); }
static void madt_set_len(uint32_t n) { le32(mem + MADT_PA + 4, n); sdt_sum(MADT_PA); }
static void madt_cut(void) { madt_set_len(madt_len - 3); }      /* cuts the last entry */
static void madt_short(void) { madt_set_len(40); }
static void madt_huge(void) { le32(mem + MADT_PA + 4, MEM_SIZE); }
/* the first local APIC entry (after the I/O APIC's 12 bytes) */
static void madt_entry_len(uint8_t n) { mem[MADT_PA + 44 + 12 + 1] = n; sdt_sum(MADT_PA); }
static void madt_entry0(void) { madt_entry_len(0); }
static void madt_entry4(void) { madt_entry_len(4); }
static void bsp_online_capable(void)
{
	madt_begin(5);
	madt_lapic(0, 0, 1);
	madt_lapic(1, 1, 2);
	madt_end();
}
static void ram_runs(void)
{
	for (int i = 0; i <= BI_MAX_MEM; i++)
		map_entry(i, (uint64_t)(2 * i + 2) << 20, 1 << 20, HVM_MEMMAP_RAM);
	si->memmap_entries = BI_MAX_MEM + 1;
}
static void map_long(void) { si->memmap_entries = X86_BOOT_MEMMAP_MAX + 1; }
static void map_low(void) { map_entry(0, 0, 0x90000, HVM_MEMMAP_RAM); si->memmap_entries = 1; }
static void map_wraps(void) { map_entry(3, 0xfffffffffffff000ull, 0x2000, HVM_MEMMAP_RAM); }
static void map_none(void) { si->memmap_entries = 0; }
static void map_far(void) { si->memmap_paddr = MEM_SIZE - 24; si->memmap_entries = 2; }
static void si_magic(void) { si->magic ^= 1; }
static void si_v0(void) { si->version = 0; }
static void cmd_long(void) { memset(mem + CMDLINE_PA, 'a', BI_ARGS_LEN); }  /* no NUL in 512 */
static void cmd_far(void) { si->cmdline_paddr = MEM_SIZE + 5; }
static void mods_many(void) { si->nr_modules = X86_BOOT_MODULES_MAX + 1; }
static void mod_wraps(void) { ((struct hvm_modlist_entry *)(mem + MODLIST_PA))->size = ~0ull; }
static void nothing(void) {}

static const struct refusal {
	const char *group;         /* the case it belongs to */
	void (*mutate)(void);
	uint32_t bsp;
	const char *reason;        /* part of the reason given */
} refusals[] = {
	{ "bad-rsdp-checksum", rsdp_sum, 0, "RSDP checksum" },
	{ "bad-rsdp-checksum", rsdp_xsum, 0, "RSDP extended checksum" },
	{ "bad-rsdp-checksum", rsdp_sig, 0, "RSDP signature" },
	{ "bad-madt-checksum", madt_sum, 0, "checksum bad" },
	{ "bad-madt-checksum", xsdt_sum, 0, "checksum bad" },
	{ "truncated-madt", madt_cut, 0, "runs past the table" },
	{ "truncated-madt", madt_short, 0, "MADT shorter" },
	{ "truncated-madt", madt_huge, 0, "length out of range" },
	{ "truncated-madt", madt_entry0, 0, "shorter than its header" },
	{ "truncated-madt", madt_entry4, 0, "local APIC entry too short" },
	{ "too-many-memory-pieces", ram_runs, 0, "more RAM runs" },
	{ "too-many-memory-pieces", map_long, 0, "more entries than boot reads" },
	{ "too-many-memory-pieces", map_low, 0, "no RAM above 1 MiB" },
	{ "too-many-memory-pieces", map_wraps, 0, "past the physical address space" },
	{ "too-many-memory-pieces", map_none, 0, "no memory map" },
	{ "too-many-memory-pieces", map_far, 0, "memory map outside memory" },
	{ "bad-start-info", si_magic, 0, "magic" },
	{ "bad-start-info", si_v0, 0, "no memory map" },
	{ "bad-start-info", cmd_long, 0, "command line not terminated" },
	{ "bad-start-info", cmd_far, 0, "command line outside memory" },
	{ "bad-start-info", mods_many, 0, "more modules" },
	{ "bad-start-info", mod_wraps, 0, "module past the physical address space" },
	{ "bad-processors", nothing, 7, "boot processor" },
	{ "bad-processors", bsp_online_capable, 1, "boot processor" },
	{ "bad-processors", madt_sig, 0, "no ACPI MADT" },
	{ "bad-processors", rsdp_gone, 0, "no ACPI RSDP" },
	{ "bad-processors", xsdt_far, 0, "outside memory" },
};

/* Every refusal of the running case's group. */
static void case_refusals(void)
{
	int n = 0;
	for (unsigned i = 0; i < sizeof refusals / sizeof refusals[0] && !case_failed; i++) {
		if (strcmp(refusals[i].group, case_name))
			continue;
		n++;
		machine(2, "a");
		if (prime())
			return;
		refusals[i].mutate();
		refused(refusals[i].bsp, sizeof dtb, -E_INVAL, refusals[i].reason);
	}
	CHECK(n > 0 || case_failed, "no refusal in this group");
}

static const struct {
	const char *name;
	void (*fn)(void);
} all[] = {
	{ "one-cpu", case_one_cpu },
	{ "four-cpus", case_four_cpus },
	{ "disabled-cpu", case_disabled_cpu },
	{ "x2apic", case_x2apic },
	{ "rsdt-only", case_rsdt_only },
	{ "rsdp-scan", case_rsdp_scan },
	{ "no-cmdline", case_no_cmdline },
	{ "no-timebase", case_no_timebase },
	{ "memory-merge", case_memory_merge },
	{ "many-reservations", case_many_reservations },
	{ "exact-buffer", case_exact_buffer },
	{ "bad-rsdp-checksum", case_refusals },
	{ "bad-madt-checksum", case_refusals },
	{ "truncated-madt", case_refusals },
	{ "too-many-memory-pieces", case_refusals },
	{ "bad-start-info", case_refusals },
	{ "bad-processors", case_refusals },
};

/* --scan: print boot_info of the DTB in path. */
static int scan_file(const char *path)
{
	static uint8_t blob[FDT_MAX_SIZE];
	FILE *f = fopen(path, "rb");
	if (!f)
		return 2;
	size_t n = fread(blob, 1, sizeof blob, f);
	fclose(f);
	const char *why;
	if (fdt_validate(blob, (uint32_t)n, &why)) {
		printf("refused %s\n", why);
		return 1;
	}
	memset(&bi, 0, sizeof bi);
	bi.cpus = cpus;
	bi.cpus_cap = 64;
	if (fdt_scan(blob, 0x5000000, &bi)) {
		printf("refused %s\n", bi.refused);
		return 1;
	}
	printf("boot_cpuid %u\ntimebase %llu\n", bi.boot_cpuid, (unsigned long long)bi.timebase);
	if (bi.has_bootargs)
		printf("bootargs %s\n", bi.bootargs);
	for (int i = 0; i < bi.nmem; i++)
		printf("mem %#llx %#llx\n", (unsigned long long)bi.mem[i].base,
		       (unsigned long long)bi.mem[i].size);
	for (int i = 0; i < bi.nmemrsv; i++)
		printf("memrsv %#llx %#llx\n", (unsigned long long)bi.memrsv[i].base,
		       (unsigned long long)bi.memrsv[i].size);
	for (int i = 0; i < bi.ncpus && i < bi.cpus_cap; i++)
		printf("cpu %u %s %s\n", cpus[i].hartid, cpus[i].okay ? "okay" : "disabled",
		       cpus[i].has_mmu ? cpus[i].mmu_type : "no-mmu");
	return 0;
}

int main(int argc, char **argv)
{
	kshim_init();
	if (argc == 3 && !strcmp(argv[1], "--scan"))
		return scan_file(argv[2]);
	if (argc != 1) {
		fprintf(stderr, "usage: test_bootfdt [--scan FILE]\n");
		return 2;
	}
	mem = calloc(1, MEM_SIZE);
	if (!mem)
		return 2;
	win.base = (uintptr_t)mem;
	win.size = MEM_SIZE;
	for (unsigned i = 0; i < sizeof all / sizeof all[0]; i++) {
		case_name = all[i].name;
		case_failed = 0;
		printf("case %s\n", case_name);
		all[i].fn();
		cases++;
		failed_cases += case_failed;
		if (!case_failed)
			printf("ok %s\n", case_name);
	}
	printf("test_bootfdt: %d cases, %d failed\n", cases, failed_cases);
	free(mem);
	return failed_cases ? 1 : 0;
}
