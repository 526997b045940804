/* fsmap PATH [--tasks N]: map a file of the attached ext2 disk into N
 * tasks (default 2) through the disk file pager and check they all see
 * the same bytes.
 *
 * The pager serves on a thread of its own; each task is a copy of this
 * program in the client role: it calls in when ready, gets the file's
 * memory object mapped read-only at FM_VA, computes the CRC-32 of the
 * whole mapping and reports it. Every file page is read from the disk
 * once, into one frame of the object that every task maps. Prints the
 * sharing (the object's frames, the pages the tasks have mapped), then
 * the contract line
 *   fsmap: <PATH>: <BYTES> bytes, crc32 <8 hex digits>
 * when every task's CRC equals the one of the file read through the
 * reader directly, the object holds one frame a page, every task mapped
 * every page and the pager read ahead, and exits 0; else says what
 * differed and exits 1.
 * Usage errors: status 2. */
#include "ulib.h"
#include "testlib.h"
#include <patina/mobj.h>
#include "fspager.h"

#define ROLE_FM_CLIENT 1
#define FM_VA 0x3000000000UL
#define FM_MAX_TASKS 8
#define FM_STOP 0x100              /* the badge of our own call that stops the pager */

static struct {
	struct fsdisk disk;
	struct fspager fp;
	long task[FM_MAX_TASKS];
	uint32_t crc[FM_MAX_TASKS];
	int reported[FM_MAX_TASKS];
	unsigned tasks, attached;
	unsigned long mapped;          /* pages the tasks had mapped when they reported */
	long served;                   /* pager_serve's result */
	int done;                      /* the pager thread has returned */
} d;

/* Pages of the file task `task` has mapped at FM_VA now, or an error. */
static long mapped_pages(long task)
{
	static uint64_t bits[3 * REGION_BITMAP_WORDS(0, MOBJ_MAX_PAGES * 4096UL)];
	long whole = slot_alloc();
	if (whole < 0)
		return -E_NOMEM;
	long r = task_region(task, whole);
	if (!r)
		r = region_bitmap(whole, FM_VA, FM_VA + d.fp.pages * 4096UL, bits, 0);
	slot_drop(&whole);
	return r;
}

static long on_message(struct pager *pg, uint64_t badge, const uint64_t w[4], uint64_t reply[4])
{
	if (badge == FM_STOP) {
		pager_stop(pg);
		return 1;
	}
	unsigned k = (unsigned)badge - 1;
	if (k >= d.tasks)
		return 0;
	if (w[0] == MAP_READY) {
		long err = fspager_open(&d.fp, d.task[k], FM_VA);
		if (!err)
			d.attached++;
		reply[0] = (uint64_t)err;
		reply[1] = d.fp.file.size;
	} else if (w[0] == MAP_DONE) {
		long n = mapped_pages(d.task[k]);
		d.crc[k] = (uint32_t)w[1];
		d.reported[k] = n >= 0;
		d.mapped += n > 0 ? (unsigned long)n : 0;
	}
	return 1;
}

static void serve(void *arg)
{
	(void)arg;
	d.served = pager_serve(&d.fp.pg);
	__atomic_store_n(&d.done, 1, __ATOMIC_RELEASE);
}

/* Stop the pager thread (every task is gone: nothing more comes) and
 * wait until it has returned. */
static void stop_pager(void)
{
	long s = slot_alloc();
	uint64_t w[4] = { 0 };
	if (s >= 0 && !cap_mint(d.fp.pg.ep, s, R_SEND, FM_STOP, 0, 0))
		ipc(SYS_CALL, s, w, SLOT_NONE);
	slot_drop(&s);
	while (!__atomic_load_n(&d.done, __ATOMIC_ACQUIRE))
		sys_yield();
}

static const struct pager_ops fm_ops = { .message = on_message };

/* The file's CRC-32 read through the reader, not mapped: 0 or the error. */
static long direct_crc(const struct ext2_inode *in, uint32_t *crc)
{
	static uint8_t buf[64 * 1024];
	uint32_t c = 0;
	for (uint64_t off = 0; off < in->size; off += sizeof buf) {
		long n = ext2_read(&d.disk.fs, in, off, buf, sizeof buf);
		if (n <= 0)
			return n ? n : -E_IO;
		c = crc32_update(c, buf, (size_t)n);
	}
	*crc = c;
	return 0;
}

/* Spawn the tasks, serve them from a thread, wait: 0 when every task
 * reported `want`. */
static int run_tasks(const char *path, const struct ext2_inode *in, uint32_t want)
{
	long r = fspager_init(&d.fp, &d.disk, in, &fm_ops);
	if (r) {
		printf("fsmap: pager: %s\n", err_name(r));
		return 1;
	}
	unsigned long pages = d.fp.pages;
	unsigned asked = d.tasks;
	for (unsigned k = 0; k < asked && !r; k++) {
		d.task[k] = slot_alloc();
		long given = slot_alloc();
		r = cap_mint(d.fp.pg.ep, given, R_SEND, k + 1, 0, 0);
		if (!r)
			r = task_spawn_q(self_module(), ROLE_FM_CLIENT, d.task[k],
					 QUOTA(256 + pages / 128, 2, 1, 0), given);
		slot_drop(&given);
		if (r) {
			printf("fsmap: spawn task %u: %s\n", k, err_name(r));
			slot_release(d.task[k]);
			d.tasks = k;
		}
	}
	if (d.tasks && (r = uthread_start(serve, NULL, -1, 1)) < 0) {
		printf("fsmap: pager thread: %s\n", err_name(r));
		for (unsigned k = 0; k < d.tasks; k++)
			task_kill(d.task[k]);
		d.done = 1;
	}
	/* Block in the waits (a spinning thread would take a hart from the
	 * tasks); once all are gone, nothing maps the object but it is
	 * still whole: count its frames, then drop it. */
	long st[FM_MAX_TASKS];
	for (unsigned k = 0; k < d.tasks; k++)
		st[k] = task_wait(d.task[k]);
	if (d.tasks && !d.done)
		stop_pager();
	int ok = d.tasks == asked && !d.served && d.attached == asked;
	for (unsigned k = 0; k < d.tasks; k++) {
		slot_drop(&d.task[k]);
		if (st[k] || !d.reported[k] || d.crc[k] != want) {
			printf("fsmap: task %u: status %ld, crc32 %08x (file %08x)\n", k, st[k], d.crc[k], want);
			ok = 0;
		}
	}
	long held = fspager_held(&d.fp);
	printf("fsmap: %u tasks, %lu pages: %ld frames for %lu mappings, %lu faults, "
	       "%lu block requests for %lu pages\n", asked, pages, held, d.mapped, d.fp.faults,
	       d.disk.requests, d.disk.pages_read);
	unsigned long supplied = d.fp.supplied, reads = d.fp.faults_read;
	fspager_fini(&d.fp);
	if (held != (long)pages || supplied != pages || d.mapped != pages * asked) {
		printf("fsmap: %s: expected %lu frames for %lu mappings (%lu supplied)\n", path, pages,
		       pages * asked, supplied);
		ok = 0;
	}
	if (pages > 1 && reads >= pages) {   /* each fault that read brought one page */
		printf("fsmap: %s: no read-ahead: %lu faults read %lu pages\n", path, reads, supplied);
		ok = 0;
	}
	return ok ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (spawn_arg() == ROLE_FM_CLIENT)
		return map_client(FM_VA);
	const char *path = NULL;
	unsigned long tasks = 2;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--tasks")) {
			if (i + 1 >= argc || parse_ulong(argv[++i], &tasks) || tasks < 1 || tasks > FM_MAX_TASKS)
				return prog_usage("fsmap PATH [--tasks 1..8]");
		} else if (argv[i][0] == '-' || path) {
			return prog_usage("fsmap PATH [--tasks 1..8]");
		} else {
			path = argv[i];
		}
	}
	if (!path)
		return prog_usage("fsmap PATH [--tasks 1..8]");
	memset(&d, 0, sizeof d);
	d.tasks = (unsigned)tasks;
	long r = fsdisk_open(&d.disk);
	if (r) {
		printf("fsmap: disk: %s\n", err_name(r));
		return 1;
	}
	struct ext2_inode in;
	uint32_t want = 0;
	if (!(r = ext2_lookup(&d.disk.fs, path, &in)) && ext2_type(&in) != EXT2_T_REG)
		r = -E_INVAL;
	if (!r)
		r = direct_crc(&in, &want);
	int status = 1;
	if (r)
		printf("fsmap: %s: %s\n", path, err_name(r));
	else if (!in.size)
		status = 0;                /* nothing to map: the empty file's CRC */
	else {
		d.disk.requests = d.disk.pages_read = 0;   /* count the pager's alone */
		status = run_tasks(path, &in, want);
	}
	fsdisk_close(&d.disk);
	if (!status)
		printf("fsmap: %s: %llu bytes, crc32 %08x\n", path, (unsigned long long)in.size, want);
	return status;
}
