/* ELF64 loader for boot modules: every PT_LOAD segment is copied into
 * fresh frames charged to the task and mapped through one cursor per
 * segment. Validates the whole header table before mapping anything; a
 * segment both writable and executable is refused (W^X). */
#include "mk.h"
#include "kstring.h"

struct elf64_ehdr {
	uint8_t ident[16];
	uint16_t type, machine;
	uint32_t version;
	uint64_t entry, phoff, shoff;
	uint32_t flags;
	uint16_t ehsize, phentsize, phnum, shentsize, shnum, shstrndx;
};
struct elf64_phdr {
	uint32_t type, flags;
	uint64_t offset, vaddr, paddr, filesz, memsz, align;
};
#define PT_LOAD 1
#define PF_X 1
#define PF_W 2
#define PF_R 4

static int check(const uint8_t *img, size_t len, const struct elf64_ehdr **eh)
{
	if (len < sizeof(struct elf64_ehdr))
		return -E_INVAL;
	const struct elf64_ehdr *e = (const void *)img;
	if (memcmp(e->ident, "\177ELF", 4) || e->ident[4] != 2 || e->machine != ARCH_ELF_MACHINE ||
	    e->phentsize != sizeof(struct elf64_phdr) || e->phoff > len ||
	    (uint64_t)e->phnum * sizeof(struct elf64_phdr) > len - e->phoff)
		return -E_INVAL;
	const struct elf64_phdr *ph = (const void *)(img + e->phoff);
	for (int i = 0; i < e->phnum; i++) {
		if (ph[i].type != PT_LOAD)
			continue;
		if ((ph[i].flags & (PF_W | PF_X)) == (PF_W | PF_X))
			return -E_INVAL;     /* W^X: no user page is writable and executable */
		if (ph[i].filesz > ph[i].memsz || ph[i].offset > len ||
		    ph[i].filesz > len - ph[i].offset || ph[i].vaddr < PAGE_SIZE ||
		    ph[i].memsz > user_top || ph[i].vaddr > user_top - ph[i].memsz ||
		    ph[i].vaddr + ph[i].memsz > USER_STACK_TOP - USER_STACK_PAGES * PAGE_SIZE)
			return -E_INVAL;
	}
	*eh = e;
	return 0;
}

int elf_load(struct task *t, const uint8_t *img, size_t len, uint64_t *entry)
{
	const struct elf64_ehdr *e;
	int err = check(img, len, &e);
	if (err)
		return err;
	const struct elf64_phdr *ph = (const void *)(img + e->phoff);
	for (int i = 0; i < e->phnum; i++) {
		if (ph[i].type != PT_LOAD || ph[i].memsz == 0)
			continue;
		uint64_t lo = ph[i].vaddr & ~(PAGE_SIZE - 1);
		uint64_t hi = (ph[i].vaddr + ph[i].memsz + PAGE_SIZE - 1) & ~(PAGE_SIZE - 1);
		unsigned prot = MM_PROT_R | MM_PROT_U;
		if (ph[i].flags & PF_W)
			prot |= MM_PROT_W;
		if (ph[i].flags & PF_X)
			prot |= MM_PROT_X;
		struct mm_cursor c;
		if (mm_lock(&c, &t->as, lo, hi))
			return -E_NOMEM;
		for (uint64_t va = lo; va < hi && !err; va += PAGE_SIZE) {
			uint64_t pa;
			err = uvm_frame_alloc(t, &pa);
			if (err)
				break;
			uint8_t *dst = phys_to_virt(pa);
			/* Bytes of the file that fall in this page. */
			uint64_t fs = ph[i].vaddr, fe = ph[i].vaddr + ph[i].filesz;
			uint64_t s = va > fs ? va : fs, en = va + PAGE_SIZE < fe ? va + PAGE_SIZE : fe;
			if (s < en)
				memcpy(dst + (s - va), img + ph[i].offset + (s - fs), en - s);
			/* Segments may share a page: a second one merges in. */
			struct mm_info info;
			mm_query(&c, va, &info);
			if (info.kind == MM_MAPPED) {
				uint8_t *old = phys_to_virt(info.pa);
				if (s < en)
					memcpy(old + (s - va), dst + (s - va), en - s);
				uvm_frame_put(pa);
				continue;
			}
			if (mm_map(&c, va, pa, 1, prot, 0)) {
				uvm_frame_put(pa);
				err = -E_NOMEM;
			}
		}
		mm_release(&c);
		if (err)
			return err;
	}
	/* The task has run nowhere yet: each hart fences before it first runs
	 * it (icache_gen starts past every hart's seen value). */
	*entry = e->entry;
	return 0;
}
