/* ext2check: the ext2 reader (lib/ext2) against the host.
 *
 *   ext2check IMAGE DIR
 *       IMAGE was made from DIR (mke2fs -d): every entry of DIR is looked
 *       up in the image and compared (type, size, every byte, CRC-32, and
 *       reads at odd offsets and lengths), every directory is listed and
 *       its names compared both ways, and lookups that must fail do.
 *   ext2check --corrupt IMAGE [--seed S] [--rounds R]
 *       Planted corruptions must give their errors (a bad magic, block
 *       size, feature, directory record, block pointer; a truncated image),
 *       then R rounds of random damage (bytes flipped in blocks the reader
 *       reads one at a time: superblock, descriptors, inode tables,
 *       directories, indirect blocks; or a truncated image) must give
 *       errors or wrong data, never a crash: this program is built with
 *       AddressSanitizer and UBSan where the compiler has them.
 *
 * Prints one summary line and exits 0 when every check held, else 1. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>
#include <patina/errno.h>
#include "ext2.h"
#include "crc32.h"
#include "testutil.h"

static unsigned failures;

static void check_failed(void)
{
	if (++failures > 20)
		exit(1);
}

struct image {
	uint8_t *bytes;
	uint64_t size;
	/* Single-block reads seen (the reader's metadata reads), when set. */
	uint64_t *seen;
	unsigned nseen, maxseen;
	uint32_t block_sectors;
};

static long image_read(void *ctx, uint64_t sector, uint32_t count, void *buf)
{
	struct image *im = ctx;
	if (sector > im->size / EXT2_SECTOR || count > im->size / EXT2_SECTOR - sector)
		return -E_RANGE;
	memcpy(buf, im->bytes + sector * EXT2_SECTOR, (size_t)count * EXT2_SECTOR);
	if (im->seen && count == im->block_sectors && im->nseen < im->maxseen)
		im->seen[im->nseen++] = sector;
	return 0;
}

static uint8_t *slurp(const char *path, uint64_t *size)
{
	int fd = open(path, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st)) {
		fprintf(stderr, "ext2check: %s: %s\n", path, strerror(errno));
		exit(1);
	}
	uint8_t *p = malloc(st.st_size ? (size_t)st.st_size : 1);
	uint64_t got = 0;
	while (p && got < (uint64_t)st.st_size) {
		ssize_t n = read(fd, p + got, (size_t)st.st_size - got);
		if (n <= 0) {
			fprintf(stderr, "ext2check: %s: short read\n", path);
			exit(1);
		}
		got += (uint64_t)n;
	}
	close(fd);
	if (!p)
		exit(1);
	*size = got;
	return p;
}

/* ---- IMAGE DIR: the image against the folder it was made from ---- */

static struct {
	unsigned dirs, files, links;
	uint64_t bytes;
} seen;

static unsigned host_type(mode_t m)
{
	return S_ISREG(m) ? EXT2_T_REG : S_ISDIR(m) ? EXT2_T_DIR : S_ISLNK(m) ? EXT2_T_LNK : EXT2_T_OTHER;
}

/* A regular file: whole, then pieces at odd offsets, then past the end. */
static void compare_file(struct ext2 *fs, const char *host, const char *path, const struct ext2_inode *in)
{
	uint64_t size;
	uint8_t *want = slurp(host, &size);
	CHECK(in->size == size, "%s: size %llu, host %llu", path, (unsigned long long)in->size,
	      (unsigned long long)size);
	uint8_t *got = malloc(size + 8192);
	memset(got, 0xa5, size + 8192);
	long n = ext2_read(fs, in, 0, got, size + 8192);
	CHECK(n == (long)size, "%s: read %ld of %llu", path, n, (unsigned long long)size);
	CHECK(!memcmp(got, want, size), "%s: bytes differ", path);
	CHECK(got[size] == 0xa5, "%s: wrote past the file's end", path);
	uint32_t c = crc32_update(0, got, size), w = crc32_update(0, want, size);
	CHECK(c == w, "%s: crc32 %08x, host %08x", path, c, w);
	uint64_t x = size * 2654435761u + 1;
	for (unsigned k = 0; k < 64 && size; k++) {
		uint64_t off = xorshift64(&x) % size, len = 1 + xorshift64(&x) % 9000;
		uint64_t expect = len < size - off ? len : size - off;
		n = ext2_read(fs, in, off, got, len);
		CHECK(n == (long)expect && !memcmp(got, want + off, expect),
		      "%s: read at %llu of %llu: %ld", path, (unsigned long long)off, (unsigned long long)len, n);
	}
	CHECK(ext2_read(fs, in, size, got, 10) == 0, "%s: read at the end", path);
	free(got);
	free(want);
	seen.files++;
	seen.bytes += size;
}

static int listed(struct ext2_dirent *ents, unsigned n, const char *name)
{
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(ents[i].name, name))
			return (int)i;
	return -1;
}

/* Directory `path` (image) against `host`, recursively. */
static void compare_dir(struct ext2 *fs, const char *host, const char *path, int root)
{
	struct ext2_inode in;
	long r = ext2_lookup(fs, path, &in);
	CHECK(!r, "%s: lookup: %s", path, err_name(r));
	if (r)
		return;
	struct ext2_dir d;
	CHECK(!ext2_dir_open(fs, &in, &d), "%s: not a directory", path);
	unsigned max = 4096, n = 0;
	struct ext2_dirent *ents = malloc(max * sizeof *ents);
	while (n < max && (r = ext2_dir_next(fs, &d, &ents[n])) == 1)
		n++;
	CHECK(r == 0, "%s: listing: %ld", path, r);
	seen.dirs++;

	DIR *dir = opendir(host);
	struct dirent *e;
	unsigned hostn = 0;
	while (dir && (e = readdir(dir))) {
		if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
			continue;
		hostn++;
		char hp[4096], ip[4096];
		snprintf(hp, sizeof hp, "%s/%s", host, e->d_name);
		snprintf(ip, sizeof ip, "%s%s%s", path, root ? "" : "/", e->d_name);
		struct stat st;
		CHECK(!lstat(hp, &st), "%s: lstat", hp);
		int i = listed(ents, n, e->d_name);
		CHECK(i >= 0, "%s: not listed", ip);
		struct ext2_inode fin;
		r = ext2_lookup(fs, ip, &fin);
		CHECK(!r, "%s: lookup: %s", ip, err_name(r));
		if (i < 0 || r)
			continue;
		unsigned t = host_type(st.st_mode);
		CHECK(ents[i].type == t && ext2_type(&fin) == t, "%s: type %u/%u, host %u", ip, ents[i].type,
		      ext2_type(&fin), t);
		CHECK(ents[i].ino == fin.ino, "%s: listed inode %u, looked up %u", ip, ents[i].ino, fin.ino);
		if (t == EXT2_T_REG) {
			CHECK(ents[i].size == (uint64_t)st.st_size, "%s: listed size", ip);
			compare_file(fs, hp, ip, &fin);
		} else if (t == EXT2_T_DIR) {
			compare_dir(fs, hp, ip, 0);
		} else if (t == EXT2_T_LNK) {
			CHECK(fin.size == (uint64_t)st.st_size, "%s: link size %llu", ip,
			      (unsigned long long)fin.size);
			seen.links++;
		}
	}
	if (dir)
		closedir(dir);
	/* Both ways: the image holds nothing the folder does not, but its
	 * own "." and ".." and the root's lost+found. */
	unsigned extra = 2 + (root && listed(ents, n, "lost+found") >= 0);
	CHECK(listed(ents, n, ".") >= 0 && listed(ents, n, "..") >= 0, "%s: no . or ..", path);
	CHECK(n == hostn + extra, "%s: %u entries, host %u (+%u)", path, n, hostn, extra);
	free(ents);
}

static int compare(const char *img, const char *dir)
{
	struct image im = { 0 };
	im.bytes = slurp(img, &im.size);
	static struct ext2 fs;
	long r = ext2_mount(&fs, image_read, &im);
	CHECK(!r, "%s: mount: %s", img, err_name(r));
	if (r)
		return 1;
	compare_dir(&fs, dir, "/", 1);
	/* Lookups that must fail. */
	struct ext2_inode in;
	char longname[EXT2_NAME_MAX + 3] = "/";
	memset(longname + 1, 'x', EXT2_NAME_MAX + 1);
	longname[EXT2_NAME_MAX + 2] = 0;
	CHECK(ext2_lookup(&fs, "/no-such-file", &in) == -E_NOENT, "missing file found");
	CHECK(ext2_lookup(&fs, longname, &in) == -E_INVAL, "a 256-byte name accepted");
	char *longpath = malloc(EXT2_PATH_MAX + 2);
	memset(longpath, '/', EXT2_PATH_MAX + 1);
	longpath[EXT2_PATH_MAX + 1] = 0;
	CHECK(ext2_lookup(&fs, longpath, &in) == -E_INVAL, "a path over EXT2_PATH_MAX accepted");
	free(longpath);
	CHECK(ext2_inode(&fs, 0, &in) == -E_INVAL && ext2_inode(&fs, fs.inodes + 1, &in) == -E_INVAL,
	      "inode numbers out of range accepted");
	printf("ext2check: %s: %u KiB blocks, %u dirs, %u files, %u links, %llu bytes compared, %u failures\n",
	       img, fs.block_size / 1024, seen.dirs, seen.files, seen.links, (unsigned long long)seen.bytes,
	       failures);
	free(im.bytes);
	return failures ? 1 : 0;
}

/* ---- --corrupt: damaged images ---- */

/* Walk everything reachable from the root within bounds (a damaged
 * directory may name its own ancestor), reading every file: the errors
 * met, or -1 when a result broke the interface's promises. */
static unsigned long walk_budget;

static void walk(struct ext2 *fs, const struct ext2_inode *dir, unsigned depth, uint8_t *buf,
		 unsigned *errors)
{
	struct ext2_dir d;
	struct ext2_dirent e;
	if (depth > 8 || ext2_dir_open(fs, dir, &d)) {
		++*errors;
		return;
	}
	long r;
	while (walk_budget && (r = ext2_dir_next(fs, &d, &e)) == 1) {
		walk_budget--;
		CHECK(strlen(e.name) <= EXT2_NAME_MAX && e.type <= EXT2_T_OTHER && e.ino <= fs->inodes,
		      "a listed entry out of range");
		if (!strcmp(e.name, ".") || !strcmp(e.name, ".."))
			continue;
		struct ext2_inode in;
		if (ext2_inode(fs, e.ino, &in)) {
			++*errors;
			continue;
		}
		if (ext2_type(&in) == EXT2_T_DIR) {
			walk(fs, &in, depth + 1, buf, errors);
			continue;
		}
		if (ext2_type(&in) != EXT2_T_REG)
			continue;
		/* The first and last 4 MiB: a damaged size may be terabytes. */
		uint64_t chunk = 4u << 20;
		for (uint64_t off = 0; off < in.size; off = off ? in.size : in.size > chunk ? in.size - chunk : in.size) {
			uint8_t *guard = buf + chunk;
			memset(guard, 0x5a, 64);
			long n = ext2_read(fs, &in, off, buf, chunk);
			CHECK(n <= (long)chunk && guard[0] == 0x5a, "a read returned more than asked");
			if (n < 0)
				++*errors;
			if (n <= 0)
				break;
		}
	}
	if (r < 0)
		++*errors;
}

/* Mount and walk im: 0 when it mounted and walked without an error. */
static long try_image(struct image *im, uint8_t *buf, unsigned *errors)
{
	static struct ext2 fs;
	long r = ext2_mount(&fs, image_read, im);
	if (r)
		return r;
	struct ext2_inode root;
	if ((r = ext2_inode(&fs, EXT2_ROOT_INO, &root)))
		return r;
	unsigned before = *errors;
	walk_budget = 20000;
	walk(&fs, &root, 0, buf, errors);
	return *errors == before ? 0 : -E_INVAL;
}

static void put32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16), p[3] = (uint8_t)(v >> 24);
}

/* A copy of the clean image with one planted fault: the error it gives. */
static long planted(const struct image *clean, uint8_t *buf, const char *what)
{
	static struct ext2 fs;
	struct image im = *clean;
	im.seen = NULL;
	im.bytes = malloc(clean->size);
	memcpy(im.bytes, clean->bytes, clean->size);
	CHECK(!ext2_mount(&fs, image_read, &im), "clean image does not mount");
	uint32_t bs = fs.block_size;
	struct ext2_inode root, file;
	CHECK(!ext2_inode(&fs, EXT2_ROOT_INO, &root), "no root");
	uint8_t *sb = im.bytes + 1024;
	long r = 0;
	unsigned errors = 0;
	if (!strcmp(what, "magic")) {
		sb[56] ^= 0xff;
	} else if (!strcmp(what, "block-size")) {
		put32(sb + 24, 7);
	} else if (!strcmp(what, "blocks-per-group")) {
		put32(sb + 32, bs * 8 + 1);
	} else if (!strcmp(what, "extents")) {
		put32(sb + 96, 0x40 | 0x2);
	} else if (!strcmp(what, "dir-reclen")) {
		uint8_t *rec = im.bytes + (uint64_t)root.block[0] * bs;
		rec[4] = rec[5] = 0;          /* "."'s record length 0: a loop for ever if trusted */
		struct ext2_dir d;
		struct ext2_dirent e;
		ext2_dir_open(&fs, &root, &d);
		fs.data_no = 0;
		r = ext2_dir_next(&fs, &d, &e);
		goto out;
	} else if (!strcmp(what, "block-pointer")) {
		/* The first data block of the root directory's first file
		 * with blocks, pointed past the end of the file system. */
		struct ext2_dir d;
		struct ext2_dirent e;
		ext2_dir_open(&fs, &root, &d);
		while (ext2_dir_next(&fs, &d, &e) == 1)
			if (e.type == EXT2_T_REG && e.size > bs)
				break;
		CHECK(e.type == EXT2_T_REG && e.size > bs, "no file to damage in the root");
		ext2_inode(&fs, e.ino, &file);
		uint8_t *gd = im.bytes + (uint64_t)(fs.first_data_block + 1) * bs;
		uint32_t grp = (e.ino - 1) / fs.inodes_per_group, idx = (e.ino - 1) % fs.inodes_per_group;
		uint64_t table = gd[grp * 32 + 8] | gd[grp * 32 + 9] << 8 | gd[grp * 32 + 10] << 16 |
				 (uint64_t)gd[grp * 32 + 11] << 24;
		put32(im.bytes + table * bs + (uint64_t)idx * fs.inode_size + 40, fs.blocks + 5);
		fs.itab_no = 0;
		CHECK(!ext2_inode(&fs, e.ino, &file), "damaged inode does not read");
		r = ext2_read(&fs, &file, 0, buf, bs);
		goto out;
	} else if (!strcmp(what, "truncated")) {
		im.size = 1024 + 512;        /* half a superblock */
	}
	r = try_image(&im, buf, &errors);
out:
	free(im.bytes);
	return r;
}

static int corrupt(const char *img, uint64_t seed, unsigned rounds)
{
	struct image clean = { 0 };
	clean.bytes = slurp(img, &clean.size);
	uint8_t *buf = malloc((4u << 20) + 64);
	static struct ext2 fs;
	CHECK(!ext2_mount(&fs, image_read, &clean), "%s does not mount", img);
	if (failures)
		return 1;
	/* The blocks the reader reads one at a time on a clean walk. */
	clean.block_sectors = fs.sectors_per_block;
	clean.maxseen = 100000;
	clean.seen = malloc(clean.maxseen * sizeof *clean.seen);
	unsigned errors = 0;
	CHECK(!try_image(&clean, buf, &errors), "%s: the clean image walks with errors", img);
	uint64_t *meta = clean.seen;
	unsigned nmeta = clean.nseen;
	clean.seen = NULL;
	CHECK(nmeta > 0, "%s: no single-block reads on a clean walk", img);

	static const struct { const char *what; long err; } plant[] = {
		{ "magic", -E_INVAL }, { "block-size", -E_INVAL }, { "blocks-per-group", -E_INVAL },
		{ "extents", -E_NOSYS }, { "dir-reclen", -E_INVAL }, { "block-pointer", -E_INVAL },
		{ "truncated", -E_RANGE },
	};
	for (unsigned i = 0; i < sizeof plant / sizeof plant[0]; i++) {
		long r = planted(&clean, buf, plant[i].what);
		CHECK(r == plant[i].err, "%s: planted %s: %s, want %s", img, plant[i].what, err_name(r),
		      err_name(plant[i].err));
	}

	uint64_t x = seed ? seed : 1;
	unsigned mounted = 0, clean_walks = 0;
	struct image im = clean;
	im.bytes = malloc(clean.size);
	for (unsigned k = 0; k < rounds && nmeta; k++) {
		memcpy(im.bytes, clean.bytes, clean.size);
		im.size = clean.size;
		if (xorshift64_below(&x, 10) == 0) {
			im.size = xorshift64_below(&x, clean.size);
		} else {
			unsigned flips = 1 + (unsigned)xorshift64_below(&x, 16);
			for (unsigned f = 0; f < flips; f++) {
				/* The superblock one time in four, else a block the
				 * reader reads one at a time. */
				uint64_t at = xorshift64_below(&x, 4) == 0 ? 1024 + xorshift64_below(&x, 1024) :
					meta[xorshift64_below(&x, nmeta)] * EXT2_SECTOR +
					xorshift64_below(&x, fs.block_size);
				im.bytes[at] ^= (uint8_t)(1 + xorshift64_below(&x, 255));
			}
		}
		unsigned e = 0;
		long r = try_image(&im, buf, &e);
		static struct ext2 probe;
		mounted += !ext2_mount(&probe, image_read, &im);
		clean_walks += !r;
	}
	free(im.bytes);
	printf("ext2check: %s: %zu planted faults found, %u rounds of damage: %u mounted, %u walked clean, "
	       "%u failures\n", img, sizeof plant / sizeof plant[0], rounds, mounted, clean_walks, failures);
	free(clean.bytes);
	free(meta);
	free(buf);
	return failures ? 1 : 0;
}

int main(int argc, char **argv)
{
	const char *usage = "usage: ext2check IMAGE DIR | ext2check --corrupt IMAGE [--seed S] [--rounds R]\n";
	if (argc == 3 && argv[1][0] != '-')
		return compare(argv[1], argv[2]);
	if (argc < 3 || strcmp(argv[1], "--corrupt")) {
		fputs(usage, stderr);
		return 2;
	}
	uint64_t seed = 1;
	unsigned long rounds = 200;
	for (int i = 3; i < argc; i++) {
		char *end = NULL;
		unsigned long v = i + 1 < argc ? strtoul(argv[i + 1], &end, 0) : 0;
		if (!end || *end || (strcmp(argv[i], "--seed") && strcmp(argv[i], "--rounds"))) {
			fputs(usage, stderr);
			return 2;
		}
		if (!strcmp(argv[i++], "--seed"))
			seed = v;
		else
			rounds = v;
	}
	return corrupt(argv[2], seed, (unsigned)rounds);
}
