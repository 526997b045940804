/* The coherence audit's counter: a MESI-like model of 64-byte cache
 * lines. Every observed access names the thread that made it. A line
 * remembers its last writer and which threads have fetched it since that
 * write; an access by thread T to a line last written by another thread,
 * which T has not fetched since, is a transfer (the line moves to T's
 * cache). A write makes the writer the only holder. Accesses by the main
 * thread (self -1: set-up and checks, outside the workers' run) stand for
 * memory: their writes leave a line with no writer, so the workers'
 * first touch of what the set-up built is not a transfer. */
#ifndef AUDIT_COUNT_H
#define AUDIT_COUNT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUDIT_LINE 64

/* One observed access of n bytes at a by thread self (-1: main), a write
 * or not, made by the code at pc. Never fails (panics if out of memory). */
void audit_note(const volatile void *a, size_t n, bool write, const void *pc, int self);
/* Count transfers and accesses from now on (on) or stop counting; the
 * lines' state is kept either way. */
void audit_counting(bool on);

struct audit_totals {
	uint64_t transfers;      /* counted transfers */
	uint64_t accesses;       /* counted accesses (a range counts once per line) */
	uint64_t sites;          /* distinct code sites (pc) that made a transfer */
};
void audit_totals(struct audit_totals *t);

/* Where counted transfers happened: the code (pc) and one line it moved,
 * with the code whose write made that line move. */
struct audit_site {
	const void *pc;
	uintptr_t line;          /* address of the last line it moved */
	const void *writer_pc;   /* the last write to that line before it moved */
	uint64_t transfers;
};
/* The up to max sites with the most transfers, most first (ties: lower
 * pc first). Returns how many it wrote to out. */
size_t audit_top(struct audit_site *out, size_t max);

#endif
