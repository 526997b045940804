/* The RISC-V paging trait tables of sv.c, for code that picks one by
 * paging mode (the kernel); host programs find them through the registry.
 * Declared on an incomplete type: naming a table exposes no entry format. */
#ifndef ARCH_RISCV_PT_SV_H
#define ARCH_RISCV_PT_SV_H

struct pt_arch;

extern const struct pt_arch mm_arch_sv39;   /* 3 levels, 39-bit VA */
extern const struct pt_arch mm_arch_sv48;   /* 4 levels, 48-bit VA */
extern const struct pt_arch mm_arch_sv57;   /* 5 levels, 57-bit VA */
/* The same with Svpbmt: leaves carry NC and device memory types. Only for
 * harts whose riscv,isa lists svpbmt (elsewhere those bits fault). */
extern const struct pt_arch mm_arch_sv39_svpbmt;
extern const struct pt_arch mm_arch_sv48_svpbmt;
extern const struct pt_arch mm_arch_sv57_svpbmt;

#endif
