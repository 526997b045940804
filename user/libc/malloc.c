/* The heap: first fit over one free list kept in address order, so a
 * freed block merges with free neighbours; it grows through the
 * runtime's sbrk (start.c), which hands out contiguous memory. Every
 * call holds the C library's recursive lock (the runtime's, sys/lock.h),
 * so threads may share the heap. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/lock.h>
#include <unistd.h>

/* Every block starts with this header; a free block's next links the
 * list. size counts the header and is a multiple of ALIGN. */
struct blk {
	size_t size;
	struct blk *next;
};
#define ALIGN 16
#define HDR sizeof(struct blk)
#define MIN_SPLIT (HDR + ALIGN)    /* a smaller remainder stays with the block */
#define GROW_MIN 0x10000UL         /* the least the heap grows by */

_Static_assert(sizeof(struct blk) % ALIGN == 0, "blocks keep their payload 16-byte aligned");

static struct blk *free_list;

static void heap_lock(void) { __retarget_lock_acquire_recursive(&__lock___libc_recursive_mutex); }
static void heap_unlock(void) { __retarget_lock_release_recursive(&__lock___libc_recursive_mutex); }

/* Put b on the free list in address order, merged with a free block
 * right before or after it. Needs the heap lock. A b that overlaps a
 * free block was freed twice or never allocated: the heap cannot be
 * trusted after that, so the program ends (status 134, as abort). */
static void free_insert(struct blk *b)
{
	struct blk **pp = &free_list, *prev = NULL;
	while (*pp && *pp < b) {
		prev = *pp;
		pp = &prev->next;
	}
	struct blk *next = *pp;
	if ((prev && (char *)prev + prev->size > (char *)b) ||
	    (next && (char *)b + b->size > (char *)next)) {
		printf("libc: free(%p): not an allocated block\n", (void *)(b + 1));
		_exit(134);
	}
	b->next = next;
	if (next && (char *)b + b->size == (char *)next) {
		b->size += next->size;
		b->next = next->next;
	}
	if (prev && (char *)prev + prev->size == (char *)b) {
		prev->size += b->size;
		prev->next = b->next;
	} else {
		*pp = b;
	}
}

/* Take a block of exactly `need` bytes from the free list (first fit;
 * the head of a larger block, whose tail stays free): it, or NULL.
 * Needs the heap lock. The head, so that the heap's used part grows
 * from its low end as with a break-based allocator, and the pages a
 * program touches are the lowest ones: a program that touches its heap
 * first (to compare memory counts) then reuses those pages. */
static struct blk *free_take(size_t need)
{
	for (struct blk **pp = &free_list; *pp; pp = &(*pp)->next) {
		struct blk *b = *pp;
		if (b->size < need)
			continue;
		if (b->size - need >= MIN_SPLIT) {
			struct blk *rest = (struct blk *)((char *)b + need);
			rest->size = b->size - need;
			rest->next = b->next;
			*pp = rest;
			b->size = need;
		} else {
			*pp = b->next;
		}
		return b;
	}
	return NULL;
}

/* n bytes, 16-byte aligned; NULL when the heap window or the task's
 * memory quota is full (sbrk refuses). */
void *malloc(size_t n)
{
	if (n > SIZE_MAX - HDR - ALIGN)
		return NULL;
	size_t need = (n + HDR + ALIGN - 1) & ~(size_t)(ALIGN - 1);
	heap_lock();
	struct blk *b = free_take(need);
	if (!b) {
		size_t grow = need > GROW_MIN ? need : GROW_MIN;
		void *p = sbrk((ptrdiff_t)grow);
		if (p == (void *)-1 && grow > need)     /* the window's last bytes */
			p = sbrk((ptrdiff_t)(grow = need));
		if (p != (void *)-1) {
			struct blk *fresh = p;
			fresh->size = grow;
			free_insert(fresh);
			b = free_take(need);
		}
	}
	heap_unlock();
	return b ? b + 1 : NULL;
}

void free(void *p)
{
	if (!p)
		return;
	heap_lock();
	free_insert((struct blk *)p - 1);
	heap_unlock();
}

/* count * size bytes, zeroed; NULL when that overflows or malloc fails. */
void *calloc(size_t count, size_t size)
{
	if (size && count > SIZE_MAX / size)
		return NULL;
	void *p = malloc(count * size);
	if (p)
		memset(p, 0, count * size);
	return p;
}
