/* Formatted output into a buffer or a character sink, shared by the
 * kernel (printk) and user programs on the in-tree C library (printf,
 * user/libc): freestanding, no allocation, no locks. */
#include <stdint.h>
#include "fmt.h"
#include "kstring.h"

/* Where the characters go: sink(c, ctx) when sink is set, else buf
 * (at most size-1 of them); len counts them all. */
struct out {
	char *buf;
	size_t size;
	size_t len;
	void (*sink)(char c, void *ctx);
	void *ctx;
};

static void put(struct out *o, char c)
{
	if (o->sink)
		o->sink(c, o->ctx);
	else if (o->len + 1 < o->size)
		o->buf[o->len] = c;
	o->len++;
}

static void put_num(struct out *o, unsigned long long v, unsigned base, int upper,
		    int neg, int width, int zero, int left)
{
	char tmp[24];
	int n = 0;
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	do {
		tmp[n++] = digits[v % base];
		v /= base;
	} while (v);
	int len = n + (neg ? 1 : 0);
	if (neg && zero)
		put(o, '-');
	if (!left)
		for (; width > len; width--)
			put(o, zero ? '0' : ' ');
	if (neg && !zero)
		put(o, '-');
	while (n)
		put(o, tmp[--n]);
	if (left)
		for (; width > len; width--)
			put(o, ' ');
}

/* The formatter behind both entry points: fmt with ap into o. */
static void format(struct out *o, const char *fmt, va_list ap)
{
	for (; *fmt; fmt++) {
		if (*fmt != '%') {
			put(o, *fmt);
			continue;
		}
		fmt++;
		int zero = 0, left = 0, width = 0, lng = 0;
		for (;; fmt++) {
			if (*fmt == '0')
				zero = 1;
			else if (*fmt == '-')
				left = 1;
			else
				break;
		}
		while (*fmt >= '0' && *fmt <= '9')
			width = width * 10 + (*fmt++ - '0');
		for (;; fmt++) {
			if (*fmt == 'l')
				lng++;
			else if (*fmt == 'z')
				lng = 2;
			else
				break;
		}
		if (left)
			zero = 0;
		switch (*fmt) {
		case 'd':
		case 'i': {
			long long v = lng ? va_arg(ap, long long) : va_arg(ap, int);
			unsigned long long u = v < 0 ? 0ULL - (unsigned long long)v
						     : (unsigned long long)v;
			put_num(o, u, 10, 0, v < 0, width, zero, left);
			break;
		}
		case 'u':
		case 'x':
		case 'X': {
			unsigned long long v = lng ? va_arg(ap, unsigned long long)
						   : va_arg(ap, unsigned int);
			put_num(o, v, *fmt == 'u' ? 10 : 16, *fmt == 'X', 0, width, zero, left);
			break;
		}
		case 'p':
			put(o, '0');
			put(o, 'x');
			put_num(o, (uintptr_t)va_arg(ap, void *), 16, 0, 0, 16, 1, 0);
			break;
		case 'c':
			put(o, (char)va_arg(ap, int));
			break;
		case 's': {
			const char *s = va_arg(ap, const char *);
			if (!s)
				s = "(null)";
			int n = (int)strlen(s);
			if (!left)
				for (; width > n; width--)
					put(o, ' ');
			while (*s)
				put(o, *s++);
			if (left)
				for (; width > n; width--)
					put(o, ' ');
			break;
		}
		case '%':
			put(o, '%');
			break;
		case 0:
			fmt--;
			break;
		default:
			put(o, '%');
			put(o, *fmt);
			break;
		}
	}
}

int vsnprintf(char *buf, size_t size, const char *fmt, va_list ap)
{
	struct out o = { buf, size, 0, NULL, NULL };
	format(&o, fmt, ap);
	if (size)
		buf[o.len < size ? o.len : size - 1] = 0;
	return (int)o.len;
}

int fmt_vprint(void (*sink)(char c, void *ctx), void *ctx, const char *fmt, va_list ap)
{
	struct out o = { NULL, 0, 0, sink, ctx };
	format(&o, fmt, ap);
	return (int)o.len;
}

int snprintf(char *buf, size_t size, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, size, fmt, ap);
	va_end(ap);
	return n;
}
