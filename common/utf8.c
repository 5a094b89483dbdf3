/*
 * utf8.c: well-formed UTF-8 (see utf8.h), after RFC 3629's table of the
 * byte ranges each lead byte allows next.
 */
#include "utf8.h"

#include <stdlib.h>
#include <string.h>

static int in(unsigned char c, unsigned char lo, unsigned char hi)
{
	return c >= lo && c <= hi;
}

size_t utf8_sequence(const unsigned char *s)
{
	unsigned char c = s[0];
	if (c < 0x80)
		return 1;
	/* The second byte's range depends on the lead (overlong forms,
	 * surrogates and code points past U+10FFFF excluded); later bytes
	 * are plain continuations. */
	unsigned char lo = 0x80, hi = 0xbf;
	size_t n;
	if (in(c, 0xc2, 0xdf))
		n = 2;
	else if (in(c, 0xe0, 0xef))
		n = 3, lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
	else if (in(c, 0xf0, 0xf4))
		n = 4, lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
	else
		return 0;
	if (!in(s[1], lo, hi))
		return 0;
	for (size_t i = 2; i < n; i++)
		if (!in(s[i], 0x80, 0xbf))
			return 0;
	return n;
}

char *utf8_valid_copy(const char *s)
{
	static const char replacement[] = "\xef\xbf\xbd";
	size_t len = strlen(s);
	/* At worst every byte grows into the 3 of U+FFFD. */
	char *out = malloc(3 * len + 1), *o = out;
	if (!out)
		return NULL;
	for (const unsigned char *p = (const unsigned char *)s; *p;) {
		size_t n = utf8_sequence(p);
		if (n) {
			memcpy(o, p, n);
			o += n;
			p += n;
		} else {
			memcpy(o, replacement, 3);
			o += 3;
			p++;
		}
	}
	*o = '\0';
	return out;
}
