/* sievedemo: a client looks primes up in a bitmap that the sieve pager
 * computes page by page as the client touches it, keeping at most
 * --resident pages mapped. The client (a copy of this program) checks
 * random odd numbers against trial division and counts the primes of the
 * first page; the last line says whether every answer was right. */
#include "ulib.h"
#include "testlib.h"
#include "sievepager.h"

#define ROLE_SIEVE_CLIENT 1
#define SV_VA 0x2000000000UL
enum { SV_READY = 1, SV_DONE };

static struct {
	struct sievepager sp;
	long task;
	uint64_t wrong, primes_first_page, status;
} d;

static int is_prime_slow(uint64_t n)
{
	if (n < 2)
		return 0;
	for (uint64_t k = 2; k * k <= n; k++)
		if (n % k == 0)
			return 0;
	return 1;
}

/* The client: after the ready call, look numbers up (w1 queries below w2). */
static int client(void)
{
	uint64_t w[4] = { SV_READY, 0, 0, 0 };
	struct sysret r = ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	if (r.a0 || r.a1)
		return 3;
	uint64_t queries = (uint64_t)r.a2, limit = (uint64_t)r.a3, x = 0x2545f4914f6cdd1dULL, wrong = 0;
	const volatile uint8_t *bits = (const uint8_t *)SV_VA;
	for (uint64_t q = 0; q < queries; q++) {
		uint64_t n = (xorshift64(&x) % (limit / 2)) * 2 + 1;
		int says = bits[n / 16] >> (n / 2 % 8) & 1;
		wrong += says != is_prime_slow(n);
	}
	uint64_t count = 1;                       /* 2, the even prime */
	for (uint64_t n = 1; n < SIEVE_PAGE_NUMBERS; n += 2)
		count += bits[n / 16] >> (n / 2 % 8) & 1;
	w[0] = SV_DONE;
	w[1] = wrong;
	w[2] = count;
	r = ipc(SYS_CALL, SLOT_GIVEN, w, SLOT_NONE);
	return r.a0 ? 4 : 0;
}

static uint64_t queries, pages;
static long on_message(struct pager *pg, uint64_t badge, const uint64_t w[4], uint64_t reply[4])
{
	(void)pg, (void)badge;
	if (w[0] == SV_READY) {
		long err = 0;
		sievepager_attach(&d.sp, d.task, SV_VA, pages, &err);
		reply[0] = (uint64_t)err;
		reply[1] = queries;
		reply[2] = pages * SIEVE_PAGE_NUMBERS;
	} else if (w[0] == SV_DONE) {
		d.wrong = w[1];
		d.primes_first_page = w[2];
	}
	return 1;
}

static void on_gone(struct pager *pg, struct pager_client *c, long status)
{
	(void)c;
	d.status = (uint64_t)status;
	pager_stop(pg);
}

static const struct pager_ops demo_ops = { .message = on_message, .client_gone = on_gone };

int main(int argc, char **argv)
{
	if (spawn_arg() == ROLE_SIEVE_CLIENT)
		return client();
	unsigned long resident = 64, mib = 16;
	queries = 2000;
	for (int i = 1; i < argc; i++) {
		unsigned long *v = !strcmp(argv[i], "--queries") ? (unsigned long *)&queries :
				   !strcmp(argv[i], "--resident") ? &resident :
				   !strcmp(argv[i], "--mib") ? &mib : NULL;
		if (!v || i + 1 >= argc || parse_ulong(argv[++i], v))
			return prog_usage("sievedemo [--queries Q] [--resident K] [--mib M]");
	}
	if (!resident || !mib || mib > 1024 || !queries)
		return prog_usage("sievedemo [--queries Q >= 1] [--resident K >= 1] [--mib 1..1024]");
	pages = mib * 256;                        /* 4 KiB pages in a MiB of bitmap */
	struct kcounters before;
	settled_counters(&before);
	long r = sievepager_init(&d.sp, resident, &demo_ops);
	long given = slot_alloc();
	d.task = slot_alloc();
	if (!r)
		r = cap_mint(d.sp.pg.ep, given, R_SEND, 1, 0, 0);
	if (!r)
		r = task_spawn_q(self_module(), ROLE_SIEVE_CLIENT, d.task, QUOTA(256 + pages / 128, 2, 1, 0),
				 given);
	slot_drop(&given);
	if (!r)
		r = pager_serve(&d.sp.pg);
	long st = r ? -1 : task_wait(d.task);
	slot_drop(&d.task);
	unsigned long faults = d.sp.pg.faults;
	sievepager_fini(&d.sp);
	char why[160] = "";
	int leak = pg_counters_back(&before, 0, why);
	int ok = !r && !st && !d.status && !d.wrong && d.primes_first_page == 6542 && !leak;
	if (r)
		printf("sievedemo: %s\n", err_name(r));
	if (leak)
		printf("sievedemo: %s\n", why);
	printf("sievedemo: %lu queries below %lu, %lu wrong, pi(65536) = %lu, %lu faults, %lu pages computed, "
	       "%lu evicted (%lu resident at most) %s\n",
	       (unsigned long)queries, (unsigned long)(pages * SIEVE_PAGE_NUMBERS), (unsigned long)d.wrong,
	       (unsigned long)d.primes_first_page, faults, d.sp.computed, d.sp.evicted, resident,
	       ok ? "ok" : "FAILED");
	return ok ? 0 : 1;
}
