/* size.c: parse and print byte sizes (see size.h). */
#include "size.h"

#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "errmsg.h"

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

static const char *skip_digits(const char *p)
{
	while (is_digit(*p))
		p++;
	return p;
}

/* The decimal digits [p, end) as a number; false when it passes 2^64 - 1. */
static bool digits_value(const char *p, const char *end, uint64_t *value)
{
	uint64_t v = 0;
	for (; p < end; p++) {
		unsigned digit = (unsigned)(*p - '0');
		if (v > (UINT64_MAX - digit) / 10)
			return false;
		v = v * 10 + digit;
	}
	*value = v;
	return true;
}

/* The fraction's digits [p, end) in bytes of scale, a power of two of
 * at most 2^40: 0.DIGITS × scale with its fraction of a byte dropped,
 * exactly (a double of the digits rounds, a byte up at times: 0.806286T).
 * Each bit is the carry out of doubling the digits. The first 40 digits
 * decide them all: with N >= log2(scale) digits, 0.D1..DN × scale moves
 * in steps of scale / 10^N, a whole number of which make a byte, and
 * the digits after add less than one step. */
static uint64_t fraction_bytes(const char *p, const char *end, uint64_t scale)
{
	unsigned char digit[40];
	size_t n = (size_t)(end - p) < sizeof digit ? (size_t)(end - p) : sizeof digit;
	for (size_t i = 0; i < n; i++)
		digit[i] = (unsigned char)(p[i] - '0');
	uint64_t bytes = 0;
	for (uint64_t bit = scale; bit > 1; bit /= 2) {
		unsigned carry = 0;
		for (size_t i = n; i-- > 0;) {
			unsigned twice = digit[i] * 2u + carry;
			digit[i] = (unsigned char)(twice % 10);
			carry = twice / 10;
		}
		bytes = bytes * 2 + carry;
	}
	return bytes;
}

/* The bytes a suffix stands for; false when it is not one. */
static bool suffix_scale(const char *suffix, uint64_t *scale)
{
	static const struct { const char *suffix; uint64_t scale; } units[] = {
		{ "", 1 }, { "b", 1 },
		{ "k", 1ULL << 10 }, { "kb", 1ULL << 10 }, { "ki", 1ULL << 10 }, { "kib", 1ULL << 10 },
		{ "m", 1ULL << 20 }, { "mb", 1ULL << 20 }, { "mi", 1ULL << 20 }, { "mib", 1ULL << 20 },
		{ "g", 1ULL << 30 }, { "gb", 1ULL << 30 }, { "gi", 1ULL << 30 }, { "gib", 1ULL << 30 },
		{ "t", 1ULL << 40 }, { "tb", 1ULL << 40 }, { "ti", 1ULL << 40 }, { "tib", 1ULL << 40 },
	};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
		if (strcasecmp(suffix, units[i].suffix) == 0) {
			*scale = units[i].scale;
			return true;
		}
	return false;
}

/* Parsed by hand, not by strtod, which also takes hexadecimal, exponents,
 * a sign, inf and nan, and reads a fraction's point from the locale. The
 * whole text is checked before its value, so that junk is "not a size"
 * however many digits come first. */
int um_size_parse(const char *text, uint64_t *out)
{
	if (!text)
		return UM_SIZE_NOT_A_SIZE;
	const char *whole_end = skip_digits(text);
	if (whole_end == text)
		return UM_SIZE_NOT_A_SIZE;
	const char *fraction = whole_end, *fraction_end = whole_end;
	if (*whole_end == '.') {
		fraction = whole_end + 1;
		fraction_end = skip_digits(fraction);
		if (fraction_end == fraction)
			return UM_SIZE_NOT_A_SIZE;
	}
	uint64_t scale;
	if (!suffix_scale(fraction_end, &scale))
		return UM_SIZE_NOT_A_SIZE;
	uint64_t whole;
	if (!digits_value(text, whole_end, &whole) || whole > UINT64_MAX / scale)
		return UM_SIZE_TOO_LARGE;
	uint64_t part = fraction_bytes(fraction, fraction_end, scale);
	if (part > UINT64_MAX - whole * scale)
		return UM_SIZE_TOO_LARGE;
	*out = whole * scale + part;
	return UM_SIZE_OK;
}

/* Whether text ends in a digit: a bare number of bytes, with no unit. */
static bool has_no_unit(const char *text)
{
	size_t len = strlen(text);
	return len && is_digit(text[len - 1]);
}

int um_memory_size_parse(const char *option, const char *text, uint64_t *out, char *err, size_t errlen)
{
	int status = um_size_parse(text, out);
	if (status == UM_SIZE_TOO_LARGE || (status == UM_SIZE_OK && *out > (uint64_t)INT64_MAX)) {
		um_errmsg(err, errlen, "%s: '%s' is too large (a size of memory is below 8 EiB, 2^63 bytes)",
			  option, text);
		return -1;
	}
	if (status != UM_SIZE_OK || *out == 0) {
		um_errmsg(err, errlen, "%s: '%s' is not a size above zero (e.g. 40G, 512MiB)", option, text);
		return -1;
	}
	if (*out < (2u << 20)) {
		/* A small bare number most likely lost its G. */
		bool suggest = has_no_unit(text) && *out < 1024;
		um_errmsg(err, errlen, "%s: '%s' is %llu byte%s, less than one 2 MiB block of memory%s%s%s", option,
			  text, (unsigned long long)*out, *out == 1 ? "" : "s", suggest ? " (did you mean " : "",
			  suggest ? text : "", suggest ? "G?)" : "");
		return -1;
	}
	return 0;
}

const char *um_size_format(uint64_t bytes, char *buf, size_t len)
{
	static const char *names[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	size_t i = 0;
	/* Printed to two decimals, anything from 1023.995 up reads 1024.00:
	 * that is the next unit's 1.00. */
	while (v >= 1023.995 && i + 1 < sizeof names / sizeof names[0]) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.2f %s", v, names[i]);
	return buf;
}
