/* Harts: bring-up through SBI HSM, IPIs and one-slot cross-calls. */
#ifndef KERNEL_SMP_H
#define KERNEL_SMP_H

#include <stdint.h>
#include "cpu.h"
#include "bootinfo.h"

/*
 * Start every other usable hart the DTB lists (status okay, has an MMU)
 * with HSM and wait for each to come online (5 s, up to 60 s while the
 * firmware has not released it yet). Harts SBI refuses to start are
 * reported (the first four by id, then a count) and left out; at the first
 * hart that does not come online the boot goes on without it and the rest.
 * At most harts_max harts. Boot hart only, after harts_init. Returns harts
 * online.
 */
uint32_t smp_start_harts(const struct boot_info *bi);

/* Send a software interrupt to the hart with logical index idx.
 * Returns 0 or -E_IO (SBI error). */
int ipi_send(uint32_t idx);

/* Record "hart `from` pinged you" in target's mailbox, then IPI it. */
int ipi_ping(uint32_t from, uint32_t target);

/* Supervisor software interrupt handler. */
void ipi_interrupt(void);

/*
 * Run fn(arg) on hart idx in interrupt context. smp_call_async returns once
 * the request is posted (waiting for the hart's mailbox to be free first);
 * smp_call_wait waits until hart idx has finished it, or until `us`
 * microseconds passed (-E_TIMEDOUT). Never call for the current hart, and
 * not with interrupts disabled (two harts calling each other would stall).
 */
int smp_call_async(uint32_t idx, smp_fn_t fn, void *arg);
int smp_call_wait(uint32_t idx, uint64_t us);

/* The same for every online hart but this one, in index order: post to
 * each, or wait for each (up to `us` microseconds per hart). On the first
 * failure returns its error with *bad = that hart's index (harts before it
 * were already posted to / finished). Same restrictions as above. */
int smp_call_others_async(smp_fn_t fn, void *arg, uint32_t *bad);
int smp_call_others_wait(uint64_t us, uint32_t *bad);

/* Idle loop for harts with nothing to do: wfi with interrupts on. */
void idle_loop(void) __attribute__((noreturn));

#endif
