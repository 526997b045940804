/* x86-64 descriptor tables: a GDT and TSS per CPU (in its per-CPU block,
 * which GS points at in the kernel), one IDT for all, and the syscall
 * MSRs. The GDT's order (kernel code, kernel data, user data, user code)
 * is what STAR makes syscall and sysret use. */
#include "cpu.h"
#include "hartmask.h"
#include "kstring.h"
#include "trap.h"
#include "x86.h"

struct tss {
	uint32_t reserved0;
	uint64_t rsp[3];
	uint64_t reserved1;
	uint64_t ist[7];
	uint64_t reserved2;
	uint16_t reserved3, iomap_base;
} __attribute__((packed));

/* GS base points here. The first three words are read by uentry.S at
 * fixed offsets: the per-hart pointer (arch_cpu_get), the user rsp a
 * syscall saves, the kernel stack top of the running thread. */
struct x86_pcpu {
	void *cpu;
	uint64_t user_rsp;
	uint64_t kstack_top;
	uint64_t gdt[7];
	struct tss tss;
	/* Double faults and NMIs. Its last 16 bytes are above the IST top:
	 * the first word there points back at this block, for the NMI
	 * handler, which cannot trust GS (x86_nmi_cpu). */
	uint8_t fault_stack[4096] __attribute__((aligned(16)));
};

_Static_assert(__builtin_offsetof(struct x86_pcpu, user_rsp) == 8, "PCPU_USER_RSP in uentry.S");
_Static_assert(__builtin_offsetof(struct x86_pcpu, kstack_top) == 16, "PCPU_KSTACK in uentry.S");

static struct x86_pcpu pcpu[HARTS_MAX];

struct idt_gate {
	uint16_t off0, sel;
	uint8_t ist, type;
	uint16_t off1;
	uint32_t off2, zero;
};

static struct idt_gate idt[256] __attribute__((aligned(16)));
extern char trap_stubs[];
extern char x86_syscall_entry[];

#define GATE_INTR 0x8e      /* present, ring 0, 64-bit interrupt gate */
#define GATE_INTR_USER 0xee /* the same, which int3 in ring 3 may raise */
#define VEC_BREAKPOINT 3    /* int3: a user breakpoint is a breakpoint, not a #GP */
#define IST_FAULT 1         /* the stack of double faults and NMIs */

static void idt_fill(void)
{
	for (int v = 0; v < 256; v++) {
		uint64_t a = (uint64_t)(uintptr_t)(trap_stubs + 16 * v);
		idt[v] = (struct idt_gate){
			.off0 = (uint16_t)a, .sel = SEL_KCODE,
			.ist = (v == 2 || v == 8) ? IST_FAULT : 0,
			.type = v == VEC_BREAKPOINT ? GATE_INTR_USER : GATE_INTR, .off1 = (uint16_t)(a >> 16),
			.off2 = (uint32_t)(a >> 32),
		};
	}
}

void x86_cpu_set(void *c)
{
	struct x86_pcpu *p = &pcpu[((struct cpu *)c)->index];
	p->cpu = c;
	wrmsr(MSR_GS_BASE, (uint64_t)(uintptr_t)p);
}

static struct x86_pcpu *this_pcpu(void)
{
	return (struct x86_pcpu *)(uintptr_t)rdmsr(MSR_GS_BASE);
}

void x86_set_user_kstack(uint64_t top)
{
	struct x86_pcpu *p;
	__asm__ volatile("movq %%gs:0, %0" : "=r"(p));
	p = &pcpu[((struct cpu *)p)->index];
	p->kstack_top = top;
	p->tss.rsp[0] = top;
}

/* An NMI's frame ends at the IST top (the CPU pushes from there, 16-byte
 * aligned, and struct trap_frame is the whole of what is pushed), where
 * x86_trap_init_hart left a pointer to the CPU's block. */
static struct x86_pcpu *nmi_pcpu(const struct trap_frame *tf)
{
	return *(struct x86_pcpu *const *)(const void *)(tf + 1);
}

struct cpu *x86_nmi_cpu(const struct trap_frame *tf)
{
	return nmi_pcpu(tf)->cpu;
}

void x86_nmi_kernel_gs(const struct trap_frame *tf)
{
	wrmsr(MSR_GS_BASE, (uint64_t)(uintptr_t)nmi_pcpu(tf));
}

/* Needs: GS base set (x86_cpu_set). Loads this CPU's GDT and TSS, the
 * IDT, and points syscall at x86_syscall_entry. */
void x86_trap_init_hart(void)
{
	struct x86_pcpu *p = this_pcpu();
	if (!idt[0].type)
		idt_fill();
	memset(&p->tss, 0, sizeof p->tss);
	uint8_t *ist_top = p->fault_stack + sizeof p->fault_stack - 16;
	*(struct x86_pcpu **)ist_top = p;
	p->tss.ist[IST_FAULT - 1] = (uint64_t)(uintptr_t)ist_top;
	p->tss.iomap_base = sizeof p->tss;     /* no I/O bitmap: ring 3 gets no ports */
	uint64_t t = (uint64_t)(uintptr_t)&p->tss, lim = sizeof p->tss - 1;
	p->gdt[0] = 0;
	p->gdt[1] = 0x00af9a000000ffffull;     /* kernel code, 64-bit */
	p->gdt[2] = 0x00cf92000000ffffull;     /* kernel data */
	p->gdt[3] = 0x00cff2000000ffffull;     /* user data, DPL 3 */
	p->gdt[4] = 0x00affa000000ffffull;     /* user code, 64-bit, DPL 3 */
	p->gdt[5] = (lim & 0xffff) | ((t & 0xffffff) << 16) | (0x89ull << 40) |
		    ((lim >> 16) << 48) | (((t >> 24) & 0xff) << 56);   /* available 64-bit TSS */
	p->gdt[6] = t >> 32;
	struct { uint16_t lim; uint64_t base; } __attribute__((packed))
		gd = { sizeof p->gdt - 1, (uint64_t)(uintptr_t)p->gdt },
		id = { sizeof idt - 1, (uint64_t)(uintptr_t)idt };
	/* lgdt, then reload CS with a far return and the data segments;
	 * loading GS's selector would clear the GS base: it keeps 0. */
	__asm__ volatile("lgdt %0\n\t"
			 "pushq %1\n\t"
			 "leaq 1f(%%rip), %%rax\n\t"
			 "pushq %%rax\n\t"
			 "lretq\n"
			 "1:\tmovl %2, %%eax\n\t"
			 "movl %%eax, %%ds\n\t"
			 "movl %%eax, %%es\n\t"
			 "movl %%eax, %%ss\n\t"
			 "ltr %w3\n\t"
			 "lidt %4"
			 :: "m"(gd), "i"(SEL_KCODE), "i"(SEL_KDATA), "r"(SEL_TSS), "m"(id)
			 : "rax", "memory");
	/* syscall: CS/SS from STAR[47:32], sysret's from STAR[63:48] + 16/8;
	 * RFLAGS bits cleared on entry: IF, DF, TF, AC. */
	wrmsr(MSR_STAR, ((uint64_t)(SEL_KDATA | 3) << 48) | ((uint64_t)SEL_KCODE << 32));
	wrmsr(MSR_LSTAR, (uint64_t)(uintptr_t)x86_syscall_entry);
	wrmsr(MSR_FMASK, X86_RFLAGS_IF | (1u << 10) | (1u << 8) | (1u << 18));
	wrmsr(MSR_KERNEL_GS_BASE, 0);
}
