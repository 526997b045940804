/* filedemo: clients share a read-only file image through the file pager.
 * The image (P pages of known bytes) lives in this task; C clients (copies
 * of this program) each call in when ready, get the image attached at
 * FD_VA, read it all, report its CRC-32 and exit. Every page is read into
 * a frame once and mapped into every client. Ends with
 * "filedemo: ... ok" when each client saw the image's CRC and the kernel's
 * counters came back. */
#include "ulib.h"
#include "testlib.h"
#include "filepager.h"

#define ROLE_FD_CLIENT 1
#define FD_VA 0x2000000000UL
#define FD_MAX_CLIENTS 8

static struct {
	struct filepager fp;
	long task[FD_MAX_CLIENTS];
	uint32_t crc[FD_MAX_CLIENTS];
	long status[FD_MAX_CLIENTS];
	unsigned clients, gone, attached;
} d;

static long on_message(struct pager *pg, uint64_t badge, const uint64_t w[4], uint64_t reply[4])
{
	(void)pg;
	unsigned k = (unsigned)badge - 1;
	if (k >= d.clients)
		return 0;
	if (w[0] == MAP_READY) {
		long err = 0;
		if (filepager_attach(&d.fp, d.task[k], FD_VA, &err))
			d.attached++;
		reply[0] = (uint64_t)err;
		reply[1] = d.fp.size;
	} else if (w[0] == MAP_DONE) {
		d.crc[k] = (uint32_t)w[1];
	}
	return 1;
}

static void on_gone(struct pager *pg, struct pager_client *c, long status)
{
	for (unsigned k = 0; k < d.clients; k++)
		if (d.task[k] == c->task)
			d.status[k] = status;
	if (++d.gone == d.clients)
		pager_stop(pg);
}

static const struct pager_ops demo_ops = { .message = on_message, .client_gone = on_gone };

static int run(unsigned long pages, unsigned clients)
{
	struct kcounters before;
	settled_counters(&before);
	uint64_t size = pages * 4096 - 100;   /* a file whose last page is partly filled */
	uint8_t *image = malloc(size);
	if (!image)
		return 1;
	uint64_t x = 0x9e3779b97f4a7c15ULL;
	for (uint64_t i = 0; i < size; i++)
		image[i] = (uint8_t)(i % 4096 < 8 ? i / 4096 >> (8 * (i % 8)) : xorshift64(&x));
	uint32_t want = crc32_update(0, image, size);
	memset(&d, 0, sizeof d);
	d.clients = clients;
	long r = filepager_init(&d.fp, image, size, &demo_ops, NULL);
	if (r) {
		printf("filedemo: file pager: %s\n", err_name(r));
		return 1;
	}
	long given[FD_MAX_CLIENTS];
	for (unsigned k = 0; k < clients && !r; k++) {
		d.task[k] = slot_alloc();
		given[k] = slot_alloc();
		r = cap_mint(d.fp.pg.ep, given[k], R_SEND, k + 1, 0, 0);
		if (!r)
			r = task_spawn_q(self_module(), ROLE_FD_CLIENT, d.task[k],
					 QUOTA(256 + pages / 128, 2, 1, 0), given[k]);
		slot_drop(&given[k]);
		if (r) {
			printf("filedemo: spawn client %u: %s\n", k, err_name(r));
			d.clients = k;
		}
	}
	if (d.clients)
		r = pager_serve(&d.fp.pg);
	int ok = !r && d.clients == clients && d.attached == clients;
	for (unsigned k = 0; k < d.clients; k++) {
		long st = task_wait(d.task[k]);
		slot_drop(&d.task[k]);
		if (st || d.status[k] || d.crc[k] != want) {
			printf("filedemo: client %u: status %ld, crc32 %08x (image %08x)\n", k, st, d.crc[k], want);
			ok = 0;
		}
	}
	unsigned long faults = d.fp.pg.faults, cached = d.fp.cached, maps = d.fp.maps;
	filepager_fini(&d.fp);
	free(image);
	char why[160];
	if (pg_counters_back(&before, 0, why)) {
		printf("filedemo: %s\n", why);
		ok = 0;
	}
	printf("filedemo: %lu pages, %u clients, %lu faults, %lu frames for %lu mappings, crc32 %08x %s\n",
	       pages, clients, faults, cached, maps, want, ok && cached == pages ? "ok" : "FAILED");
	return ok && cached == pages ? 0 : 1;
}

int main(int argc, char **argv)
{
	if (spawn_arg() == ROLE_FD_CLIENT)
		return map_client(FD_VA);
	unsigned long pages = 1024, clients = 2;
	for (int i = 1; i < argc; i++) {
		unsigned long *v = !strcmp(argv[i], "--pages") ? &pages :
				   !strcmp(argv[i], "--clients") ? &clients : NULL;
		if (!v || i + 1 >= argc || parse_ulong(argv[++i], v))
			return prog_usage("filedemo [--pages P] [--clients C]");
	}
	if (pages < 1 || pages > 65536 || clients < 1 || clients > FD_MAX_CLIENTS)
		return prog_usage("filedemo [--pages 1..65536] [--clients 1..8]");
	return run(pages, (unsigned)clients);
}
