/* size.c: parse and print byte sizes (see size.h). */
#include "size.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <strings.h>

#include "errmsg.h"

int um_size_parse(const char *text, uint64_t *out)
{
	if (!text || !*text || *text == '-' || isspace((unsigned char)*text))
		return -1;
	errno = 0;
	char *end;
	double value = strtod(text, &end);
	if (end == text || errno || !isfinite(value) || value < 0)
		return -1;
	static const struct { const char *suffix; double scale; } units[] = {
		{ "", 1 }, { "b", 1 },
		{ "k", 0x1p10 }, { "kb", 0x1p10 }, { "ki", 0x1p10 }, { "kib", 0x1p10 },
		{ "m", 0x1p20 }, { "mb", 0x1p20 }, { "mi", 0x1p20 }, { "mib", 0x1p20 },
		{ "g", 0x1p30 }, { "gb", 0x1p30 }, { "gi", 0x1p30 }, { "gib", 0x1p30 },
		{ "t", 0x1p40 }, { "tb", 0x1p40 }, { "ti", 0x1p40 }, { "tib", 0x1p40 },
	};
	for (size_t i = 0; i < sizeof units / sizeof units[0]; i++) {
		if (strcasecmp(end, units[i].suffix) != 0)
			continue;
		double bytes = value * units[i].scale;
		if (bytes >= 0x1p64)
			return -1;
		*out = (uint64_t)bytes;
		return 0;
	}
	return -1;
}

int um_memory_size_parse(const char *option, const char *text, uint64_t *out, char *err, size_t errlen)
{
	if (um_size_parse(text, out) != 0 || *out == 0) {
		um_errmsg(err, errlen, "%s: '%s' is not a size above zero (e.g. 40G, 512MiB)", option, text);
		return -1;
	}
	if (*out < (2u << 20)) {
		/* A small bare number most likely lost its G. */
		char *end;
		double v = strtod(text, &end);
		bool suggest = !*end && v >= 1 && v < 1024;
		um_errmsg(err, errlen, "%s: '%s' is %llu byte%s, less than one 2 MiB block of memory%s%s%s", option,
			  text, (unsigned long long)*out, *out == 1 ? "" : "s", suggest ? " (did you mean " : "",
			  suggest ? text : "", suggest ? "G?)" : "");
		return -1;
	}
	if (*out > (uint64_t)INT64_MAX) {
		um_errmsg(err, errlen, "%s: '%s' is too large", option, text);
		return -1;
	}
	return 0;
}

const char *um_size_format(uint64_t bytes, char *buf, size_t len)
{
	static const char *names[] = { "B", "KiB", "MiB", "GiB", "TiB" };
	double v = (double)bytes;
	size_t i = 0;
	while (v >= 1024 && i + 1 < sizeof names / sizeof names[0]) {
		v /= 1024;
		i++;
	}
	if (i == 0)
		snprintf(buf, len, "%llu B", (unsigned long long)bytes);
	else
		snprintf(buf, len, "%.2f %s", v, names[i]);
	return buf;
}
