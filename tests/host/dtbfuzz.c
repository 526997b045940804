/* dtbfuzz [--inputs N] [--seed S] [--corpus DIR]: the kernel's DTB parser
 * against seed blobs (every file of DIR, unchanged, first) and then
 * mutations of them, deterministic from S. Each input must be accepted,
 * with every returned value consistent, or refused with -E_INVAL and a
 * reason (dtbfuzz_oracle.c). A crash, a hang (a watchdog alarm per input),
 * a sanitizer report or an inconsistency counts as a crash; the input is
 * saved as dtbfuzz-crash-S-I.dtb. The last line is
 *   dtbfuzz: <N> inputs, <A> accepted, <R> refused, <C> crashes
 * and the exit status is 0 only when C is 0. */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "dtbfuzz.h"

#define MAX_SEEDS   64
#define MAX_SEED_SZ (256u << 10)
#define WATCHDOG_S  10

struct seed {
	char name[128];
	struct dtb_buf d;
};

void kshim_init(void);   /* kshim.c: the kernel image's place for memmap.c */

static struct seed seeds[MAX_SEEDS];
static int nseeds;

/* What a fatal signal or sanitizer report needs to finish the run. */
static struct {
	unsigned long long seed, done, accepted, refused, crashes;
	const uint8_t *cur;
	uint32_t cur_len;
	unsigned long long cur_index;
} run;

/* Save the current input and print the last line, counting it as a
 * crash. Used on the way out of a fatal signal, a sanitizer report or an
 * inconsistency. */
static void finish_crashed(const char *what)
{
	char name[96], line[200];
	snprintf(name, sizeof name, "dtbfuzz-crash-%llu-%llu.dtb", run.seed, run.cur_index);
	FILE *f = fopen(name, "wb");
	if (f && run.cur) {
		fwrite(run.cur, 1, run.cur_len, f);
		fclose(f);
	}
	int n = snprintf(line, sizeof line,
			 "dtbfuzz: %s on input %llu (saved as %s)\n"
			 "dtbfuzz: %llu inputs, %llu accepted, %llu refused, %llu crashes\n",
			 what, run.cur_index, name, run.done + 1, run.accepted, run.refused,
			 run.crashes + 1);
	if (write(1, line, (size_t)n) < 0)
		_exit(3);
}

static void on_signal(int sig)
{
	finish_crashed(sig == SIGALRM ? "hang (watchdog)" :
		       sig == SIGABRT ? "abort (a sanitizer report, if one is above)" : strsignal(sig));
	_exit(1);
}

/* Sanitizer defaults for any way the program is run (meson test, by
 * hand): a report halts and aborts, and the SIGABRT handler counts it.
 * The runtimes read these before ASAN_OPTIONS / UBSAN_OPTIONS, which may
 * still override them; a build without sanitizers never calls them. */
const char *__asan_default_options(void);
const char *__ubsan_default_options(void);
const char *__asan_default_options(void)
{
	return "halt_on_error=1:abort_on_error=1";
}
const char *__ubsan_default_options(void)
{
	return "halt_on_error=1:abort_on_error=1:print_stacktrace=1";
}

/* Load every regular file of dir (sorted by name, so the order is the
 * same everywhere) as a seed. Returns the count, or -1 on error. */
static int load_corpus(const char *dir)
{
	struct dirent **ents;
	int n = scandir(dir, &ents, NULL, alphasort);
	if (n < 0) {
		perror(dir);
		return -1;
	}
	for (int i = 0; i < n; i++) {
		const char *nm = ents[i]->d_name;
		size_t l = strlen(nm);
		if (l > 4 && !strcmp(nm + l - 4, ".dtb") && nseeds < MAX_SEEDS &&
		    l < sizeof seeds[0].name) {
			char path[4096];
			snprintf(path, sizeof path, "%s/%s", dir, nm);
			FILE *f = fopen(path, "rb");
			struct seed *s = &seeds[nseeds];
			s->d.b = malloc(MAX_SEED_SZ);
			s->d.cap = MAX_SEED_SZ;
			s->d.len = f ? (uint32_t)fread(s->d.b, 1, MAX_SEED_SZ, f) : 0;
			if (f)
				fclose(f);
			if (s->d.len) {
				memcpy(s->name, nm, l + 1);
				nseeds++;
			}
		}
		free(ents[i]);
	}
	free(ents);
	return nseeds;
}

/* The facts a seed's name states ("virt-smp4-256M[-bootargs|-resv].dtb"):
 * hart count and memory size, bootargs, reserved ranges. Returns NULL if
 * *bi agrees, else what differs. */
static const char *seed_facts(const char *name, const struct boot_info *bi)
{
	static char msg[160];
	const char *p = strstr(name, "-smp");
	if (p && atoi(p + 4) != bi->ncpus) {
		snprintf(msg, sizeof msg, "%d cpus, the name says %d", bi->ncpus, atoi(p + 4));
		return msg;
	}
	const char *m = p ? strchr(p + 1, '-') : NULL;
	if (!m)
		m = strstr(name, "M.dtb") ? strrchr(name, '-') : NULL;
	if (m) {
		unsigned long long sz = 0;
		const char *u = m + 1;
		for (; *u >= '0' && *u <= '9'; u++)
			sz = sz * 10 + (unsigned)(*u - '0');
		sz <<= *u == 'G' ? 30 : 20;
		unsigned long long got = 0;
		for (int i = 0; i < bi->nmem; i++)
			got += bi->mem[i].size;
		if (got != sz) {
			snprintf(msg, sizeof msg, "%llu bytes of memory, the name says %llu", got, sz);
			return msg;
		}
	}
	if (strstr(name, "-bootargs") && (!bi->has_bootargs || !bi->bootargs[0]))
		return "no bootargs";
	if (strstr(name, "-resv") && (bi->nresv != 2 || bi->nmemrsv != 1))
		return "not 2 reserved-memory and 1 memreserve ranges";
	return NULL;
}

static void usage(void)
{
	fprintf(stderr, "usage: dtbfuzz [--inputs N] [--seed S] [--corpus DIR]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long inputs = 20000;
	const char *corpus = "tests/host/dtb-corpus";
	for (int i = 1; i < argc; i++) {
		if (i + 1 < argc && !strcmp(argv[i], "--inputs"))
			inputs = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && !strcmp(argv[i], "--seed"))
			run.seed = strtoull(argv[++i], NULL, 0);
		else if (i + 1 < argc && !strcmp(argv[i], "--corpus"))
			corpus = argv[++i];
		else
			usage();
	}
	kshim_init();
	if (load_corpus(corpus) <= 0) {
		fprintf(stderr, "dtbfuzz: no .dtb seeds in %s\n", corpus);
		return 2;
	}
	/* A sanitizer report ends in abort() (abort_on_error=1, above), so
	 * SIGABRT counts it. Under ASan its own
	 * SIGSEGV handler stays: it reports the access before it aborts. */
	int sigs[] = { SIGABRT, SIGALRM, SIGILL,
#ifndef __SANITIZE_ADDRESS__
		       SIGSEGV, SIGBUS, SIGFPE,
#endif
	};
	for (size_t i = 0; i < sizeof sigs / sizeof *sigs; i++)
		signal(sigs[i], on_signal);
	setvbuf(stdout, NULL, _IOLBF, 0);

	/* big enough for every growing mutation */
	struct dtb_buf d = { calloc(1, 2 * MAX_SEED_SZ), 0, 2 * MAX_SEED_SZ };
	char why[256];
	struct boot_info bi;
	for (unsigned long long i = 0; i < inputs; i++) {
		uint64_t rng = run.seed * 0x9e3779b97f4a7c15ull ^ (i + 1) * 0xd1b54a32d192ed03ull;
		const struct seed *s = &seeds[i < (unsigned long long)nseeds ? i : fz_below(&rng,
							(uint32_t)nseeds)];
		memcpy(d.b, s->d.b, s->d.len);
		d.len = s->d.len;
		if (i >= (unsigned long long)nseeds)
			dtb_mutate(&d, &seeds[fz_below(&rng, (uint32_t)nseeds)].d, &rng);

		run.cur = d.b;
		run.cur_len = d.len;
		run.cur_index = i;
		alarm(WATCHDOG_S);
		enum dtb_verdict v = dtb_check(d.b, d.len, &bi, why, sizeof why);
		alarm(0);
		if (v == DTB_ACCEPTED && i < (unsigned long long)nseeds) {
			const char *bad = seed_facts(s->name, &bi);
			if (bad) {
				snprintf(why, sizeof why, "seed %.100s: %.140s", s->name, bad);
				v = DTB_BROKEN;
			}
		} else if (i < (unsigned long long)nseeds) {
			snprintf(why, sizeof why, "seed %.100s refused", s->name);
			v = DTB_BROKEN;
		}
		if (v == DTB_BROKEN) {
			char what[300];
			snprintf(what, sizeof what, "inconsistency: %s", why);
			finish_crashed(what);
			return 1;
		}
		run.done++;
		if (v == DTB_ACCEPTED)
			run.accepted++;
		else
			run.refused++;
	}
	printf("dtbfuzz: %llu inputs, %llu accepted, %llu refused, %llu crashes\n",
	       run.done, run.accepted, run.refused, run.crashes);
	return run.crashes ? 1 : 0;
}
