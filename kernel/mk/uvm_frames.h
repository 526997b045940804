/* Frame bookkeeping of uvm.c used by region.c and clone.c: how many
 * mappings a data frame has (for R_SHARE), its reference count, and whom
 * its quota charge belongs to. (Owner: mm.) */
#ifndef KERNEL_MK_UVM_FRAMES_H
#define KERNEL_MK_UVM_FRAMES_H

#include "mk.h"

/* A mapping of pa is about to be made: 0 and the map count goes up, or
 * -E_PERM (nothing changed) when pa is mapped already and !share. */
int uvm_frame_map_begin(uint64_t pa, int share);
/* A mapping of pa was made without uvm_frame_map_begin (fault, clone). */
void uvm_frame_mapped(uint64_t pa);
/* A mapping of pa went away other than through frame_release (mm_take),
 * or one counted by uvm_frame_map_begin was not made after all. */
void uvm_frame_unmapped(uint64_t pa);
/* References (mappings, caps, kernel holds) and mappings of pa now. */
uint32_t uvm_frame_refs(uint64_t pa);
/* The live task pa is charged to, or NULL. */
struct task *uvm_frame_owner(uint64_t pa);
/* Charge pa to t from now on (t already paid for it; the old owner, if
 * any and alive, is refunded). */
void uvm_frame_recharge(uint64_t pa, struct task *t);
/* At a reap: frames still charged to dead task `from` are charged to `to`
 * (its parent, or NULL) from now on. */
void uvm_frames_inherit(struct task *from, struct task *to);
/* Zeroed frames the fault path has cached on this hart, and in *top the
 * one the next fault here takes (0 when none). Needs: interrupts off. */
unsigned uvm_zframes_here(uint64_t *top);

#endif
