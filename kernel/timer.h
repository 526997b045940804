/* Per-hart periodic tick: Sstc stimecmp when every hart has it, SBI TIME
 * otherwise. */
#ifndef KERNEL_TIMER_H
#define KERNEL_TIMER_H

#include <stdint.h>

#define TICK_HZ 100

/* Choose the mechanism and period from the DTB facts. Boot hart, once,
 * before any timer_start_hart. Returns 0 or -E_INVAL without a timebase. */
int timer_init(uint64_t timebase_hz, int use_sstc);

/* Arm this hart's first tick and enable the timer interrupt.
 * Returns 0 or -E_IO if the SBI call failed. */
int timer_start_hart(void);

/* Timer interrupt handler: count the tick, arm the next one, drive RCU.
 * irqs_were_on: the interrupted context had interrupts enabled. */
void timer_interrupt(int irqs_were_on);

uint64_t timer_timebase(void);       /* Hz */
uint64_t timer_tick_period(void);    /* timebase units between ticks */
int timer_uses_sstc(void);

/* Busy-wait `us` microseconds by the time counter (interrupts may run). */
void udelay(uint64_t us);
/* Time counter value (arch_time_now) `us` microseconds from now. */
uint64_t time_after_us(uint64_t us);

#endif
